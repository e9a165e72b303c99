"""Network-wide chains on Mininet: a line of three model switch processes, each
pushed its own program over P4Runtime; packets sent from hosts agree with the
embedded network hop by hop; a real ``ping`` between hosts crosses the chains' NFs
on the switches the placement chose."""

from __future__ import annotations

import pytest
from mnsupport import LINE_ENDS, both_networks, line_example

@pytest.fixture(scope="module")
def networks():
    """(the embedded network, the Mininet network), both pushed the same program."""
    yield from both_networks(*line_example())


def test_packets_of_every_chain_agree_with_the_embedded_network(networks):
    from sfclab.runtime.traffic import packets_for

    embedded, real = networks
    assert len({s.node for s in embedded.program.journeys["web/0"] if s.nfs}) == 2
    for chain in embedded.chains:
        src = LINE_ENDS[chain.name][0]
        for cp in packets_for(chain, 3, seed=3):
            want = embedded.target.send(src, cp.packet, label=chain.name)
            got = real.send(src, cp.packet, label=chain.name)
            assert got.egress == want.egress == LINE_ENDS[chain.name][1], got.text()
            assert got.output == want.output
            assert got.nfs() == want.nfs() and got.switches() == want.switches()
            assert got.path == want.path
            assert [h.text() for h in got.hops] == [h.text() for h in want.hops]


def test_a_ping_between_hosts_crosses_the_chains_nfs(networks):
    embedded, real = networks
    out = real.host("h1").cmd("ping -c 2 -i 0.2 -W 2 10.0.0.2")
    assert " 0% packet loss" in out, out
    # on every switch of their journeys, the echo requests (service path ping/0) and the
    # replies (pong/0) ran the NFs the placement put there
    for path in ("ping/0", "pong/0"):
        for seg in embedded.program.journeys[path]:
            session, paths = real.sessions()[seg.node], embedded.program.switches[seg.node].paths
            runs = [r.trace.nfs() for r in real.reports(seg.node)
                    if r.trace is not None and paths.get(session.path_of(r.trace)) == path]
            assert len(runs) >= 2, (path, seg.node)
            assert all(nfs == list(seg.nfs) for nfs in runs), (path, seg.node, runs)
