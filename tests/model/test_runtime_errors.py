"""What BMv2 does on a packet that goes wrong at run time, the model does too, and no
Python exception escapes a packet (the programs that run on both, and BMv2's outputs,
are in tests/fixtures/differential: shifts.p4, ternary_width.p4, ...)."""

from __future__ import annotations

from sfclab.targets.model import ModelSwitch

STACK = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> i; bit<8> v; }
header e_t { bit<8> b; }
struct hs { h_t h; e_t[2] s; }
struct m { }
parser P(packet_in pk, out hs hdr, inout m meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.s.next); pk.extract(hdr.s.next);
                  transition accept; } }
control V(inout hs hdr, inout m meta) { apply { } }
control I(inout hs hdr, inout m meta, inout standard_metadata_t sm) {
    action setbyte(out bit<8> reg, bit<8> val) { reg = val; }
    table t { key = { hdr.h.v : exact; } actions = { setbyte(hdr.s[1].b); NoAction; } }
    apply { hdr.h.v = hdr.s[hdr.h.i].b; hdr.s[hdr.h.i].b = 0x77; t.apply(); } }
control E(inout hs hdr, inout m meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m meta) { apply { } }
control D(packet_out pk, in hs hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_stack_index_past_the_end_reads_0_and_writes_nothing():
    """P4_16 leaves such a read undefined and makes such a write do nothing; BMv2 1.15
    stops (std::out_of_range) where p4c leaves the access in, which the programs BMv2
    passes never reach (p4c often removes it: gauntlet_index_5 in p4c's tests)."""
    sw = ModelSwitch(STACK)
    assert sw.process(0, bytes([1, 0, 0x0a, 0x0b])).outputs == [(0, bytes([1, 0x0b, 0x0a, 0x77]))]
    r = sw.process(0, bytes([2, 9, 0x0a, 0x0b]))
    assert r.outputs == [(0, bytes([2, 0, 0x0a, 0x0b]))]
    assert "hdr.s[2] is out of the stack's bounds (size 2): read as 0, not written" in \
        r.trace.text()


def test_an_argument_bound_in_the_action_list_is_not_a_control_plane_parameter():
    sw = ModelSwitch(STACK)
    assert sw.table_info("t")["actions"]["I.setbyte"] == [("val", 8)]
    sw.insert("t", {"hdr.h.v": 0x0a}, "I.setbyte", {"val": 0x42})
    assert sw.process(0, bytes([0, 0, 0x0a, 0x0b])).outputs == [(0, bytes([0, 0x0a, 0x77, 0x42]))]


def test_const_int_and_shifts_past_the_width_run():
    sw = ModelSwitch("""
#include <core.p4>
#include <v1model.p4>
const int int_def = 1;
const int big = 1 << 70;
header h_t { bit<8> a; bit<8> b; int<8> c; bit<64> d; }
struct hs { h_t h; }
struct m { }
parser P(packet_in pk, out hs hdr, inout m meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; } }
control V(inout hs hdr, inout m meta) { apply { } }
control I(inout hs hdr, inout m meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.b = hdr.h.b << hdr.h.a;
        hdr.h.c = hdr.h.c >> hdr.h.a;
        hdr.h.d = hdr.h.d << hdr.h.d;
        hdr.h.a = (bit<8>) int_def + (bit<8>) (big >> 68);
    } }
control E(inout hs hdr, inout m meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m meta) { apply { } }
control D(packet_out pk, in hs hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")
    d = (1 << 63).to_bytes(8, "big")
    out = sw.process(0, bytes([200, 0xff, 0x80]) + d).outputs
    assert out == [(0, bytes([5, 0, 0xff]) + bytes(8))]
