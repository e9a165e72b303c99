/* TNA's stateful externs and hashes, each writing what it did into an `info` header the
 * packet carries out: a RegisterAction counting packets per source MAC byte, a Counter, a
 * DirectCounter, a Meter and a DirectMeter (their colours), Hash (CRC16, CRC32), and a
 * Digest the ingress deparser packs.  (Checksums and Random: checksum.p4.) */
#include <core.p4>
#include <tna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
header info_t {
    bit<32> reg; bit<16> h16; bit<32> h32; bit<8> color; bit<8> dcolor;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; info_t info; }
struct learn_t { bit<48> src; PortId_t port; }
struct meta_t { bit<8> idx; PortId_t port; }
struct eg_meta_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out meta_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.idx = 0;
        md.port = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(256) seen;
    RegisterAction<bit<32>, bit<8>, bit<32>>(seen) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };
    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS_AND_BYTES) by_src;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;
    Meter<bit<8>>(256, MeterType_t.PACKETS) policer;
    DirectMeter(MeterType_t.BYTES) dpolicer;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h32;

    action fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hits.count();
    }
    table route {
        key = { hdr.ipv4.dst : exact; }
        actions = { fwd; }
        default_action = fwd(1);
        counters = hits;
        size = 64;
    }
    action meter_it() { hdr.info.dcolor = dpolicer.execute(); }
    table classes {
        key = { hdr.ipv4.src : exact; }
        actions = { meter_it; @defaultonly NoAction; }
        default_action = NoAction();
        meters = dpolicer;
        size = 64;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            hdr.info.setValid();
            md.idx = hdr.ethernet.src[7:0];
            md.port = ig_intr_md.ingress_port;
            hdr.info.reg = bump.execute(md.idx);
            by_src.count(md.idx);
            hdr.info.h16 = h16.get({hdr.ipv4.src, hdr.ipv4.dst});
            /* Tofino takes 32 bits of hash and meter results per stage: each of these
             * reads what the one before wrote, so it runs a stage later */
            if (hdr.info.reg != 0) {
                hdr.info.h32 = h32.get({hdr.ipv4.src, hdr.ipv4.dst});
            }
            if (hdr.info.h32 != 0) {
                hdr.info.color = policer.execute(md.idx);
            }
            hdr.info.dcolor = 0xFF;
            classes.apply();
            route.apply();
            if (hdr.ipv4.ttl == 1) {
                ig_dprsr_md.digest_type = 1;
            }
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in meta_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<learn_t>() learn;
    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn.pack({hdr.ethernet.src, md.port});
        }
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
