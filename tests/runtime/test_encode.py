"""Entries to P4Runtime and back: every match kind in every form a user or a manifest
writes it, the don't-care forms left out of the wire message as the specification
requires, canonical bytestrings, and what cannot be encoded refused before any write.

Each round trip goes through the model's P4Runtime server: the encoded entry is
written, read back, decoded, and must equal the entry's canonical form.
"""

from __future__ import annotations

import pytest
from finsy.proto import p4r
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

import sfclab
from sfclab.codegen import generate
from sfclab.codegen.entries import Exact, Lpm, Range, TableEntry, Ternary, make_entry
from sfclab.errors import CompileError, TargetError
from sfclab.runtime.encode import P4InfoIndex
from sfclab.targets.model import ModelTarget

from p4rt_rig import entity, update

ACTIONS = {"I.l2": ("I.fwd", {"port": 3}), "I.routes": ("I.fwd", {"port": 3}),
           "I.acl": ("I.acl_deny", {})}
PRIORITY = {"I.acl": 7}

#: (table, match as written, the FieldMatch kinds on the wire, the canonical match)
ROUND_TRIPS = {
    "exact": ("I.l2", {"hdr.ethernet.dst": "00:00:00:00:00:0c"},
              [("hdr.ethernet.dst", "exact")], (("hdr.ethernet.dst", Exact(12)),)),
    "exact, an int": ("I.l2", {"hdr.ethernet.dst": 0x0a0b}, [("hdr.ethernet.dst", "exact")],
                      (("hdr.ethernet.dst", Exact(0x0a0b)),)),
    "lpm /24": ("I.routes", {"hdr.ipv4.dst": "10.0.1.0/24"}, [("hdr.ipv4.dst", "lpm")],
                (("hdr.ipv4.dst", Lpm(0x0a000100, 24)),)),
    "lpm, a pair": ("I.routes", {"hdr.ipv4.dst": ("10.0.0.0", 8)}, [("hdr.ipv4.dst", "lpm")],
                    (("hdr.ipv4.dst", Lpm(0x0a000000, 8)),)),
    "lpm, a value alone: /32": ("I.routes", {"hdr.ipv4.dst": "10.0.1.7"},
                                [("hdr.ipv4.dst", "lpm")],
                                (("hdr.ipv4.dst", Lpm(0x0a000107, 32)),)),
    "lpm /0: omitted": ("I.routes", {"hdr.ipv4.dst": "0.0.0.0/0"}, [], ()),
    "lpm *: omitted": ("I.routes", {"hdr.ipv4.dst": "*"}, [], ()),
    "lpm left out": ("I.routes", {}, [], ()),
    "ternary": ("I.acl", {"hdr.ipv4.src": "10.0.0.0 &&& 255.0.0.0"},
                [("hdr.ipv4.src", "ternary")], (("hdr.ipv4.src", Ternary(0x0a000000,
                                                                        0xff000000)),)),
    "ternary, a value alone: every bit": ("I.acl", {"hdr.ipv4.src": "10.0.0.1"},
                                          [("hdr.ipv4.src", "ternary")],
                                          (("hdr.ipv4.src", Ternary(0x0a000001, 0xffffffff)),)),
    "ternary mask 0: omitted": ("I.acl", {"hdr.ipv4.src": "0 &&& 0"}, [], ()),
    "range": ("I.acl", {"hdr.ipv4.ttl": "10..20"}, [("hdr.ipv4.ttl", "range")],
              (("hdr.ipv4.ttl", Range(10, 20)),)),
    "range, a value alone: low = high": ("I.acl", {"hdr.ipv4.ttl": 64},
                                         [("hdr.ipv4.ttl", "range")],
                                         (("hdr.ipv4.ttl", Range(64, 64)),)),
    "range over the whole field: omitted": ("I.acl", {"hdr.ipv4.ttl": "0..255"}, [], ()),
    "optional": ("I.acl", {"hdr.ipv4.protocol": 6}, [("hdr.ipv4.protocol", "optional")],
                 (("hdr.ipv4.protocol", Exact(6)),)),
    "optional *: omitted": ("I.acl", {"hdr.ipv4.protocol": "*"}, [], ()),
    "every kind at once, in key order": (
        "I.acl", {"hdr.ipv4.protocol": 17, "hdr.ipv4.ttl": "1..9", "hdr.ipv4.src": "0 &&& 0"},
        [("hdr.ipv4.ttl", "range"), ("hdr.ipv4.protocol", "optional")],
        (("hdr.ipv4.ttl", Range(1, 9)), ("hdr.ipv4.protocol", Exact(17)))),
}


