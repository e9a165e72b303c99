"""``sfclab demo``: the whole product in one command, on the embedded model.

It compiles a realistic chain set (P4SC Table III's data-centre, HTTP and
Gi-LAN requests, FlexMesh Fig. 9's core and edge policies and a P4SFC chain
whose IPS runs on a server, ``demo.sfc``),
shows what every pass decided (merge, pipeline with naive / MA-FSA / optimal
recirculations, FSM, placement, offload), pushes the program and its entries to
the target over P4Runtime, sends packets of every class (chosen to cover every
service path the embedded model finds: :mod:`sfclab.targets.traffic.coverage`), and
prints the paths each class took, the paths no packet reached and why, a trace
per class and the tables' occupancy.  The target plays the server: packets of
the P4SFC chain go out of the switch's server port, through the IPS and back
(:mod:`sfclab.codegen.detour`).  ``--html FILE``
writes the same as a self-contained report.

>>> result = run(packets=2, out=None)
>>> sorted(result.classes)
['SFC1_DC', 'SFC2_HTTP', 'SFC3_GiLAN', 'core', 'edge', 'web_ips']
>>> result.ok
True
"""

from __future__ import annotations

import io
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TextIO

from ..codegen import CodegenOptions, generate
from ..compiler import compile
from ..ir.values import ValueKinds
from ..lang import parse
from ..api.values import TableUse
from .report import bar, html_report, log_share, occupancy_text, target_text
from ..targets.connect import open_target
from ..targets.traffic.coverage import Oracle, class_traffic
from ..targets.network.detour import for_targets
from ..targets.traces.timeline import timeline_text

__all__ = ["run", "DemoResult", "ClassResult", "demo_chains", "planned"]


def demo_chains() -> str:
    """The demo's chain text."""
    return resources.files(__package__).joinpath("demo.sfc").read_text()


@dataclass
class ClassResult:
    """What the packets of one class did."""

    chain: str
    sent: int = 0
    paths: Counter = field(default_factory=Counter)
    passes: Counter = field(default_factory=Counter)
    ports: Counter = field(default_factory=Counter)
    dropped: int = 0
    trace: str = ""
    planned: dict[str, tuple[tuple[str, ...], int, str]] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    #: Packets an NF dropped part-way along their path, by that NF.
    nf_drops: Counter = field(default_factory=Counter)
    #: Service paths no packet of the class took: path -> why.
    missed: dict[str, str] = field(default_factory=dict)
    #: Path id -> the path with its branch decisions, for messages.
    labels: dict[str, str] = field(default_factory=dict)
    #: Path id -> what ran on the server and behind which port (paths that detour).
    detours: dict[str, str] = field(default_factory=dict)


@dataclass
class DemoResult:
    classes: dict[str, ClassResult]
    report: str

    @property
    def ok(self) -> bool:
        """Every packet ran a planned service path with the planned number of passes."""
        return all(not c.mismatches and c.sent for c in self.classes.values())

    def verdict(self) -> str:
        """The demo's last line: whether every packet ran its planned path, and which
        service paths no packet took (the lines above say why)."""
        if not self.ok:
            return "SOME PACKETS DID NOT RUN THEIR PLANNED PATH:\n" + "\n".join(
                m for c in self.classes.values() for m in c.mismatches[:3])
        planned = sum(len(c.planned) for c in self.classes.values())
        missed = [p for c in self.classes.values() for p in c.missed]
        if not missed:
            return f"every packet ran its planned service path, and all {planned} service " \
                   f"paths ran"
        return (f"every packet ran its planned service path; {planned - len(missed)} of "
                f"{planned} service paths ran: no packet was found for {', '.join(missed)} "
                f"(see 'none on' above)")


