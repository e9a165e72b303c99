"""What the views say about a network: a dropped packet in the words of a
one-switch trace, a placement line in the order a packet takes the nodes, and
one numbering of hops in the drawing, the rows and the "hop N" sections."""

from __future__ import annotations

import re

import pytest
from heldout import CORE_CAMPUS as CAMPUS

import sfclab
from sfclab.draw.topology import chain_highlight, topology_svg, trace_highlight
from sfclab.network import Network
from sfclab.notebook.network_views import network_row



def test_a_dropped_packets_network_trace_says_after_which_nf_as_on_one_switch():
    """firewall's example ACL denies TCP from 10/8: on the core, after ipsg passed it."""
    chains = "chain print match tcp.dport == 9100 from alice to printer: ipsg -> firewall -> l3fwd"
    with Network(sfclab.parse_topology(CAMPUS), chains) as net:
        from scapy.layers.inet import IP, TCP
        from scapy.layers.l2 import Ether

        t = net.send("alice", None, Ether() / IP(src="10.1.0.10", dst="10.2.0.50") /
                     TCP(dport=9100))
        assert t.dropped and t.nfs() == ["ipsg", "firewall"], t.text()
        first = t.text().splitlines()[0]
        assert first.endswith("; dropped after firewall (core)"), first
        assert "mark_to_drop" not in t.text()
        assert t.text().splitlines()[2].endswith("NFs ipsg -> firewall, dropped after firewall")
        assert network_row(1, t)["outcome"] == "dropped after firewall (core)"


def test_a_drop_before_any_nf_on_a_later_switch_names_the_last_nf_that_ran():
    from sfclab.targets.network.trace import Hop, NetworkTrace

    t = NetworkTrace(source="h1", hops=[
        Hop(node="s1", kind="switch", in_port=1, ran=("nat",), out=((2, "s2", 1),)),
        Hop(node="s2", kind="switch", in_port=1, dropped="mark_to_drop() in control SfcIngress")])
    assert t.outcome() == "dropped after nat (s2)"
    t.hops[0].ran = ()
    assert t.outcome() == "dropped before any NF (s2)"
    t.hops[1].dropped = "no output"
    assert t.outcome() == "dropped at s2: no output"


LEAF_SPINE = """
use leaf_spine(2, 3, hosts=1, stages=12)
server box1 runs ips at spine1:7
"""


def test_the_placement_line_of_a_server_detour_is_in_the_order_a_packet_takes():
    chains = "chain sec match udp.dport == 8443 from h1 to h3: firewall -> ips -> l3fwd"
    with Network(sfclab.parse_topology(LEAF_SPINE), chains) as net:
        pl = net.placement.chains["sec"]
        line = pl.describe()
        # the packet: firewall, out to the server for ips, back on the spine, then l3fwd
        assert "box1{ips} spine1" in line and line.index("firewall") < line.index("box1{ips}") \
            < line.index("l3fwd"), line
        assert line in net.placement.table()
        t = net.send("h1", None, net.class_traffic("sec", 1).packets[0].packet)
        nodes = [h.node for h in t.hops if h.kind != "host"]
        said = [w.split("[")[0].split("{")[0] for w in line.split()]
        assert nodes == said, (nodes, said)


def _badges(svg: str) -> dict[str, str]:
    """Node -> the number(s) on its badge."""
    out = {}
    for part in svg.split("<g data-node=")[1:]:
        m = re.search(r'<text class="sfc-step"[^>]*>([^<]+)</text>', part)
        if m:
            out[part.split('"')[1]] = m.group(1)
    return out


@pytest.mark.parametrize("chain, ends", [
    ("chain web match udp.dport == 443 from h1 to h16: firewall -> nat", ("h1", "h16")),
    ("chain sec match udp.dport == 8443 from h2 to h12: firewall -> ips -> l3fwd", ("h2", "h12")),
])
def test_lab_6s_hops_are_numbered_alike_in_the_drawing_and_the_rows(chain, ends):
    """Lab 6's fat tree: the badges on the drawing, for the chain's route and for a
    packet, are the trace's hop numbers (the rows, "hop N"); c1 crossed twice around
    the server has both its numbers; the sending host has none."""
    topo = sfclab.parse_topology("use fat_tree(4, stages=8)\nserver srv1 runs ips at c1\n")
    with Network(topo, chain) as net:
        name = chain.split()[1]
        t = net.send(ends[0], None, net.class_traffic(name, 1).packets[0].packet)
        assert t.egress == ends[1], t.text()
        want: dict[str, list[int]] = {}
        for k, h in enumerate(t.hops, 1):              # as the rows and "hop N" number them
            want.setdefault(h.node, []).append(k)
        want = {n: ",".join(map(str, ks)) for n, ks in want.items()}
        for hl in (trace_highlight(t), chain_highlight(net.placement, name)):
            got = _badges(topology_svg(topo, net.placement, highlight=hl))
            assert got == want, (got, want)
            assert ends[0] not in got and re.search(
                rf'data-node="{ends[0]}" class="sfc-visited"', topology_svg(
                    topo, net.placement, highlight=hl))
        if "ips" in chain:
            assert "," in want["c1"] and "srv1" in want