@pytest.fixture(scope="module")
def index(program_p4info):
    return P4InfoIndex(program_p4info)


def _entry(index, table, match):
    kinds = {k: kind for k, (kind, _) in index.fields(table).items()}
    action, params = ACTIONS[table]
    return make_entry(table, match, kinds, action, params, PRIORITY.get(table))


def _wire(index, te: p4r.TableEntry) -> list[tuple[str, str]]:
    names = {f.id: f.name for f in index.tables_by_id[te.table_id].match_fields}
    return [(names[fm.field_id], fm.WhichOneof("field_match_type")) for fm in te.match]


@pytest.mark.parametrize("case", list(ROUND_TRIPS))
def test_round_trip_through_the_switch(primary, index, case):
    table, written, wire, match = ROUND_TRIPS[case]
    e = _entry(index, table, written)
    te = index.table_entry(e)
    assert _wire(index, te) == wire
    assert index.decode(te).match == match
    primary.ok(update("INSERT", te))
    (back,) = primary.read(entity(p4r.TableEntry(table_id=te.table_id)))
    assert back.table_entry == te                              # read-write symmetry
    assert index.decode(back.table_entry) == index.canonical(e)
    primary.ok(update("DELETE", index.table_entry(e, with_action=False)))


def test_values_are_the_shortest_bytestrings(index):
    e = _entry(index, "I.acl", {"hdr.ipv4.src": "0.0.0.5 &&& 0.0.0.255", "hdr.ipv4.ttl": "0..9"})
    te = index.table_entry(e)
    assert [(fm.ternary.value, fm.ternary.mask) for fm in te.match[:1]] == [(b"\x05", b"\xff")]
    assert (te.match[1].range.low, te.match[1].range.high) == (b"\x00", b"\x09")
    assert te.action.action.params == [] and te.priority == 7


def test_a_hand_made_entry_drops_its_dont_care_matches():
    e = TableEntry("t", (("a", Lpm(0, 0)), ("b", Ternary(0, 0)), ("c", Exact(1))), "x")
    assert e.match == (("c", Exact(1)),)
    with pytest.raises(CompileError, match="bits set beyond its prefix"):
        TableEntry("t", (("a", Lpm(5, 0)),), "x")


