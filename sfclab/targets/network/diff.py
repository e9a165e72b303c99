"""The differential check of two network targets: the same network program and packets,
packet by packet.

:func:`diff_network_targets` pushes one :class:`~sfclab.codegen.network.NetworkProgram`
to two network targets (the embedded network ``net``, Mininet with model switch
processes ``mininet?switch=model`` or with real BMv2 ``mininet?switch=bmv2``: see
:mod:`.connect`), sends every chain's class traffic from the chain's ingress on both,
and compares each packet's fate: where it went (the host or free port it reached, or
the node that dropped it and why, in the words of a one-switch trace), the bytes it
came out with, the NFs it ran, the switches it crossed and the service path it ended
on.  The packets are what :meth:`sfclab.network.Network.class_traffic` makes: the
ingress host's traffic to the egress host, covering the chain's service paths.

``sfclab diff-targets CHAINS --topology NET.topo --a net --b "mininet?switch=bmv2"``
is the command line of it.

>>> import sfclab
>>> from sfclab.ir.topology import line
>>> net = sfclab.Network(line(2, stages=8), "chain web match tcp.dport == 80: monitor -> nat")
>>> traffic = {"web": ("h1", net.class_traffic("web", 2))}
>>> report = diff_network_targets(net.program, "net", "net", traffic)
>>> print(report.text())
2 packets on net and net: every packet ran the same way (fate, egress, bytes, NFs, switches, service path)
service paths covered: 1 of 1
>>> net.close()
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...codegen.network import NetworkProgram
from ..traffic.coverage import ClassTraffic
from ..diff import DiffReport
from .connect import open_network_target, target_name
from .trace import NetworkTrace

__all__ = ["NetworkDiffReport", "Divergence", "diff_network_targets", "compare_traces"]


@dataclass(frozen=True, slots=True)
class Divergence:
    """One packet the two targets ran differently: its chain, its number in the
    chain's traffic, what differs, and both traces."""

    chain: str
    index: int
    what: tuple[str, ...]
    a: NetworkTrace
    b: NetworkTrace


@dataclass
class NetworkDiffReport:
    """How two network targets ran the same packets."""

    a: str
    b: str
    compared: int = 0
    #: Per chain: packets compared, and how many of them ran the same way.
    same_per_chain: dict[str, tuple[int, int]] = field(default_factory=dict)
    divergences: list[Divergence] = field(default_factory=list)
    #: Per chain: its packets and the service paths they cover (on the embedded model).
    coverage: dict[str, ClassTraffic] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        return not self.divergences

    #: How many service paths the packets covered, and a line per missed path.
    coverage_text = DiffReport.coverage_text

    def text(self) -> str:
        head = f"{self.compared} packets on {self.a} and {self.b}: "
        if self.same:
            return "\n".join([head + "every packet ran the same way (fate, egress, bytes, NFs, "
                                     "switches, service path)", self.coverage_text()])
        d = self.divergences[0]
        chains = ", ".join(f"{c} {s}/{n}" for c, (n, s) in self.same_per_chain.items())
        lines = [head + f"{len(self.divergences)} diverge (the same, per chain: {chains}); "
                        f"the first is packet {d.index} of {d.chain}:"]
        lines += [f"  {w}" for w in d.what]
        lines += [f"--- {self.a}:", d.a.text(), f"--- {self.b}:", d.b.text(),
                  self.coverage_text()]
        return "\n".join(lines)


def compare_traces(a: NetworkTrace, b: NetworkTrace) -> list[str]:
    """What differs between two network traces of the same packet: its fate (where it
    was delivered, or where and why it was dropped), the bytes delivered, the NFs,
    the switches crossed, the service path (when both targets tell it)."""
    out = []
    if a.outcome() != b.outcome():
        out.append(f"fate: {a.outcome()} vs {b.outcome()}")
    elif sorted(a.delivered) != sorted(b.delivered):
        out.append("bytes delivered differ: " + "; ".join(
            f"{h}: {d.hex()}" for h, d in sorted(a.delivered)) + " vs " + "; ".join(
            f"{h}: {d.hex()}" for h, d in sorted(b.delivered)))
    if a.nfs() != b.nfs():
        out.append(f"NFs: {' -> '.join(a.nfs()) or '(none)'} vs {' -> '.join(b.nfs()) or '(none)'}")
    if a.switches() != b.switches():
        out.append(f"switches: {' -> '.join(a.switches())} vs {' -> '.join(b.switches())}")
    if a.path != b.path and a.path is not None and b.path is not None:
        out.append(f"service path: {a.path} vs {b.path}")
    return out


def diff_network_targets(program: NetworkProgram, a: Any, b: Any,
                         traffic: Mapping[str, tuple[str, ClassTraffic]]) -> NetworkDiffReport:
    """Push *program* to network targets *a* and *b* (URLs, see :mod:`.connect`, or
    target objects, pushed here and left open), send every packet of *traffic*
    (chain -> ``(the node it enters from, its class traffic)``) on both, and compare
    them packet by packet.  Targets opened from URLs are closed at the end; two
    Mininet networks get interface prefixes of their own unless their URLs give one."""
    topology = program.topology
    opened = []
    try:
        ta, tb = (_open(t, topology, opened) for t in (a, b))
        ta.push(program)
        tb.push(program)
        report = NetworkDiffReport(_name(a), _name(b))
        for chain, (src, plan) in traffic.items():
            report.coverage[chain] = plan
            same = 0
            for k, cp in enumerate(plan.packets):
                data = bytes(cp.packet)
                ra, rb = ta.send(src, data, label=chain), tb.send(src, data, label=chain)
                what = compare_traces(ra, rb)
                report.compared += 1
                if what:
                    report.divergences.append(Divergence(chain, k, tuple(what), ra, rb))
                else:
                    same += 1
            report.same_per_chain[chain] = (len(plan.packets), same)
        return report
    finally:
        for t in opened:
            t.close()


def _name(t: Any) -> str:
    return target_name(t) if isinstance(t, str) or t is None else repr(t)


def _open(t: Any, topology, opened: list) -> Any:
    if t is not None and not isinstance(t, str):
        return t
    url = t or "net"
    if url.partition("?")[0] == "mininet" and "prefix=" not in url:
        # its switches' interfaces are in the root namespace: a name of their own
        url += ("&" if "?" in url else "?") + f"prefix=d{uuid.uuid4().hex[:3]}"
    target = open_network_target(url, topology)
    opened.append(target)
    return target
