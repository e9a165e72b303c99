// held out: struct- and header-typed action parameters (directionless from the control
// plane is not allowed for structs, so bound by the caller, in and inout), exit inside an
// action reached through a table, with an inout struct argument, and a function with an
// out parameter
#include <v1model.p4>

header h_t { bit<8> sel; bit<8> a; bit<16> b; bit<8> c; }
struct pair_t { bit<8> x; bit<16> y; }
struct headers_t { h_t h; }
struct meta_t { pair_t p; }

void split(in bit<16> v, out bit<8> hi, out bit<8> lo) { hi = v[15:8]; lo = v[7:0]; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action load(in pair_t v, inout h_t h) { h.a = v.x; h.b = v.y; }
    action bump(inout pair_t v) { v.x = v.x + 1; if (v.y == 0) { exit; } v.y = v.y - 1; }
    action hdr_in(in h_t h) { meta.p.x = h.c; }
    action stop_here(bit<8> code) { hdr.h.c = code; bump(meta.p); hdr.h.c = code + 1; }
    table t { key = { hdr.h.sel: exact; } actions = { stop_here; NoAction; } default_action = NoAction(); }
    apply {
        sm.egress_spec = 2;
        meta.p = { hdr.h.sel, (bit<16>)hdr.h.c };
        if (hdr.h.sel == 1) { bump(meta.p); }
        t.apply();
        hdr_in(hdr.h);
        load(meta.p, hdr.h);
        bit<8> hi; bit<8> lo;
        split(hdr.h.b, hi, lo);
        hdr.h.sel = hi ^ lo;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
