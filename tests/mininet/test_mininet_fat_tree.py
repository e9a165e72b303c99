"""The fat-tree (k=4) example on Mininet: 20 model switch processes on real veth links,
16 hosts.  Per packet, for every class of every chain, the Mininet network and the
embedded network agree on the egress host, the bytes delivered, the NF sequence, the
switches crossed and the service path; each hop reads the same."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mnsupport import both_networks, needs_network_chains


@pytest.fixture(scope="module")
def fat_tree():
    needs_network_chains()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "network"))
    from netsupport import FAT_TREE_ENDS, fat_tree_example

    for embedded, real in both_networks(*fat_tree_example()):
        yield embedded, real, FAT_TREE_ENDS


def test_every_class_agrees_with_the_embedded_network(fat_tree):
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether

    from sfclab.runtime.traffic import packets_for

    embedded, real, ends = fat_tree
    assert len(real.emulation.processes) == 20
    seen, delivered = set(), 0
    for chain in embedded.chains:
        src = ends[chain.name][0]
        packets = [cp.packet for cp in packets_for(chain, 4, seed=7)]
        if chain.name == "web":        # the firewall's example ACL denies 10/8 over TCP
            packets.append(Ether(dst="00:00:00:00:00:02") / IP(src="10.0.0.5", dst="10.0.1.9")
                           / TCP(dport=80))
        for pkt in packets:
            want = embedded.target.send(src, pkt, label=chain.name)
            got = real.send(src, pkt, label=chain.name)
            assert got.egress == want.egress, (got.text(), want.text())
            assert got.output == want.output, got.text()
            assert got.nfs() == want.nfs(), got.text()
            assert got.switches() == want.switches(), got.text()
            assert got.path == want.path
            assert [h.text() for h in got.hops] == [h.text() for h in want.hops]
            seen.add(got.path)
            delivered += got.egress is not None
    assert {"web/0", "web/1", "sr/0", "dns/0", "mgmt/0"} <= seen
    assert delivered >= 12
    # the web chain's NFs are spread over several switches, with transit switches between
    web = embedded.program.journeys["web/0"]
    assert len({s.node for s in web if s.nfs}) >= 2 and any(not s.nfs for s in web)
