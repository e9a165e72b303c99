// held out: function-like macros (nested, multi-line, #if arithmetic, #elif, #undef) and
// functions returning values that the macros call
#include <core.p4>
#include <v1model.p4>

#define WIDTH 8
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIX(x, y) \
    ((x) ^ ((y) << 1))
#define LEVEL (2 * 3 + 1)
#if LEVEL > 6 && defined(WIDTH)
#define BONUS 8w0x10
#elif LEVEL > 3
#define BONUS 8w0x20
#else
#define BONUS 8w0x30
#endif
#define PORT 3
#undef PORT
#define PORT 2
#ifndef NOT_THERE
#define TWICE(v) ((v) + (v))
#endif

header h_t { bit<WIDTH> a; bit<WIDTH> b; bit<WIDTH> c; bit<WIDTH> d; }
struct headers_t { h_t h; }
struct meta_t { }

bit<8> clamp(in bit<8> v, in bit<8> hi) {
    if (v > hi) { return hi; }
    return v;
}
bit<8> pick(in bit<8> x, in bit<8> y) { return MAX(clamp(x, 8w0x7f), y); }
bit<8> local_sum(in bit<8> p, in bit<8> q) { return TWICE(p) + q; }
bool odd(in bit<8> v) { return v[0:0] == 1; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = PORT;
        hdr.h.c = pick(hdr.h.a, hdr.h.b);
        hdr.h.d = MIX(hdr.h.a, hdr.h.b) + BONUS;
        if (odd(hdr.h.a)) { hdr.h.b = local_sum(hdr.h.b, 1); }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
