"""The class solver: which packets reach a chain, by exact reasoning, checked against
brute force over small field widths."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sfclab
from sfclab.ir.classifier import Classifier, FieldMatch
from sfclab.ir.solve import ValueSet, parse_closure, reachable, regions, solve

# the headers a program parses when its classifiers test VLAN, IPv4 and the transports
PARSED = parse_closure({"vlan", "ipv4", "tcp", "udp"})


def classes(text: str) -> dict[str, tuple[Classifier | None, list]]:
    """Each chain's classifier and those of the chains before it."""
    cs = list(sfclab.parse(text))
    return {c.name: (c.match, [e.match for e in cs[:k]]) for k, c in enumerate(cs)}


def in_class(witness: dict[str, int], match, earlier) -> bool:
    return (match is None or match.matches(witness)) and not any(
        e is None or e.matches(witness) for e in earlier)


HELD_OUT = """
chain a match ipv4.src == 10.0.0.0/8: l2fwd
chain b match ipv4.dst == 10.0.0.0/8: l2fwd
chain mgmt match vlan.vid == 4000: l2fwd
chain dns match udp.dport == 53: l2fwd
"""


# --- value sets -------------------------------------------------------------------------------

@given(st.integers(0, 255), st.integers(0, 255))
def test_a_range_cover_is_exactly_the_range(a, b):
    lo, hi = min(a, b), max(a, b)
    s = ValueSet.of_range(8, lo, hi)
    assert {x for x in range(256) if x in s} == set(range(lo, hi + 1))
    assert s.size() == hi - lo + 1


cube = st.tuples(st.integers(0, 63), st.integers(0, 63)).map(lambda t: (t[0] & t[1], t[1]))


def _union(cs) -> ValueSet:
    out = ValueSet(6, ())
    for c in cs:
        out = ValueSet(6, out.cubes + (ValueSet(6, (c,)) - out).cubes)
    return out


cubeset = st.lists(cube, max_size=4).map(_union)


def members(s: ValueSet) -> set[int]:
    return {x for x in range(64) if x in s}


@given(cubeset, cubeset)
def test_intersection_and_difference_are_exact_and_disjoint(a, b):
    assert members(a & b) == members(a) & members(b)
    assert members(a - b) == members(a) - members(b)
    for s in (a & b, a - b):
        assert s.size() == len(members(s))          # cubes do not overlap
    if a:
        assert members(a) >= {a.nearest(x) for x in range(64)}


def test_a_set_prints_as_merged_ranges():
    s = ValueSet.full(32) - ValueSet.of_range(32, 0x0A000000, 0x0AFFFFFF)
    assert s.describe("ipv4.dst") == "{0.0.0.0..9.255.255.255, 11.0.0.0..255.255.255.255}"


# --- the held-out chain sets ------------------------------------------------------------------

def test_a_vlan_class_after_two_ipv4_prefixes_is_reachable_with_and_without_ipv4():
    match, before = classes(HELD_OUT)["mgmt"]
    found = list(regions(match, before, parsed=PARSED))
    shapes = {r.headers for r in found}
    assert ("vlan", "ipv4", "tcp") in shapes and ("vlan",) in shapes
    for r in found:
        w = r.witness({"ipv4.src": 0x0A000001, "ipv4.dst": 0x0A000002})
        assert in_class(w, match, before), (r, w)
        if "ipv4" in r.headers:       # the preferred 10/8 addresses were moved out of 10/8
            assert w["ipv4.src"] >> 24 != 10 and w["ipv4.dst"] >> 24 != 10


def test_a_port_class_after_two_prefixes_gets_addresses_outside_them():
    match, before = classes(HELD_OUT)["dns"]
    r = solve(match, before, parsed=PARSED)
    w = r.witness()
    assert r.headers == ("ipv4", "udp") and w["udp.dport"] == 53
    assert in_class(w, match, before)
    # the VLAN class before it takes VLAN 4000: a tagged DNS packet uses another VLAN
    tagged = [x for x in regions(match, before, parsed=PARSED) if "vlan" in x.headers]
    assert tagged and all(4000 not in x.domain("vlan.vid") for x in tagged)


