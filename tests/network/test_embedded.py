"""The embedded network, packet by packet: every class of the fat-tree example
reaches the egress host with the bytes the one-switch program gives it, through the
NFs and switches the placement says; a 3-switch line with a chain split three ways;
transit switches; server detours; packets that have nowhere to go."""

from __future__ import annotations

import pytest
from netsupport import FAT_TREE_ENDS, OneSwitch, check_coverage, fat_tree_example
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

import sfclab
from sfclab.errors import TargetError
from sfclab.ir.model import ChainSet, linear_chain
from sfclab.ir.topology import line
from sfclab.network import Network


@pytest.fixture(scope="module")
def fat_tree():
    topo, chains = fat_tree_example()
    net = Network(topo, chains)
    net.push()
    yield net
    net.close()


def _passes(net, nfs) -> int:
    """Passes a segment needs on its switch: one more after each NF whose successor's
    slot is not later in the canonical order (what the placement counted)."""
    rank = net.placement.problem.rank
    return 1 + sum(1 for a, b in zip(nfs, nfs[1:]) if rank[b] <= rank[a])


def _check(net, nt, oracle_result, oracle_path, chain):
    assert nt.path == oracle_path, nt.text()
    journey = net.program.journeys[nt.path]
    switches = [s.node for s in journey if s.kind == "switch"]
    nfs = [nf for s in journey for nf in s.nfs]
    assert nt.nfs() == oracle_result.trace.nfs(), nt.text()
    for hop, seg in zip([h for h in nt.hops if h.kind != "host"], journey):
        assert hop.node == seg.node
        if hop.kind == "switch" and oracle_result.outputs:
            assert hop.passes == _passes(net, seg.nfs), (hop.node, nt.text())
    if oracle_result.outputs:
        assert nt.switches() == switches and nt.nfs() == nfs, nt.text()
        assert nt.egress == FAT_TREE_ENDS[chain][1]
        assert nt.output == oracle_result.output(), nt.text()
    else:
        # dropped where the one switch drops it: at the path's end (a drop branch) or by
        # an NF (l3fwd without a route), on the switch that runs that NF
        assert nt.dropped, nt.text()
        assert nt.switches() == switches[:len(nt.switches())], nt.text()
        assert nt.nfs() == nfs[:len(nt.nfs())] and nt.hops[-1].nfs[-1:] == tuple(nt.nfs()[-1:])


def test_every_class_of_the_fat_tree_example(fat_tree):
    """Every service path of every class: the packets are the coverage solver's
    (``Network.class_traffic``), each sent from the chain's ingress host and checked
    against the one-switch program; the paths no packet can take are named, with why."""
    net = fat_tree
    plans, took = {}, set()
    for chain in net.chains:
        oracle = OneSwitch(ChainSet.of([chain]))
        try:
            src = FAT_TREE_ENDS[chain.name][0]
            port = net.topology.endpoint(src)[1]
            plan = plans[chain.name] = net.class_traffic(chain.name, 4, seed=7)
            for cp, expected in zip(plan.packets, plan.expected):
                nt = net.send(src, None, cp.packet)
                r, path = oracle.send(port, cp.packet)
                _check(net, nt, r, path, chain.name)
                assert nt.path == expected, nt.text()
                took.add(nt.path)
        finally:
            oracle.close()
    assert took == check_coverage(plans, net.program.journeys)
    assert {"web/0", "sr/0", "sr/2", "dns/0", "mgmt/0"} == took
    # the web chain's NFs are spread over several switches, with transit switches between
    web = net.program.journeys["web/0"]
    assert len({s.node for s in web if s.nfs}) >= 2 and any(not s.nfs for s in web)


def test_the_path_a_heavy_hitter_takes_once_its_flow_has_1000_packets(fat_tree):
    """sr/1 (heavy_hitter -> cpu) needs heavy_hitter.hitter_value >= 1000, so no one
    packet takes it (FAT_TREE_UNREACHABLE); the 1000th packet of one flow does, on the
    network as on one switch: it goes to the controller of the switch that runs
    heavy_hitter."""
    net = fat_tree
    plan = net.class_traffic("sr", 4, seed=7)
    pkt = next(cp.packet for cp, p in zip(plan.packets, plan.expected) if p == "sr/2").copy()
    pkt["UDP"].sport = 4242                    # a flow of its own: no packet of it sent yet
    oracle = OneSwitch(ChainSet.of([net.chains["sr"]]))
    try:
        src = FAT_TREE_ENDS["sr"][0]
        port = net.topology.endpoint(src)[1]
        for k in range(1, 1001):
            nt = net.target.send(src, pkt)
            r, path = oracle.send(port, pkt)
            assert nt.path == path, (k, nt.text())
            if path == "sr/1":
                break
    finally:
        oracle.close()
    assert nt.path == "sr/1" and k > 1, nt.text()
    last = net.program.journeys["sr/1"][-1]
    assert last.exit == ("end", "cpu") and nt.hops[-1].node == last.node
    assert nt.nfs() == r.trace.nfs() == ["classifier", "heavy_hitter"]
    assert nt.dropped and "sent to the controller" in nt.hops[-1].dropped


