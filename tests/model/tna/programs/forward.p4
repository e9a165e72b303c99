/* One pipeline on every pipe: a table forwards by destination MAC, bridged metadata
 * carries the ingress port and a tag to egress, egress writes where the packet came
 * in and where it goes into the source MAC.  No entry: no ucast_egress_port, dropped. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header bridge_t { bit<7> pad; PortId_t ingress_port; bit<8> tag; }
struct headers_t { bridge_t bridge; ethernet_t ethernet; }
struct ig_meta_t { }
struct eg_meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout ig_meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action send(PortId_t port, bit<8> tag) {
        ig_tm_md.ucast_egress_port = port;
        hdr.bridge.tag = tag;
    }
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    action flood(MulticastGroupId_t grp) { ig_tm_md.mcast_grp_a = grp; }
    action to_cpu() { ig_tm_md.copy_to_cpu = 1; ig_tm_md.ucast_egress_port = 2; }
    table fwd {
        key = { hdr.ethernet.dst : exact; }
        actions = { send; drop; flood; to_cpu; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    apply {
        hdr.bridge.setValid();
        hdr.bridge.pad = 0;
        hdr.bridge.ingress_port = ig_intr_md.ingress_port;
        hdr.bridge.tag = 0;
        fwd.apply();
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        hdr.ethernet.src = 7w0 ++ hdr.bridge.ingress_port ++ 7w0 ++ eg_intr_md.egress_port
                           ++ hdr.bridge.tag ++ eg_intr_md.egress_rid[7:0];
        hdr.bridge.setInvalid();
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
