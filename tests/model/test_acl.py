"""Ternary and range keys: priorities as P4Runtime defines them (larger wins)."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sfclab.targets.model import EntryExistsError, InvalidValueError, ModelSwitch

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
header ports_t { bit<16> sport; bit<16> dport; }
"""

ACL = v1model(
    DECLS,
    """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) { 6: parse_ports; 17: parse_ports; default: accept; }
    }
    state parse_ports { pkt.extract(hdr.ports); transition accept; }
    """,
    """
    action allow(bit<9> port) { sm.egress_spec = port; }
    action deny() { mark_to_drop(sm); }
    table acl {
        key = {
            hdr.ipv4.src : ternary @name("src");
            hdr.ports.dport : range @name("dport");
            hdr.ipv4.protocol : optional;
        }
        actions = { allow; deny; }
        default_action = allow(1);
    }
    apply { acl.apply(); }
    """,
    headers="ethernet_t ethernet; ipv4_t ipv4; ports_t ports;")


def pkt(src="10.0.0.1", dport=80):
    return Ether() / IP(src=src, dst="1.1.1.1") / TCP(sport=999, dport=dport)


@pytest.fixture
def sw():
    return ModelSwitch(ACL)


def test_higher_priority_wins_whatever_the_insertion_order(sw):
    sw.insert("I.acl", {"src": ("10.0.0.0", "255.0.0.0")}, "I.allow", [2], priority=10)
    sw.insert("I.acl", {"src": ("10.0.0.0", "255.255.255.0")}, "I.allow", [3], priority=20)
    sw.insert("I.acl", {"src": ("10.0.0.0", "255.255.0.0")}, "I.deny", priority=5)
    assert sw.process(1, pkt("10.0.0.1")).ports == [3]
    assert sw.process(1, pkt("10.0.9.1")).ports == [2]        # /16 deny has a lower priority
    assert sw.process(1, pkt("11.0.0.1")).ports == [1]        # miss: default allow(1)
    assert [e.priority for e in sw.entries("I.acl")] == [20, 10, 5]
    hit = next(e for e in sw.process(1, pkt("10.0.0.1")).trace.events if e.kind == "table_hit")
    assert hit.entry == "src=0x0a000000&&&0xffffff00 priority=20"


def test_range_and_optional_keys(sw):
    sw.insert("I.acl", {"dport": (1000, 2000), "hdr.ipv4.protocol": 6}, "I.deny", priority=1)
    sw.insert("I.acl", {"dport": 443}, "I.allow", [4], priority=2)
    assert sw.process(1, pkt(dport=1000)).dropped
    assert sw.process(1, pkt(dport=2000)).dropped
    assert sw.process(1, pkt(dport=2001)).ports == [1]
    assert sw.process(1, pkt(dport=443)).ports == [4]
    udp = Ether() / IP(src="10.0.0.1") / TCP(dport=1500)
    udp[IP].proto = 17
    assert sw.process(1, udp).ports == [1]                   # optional protocol 6 does not match


def test_same_key_with_another_priority_is_another_entry(sw):
    sw.insert("I.acl", {"src": ("10.0.0.0", "255.0.0.0")}, "I.allow", [2], priority=10)
    sw.insert("I.acl", {"src": ("10.0.0.0", "255.0.0.0")}, "I.allow", [3], priority=11)
    with pytest.raises(EntryExistsError):
        sw.insert("I.acl", {"src": ("10.0.0.0", "255.0.0.0")}, "I.deny", priority=11)
    assert sw.process(1, pkt()).ports == [3]
    sw.delete("I.acl", {"src": ("10.0.0.0", "255.0.0.0")}, priority=11)
    assert sw.process(1, pkt()).ports == [2]


def test_priority_and_masks_are_checked(sw):
    with pytest.raises(InvalidValueError, match="needs a priority"):
        sw.insert("I.acl", {"src": 1}, "I.deny")
    with pytest.raises(InvalidValueError, match="bits outside mask"):
        sw.insert("I.acl", {"src": ("10.0.0.1", "255.0.0.0")}, "I.deny", priority=1)
    with pytest.raises(InvalidValueError, match="range 9..3 is empty"):
        sw.insert("I.acl", {"dport": (9, 3)}, "I.deny", priority=1)


def test_const_entries_priority_follows_source_order():
    sw = ModelSwitch(v1model(
        DECLS, "state start { pkt.extract(hdr.ethernet); transition accept; }",
        """
        action to(bit<9> port) { sm.egress_spec = port; }
        table t {
            key = { hdr.ethernet.ether_type : ternary; hdr.ethernet.dst : range; }
            actions = { to; }
            const entries = {
                (0x0800 &&& 0xFF00, 0 .. 3) : to(1);
                (0x0806, 0 .. 10) : to(2);
                (_, _) : to(3);
            }
        }
        apply { t.apply(); }
        """, headers="ethernet_t ethernet;"))
    assert sw.process(0, Ether(dst="00:00:00:00:00:02", type=0x0806) / bytes(30)).ports == [1]
    assert sw.process(0, Ether(dst="00:00:00:00:00:05", type=0x0806) / bytes(30)).ports == [2]
    assert sw.process(0, Ether(dst="00:00:00:00:00:0b", type=0x0806) / bytes(30)).ports == [3]
    assert [e.priority for e in sw.entries("I.t")] == [3, 2, 1]
