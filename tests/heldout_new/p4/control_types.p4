// held out: a control type declaration, a control with constructor parameters instantiated
// with positional, named and default arguments, a sub-control applied with an in argument
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
control Sub(inout h_t h, in bit<8> k);
control SubImpl(inout h_t h, in bit<8> k) { apply { h.b = h.a + k; } }
control Wrap(inout h_t h)(bit<8> base, bit<8> extra = 8w0x10) {
    SubImpl() s;
    apply { s.apply(h, base); if (h.a == 3) { h.b = h.b + extra; } }
}
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Wrap(8w3) w;
    Wrap(base = 8w5) w2;
    Wrap(8w7, 8w0x20) w3;
    apply { sm.egress_spec = 1; if (hdr.h.a == 1) { w.apply(hdr.h); } else if (hdr.h.a == 4) { w3.apply(hdr.h); } else { w2.apply(hdr.h); } }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