BAD = {
    "bits beyond the prefix": ("I.routes", {"hdr.ipv4.dst": Lpm(0x0a000100, 8)},
                               "has bits set beyond the prefix"),
    "prefix longer than the field": ("I.routes", {"hdr.ipv4.dst": Lpm(0x0a000000, 33)},
                                     "prefix length 33 is not in 0..32"),
    "value wider than the field": ("I.l2", {"hdr.ethernet.dst": Exact(1 << 48)},
                                   "does not fit in 48 bits"),
    "ternary value outside its mask": ("I.acl", {"hdr.ipv4.src": Ternary(0x0a000001,
                                                                          0xff000000)},
                                       "has bits outside mask"),
    "empty range": ("I.acl", {"hdr.ipv4.ttl": Range(9, 3)}, "range 9..3 is empty"),
    "an exact field left out": ("I.l2", {}, "exact field 'hdr.ethernet.dst' needs a value"),
    "a field the table does not have": ("I.l2", {"hdr.ethernet.dst": Exact(1),
                                                 "hdr.ipv4.dst": Exact(1)},
                                        "has no match field 'hdr.ipv4.dst'"),
    "a wrong kind of match": ("I.acl", {"hdr.ipv4.ttl": Lpm(1, 8)},
                              "a range field cannot take the match"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_what_cannot_be_encoded_is_refused_before_it_is_sent(index, case):
    table, match, message = BAD[case]
    action, params = ACTIONS[table]
    e = TableEntry(table, tuple(match.items()), action, tuple(params.items()),
                   PRIORITY.get(table))
    with pytest.raises(TargetError) as info:
        index.table_entry(e)
    assert message in info.value.message and table in info.value.message


@pytest.mark.parametrize("match, message", [
    ({"hdr.ipv4.dst": "10.0.0.0/x"}, "prefix length 'x' is not a number"),
    ({"hdr.ipv4.dst": "10.0.0.300/8"}, "cannot read the value '10.0.0.300'"),
    ({"hdr.ipv4.dst": "10.0.0.5/0"}, "bits set beyond its prefix"),
    ({"hdr.ipv4.src": "10.0.0.0/8"}, "has no match field 'hdr.ipv4.src'"),
])
def test_values_that_cannot_be_read_are_refused_with_the_reason(match, message):
    with pytest.raises(CompileError) as info:
        make_entry("I.routes", match, {"hdr.ipv4.dst": "lpm"}, "I.fwd", {"port": 1})
    assert message in info.value.message


def test_an_exact_field_has_no_dont_care():
    with pytest.raises(CompileError, match="exact field has no don't-care"):
        make_entry("I.l2", {"hdr.ethernet.dst": "*"}, {"hdr.ethernet.dst": "exact"}, "I.fwd")


def test_an_action_parameter_wider_than_declared_is_refused(index):
    e = make_entry("I.l2", {"hdr.ethernet.dst": 1}, {"hdr.ethernet.dst": "exact"}, "I.fwd",
                   {"port": 512})
    with pytest.raises(TargetError, match="port=512 does not fit in 9 bits"):
        index.table_entry(e)


def test_a_manifest_may_write_a_dont_care_or_leave_an_lpm_key_out():
    """A user's NF manifest: ``"*"``, ``"0 &&& 0"`` or no value for a non-exact key all
    push as the omitted field, and the switch matches every packet there."""
    cat = sfclab.catalog.copy()
    cat.add_source("""control steer(inout headers_t hdr, inout sfc_meta_t sfc) {
        action to(port_t port) { sfc.egress_port = port; sfc.egress_valid = 1; }
        table by_dst { key = { hdr.ipv4.dst_addr : lpm; hdr.ipv4.protocol : ternary; }
                       actions = { to; NoAction; } default_action = NoAction(); size = 8; }
        apply { if (hdr.ipv4.isValid()) { by_dst.apply(); } }
    }""", manifest={"entries": [
        {"table": "by_dst", "match": {"hdr.ipv4.dst_addr": "*"}, "action": "to",
         "params": {"port": 4}, "priority": 1},
        {"table": "by_dst", "match": {"hdr.ipv4.dst_addr": "10.0.0.0/8",
                                      "hdr.ipv4.protocol": "0 &&& 0"},
         "action": "to", "params": {"port": 5}, "priority": 2},
        {"table": "by_dst", "match": {"hdr.ipv4.protocol": "17 &&& 0xff"}, "action": "to",
         "params": {"port": 6}, "priority": 3}]})
    gen = generate(sfclab.compile(sfclab.parse("chain s: steer", catalog=cat), catalog=cat))
    with ModelTarget() as t:
        assert t.push(gen) == 2 + 3
        back = sorted((e.priority, e.match) for e in t.session.read_entries()
                      if e.table.endswith("by_dst"))
        assert back == [(1, ()), (2, (("hdr.ipv4.dst_addr", Lpm(0x0a000000, 8)),)),
                        (3, (("hdr.ipv4.protocol", Ternary(17, 0xff)),))]
        def port(ip):
            return t.send(1, Ether() / ip / b"x").ports

        assert port(IP(dst="11.0.0.1") / TCP()) == [4]
        assert port(IP(dst="10.0.0.1") / TCP()) == [5]
        assert port(IP(dst="10.0.0.1") / UDP()) == [6]
