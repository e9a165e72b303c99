/* mac_learning: MAC address learning through the controller.
 * `known_macs` holds the (source MAC, ingress port) pairs the controller has
 * learned.  A pair it does not know is sent to the controller as a digest
 * {mac, port} and sets learned = 1; the controller installs it here and the
 * matching destination entry in l2fwd.  Known pairs set learned = 0. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

struct mac_learn_digest_t {
    mac_addr_t mac;
    port_t port;
}

control mac_learning(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcDigest<mac_learn_digest_t>() learn_digest;

    action known() {
        sfc.metadata = 0;
    }

    table known_macs {
        key = {
            hdr.ethernet.src_addr : exact;
            sfc.ingress_port : exact;
        }
        actions = { known; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ethernet.isValid()) {
            if (known_macs.apply().miss) {
                learn_digest.pack({hdr.ethernet.src_addr, sfc.ingress_port});
                sfc.metadata = 1;
            }
        }
    }
}
