"""NFs of sfclab's library (p4/nf/*.p4) composed into a v1model program by hand,
the way the composed program instantiates them: includes, slots, the SFC header."""

from __future__ import annotations

from scapy.contrib.mpls import MPLS
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

COMPOSED = """
#include <core.p4>
#include <v1model.p4>
#include "nf/firewall.p4"
#include "nf/router.p4"
#include "nf/sr_encap.p4"

struct meta_t { sfc_meta_t sfc; }

parser SfcParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_MPLS: parse_mpls;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) { 1: parse_ipv4; default: parse_mpls; }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_TCP: parse_tcp;
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_tcp { pkt.extract(hdr.tcp); transition accept; }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
}
control SfcVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }
control SfcIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    firewall() slot0_firewall;
    router() slot1_router;
    sr_encap() slot2_sr_encap;
    apply {
        meta.sfc.path_id = 1;
        slot0_firewall.apply(hdr, meta.sfc);
        if (meta.sfc.metadata == 0) {
            slot1_router.apply(hdr, meta.sfc);
            slot2_sr_encap.apply(hdr, meta.sfc);
        }
        if (meta.sfc.drop == 1) {
            mark_to_drop(sm);
        } else if (meta.sfc.egress_valid == 1) {
            sm.egress_spec = meta.sfc.egress_port;
        }
    }
}
control SfcEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control SfcComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }
control SfcDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}
V1Switch(SfcParser(), SfcVerifyChecksum(), SfcIngress(), SfcEgress(), SfcComputeChecksum(),
         SfcDeparser()) main;
"""


def test_composed_library_nfs_run_with_qualified_names():
    sw = ModelSwitch(COMPOSED)
    assert sorted(sw.tables) == ["SfcIngress.slot0_firewall.acl", "SfcIngress.slot1_router.routes",
                                 "SfcIngress.slot2_sr_encap.segments"]
    sw.insert("SfcIngress.slot0_firewall.acl", {"hdr.ipv4.src_addr": ("10.6.6.6", 0xFFFFFFFF)},
              "deny", priority=5)
    sw.insert("SfcIngress.slot1_router.routes", [("192.168.0.0", 16)], "set_nexthop",
              {"dmac": "02:00:00:00:00:09", "port": 4})
    sw.insert("SfcIngress.slot2_sr_encap.segments", [1, 0], "push_label", [1000])

    p = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / \
        IP(src="10.0.0.1", dst="192.168.1.1") / TCP(dport=80)
    r = sw.process(1, p)
    exp = Ether(dst="02:00:00:00:00:09", src="02:00:00:00:00:02", type=0x8847) / \
        MPLS(label=1000, cos=0, s=1, ttl=64) / p[IP]
    assert r.outputs == [(4, bytes(exp))]
    assert r.trace.nfs() == ["firewall", "router", "sr_encap"]

    blocked = p.copy()
    blocked[IP].src = "10.6.6.6"
    r = sw.process(1, blocked)
    assert r.dropped and r.trace.nfs() == ["firewall"]
    assert r.trace.drop_reason == "mark_to_drop() in control SfcIngress"
