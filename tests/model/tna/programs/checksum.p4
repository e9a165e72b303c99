/* Checksums as sfclab's TNA programs use them: the parser's Checksum verifies the IPv4
 * header (a bad one goes to port 3) and takes the TCP checksum's residual (subtracting the
 * addresses, ports and checksum it covers); ingress rewrites the source address and port,
 * decrements the TTL and puts a Random byte in the identification; the deparser's Checksums
 * recompute the IPv4 header's and update the TCP checksum from the residual. */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
header tcp_t {
    bit<16> src_port; bit<16> dst_port; bit<32> seq_no; bit<32> ack_no; bit<4> data_offset;
    bit<4> res; bit<8> flags; bit<16> window; bit<16> checksum; bit<16> urgent_ptr;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; tcp_t tcp; }
struct meta_t { bool ipv4_ok; bit<16> l4_residual; }
struct eg_meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_csum;
    Checksum() tcp_csum;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.ipv4_ok = false;
        md.l4_residual = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_csum.add(hdr.ipv4);
        md.ipv4_ok = ipv4_csum.verify();
        tcp_csum.subtract({hdr.ipv4.src, hdr.ipv4.dst});
        transition select(hdr.ipv4.protocol) {
            6 : parse_tcp;
            default : accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        tcp_csum.subtract({hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.checksum});
        tcp_csum.subtract_all_and_deposit(md.l4_residual);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Random<bit<8>>() rnd;
    apply {
        if (md.ipv4_ok) {
            ig_tm_md.ucast_egress_port = 2;
        } else {
            ig_tm_md.ucast_egress_port = 3;
        }
        if (hdr.tcp.isValid()) {
            hdr.ipv4.src = 0x0a0a0a0a;
            hdr.tcp.src_port = 0x1234;
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
        if (hdr.tcp.src_port == 0x1234) {         /* a table of its own: Random, no data */
            hdr.ipv4.identification[7:0] = rnd.get();
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    Checksum() tcp_csum;
    apply {
        hdr.ipv4.checksum = ipv4_csum.update({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                                              hdr.ipv4.total_len, hdr.ipv4.identification,
                                              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                                              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst});
        hdr.tcp.checksum = tcp_csum.update({hdr.ipv4.src, hdr.ipv4.dst, hdr.tcp.src_port,
                                            hdr.tcp.dst_port, md.l4_residual});
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_meta_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_meta_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
