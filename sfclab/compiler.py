"""The compiler driver: chains in, every pass's output in one :class:`CompiledChains`.

>>> import sfclab.compiler as sc
>>> out = sc.compile("chain p: L3_SW -> FW -> NAT\\nchain r: L3_SW -> NAT -> FW")
>>> out.pipeline.slots
('l3fwd', 'firewall', 'nat', 'firewall')
>>> print(out.summary())                                  # doctest: +ELLIPSIS
2 chains, 2 service paths (v1model)
merge: lcs: 4 nodes, 4 tables (1 duplicated); parallel: 7 nodes, 6 tables (3 duplicated)
pipeline (mafsa): l3fwd | firewall | nat | firewall
...
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import CompileError, SourceWarning, did_you_mean
from .ir.model import Chain, ChainSet, ServicePath
from .nfinfo import NFCatalog
from .passes import PASSES, CompileOptions
from .passes.fsm import FSMPlan
from .passes.merge import MergedIR
from .passes.offload import OffloadResult
from .passes.pipeline import PipelineResult
from .passes.placement import PlacementResult

__all__ = ["ARCHS", "CompiledChains", "compile"]

#: Architectures the code generator knows.
ARCHS = ("v1model", "tna")


@dataclass(frozen=True, slots=True)
class CompiledChains:
    """Every pass's output for one set of chains (``None`` for a pass not run)."""

    chains: ChainSet
    paths: tuple[ServicePath, ...]
    catalog: NFCatalog
    arch: str
    options: CompileOptions
    merge: MergedIR | None = None
    pipeline: PipelineResult | None = None
    fsm: FSMPlan | None = None
    placement: PlacementResult | None = None
    offload: OffloadResult | None = None
    timings: tuple[tuple[str, float], ...] = field(default=())
    #: Chains no packet reaches (:func:`sfclab.ir.validate.shadowed`), located at their names.
    warnings: tuple[SourceWarning, ...] = field(default=())

    def summary(self) -> str:
        """A few lines: sizes, the chosen pipeline, passes, token widths."""
        lines = [f"{len(self.chains.names())} chains, {len(self.paths)} service paths ({self.arch})"]
        if self.merge:
            lines.append(f"merge: {self.merge.lcs}; {self.merge.parallel}")
        if self.pipeline:
            ch = self.pipeline.chosen
            r = ch.report
            lines.append(f"pipeline ({ch.method}): {' | '.join(ch.slots)}")
            lines.append(f"  {r.slots} slots, {r.duplicated_slots} duplicated, "
                         f"{r.weighted_recirculations:.4g} weighted recirculations, "
                         f"worst path {r.worst_passes} passes")
        if self.fsm:
            w = self.fsm.widths
            saves = f", {len(self.fsm.saves)} save entries" if self.fsm.saves else ""
            lines.append(f"fsm: {len(self.fsm.rewinder)} rewinder entries, "
                         f"{len(self.fsm.branches)} branch entries{saves}; token bits: path id "
                         f"{w.path_id}, state {w.state}, bitmap {w.bitmap}, counter {w.counter}"
                         + (f", saved metadata {self.fsm.n_saved} x 32" if saves else ""))
        if self.placement:
            copies = self.placement.best.replicas()
            twice = (", replicas: " + ", ".join(f"{nf} x{k}" for nf, k in copies.items())
                     if copies else "")
            lines.append(f"placement: {self.placement.best.weighted_recirculations:.4g} weighted "
                         f"recirculations (naive {self.placement.naive.weighted_recirculations:.4g}"
                         f"{twice})")
        if self.offload:
            srv = sum(1 for s in self.offload.paths if not s.switch_only)
            lines.append(f"offload: {len(self.paths) - srv} paths on the switch only, "
                         f"{srv} need a server")
        return "\n".join(lines)

    def explain(self) -> str:
        """Everything, pass by pass, as plain text (``sfclab compile --explain``)."""
        out = [self.summary(), "", "service paths:"]
        out += [f"  {p.describe()}" for p in self.paths]
        if self.merge:
            out += ["", "merged IR (P4SC Algorithm 1), nodes in order:"]
            for n in self.merge.nodes:
                out.append(f"  {n.name} [{n.nf}, {n.tables} tables] chains "
                           f"{{{', '.join(sorted(n.chains))}}} paths {{{', '.join(sorted(n.paths))}}}")
            out.append("  links: " + ", ".join(f"{u}->{v}" for u, v in self.merge.edges))
        if self.pipeline:
            out += ["", f"pipelines (NF pairs by layer: "
                        f"{', '.join(f'{a}>{b}' for a, b in self.pipeline.pairs)}):"]
            out += [f"  {p}{'' if p.exact else ' [heuristic]'}" for p in self.pipeline.candidates()]
            out.append(f"  chosen: {self.pipeline.chosen.method}")
        if self.fsm:
            out += ["", "fsm (slot i = bitmap bit i):"]
            out += [f"  slot {i}: {nf}" for i, nf in enumerate(self.fsm.slots)]
            for f in self.fsm.paths:
                states = "; ".join(f"s{s.state} {bin(s.bitmap)} [{', '.join(s.nodes)}]"
                                   + (f" counter {s.counter}" if s.counter else "")
                                   for s in f.states)
                out.append(f"  {f.path.id} #{f.num}: {f.passes} passes: {states}")
            out += ["  initializer:"] + [f"    {e.chain} -> {e.path} #{e.path_num}, bitmap "
                                          f"{bin(e.bitmap)}" for e in self.fsm.initializer]
            out += ["  rewinder:"] + [f"    {e}" for e in self.fsm.rewinder]
            if self.fsm.branches:
                out += ["  branches:"] + [f"    {e}" for e in self.fsm.branches]
            if self.fsm.saves:
                out += ["  saved metadata (an NF's value a later branch tests):"]
                out += [f"    {c}: " + ", ".join(f"{nf} -> saved_md{k}" for k, nf in
                                                   enumerate(nfs)) for c, nfs in self.fsm.saved]
                out += [f"    {e}" for e in self.fsm.saves]
        if self.placement:
            pl = self.placement
            core = (f"sfclab's core {pl.reserved.ingress} of each ingress, "
                    f"{pl.reserved.egress} of each egress, " if pl.reserved.ingress
                    or pl.reserved.egress else "")
            out += ["", f"placement ({pl.pipes} pipes x {pl.stages} stages, {core}"
                        f"external share {pl.external_share:.2f}):", f"  {pl.naive}", f"  {pl.best}"]
            out += [f"  {pid}: {k} recirculations, throughput {t:.2f} T"
                    for (pid, k), (_, t) in zip(pl.best.recirculations, pl.best.throughput)]
        if self.offload:
            out += ["", "offload (P4SFC):"] + [f"  {s}" for s in self.offload.paths]
        if self.timings:
            out += ["", "timings: " + ", ".join(f"{n} {t * 1000:.1f} ms" for n, t in self.timings)]
        return "\n".join(out)


