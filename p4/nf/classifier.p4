/* classifier: Dejavu's classifier end point.
 * Ternary on the 5-tuple (ports from TCP or UDP; entries need a priority)
 * picks a traffic class; class_id is the NF's metadata, so the chain's
 * branches pick the service path (`classifier.class_id == 2 -> ...`).
 * Unclassified traffic is class 0. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control classifier(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;

    action set_class(bit<16> class_id) {
        sfc.metadata = (bit<32>) class_id;
    }

    table classes {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            l4_sport : ternary;
            l4_dport : ternary;
        }
        actions = { set_class; }
        default_action = set_class(0);
        size = 1024;
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
            classes.apply();
        }
    }
}
