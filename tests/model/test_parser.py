"""Parser errors with v1model/BMv2 semantics: the packet is not dropped by the
parser; ingress sees ``parser_error`` and decides."""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

from .conftest import ETH_IPV4, v1model

PARSER = """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            0x0801: bad_version;
            0x0802: reject;
            0x9000 .. 0x90FF: accept;
            0x8100 &&& 0xEFFF: accept;
        }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
    state bad_version { verify(false, error.BadVersion); transition accept; }
"""
ERR = "error { BadVersion }"


def program(ingress: str) -> str:
    return v1model(ETH_IPV4 + ERR, PARSER, ingress, headers="ethernet_t ethernet; ipv4_t ipv4;",
                   deparser="apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); }")


CHECKING = program("""
    apply {
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        } else {
            sm.egress_spec = 2;
        }
    }""")
TRUSTING = program("apply { sm.egress_spec = 2; }")

ETH = Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01")


def parser_error(r) -> str:
    return next(e.value for e in r.trace.events if e.kind == "parser_done")


def test_too_short_sets_packet_too_short_and_ingress_decides():
    short = bytes(ETH / IP(dst="10.0.0.1"))[:14 + 12]
    r = ModelSwitch(CHECKING).process(1, short)
    assert r.dropped and parser_error(r) == "PacketTooShort"
    assert r.trace.drop_reason == "mark_to_drop() in control I"
    notes = [e.value for e in r.trace.events if e.kind == "note"]
    assert any("PacketTooShort" in n and "does not drop" in n for n in notes)


def test_a_program_that_ignores_errors_forwards_what_was_parsed_plus_the_rest():
    short = bytes(ETH / IP(dst="10.0.0.1"))[:14 + 12]
    r = ModelSwitch(TRUSTING).process(1, short)
    assert r.outputs == [(2, short)]
    assert [e.name for e in r.trace.events if e.kind == "extract"] == ["ethernet"]


def test_shorter_than_the_first_header():
    r = ModelSwitch(TRUSTING).process(1, b"\x01\x02\x03")
    assert r.outputs == [(2, b"\x01\x02\x03")] and parser_error(r) == "PacketTooShort"


def test_no_matching_select_case_is_no_match():
    p = Ether(dst="00:00:00:00:00:02", type=0x1234) / (b"\x00" * 40)
    r = ModelSwitch(CHECKING).process(1, p)
    assert parser_error(r) == "NoMatch" and r.dropped


def test_select_masks_and_ranges():
    for et in (0x9000, 0x90FF, 0x8100, 0x9100):
        p = Ether(dst="00:00:00:00:00:02", type=et) / (b"\x00" * 30)
        r = ModelSwitch(CHECKING).process(1, p)
        assert parser_error(r) == "NoError" and r.ports == [2], hex(et)


def test_verify_sets_the_programs_error():
    p = Ether(dst="00:00:00:00:00:02", type=0x0801) / (b"\x00" * 30)
    r = ModelSwitch(CHECKING).process(1, p)
    assert parser_error(r) == "BadVersion" and r.dropped


def test_explicit_reject_ends_parsing_like_accept_as_bmv2_compiles_it():
    p = Ether(dst="00:00:00:00:00:02", type=0x0802) / (b"\x00" * 30)
    r = ModelSwitch(CHECKING).process(1, p)
    assert parser_error(r) == "NoError" and r.outputs == [(2, bytes(p))]
    assert any("transition reject" in (e.value or "") for e in r.trace.events if e.kind == "note")


def test_parser_states_are_traced():
    r = ModelSwitch(CHECKING).process(1, ETH / IP() / UDP())
    states = [e.name for e in r.trace.events if e.kind == "parser_state"]
    assert states == ["start", "parse_ipv4"]
