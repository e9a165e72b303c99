"""The differential check: the same program and packets on two targets, packet by packet.

:func:`diff_targets` pushes one generated program to two targets, sends the
same packets of every class to both, and compares each packet's traces
(:func:`~sfclab.targets.traces.trace.diff_traces`: egress port or drop, output bytes,
NF sequence, passes, tables applied).  Targets of two architectures
(``model`` and ``model?arch=tna``) each get the chains' program for their own
and are compared across them: each packet's outcome (its egress ports, the CPU
port standing for the CPU port whatever its number), its output bytes and the NFs
it ran, in order; passes and table names differ by design (Tofino's pipelets,
bridged metadata, pipeline-prefixed names) and are not compared.  The packets of a class cover every
service path the embedded model finds for it (:mod:`sfclab.targets.traffic.coverage`),
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

import dataclasses
from dataclasses import dataclass, field

from ..codegen import Generated, generate
from .connect import open_target
from .traffic.coverage import ClassTraffic, all_class_traffic
from .network.detour import for_targets
from .ports.packet_io import send_many
from .traces.trace import diff_traces

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
    #: The targets run different architectures (v1model and TNA).
    across: bool = False

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
            what = ("outcome, bytes, NFs; across architectures, passes and tables are not "
                    "compared" if self.across else "outcome, bytes, NFs, passes, tables")
            return "\n".join([head + f"every packet ran the same way ({what})",
                              self.coverage_text()])
        chain, k, what, ta, tb = self.divergences[0]
        lines = [head + f"{len(self.divergences)} diverge; the first is packet {k} of {chain}:"]
        lines += [f"  {w}" for w in what]
        lines += [f"--- {self.a}:", ta, f"--- {self.b}:", tb, self.coverage_text()]
        return "\n".join(lines)


def diff_targets(gen: Generated, a="model", b="model", *, packets: int = 4,
                 seed: int = 0) -> DiffReport:
    """Push *gen* to targets *a* and *b* (URLs or target objects), send *packets* of every
    class to both (covering its service paths), and compare them packet by packet.  A
    target of the other architecture than *gen*'s gets the same chains generated for its
    own (``model?arch=tna``: TNA)."""
    v1 = gen if gen.arch == "v1model" else generate(
        gen.compiled, arch="v1model", options=gen.composition.options)
    coverage = all_class_traffic(v1, packets, seed=seed)
    ta = open_target(a) if isinstance(a, (str, type(None))) else a
    tb = open_target(b) if isinstance(b, (str, type(None))) else b
    report = DiffReport(repr(ta), repr(tb), coverage=coverage)
    try:
        _same_ports(ta, tb)
        ga, gb = (for_targets(_for_arch(gen, v1, t), ta, tb) for t in (ta, tb))
        report.across = ga.arch != gb.arch
        ta.push(ga)
        tb.push(gb)
        cpu = (getattr(ta, "cpu_port", None), getattr(tb, "cpu_port", None))
        for name, plan in coverage.items():
            pairs = [(cp.port, cp.packet) for cp in plan.packets]
            # in batches where a target takes them (BMv2), one by one otherwise
            for k, (ra, rb) in enumerate(zip(send_many(ta, pairs), send_many(tb, pairs),
                                             strict=True)):
                report.compared += 1
                outs = (_as_controller_sees(ra), _as_controller_sees(rb, cpu[1], cpu[0]))
                what = diff_traces(ra.trace, rb.trace, outputs=outs, across=report.across)
                if what:
                    report.divergences.append((name, k, what, ra.trace.text(),
                                               rb.trace.text()))
    finally:
        for t, given in ((ta, a), (tb, b)):
            if isinstance(given, (str, type(None))):
                t.close()
    return report


def _for_arch(gen: Generated, v1: Generated, target) -> Generated:
    """The chains' program for *target*'s architecture (*gen* when it is *gen*'s): the
    chains compiled again for it, with the same options (TNA's placement pass runs only
    for TNA, for the target's pipes), and generated with *gen*'s."""
    arch = getattr(target, "arch", gen.arch)
    if arch == gen.arch:
        return gen
    if arch == "v1model":
        return v1
    c = gen.compiled
    pipes = getattr(target, "pipes", None)
    if c.arch != arch or (pipes is not None and c.options.pipes != pipes):
        from ..compiler import compile

        opts = {f.name: getattr(c.options, f.name) for f in dataclasses.fields(c.options)}
        if pipes is not None:
            opts["pipes"] = pipes             # the placement plans for the target's pipes
        c = compile(c.chains, arch=arch, catalog=c.catalog, **opts)
    return generate(c, arch=arch, options=gen.composition.options)


def _same_ports(ta, tb) -> None:
    """Give both targets' sessions the ports they have in common, so a flood floods
    out of the same ports on both (the model has 1..8, a BMv2 its interfaces)."""
    pa, pb = (t.switch_ports() if hasattr(t, "switch_ports") else None for t in (ta, tb))
    if pa is not None and pb is not None and set(pa) != set(pb):
        common = tuple(sorted(set(pa) & set(pb)))
        for t in (ta, tb):
            t.session.ports = common


def _as_controller_sees(result, cpu: int | None = None,
                        as_cpu: int | None = None) -> list[tuple[int, bytes]]:
    """A packet's outputs, each copy to the CPU port as a controller receives it: the
    payload of its packet-in (its controller header is P4Runtime metadata, which a
    BMv2 target reports that way and the model's raw CPU-port frame still carries).
    Packet-ins come in the order of their CPU-port frames.  Copies to port *cpu* (this
    target's CPU port) are reported on *as_cpu* (the other target's), so two
    architectures' CPU ports compare equal."""
    ins = list(getattr(result, "packet_ins", ()))
    swap = cpu is not None and as_cpu is not None and cpu != as_cpu
    out = []
    for port, data in result.outputs:
        if ins and data != ins[0].payload and data.endswith(ins[0].payload):
            data = ins.pop(0).payload
        if swap and port == as_cpu:
            port = -1                         # a data port numbered as the other's CPU port
        elif swap and port == cpu:
            port = as_cpu
        out.append((port, data))
    return out
