/* router: Dejavu's router end point.
 * Longest-prefix match on the IPv4 destination gives the next hop: its MAC
 * and the egress port.  No route: drop.  (TTL and source-MAC handling are
 * l3fwd's; the router only steers the packet out of the chain.) */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control router(inout headers_t hdr, inout sfc_meta_t sfc) {
    action set_nexthop(mac_addr_t dmac, port_t port) {
        hdr.ethernet.dst_addr = dmac;
        sfc.egress_port = port;
        sfc.egress_valid = 1;
    }

    action drop() {
        sfc.drop = 1;
    }

    table routes {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 16384;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            routes.apply();
        }
    }
}
