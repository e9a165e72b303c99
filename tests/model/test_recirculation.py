"""Recirculation and resubmission as BMv2 does them: state carried in a header
across passes, metadata reset except the field list, bounded loops."""

from __future__ import annotations

import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header sfc_t {
    bit<16> path_id; bit<8> state; bit<32> bitmap; bit<8> counter;
    bit<16> in_port; bit<32> itype; bit<8> kept; bit<8> lost;
}
"""
PARSER = """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x88B5: parse_sfc; default: accept; }
    }
    state parse_sfc { pkt.extract(hdr.sfc); transition accept; }
"""
META = "@field_list(1) bit<8> kept; bit<8> lost;"


def program(ingress_tail: str = "", egress: str = "apply { }", limit: int = 2) -> str:
    return v1model(DECLS, PARSER, """
    apply {
        if (!hdr.sfc.isValid()) {
            hdr.sfc.setValid();
            hdr.sfc.path_id = 7;
            hdr.sfc.bitmap = 0b101;
            hdr.ethernet.ether_type = 0x88B5;
            meta.kept = 1;
            meta.lost = 1;
        } else {
            hdr.sfc.state = hdr.sfc.state + 1;
        }
        hdr.sfc.counter = hdr.sfc.counter + 1;
        hdr.sfc.in_port = (bit<16>) sm.ingress_port;
        hdr.sfc.itype = sm.instance_type;
        hdr.sfc.kept = meta.kept;
        hdr.sfc.lost = meta.lost;
        meta.kept = meta.kept + 1;
        meta.lost = meta.lost + 1;
        sm.egress_spec = 2;
        if (hdr.sfc.state < LIMIT) {
            recirculate_preserving_field_list(1);
        }
    """.replace("LIMIT", str(limit)) + ingress_tail + "\n    }", egress=egress,
        deparser="apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.sfc); }",
        headers="ethernet_t ethernet; sfc_t sfc;", meta=META)


PKT = Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP() / b"data"


def sfc_bytes(state, counter, in_port, itype, kept, lost) -> bytes:
    return struct.pack("!HBIBHIBB", 7, state, 0b101, counter, in_port, itype, kept, lost)


def test_state_is_carried_in_the_header_across_passes():
    sw = ModelSwitch(program())
    r = sw.process(1, PKT)
    eth = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x88B5))
    # third pass: recirculated (instance type 4), ingress_port reset to 0, the field-list
    # field preserved (1 -> 2 -> 3), the other metadata field reset each pass
    assert r.outputs == [(2, eth + sfc_bytes(2, 3, 0, 4, 3, 0) + bytes(PKT[IP]))]
    t = r.trace
    assert t.passes == 3 and r.passes == 3
    rec = [e for e in t.events if e.kind == "recirculate"]
    assert [(e.pass_no, e.value) for e in rec] == [
        (0, {"path_id": 7, "state": 0, "bitmap": 5, "counter": 1}),
        (1, {"path_id": 7, "state": 1, "bitmap": 5, "counter": 2})]
    assert "recirculate -> pass 1 (path_id=7, state=0, bitmap=5, counter=1)" in t.text()
    assert {e.pass_no for e in t.events} == {0, 1, 2}


def test_first_pass_sees_the_real_ingress_port_and_instance_type_0():
    r = ModelSwitch(program(limit=0)).process(6, PKT)
    eth = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x88B5))
    assert r.outputs == [(2, eth + sfc_bytes(0, 1, 6, 0, 1, 1) + bytes(PKT[IP]))]
    assert r.passes == 1


def test_mark_to_drop_in_egress_beats_recirculation():
    sw = ModelSwitch(program(egress="apply { mark_to_drop(sm); }"))
    r = sw.process(1, PKT)
    assert r.dropped and r.passes == 1
    assert r.trace.drop_reason == "mark_to_drop() in control E"
    assert not [e for e in r.trace.events if e.kind == "recirculate"]


def test_drop_in_ingress_means_no_recirculation():
    sw = ModelSwitch(program(ingress_tail="mark_to_drop(sm);"))
    r = sw.process(1, PKT)
    assert r.dropped and r.passes == 1
    assert r.trace.drop_reason == "mark_to_drop() in control I"


def test_recirculation_loop_is_bounded():
    sw = ModelSwitch(program(ingress_tail="recirculate_preserving_field_list(1);"), max_passes=5)
    r = sw.process(1, PKT)
    assert r.dropped and r.passes == 5
    assert "max_passes" in r.trace.drop_reason and "5 passes" in r.trace.drop_reason


RESUBMIT = v1model(DECLS, PARSER, """
    apply {
        if (sm.instance_type == 0) {
            meta.kept = 9;
            meta.lost = 9;
            hdr.ethernet.src = 0xFFFFFFFFFFFF;
            resubmit_preserving_field_list(1);
        } else {
            hdr.ethernet.dst = (bit<48>) meta.kept;
            hdr.ethernet.ether_type = (bit<8>) meta.lost ++ (bit<8>) sm.instance_type;
            sm.egress_spec = 3;
        }
    }""", headers="ethernet_t ethernet; sfc_t sfc;", meta=META,
    deparser="apply { pkt.emit(hdr.ethernet); }")


def test_resubmit_restarts_ingress_with_the_original_bytes_and_the_field_list():
    sw = ModelSwitch(RESUBMIT)
    r = sw.process(1, PKT)
    exp = PKT.copy()
    exp[Ether].dst = "00:00:00:00:00:09"
    exp[Ether].type = 0x0006                   # lost = 0 (reset), instance type 6
    assert r.outputs == [(3, bytes(exp))]
    assert r.passes == 2
    assert [e.kind for e in r.trace.events].count("resubmit") == 1
