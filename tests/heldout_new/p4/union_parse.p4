// held out: a header_union chosen by the parser, setValid on another member, a union in
// a stack, isValid of the union, emit of the union and of one member
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header v4_t { bit<32> addr; }
header v6s_t { bit<16> lo; bit<8> ttl; }
header_union addr_u { v4_t v4; v6s_t v6; }
struct headers_t { tag_t tag; addr_u u; addr_u[2] s; tag_t tail; }
struct meta_t { bit<8> which; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            1: p4; 2: p6; 3: stack; default: accept;
        }
    }
    state p4 { pkt.extract(hdr.u.v4); transition accept; }
    state p6 { pkt.extract(hdr.u.v6); transition accept; }
    state stack { pkt.extract(hdr.s[0].v6); pkt.extract(hdr.s[1].v4); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.u.isValid()) { meta.which = 0x10; }
        if (hdr.u.v4.isValid()) {
            hdr.u.v4.addr = hdr.u.v4.addr + 1;
            if (hdr.u.v4.addr[7:0] == 0xff) {
                hdr.u.v6.setValid();        // v4 becomes invalid
                hdr.u.v6.lo = 0xbeef;
                hdr.u.v6.ttl = 9;
            }
        } else if (hdr.u.v6.isValid()) {
            hdr.u.v6.ttl = hdr.u.v6.ttl - 1;
            if (hdr.u.v6.ttl == 0) { hdr.u.v6.setInvalid(); }
        }
        if (hdr.s[1].v4.isValid()) {
            hdr.s[0].v4.setValid();
            hdr.s[0].v4.addr = 0x0a000001;
            meta.which = meta.which | 2;
        }
        hdr.tail.setValid();
        hdr.tail.kind = meta.which;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.tag); pkt.emit(hdr.u); pkt.emit(hdr.s); pkt.emit(hdr.tail); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
