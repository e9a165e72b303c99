"""Header stacks: parsing with .next/.last, push_front/pop_front, bounds."""

from __future__ import annotations

from scapy.contrib.mpls import MPLS
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
"""
PARSER = """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x8847: parse_mpls; default: accept; }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) { 1: accept; default: parse_mpls; }
    }
"""
PROGRAM = v1model(DECLS, PARSER, """
    action pop() { hdr.mpls.pop_front(1); }
    action push(bit<20> label) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = 64;
        hdr.mpls[0].bos = hdr.mpls[1].isValid() ? 1w0 : 1w1;
    }
    table t {
        key = { hdr.ethernet.src : exact; }
        actions = { pop; push; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        } else {
            t.apply();
            sm.egress_spec = 2;
        }
    }""", headers="ethernet_t ethernet; mpls_t[3] mpls;",
    deparser="apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.mpls); }")

PAYLOAD = IP(dst="10.0.0.1") / UDP() / b"z"


def labelled(*labels, src="00:00:00:00:00:01"):
    p = Ether(dst="00:00:00:00:00:02", src=src, type=0x8847)
    for i, lab in enumerate(labels):
        p = p / MPLS(label=lab, s=int(i == len(labels) - 1), ttl=64)
    return p / PAYLOAD


def test_parse_and_pop_front():
    sw = ModelSwitch(PROGRAM)
    sw.insert("I.t", [1], "I.pop")
    r = sw.process(1, labelled(100, 200))
    assert r.outputs == [(2, bytes(labelled(200)))]
    assert [e.name for e in r.trace.events if e.kind == "extract"] == \
        ["ethernet", "mpls[0]", "mpls[1]"]


def test_push_front_zeroes_the_new_label_and_shifts_the_others():
    sw = ModelSwitch(PROGRAM)
    sw.insert("I.t", [1], "I.push", [300])
    r = sw.process(1, labelled(100, 200))
    exp = Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x8847) / \
        MPLS(label=300, s=0, ttl=64) / MPLS(label=100, s=0, ttl=64) / MPLS(label=200, s=1, ttl=64)
    assert r.outputs == [(2, bytes(exp / PAYLOAD))]


def test_push_onto_a_full_stack_drops_the_last_label():
    sw = ModelSwitch(PROGRAM)
    sw.insert("I.t", [1], "I.push", [300])
    r = sw.process(1, labelled(1, 2, 3))
    exp = Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x8847) / \
        MPLS(label=300, s=0, ttl=64) / MPLS(label=1, s=0, ttl=64) / MPLS(label=2, s=0, ttl=64)
    # the third label fell off the stack (not emitted); the payload follows
    assert r.outputs == [(2, bytes(exp / PAYLOAD))]


def test_too_many_labels_is_stack_out_of_bounds():
    r = ModelSwitch(PROGRAM).process(1, labelled(1, 2, 3, 4))
    err = next(e.value for e in r.trace.events if e.kind == "parser_done")
    assert err == "StackOutOfBounds" and r.dropped
