"""STF files (p4c's simple test framework): reading them, and running them on the model
(``sfclab stf``); the same tests on BMv2 are in tests/differential."""

from __future__ import annotations

from pathlib import Path

import pytest

from sfclab.cli.commands import main
from sfclab.targets.model import ModelSwitch
from sfclab.targets.stf.runner import ModelDriver, resolve_key, run_stf, stf_test
from sfclab.targets.stf.script import (Add, Direct, Expect, Packet, StfSyntaxError, compare_packet,
                                       key_value, parse_stf)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "differential"


def test_commands_are_read_with_their_lines():
    cmds = parse_stf("# a comment\n"
                     "add ingress.t 7 hdr.h.a:0x0a** h.valid:1 ingress.set(v:7, port:0x2) = A\n"
                     "packet 3 0a 0b0c  # trailing comment\n"
                     "expect 2 0A ** 0C $\n"
                     "expect 4\n"
                     "mc_node_create 0 1 2\n")
    add, pkt, exp, anyp, node = cmds
    assert isinstance(add, Add) and add.line == 2
    assert (add.table, add.priority, add.action) == ("ingress.t", 7, "ingress.set")
    assert add.keys == (("hdr.h.a", "0x0a**"), ("h.valid", "1"))
    assert add.args == (("v", "7"), ("port", "0x2"))
    assert isinstance(pkt, Packet) and (pkt.port, pkt.data) == (3, b"\x0a\x0b\x0c")
    assert isinstance(exp, Expect) and (exp.pattern, exp.exact) == ("0A**0C", True)
    assert isinstance(anyp, Expect) and anyp.pattern is None
    assert parse_stf("expect 5 $")[0].pattern == ""          # an empty packet, exactly
    assert isinstance(node, Direct) and node.words == ("0", "1", "2")


def test_a_bad_line_is_an_error_with_its_line_and_a_caret():
    with pytest.raises(StfSyntaxError) as e:
        parse_stf("packet 1 00\npacket x 00\n", source="t.stf")
    text = str(e.value)
    assert text.startswith("t.stf:2:1: cannot read this 'packet' line")
    assert "packet x 00\n    ^^^^^^" in text and "hint: packet PORT HEX-BYTES" in text
    with pytest.raises(StfSyntaxError, match="unknown command '1packet'"):
        parse_stf("1packet 1")
    with pytest.raises(StfSyntaxError, match="must be hex digits"):
        parse_stf("packet 0 0g")
    assert parse_stf("packet 0 abc")[0].data == b"\xab\x0c"      # as p4c's bmv2stf


@pytest.mark.parametrize("kind,text,width,want", [
    ("exact", "0x0a", 8, 10),
    ("ternary", "0x0a", 16, (0x0a, 0xff)),           # only the digits written are masked
    ("ternary", "0x*a", 8, (0x0a, 0x0f)),
    ("ternary", "0b1*0", 3, (0b100, 0b101)),
    ("ternary", "5&&&0x7", 8, (5, 7)),
    ("lpm", "0x0a000000/8", 32, (0x0a000000, 8)),
    ("lpm", "0x0a0b****", 32, (0x0a0b0000, 16)),
    ("lpm", "0x0aff0000/8", 32, (0x0a000000, 8)),    # bits past the prefix are cleared
    ("range", "3->9", 8, (3, 9)),
])
def test_key_values_as_bmv2stf_reads_them(kind, text, width, want):
    assert key_value(kind, text, width) == want


def test_packets_compare_nibble_by_nibble():
    assert compare_packet("0A*C", b"\x0a\xbc\xff", False) == ""
    assert "ends with $" in compare_packet("0A*C", b"\x0a\xbc\xff", True)
    assert "nibble 3" in compare_packet("0A*D", b"\x0a\xbc", False)
    assert "1 byte(s)" in compare_packet("0A0B", b"\x0a", False)


def test_key_names_resolve_as_bmv2stf_finds_them():
    keys = ["hdr.ethernet.dstAddr", "hdr.ipv4.isValid()", "meta.stk[1].x"]
    assert resolve_key("dstAddr", keys) == "hdr.ethernet.dstAddr"
    assert resolve_key("hdr.ipv4.$valid$", keys) == "hdr.ipv4.isValid()"
    assert resolve_key("ipv4.valid", keys) == "hdr.ipv4.isValid()"
    assert resolve_key("meta.stk$1.x", keys) == "meta.stk[1].x"
    assert resolve_key("nothing", keys) is None


