/* Ingress mirroring: a packet whose destination MAC ends in an odd byte is mirrored to
 * session 5 behind a mirror header (kind 2, session); the egress parser tells a mirrored
 * copy from a forwarded packet (bridged metadata: kind 1) by the first byte, and egress
 * marks the copy's EtherType.  Egress mirroring: a packet out of port 2 whose EtherType is 0x0E0E is
 * mirrored again, as deparsed, to session 6. */
#include <core.p4>
#include <tna.p4>

typedef bit<8> kind_t;
const kind_t KIND_NORMAL = 1;
const kind_t KIND_MIRROR = 2;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header bridge_t { kind_t kind; }
header mirror_h { kind_t kind; bit<8> session; }
header mirror_rest_h { bit<8> session; }
struct headers_t { bridge_t bridge; mirror_rest_h mirror; ethernet_t ethernet; }
struct ig_meta_t { MirrorId_t session; bit<8> kind; bit<8> tag; }
struct eg_meta_t { MirrorId_t session; kind_t kind; bit<8> tag; }

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
    apply {
        hdr.bridge.setValid();
        hdr.bridge.kind = KIND_NORMAL;
        ig_tm_md.ucast_egress_port = 2;
        hdr.ethernet.src[7:0] = 0x11;
        if (hdr.ethernet.dst[0:0] == 1) {
            ig_dprsr_md.mirror_type = 1;
            md.session = 5;
            md.kind = KIND_MIRROR;
            md.tag = 5;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit<mirror_h>(md.session, {md.kind, md.tag});
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        transition select(hdr.bridge.kind) {
            KIND_MIRROR : parse_mirror;
            default : parse_ethernet;
        }
    }
    state parse_mirror {
        pkt.extract(hdr.mirror);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (hdr.mirror.isValid()) {
            hdr.ethernet.ether_type = 16w0x0A00 | (8w0 ++ hdr.mirror.session);
        } else if (hdr.ethernet.ether_type == 0x0E0E) {
            eg_dprsr_md.mirror_type = 1;
            md.session = 6;
            md.kind = KIND_MIRROR;
            md.tag = 6;
        }
        hdr.bridge.setInvalid();
        hdr.mirror.setInvalid();
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 1) {
            mirror.emit<mirror_h>(md.session, {md.kind, md.tag});
        }
        pkt.emit(hdr.ethernet);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
