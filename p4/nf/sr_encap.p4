/* sr_encap: segment-routing encapsulation, one label per run.
 * Run in a loop (`loop sr_encap ...`): on each run the `segments` table, keyed
 * on the service path and the loop counter, gives the label to push on top of
 * the MPLS stack.  At most SR_MAX_LABELS (4) labels: nothing is pushed when
 * the stack is full (hdr.mpls[3] valid).  The first label pushed is the
 * bottom of stack and turns the EtherType before it into MPLS (the VLAN tag's,
 * else Ethernet's: while the SFC header is on, the composed program keeps the
 * real EtherType in hdr.ethernet.ether_type and copies it into the SFC
 * header's next_proto at the end of the pass, so that is the one to set). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control sr_encap(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<1> bottom = 1;

    action push_label(bit<20> segment) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = segment;
        hdr.mpls[0].tc = 0;
        hdr.mpls[0].bos = bottom;
        hdr.mpls[0].ttl = 64;
    }

    table segments {
        key = {
            sfc.path_id : exact;
            sfc.counter : exact;
        }
        actions = { push_label; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        /* hdr.mpls[SR_MAX_LABELS - 1]: the stack is full. */
        if (!hdr.mpls[3].isValid()) {
            if (hdr.mpls[0].isValid()) {
                bottom = 0;
            }
            if (segments.apply().hit) {
                if (bottom == 1) {
                    if (hdr.vlan.isValid()) {
                        hdr.vlan.ether_type = ETHERTYPE_MPLS;
                    } else {
                        hdr.ethernet.ether_type = ETHERTYPE_MPLS;
                    }
                }
            }
        }
    }
}
