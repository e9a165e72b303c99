/* reporter: send matching packets to the controller.
 * Ternary on the 5-tuple (ports from TCP or UDP; entries need a priority);
 * `report` sends the packet to the controller (sfc.to_cpu): the composed
 * program diverts it, not a copy, to the CPU port as a packet-in carrying the
 * ingress port, and the NFs after this one do not run.  Sets no metadata. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control reporter(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;

    action report() {
        sfc.to_cpu = 1;
    }

    table report_rules {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            l4_sport : ternary;
            l4_dport : ternary;
        }
        actions = { report; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
                l4_dport = hdr.tcp.dst_port;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
                l4_dport = hdr.udp.dst_port;
            }
            report_rules.apply();
        }
    }
}