@pytest.mark.parametrize("text, chain, parsed, expect", [
    # shadowed: a narrower prefix after a wider one
    ("chain a match ipv4.dst == 10.0.0.0/8: l2fwd\n"
     "chain x match ipv4.dst == 10.1.0.0/16: l2fwd", "x", PARSED, False),
    # partly shadowed: the wider prefix after the narrower one
    ("chain x match ipv4.dst == 10.1.0.0/16: l2fwd\n"
     "chain a match ipv4.dst == 10.0.0.0/8: l2fwd", "a", PARSED, True),
    # ports vs protocol: every IPv4 TCP packet is taken; IPv6 is not parsed here
    ("chain t match ipv4.proto == 6: l2fwd\nchain w match tcp.dport == 80: l2fwd", "w",
     PARSED, False),
    # ... but where the program parses IPv6, TCP over IPv6 reaches w
    ("chain t match ipv4.proto == 6: l2fwd\nchain w match tcp.dport == 80: l2fwd", "w",
     parse_closure({"ipv4", "ipv6", "tcp"}), True),
    # ports vs prefixes are disjoint in the other direction
    ("chain p match tcp.dport == 80: l2fwd\nchain q match ipv4.dst == 10.0.0.0/8: l2fwd", "q",
     PARSED, True),
    # a non-IP class: an EtherType no earlier IPv4 chain can test
    ("chain a match ipv4.src == 10.0.0.0/8: l2fwd\nchain l match eth.type == 0x88cc: l2fwd",
     "l", PARSED, True),
    # IPv4 packets all taken by two protocol chains and the rest
    ("chain t match ipv4.proto == 6: l2fwd\nchain u match ipv4.proto != 6: l2fwd\n"
     "chain e match eth.type == 0x0800: l2fwd", "e", PARSED, False),
    # != : the class of `dscp != 5` after `dscp != 6` is dscp == 6
    ("chain a match ipv4.dscp != 6: l2fwd\nchain b match ipv4.dscp != 5: l2fwd", "b",
     PARSED, True),
    # ranges: a port inside an earlier range
    ("chain a match std.ingress_port == 0..7: l2fwd\nchain b match std.ingress_port == 3: l2fwd",
     "b", PARSED, False),
    ("chain a match std.ingress_port == 0..7: l2fwd\nchain b match std.ingress_port == 8: l2fwd",
     "b", PARSED, True),
    # masks: every x.y.z.0 in 10/8 is taken by 10/8; in 10/9 only half of them
    ("chain a match ipv4.dst == 10.0.0.0/8: l2fwd\n"
     "chain m match ipv4.dst == 10.0.0.0 &&& 255.0.0.255: l2fwd", "m", PARSED, False),
    ("chain a match ipv4.dst == 10.0.0.0/9: l2fwd\n"
     "chain m match ipv4.dst == 10.0.0.0 &&& 255.0.0.255: l2fwd", "m", PARSED, True),
    # a chain without match takes everything after it
    ("chain all: l2fwd\nchain w match tcp.dport == 80: l2fwd", "w", None, False),
    # a chain without match after chains with one gets what they leave
    ("chain w match tcp.dport == 80: l2fwd\nchain all: l2fwd", "all", PARSED, True),
    # contradictory terms: no packet at all
    ("chain c match tcp.dport == 80 && tcp.dport == 81: l2fwd", "c", PARSED, False),
])
def test_reachability(text, chain, parsed, expect):
    match, before = classes(text)[chain]
    assert reachable(match, before, parsed=parsed) is expect
    r = solve(match, before, parsed=parsed)
    assert (r is not None) is expect
    if r is not None:
        assert in_class(r.witness(), match, before)


def test_an_unknown_program_is_assumed_to_parse_any_header():
    """With the parser unknown, "unreachable" is only said when no parser could help:
    TCP over IPv6 escapes an IPv4 protocol chain if IPv6 is parsed."""
    match, before = classes("chain t match ipv4.proto == 6: l2fwd\n"
                            "chain w match tcp.dport == 80: l2fwd")["w"]
    assert reachable(match, before) is True
    assert reachable(match, before, parsed=PARSED) is False


def test_the_parser_model_agrees_with_the_composer():
    from sfclab.codegen.compose import _closure
    for used in itertools.combinations(["vlan", "ipv4", "ipv6", "tcp", "udp", "vxlan", "mpls"], 2):
        assert parse_closure(used) == set(_closure(set(used)))


