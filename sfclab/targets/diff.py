"""The differential check: the same program and packets on two targets, packet by packet.

:func:`diff_targets` pushes one generated program to two targets, sends the
same packets of every class to both, and compares each packet's traces
(:func:`~sfclab.targets.trace.diff_traces`: egress port or drop, output bytes,
NF sequence, passes, tables applied).  The report names the first packet that
diverges and shows both traces.  It is how sfclab's embedded model is held to
BMv2: ``sfclab diff-targets CHAINS`` (the model against a ``simple_switch_grpc``
sfclab starts) on a machine with BMv2 and p4c.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> report = diff_targets(generate(sfclab.compile("chain a: l2fwd")), "model", "model", packets=2)
>>> report.same, report.compared
(True, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..codegen import Generated
from ..runtime.traffic import packets_for
from .connect import open_target
from .trace import diff_traces

__all__ = ["DiffReport", "diff_targets"]


@dataclass
class DiffReport:
    """How two targets ran the same packets."""

    a: str
    b: str
    compared: int = 0
    divergences: list[tuple[str, int, list[str], str, str]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.divergences

    def text(self) -> str:
        head = f"{self.compared} packets on {self.a} and {self.b}: "
        if self.same:
            return head + "every packet ran the same way (outcome, bytes, NFs, passes, tables)"
        chain, k, what, ta, tb = self.divergences[0]
        lines = [head + f"{len(self.divergences)} diverge; the first is packet {k} of {chain}:"]
        lines += [f"  {w}" for w in what]
        lines += [f"--- {self.a}:", ta, f"--- {self.b}:", tb]
        return "\n".join(lines)


def diff_targets(gen: Generated, a="model", b="model", *, packets: int = 4,
                 seed: int = 0) -> DiffReport:
    """Push *gen* to targets *a* and *b* (URLs or target objects), send *packets* of every
    class to both, and compare them packet by packet."""
    ta = open_target(a) if isinstance(a, (str, type(None))) else a
    tb = open_target(b) if isinstance(b, (str, type(None))) else b
    report = DiffReport(repr(ta), repr(tb))
    try:
        ta.push(gen)
        tb.push(gen)
        chains = gen.composition.compiled.chains
        for chain in chains:
            for k, cp in enumerate(packets_for(chain, packets, seed=seed, chains=chains)):
                ra, rb = ta.send(cp.port, cp.packet), tb.send(cp.port, cp.packet)
                report.compared += 1
                what = diff_traces(ra.trace, rb.trace)
                if what:
                    report.divergences.append((chain.name, k, what, ra.trace.text(),
                                               rb.trace.text()))
    finally:
        for t, given in ((ta, a), (tb, b)):
            if isinstance(given, (str, type(None))):
                t.close()
    return report
