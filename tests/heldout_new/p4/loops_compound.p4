// held out: for loops in actions (nested, break, continue, a stack indexed by the loop
// variable; p4c 1.2.5.16's BMv2 back end runs a loop in an apply block once), every compound
// assignment including the saturating ones, on signed and unsigned values
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<8> a; bit<8> b; int<8> s; bit<16> w; }
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[3] es; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.es[0]); pkt.extract(hdr.es[1]);
                  pkt.extract(hdr.es[2]); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    bit<8> acc = 0;
    action count() {
        acc = 0;
        for (bit<8> i = 0; i < 8; i += 1) {
            if (i == hdr.h.n) { break; }
            if (i[0:0] == 1) { continue; }
            for (bit<8> j = 0; j < 2; j = j + 1) { acc += i + j; }
        }
    }
    action stack_sum(inout bit<8> total) {
        for (bit<32> k = 0; k < 3; k = k + 1) { total = total + hdr.es[k].v; }
    }
    apply {
        sm.egress_spec = 1;
        count();
        hdr.h.a |+|= acc;
        hdr.h.b |-|= acc;
        hdr.h.s |+|= -100;
        hdr.h.w <<= 3;
        hdr.h.w ^= 0x0f0f;
        hdr.h.w >>= 1;
        hdr.h.w &= 0xfff0;
        hdr.h.w -= 1;
        hdr.h.w *= 3;
        stack_sum(acc);
        hdr.h.n = acc;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.es); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
