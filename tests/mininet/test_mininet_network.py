"""Network-wide chains on Mininet: a line of three model switch processes, each
pushed its own program over P4Runtime; packets sent from hosts agree with the
embedded network hop by hop; a real ``ping`` between hosts crosses the chains' NFs
on the switches the placement chose."""

from __future__ import annotations

import pytest
from mnsupport import LINE_CHAINS, LINE_ENDS, both_networks, line_example

@pytest.fixture(scope="module")
def networks():
    """(the embedded network, the Mininet network), both pushed the same program."""
    yield from both_networks(*line_example())


def test_packets_of_every_chain_agree_with_the_embedded_network(networks):
    from sfclab.runtime.traffic import packets_for

    embedded, real = networks
    assert len({s.node for s in embedded.program.journeys["web/0"] if s.nfs}) == 2
    for chain in embedded.chains:
        src, dst = LINE_ENDS[chain.name]
        packets = [cp.packet for cp in packets_for(chain, 3, seed=3)]
        for nt in _agree(embedded, real, src, packets, chain.name):
            assert nt.egress == dst, nt.text()


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


def _agree(embedded, real, src: str, packets, label: str) -> list:
    """Send each packet on both networks; they agree hop by hop.  The Mininet traces."""
    out = []
    for pkt in packets:
        want = embedded.target.send(src, pkt, label=label)
        got = real.send(src, pkt, label=label)
        assert (got.egress, got.output, got.nfs(), got.switches(), got.path) == \
            (want.egress, want.output, want.nfs(), want.switches(), want.path), got.text()
        assert [h.text() for h in got.hops] == [h.text() for h in want.hops]
        out.append(got)
    return out


def test_a_server_detour_runs_on_a_mininet_host():
    """dpi cannot be offloaded: s2 sends web's packets to the server srv1 (a Mininet host
    whose NFs a stand-in runs, as in the embedded network) and gets them back."""
    from sfclab.ir.model import ChainSet, linear_chain
    from sfclab.ir.topology import line
    from sfclab.runtime.traffic import packets_for

    topo = line(3)
    topo.add_server("srv1", nfs=("dpi",))
    topo.add_link("srv1", "s2")
    chain = linear_chain("web", ["firewall", "dpi", "nat"])
    for embedded, real in both_networks(topo, ChainSet.of([chain])):
        packets = [cp.packet for cp in packets_for(embedded.chains["web"], 3, seed=1)]
        for nt in _agree(embedded, real, "h1", packets, "web"):
            assert [h.node for h in nt.hops] == ["s1", "s2", "srv1", "s2", "s3", "h2"]
            assert nt.nfs() == ["firewall", "dpi", "nat"]


def test_an_update_moves_every_switch_process_consistently():
    """web loses nat.  The embedded network's update gives the new program; pushed to the
    Mininet network it is entries only, and afterwards both run the new chain alike."""
    import sfclab
    from sfclab.runtime.traffic import packets_for

    topo, chains = line_example()
    for embedded, real in both_networks(topo, chains):
        new = sfclab.parse(LINE_CHAINS.replace("heavy_hitter -> nat", "heavy_hitter"))
        for c in new:
            c.ingress, c.egress = LINE_ENDS[c.name]
        embedded.update(new)
        plan = real.update(embedded.program)
        assert plan.kind == "entries" and not plan.reloads(), str(plan)
        packets = [cp.packet for cp in packets_for(embedded.chains["web"], 3, seed=5)]
        for nt in _agree(embedded, real, "h1", packets, "web"):
            assert nt.nfs() == ["heavy_hitter"] and nt.egress == "h2"


def test_link_shaping_the_kernel_cannot_do_is_said_once_not_per_link(mininet, prefix):
    """Links with a latency and a bandwidth: where this kernel lacks a tc queueing
    discipline (netem for latency, htb for bandwidth), the network says once what is
    not shaped and why, and Mininet prints no error per link; what it has is applied."""
    import logging
    import subprocess

    import sfclab
    from sfclab.targets.mininet import MininetNetwork
    from sfclab.targets.mininet.emulator import interface_name, kernel_qdiscs, load_mininet

    load_mininet()
    from mininet.log import lg

    class Said(logging.Handler):
        lines: list[str] = []

        def emit(self, record):
            self.lines.append(record.getMessage())

    topo = sfclab.parse_topology("switch s1, s2, s3 ports 8\nhost h1 at s1\nhost h2 at s3\n"
                                 "link s1 -- s2 -- s3 latency 1ms bandwidth 100Mbps\n")
    have = kernel_qdiscs()
    net = MininetNetwork(topo, prefix=prefix)
    said = Said(logging.WARNING)
    lg.addHandler(said)
    try:
        net.start()
        assert said.lines == [], said.lines             # Mininet's "*** Error: …" per link
        for q, what in (("netem", "latency"), ("htb", "bandwidth")):
            said = [n for n in net.notes if n.startswith(f"{what} is not emulated on")]
            if have[q]:
                assert not said, net.notes
            else:           # one note for both links, naming them and the missing module
                assert len(said) == 1 and "2 links (s1--s2, s2--s3)" in said[0], net.notes
                assert f"no tc {q} queueing discipline (modprobe sch_{q})" in said[0]
        shown = subprocess.run(["tc", "qdisc", "show", "dev", interface_name(f"{prefix}s1", 2)],
                               capture_output=True, text=True, check=False).stdout
        assert ("htb" in shown) == have["htb"] and ("netem" in shown) == have["netem"], shown
    finally:
        lg.removeHandler(said)
        net.close()
