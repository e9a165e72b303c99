// held out: ?: with an untyped and a typed arm under casts and negation, int constants
// in shifts and widths, slices of slices, slice assignment, signed casts and
// comparisons, concatenation, saturating literals, shifts by a run-time amount >= width
#include <core.p4>
#include <v1model.p4>

const int K = 3;
const bit<8> M = 8w1 << K;
header h_t { bit<8> c; bit<16> a; int<8> s; bit<8> sh; bit<32> w; bit<8> f; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bool c = hdr.h.c[0:0] == 1;
        hdr.h.a = (bit<16>) -(c ? 2 : 3w1);
        hdr.h.a = hdr.h.a + (bit<16>)(c ? 8w200 : 100);
        hdr.h.f = hdr.h.w[23:8][11:4];
        hdr.h.w[3:0] = hdr.h.c[7:4];
        hdr.h.w[31:28] = 4w0xa;
        int<8> neg = -5;
        if (hdr.h.s < neg) { hdr.h.c = hdr.h.c | M; }
        hdr.h.s = (int<8>)((int<16>)hdr.h.s * 3 >> 1)[7:0] == 0 ? hdr.h.s : (int<8>)hdr.h.sh;
        bit<4> small = hdr.h.sh[3:0] ++ 4w0 == 8w0 ? 4w9 : hdr.h.sh[7:4];
        hdr.h.sh = (bit<8>)(hdr.h.w >> hdr.h.sh) ^ (8w0xff >> (bit<8>)small);
        hdr.h.w = hdr.h.w |-| 32w0x10000000;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
