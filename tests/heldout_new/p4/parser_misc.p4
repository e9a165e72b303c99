// held out: a sub-parser, select on a tuple with masks, ranges and _, lookahead of a
// header, verify() with a custom error, the parser error compared (p4c-bm2-ss takes no error
// key in const entries), a stack filled
// with .next and read with .last, push_front/pop_front, minSizeInBytes, @priority in
// const entries
#include <core.p4>
#include <v1model.p4>

error { TooMany, BadKind }
header h_t { bit<8> kind; bit<8> cnt; }
header lbl_t { bit<8> v; }
header peek_t { bit<4> hi; bit<4> lo; }
header res_t { bit<8> err; bit<8> last; bit<8> size; bit<8> prio; }
struct headers_t { h_t h; lbl_t[4] l; res_t r; }
struct meta_t { bit<8> seen; bit<8> last; }

parser Labels(packet_in pkt, inout headers_t hdr, inout meta_t meta) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        transition select(p.hi, p.lo) {
            (0xF, _): accept;
            (0x0 &&& 0x8, 0x0 .. 0x7): one;
            default: one;
        }
    }
    state one {
        pkt.extract(hdr.l.next);
        meta.seen = meta.seen + 1;
        meta.last = hdr.l.last.v + (bit<8>)hdr.l.lastIndex;
        verify(meta.seen < 4, error.TooMany);
        transition start;
    }
}
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Labels() labels;
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.kind != 0xEE, error.BadKind);
        transition select(hdr.h.kind, hdr.h.cnt) {
            (1, 0 .. 3): more;
            (2 &&& 0xFE, _): more;
            default: accept;
        }
    }
    state more { labels.apply(pkt, hdr, meta); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action code(bit<8> c) { hdr.r.err = c; }
    table prio {
        key = { hdr.h.kind: ternary; hdr.h.cnt: ternary; }
        actions = { code; }
        default_action = code(0x99);
        const entries = {
            (0x01 &&& 0xff, _) : code(1) @priority(2);
            (_, 0x02 &&& 0xff) : code(2) @priority(1);
            (0x03 &&& 0x03, _) : code(3);
        }
    }
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        prio.apply();
        if (sm.parser_error == error.TooMany) { hdr.r.prio = 1; }
        else if (sm.parser_error == error.BadKind) { hdr.r.prio = 2; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.r.prio = 3; }
        else if (sm.parser_error != error.NoError) { hdr.r.prio = 4; }
        hdr.r.last = meta.last;
        hdr.r.size = (bit<8>)hdr.h.minSizeInBytes() + (bit<8>)meta.seen;
        if (hdr.h.cnt == 2) { hdr.l.push_front(1); hdr.l[0].setValid(); hdr.l[0].v = 0x77; }
        if (hdr.h.cnt == 3) { hdr.l.pop_front(2); }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.l); pkt.emit(hdr.r); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
