// held out: tuple-typed locals indexed by constants, list expressions into hash() and
// into struct initialisers, a struct initialiser by names, struct equality
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; bit<8> e; }
struct headers_t { h_t h; }
struct pair_t { bit<8> x; bit<16> y; }
struct meta_t { pair_t p; pair_t q; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, bit<16>> t = { hdr.h.a, hdr.h.c };
        meta.p = { hdr.h.b, 16w7 };
        meta.q = { x = t[0], y = t[1] + 1 };
        hash(hdr.h.d, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 17w65536);
        if (meta.p == meta.q) { hdr.h.e = 1; }
        else if (meta.p != { hdr.h.a, 16w7 }) { hdr.h.e = 2; }
        else { hdr.h.e = 3; }
        hdr.h.c = meta.q.y ^ meta.p.y;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
