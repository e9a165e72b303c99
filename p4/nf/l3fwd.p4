/* l3fwd: IPv4 longest-prefix-match forwarding.
 * A route rewrites both MACs, decrements the TTL and picks the egress port;
 * no route, or a TTL that would expire here (<= 1), drops the packet. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control l3fwd(inout headers_t hdr, inout sfc_meta_t sfc) {
    action route(mac_addr_t dmac, mac_addr_t smac, port_t port) {
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = smac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        sfc.egress_port = port;
        sfc.egress_valid = 1;
    }

    action drop() {
        sfc.drop = 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; drop; }
        default_action = drop();
        size = 16384;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                sfc.drop = 1;
            } else {
                ipv4_lpm.apply();
            }
        }
    }
}
