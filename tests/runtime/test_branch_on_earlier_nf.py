"""A branch that tests the field of an NF *before* the branching one, on the embedded
model through the real push path: the program tests the value the condition names
(FlexMesh Fig. 9's E2: ``QoS => (output : Flood ? flood_flag == 0)`` tests l2fwd's
flood flag after QoS has set its meter colour), within a pass, across a
recirculation, and across switches of a network.

The NFs as the library writes them: ``l2fwd`` sets its metadata (flood_flag) to 1
when the destination MAC misses its table (the example entry knows only
00:00:00:00:00:02), 0 on a hit; ``qos`` sets its metadata (color) to 0 for an
unmetered packet; ``ipsg``'s example entry binds 192.168.10.5 to port 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether

import sfclab
from sfclab.demo import demo_chains

ROOT = Path(__file__).resolve().parents[2]
KNOWN_MAC = "00:00:00:00:00:02"        # l2fwd's example entry: forward to port 2
UNKNOWN_MAC = "00:00:00:00:00:99"      # a miss: flood_flag = 1


def _edge_packet(dst_mac: str):
    return (Ether(src="0a:00:00:00:00:01", dst=dst_mac) / Dot1Q(vlan=10)
            / IP(src="192.168.10.5", dst="192.168.10.9") / UDP(sport=1234, dport=80))


def _plain_packet(dst_mac: str):
    return (Ether(src="0a:00:00:00:00:01", dst=dst_mac)
            / IP(src="192.168.10.5", dst="192.168.10.9") / UDP(sport=1234, dport=80))


@pytest.fixture
def lab():
    lab = sfclab.Lab()
    yield lab
    lab.close()


def _run(lab, port, packet):
    r = lab.send_packet(packet, port=port)
    return lab.traces[-1].path, list(r.trace.nfs()), sorted(r.ports)


@pytest.mark.parametrize(("port", "flooded", "plain"), [(1, "edge/1", "edge/0"),
                                                        (2, "edge/3", "edge/2")])
def test_demo_edge_chain_floods_what_l2fwd_could_not_forward(lab, port, flooded, plain):
    lab.add(demo_chains())
    lab.push()
    path, nfs, ports = _run(lab, port, _edge_packet(UNKNOWN_MAC))
    assert path == flooded and nfs[-2:] == ["qos", "flood"], (path, nfs)
    server = lab.pushed.detour.port      # the demo's web_ips detours through a server port
    assert ports == [p for p in range(1, 9) if p not in (port, server)]   # every other port
    path, nfs, ports = _run(lab, port, _edge_packet(KNOWN_MAC))
    assert path == plain and "flood" not in nfs and ports == [2]


def test_flexmesh_fig9_e2_tests_l2fwds_flood_flag_after_qos(lab):
    e2 = sfclab.parse((ROOT / "examples" / "flexmesh_fig9.sfc").read_text())[
        "Intra-pod Flows in Edge Switches"]
    lab.add(e2)
    lab.bindings = {"p1": 1, "p2": 2, "p3": 3}
    lab.push()
    for port in (1, 3):
        path, nfs, _ = _run(lab, port, _plain_packet(UNKNOWN_MAC))
        assert nfs[-1] == "flood", (port, path, nfs)
        path, nfs, ports = _run(lab, port, _plain_packet(KNOWN_MAC))
        assert "flood" not in nfs and ports == [2], (port, path, nfs)


def test_the_value_survives_a_recirculation(lab):
    """qos runs before l2fwd in the pipeline: l2fwd's flag is set in pass 0 and tested
    after qos in pass 1, so it crosses the recirculation in the SFC header."""
    lab.options["pipeline"] = ("qos", "l2fwd", "flood")
    lab.add("chain c match udp.dport == 80 { input => l2fwd => qos;"
            " qos => (output : flood ? l2fwd.flood_flag == 0); flood => output; }")
    plan = lab.compiled.fsm.path("c/1")
    assert [s.nodes for s in plan.states] == [("l2fwd",), ("qos", "flood")]
    lab.push()
    r = lab.send_packet(_plain_packet(UNKNOWN_MAC), port=1)
    assert lab.traces[-1].path == "c/1" and r.passes == 2 and r.trace.nfs()[-1] == "flood"
    assert sorted(r.ports) == list(range(2, 9))
    r = lab.send_packet(_plain_packet(KNOWN_MAC), port=1)
    assert lab.traces[-1].path == "c/0" and r.passes == 2 and r.ports == [2]


def test_the_value_crosses_switches_of_a_network():
    """l2fwd runs on s1, heavy_hitter on s2, qos and the branch on s3, flood on s4: the
    flag l2fwd set crosses two links in the SFC header."""
    from sfclab.ir.topology import line
    from sfclab.network import Network

    chains = sfclab.parse("chain c match udp.dport == 80 { input => l2fwd => heavy_hitter;"
                          " heavy_hitter => qos; qos => (output : flood ? l2fwd.flood_flag == 0);"
                          " flood => output; }")
    with Network(line(4, stages=8), chains) as net:
        net.push()
        assert [s.node for s in net.program.journeys["c/1"] if s.nfs] == ["s1", "s2", "s3", "s4"]
        nt = net.send("h1", None, _plain_packet(UNKNOWN_MAC))
        assert nt.path == "c/1" and nt.nfs() == ["l2fwd", "heavy_hitter", "qos", "flood"]
        nt = net.send("h1", None, _plain_packet(KNOWN_MAC))
        assert nt.path == "c/0" and nt.nfs() == ["l2fwd", "heavy_hitter", "qos"]
        assert nt.egress == "h2"


def test_a_branch_on_an_nf_that_sets_no_value_reads_zero(lab):
    """``l3fwd`` sets no metadata value, so ``l3fwd.global_metadata`` is 0 whatever the NF
    before it (``l2fwd``: 1 for an unknown MAC) left in the packet's metadata."""
    lab.add("chain c {\n"
            "    input => l2fwd => l3fwd;\n"
            "    l3fwd => (nat : drop ? l3fwd.global_metadata == 0);\n"
            "    nat => output;\n}")
    lab.push()
    packet = (Ether(src="0a:00:00:00:00:01", dst=UNKNOWN_MAC)
              / IP(src="192.168.10.5", dst="10.0.1.9") / UDP(sport=1234, dport=80))
    path, nfs, _ = _run(lab, 1, packet)
    assert (path, nfs) == ("c/0", ["l2fwd", "l3fwd", "nat"])
