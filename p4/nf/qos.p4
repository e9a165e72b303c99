/* qos: DSCP marking and policing.
 * A ternary classifier over the 5-tuple and the current DSCP picks a DSCP and
 * a policer (one of 256 two-rate three-colour byte meters whose rates the
 * controller sets).  The packet is re-marked, metered, and its colour
 * (0 green, 1 yellow, 2 red) is the NF's metadata, color.  Red packets are
 * dropped (`set_dscp`) or re-marked to a lower class (`set_dscp_remark`).
 * Unclassified packets keep their DSCP and are not metered (color 0).
 * Entries need a priority. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control qos(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcMeter<bit<8>>(256, SfcCounterType.BYTES) policers;

    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<8> policer_idx = 0;
    bit<1> remark_red = 0;
    bit<6> red_dscp = 0;
    bit<2> color = 0;

    action set_dscp(bit<6> dscp, bit<8> policer) {
        hdr.ipv4.dscp = dscp;
        policer_idx = policer;
    }

    action set_dscp_remark(bit<6> dscp, bit<8> policer, bit<6> red) {
        hdr.ipv4.dscp = dscp;
        policer_idx = policer;
        remark_red = 1;
        red_dscp = red;
    }

    table dscp_marking {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            l4_sport : ternary;
            l4_dport : ternary;
            hdr.ipv4.dscp : ternary;
        }
        actions = { set_dscp; set_dscp_remark; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
                l4_dport = hdr.tcp.dst_port;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
                l4_dport = hdr.udp.dst_port;
            }
            if (dscp_marking.apply().hit) {
                color = policers.execute(policer_idx);
                if (color == SFC_RED) {
                    if (remark_red == 1) {
                        hdr.ipv4.dscp = red_dscp;
                    } else {
                        sfc.drop = 1;
                    }
                }
                sfc.metadata = (bit<32>) color;
            }
        }
    }
}
