// held out: IPv4-like options as varbit, extract with a length from ihl, emit, a second
// varbit header copied whole, minSizeInBytes/sizeInBytes style reads avoided
#include <core.p4>
#include <v1model.p4>

header base_t { bit<4> ver; bit<4> ihl; bit<8> tos; bit<8> proto; bit<8> pad; }
header opts_t { varbit<320> data; }
header tlv_t { bit<8> len; varbit<64> val; }
header after_t { bit<8> x; }
struct headers_t { base_t b; opts_t o; tlv_t t; after_t a; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.b);
        transition select(hdr.b.ihl) { 0: after; default: opts; }
    }
    state opts {
        pkt.extract(hdr.o, (bit<32>)hdr.b.ihl * 32);
        transition select(hdr.b.proto) { 7: tlv; default: after; }
    }
    state tlv {
        bit<8> n = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.t, (bit<32>)(n << 3));
        transition after;
    }
    state after { pkt.extract(hdr.a); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 3;
        hdr.a.x = hdr.a.x + (bit<8>)hdr.b.ihl;
        if (hdr.b.tos == 1) { hdr.o.setInvalid(); hdr.b.ihl = 0; }
        if (hdr.t.isValid()) { hdr.b.pad = hdr.t.len; }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.b); pkt.emit(hdr.o); pkt.emit(hdr.t); pkt.emit(hdr.a); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
