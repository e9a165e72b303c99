"""Held-out TNA programs a user writes by hand, on the embedded Tofino model
(``TnaSwitch``, what ``model?arch=tna`` runs): what runs does what ``tna.p4`` says, what
the model does not run is refused with the line, a caret under the construct and what to
do.

``tna/count_resubmit.p4`` (Register + RegisterAction at a CRC16 Hash index, the parser's
Checksum verify, resubmit with data, the deparser's Checksum update, bypass_egress) is
``p4c-barefoot``'s to accept (9.13.4, run by hand: ``p4c-barefoot --arch tna --target
tofino``; so are the ``@pragma`` and ``max()`` variants).  Before, every refusal but one
showed a bare ``file:line:col`` (no line, no caret, no hint), and ``@pragma stage 3`` —
p4c's form, the rest of the line — was refused as a syntax error ("'stage' is not a
declared type").  (Left: the model runs what only Tofino's compiler refuses — a table
applied in two places, a gateway on a 32-bit ``>=`` — as this program's first version had.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, raw

from sfclab.p4 import parse_p4
from sfclab.p4.printer import to_p4
from sfclab.targets.model import ModelCompileError
from sfclab.targets.model.externs import crc16
from sfclab.targets.model.tna import TnaSwitch

HERE = Path(__file__).resolve().parent / "tna"
PROGRAM = HERE / "count_resubmit.p4"
PKT = raw(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02")
          / IP(src="1.2.3.4", dst="10.1.1.1", ttl=64) / UDP() / b"xx")


@pytest.fixture()
def sw() -> TnaSwitch:
    s = TnaSwitch(PROGRAM)
    s.insert("route", {"hdr.ipv4.dst": ("10.0.0.0", 8)}, "Ig.to", {"p": 5})
    return s


def where(r) -> list[str]:
    return [e.name for e in r.trace.events if e.kind in ("pipeline_start", "resubmit")]


def test_register_actions_count_at_the_hash_index_and_the_third_packet_is_resubmitted(sw):
    outs = [sw.process(1, PKT) for _ in range(4)]
    idx = crc16(bytes([1, 2, 3, 4, 10, 1, 1, 1]))           # CRC16 of {src, dst}
    assert [(i, v) for i, v in enumerate(sw.read_register("Ig.flows")) if v] == [(idx, 4)]
    assert [(i, v) for i, v in enumerate(sw.read_register("Ig.bytes")) if v] == [(idx, 4 * 30)]
    for n, r in enumerate(outs, 1):
        [(port, data)] = r.outputs
        out = Ether(data)
        assert port == 5 and out.dst == "00:00:00:00:00:05"   # egress: the egress port
        fresh = out[IP].copy()
        del fresh.chksum
        assert out[IP].chksum == IP(raw(fresh)).chksum          # the deparser's update
        if n < 3:                                               # routed on the first pass
            assert where(r) == ["pipe 0 ingress", "pipe 0 egress"]
            assert out[IP].ttl == 63 and out.src == "00:00:00:00:00:02"
        else:   # resubmitted: the first pass's changes are gone, its data arrived
            assert where(r) == ["pipe 0 ingress", "resubmitted on port 1", "pipe 0 ingress",
                                "pipe 0 egress"]
            assert out[IP].ttl == 64 and out.src == f"00:00:00:00:00:0{n}"


def test_a_bad_ipv4_checksum_leaves_on_port_9_bypassing_egress(sw):
    bad = bytearray(PKT)
    bad[14 + 10] ^= 0xFF                                         # the header checksum
    r = sw.process(1, bytes(bad))
    [(port, data)] = r.outputs
    assert port == 9 and where(r) == ["pipe 0 ingress"]
    assert Ether(data).dst == "00:00:00:00:00:01"               # no egress wrote it
    assert not any(sw.read_register("Ig.flows"))


_TEXT = PROGRAM.read_text()
#: (construct, the text that replaces the anchor, the caret's text, what the hint says)
REFUSED = {
    "a Register of pairs": (
        "    Register<bit<32>, bit<16>>(65536, 0) flows;",
        "    Register<pair_t, bit<16>>(65536) pairs;\n"
        "    Register<bit<32>, bit<16>>(65536, 0) flows;", "pairs", "a Register of its own"),
    "an ActionSelector": (
        "    Register<bit<32>, bit<16>>(65536, 0) flows;",
        "    ActionSelector(128, h, SelectorMode_t.FAIR) sel;\n"
        "    Register<bit<32>, bit<16>>(65536, 0) flows;", "sel", "the model runs these TNA"),
    "a DirectRegister": (
        "    Register<bit<32>, bit<16>>(65536, 0) flows;",
        "    DirectRegister<bit<32>>() dr;\n"
        "    Register<bit<32>, bit<16>>(65536, 0) flows;", "dr", "the model runs these TNA"),
    "a ParserCounter": (
        "    Checksum() ipv4_csum;\n    state start {",
        "    Checksum() ipv4_csum;\n    ParserCounter() pc;\n    state start {", "pc",
        "the model runs these TNA"),
}


@pytest.mark.parametrize("what", REFUSED)
def test_what_the_model_does_not_run_is_refused_with_line_caret_and_hint(what):
    anchor, new, caret_on, hint = REFUSED[what]
    text = _TEXT.replace(anchor, new, 1).replace(
        "struct headers_t {", "struct pair_t { bit<32> lo; bit<32> hi; }\nstruct headers_t {")
    with pytest.raises(ModelCompileError) as e:
        TnaSwitch(text)
    first, shown, caret = str(e.value).splitlines()[:3]
    line, col = map(int, first.split(":")[1:3])
    assert shown == "    " + text.splitlines()[line - 1]
    assert caret == " " * (3 + col) + "^" * len(caret_on)
    assert shown[4 + col - 1:].startswith(caret_on)
    assert hint in e.value.hint


def test_a_pragma_takes_the_rest_of_its_line_and_prints_back():
    text = _TEXT.replace("    table route {", "    @pragma stage 3\n"
                         "    @pragma ignore_table_dependency \"Ig.route\"\n"
                         "    @placement_priority(1)\n    table route {", 1)
    TnaSwitch(text)                                             # loads: no syntax error
    printed = to_p4(parse_p4(text))
    assert "@pragma stage 3\n" in printed
    assert "@pragma ignore_table_dependency \"Ig.route\"\n" in printed
    assert to_p4(parse_p4(printed)) == printed