class _Progress:
    """A one-line progress display on a terminal (nothing when not a terminal)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None

    def step(self, text: str, done: int = 0, total: int = 0) -> None:
        if self.stream is None:
            return
        tail = f" [{bar(done / total, 24)}] {done}/{total}" if total else ""
        self.stream.write(f"\r\x1b[K{text}{tail}")
        self.stream.flush()

    def done(self) -> None:
        if self.stream is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


_STD = object()


def run(*, target: str | None = None, packets: int = 8, html: str | Path | None = None,
        out: TextIO | None = _STD, progress: TextIO | None = _STD) -> DemoResult:
    """Run the demo; print to *out* (standard output by default; None: keep the text
    in the result only) and show progress on *progress* (standard error, a terminal)."""
    out = sys.stdout if out is _STD else out
    progress = sys.stderr if progress is _STD else progress
    buf = io.StringIO()

    def say(text: str = "") -> None:
        buf.write(text + "\n")
        if out is not None:
            out.write(text + "\n")
            out.flush()

    prog = _Progress(progress)
    prog.step("compiling the demo chains …")
    t0 = time.perf_counter()
    chains = parse(demo_chains(), source="demo.sfc")
    compiled = compile(chains, arch="v1model", placement=True)
    options = CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3})
    gen = generate(compiled, options=options)
    t_compile = time.perf_counter() - t0
    say(f"sfclab demo: {len(chains)} chains, {len(compiled.paths)} service paths, compiled "
        f"and generated in {t_compile * 1000:.0f} ms")
    say()
    plan = _plan_text(compiled)
    say(plan)

    prog.step("starting the target …")
    with open_target(target) as tgt:
        gen = for_targets(gen, tgt)
        t0 = time.perf_counter()
        n = tgt.push(gen)
        say(f"pushed the program and {n} table entries to {target_text(tgt)} in "
            f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        if gen.detour is not None:
            say(_detour_text(gen.detour))
            say(_switch_pipeline(gen))
        say()
        kinds = ValueKinds.of_program(gen.program.program)
        classes, lookups = _traffic(tgt, gen, packets, prog, kinds)
        prog.done()
        say(_classes_text(classes))
        say()
        for c in classes.values():
            say(f"trace of a {c.chain} packet:")
            say(c.trace)
            say()
        occ = [TableUse(o.table, o.entries, o.size, lookups[o.table, True],
                        lookups[o.table, False]) for o in tgt.occupancy()]
        say(_occupancy_text(occ))
    result = DemoResult(classes, buf.getvalue())
    say()
    say(result.verdict())
    if html is not None:
        Path(html).write_text(_html(compiled, gen, classes, occ, plan))
        say(f"wrote {html}")
    result.report = buf.getvalue()          # the verdict too
    return result


def _plan_text(compiled) -> str:
    pl = compiled.pipeline
    lines = [compiled.summary(), "", "pipelines (weighted recirculations, slots, worst path):"]
    for p in (pl.naive, pl.mafsa, pl.optimal):
        r = p.report
        lines.append(f"  {p.method:<10} {r.weighted_recirculations:7.3f}  {r.slots:3d} slots  "
                     f"worst {r.worst_passes} passes{'' if p.exact else '  (heuristic)'}")
    lines.append(f"  chosen: {pl.chosen.method}: {' | '.join(pl.chosen.slots)}")
    if compiled.placement is not None:
        plc = compiled.placement
        lines += ["", f"placement on {plc.pipes} pipes x {plc.stages} stages: naive "
                      f"{plc.naive.weighted_recirculations:.3g} vs placed "
                      f"{plc.best.weighted_recirculations:.3g} weighted recirculations"]
        lines += [f"  {pid}: throughput {t:.2f} T" for pid, t in plc.best.throughput]
    if compiled.offload is not None:
        lines += ["", "offload (P4SFC): where each NF runs; (partial): on the switch, its state "
                      "kept by a server process"]
        lines += [f"  {s}" for s in compiled.offload.paths]
    return "\n".join(lines)


def _detour_text(detour) -> str:
    """The paths that detour through the server, and what it runs for them."""
    lines = [f"the target plays the server behind port {detour.port}: the switch sends "
             f"{len(detour.server_paths())} service path(s) there (P4SFC's split)"]
    for pid in detour.server_paths():
        pre, mid, post = (", ".join(s.nfs) or "-" for s in detour.journeys[pid])
        lines.append(f"  {pid}: switch [{pre}] -> server [{mid}] -> switch [{post}]")
    return "\n".join(lines)


def _switch_pipeline(gen) -> str:
    """The pipeline on the switch, when it differs from the compiled one (server NFs
    have no slot)."""
    slots = gen.composition.compiled.pipeline.chosen.slots
    return f"  the switch's pipeline (no slot for the server's NFs): {' | '.join(slots)}"


def planned(gen) -> dict[str, tuple[tuple[str, ...], int, str]]:
    """Every service path's planned run: (NFs, passes through the pipeline, terminal);
    a path that detours through a server passes the switch's pipeline on each visit."""
    detour = gen.detour
    return {f.path.id: (f.path.nfs, detour.passes[f.path.id] if detour else f.passes,
                        f.path.terminal) for f in gen.compiled.fsm.paths}


