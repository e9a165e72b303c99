// held out: (non-const) entries with priority=N out of textual order, ternary, range and
// optional keys, largest_priority_wins = false, and runtime entries with priorities
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<8> r1; bit<8> r2; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set1(bit<8> v) { hdr.h.r1 = v; }
    action set2(bit<8> v) { hdr.h.r2 = v; }
    table c1 {
        key = { hdr.h.a: ternary; hdr.h.c: range; }
        actions = { set1; }
        default_action = set1(0xee);
        entries = {
            priority=30: (0x00 &&& 0x00, 0 .. 0xffff) : set1(1);
            priority=10: (0x10 &&& 0xf0, 100 .. 200) : set1(2);
            priority=20: (0x11 &&& 0xff, _) : set1(3);
            priority=5: (_, 150 .. 160) : set1(4);
        }
    }
    table c2 {
        key = { hdr.h.b: ternary; hdr.h.a: optional; }
        actions = { set2; }
        default_action = set2(0xdd);
        largest_priority_wins = false;
        const entries = {
            (0x01 &&& 0x0f, 0x11) : set2(1);
            (0x00 &&& 0x00, _) : set2(2);
            (0x21 &&& 0xff, _) : set2(3);
        }
    }
    table r {
        key = { hdr.h.b: ternary; }
        actions = { set2; NoAction; }
        default_action = NoAction();
    }
    apply { sm.egress_spec = 1; c1.apply(); c2.apply(); r.apply(); }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
