"""Placement pass: NFs onto the pipelets of a multi-pipe switch (Dejavu §3.3–4).

The switch has ``pipes`` pipes, each an ingress and an egress *pipelet* of
``stages`` match-action stages.  NFs on one pipelet run back to back in the
order they are placed (sequential composition); their stage costs
(``NFInfo.stages``) add up and must fit.  Moving on costs, under Tofino's rules:

* ingress → any egress: free (the traffic manager);
* egress ``q`` → ingress ``q``: one recirculation (loopback within the pipe);
* ingress ``p`` → ingress ``p``: one resubmission (only after the ingress).

sfclab's own core takes stages of every pipelet before any NF (the TNA program's
initializer, rewinder and requests in the ingress, the recirculation and CPU handling
in the egress): ``reserved`` (:data:`TNA_CORE_STAGES` for ``arch="tna"``, measured
with the Tofino compiler) is subtracted from each ingress and egress pipelet, so the
NFs get ``stages - reserved`` of each.

Packets enter at the ingress of ``entry_pipe`` and leave from the egress of
``exit_pipe`` (``None``: any egress).  Between two consecutive NFs ``f → g`` of
a path the cost is 0 when ``g`` is later on the same pipelet, else the cheapest
move from ``f``'s pipelet to ``g``'s, so a path's recirculations are a sum over
its NF pairs.  :func:`place` minimises the weighted sum: it packs NF orders
along cheap tours of the pipelets (``I0 → E1 → I1 → E0`` costs one
recirculation) and improves the best with local search (move or swap NFs).
The baseline is Dejavu's naïve placement: NFs by index, alternating ingress
and egress pipelets.

:func:`recirculation_throughput` is §4's feedback-queue model.

>>> round(recirculation_throughput(2), 2), round(recirculation_throughput(3), 2)
(0.38, 0.16)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CompileError
from ..ir.model import ServicePath
from ..nfinfo import NFCatalog
from .common import first_seen, nf_info

__all__ = [
    "TNA_CORE_STAGES",
    "CoreStages",
    "Pipelet",
    "Placement",
    "PlacementResult",
    "recirculation_throughput",
    "naive_placement",
    "place",
    "step_costs",
    "placement_pass",
]


@dataclass(frozen=True, slots=True)
class CoreStages:
    """Stages sfclab's own core takes in each ingress and each egress pipelet."""

    ingress: int = 0
    egress: int = 0


#: What sfclab's core takes of a Tofino pipe, measured with p4c-barefoot 9.13.4 (the
#: ``.bfa`` of each library NF alone: its ingress stages less the NF's span, at most; its
#: egress stages): in the ingress the copy of the parsed fields, the initializer, the
#: token check, the rewinder and the requests' tables — 5 to 7 stages with an NF on the
#: switch, 8 with a server NF's detour (dpi, ips, ipsec) — and in the egress the
#: recirculation and CPU headers (2).  ``tests/targets/tofino_measured.json`` records
#: the measurement; ``tests/targets/test_tofino_stages.py`` checks this against it, and
#: against the compiler where it is installed.
TNA_CORE_STAGES = CoreStages(ingress=8, egress=2)


@dataclass(frozen=True, slots=True, order=True)
class Pipelet:
    """``pipe`` number and ``gress`` (``"ingress"`` or ``"egress"``)."""

    pipe: int
    gress: str

    def __str__(self) -> str:
        return f"{'I' if self.gress == 'ingress' else 'E'}{self.pipe}"


@dataclass(frozen=True, slots=True)
class Placement:
    """NFs per pipelet (in run order) and what it costs."""

    method: str
    pipelets: tuple[tuple[Pipelet, tuple[str, ...]], ...]
    weighted_recirculations: float
    recirculations: tuple[tuple[str, int], ...]       # per path id
    throughput: tuple[tuple[str, float], ...]          # per path id, share of T

    def where(self) -> dict[str, tuple[Pipelet, int]]:
        return {nf: (pl, i) for pl, nfs in self.pipelets for i, nf in enumerate(nfs)}

    def __str__(self) -> str:
        body = "  ".join(f"{pl}: {','.join(nfs) or '-'}" for pl, nfs in self.pipelets)
        return f"{self.method}: {body}  ({self.weighted_recirculations:.4g} weighted recirculations)"


