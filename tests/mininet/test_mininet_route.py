"""The one-command Mininet route: ``Network(..., target="mininet")``, ``Network.connect``
and a Lab's ``%sfc target mininet`` (through sfclab.labnet) run the chains on a Mininet
network of model switch processes: push, send from host to host, the traces, one
switch's tables; closing removes every interface the network made."""

from __future__ import annotations

import uuid

import pytest
from mnsupport import (LINE_CHAINS, LINE_ENDS, interfaces_named, line_example,
                       needs_network_chains)

#: The line example and a chain that leaves the network by s3's free port 7 (which gets
#: an interface in Mininet, because a chain names it: the frame is seen arriving there).
CHAINS = LINE_CHAINS + "chain tap match ipv4.proto == 17 && udp.dport == 9: monitor\n"
ENDS = {**LINE_ENDS, "tap": ("h1", "s3:7")}


@pytest.fixture
def mn_prefix(mininet) -> str:
    """A prefix of this test's switch interfaces (skips without root or Mininet)."""
    needs_network_chains()
    return "t" + uuid.uuid4().hex[:3]


def _check_running(net, prefix: str) -> None:
    """push, send, trace and tables on *net*, which runs on Mininet."""
    from sfclab.errors import TargetError
    from sfclab.targets.mininet import MininetNetwork

    counts = net.push()
    assert isinstance(net.target, MininetNetwork) and net.pushed
    assert set(counts) == {"s1", "s2", "s3"} and all(counts.values())
    assert interfaces_named(prefix)                        # its switches' interfaces
    nt = net.send("h1", "h2", "web")                       # web's class, from its ingress
    assert nt.egress == "h2" and nt.nfs() == ["heavy_hitter", "nat"], nt.text()
    assert nt.switches() == ["s1", "s2", "s3"] and nt.path == "web/0"
    back = net.send("h2", "h1")                            # the chain from h2 to h1: pong
    assert back.label == "pong" and back.egress == "h1" and back.nfs() == ["monitor"]
    assert net.traces[-2:] == [nt, back]
    assert nt.text().startswith("packet from h1 [web]: s1 -> s2 -> s3;")
    first = nt.hops[0]
    assert first.trace is not None and first.tables()      # rebuilt from the process's report
    tap = net.send("h1", "s3:7")                           # out of s3's free port 7
    assert tap.egress == "s3:7" and tap.hops[-2].exits == (7,), tap.text()
    assert not tap.hops[-1].dropped                        # it reached the port's interface
    inward = net.target.send("s3:7", tap.output)           # and in by it, from outside
    assert inward.hops[0].node == "s3" and inward.hops[0].in_port == 7, inward.text()
    with pytest.raises(TargetError, match="no chain enters or leaves there"):
        net.target.send("s2:9", tap.output)
    occ = {o.table: o for o in net.tables("s1")}
    assert occ["SfcIngress.initializer"].entries >= 1 and occ["SfcIngress.initializer"].hits >= 1


def test_a_network_with_target_mininet(mn_prefix):
    from sfclab.network import Network

    topo, chains = line_example(CHAINS, ENDS)
    net = Network(topo, chains, target=f"mininet?prefix={mn_prefix}&timeout=8")
    try:
        assert net.target.timeout == 8.0                   # the URL's options, typed
        _check_running(net, mn_prefix)
    finally:
        net.close()
    assert interfaces_named(mn_prefix) == []
    assert not net.pushed


def test_connect_moves_a_running_network_to_mininet(mn_prefix):
    from sfclab.network import Network
    from sfclab.targets.network import EmbeddedNetwork

    topo, chains = line_example(CHAINS, ENDS)
    with Network(topo, chains) as net:
        net.push()
        assert isinstance(net.target, EmbeddedNetwork) and net.send("h1", "h2", "web").egress
        net.connect(f"mininet?prefix={mn_prefix}")           # the embedded one is closed
        assert not net.pushed and net.traces == []
        try:
            _check_running(net, mn_prefix)
        finally:
            net.connect("model")                             # and back: Mininet is closed
        assert interfaces_named(mn_prefix) == []
        assert isinstance(net.target, EmbeddedNetwork)


def test_a_labs_sfc_target_mininet(mn_prefix, capsys):
    """``%sfc target mininet?prefix=…`` on a Lab with a topology, then push, send,
    trace and tables as in a notebook (the magics' methods, no kernel)."""
    from sfclab import Lab
    from sfclab.notebook.magics import SfcMagics

    text = "".join(line.replace(":", f" from {ENDS[line.split()[1]][0]} to "
                                f"{ENDS[line.split()[1]][1]}:", 1) + "\n"
                   for line in CHAINS.strip().splitlines())
    lab = Lab()
    magics = SfcMagics(None)
    magics.lab = lab
    try:
        lab.set_topology("use line(3, stages=8)\n")
        lab.add(text)
        magics.sfc_target(f"mininet?prefix={mn_prefix}")
        assert "target: a Mininet network (nothing pushed yet" in capsys.readouterr().out
        _check_running(lab.network, mn_prefix)
        sent = lab.send("web", 2)                           # from web's ingress to its egress
        assert sent.summary() == "2 packets of web from h1 to h2: 2 delivered to h2, 0 dropped"
        assert lab.network.traces[-2:] == list(sent)
        assert {o.table for o in lab.tables("s2")} >= {"SfcIngress.initializer"}
    finally:
        lab.close()
    assert interfaces_named(mn_prefix) == []
