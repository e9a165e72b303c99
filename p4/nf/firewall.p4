/* firewall: stateless 5-tuple access control list.
 * Ternary match on IPv4 source/destination, protocol and L4 ports (taken from
 * TCP or UDP; 0 for other protocols).  Entries need a priority.
 *   permit: verdict 0
 *   deny:   verdict 1 and drop
 *   mark:   verdict 1 only; the chain decides (`firewall.verdict == 1 -> ...`)
 * Default: permit. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control firewall(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;

    action permit() {
        sfc.metadata = 0;
    }

    action deny() {
        sfc.metadata = 1;
        sfc.drop = 1;
    }

    action mark() {
        sfc.metadata = 1;
    }

    table acl {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            l4_sport : ternary;
            l4_dport : ternary;
        }
        actions = { permit; deny; mark; }
        default_action = permit();
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
            acl.apply();
        }
    }
}