def _traffic(tgt, gen, packets: int, prog: _Progress, kinds: ValueKinds
             ) -> tuple[dict[str, ClassResult], Counter]:
    """Send *packets* of every class, chosen to cover its service paths; what each
    class did, and the lookups per ``(table, hit)``."""
    compiled = gen.compiled
    plans = planned(gen)
    classes: dict[str, ClassResult] = {}
    lookups: Counter = Counter()
    total = packets * len(compiled.chains)
    done = 0
    with Oracle(gen) as oracle:
        for chain in compiled.chains:
            c = classes[chain.name] = ClassResult(chain.name)
            c.planned = {p: plan for p, plan in plans.items()
                         if p.rpartition("/")[0] == chain.name}
            if gen.detour is not None:
                c.detours = {p: f"{', '.join(s.nfs)} on the server behind port {s.exit[1]}"
                             for p in c.planned for s in gen.detour.journeys[p]
                             if s.kind == "server"}
            prog.step(f"finding packets for every path of {chain.name}", done, total)
            plan = class_traffic(gen, chain.name, packets, oracle=oracle)
            c.labels = dict(plan.labels)
            for cp in plan.packets:
                r = _send_one(tgt, c, chain.name, cp, plans, kinds)
                lookups.update((name, hit) for name, hit in r.trace.tables())
                done += 1
                prog.step(f"sending packets of every class ({chain.name})", done, total)
            c.missed = {p: plan.missed.get(p, "its packets took another path on the target")
                        for p in plan.paths if p not in c.paths}
    return classes, lookups


def _send_one(tgt, c: ClassResult, chain: str, cp, plans, kinds: ValueKinds):
    r = tgt.send(cp.port, cp.packet)
    c.sent += 1
    took = tgt.session.path_of(r.trace)
    c.paths[took] += 1
    c.passes[r.passes] += 1
    if r.dropped:
        c.dropped += 1
    for port in r.ports:
        c.ports[port] += 1
    plan = plans.get(took)
    nfs = tuple(r.trace.nfs())
    if plan is None or not _follows(plan, nfs, r):
        c.mismatches.append(f"{chain}: took {took}, NFs {list(nfs)}, {r.passes} passes")
    if r.dropped and plan is not None and nfs != plan[0]:
        c.nf_drops[nfs[-1] if nfs else "initializer"] += 1
    if not c.trace:
        c.trace = timeline_text(r.trace, kinds, path=took)
    return r


def _follows(plan: tuple[tuple[str, ...], int, str], nfs: tuple[str, ...], r) -> bool:
    """The packet ran the planned path (NFs, passes), or a prefix of it and an NF
    dropped it there."""
    want, passes, _ = plan
    if nfs == want:
        return r.passes == passes
    return r.dropped and want[:len(nfs)] == nfs and r.passes <= passes


def _classes_text(classes: dict[str, ClassResult]) -> str:
    lines = ["traffic per class:"]
    for c in classes.values():
        out = "all dropped" if c.dropped == c.sent else ", ".join(
            f"port {p}: {n}" for p, n in sorted(c.ports.items()))
        lines.append(f"  {c.chain}: {c.sent} packets, {out}")
        for pid, k in sorted(c.paths.items(), key=lambda x: str(x[0])):
            nfs, passes, term = c.planned.get(pid, ((), 0, "?"))
            via = f" ({c.detours[pid]})" if pid in c.detours else ""
            lines.append(f"    {k} on {pid}: {' -> '.join(nfs) or '(no NF)'} -> {term}, "
                         f"{passes} pass{'es' if passes != 1 else ''}{via}")
        for nf, k in c.nf_drops.items():
            lines.append(f"    {k} dropped by {nf} part-way (its entries decide: see the trace)")
        for pid, why in c.missed.items():
            lines.append(f"    none on {c.labels.get(pid, pid)}: {why}")
    return "\n".join(lines)


def _occupancy_text(occ) -> str:
    used = [o for o in occ if o.entries or o.hits or o.misses]
    return "table occupancy (entries / size):\n" + "\n".join(
        "  " + line for line in occupancy_text(used).splitlines())


def _html(compiled, gen, classes, occ, plan: str) -> str:
    rows = [[c.chain, c.sent, ", ".join(f"{p}×{k}" for p, k in c.paths.items()),
             ", ".join(f"{k} pass(es)×{n}" for k, n in c.passes.items()), c.dropped,
             ", ".join(f"{p}×{n}" for p, n in c.ports.items())] for c in classes.values()]
    occ_rows = [[o.table, o.entries, o.size, bar(log_share(o.entries, o.size), 20), o.hits,
                 o.misses] for o in occ if o.entries or o.hits or o.misses]
    traces = "\n\n".join(f"{c.chain}:\n{c.trace}" for c in classes.values())
    return html_report(
        "sfclab demo", chains=compiled.chains, catalog=compiled.catalog,
        sections=[("What the compiler decided", plan), ("Packet traces (one per class)", traces)],
        tables=[("Traffic per class", ["class", "sent", "service paths", "passes", "dropped",
                                       "egress ports"], rows),
                ("Table occupancy", ["table", "entries", "size", "log scale", "hits",
                                     "misses"], occ_rows)],
        program=gen.program.text)
