/* l2fwd: layer-2 forwarding.
 * Exact match on the destination MAC; a hit forwards out of the learned port
 * (flood_flag = 0), a miss sets flood_flag = 1 so the chain can hand the packet
 * to `flood` (e.g. `l2fwd.flood_flag == 1 -> flood`). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control l2fwd(inout headers_t hdr, inout sfc_meta_t sfc) {
    action forward(port_t port) {
        sfc.egress_port = port;
        sfc.egress_valid = 1;
        sfc.metadata = 0;
    }

    action flood_flag() {
        sfc.metadata = 1;
    }

    table mac_table {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { forward; flood_flag; }
        default_action = flood_flag();
        size = 4096;
    }

    apply {
        if (hdr.ethernet.isValid()) {
            mac_table.apply();
        }
    }
}
