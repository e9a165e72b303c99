"""The per-packet trace: events, text and dict renderings, comparison."""

from __future__ import annotations

import json

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch
from sfclab.targets.traces.trace import diff_traces

from .test_recirculation import PKT, program
from .test_routing import ROUTER, packet


def test_trace_renders_as_text_and_json():
    sw = ModelSwitch(ROUTER)
    sw.insert("I.ipv4_lpm", [("10.0.0.0", 8)], "I.route", [4, 0x111111111111])
    r = sw.process(7, packet("10.2.3.4"))
    text = r.trace.text()
    assert text.splitlines()[0] == "packet 1: in on port 7, 1 pass(es), NFs (none), port 4"
    for line in ("[0] parser state parse_ipv4", "[0] extract ipv4",
                 "[0] table I.ipv4_lpm: hit [hdr.ipv4.dst=0x0a000000/8]",
                 "[0] action I.route(port=4, dmac=18764998447377)", "[0] out on port 4"):
        assert line in text
    d = r.trace.to_dict()
    json.dumps(d)
    assert d["egress_port"] == 4 and d["passes"] == 1 and d["output"] == r.outputs[0][1].hex()
    assert {"kind": "condition", "pass": 0, "name": "sm.checksum_error == 1", "value": False} \
        in d["events"]


def test_same_packet_same_trace_and_differences_are_named():
    a = ModelSwitch(program()).process(1, PKT).trace
    b = ModelSwitch(program()).process(1, PKT).trace
    assert diff_traces(a, b) == []
    c = ModelSwitch(program(limit=0)).process(1, PKT).trace
    diffs = diff_traces(a, c)
    assert any(x.startswith("passes: 3 vs 1") for x in diffs)


def test_dropped_packet_trace():
    sw = ModelSwitch(ROUTER)
    r = sw.process(1, Ether() / IP(dst="1.2.3.4") / UDP())
    assert r.trace.dropped and r.trace.outcome == "drop (mark_to_drop() in action I.drop)"
    assert r.trace.events[-1].kind == "drop"