def test_the_trace_shows_each_hop(fat_tree):
    nt = fat_tree.send("h1", "h16", "web")
    text = nt.text()
    assert text.startswith("packet from h1 [web]: e1_1 -> ")
    first = nt.hops[0]
    assert first.kind == "switch" and first.trace is not None and first.tables()
    assert first.out and first.out[0][1] == nt.hops[1].node
    assert first.header == (fat_tree.program.spis["web/0"], fat_tree.program.journeys[
        "web/0"][1].start)
    assert nt.hops[-1].kind == "host" and nt.hops[-1].node == "h16"
    d = nt.to_dict()
    assert d["egress"] == "h16" and d["switches"] == nt.switches()


def test_tables_of_one_switch_count_its_hits(fat_tree):
    fat_tree.send("h1", "h16", "web")
    occ = {o.table: o for o in fat_tree.tables("e1_1")}
    init = occ["SfcIngress.initializer"]
    assert init.entries >= 1 and init.hits >= 1
    with pytest.raises(TargetError, match="no switch 'e9_9'"):
        fat_tree.tables("e9_9")


def test_a_chain_split_over_a_three_switch_line():
    t = line(3, stages=8)                              # 6 NF stages per switch
    chains = ChainSet.of([linear_chain("c", ["heavy_hitter", "qos", "nat"])])
    with Network(t, chains) as net:
        net.push()
        assert [s.node for s in net.program.journeys["c/0"] if s.nfs] == ["s1", "s2", "s3"]
        nt = net.send("h1", "h2", "c")
        assert nt.switches() == ["s1", "s2", "s3"] and nt.egress == "h2"
        assert [h.nfs for h in nt.hops[:3]] == [("heavy_hitter",), ("qos",), ("nat",)]
        # on the wire: the same service path, the index of the next NF
        spi = net.program.spis["c/0"]
        assert [h.header for h in nt.hops[:2]] == [(spi, 1), (spi, 2)]
        assert nt.hops[2].header is None                     # removed before delivery
        assert nt.output[12:14] == bytes(nt.output)[12:14] != b"\x88\xb5"


def test_transit_switches_forward_without_nfs():
    t = line(4)
    chains = ChainSet.of([linear_chain("c", ["firewall"])])
    with Network(t, chains) as net:
        nt = net.send("h1", "h2", "c")
        assert nt.switches() == ["s1", "s2", "s3", "s4"] and nt.egress == "h2"
        for h in nt.hops[1:4]:
            assert h.nfs == () and h.passes == 1
            acts = [e.name.rsplit(".", 1)[1] for e in h.trace.events if e.kind == "action"]
            assert "enter" in acts and ("forward" in acts or "deliver" in acts)


def test_a_server_detour_in_the_embedded_network():
    t = line(3)
    t.add_server("srv1", nfs=("dpi",))
    t.add_link("srv1", "s2")
    chains = ChainSet.of([linear_chain("c", ["firewall", "dpi", "nat"])])
    with Network(t, chains) as net:
        nt = net.send("h1", "h2", "c")
        assert [h.node for h in nt.hops] == ["s1", "s2", "srv1", "s2", "s3", "h2"]
        assert nt.nfs() == ["firewall", "dpi", "nat"] and nt.egress == "h2"
        assert nt.hops[2].kind == "server" and nt.hops[2].header[1] == 2


def test_packets_with_nowhere_to_go():
    t = line(2)
    chains = sfclab.parse("chain c match tcp.dport == 80: firewall")
    with Network(t, chains) as net:
        net.push()
        # no chain's class: the ingress switch's initializer drops it
        nt = net.send("h1", "h2", Ether() / IP(dst="10.9.9.9") / TCP(dport=22))
        assert nt.dropped and nt.hops[0].node == "s1" and nt.hops[0].dropped
        # an SFC header for a service path the next switch does not know
        from sfclab.targets.network.trace import SFC_ETHERTYPE

        hdr = (999).to_bytes(2, "big") + bytes([5]) + bytes(18)
        frame = bytes(6) + bytes(6) + SFC_ETHERTYPE.to_bytes(2, "big") + hdr
        frame = frame[:14 + 11] + bytes([0b0100]) + frame[14 + 12:]        # flags: in transit
        nt = net.target.send("h1", frame + bytes(IP()))
        assert nt.dropped
        with pytest.raises(TargetError, match="no host 'h9'"):
            net.target.send("h9", b"")
