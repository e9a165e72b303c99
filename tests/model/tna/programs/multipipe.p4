/* Two different pipelines: pipe 0 (pipe_a) and pipe 1 (pipe_b).  pipe_a's ingress sends a
 * packet to the port in its destination MAC's low 9 bits, or, when bit 16 is set, to pipe
 * 1's recirculation port 196, from where it comes back into pipe_b's ingress; each egress
 * stamps its pipe into the source MAC.  Each ingress has a table `types` (EtherType
 * rewrites): pipe_a.IngressA.types and pipe_b.IngressB.types to the control plane. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control IngressA(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
                 in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_type(bit<16> t) { hdr.ethernet.ether_type = t; }
    table types {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { set_type; NoAction; }
        default_action = NoAction();
        size = 16;
    }
    apply {
        types.apply();
        if (hdr.ethernet.dst[16:16] == 1) {
            ig_tm_md.ucast_egress_port = 196;
        } else {
            ig_tm_md.ucast_egress_port = hdr.ethernet.dst[8:0];
        }
    }
}

control IngressB(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
                 in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_type(bit<16> t) { hdr.ethernet.ether_type = t; }
    table types {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { set_type; NoAction; }
        default_action = NoAction();
        size = 16;
    }
    apply {
        types.apply();
        if (ig_intr_md.ingress_port == 196) {
            hdr.ethernet.ether_type = 0x0B0B;
        }
        ig_tm_md.ucast_egress_port = hdr.ethernet.dst[8:0];
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

parser EgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control EgressA(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
                in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { hdr.ethernet.src[7:0] = 0xA0; }
}

control EgressB(inout headers_t hdr, inout meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
                in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { hdr.ethernet.src[15:8] = 0xB1; }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

Pipeline(IgParser(), IngressA(), IgDeparser(), EgParser(), EgressA(), EgDeparser()) pipe_a;
Pipeline(IgParser(), IngressB(), IgDeparser(), EgParser(), EgressB(), EgDeparser()) pipe_b;
Switch(pipe_a, pipe_b) main;
