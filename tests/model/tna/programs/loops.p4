/* A packet goes round through the port its `via` field names (a pipe's recirculation
 * port, or a port set to loopback) `left` more times, counting down; then out of port 2. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header count_t { bit<8> left; bit<8> rounds; bit<7> pad; PortId_t via; }
struct headers_t { ethernet_t ethernet; count_t count; }
struct meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88B5 : parse_count;
            default : accept;
        }
    }
    state parse_count {
        pkt.extract(hdr.count);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.count.isValid() && hdr.count.left != 0) {
            hdr.count.left = hdr.count.left - 1;
            hdr.count.rounds = hdr.count.rounds + 1;
            ig_tm_md.ucast_egress_port = hdr.count.via;
        } else {
            ig_tm_md.ucast_egress_port = 2;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
