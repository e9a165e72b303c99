"""Throughput of the embedded switch model; prints a markdown table.

    python benchmarks/bench_model.py [--quick]

A four-table v1model program (MAC check, IPv4 LPM with TTL decrement,
ternary ACL with a direct counter, egress MAC rewrite) and the IPv4 checksum
update; TCP packets to a few hundred destinations.  The trace of every packet
is recorded (as raw events, as always); "with trace objects" also builds the
:class:`~sfclab.targets.traces.trace.PacketTrace` of each packet.  The target is
20,000 packets/s on a 2-core machine.  Then the program sfclab composes for
P4SC Table III's chains, per class (the 4-NF chain is issue 6's target case).
"""

from __future__ import annotations

import sys
import time

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
header tcp_t {
    bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<4> off; bit<4> res;
    bit<8> flags; bit<16> window; bit<16> checksum; bit<16> urg;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; tcp_t tcp; }
struct meta_t { bit<32> nhop; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) { 6: parse_tcp; default: accept; }
    }
    state parse_tcp { pkt.extract(hdr.tcp); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) acl_hits;
    action drop() { mark_to_drop(sm); }
    action accept_mac() { }
    action forward(bit<9> port, bit<32> nhop) {
        sm.egress_spec = port;
        meta.nhop = nhop;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action permit() { }
    table mac_check {
        key = { hdr.ethernet.dst : exact; }
        actions = { accept_mac; drop; }
        default_action = drop();
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst : lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 4096;
    }
    table acl {
        key = { hdr.ipv4.src : ternary; hdr.tcp.dport : range; hdr.ipv4.protocol : ternary; }
        actions = { permit; drop; }
        default_action = permit();
        counters = acl_hits;
    }
    apply {
        if (mac_check.apply().hit && hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
            acl.apply();
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action rewrite(bit<48> smac, bit<48> dmac) { hdr.ethernet.src = smac; hdr.ethernet.dst = dmac; }
    table nexthop {
        key = { meta.nhop : exact; }
        actions = { rewrite; NoAction; }
        default_action = NoAction();
    }
    apply { nexthop.apply(); }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.tcp); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

ROUTER_MAC = 0x0000000000AA


def make_switch() -> ModelSwitch:
    sw = ModelSwitch(PROGRAM)
    sw.insert("I.mac_check", [ROUTER_MAC], "I.accept_mac")
    for i in range(256):
        sw.insert("I.ipv4_lpm", [((10 << 24) | (i << 16), 16)], "I.forward", [1 + i % 8, i])
        sw.insert("E.nexthop", [i], "E.rewrite", [ROUTER_MAC, 0x020000000000 + i])
    for i in range(16):
        sw.insert("I.acl", [((192 << 24) | (168 << 16) | (i << 8), 0xFFFFFF00), (0, 1023), None],
                  "I.drop", priority=100 + i)
    sw.insert("I.acl", [None, (22, 22), (6, 0xFF)], "I.drop", priority=10)
    return sw


def packets(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        p = (Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:00:01")
             / IP(src=f"172.16.{i % 7}.{i % 200 + 1}", dst=f"10.{i % 256}.{i % 100}.{i % 250 + 1}")
             / TCP(sport=1024 + i % 5000, dport=80 + i % 3))
        out.append(bytes(p))
    return out


def run(n: int, build_trace: bool) -> float:
    sw = make_switch()
    pkts = packets(512)
    sw.process(1, pkts[0])
    t = time.perf_counter()
    for i in range(n):
        r = sw.process(1, pkts[i % 512])
        if build_trace:
            r.trace  # noqa: B018 - builds the Event objects
    dt = time.perf_counter() - t
    assert r.outputs, "the benchmark packets must be forwarded"
    return n / dt


def main() -> None:
    n = 5_000 if "--quick" in sys.argv else 50_000
    print("## embedded switch model throughput (4 tables + checksum)\n")
    print("| mode | packets | packets/s |")
    print("|---|---:|---:|")
    for label, tr in (("raw trace (default)", False), ("with trace objects", True)):
        best = max(run(n, tr) for _ in range(3))
        print(f"| {label} | {n} | {best:,.0f} |")


def composed(n: int) -> None:
    """The program sfclab composes for P4SC Table III's chains, pushed over P4Runtime:
    packets of each class (SFC1_DC runs 4 NFs: ids, firewall, nat, l3fwd)."""
    from pathlib import Path

    import sfclab
    from sfclab.codegen import generate
    from sfclab.runtime.traffic import packets_for
    from sfclab.targets.model import ModelTarget

    text = (Path(__file__).resolve().parents[1] / "examples" / "p4sc_table3.sfc").read_text()
    compiled = sfclab.compile(text)
    print("\n## the composed program of P4SC Table III's chains\n")
    print("| class | NFs on its path | packets | packets/s |")
    print("|---|---|---:|---:|")
    with ModelTarget() as target:
        target.push(generate(compiled))
        sw = target.switch
        for chain in compiled.chains:
            pkts = [bytes(p.packet) for p in packets_for(chain, 200, chains=compiled.chains)]
            nfs = " -> ".join(sw.process(1, pkts[0]).trace.nfs())
            best = 0.0
            for _ in range(3):
                t = time.perf_counter()
                for i in range(n):
                    sw.process(1, pkts[i % len(pkts)])
                best = max(best, n / (time.perf_counter() - t))
            print(f"| {chain.name} | {nfs} | {n} | {best:,.0f} |")


if __name__ == "__main__":
    main()
    composed(5000 if "--quick" in sys.argv else 20000)