@dataclass(frozen=True, slots=True)
class PlacementResult:
    best: Placement
    naive: Placement
    pipes: int
    stages: int
    external_share: float
    reserved: CoreStages = CoreStages()

    def free(self, pipelet: Pipelet) -> int:
        """Stages of *pipelet* left to NFs (its stages less sfclab's core)."""
        return _free(self.stages, self.reserved, pipelet)


def _free(stages: int, reserved: CoreStages, pl: Pipelet) -> int:
    return max(0, stages - (reserved.ingress if pl.gress == "ingress" else reserved.egress))


def recirculation_throughput(k: int, loopback_ratio: float = 1.0) -> float:
    """Share of the offered rate ``T`` that survives *k* recirculations (Dejavu §4).

    Loopback capacity is ``loopback_ratio × T`` (one loopback port per external
    port: 1).  Each pass through the loopback port passes with probability
    ``p``; the ``k`` passes share its capacity: ``Σ_{i=1..k} p^i = ratio``;
    the packets that make it through all of them are ``p^k``.

    >>> recirculation_throughput(0), recirculation_throughput(1)
    (1.0, 1.0)
    >>> round(1 - recirculation_throughput(2), 2)   # x = 0.62T in the paper
    0.62
    """
    if k <= 0 or k <= loopback_ratio:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(100):
        p = (lo + hi) / 2
        if sum(p ** i for i in range(1, k + 1)) < loopback_ratio:
            lo = p
        else:
            hi = p
    return lo ** k


def _move(a: Pipelet, b: Pipelet) -> int:
    """Fewest recirculations/resubmissions to leave pipelet *a* and start *b*."""
    if a.gress == "ingress":
        if b.gress == "egress":
            return 0
        return 1                     # resubmit, or egress b → recirculate into ingress b
    if b.gress == "ingress":
        return 1 if b.pipe == a.pipe else 2
    return 1                         # egress a → ingress a → egress b


def _pair_costs(paths: Sequence[ServicePath]):
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    heads: dict[str, float] = defaultdict(float)
    tails: dict[str, float] = defaultdict(float)
    for p in paths:
        if not p.nfs:
            continue
        heads[p.nfs[0]] += p.weight
        tails[p.nfs[-1]] += p.weight
        for a, b in zip(p.nfs, p.nfs[1:]):
            pairs[a, b] += p.weight
    return pairs, heads, tails


class _Switch:
    def __init__(self, pipes: int, stages: int, entry: int, exit_: int | None,
                 reserved: CoreStages = CoreStages()) -> None:
        self.pipes, self.stages, self.reserved = pipes, stages, reserved
        self.entry = Pipelet(entry, "ingress")
        self.exit = exit_
        self.pipelets = [Pipelet(p, g) for p in range(pipes) for g in ("ingress", "egress")]
        self.free = {pl: _free(stages, reserved, pl) for pl in self.pipelets}

    def step(self, a: tuple[Pipelet, int], b: tuple[Pipelet, int]) -> int:
        if a[0] == b[0] and b[1] > a[1]:
            return 0
        return _move(a[0], b[0])

    def start(self, b: tuple[Pipelet, int]) -> int:
        return 0 if b[0] == self.entry else _move(self.entry, b[0])

    def finish(self, a: tuple[Pipelet, int]) -> int:
        pl = a[0]
        if pl.gress == "ingress" or self.exit is None or pl.pipe == self.exit:
            return 0
        return 1

    def path_cost(self, nfs: Sequence[str], where) -> int:
        if not nfs:
            return 0
        c = self.start(where[nfs[0]]) + self.finish(where[nfs[-1]])
        return c + sum(self.step(where[a], where[b]) for a, b in zip(nfs, nfs[1:]))

    def tours(self) -> list[list[Pipelet]]:
        """Pipelet sequences that cost one recirculation per pipe change."""
        others = [p for p in range(self.pipes) if p != self.entry.pipe]
        out = []
        for perm in itertools.permutations(others, min(len(others), 3)):
            seq = [self.entry]
            for p in (*perm, self.entry.pipe):
                seq += [Pipelet(p, "egress"), Pipelet(p, "ingress")]
            out.append(seq[:-1] if self.exit in (None, self.entry.pipe) else seq)
        return out or [[self.entry, Pipelet(self.entry.pipe, "egress")]]


