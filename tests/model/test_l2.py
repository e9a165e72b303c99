"""L2 forwarding on an exact table, and the table API's checks and errors."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.errors import TargetError
from sfclab.targets.model import (EntryExistsError, EntryNotFoundError, InvalidValueError,
                                  ModelSwitch, ReadOnlyError, TableFullError, UnknownNameError)

from .conftest import ETH_IPV4, v1model

L2 = v1model(
    ETH_IPV4,
    "state start { pkt.extract(hdr.ethernet); transition accept; }",
    """
    action forward(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table dmac {
        key = { hdr.ethernet.dst : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 4;
    }
    apply { dmac.apply(); }
    """)

MAC2 = 0x000000000002


@pytest.fixture
def sw() -> ModelSwitch:
    s = ModelSwitch(L2)
    s.insert("I.dmac", [MAC2], "I.forward", [2])
    return s


def pkt(dst="00:00:00:00:00:02"):
    return Ether(dst=dst, src="00:00:00:00:00:01") / IP(dst="10.0.0.2") / UDP() / b"hello"


def test_forwards_unchanged_bytes_to_the_entrys_port(sw):
    r = sw.process(1, pkt())
    assert r.outputs == [(2, bytes(pkt()))]
    t = r.trace
    assert t.egress_port == 2 and not t.dropped and t.passes == 1
    assert t.tables() == [("I.dmac", True)]
    hit = next(e for e in t.events if e.kind == "table_hit")
    assert hit.entry == "hdr.ethernet.dst=0x000000000002"
    act = next(e for e in t.events if e.kind == "action")
    assert (act.name, act.args) == ("I.forward", (("port", 2),))
    kinds = [e.kind for e in t.events]
    assert kinds[:4] == ["packet_in", "parser_start", "parser_state", "extract"]
    assert kinds[-2:] == ["deparser_done", "packet_out"]


def test_miss_runs_the_default_action_and_drops(sw):
    r = sw.process(1, pkt("00:00:00:00:00:09"))
    assert r.outputs == [] and r.dropped
    assert r.trace.drop_reason == "mark_to_drop() in action I.drop"
    assert ("I.dmac", False) in r.trace.tables()
    assert "dropped: mark_to_drop() in action I.drop" in r.trace.text()


def test_modify_delete_and_default_action(sw):
    sw.modify("I.dmac", [MAC2], "I.forward", {"port": 3})
    assert sw.process(1, pkt()).ports == [3]
    sw.set_default("I.dmac", "I.forward", [7])
    assert sw.process(1, pkt("00:00:00:00:00:09")).ports == [7]
    sw.reset_default("I.dmac")
    assert sw.process(1, pkt("00:00:00:00:00:09")).dropped
    sw.delete("I.dmac", [MAC2])
    assert sw.entries("I.dmac") == []


def test_entries_read_back_with_names_and_values(sw):
    [e] = sw.entries("I.dmac")
    assert (e.table, e.match, e.action, e.params, e.priority) == \
        ("I.dmac", {"hdr.ethernet.dst": MAC2}, "I.forward", {"port": 2}, 0)
    info = sw.table_info("dmac")
    assert info["keys"] == [("hdr.ethernet.dst", "exact", 48)]
    assert info["default"] == ("I.drop", {})
    assert info["size"] == 4


def test_values_may_be_text_or_bytes_and_names_a_unique_suffix(sw):
    sw.insert("dmac", {"hdr.ethernet.dst": "00:00:00:00:00:05"}, "forward", {"port": "0x5"})
    sw.insert("I.dmac", [bytes.fromhex("000000000006")], "I.forward", [6])
    assert sw.process(1, pkt("00:00:00:00:00:05")).ports == [5]
    assert sw.process(1, pkt("00:00:00:00:00:06")).ports == [6]


def test_duplicate_insert_is_refused(sw):
    with pytest.raises(EntryExistsError, match="already has an entry"):
        sw.insert("I.dmac", [MAC2], "I.forward", [3])


def test_missing_entry_modify_and_delete_are_refused(sw):
    with pytest.raises(EntryNotFoundError):
        sw.delete("I.dmac", [0x99])
    with pytest.raises(EntryNotFoundError):
        sw.modify("I.dmac", [0x99], "I.forward", [1])


def test_full_table_is_refused(sw):
    for mac in (3, 4, 5):
        sw.insert("I.dmac", [mac], "I.drop")
    with pytest.raises(TableFullError, match="full .4 entries"):
        sw.insert("I.dmac", [6], "I.drop")


def test_names_parameters_and_widths_are_checked(sw):
    with pytest.raises(UnknownNameError, match=r"table I.dmac has no action 'fwd'; its actions: "
                                                r"I.drop, I.forward"):
        sw.insert("I.dmac", [7], "fwd", [1])
    with pytest.raises(UnknownNameError, match="no table named 'dmak'"):
        sw.insert("dmak", [7], "I.forward", [1])
    with pytest.raises(InvalidValueError, match=r"takes 1 parameter\(s\) \(port: bit<9>\), got 2"):
        sw.insert("I.dmac", [7], "I.forward", [1, 2])
    with pytest.raises(InvalidValueError, match="does not fit in 9 bits"):
        sw.insert("I.dmac", [7], "I.forward", [512])
    with pytest.raises(InvalidValueError, match="does not fit in 48 bits"):
        sw.insert("I.dmac", [1 << 48], "I.forward", [1])
    with pytest.raises(UnknownNameError, match="no match field 'dst'"):
        sw.insert("I.dmac", {"dst": 7}, "I.forward", [1])
    with pytest.raises(UnknownNameError, match="has no parameter 'prt'"):
        sw.insert("I.dmac", [7], "I.forward", {"prt": 1})
    with pytest.raises(InvalidValueError, match="take no priority"):
        sw.insert("I.dmac", [7], "I.forward", [1], priority=5)
    with pytest.raises(InvalidValueError, match="has 1 key"):
        sw.insert("I.dmac", [7, 8], "I.forward", [1])
    assert all(issubclass(c, TargetError) for c in (
        EntryExistsError, EntryNotFoundError, TableFullError, UnknownNameError,
        InvalidValueError, ReadOnlyError))


def test_unset_egress_spec_sends_to_port_0_as_bmv2_does():
    sw = ModelSwitch(v1model(ETH_IPV4, "state start { pkt.extract(hdr.ethernet); transition accept; }",
                             "apply { }"))
    assert sw.process(3, pkt()).outputs == [(0, bytes(pkt()))]


def test_const_entries_and_const_default_are_read_only():
    sw = ModelSwitch(v1model(
        ETH_IPV4, "state start { pkt.extract(hdr.ethernet); transition accept; }",
        """
        action forward(bit<9> port) { sm.egress_spec = port; }
        table t {
            key = { hdr.ethernet.ether_type : exact; }
            actions = { forward; }
            const default_action = forward(9);
            const entries = { 0x0800 : forward(4); 0x86DD : forward(6); }
        }
        apply { t.apply(); }
        """))
    assert sw.process(1, pkt()).ports == [4]
    assert sw.process(1, Ether(type=0x1234) / (b"x" * 20)).ports == [9]
    assert [e.const for e in sw.entries("I.t")] == [True, True]
    with pytest.raises(ReadOnlyError, match="const entries"):
        sw.insert("I.t", [0x0806], "I.forward", [1])
    with pytest.raises(ReadOnlyError, match="const default action"):
        sw.set_default("I.t", "I.forward", [1])
