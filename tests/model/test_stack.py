"""Header stacks: parsing with .next/.last, push_front/pop_front, bounds."""

from __future__ import annotations

import pytest
from scapy.contrib.mpls import MPLS
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch
from sfclab.targets.model.errors import ModelCompileError

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


# (where the cursor is written, the expression, the column of its caret): p4c 1.2.5.16
# refuses each ("hdr.mpls.last: 'last', and 'next' for stacks can only be used in a parser")
OUTSIDE_A_PARSER = [
    ("ingress", "apply { hdr.mpls[0].ttl = hdr.mpls.last.ttl; }", "hdr.mpls.last"),
    ("ingress", "apply { hdr.mpls.next.ttl = 1; }", "hdr.mpls.next"),
    ("ingress", "apply { if (hdr.mpls.lastIndex == 0) { mark_to_drop(sm); } }",
     "hdr.mpls.lastIndex"),
    ("ingress", "action a() { hdr.mpls.last.setInvalid(); }\n    apply { a(); }",
     "hdr.mpls.last"),
    ("decls", "bit<8> ttl_of(in mpls_t[3] s) { return s.last.ttl; }", "s.last"),
]


@pytest.mark.parametrize("where, code, what", OUTSIDE_A_PARSER)
def test_a_stack_cursor_outside_a_parser_is_refused_at_load(where, code, what):
    """Before, the model ran ``.last``/``.next``/``.lastIndex`` in a control, an action or a
    function (p4c refuses them outside a parser); now it refuses the program at load, at the
    expression, and says what to write (the parser's own uses load, as PROGRAM shows)."""
    if where == "decls":
        text = v1model(DECLS + code, PARSER, "apply { hdr.mpls[0].ttl = ttl_of(hdr.mpls); }",
                       headers="ethernet_t ethernet; mpls_t[3] mpls;")
    else:
        text = v1model(DECLS, PARSER, code, headers="ethernet_t ethernet; mpls_t[3] mpls;")
    with pytest.raises(ModelCompileError) as e:
        ModelSwitch(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1)
                if what in ln and ln.strip() in code)
    col = text.splitlines()[line - 1].index(what) + 1
    name = what.rsplit(".", 1)[1]
    kind = "'lastIndex'" if name == "lastIndex" else "'last' and 'next'"
    assert e.value.message.splitlines()[0] == (
        f"<string>:{line}:{col}: {what}: a header stack's {kind} can be used only in a parser "
        "(p4c refuses it in a control, an action or a function)")
    assert e.value.message.splitlines()[2] == " " * (3 + col) + "^" * len(what)
    stack = what.rsplit(".", 1)[0]
    assert e.value.hint.startswith(f"index the stack with a constant or a value: {stack}[0] … ")
