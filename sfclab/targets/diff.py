"""The differential check: the same program and packets on two targets, packet by packet.

:func:`diff_targets` pushes one generated program to two targets, sends the
same packets of every class to both, and compares each packet's traces
(:func:`~sfclab.targets.trace.diff_traces`: egress port or drop, output bytes,
NF sequence, passes, tables applied).  The packets of a class cover every
service path the embedded model finds for it (:mod:`sfclab.targets.coverage`),
so both targets run every branch outcome; the report says which paths were
covered, names the first packet that diverges and shows both traces.  A packet
that detours through a program's server is compared whole: each target plays
the server (:mod:`sfclab.targets.network.detour`), and the traces include the
detour.  It is how
sfclab's embedded model is held to BMv2: ``sfclab diff-targets CHAINS`` (the model
against a ``simple_switch_grpc`` sfclab starts) on a machine with BMv2 and p4c.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> report = diff_targets(generate(sfclab.compile("chain a: l2fwd")), "model", "model", packets=2)
>>> report.same, report.compared
(True, 2)
>>> print(report.coverage_text())
service paths covered: 1 of 1
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..codegen import Generated, generate
from .connect import open_target
from .coverage import ClassTraffic, all_class_traffic
from .network.detour import for_targets
from .packet_io import send_many
from .trace import diff_traces

__all__ = ["DiffReport", "diff_targets"]


@dataclass
class DiffReport:
    """How two targets ran the same packets."""

    a: str
    b: str
    compared: int = 0
    divergences: list[tuple[str, int, list[str], str, str]] = field(default_factory=list)
    #: Per chain: its packets and the service paths they cover (on the embedded model).
    coverage: dict[str, ClassTraffic] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        return not self.divergences

    def coverage_text(self) -> str:
        """How many service paths the packets covered, and a line per missed path."""
        paths = sum(len(t.paths) for t in self.coverage.values())
        covered = sum(len(t.covered) for t in self.coverage.values())
        lines = [f"service paths covered: {covered} of {paths}"]
        lines += [line for t in self.coverage.values() for line in t.missed_lines()]
        return "\n".join(lines)

    def text(self) -> str:
        head = f"{self.compared} packets on {self.a} and {self.b}: "
        if self.same:
            return "\n".join([head + "every packet ran the same way (outcome, bytes, NFs, "
                              "passes, tables)", self.coverage_text()])
        chain, k, what, ta, tb = self.divergences[0]
        lines = [head + f"{len(self.divergences)} diverge; the first is packet {k} of {chain}:"]
        lines += [f"  {w}" for w in what]
        lines += [f"--- {self.a}:", ta, f"--- {self.b}:", tb, self.coverage_text()]
        return "\n".join(lines)


def diff_targets(gen: Generated, a="model", b="model", *, packets: int = 4,
                 seed: int = 0) -> DiffReport:
    """Push *gen* to targets *a* and *b* (URLs or target objects), send *packets* of every
    class to both (covering its service paths), and compare them packet by packet."""
    v1 = gen if gen.arch == "v1model" else generate(
        gen.compiled, arch="v1model", options=gen.composition.options)
    coverage = all_class_traffic(v1, packets, seed=seed)
    ta = open_target(a) if isinstance(a, (str, type(None))) else a
    tb = open_target(b) if isinstance(b, (str, type(None))) else b
    report = DiffReport(repr(ta), repr(tb), coverage=coverage)
    try:
        _same_ports(ta, tb)
        gen = for_targets(gen, ta, tb)     # the server port their URLs declare, if any
        ta.push(gen)
        tb.push(gen)
        for name, plan in coverage.items():
            pairs = [(cp.port, cp.packet) for cp in plan.packets]
            # in batches where a target takes them (BMv2), one by one otherwise
            for k, (ra, rb) in enumerate(zip(send_many(ta, pairs), send_many(tb, pairs),
                                             strict=True)):
                report.compared += 1
                what = diff_traces(ra.trace, rb.trace,
                                   outputs=(_as_controller_sees(ra), _as_controller_sees(rb)))
                if what:
                    report.divergences.append((name, k, what, ra.trace.text(),
                                               rb.trace.text()))
    finally:
        for t, given in ((ta, a), (tb, b)):
            if isinstance(given, (str, type(None))):
                t.close()
    return report


def _same_ports(ta, tb) -> None:
    """Give both targets' sessions the ports they have in common, so a flood floods
    out of the same ports on both (the model has 1..8, a BMv2 its interfaces)."""
    pa, pb = (t.switch_ports() if hasattr(t, "switch_ports") else None for t in (ta, tb))
    if pa is not None and pb is not None and set(pa) != set(pb):
        common = tuple(sorted(set(pa) & set(pb)))
        for t in (ta, tb):
            t.session.ports = common


def _as_controller_sees(result) -> list[tuple[int, bytes]]:
    """A packet's outputs, each copy to the CPU port as a controller receives it: the
    payload of its packet-in (its controller header is P4Runtime metadata, which a
    BMv2 target reports that way and the model's raw CPU-port frame still carries).
    Packet-ins come in the order of their CPU-port frames."""
    ins = list(getattr(result, "packet_ins", ()))
    out = []
    for port, data in result.outputs:
        if ins and data != ins[0].payload and data.endswith(ins[0].payload):
            data = ins.pop(0).payload
        out.append((port, data))
    return out
