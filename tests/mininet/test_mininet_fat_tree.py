"""The fat-tree (k=4) example on Mininet: 20 model switch processes on real veth links,
16 hosts.  Per packet, for every service path of every class (the coverage solver's
packets: ``Network.class_traffic``), the Mininet network and the embedded network agree
on the egress host, the bytes delivered, the NF sequence, the switches crossed and the
service path; each hop reads the same.  The paths no packet can take are named, with
why (``FAT_TREE_UNREACHABLE``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mnsupport import both_networks, needs_network_chains


@pytest.fixture(scope="module")
def fat_tree():
    needs_network_chains()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "network"))
    from netsupport import FAT_TREE_ENDS, check_coverage, fat_tree_example

    for embedded, real in both_networks(*fat_tree_example()):
        yield embedded, real, FAT_TREE_ENDS, check_coverage


def test_every_class_agrees_with_the_embedded_network(fat_tree):
    embedded, real, ends, check_coverage = fat_tree
    assert len(real.emulation.processes) == 20
    plans, took, delivered = {}, set(), 0
    for chain in embedded.chains:
        src = ends[chain.name][0]
        plan = plans[chain.name] = embedded.class_traffic(chain.name, 4, seed=7)
        for cp, expected in zip(plan.packets, plan.expected):
            want = embedded.target.send(src, cp.packet, label=chain.name)
            got = real.send(src, cp.packet, label=chain.name)
            assert got.egress == want.egress, (got.text(), want.text())
            assert got.output == want.output, got.text()
            assert got.nfs() == want.nfs(), got.text()
            assert got.switches() == want.switches(), got.text()
            assert got.path == want.path == expected
            assert [h.text() for h in got.hops] == [h.text() for h in want.hops]
            took.add(got.path)
            delivered += got.egress is not None
    assert took == check_coverage(plans, embedded.program.journeys)
    assert delivered >= 10
    # the web chain's NFs are spread over several switches, with transit switches between
    web = embedded.program.journeys["web/0"]
    assert len({s.node for s in web if s.nfs}) >= 2 and any(not s.nfs for s in web)