def test_the_parser_model_is_the_composed_parser():
    """PARSE's EtherTypes and protocol numbers are the constants the composed parser
    selects on, state by state."""
    import re

    from sfclab.codegen import generate
    from sfclab.ir.solve import PARSE
    from sfclab.p4 import ast as A
    from sfclab.p4.parser import library_dir, parse_p4_file

    prog = parse_p4_file(library_dir() / "include" / "sfc_headers.p4")
    consts = {d.name: d.value.value for d in prog.find(A.ConstDecl)}
    text = generate(sfclab.compile(
        "chain a match vlan.vid == 1 && udp.dport == 53: sr_encap\n"
        "chain b match ipv6.src == ::1 && vxlan.vni == 5: l2fwd")).program.text
    checked = 0
    for h, (_, kids) in PARSE.items():
        state = re.search(rf"state parse_{h} {{(.*?)\n    }}", text, re.S)
        for kid, values in kids.items():
            case = state and re.search(rf"(\w+) : parse_{kid};", state.group(1))
            if values and case:
                assert consts[case.group(1)] in values, (h, kid, case.group(1))
                checked += 1
    assert checked >= 10, checked


# --- property: every witness is in the class; "unreachable" only when brute force agrees -----

SMALL = {"vlan.pcp": 3, "vlan.vid": 3, "ipv4.src": 3, "ipv4.dscp": 3, "ipv6.src": 2,
         "tcp.sport": 3, "udp.sport": 3, "std.ingress_port": 3}
SMALL_PARSED = parse_closure({"vlan", "ipv4", "ipv6", "tcp", "udp"})


@st.composite
def terms(draw):
    f = draw(st.sampled_from(sorted(SMALL)))
    top = (1 << SMALL[f]) - 1
    kind = draw(st.sampled_from(["exact", "ternary", "range"]))
    neg = draw(st.booleans())
    if kind == "range":
        a, b = sorted([draw(st.integers(0, top)), draw(st.integers(0, top))])
        return FieldMatch(f, "range", a, high=b, negate=neg)
    v = draw(st.integers(0, top))
    if kind == "ternary":
        m = draw(st.integers(0, top))
        return FieldMatch(f, "ternary", v & m, mask=m, negate=neg)
    return FieldMatch(f, "exact", v, negate=neg)


classifier = st.one_of(st.none(), st.lists(terms(), min_size=1, max_size=2).map(
    lambda ts: Classifier(tuple(ts))))


def packets(fields: set[str]):
    """Every packet the parser of SMALL_PARSED can see, over the given fields."""
    from sfclab.ir.solve import header_of

    for vlan, l3 in itertools.product((False, True), (None, "ipv4", "ipv6")):
        for l4 in ((None,) if l3 is None else (None, "tcp", "udp")):
            valid = {"", "ethernet", *(["vlan"] if vlan else []), l3, l4} - {None}
            have = sorted(f for f in fields if header_of(f) in valid)
            for vals in itertools.product(*(range(1 << SMALL[f]) for f in have)):
                yield dict(zip(have, vals))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classifier, st.lists(classifier, max_size=3))
def test_witnesses_are_in_the_class_and_unreachable_is_only_said_when_true(match, earlier):
    got = reachable(match, earlier, parsed=SMALL_PARSED, widths=SMALL)
    fields = {t.field for c in (match, *earlier) if c for t in c.terms}
    brute = any(in_class(p, match, earlier) for p in packets(fields))
    assert got is brute
    for r in itertools.islice(regions(match, earlier, parsed=SMALL_PARSED, widths=SMALL), 20):
        w = r.witness()
        assert in_class(w, match, earlier), (str(r), w)
        assert all(0 <= w[f] < 1 << SMALL[f] for f in w if f in SMALL)


def test_a_warning_names_the_fewest_chains_that_cover_the_class():
    from sfclab.ir.validate import shadowed

    cs = sfclab.parse("chain lo match ipv4.dst == 10.0.0.0/9: l3fwd\n"
                      "chain dns match udp.dport == 53: l3fwd\n"
                      "chain hi match ipv4.dst == 10.128.0.0/9: l3fwd\n"
                      "chain all10 match ipv4.dst == 10.0.0.0/8: l3fwd\n"
                      "chain web match ipv4.dst == 10.1.0.0/16 && tcp.dport == 80: l3fwd\n")
    ws = shadowed(cs, parsed=PARSED)
    assert [w.message.split("'")[1] for w in ws] == ["all10", "web"]
    assert "taken by 'lo' (ipv4.dst == 10.0.0.0/9) and 'hi' (ipv4.dst == 10.128.0.0/9)" in \
        ws[0].message
    assert "taken by 'lo' (ipv4.dst == 10.0.0.0/9), written before it" in ws[1].message
    assert ws[0].line == 4 and ws[0].column == 7 and ws[0].width == len("all10")
