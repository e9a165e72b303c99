"""A topology in Mininet with model switch processes: hosts with the topology's
addresses, switch processes on the nodes' interfaces pushed over P4Runtime, a real
``ping`` through them, link latency, clean-up of everything made; refusals."""

from __future__ import annotations

import re

import pytest
from mnsupport import interfaces_named

import sfclab
from sfclab.codegen import generate
from sfclab.errors import TargetError
from sfclab.ir.topology import Topology
from sfclab.targets.mininet import MininetNetwork


def _one_switch(latency_ms: float = 0.0) -> Topology:
    t = Topology(name="one")
    t.add_switch("s1", ports=4)
    t.add_host("h1")
    t.add_host("h2", ipv4="10.0.0.12")
    t.add_link("h1", "s1")
    t.add_link("h2", "s1", latency_ms=latency_ms)
    return t


def _rtt_ms(ping_output: str) -> float:
    m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/", ping_output)
    assert m, ping_output
    return float(m.group(1))


def test_one_switch_in_mininet_runs_a_real_ping(mininet, prefix):
    net = MininetNetwork(_one_switch(latency_ms=5), prefix=prefix)
    try:
        net.start()
        h1, h2 = net.host("h1"), net.host("h2")
        assert "10.0.0.1/24" in h1.cmd("ip -o -4 addr show dev h1-eth0")
        assert h2.cmd("cat /sys/class/net/h2-eth0/address").strip() == "00:00:00:00:00:02"
        assert h1.cmd("cat /proc/sys/net/ipv6/conf/h1-eth0/disable_ipv6").strip() == "1"
        assert interfaces_named(prefix) == [f"{prefix}s1-eth1", f"{prefix}s1-eth2"]
        procs = list(net.emulation.processes.values())
        assert len(procs) == 1 and procs[0].running

        # the l2fwd chain's example entry sends …:02 (h2) to port 2; the rest (h1's
        # replies) leaves on the chain's output port, 1
        net.push_switch("s1", generate(sfclab.compile("chain a: l2fwd")))
        out = h1.cmd("ping -c 2 -i 0.2 -W 2 10.0.0.12")
        assert " 0% packet loss" in out, out
        if any("latency is not emulated" in n for n in net.notes):
            pass                                   # no tc netem in this kernel: said so
        else:
            assert _rtt_ms(out) >= 10, out        # 5 ms each way on h2's link
        echo = [r for r in net.reports("s1")
                if r.port == 1 and r.data[12:14] == b"\x08\x00" and r.data[23] == 1]
        assert echo, "the switch process reported no ICMP packet from h1"
        assert echo[0].outputs and echo[0].outputs[0][0] == 2
        assert echo[0].trace.nfs() == ["l2fwd"]
    finally:
        net.close()
    assert interfaces_named(prefix) == []
    assert not any(p.running for p in procs)


def test_a_network_is_refused_before_anything_is_made(mininet, prefix):
    with pytest.raises(TargetError, match="unknown switch kind 'bvm2'") as e:
        MininetNetwork(_one_switch(), switch="bvm2", prefix=prefix)
    assert "did you mean 'bmv2'" in e.value.hint
    with pytest.raises(TargetError, match="longer than Linux's 15 characters"):
        MininetNetwork(_one_switch(), prefix="a-long-prefix-")
    net = MininetNetwork(_one_switch(), prefix=prefix)
    with pytest.raises(TargetError, match="no switch 's9'"):
        net.push_switch("s9", None)
    with pytest.raises(TargetError, match="no network program is pushed yet"):
        net.send("h1", b"\x00" * 60)
    # two networks with the same interface names: the second says so, and leaves the first
    try:
        net.start()
        made = interfaces_named(prefix)
        with pytest.raises(TargetError, match="Mininet could not build the network") as e:
            MininetNetwork(_one_switch(), prefix=prefix).start()
        assert "prefix of its own" in e.value.hint
        assert interfaces_named(prefix) == made and all(
            p.running for p in net.emulation.processes.values())
    finally:
        net.close()
    assert interfaces_named(prefix) == []
