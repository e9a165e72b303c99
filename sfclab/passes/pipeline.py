"""Pipeline pass: the default function pipeline (FlexMesh §V) and its baselines.

FlexMesh builds the default function pipeline in three steps:

1. *decouple and sort*: the chains become NF pairs ``(a, b)`` ("``b`` right
   after ``a``"), sorted by protocol layer; the layer order is the alphabet
   order of step 2 and the tie-break of step 3;
2. *MA-FSA*: the minimal acyclic automaton over the chains' words (each
   service path's NF sequence), built incrementally
   (:func:`~sfclab.passes.mafsa.build_mafsa`);
3. *topological sort*: the automaton's states in topological order; each
   transition ``s -a-> t`` needs an ``a`` slot between the positions of ``s``
   and ``t``; transitions with the same NF share a slot where their intervals
   overlap (greedy interval stabbing, the fewest slots per NF).  Every path then
   runs in one pass; an NF gets several slots only where the automaton needs it.

Beside it: the *naive* pipeline (NFs in first-seen order), and the *optimal*
one (one slot per NF, fewest weighted recirculations: exact DP up to
``exact_limit`` NFs, local search seeded with the MA-FSA order above), with an
optional trade-off curve of ``k`` duplicated slots.

>>> from sfclab.ir.model import linear_chain, ChainSet
>>> cs = ChainSet.of([linear_chain("p", ["l3fwd", "firewall", "nat"]),
...                   linear_chain("r", ["l3fwd", "nat", "firewall"])])
>>> mafsa_pipeline(cs.paths()).slots
('l3fwd', 'firewall', 'nat', 'firewall')
>>> naive_pipeline(cs.paths()).report.weighted_recirculations
0.5
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from ..errors import CompileError
from ..ir.model import ServicePath
from ..nfinfo import NFCatalog
from .common import first_seen, nf_info, pair_weights, passes_on
from .mafsa import Automaton, build_mafsa
from .ordering import add_duplicates, local_search, optimal_order

__all__ = [
    "Pipeline",
    "PipelineReport",
    "PipelineResult",
    "layer_pairs",
    "make_pipeline",
    "mafsa_pipeline",
    "naive_pipeline",
    "optimal_pipeline",
    "build_pipelines",
    "pipeline_pass",
]


@dataclass(frozen=True, slots=True)
class PipelineReport:
    """What a pipeline costs: slots, duplicated slots, recirculations, worst path."""

    slots: int
    duplicated_slots: int
    weighted_recirculations: float
    worst_passes: int
    worst_path: str


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A default function pipeline: NF types, one per slot, in pipeline order."""

    method: str
    slots: tuple[str, ...]
    report: PipelineReport
    exact: bool = True

    def __str__(self) -> str:
        r = self.report
        return (f"{self.method}: {' | '.join(self.slots)}  ({r.slots} slots, "
                f"{r.duplicated_slots} duplicated, {r.weighted_recirculations:.4g} weighted "
                f"recirculations, worst {r.worst_passes} passes)")


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """The pipeline pass's output: the chosen pipeline and every candidate."""

    chosen: Pipeline
    naive: Pipeline
    mafsa: Pipeline
    optimal: Pipeline
    automaton: Automaton
    pairs: tuple[tuple[str, str], ...]
    tradeoff: tuple[Pipeline, ...] = ()

    @property
    def slots(self) -> tuple[str, ...]:
        return self.chosen.slots

    def candidates(self) -> tuple[Pipeline, ...]:
        return (self.naive, self.mafsa, self.optimal, *self.tradeoff)


def _rank(catalog: NFCatalog | None):
    cache: dict[str, tuple[int, str]] = {}

    def rank(nf: str) -> tuple[int, str]:
        if nf not in cache:
            cache[nf] = (nf_info(catalog, nf).layer, nf)
        return cache[nf]
    return rank


def make_pipeline(method: str, slots: Sequence[str], paths: Sequence[ServicePath],
                  *, exact: bool = True) -> Pipeline:
    """A :class:`Pipeline` with its report computed on *paths*."""
    slots = tuple(slots)
    worst, worst_id, total = 0, "", 0.0
    for p in paths:
        k = passes_on(p.nfs, slots)
        total += p.weight * (k - 1)
        if k > worst:
            worst, worst_id = k, p.id
    report = PipelineReport(len(slots), len(slots) - len(set(slots)), round(total, 12),
                            max(worst, 1), worst_id)
    return Pipeline(method, slots, report, exact)


def layer_pairs(paths: Sequence[ServicePath], catalog: NFCatalog | None = None
                ) -> tuple[tuple[str, str], ...]:
    """FlexMesh step 1: the distinct consecutive NF pairs, sorted by protocol layer."""
    rank = _rank(catalog)
    pairs = {(a, b) for p in paths for a, b in zip(p.nfs, p.nfs[1:])}
    return tuple(sorted(pairs, key=lambda ab: (rank(ab[0]), rank(ab[1]))))


def naive_pipeline(paths: Sequence[ServicePath]) -> Pipeline:
    """Baseline: each NF once, in the order NFs are first seen on the paths."""
    return make_pipeline("naive", first_seen(paths), paths)