def step_costs(nfs: Sequence[str], placement: Placement, *, pipes: int = 2, stages: int = 12,
               entry_pipe: int = 0, exit_pipe: int | None = 0) -> tuple[int, ...]:
    """The recirculations (and resubmissions) of each step of the NF sequence *nfs* on
    *placement*: entering, between each two NFs, leaving; they add up to the path's
    count in ``placement.recirculations``.

    >>> from sfclab.nfinfo import NFCatalog, NFInfo
    >>> from sfclab.lang import parse
    >>> cat = NFCatalog([NFInfo(name=n, layer=4, stages=2) for n in "abcdef"])
    >>> path = parse("chain c: a -> b -> c -> d -> e -> f", catalog=cat).paths()[0]
    >>> step_costs(path.nfs, naive_placement([path], cat, stages=4), stages=4)
    (0, 0, 0, 0, 2, 0, 0)
    """
    sw = _Switch(pipes, stages, entry_pipe, exit_pipe)
    where = placement.where()
    if not nfs:
        return (0,)
    return (sw.start(where[nfs[0]]), *(sw.step(where[a], where[b]) for a, b in zip(nfs, nfs[1:])),
            sw.finish(where[nfs[-1]]))


def _layout(cells: dict[Pipelet, list[str]]) -> dict[str, tuple[Pipelet, int]]:
    return {nf: (pl, i) for pl, nfs in cells.items() for i, nf in enumerate(nfs)}


def _cost(sw: _Switch, cells, pairs, heads, tails) -> float:
    w = _layout(cells)
    return (sum(c * sw.step(w[a], w[b]) for (a, b), c in pairs.items())
            + sum(c * sw.start(w[a]) for a, c in heads.items())
            + sum(c * sw.finish(w[a]) for a, c in tails.items()))


def _pack(order: Sequence[str], route: Sequence[Pipelet], sw: _Switch, cost_of) -> dict | None:
    cells: dict[Pipelet, list[str]] = {pl: [] for pl in sw.pipelets}
    used = defaultdict(int)
    k = 0
    for nf in order:
        while k < len(route) and used[route[k]] + cost_of[nf] > sw.free[route[k]]:
            k += 1
        if k == len(route):
            free = [pl for pl in sw.pipelets if used[pl] + cost_of[nf] <= sw.free[pl]]
            if not free:
                return None
            pl = free[0]
        else:
            pl = route[k]
        cells[pl].append(nf)
        used[pl] += cost_of[nf]
    return cells


def _report(method: str, cells, sw: _Switch, paths, ratio: float) -> Placement:
    w = _layout(cells)
    rec = tuple((p.id, sw.path_cost(p.nfs, w)) for p in paths)
    total = sum(p.weight * k for p, (_, k) in zip(paths, rec))
    thr = tuple((pid, recirculation_throughput(k, ratio)) for pid, k in rec)
    pls = tuple((pl, tuple(cells[pl])) for pl in sw.pipelets)
    return Placement(method, pls, round(total, 12), rec, thr)


