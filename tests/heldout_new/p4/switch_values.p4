// held o: switch on a bit<> value with grouped labels and default, switch on a
// serializable enum, switch on an action run with a default, nested switches
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind { A = 1, B = 2, C = 7 }
header h_t { bit<8> k; bit<8> v; bit<8> o; bit<8> x; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action one() { hdr.h.x = 1; }
    action two(bit<8> d) { hdr.h.x = d; }
    table t { key = { hdr.h.v: exact; } actions = { one; two; NoAction; } default_action = NoAction(); }
    apply {
        sm.egress_spec = 1;
        switch (hdr.h.k) {
            0: { hdr.h.o = 0x10; }
            1:
            2: { hdr.h.o = 0x20;
                 switch (hdr.h.v) { 3: { hdr.h.o = 0x23; } default: { } } }
            5: { }
            default: { hdr.h.o = 0xff; }
        }
        Kind kk = (Kind)hdr.h.v;
        switch (kk) {
            Kind.A: { hdr.h.o = hdr.h.o + 1; }
            Kind.C: { hdr.h.o = hdr.h.o + 7; }
            default: { }
        }
        switch (t.apply().action_run) {
            two: { hdr.h.o = hdr.h.o | 0x80; }
            default: { hdr.h.x = hdr.h.x + 0x40; }
        }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