def _slots_from_automaton(a: Automaton, rank) -> list[str]:
    g = nx.DiGraph()
    g.add_nodes_from(range(a.n_states))
    g.add_edges_from((s, t) for s, _, t in a.transitions)
    depth = {0: 0}
    for s in nx.topological_sort(g):
        for t in g.succ[s]:
            depth[t] = max(depth.get(t, 0), depth.get(s, 0) + 1)
    order = list(nx.lexicographical_topological_sort(g, key=lambda s: (depth.get(s, 0), s)))
    pos = {s: i for i, s in enumerate(order)}
    by_nf: dict[str, list[tuple[int, int]]] = {}
    for s, nf, t in a.transitions:
        by_nf.setdefault(nf, []).append((pos[s], pos[t]))
    points: list[tuple[int, tuple[int, str], str]] = []
    for nf, spans in by_nf.items():
        last = -1
        for lo, hi in sorted(spans, key=lambda sp: (sp[1], sp[0])):
            if last < lo:           # not stabbed yet: stab at its right end
                last = hi - 1
                points.append((last, rank(nf), nf))
    return [nf for _, _, nf in sorted(points)]


def mafsa_pipeline(paths: Sequence[ServicePath], catalog: NFCatalog | None = None,
                   ) -> Pipeline:
    """FlexMesh §V: the pipeline read off the minimal automaton of the paths' words."""
    return _mafsa(paths, catalog)[0]


def _mafsa(paths: Sequence[ServicePath], catalog: NFCatalog | None) -> tuple[Pipeline, Automaton]:
    rank = _rank(catalog)
    auto = build_mafsa((p.nfs for p in paths if p.nfs), rank)
    return make_pipeline("mafsa", _slots_from_automaton(auto, rank), paths), auto


def optimal_pipeline(paths: Sequence[ServicePath], *, seed: Sequence[str] = (),
                     exact_limit: int = 20) -> Pipeline:
    """One slot per NF, fewest weighted recirculations: exact DP over subsets up to
    *exact_limit* distinct NFs, else local search from *seed* and first-seen order."""
    nfs = first_seen(paths)
    w = pair_weights(paths)
    if len(nfs) <= exact_limit:
        order, _ = optimal_order(nfs, w)
        return make_pipeline("optimal", order, paths, exact=True)
    starts = [list(dict.fromkeys([*seed, *nfs])), nfs]
    best = min((local_search([n for n in s if n in set(nfs)], w) for s in starts),
               key=lambda r: r[1])
    return make_pipeline("heuristic", best[0], paths, exact=False)


def build_pipelines(paths: Sequence[ServicePath], catalog: NFCatalog | None = None, *,
                    choose: str = "auto", max_slots: int = 32, exact_limit: int = 20,
                    dup_slots: int = 0) -> PipelineResult:
    """Every candidate pipeline for *paths* and the chosen default.

    *choose* is ``"mafsa"``, ``"optimal"``, ``"naive"`` or ``"auto"`` (the MA-FSA
    pipeline when it has at most *max_slots* slots, else the optimal order), or a
    sequence of NF types: that pipeline, as it is (the one installed on a switch,
    so chains can change without a program reload).
    """
    paths = list(paths)
    naive = naive_pipeline(paths)
    mafsa, auto = _mafsa(paths, catalog)
    seed = list(dict.fromkeys(mafsa.slots))
    optimal = optimal_pipeline(paths, seed=seed, exact_limit=exact_limit)
    curve: list[Pipeline] = []
    if dup_slots > 0:
        for k, (slots, _) in enumerate(add_duplicates(optimal.slots, paths, dup_slots)[1:], 1):
            curve.append(dataclasses.replace(make_pipeline(f"{optimal.method}+{k}", slots, paths),
                                             exact=False))
    table = {"naive": naive, "mafsa": mafsa, "optimal": optimal}
    if not isinstance(choose, str):            # a fixed pipeline: the one installed on a switch
        slots = tuple(choose)
        missing = sorted({nf for p in paths for nf in p.nfs} - set(slots))
        if missing:
            raise CompileError(f"NF type(s) {', '.join(missing)} have no slot in the pipeline "
                               f"{' | '.join(slots) or '(empty)'}",
                               hint="a new NF type needs new slots: a program reload")
        chosen = make_pipeline("fixed", slots, paths)
    elif choose == "auto":
        chosen = mafsa if mafsa.report.slots <= max_slots else optimal
    elif choose in table:
        chosen = table[choose]
    else:
        raise CompileError(f"unknown pipeline choice {choose!r}",
                           hint="use 'auto', 'mafsa', 'optimal' or 'naive'")
    return PipelineResult(chosen, naive, mafsa, optimal, auto, layer_pairs(paths, catalog),
                          tuple(curve))


def pipeline_pass(state, *, options):
    """Driver entry: adds ``pipeline`` (:class:`PipelineResult`) to the compile state."""
    result = build_pipelines(state.paths, state.catalog, choose=options.pipeline,
                             max_slots=options.bitmap_bits, exact_limit=options.exact_limit,
                             dup_slots=options.dup_slots)
    return dataclasses.replace(state, pipeline=result)