def _check_fit(nfs, cost_of, sw: _Switch, where=None) -> None:
    """A :class:`CompileError` when the NFs cannot fit the switch: one NF larger than
    every pipelet, or more stages than all pipelets offer.  *where* (NF type -> text)
    names where the chains use an NF."""
    at = where or (lambda nf: "")
    r = sw.reserved
    core = (f" after sfclab's core ({r.ingress} of each ingress pipelet's {sw.stages} "
            f"stages, {r.egress} of each egress's)" if r.ingress or r.egress else "")
    biggest = max(sw.free.values(), default=0)
    for nf in nfs:
        if cost_of[nf] > biggest:
            raise CompileError(f"{at(nf)}NF {nf!r} needs {cost_of[nf]} stages but a pipelet "
                               f"offers at most {biggest}{core}",
                               hint="use a switch with more stages per pipelet, or run the "
                                    "NF elsewhere (on another switch or a server)")
    need, have = sum(cost_of[n] for n in nfs), sum(sw.free.values())
    if need > have:
        heavy = ", ".join(f"{n} {cost_of[n]}" for n in
                          sorted(nfs, key=lambda n: -cost_of[n])[:6])
        more = _pipes_needed(need, cost_of, nfs, sw)
        raise CompileError(f"{at(nfs[0]) if nfs else ''}the NFs need {need} stages ({heavy}"
                           f"{', …' if len(nfs) > 6 else ''}) but {sw.pipes} pipe(s) of "
                           f"{sw.stages} stages offer {have}{core}",
                           hint=(f"compile for more pipes ({more} would do: `--pipes {more}`, "
                                 f"or pipes={more}; a 64-port Tofino 1 has 4, the 32-port "
                                 f"one 2)" if more else "compile for more pipes")
                                + ", or put fewer NFs on this switch")


def _pipes_needed(need: int, cost_of, nfs, sw: _Switch) -> int | None:
    """The fewest pipes (up to 16) whose pipelets hold the NFs, packed first-fit."""
    for pipes in range(sw.pipes + 1, 17):
        bigger = _Switch(pipes, sw.stages, sw.entry.pipe, sw.exit, sw.reserved)
        if need <= sum(bigger.free.values()) and _pack(
                sorted(nfs, key=lambda n: -cost_of[n]), [], bigger, cost_of) is not None:
            return pipes
    return None


def naive_placement(paths: Sequence[ServicePath], catalog: NFCatalog | None = None, *,
                    pipes: int = 2, stages: int = 12, entry_pipe: int = 0,
                    exit_pipe: int | None = 0, loopback_ratio: float = 1.0,
                    reserved: CoreStages = CoreStages(), where=None) -> Placement:
    """Dejavu's naïve scheme: NFs by index, filling I0, E0, I1, E1, … in turn."""
    sw = _Switch(pipes, stages, entry_pipe, exit_pipe, reserved)
    nfs = first_seen(paths)
    cost_of = {nf: nf_info(catalog, nf).stages for nf in nfs}
    _check_fit(nfs, cost_of, sw, where)
    route = sorted(sw.pipelets, key=lambda pl: (pl.pipe != entry_pipe, pl.pipe, pl.gress != "ingress"))
    cells = _pack(nfs, route, sw, cost_of)
    if cells is None:            # enough stages in all, but not in whole pipelets
        cells = _pack(sorted(nfs, key=lambda n: -cost_of[n]), route, sw, cost_of)
    if cells is None:
        free = ", ".join(f"{pl} {n}" for pl, n in sw.free.items())
        raise CompileError(f"the NFs' stages ({', '.join(f'{n} {cost_of[n]}' for n in nfs)}) "
                           f"do not pack into the pipelets' free stages ({free})",
                           hint="compile for more pipes (`--pipes`, pipes=…), or put fewer "
                                "NFs on this switch")
    return _report("naive", cells, sw, paths, loopback_ratio)


