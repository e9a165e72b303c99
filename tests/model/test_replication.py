"""Multicast groups, clone sessions and the CPU port (packet-in / packet-out)."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from sfclab.targets.model import InvalidValueError, ModelSwitch, UnknownNameError

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header info_t { bit<16> rid; bit<8> itype; bit<16> port; bit<16> len; }
"""

MCAST = v1model(DECLS, "state start { pkt.extract(hdr.ethernet); transition accept; }", """
    action flood(bit<16> grp) { sm.mcast_grp = grp; }
    action flood_then_drop(bit<16> grp) { sm.mcast_grp = grp; mark_to_drop(sm); }
    table t {
        key = { hdr.ethernet.dst : exact; }
        actions = { flood; flood_then_drop; }
        default_action = flood(1);
    }
    apply { t.apply(); }
    """, egress="""
    apply {
        hdr.info.setValid();
        hdr.info.rid = sm.egress_rid;
        hdr.info.itype = (bit<8>) sm.instance_type;
        hdr.info.port = (bit<16>) sm.egress_port;
        hdr.info.len = (bit<16>) sm.packet_length;
    }""", headers="ethernet_t ethernet; info_t info;")

PKT = Ether(dst="ff:ff:ff:ff:ff:ff", src="00:00:00:00:00:01") / IP() / UDP() / b"x"


def info(rid, itype, port, length) -> bytes:
    return rid.to_bytes(2, "big") + bytes([itype]) + port.to_bytes(2, "big") + length.to_bytes(2, "big")


def test_one_copy_per_replica_with_egress_rid_and_instance_type_5():
    sw = ModelSwitch(MCAST)
    sw.set_multicast_group(1, [(1, 10), (2, 20), 3])
    r = sw.process(4, PKT)
    eth, rest = bytes(PKT)[:14], bytes(PKT)[14:]
    n = len(bytes(PKT))             # packet_length: headers added in egress do not count yet
    assert r.outputs == [(1, eth + info(10, 5, 1, n) + rest), (2, eth + info(20, 5, 2, n) + rest),
                         (3, eth + info(0, 5, 3, n) + rest)]
    assert [e.value for e in r.trace.events if e.kind == "packet_out"] == [1, 2, 3]
    assert r.trace.egress_port == 1


def test_unconfigured_or_empty_group_drops():
    sw = ModelSwitch(MCAST)
    r = sw.process(4, PKT)
    assert r.dropped and r.trace.drop_reason == "multicast group 1 is not configured"
    sw.set_multicast_group(1, [])
    assert sw.process(4, PKT).trace.drop_reason == "multicast group 1 has no replicas"


def test_mark_to_drop_clears_mcast_grp():
    sw = ModelSwitch(MCAST)
    sw.set_multicast_group(1, [1, 2])
    sw.set_default("I.t", "I.flood_then_drop", [1])
    r = sw.process(4, PKT)
    assert r.dropped and r.trace.drop_reason == "mark_to_drop() in action I.flood_then_drop"


def test_group_ids_and_ports_are_checked():
    sw = ModelSwitch(MCAST)
    with pytest.raises(InvalidValueError):
        sw.set_multicast_group(0, [1])
    with pytest.raises(InvalidValueError, match="does not fit in 9 bits"):
        sw.set_multicast_group(2, [600])


CLONE = v1model(DECLS, "state start { pkt.extract(hdr.ethernet); transition accept; }", """
    apply {
        clone_preserving_field_list(CloneType.I2E, 5, 1);
        meta.tag = 0x42;
        hdr.ethernet.src = 0xEEEEEEEEEEEE;
        sm.egress_spec = 2;
    }""", egress="""
    apply {
        hdr.info.setValid();
        hdr.info.itype = (bit<8>) sm.instance_type;
        hdr.info.port = (bit<16>) sm.egress_port;
        hdr.info.rid = (bit<16>) meta.tag;
    }""", headers="ethernet_t ethernet; info_t info;", meta="@field_list(1) bit<8> tag;")


def test_ingress_clone_is_the_packet_as_it_entered_with_its_field_list():
    sw = ModelSwitch(CLONE)
    assert sw.process(1, PKT).ports == [2]            # no session: no clone
    sw.set_clone_session(5, [7])
    r = sw.process(1, PKT)
    eth, rest = bytes(PKT)[:14], bytes(PKT)[14:]
    mod = bytes(PKT)[:6] + b"\xee" * 6 + bytes(PKT)[12:14]
    assert r.outputs == [(7, eth + info(0x42, 1, 7, 0) + rest), (2, mod + info(0x42, 0, 2, 0) + rest)]
    assert any(e.kind == "clone" for e in r.trace.events)


CPU = v1model(DECLS + """
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> pad; }
@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> pad; }
""", """
    state start {
        transition select(sm.ingress_port) { 255: parse_out; default: parse_ethernet; }
    }
    state parse_out { pkt.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet { pkt.extract(hdr.ethernet); transition accept; }
""", """
    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            sm.egress_spec = 255;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
        }
    }""", headers="packet_out_t packet_out; packet_in_t packet_in; ethernet_t ethernet;",
    deparser="apply { pkt.emit(hdr.packet_in); pkt.emit(hdr.ethernet); }")


def test_packet_in_to_the_cpu_port_is_decoded():
    sw = ModelSwitch(CPU)
    r = sw.process(3, PKT)
    assert r.ports == [255]
    [pin] = r.packet_ins
    assert pin.metadata == {"ingress_port": 3, "pad": 0} and pin.payload == bytes(PKT)


def test_packet_out_enters_on_the_cpu_port_with_its_header():
    sw = ModelSwitch(CPU)
    r = sw.packet_out(PKT, egress_port=4)
    assert r.outputs == [(4, bytes(PKT))] and r.trace.ingress_port == 255
    with pytest.raises(UnknownNameError, match="no field 'port'"):
        sw.packet_out(PKT, port=4)


def test_cpu_port_is_configurable():
    sw = ModelSwitch(CPU, cpu_port=64)
    r = sw.process(3, PKT)            # the program still sends to 255: an ordinary port now
    assert r.ports == [255] and r.packet_ins == []


E2E = v1model(DECLS, "state start { pkt.extract(hdr.ethernet); transition accept; }", """
    apply { sm.egress_spec = 2; }""", egress="""
    apply {
        if (sm.instance_type == 0) {
            clone(CloneType.E2E, 9);
            truncate(16);
        }
        hdr.info.setValid();
        hdr.info.itype = (bit<8>) sm.instance_type;
        hdr.info.port = (bit<16>) sm.egress_port;
    }""", headers="ethernet_t ethernet; info_t info;")


def test_egress_clone_and_truncate():
    sw = ModelSwitch(E2E)
    sw.set_clone_session(9, [6])
    r = sw.process(1, PKT)
    eth = bytes(PKT)[:14]
    # the original is cut to 16 bytes; the egress clone starts egress again with the
    # headers as egress left them (info already valid) and instance type 2
    out = dict(r.outputs)
    assert out == {6: eth + info(0, 2, 6, 0) + bytes(PKT)[14:], 2: (eth + info(0, 0, 2, 0))[:16]}
