/* A TNA program as a user writes it (held out: written after the model): two Registers
 * updated by RegisterActions (a packet count, returned, and a byte count) at a CRC16 hash
 * of the addresses; the ingress parser verifies the IPv4 checksum (a bad one goes to port
 * 9, egress bypassed) and reads resubmit data when resubmit_flag is set; a flow's third
 * and later packets are resubmitted with their count, which the second pass writes into
 * the source MAC; the deparser recomputes the IPv4 checksum after the TTL decrement;
 * egress writes the egress port into the destination MAC. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
header resub_t { bit<8> count; bit<56> pad; }
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; }
struct meta_t { resub_t rs; bool csum_ok; bit<16> idx; bit<8> cnt; }
struct eg_meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_csum;
    state start {
        pkt.extract(ig_intr_md);
        md.csum_ok = false;
        md.idx = 0;
        md.cnt = 0;
        transition select(ig_intr_md.resubmit_flag) {
            1 : parse_resubmit;
            0 : parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(md.rs);
        transition parse_ethernet;
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_csum.add(hdr.ipv4);
        md.csum_ok = ipv4_csum.verify();
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h;
    Register<bit<32>, bit<16>>(65536, 0) flows;
    Register<bit<32>, bit<16>>(65536) bytes;
    RegisterAction<bit<32>, bit<16>, bit<8>>(flows) bump = {
        void apply(inout bit<32> v, out bit<8> rv) {
            v = v + 1;
            rv = v[7:0];       /* a gateway compares at most 4 bytes + 12 bits: a byte */
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(bytes) add_bytes = {
        void apply(inout bit<32> v) {
            v = v + (bit<32>)hdr.ipv4.total_len;
        }
    };
    action to(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    table route {
        key = { hdr.ipv4.dst : lpm; }
        actions = { to; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    apply {
        bool routed = false;
        if (!hdr.ipv4.isValid()) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (!md.csum_ok) {
            ig_tm_md.ucast_egress_port = 9;
            ig_tm_md.bypass_egress = 1;
        } else if (ig_intr_md.resubmit_flag == 1) {
            hdr.ethernet.src = 40w0 ++ md.rs.count;
            routed = true;
        } else {
            md.idx = h.get({hdr.ipv4.src, hdr.ipv4.dst});
            md.cnt = bump.execute(md.idx);
            add_bytes.execute(md.idx);
            if (md.cnt >= 3) {
                md.rs.setValid();
                md.rs.count = md.cnt;
                md.rs.pad = 0;
                ig_dprsr_md.resubmit_type = 1;
            } else {
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                routed = true;
            }
        }
        if (routed) {                  /* one application: Tofino's next-table rule */
            route.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    Resubmit() resubmit;
    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit(md.rs);
        }
        hdr.ipv4.checksum = ipv4_csum.update({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                                              hdr.ipv4.total_len, hdr.ipv4.identification,
                                              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                                              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst});
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { hdr.ethernet.dst = 32w0 ++ 7w0 ++ eg_intr_md.egress_port; }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
