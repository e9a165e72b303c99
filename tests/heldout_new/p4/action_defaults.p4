// held out: an action parameter with a default value (setd() called without it, named
// arguments), an out argument, a table's hit in a condition, a value_set in the parser
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) vs;
    state start { pkt.extract(hdr.h); transition select(hdr.h.a) { vs: one; 0x10 .. 0x20: two; default: accept; } }
    state one { meta.m = 1; transition accept; }
    state two { meta.m = 2; transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
action setd(bit<8> v = 8w0x42) { hdr.h.d = v; }
    action cp(in bit<8> x, out bit<8> y) { y = x + 1; }
    table t { key = { hdr.h.a: exact; } actions = { setd; NoAction; } default_action = setd(3); }
    apply { sm.egress_spec = 1; if (!t.apply().hit) { cp(hdr.h.d, hdr.h.b); } setd(); if (meta.m == 2) { setd(v = 8w0x24); cp(y = hdr.h.b, x = meta.m); } }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
