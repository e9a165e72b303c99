/* ipsg: IP source guard.
 * Exact match on (ingress port, IPv4 source address): a binding lets the
 * packet through (verdict 0); a source address not bound to the port it came
 * in on gets verdict 1 and is dropped.  Non-IPv4 packets pass (verdict 0). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control ipsg(inout headers_t hdr, inout sfc_meta_t sfc) {
    action allowed() {
        sfc.metadata = 0;
    }

    action violation() {
        sfc.metadata = 1;
        sfc.drop = 1;
    }

    table bindings {
        key = {
            sfc.ingress_port : exact;
            hdr.ipv4.src_addr : exact;
        }
        actions = { allowed; violation; }
        default_action = violation();
        size = 4096;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            bindings.apply();
        }
    }
}