@pytest.mark.parametrize("program", sorted(FIXTURES.glob("*.p4")), ids=lambda p: p.stem)
def test_every_fixture_passes_on_the_model(program):
    report = stf_test(program)
    assert report.ok and report.passed, report.text()


def test_failures_name_the_line_and_what_came_out():
    prog = FIXTURES / "tables.p4"
    report = run_stf(ModelDriver(ModelSwitch(prog)), "add lpm_t hdr.h.dst:0x0a000000/8 "
                     "route(p:1, v:8)\nadd nosuch x:1 a()\npacket 0 0a000001 0050 ee 00 00 00 42\n"
                     "expect 1 FF\nexpect 1 00\n", source="t.stf")
    assert not report.ok
    text = report.text()
    assert "t.stf:2: FAIL add nosuch x:1 a(): model refused it: no table named 'nosuch'" in text
    assert "t.stf:4: FAIL port 1: expect FF: got 0A00000100" in text
    assert "(from the packet of line 3)" in text
    assert "t.stf:5: FAIL port 1: expect 00: no packet 2 came out of port 1 (only 1)" in text
    assert report.summary() == "model: 0 of 3 expectation(s) met"


def test_more_packets_than_expected_fail_and_unwatched_ports_do_not_count():
    prog = FIXTURES / "multicast_clone.p4"
    script = ("mc_mgrp_create 5\nmc_node_create 3 2 4\nmc_node_associate 5 0\n"
              "packet 0 01 00 00 00\nexpect 2 01030205\n")
    report = run_stf(ModelDriver(ModelSwitch(prog)), script)
    assert report.ok, report.text()            # port 4 is named by no line: not watched
    report = run_stf(ModelDriver(ModelSwitch(prog)), script + "expect 9\npacket 4 00000000\n")
    assert [(c.line, c.ok) for c in report.checks] == [(4, False), (5, True)]
    assert "the packet of line 4 also sent 01030405 out of port 4" in report.checks[0].why


def test_what_the_runner_does_not_know_is_noted_as_bmv2stf_ignores_it():
    prog = FIXTURES / "shifts.p4"
    report = run_stf(ModelDriver(ModelSwitch(prog)), "frobnicate 1 2\npacket 0 00\n",
                     source="t.stf")
    assert report.ok and report.notes == [
        (1, "unknown command 'frobnicate' ignored (as p4c's bmv2stf ignores it)")]
    assert report.text().startswith("t.stf:1: note: unknown command 'frobnicate' ignored")


def test_the_command_line(tmp_path, capsys):
    prog = FIXTURES / "shifts.p4"
    assert main(["stf", str(prog)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "model: 5 of 5 expectation(s) met"
    bad = tmp_path / "bad.stf"
    bad.write_text("packet 0 03 81 81 F00F 00 00 00 00 00 0000 00 00\nexpect 1 00\n")
    assert main(["stf", str(prog), str(bad), "-v"]) == 1
    cap = capsys.readouterr()
    assert f"{bad}:1: packet on port 0 038181F00F" in cap.out
    assert f"{bad}:2: FAIL port 1: expect 00: got 038181F00F" in cap.out
    assert main(["stf", str(prog), str(tmp_path / "none.stf")]) == 1
    assert "cannot read the STF file" in capsys.readouterr().err
    defs = tmp_path / "defs.p4"
    defs.write_text(prog.read_text().replace("sm.egress_spec = 1;", "sm.egress_spec = PORT;"))
    assert main(["stf", str(defs), str(prog.with_suffix(".stf")), "-D", "PORT=1"]) == 0
    capsys.readouterr()
    assert main(["stf", str(defs), str(prog.with_suffix(".stf")), "-D", "PORT=2"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_meter_rates_are_bmv2s_per_microsecond():
    sw = ModelSwitch("""
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> color; }
struct hs { h_t h; }
struct m { }
parser P(packet_in pk, out hs hdr, inout m meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; } }
control V(inout hs hdr, inout m meta) { apply { } }
control I(inout hs hdr, inout m meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) mt;
    apply { mt.execute_meter((bit<32>) hdr.h.a, hdr.h.color); } }
control E(inout hs hdr, inout m meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m meta) { apply { } }
control D(packet_out pk, in hs hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")
    report = run_stf(ModelDriver(sw), "meter_set_rates mt 1 0.000001:1 0.000002:3\n"
                                      "meter_array_set_rates mt 0.5:10 1:20\n")
    assert report.ok, report.text()
    cells = sw.externs["I.mt"].state.meters
    assert cells[0].config() == pytest.approx((5e-1, 10, 1.0, 20))      # per microsecond