def _chainset(chains: ChainSet | Iterable[Chain] | str, catalog: NFCatalog | None) -> ChainSet:
    if isinstance(chains, ChainSet):
        return chains
    if isinstance(chains, (str, bytes)):
        from .lang import parse

        return parse(chains, catalog=catalog)
    return ChainSet.of(chains)


def compile(chains: ChainSet | Iterable[Chain] | str, *, arch: str = "v1model",
            catalog: NFCatalog | None = None, **options) -> CompiledChains:
    """Run every pass of :data:`sfclab.passes.PASSES` on *chains* (a ChainSet,
    Chains, or chain text) and return all their outputs.  *options* are the
    fields of :class:`~sfclab.passes.CompileOptions`."""
    if arch not in ARCHS:
        raise CompileError(f"unknown architecture {arch!r}",
                           hint=did_you_mean(arch, ARCHS) or f"use one of {', '.join(ARCHS)}")
    try:
        opts = CompileOptions(**options)
    except TypeError:
        known = [f.name for f in dataclasses.fields(CompileOptions)]
        bad = next((k for k in options if k not in known), "?")
        raise CompileError(f"unknown compile option {bad!r}",
                           hint=did_you_mean(bad, known) or f"options: {', '.join(known)}") from None
    cs = _chainset(chains, catalog)
    if catalog is None:
        from .lang import default_catalog

        catalog = default_catalog()
    state = CompiledChains(cs, tuple(cs.paths()), catalog, arch, opts)
    timings = []
    for run in PASSES:
        t = time.perf_counter()
        state = run(state, options=opts)
        timings.append((run.__name__.removesuffix("_pass"), time.perf_counter() - t))
    from .ir.validate import program_headers, shadowed

    warnings = tuple(shadowed(cs, parsed=program_headers(cs, catalog)))
    return dataclasses.replace(state, timings=tuple(timings), warnings=warnings)
