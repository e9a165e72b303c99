/* flood: replicate the packet to a multicast group.
 * The group is chosen by ingress port and/or VLAN id (0 for untagged packets;
 * ternary, entries need a priority).  On push, sfclab writes one multicast
 * group per ingress port of the switch (16384 + port: every port but that
 * one) and one entry per port mapping the ingress port to its group, at
 * priority 1, so a flood leaves by every port but the one it came in on;
 * entries of your own at a higher priority win (the example entry: VLAN
 * 4095, reserved, is not flooded: NoAction).  Without an
 * entry (a port outside the switch's port set) the packet goes to group 1,
 * which sfclab sets up as "all ports". */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control flood(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<12> vlan_id = 0;

    action set_mcast_grp(bit<16> grp) {
        sfc.mcast_grp = grp;
    }

    table flood_groups {
        key = {
            sfc.ingress_port : ternary;
            vlan_id : ternary;
        }
        actions = { set_mcast_grp; NoAction; }
        default_action = set_mcast_grp(1);
        size = 256;
    }

    apply {
        if (hdr.vlan.isValid()) {
            vlan_id = hdr.vlan.vid;
        }
        flood_groups.apply();
    }
}
