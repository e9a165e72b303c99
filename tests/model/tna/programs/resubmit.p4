/* A packet is resubmitted once with a resubmit header (64 bits on Tofino 1) holding its
 * destination MAC's last byte; on the second pass the ingress parser extracts that header
 * in place of the port metadata and ingress writes it into the source MAC. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header resubmit_h { bit<8> tag; bit<56> pad; }
struct headers_t { ethernet_t ethernet; }
struct meta_t { resubmit_h resub; }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1 : parse_resubmit;
            0 : parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(md.resub);
        transition parse_ethernet;
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (ig_intr_md.resubmit_flag == 0) {
            ig_dprsr_md.resubmit_type = 1;
            md.resub.setValid();
            md.resub.tag = hdr.ethernet.dst[7:0];
            md.resub.pad = 0;
        } else {
            hdr.ethernet.src[7:0] = md.resub.tag;
            ig_tm_md.ucast_egress_port = 2;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit(md.resub);
        }
        pkt.emit(hdr.ethernet);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
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
    apply { pkt.emit(hdr.ethernet); }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
