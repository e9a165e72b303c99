"""Mininet with BMv2 as the switch: ``simple_switch_grpc -i PORT@IFACE --nanolog …``
per switch, each program compiled by ``p4c-bm2-ss`` and pushed over P4Runtime, each
packet's record assembled from the switch's wires and event logger.  Per packet the
network agrees with the embedded network on the egress host, the bytes, the NFs and
the switches crossed, and a ping between hosts gets through.

Run twice: with the real BMv2 and p4c (skipped where they are not installed), and
with the test suite's stand-ins for them (``standin_veth.py``: sfclab's model inside,
so that run checks sfclab's orchestration of BMv2, not BMv2)."""

from __future__ import annotations

import pytest
from mnsupport import LINE_ENDS, both_networks, line_example


@pytest.fixture(scope="module", params=["real", "stand-in"])
def networks(request, tmp_path_factory):
    pytest.importorskip("pynng", reason="pynng (BMv2's event logger) is not installed")
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "real":
            from sfclab.targets.bmv2.target import missing_tools

            missing = missing_tools()
            if missing:
                pytest.skip(f"{' and '.join(missing)} not installed (BMv2 in Mininet needs "
                            f"both)")
        else:
            from standin_veth import install

            switch, p4c = install(tmp_path_factory.mktemp("standins"))
            mp.setenv("SFCLAB_BMV2", str(switch))
            mp.setenv("SFCLAB_P4C", str(p4c))
        yield from both_networks(*line_example(), switch="bmv2")


def test_bmv2_switches_agree_with_the_embedded_network(networks):
    from sfclab.runtime.traffic import packets_for

    embedded, real = networks
    for chain in embedded.chains:
        src, dst = LINE_ENDS[chain.name]
        for cp in packets_for(chain, 3, seed=3):
            want = embedded.target.send(src, cp.packet, label=chain.name)
            got = real.send(src, cp.packet, label=chain.name)
            assert got.egress == want.egress == dst, got.text()
            assert got.output == want.output, got.text()
            assert got.switches() == want.switches(), got.text()
            assert got.nfs() == want.nfs(), got.text()
    out = real.host("h1").cmd("ping -c 2 -i 0.2 -W 2 10.0.0.2")
    assert " 0% packet loss" in out, out


def test_each_bmv2_runs_in_a_namespace_of_its_own(networks):
    """BMv2's Thrift server binds 0.0.0.0:9090: in one namespace the second switch cannot
    (issue 21), and every one is open on the machine's outside addresses.  Each switch
    runs in a namespace of its own, which holds its interfaces (and its loopback) only."""
    import os
    import socket

    from sfclab.targets.mininet import netns

    from sfclab.targets.process.exposure import listening

    _, real = networks
    spaces = {}
    for sw, proc in real.emulation.processes.items():
        assert proc.running, proc.tail()
        spaces[sw] = os.readlink(f"/proc/{proc.pid}/ns/net")
        with netns(proc.pid):
            names = {name for _, name in socket.if_nameindex()}
        assert names == {"lo", *real.emulation.interfaces(sw).values()}, names
        # what it listens on (its Thrift server on 0.0.0.0:9090 among them) is reached
        # on its namespace's loopback only
        socks = listening(proc.pid)
        assert 9090 in {s.port for s in socks}, [str(s) for s in socks]
        for s in socks:
            assert not s.beyond_loopback(), s
    assert os.readlink("/proc/self/ns/net") not in spaces.values()
    assert len(set(spaces.values())) == len(spaces) == 3


def test_bmv2_traces_show_what_the_tables_ran_with(networks, request):
    """BMv2's event logger gives an action's id and a hit's entry handle only; each
    switch's Thrift runtime (bound inside its own namespace) holds the rest.  On every
    switch a packet crossed, its trace shows the tables, the entries they hit described
    the same way and the actions with the same arguments as the embedded network's."""
    if request.node.callspec.params["networks"] == "stand-in":
        pytest.skip("the BMv2 stand-in's Thrift server serves registers only, not entries")
    from sfclab.runtime.traffic import packets_for

    embedded, real = networks
    kinds = ("table_hit", "table_miss", "action")
    with_args = hops = 0
    for chain in embedded.chains:
        src, _ = LINE_ENDS[chain.name]
        for cp in packets_for(chain, 2, seed=5):
            want = embedded.target.send(src, cp.packet, label=chain.name)
            got = real.send(src, cp.packet, label=chain.name)
            pairs = list(zip([h for h in want.hops if h.kind == "switch"],
                             [h for h in got.hops if h.kind == "switch"], strict=True))
            for w, g in pairs:
                ours, theirs = ([e.text() for e in h.trace.events if e.kind in kinds]
                                for h in (w, g))
                assert theirs == ours, f"embedded:\n{w.trace.text()}\nBMv2:\n{g.trace.text()}"
                with_args += sum(1 for e in g.trace.events if e.kind == "action" and e.args)
                hops += 1
    assert hops and with_args >= hops, (with_args, hops)
    assert not any("without their arguments" in n for v in real.views.values()
                   for n in getattr(v.source, "notes", ())), real.views