def place(paths: Sequence[ServicePath], catalog: NFCatalog | None = None, *,
          pipes: int = 2, stages: int = 12, entry_pipe: int = 0, exit_pipe: int | None = 0,
          loopback_ratio: float = 1.0, orders: Sequence[Sequence[str]] = (),
          rounds: int = 20, reserved: CoreStages = CoreStages(), where=None) -> PlacementResult:
    """Place the paths' NFs; the best found and the naïve baseline.  *reserved*: the
    stages sfclab's core takes of each pipelet; *where* (NF type -> text) locates an NF
    in the errors."""
    paths = list(paths)
    sw = _Switch(pipes, stages, entry_pipe, exit_pipe, reserved)
    nfs = first_seen(paths)
    cost_of = {nf: nf_info(catalog, nf).stages for nf in nfs}
    _check_fit(nfs, cost_of, sw, where)
    naive = naive_placement(paths, catalog, pipes=pipes, stages=stages, entry_pipe=entry_pipe,
                            exit_pipe=exit_pipe, loopback_ratio=loopback_ratio,
                            reserved=reserved, where=where)
    pairs, heads, tails = _pair_costs(paths)
    seeds = [{pl: list(n) for pl, n in naive.pipelets}]
    for order in (*orders, nfs):
        order = [n for n in dict.fromkeys(order) if n in cost_of]
        for route in sw.tours():
            cells = _pack(order, route, sw, cost_of)
            if cells is not None:
                seeds.append(cells)
    best = min(seeds, key=lambda c: _cost(sw, c, pairs, heads, tails))
    best = _improve(best, sw, cost_of, pairs, heads, tails, rounds)
    return PlacementResult(_report("placed", best, sw, paths, loopback_ratio), naive, pipes,
                           stages, 1 / (1 + loopback_ratio), reserved)


def _improve(cells, sw: _Switch, cost_of, pairs, heads, tails, rounds: int):
    cur = {pl: list(n) for pl, n in cells.items()}
    cost = _cost(sw, cur, pairs, heads, tails)
    used = lambda c, pl: sum(cost_of[n] for n in c[pl])  # noqa: E731
    for _ in range(rounds):
        improved = False
        for nf in [n for pl in sw.pipelets for n in cur[pl]]:
            src = next(pl for pl in sw.pipelets if nf in cur[pl])
            for dst in sw.pipelets:
                if dst != src and used(cur, dst) + cost_of[nf] > sw.free[dst]:
                    continue
                for i in range(len(cur[dst]) + (dst != src)):
                    trial = {pl: list(n) for pl, n in cur.items()}
                    trial[src].remove(nf)
                    trial[dst].insert(i, nf)
                    c = _cost(sw, trial, pairs, heads, tails)
                    if c < cost - 1e-12:
                        cur, cost, improved = trial, c, True
                        break
                else:
                    continue
                break
        if not improved:
            break
    return cur


def placement_pass(state, *, options):
    """Driver entry: adds ``placement`` (:class:`PlacementResult`) to the state
    (skipped unless ``options.placement`` or, when that is None, ``arch == "tna"``).
    For TNA each pipelet's stages are less sfclab's core (:data:`TNA_CORE_STAGES`)."""
    wanted = options.placement if options.placement is not None else state.arch == "tna"
    if not wanted:
        return state
    pipe_order = state.pipeline.optimal.slots if state.pipeline is not None else ()
    result = place(state.paths, state.catalog, pipes=options.pipes, stages=options.stages,
                   entry_pipe=options.entry_pipe, exit_pipe=options.exit_pipe,
                   loopback_ratio=options.loopback_ratio, orders=[pipe_order],
                   reserved=TNA_CORE_STAGES if state.arch == "tna" else CoreStages(),
                   where=_where(state.chains))
    return dataclasses.replace(state, placement=result)


def _where(chains):
    """NF type -> ``"FILE:LINE:COL: chain 'c': "`` of the first chain using it."""
    def at(nf: str) -> str:
        for c in chains:
            if any(c.graph.nodes[n].get("nf") == nf for n in c.nf_nodes()):
                src = f"{c.source or '<chains>'}:{c.line}:{c.column}: " if c.line else ""
                return f"{src}chain {c.name!r}: "
        return ""
    return at
