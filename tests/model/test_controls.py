"""Nested control instances (sfclab's NF slots), exit, return, locals, names."""

from __future__ import annotations

from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

DECLS = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct sfc_meta_t { bit<32> metadata; bit<1> drop; bit<9> port; }
struct meta_t { sfc_meta_t sfc; }

control firewall(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<8> seen = 0;
    action permit() { sfc.metadata = 0; }
    action deny() {
        sfc.metadata = 1;
        sfc.drop = 1;
        return;
        sfc.metadata = 99;
    }
    @name("rules")
    table acl {
        key = { hdr.ethernet.src : exact; }
        actions = { permit; deny; }
        default_action = permit();
    }
    apply {
        seen = seen + 1;
        acl.apply();
        hdr.ethernet.ether_type = hdr.ethernet.ether_type + (bit<16>) seen;
    }
}

control stopper(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply {
        if (hdr.ethernet.dst == 0xFF) { exit; }
        sfc.port = 3;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    firewall() slot0_firewall;
    firewall() slot1_firewall_2;
    stopper() slot2_stopper;
    apply {
        meta.sfc.port = 2;
        slot0_firewall.apply(hdr, meta.sfc);
        if (meta.sfc.metadata == 0) {
            slot1_firewall_2.apply(hdr, meta.sfc);
        }
        slot2_stopper.apply(hdr, meta.sfc);
        sm.egress_spec = meta.sfc.port;
        if (meta.sfc.drop == 1) { mark_to_drop(sm); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.ethernet.src = 0x5E; }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def eth(src=1, dst=2, et=0x1000):
    return Ether(src=src.to_bytes(6, "big"), dst=dst.to_bytes(6, "big"), type=et) / bytes(20)


def test_each_instance_has_its_own_qualified_tables_and_actions():
    sw = ModelSwitch(DECLS)
    assert sorted(sw.tables) == ["I.slot0_firewall.rules", "I.slot1_firewall_2.rules"]
    assert "I.slot1_firewall_2.deny" in sw.actions
    sw.insert("I.slot1_firewall_2.rules", [7], "I.slot1_firewall_2.deny")
    r = sw.process(1, eth(src=7))
    assert r.dropped
    assert r.trace.nfs() == ["firewall", "firewall#2", "stopper"]
    assert [(n, hit) for n, hit in r.trace.tables()] == [
        ("I.slot0_firewall.rules", False), ("I.slot1_firewall_2.rules", True)]


def test_locals_are_initialised_on_each_apply_and_return_ends_the_action():
    sw = ModelSwitch(DECLS)
    r = sw.process(1, eth(src=1))
    out = Ether(r.outputs[0][1])
    assert r.ports == [3] and out.type == 0x1002        # +1 by each firewall instance
    assert out.src == "00:00:00:00:00:5e"               # egress ran
    sw.insert("I.slot0_firewall.rules", [1], "I.slot0_firewall.deny")
    r = sw.process(1, eth(src=1))
    assert r.dropped                                    # deny's `return` kept metadata = 1
    assert r.trace.nfs() == ["firewall", "stopper"]


def test_exit_in_a_nested_control_ends_ingress_but_not_egress():
    sw = ModelSwitch(DECLS)
    r = sw.process(1, eth(src=1, dst=0xFF))
    assert r.ports == [0]                               # egress_spec never set after exit
    assert Ether(r.outputs[0][1]).src == "00:00:00:00:00:5e"
    assert any(e.kind == "note" and "exit" in e.value for e in r.trace.events)
