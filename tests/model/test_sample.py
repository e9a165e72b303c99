"""The sample program tests/fixtures/p4/v1model_sample.p4 on the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sfclab.p4 import parse_p4_file
from sfclab.targets.model import ModelSwitch

SAMPLE = Path(__file__).parents[1] / "fixtures" / "p4" / "v1model_sample.p4"


@pytest.fixture(scope="module")
def prog():
    return parse_p4_file(SAMPLE)


def pkt(src: str, ttl: int = 64):
    return (Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01")
            / IP(src=src, dst="10.0.0.9", ttl=ttl) / TCP(sport=1, dport=2))


def test_names_are_p4runtimes(prog):
    sw = ModelSwitch(prog)
    assert sorted(sw.tables) == ["SfcIngress.initializer", "SfcIngress.slot0_firewall_acl"]
    assert sorted(sw.externs) == ["SfcIngress.acl_hits", "SfcIngress.flow_packets"]
    info = sw.table_info("SfcIngress.initializer")
    assert info["keys"] == [("ipv4.dst", "lpm", 32), ("hdr.ipv4.protocol", "ternary", 8),
                            ("standard_metadata.ingress_port", "range", 9)]
    assert info["default_const"] and info["default"] == ("NoAction", {})


def test_const_entry_denies_10_8_with_a_digest(prog):
    sw = ModelSwitch(prog)
    r = sw.process(1, pkt("10.1.2.3"))
    assert r.dropped and r.trace.drop_reason == "mark_to_drop() in action SfcIngress.drop"
    assert [d.data for d in r.digests] == [{"mac": 1, "port": 1}]
    hit = [e for e in r.trace.events if e.kind == "table_hit"]
    assert hit[0].name == "SfcIngress.slot0_firewall_acl" and "priority=10" in hit[0].entry


def test_permitted_packet_gets_an_mpls_label_and_a_new_ttl(prog):
    sw = ModelSwitch(prog)
    r = sw.process(1, pkt("192.168.1.1"))
    # egress_spec is never set: BMv2 sends the packet to port 0
    exp_ip = pkt("192.168.1.1")[IP].copy()
    exp_ip.ttl = 63
    del exp_ip.chksum
    eth = bytes(pkt("192.168.1.1"))[:14]
    assert r.outputs == [(0, eth + bytes(4) + bytes(exp_ip))]
    assert sw.read_register("SfcIngress.flow_packets", 7) == 1
    sw.process(1, pkt("192.168.1.1"))
    assert sw.read_register("SfcIngress.flow_packets", 7) == 2
    counts = {tuple(e.match.values())[1]: e.packets for e in sw.entries("slot0_firewall_acl")}
    assert counts == {10: 0, 192: 2}


def test_initializer_sets_the_sfc_token(prog):
    sw = ModelSwitch(prog)
    sw.insert("SfcIngress.initializer",
              {"ipv4.dst": ("10.0.0.0", 24), "hdr.ipv4.protocol": (6, 0xFF),
               "standard_metadata.ingress_port": (0, 7)},
              "SfcIngress.set_token", {"path_id": 5, "bitmap": 1}, priority=1)
    r = sw.process(1, pkt("192.168.1.1"))
    out = r.outputs[0][1]
    assert out[12:14] == b"\x88\xb5"                       # ether_type = ETHERTYPE_SFC
    assert out[14:16] == b"\x00\x05"                       # sfc.path_id
    acts = [e.name for e in r.trace.events if e.kind == "action"]
    assert acts[0] == "SfcIngress.set_token"
    # with bitmap bit 0 set, the switch on action_run ran permit's (default) case
    assert "SfcIngress.permit" in acts
