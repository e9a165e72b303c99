"""Placement pass: NFs onto the pipelets of a multi-pipe switch (Dejavu §3.3–4).

The switch has ``pipes`` pipes, each an ingress and an egress *pipelet* of
``stages`` match-action stages.  NFs on one pipelet run back to back in the
order they are placed (sequential composition); their stage costs
(``NFInfo.stages``) add up and must fit.  Moving on costs, under Tofino's rules:

* ingress → any egress: free (the traffic manager);
* egress ``q`` → ingress ``q``: one recirculation (loopback within the pipe);
* ingress ``p`` → ingress ``p``: one resubmission (only after the ingress).

sfclab's own core takes stages of every pipelet besides the NFs' (the TNA program's
initializer and the pass's end in the ingress, the pass's end in the egress):
``reserved`` (:data:`TNA_CORE_STAGES` for ``arch="tna"``, measured with the Tofino
compiler) is subtracted from each ingress and egress pipelet, so the NFs get
``stages - reserved`` of each.

NFs on one pipelet are composed as Dejavu's Fig. 5 has it: back to back
(*sequential*: their stages add up), or side by side (*parallel*, on ``if``/``else`` of
the token: they share stages, the pipelet needs the largest) when no service path
runs both (``side_by_side``: :func:`side_by_side_groups` makes the groups, consecutive
NFs of a pipelet no path shares).  Some NFs must run in an ingress pipelet
(``ingress_only``): an egress pipelet cannot change the port, send to the CPU or emit
a digest (TNA's ``Digest`` is the ingress deparser's), and the port after an egress
pipelet was chosen before it, so an NF whose branches may change where the packet
goes next runs in the ingress too.

Packets enter at the ingress of ``entry_pipe`` and leave from the egress of
``exit_pipe`` (``None``: any egress); a path that ends in ``drop`` is dropped where
its last NF ran, and one that ends at the CPU leaves from an ingress pipelet (the
CPU port's pipe is not the data ports').  Between two consecutive NFs ``f → g`` of
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
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import CompileError
from ..ir.model import ServicePath
from ..nfinfo import NFCatalog
from .common import first_seen, nf_info

__all__ = [
    "TNA_CORE_STAGES",
    "TOFINO_MAX_PIPES",
    "TOFINO_PIPE_COUNTS",
    "side_by_side_groups",
    "co_occurring",
    "CoreStages",
    "Pipelet",
    "Placement",
    "PlacementResult",
    "recirculation_throughput",
    "naive_placement",
    "place",
    "step_costs",
    "placement_pass",
    "place_for",
    "ingress_only_nfs",
    "asks_port",
    "branching_nfs",
    "tna_extra_stages",
    "stateless_nfs",
    "route_of",
    "cheapest_route",
]


@dataclass(frozen=True, slots=True)
class CoreStages:
    """Stages sfclab's own core takes in each ingress and each egress pipelet."""

    ingress: int = 0
    egress: int = 0


#: What sfclab's lean core takes of each Tofino pipelet, measured with p4c-barefoot 9.13.4
#: (the ``.bfa`` stages that hold sfclab's tables and no NF's, per pipe and gress, of
#: every library NF alone and mid-chain): in an ingress the initializer (stage 0 of the
#: entry pipe) and the pass's end (one table after the last NF: drop, CPU, next pipelet
#: or port), the rewinder sharing the NFs' stages; in an egress the pass's end (keep
#: the SFC header for the recirculation, or take it off).  ``tests/targets/
#: tofino_measured.json`` records the measurement; ``tests/targets/test_tofino_stages.py``
#: checks this against it, and against the compiler where it is installed.
TNA_CORE_STAGES = CoreStages(ingress=2, egress=1)

#: The most pipes a Tofino 1 has (the 64-port one; the 32-port one has 2).
TOFINO_MAX_PIPES = 4
#: The pipe counts a Tofino 1 comes with (``--pipes``, ``model?arch=tna&pipes=``).
TOFINO_PIPE_COUNTS = (1, 2, 4)


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
    #: Per pipelet its NFs in groups: a group of several runs side by side (parallel
    #: composition, sharing stages), the groups back to back; empty: one NF a group.
    groups: tuple[tuple[Pipelet, tuple[tuple[str, ...], ...]], ...] = ()

    def where(self) -> dict[str, tuple[Pipelet, int]]:
        """Each NF type's first instance (pipelet, position); :meth:`positions` has them all."""
        out: dict[str, tuple[Pipelet, int]] = {}
        for pl, nfs in self.pipelets:
            for i, nf in enumerate(nfs):
                out.setdefault(nf, (pl, i))
        return out

    def positions(self) -> dict[str, list[tuple[Pipelet, int]]]:
        """Each NF type's instances (pipelet, position), in pipelet order: more than one
        for an NF placement replicated (see :func:`place`)."""
        return _positions(dict(self.pipelets))

    def replicas(self) -> dict[str, int]:
        """The NF types placed more than once, and how often."""
        return {nf: len(at) for nf, at in self.positions().items() if len(at) > 1}

    def groups_of(self, pipelet: Pipelet) -> tuple[tuple[str, ...], ...]:
        """*pipelet*'s NFs, a group per position (side by side within a group)."""
        given = dict(self.groups)
        if pipelet in given:
            return given[pipelet]
        return tuple((nf,) for nf in dict(self.pipelets).get(pipelet, ()))

    def __str__(self) -> str:
        body = "  ".join(f"{pl}: {','.join('|'.join(g) for g in self.groups_of(pl)) or '-'}"
                         for pl, _ in self.pipelets)
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


def _exit_kind(terminal: str) -> str:
    """How a path leaves: ``drop`` where its last NF ran, ``cpu`` from an ingress
    pipelet, else through the exit pipe's egress."""
    return terminal if terminal in ("drop", "cpu") else "out"


def _pair_costs(paths: Sequence[ServicePath]):
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    heads: dict[str, float] = defaultdict(float)
    tails: dict[tuple[str, str], float] = defaultdict(float)
    for p in paths:
        if not p.nfs:
            continue
        heads[p.nfs[0]] += p.weight
        tails[p.nfs[-1], _exit_kind(p.terminal)] += p.weight
        for a, b in zip(p.nfs, p.nfs[1:]):
            pairs[a, b] += p.weight
    return pairs, heads, tails


def co_occurring(paths: Iterable[ServicePath]) -> frozenset[frozenset[str]]:
    """The pairs of NF types some service path runs both of (those cannot share stages
    side by side).

    >>> from sfclab.ir.model import linear_chain
    >>> sorted(map(sorted, co_occurring(linear_chain("c", ["a", "b"]).paths())))
    [['a', 'b']]
    """
    out: set[frozenset[str]] = set()
    for p in paths:
        kinds = sorted(set(p.nfs))
        out.update(frozenset(pr) for pr in itertools.combinations(kinds, 2))
    return frozenset(out)


def side_by_side_groups(nfs: Sequence[str], together: Collection[frozenset[str]]
                        ) -> tuple[tuple[str, ...], ...]:
    """*nfs* (one pipelet's, in order) in groups: each NF joins the group before it when no
    path runs it with any of that group (*together*: :func:`co_occurring`), else starts
    a group.  A group runs side by side (``if``/``else`` of the token), groups back to back.

    >>> side_by_side_groups(["a", "b", "c"], {frozenset("ab")})
    (('a',), ('b', 'c'))
    """
    groups: list[list[str]] = []
    for nf in nfs:
        if groups and all(frozenset((nf, g)) not in together and nf != g for g in groups[-1]):
            groups[-1].append(nf)
        else:
            groups.append([nf])
    return tuple(tuple(g) for g in groups)


class _Switch:
    def __init__(self, pipes: int, stages: int, entry: int, exit_: int | None,
                 reserved: CoreStages = CoreStages(), ingress_only: Collection[str] = (),
                 together: Collection[frozenset[str]] | None = None) -> None:
        self.pipes, self.stages, self.reserved = pipes, stages, reserved
        self.entry = Pipelet(entry, "ingress")
        self.exit = exit_
        self.pipelets = [Pipelet(p, g) for p in range(pipes) for g in ("ingress", "egress")]
        self.free = {pl: _free(stages, reserved, pl) for pl in self.pipelets}
        self.ingress_only = frozenset(ingress_only)
        #: None: NFs run back to back; else the NF pairs that may not share stages.
        self.together = together
        self._needs: dict[tuple, int] = {}              # (id of the costs, NFs) -> stages

    def need(self, nfs: Sequence[str], cost_of) -> int:
        """The stages the NFs *nfs* need on one pipelet, in this order."""
        if self.together is None:
            return sum(cost_of[n] for n in nfs)
        key = (id(cost_of), *nfs)
        got = self._needs.get(key)
        if got is None:
            got = self._needs[key] = sum(max(cost_of[n] for n in g)
                                         for g in side_by_side_groups(nfs, self.together))
        return got

    def allows(self, nf: str, pl: Pipelet) -> bool:
        return pl.gress == "ingress" or nf not in self.ingress_only

    def step(self, a: tuple[Pipelet, int], b: tuple[Pipelet, int]) -> int:
        if a[0] == b[0] and b[1] > a[1]:
            return 0
        return _move(a[0], b[0])

    def start(self, b: tuple[Pipelet, int]) -> int:
        return 0 if b[0] == self.entry else _move(self.entry, b[0])

    def finish(self, a: tuple[Pipelet, int], kind: str = "out") -> int:
        pl = a[0]
        if kind == "drop" or pl.gress == "ingress":
            return 0
        if kind == "cpu":
            return 1                 # egress a -> ingress a -> the CPU port
        return 0 if self.exit is None or pl.pipe == self.exit else 1

    def path_cost(self, nfs: Sequence[str], at, terminal: str = "output") -> int:
        """Recirculations of *nfs* over the instances *at* (NF type -> positions)."""
        return _best_route(self, nfs, at, terminal)[0]

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
               entry_pipe: int = 0, exit_pipe: int | None = 0,
               terminal: str = "output") -> tuple[int, ...]:
    """The recirculations (and resubmissions) of each step of the NF sequence *nfs* on
    *placement*: entering, between each two NFs, leaving (by *terminal*); they add up to
    the path's count in ``placement.recirculations``.

    >>> from sfclab.nfinfo import NFCatalog, NFInfo
    >>> from sfclab.lang import parse
    >>> cat = NFCatalog([NFInfo(name=n, layer=4, stages=2) for n in "abcdef"])
    >>> path = parse("chain c: a -> b -> c -> d -> e -> f", catalog=cat).paths()[0]
    >>> step_costs(path.nfs, naive_placement([path], cat, stages=4), stages=4)
    (0, 0, 0, 0, 2, 0, 0)
    """
    return route_of(nfs, placement, pipes=pipes, stages=stages, entry_pipe=entry_pipe,
                    exit_pipe=exit_pipe, terminal=terminal)[1]


def route_of(nfs: Sequence[str], placement: Placement, *, pipes: int = 2, stages: int = 12,
             entry_pipe: int = 0, exit_pipe: int | None = 0, terminal: str = "output"
             ) -> tuple[tuple[tuple[Pipelet, int], ...], tuple[int, ...]]:
    """The instance (pipelet, position) each NF of *nfs* runs on — the cheapest way
    through *placement*'s replicas — and :func:`step_costs`."""
    _, steps, chosen = cheapest_route(nfs, placement.positions(), pipes=pipes,
                                      entry_pipe=entry_pipe, exit_pipe=exit_pipe,
                                      terminal=terminal)
    return chosen, steps


def cheapest_route(nfs: Sequence[str], at: Mapping[str, Sequence[tuple[Pipelet, int]]], *,
                   pipes: int = 2, entry_pipe: int = 0, exit_pipe: int | None = 0,
                   terminal: str = "output"):
    """``(recirculations, step costs, chosen instances)``: the cheapest way to run *nfs*
    in order over the NF instances *at* (NF type -> [(pipelet, position in it)]), ties
    to the first instance — the route the placement counts and the program takes."""
    return _best_route(_Switch(pipes, 0, entry_pipe, exit_pipe), nfs, at, terminal)


def _positions(cells) -> dict[str, list[tuple[Pipelet, int]]]:
    out: dict[str, list[tuple[Pipelet, int]]] = defaultdict(list)
    for pl, nfs in cells.items():
        for i, nf in enumerate(nfs):
            out[nf].append((pl, i))
    return out


def _best_route(sw: "_Switch", nfs: Sequence[str], at, terminal: str = "output"):
    """``(cost, step costs, chosen instances)`` of the cheapest way to run *nfs* in order
    over the instances *at* (NF type -> [(pipelet, position)]): a shortest path over the
    layers of instances, the first instance winning ties."""
    if not nfs:
        return 0, (0,), ()
    layer = [(sw.start(b), (sw.start(b),), (b,)) for b in at[nfs[0]]]
    for nf in nfs[1:]:
        nxt = []
        for b in at[nf]:
            best = None
            for c, steps, chosen in layer:
                k = sw.step(chosen[-1], b)
                if best is None or c + k < best[0]:
                    best = (c + k, steps + (k,), chosen + (b,))
            nxt.append(best)
        layer = nxt
    kind = _exit_kind(terminal)
    best = None
    for c, steps, chosen in layer:
        k = sw.finish(chosen[-1], kind)
        if best is None or c + k < best[0]:
            best = (c + k, steps + (k,), chosen)
    return best


def _layout(cells: dict[Pipelet, list[str]]) -> dict[str, tuple[Pipelet, int]]:
    return {nf: (pl, i) for pl, nfs in cells.items() for i, nf in enumerate(nfs)}


def _cost(sw: _Switch, cells, pairs, heads, tails) -> float:
    w = _layout(cells)
    return (sum(c * sw.step(w[a], w[b]) for (a, b), c in pairs.items())
            + sum(c * sw.start(w[a]) for a, c in heads.items())
            + sum(c * sw.finish(w[a], kind) for (a, kind), c in tails.items()))


def _fits(sw: _Switch, cells, pl: Pipelet, nfs: Sequence[str], cost_of) -> bool:
    return all(sw.allows(n, pl) for n in nfs) and sw.need(nfs, cost_of) <= sw.free[pl]


def _pack(order: Sequence[str], route: Sequence[Pipelet], sw: _Switch, cost_of) -> dict | None:
    """The NFs of *order* along *route*, each on the route's pipelet that has room (an
    NF the pipelet may not hold goes to the next on the route that may, the route
    staying where it was); off the route, the first pipelet with room."""
    cells: dict[Pipelet, list[str]] = {pl: [] for pl in sw.pipelets}

    def fits(pl: Pipelet, nf: str) -> bool:
        return _fits(sw, cells, pl, cells[pl] + [nf], cost_of)

    k = 0
    for nf in order:
        while k < len(route) and sw.allows(nf, route[k]) and not fits(route[k], nf):
            k += 1
        cands = [*route[k:], *sw.pipelets]
        pl = next((c for c in cands if fits(c, nf)), None)
        if pl is None:
            return None
        cells[pl].append(nf)
    return cells


def _hard_first(nfs, sw: _Switch, cost_of) -> list[str]:
    """*nfs* in the order first-fit packs best: those an ingress must hold first (they
    have half the pipelets to go to), then the larger first."""
    return sorted(nfs, key=lambda n: (n not in sw.ingress_only, -cost_of[n]))


def _report(method: str, cells, sw: _Switch, paths, ratio: float) -> Placement:
    w = _positions(cells)
    rec = tuple((p.id, sw.path_cost(p.nfs, w, p.terminal)) for p in paths)
    total = sum(p.weight * k for p, (_, k) in zip(paths, rec))
    thr = tuple((pid, recirculation_throughput(k, ratio)) for pid, k in rec)
    pls = tuple((pl, tuple(cells[pl])) for pl in sw.pipelets)
    groups = tuple((pl, side_by_side_groups(cells[pl], sw.together)) for pl in sw.pipelets
                   if sw.together is not None)
    return Placement(method, pls, round(total, 12), rec, thr, groups)


def _core_text(sw: _Switch) -> str:
    r = sw.reserved
    return (f" after sfclab's core ({r.ingress} of each ingress pipelet's {sw.stages} "
            f"stages, {r.egress} of each egress's)" if r.ingress or r.egress else "")


def _check_fit(nfs, cost_of, sw: _Switch, where=None) -> None:
    """A :class:`CompileError` when the NFs cannot fit the switch: one NF larger than
    every pipelet it may use, or (back to back) more stages than all pipelets offer.
    *where* (NF type -> text) names where the chains use an NF."""
    at = where or (lambda nf: "")
    core = _core_text(sw)
    for nf in nfs:
        room = max((f for pl, f in sw.free.items() if sw.allows(nf, pl)), default=0)
        if cost_of[nf] > room:
            only = " ingress" if nf in sw.ingress_only else ""
            raise CompileError(f"{at(nf)}NF {nf!r} needs {cost_of[nf]} stages but a{only} "
                               f"pipelet offers at most {room}{core}",
                               hint="use a switch with more stages per pipelet, or run the "
                                    "NF elsewhere (on another switch or a server)")
    if sw.together is not None:
        return                   # side by side they may need less: packing decides
    need, have = sum(cost_of[n] for n in nfs), sum(sw.free.values())
    if need > have:
        _refuse(nfs, cost_of, sw, at, f"but {sw.pipes} pipe(s) of {sw.stages} stages offer "
                                      f"{have}{core}")


def _refuse(nfs, cost_of, sw: _Switch, at, why: str, paths=None) -> None:
    """The error for NFs that do not fit *sw*: what they need, and how many pipes would
    do — or, past :data:`TOFINO_MAX_PIPES` for a Tofino (a core is reserved), which chains
    fit together."""
    need = sum(cost_of[n] for n in nfs)
    heavy = ", ".join(f"{n} {cost_of[n]}" for n in sorted(nfs, key=lambda n: -cost_of[n])[:6])
    more = _pipes_needed(nfs, cost_of, sw)
    tofino = bool(sw.reserved.ingress or sw.reserved.egress)
    if tofino and more is not None:     # a Tofino 1 has 2 or 4 pipes, never 3
        more = min((n for n in TOFINO_PIPE_COUNTS if n >= more), default=more)
    if more is not None and (not tofino or more <= TOFINO_MAX_PIPES):
        hint = (f"compile for more pipes ({more} would do: `--pipes {more}`, or pipes={more}; "
                f"a 64-port Tofino 1 has 4, the 32-port one 2), or put fewer NFs on this switch")
        if tofino:
            hint += f"; run it on the TNA model as model?arch=tna&pipes={more}"
    else:
        hint = "put fewer NFs on this switch, or spread the chains over switches (--topology)"
        if tofino and paths:
            fit = _chains_that_fit(paths, cost_of, sw)
            if fit:
                hint = (f"on {TOFINO_MAX_PIPES} pipes (a 64-port Tofino 1) these chains fit "
                        f"together: {', '.join(fit)}; " + hint)
    raise CompileError(f"{at(nfs[0]) if nfs else ''}the NFs need {need} stages ({heavy}"
                       f"{', …' if len(nfs) > 6 else ''}) {why}", hint=hint)


def _pipes_needed(nfs, cost_of, sw: _Switch) -> int | None:
    """The fewest pipes (up to 16) whose pipelets hold the NFs, packed first-fit."""
    need = sum(cost_of[n] for n in nfs) if sw.together is None else 0
    for pipes in range(sw.pipes + 1, 17):
        bigger = _Switch(pipes, sw.stages, sw.entry.pipe, sw.exit, sw.reserved,
                         sw.ingress_only, sw.together)
        if need <= sum(bigger.free.values()) and _pack(
                _hard_first(nfs, bigger, cost_of), [], bigger, cost_of) is not None:
            return pipes
    return None


def _chains_that_fit(paths, cost_of, sw: _Switch) -> list[str]:
    """The chains, in order, that fit a :data:`TOFINO_MAX_PIPES`-pipe switch together."""
    chains = list(dict.fromkeys(p.chain for p in paths))
    kept: list[str] = []
    for c in chains:
        mine = [p for p in paths if p.chain in (*kept, c)]
        big = _Switch(TOFINO_MAX_PIPES, sw.stages, sw.entry.pipe, sw.exit, sw.reserved,
                      sw.ingress_only, co_occurring(mine) if sw.together is not None else None)
        nfs = first_seen(mine)
        if _pack(_hard_first(nfs, big, cost_of), [], big, cost_of) is not None:
            kept.append(c)
    return kept


def _unpacked(nfs, cost_of, sw: _Switch, where, paths) -> None:
    free = ", ".join(f"{pl} {n}" for pl, n in sw.free.items())
    at = where or (lambda nf: "")
    if _pipes_needed(nfs, cost_of, sw) is None or sw.together is not None:
        _refuse(nfs, cost_of, sw, at, f"and do not pack into the pipelets' free stages "
                                      f"({free}){_core_text(sw)}", paths)
    raise CompileError(f"the NFs' stages ({', '.join(f'{n} {cost_of[n]}' for n in nfs)}) "
                       f"do not pack into the pipelets' free stages ({free})",
                       hint="compile for more pipes (`--pipes`, pipes=…), or put fewer "
                            "NFs on this switch")


def naive_placement(paths: Sequence[ServicePath], catalog: NFCatalog | None = None, *,
                    pipes: int = 2, stages: int = 12, entry_pipe: int = 0,
                    exit_pipe: int | None = 0, loopback_ratio: float = 1.0,
                    reserved: CoreStages = CoreStages(), where=None,
                    ingress_only: Collection[str] = (), side_by_side: bool = False,
                    extra_stages: Mapping[str, int] | None = None) -> Placement:
    """Dejavu's naïve scheme: NFs by index, filling I0, E0, I1, E1, … in turn."""
    paths = list(paths)
    sw = _Switch(pipes, stages, entry_pipe, exit_pipe, reserved, ingress_only,
                 co_occurring(paths) if side_by_side else None)
    nfs = first_seen(paths)
    cost_of = _costs(catalog, nfs, extra_stages)
    _check_fit(nfs, cost_of, sw, where)
    route = sorted(sw.pipelets, key=lambda pl: (pl.pipe != entry_pipe, pl.pipe, pl.gress != "ingress"))
    cells = _pack(nfs, route, sw, cost_of)
    if cells is None:            # enough stages in all, but not in whole pipelets
        cells = _pack(_hard_first(nfs, sw, cost_of), route, sw, cost_of)
    if cells is None:
        _unpacked(nfs, cost_of, sw, where, paths)
    return _report("naive", cells, sw, paths, loopback_ratio)


def place(paths: Sequence[ServicePath], catalog: NFCatalog | None = None, *,
          pipes: int = 2, stages: int = 12, entry_pipe: int = 0, exit_pipe: int | None = 0,
          loopback_ratio: float = 1.0, orders: Sequence[Sequence[str]] = (),
          rounds: int = 20, reserved: CoreStages = CoreStages(), where=None,
          ingress_only: Collection[str] = (), side_by_side: bool = False,
          extra_stages: Mapping[str, int] | None = None, replicable: Collection[str] = (),
          max_instances: int | None = None) -> PlacementResult:
    """Place the paths' NFs; the best found and the naïve baseline.  *reserved*: the
    stages sfclab's core takes of each pipelet; *where* (NF type -> text) locates an NF
    in the errors; *ingress_only*: NF types that must run in an ingress pipelet;
    *side_by_side*: NFs no path runs both of may share stages (parallel composition);
    *extra_stages*: stages an NF takes besides its own (its branch table's);
    *replicable*: NF types that may run in more than one pipelet (stateless ones: a
    replica keeps no state of its own to diverge) where stages are left and that saves
    a path recirculations (:func:`_replicate`), at most *max_instances* NF instances
    in all (the token's bitmap has a bit per instance)."""
    paths = list(paths)
    sw = _Switch(pipes, stages, entry_pipe, exit_pipe, reserved, ingress_only,
                 co_occurring(paths) if side_by_side else None)
    nfs = first_seen(paths)
    cost_of = _costs(catalog, nfs, extra_stages)
    _check_fit(nfs, cost_of, sw, where)
    naive = naive_placement(paths, catalog, pipes=pipes, stages=stages, entry_pipe=entry_pipe,
                            exit_pipe=exit_pipe, loopback_ratio=loopback_ratio,
                            reserved=reserved, where=where, ingress_only=ingress_only,
                            side_by_side=side_by_side, extra_stages=extra_stages)
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
    if replicable:
        best = _replicate(best, sw, cost_of, paths, frozenset(replicable), max_instances)
    return PlacementResult(_report("placed", best, sw, paths, loopback_ratio), naive, pipes,
                           stages, 1 / (1 + loopback_ratio), reserved)


def _costs(catalog, nfs, extra: Mapping[str, int] | None) -> dict[str, int]:
    return {nf: nf_info(catalog, nf).stages + (extra or {}).get(nf, 0) for nf in nfs}


def branching_nfs(paths: Sequence[ServicePath]) -> frozenset[str]:
    """The NF types a service path branches after (then / else / case): on TNA their
    branch table takes a stage after the NF's last, before the next NF may start."""
    out: set[str] = set()
    for p in paths:
        kinds = dict(zip(p.nodes, p.nfs))
        out.update(kinds[d.node] for d in p.decisions
                   if d.kind in ("then", "else", "case") and d.node in kinds)
    return frozenset(out)


def _improve(cells, sw: _Switch, cost_of, pairs, heads, tails, rounds: int):
    cur = {pl: list(n) for pl, n in cells.items()}
    cost = _cost(sw, cur, pairs, heads, tails)
    for _ in range(rounds):
        improved = False
        for nf in [n for pl in sw.pipelets for n in cur[pl]]:
            src = next(pl for pl in sw.pipelets if nf in cur[pl])
            for dst in sw.pipelets:
                if not sw.allows(nf, dst):
                    continue
                for i in range(len(cur[dst]) + (dst != src)):
                    trial = {pl: list(n) for pl, n in cur.items()}
                    trial[src].remove(nf)
                    trial[dst].insert(i, nf)
                    if sw.need(trial[dst], cost_of) > sw.free[dst]:
                        continue
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


def _total(sw: _Switch, cells, paths) -> float:
    at = _positions(cells)
    return sum(p.weight * sw.path_cost(p.nfs, at, p.terminal) for p in paths if p.nfs)


def _routes(sw: _Switch, most: int) -> list[tuple[Pipelet, ...]]:
    """The pipelet sequences a packet can take from the entry with at most *most*
    recirculations (ingress -> any egress: free; egress -> its own ingress: one)."""
    out: list[tuple[Pipelet, ...]] = []

    def grow(seq: tuple[Pipelet, ...], rec: int) -> None:
        out.append(seq)
        last = seq[-1]
        if last.gress == "ingress":
            for q in range(sw.pipes):
                grow(seq + (Pipelet(q, "egress"),), rec)
        elif rec < most:
            grow(seq + (Pipelet(last.pipe, "ingress"),), rec + 1)

    grow((sw.entry,), 0)
    return out


def _along(route, nfs, cells, sw: _Switch, cost_of, replicable, prefer_existing: bool):
    """*cells* with the replicas that let *nfs* run along *route* (None: they cannot):
    NF by NF, an instance later in the route's current pipelet, else (*prefer_existing*)
    one in a later pipelet of the route, else a replica inserted in the current pipelet
    where its stages fit (the insertion that needs fewest stages, then the earliest),
    else the next pipelet of the route."""
    trial = {pl: list(n) for pl, n in cells.items()}
    vi, pos = 0, -1
    for nf in nfs:
        while True:
            lst = trial[route[vi]]
            idx = next((i for i in range(pos + 1, len(lst)) if lst[i] == nf), None)
            if idx is not None:
                pos = idx
                break
            if prefer_existing:
                later = next((j for j in range(vi + 1, len(route)) if nf in trial[route[j]]),
                             None)
                if later is not None:
                    vi, pos = later, trial[route[later]].index(nf)
                    break
            pl = route[vi]
            if nf in replicable and sw.allows(nf, pl):
                fits = [(sw.need(lst[:i] + [nf] + lst[i:], cost_of), i)
                        for i in range(pos + 1, len(lst) + 1)]
                fits = [f for f in fits if f[0] <= sw.free[pl]]
                if fits:
                    pos = min(fits)[1]
                    lst.insert(pos, nf)
                    break
            vi, pos = vi + 1, -1
            if vi == len(route):
                return None
    return trial


#: Routes tried for a path have at most this many recirculations (about pipes^(k+1) of
#: them), and the whole search tries at most ``_REPLICA_TRIALS`` routes: placement runs on
#: every edit of a chain (every_nf.sfc's placement: 52 ms on 2 pipes, 47 without replicas;
#: random sets of 5-10 chains on 4 pipes: at most ~0.25 s).
_REPLICA_RECIRCULATIONS = 2
_REPLICA_TRIALS = 1500


def _replicate(cells, sw: _Switch, cost_of, paths, replicable: frozenset[str],
               max_instances: int | None, rounds: int = 8):
    """*cells* with replicas of *replicable* NFs where they save recirculations: for
    each path that recirculates (the heaviest first), every route with fewer
    recirculations (at most :data:`_REPLICA_RECIRCULATIONS`) is tried (:func:`_along`),
    and the one that lowers the weighted recirculations of all paths most, with the
    fewest instances, is kept; until no path gains, or :data:`_REPLICA_TRIALS` routes
    were tried.  Replicas are only added (the NFs already placed keep their order), so
    no path's cost can rise."""
    cur = {pl: list(n) for pl, n in cells.items()}
    cost = _total(sw, cur, paths)
    trials = 0
    for _ in range(rounds):
        improved = False
        at = _positions(cur)
        order = sorted((p for p in paths if p.nfs),
                       key=lambda p: -p.weight * sw.path_cost(p.nfs, at, p.terminal))
        for p in order:
            mine = sw.path_cost(p.nfs, _positions(cur), p.terminal)
            if mine == 0:
                continue
            size = sum(map(len, cur.values()))
            best = None
            for route in _routes(sw, min(mine - 1, _REPLICA_RECIRCULATIONS)):
                if trials >= _REPLICA_TRIALS:
                    break
                trials += 1
                for prefer in (False, True):
                    trial = _along(route, p.nfs, cur, sw, cost_of, replicable, prefer)
                    if trial is None:
                        continue
                    n = sum(map(len, trial.values()))
                    if n == size or (max_instances is not None and n > max_instances):
                        continue
                    if sw.path_cost(p.nfs, _positions(trial), p.terminal) >= mine:
                        continue             # the path itself gains nothing
                    c = _total(sw, trial, paths)
                    if c < cost - 1e-12 and (best is None or (c, n) < best[:2]):
                        best = (c, n, trial)
            if best is not None:
                cost, _, cur = best
                improved = True
        if not improved:
            break
    return cur


#: Fields of the NF interface (``sfc_meta_t``) whose writes ask where the packet goes.
_PORT_REQUESTS = ("egress_port", "egress_valid", "mcast_grp", "to_cpu")


def ingress_only_nfs(catalog, nfs: Iterable[str], paths: Sequence[ServicePath] = ()
                     ) -> frozenset[str]:
    """The NF types of *nfs* that must run in an ingress pipelet on TNA: those that ask
    for a port, a multicast group or the CPU, or emit a digest (their P4, where the
    catalogue has it), and those a service path branches after (the port after an egress
    pipelet was chosen before it).

    >>> from sfclab.p4.catalog import load_default
    >>> sorted(ingress_only_nfs(load_default(), ["l3fwd", "nat", "flood", "monitor"]))
    ['flood', 'l3fwd']
    """
    out: set[str] = set()
    for nf in nfs:
        if _asks_port_source(catalog, nf):
            out.add(nf)
    return frozenset(out | branching_nfs(paths))


_ASKS = re.compile(r"\.\s*(?:egress_port|egress_valid|mcast_grp|to_cpu)\s*=(?!=)|\bSfcDigest\b")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


_L4 = re.compile(r"\bSfcL4Checksum\b")


def _asks_port_source(catalog, nf: str) -> bool:
    """:func:`asks_port` of an NF's P4, read from its source text (no parse: placement
    runs on every edit); False for an NF without P4."""
    try:
        d = catalog.definition(nf)
    except Exception:        # an NFCatalog without P4, or an NF with none
        return False
    if "control" in vars(d):                     # parsed already
        return d.control is not None and asks_port(d.control)
    return _source_has(catalog, nf, _ASKS)


def _source_has(catalog, nf: str, pattern: re.Pattern) -> bool:
    """Whether an NF's P4 source (comments aside) has *pattern*; False without P4."""
    try:
        d = catalog.definition(nf)
    except Exception:
        return False
    text = d._p4_text if d._p4_text is not None else (
        d.p4_path.read_text() if d.p4_path is not None else "")
    return bool(pattern.search(_COMMENT.sub("", text)))


def asks_port(control) -> bool:
    """Whether an NF's control asks for a port, a multicast group or the CPU, or emits a
    digest: what only an ingress pipelet can do on TNA."""
    from ..p4 import ast as A

    sfc = control.params[1].name if len(control.params) > 1 else "sfc"
    for n in A.walk(control):
        if isinstance(n, A.Assign) and isinstance(n.lhs, A.Member) \
                and isinstance(n.lhs.expr, A.Name) and n.lhs.expr.name == sfc \
                and n.lhs.name in _PORT_REQUESTS:
            return True
        if isinstance(n, A.Instance) and isinstance(n.type, A.NamedType) \
                and n.type.name == "SfcDigest":
            return True
    return False


def placement_pass(state, *, options):
    """Driver entry: adds ``placement`` (:class:`PlacementResult`) to the state
    (skipped unless ``options.placement`` or, when that is None, ``arch == "tna"``).
    For TNA each pipelet's stages are less sfclab's core (:data:`TNA_CORE_STAGES`),
    NFs no path runs both of share stages side by side, and the NFs that choose the
    port run in an ingress pipelet (:func:`ingress_only_nfs`)."""
    wanted = options.placement if options.placement is not None else state.arch == "tna"
    if not wanted:
        return state
    pipe_order = state.pipeline.optimal.slots if state.pipeline is not None else ()
    return dataclasses.replace(state, placement=place_for(
        state.paths, state.catalog, state.arch, options, orders=[pipe_order],
        where=_where(state.chains)))


def place_for(paths: Sequence[ServicePath], catalog, arch: str, options, *,
              orders: Sequence[Sequence[str]] = (), where=None) -> PlacementResult:
    """:func:`place` with a compile's options, as the pass runs it for *arch*."""
    tna = arch == "tna"
    return place(paths, catalog, pipes=options.pipes, stages=options.stages,
                 entry_pipe=options.entry_pipe, exit_pipe=options.exit_pipe,
                 loopback_ratio=options.loopback_ratio, orders=orders,
                 reserved=TNA_CORE_STAGES if tna else CoreStages(), where=where,
                 ingress_only=ingress_only_nfs(catalog, first_seen(paths), paths) if tna else (),
                 side_by_side=tna, extra_stages=tna_extra_stages(catalog, paths) if tna else None,
                 replicable=(stateless_nfs(catalog, first_seen(paths))
                             if tna and getattr(options, "replicas", True) else ()),
                 max_instances=options.widths.bitmap)


#: An extern instance that keeps state (sfclab's API, TNA's, v1model's): its type, then
#: ``<`` or ``(`` (not a field such as ``sfc.counter``).
_STATE = re.compile(r"(?<![.\w])(?:SfcRegister|SfcRegisterAction|SfcCounter|SfcDirectCounter"
                    r"|SfcMeter|Register|DirectRegister|RegisterAction|DirectRegisterAction|Counter"
                    r"|DirectCounter|Meter|DirectMeter|Lpf|DirectLpf|Wred|DirectWred|register"
                    r"|counter|direct_counter|meter|direct_meter)\s*[<(]")


def stateless_nfs(catalog, nfs: Iterable[str]) -> frozenset[str]:
    """The NF types of *nfs* that keep no state (their P4 declares no register, counter
    or meter): placement may run them in several pipelets, each replica seeing the same
    tables (sfclab writes an NF's entries into every instance) and nothing of its own to
    diverge.  An NF without P4 in the catalogue is not one of them.

    >>> from sfclab.p4.catalog import load_default
    >>> sorted(stateless_nfs(load_default(), ["nat", "monitor", "qos", "l3fwd"]))
    ['l3fwd', 'nat']
    """
    out = set()
    for nf in nfs:
        try:
            d = catalog.definition(nf)
        except Exception:
            continue
        if getattr(d, "has_p4", False) and not _source_has(catalog, nf, _STATE):
            out.add(nf)
    return frozenset(out)


def tna_extra_stages(catalog, paths: Sequence[ServicePath]) -> dict[str, int]:
    """Stages a TNA NF takes besides its span: one for the branch table after an NF a path
    branches after, one for the compiler's TCP/UDP checksum-update condition after an NF
    that updates the checksum (lb, nat), each in the NF's pipelet."""
    out = dict.fromkeys(branching_nfs(paths), 1)
    for nf in first_seen(paths):
        if _source_has(catalog, nf, _L4):
            out[nf] = out.get(nf, 0) + 1
    return out


def _where(chains):
    """NF type -> ``"FILE:LINE:COL: chain 'c': "`` of the first chain using it."""
    def at(nf: str) -> str:
        for c in chains:
            if any(c.graph.nodes[n].get("nf") == nf for n in c.nf_nodes()):
                src = f"{c.source or '<chains>'}:{c.line}:{c.column}: " if c.line else ""
                return f"{src}chain {c.name!r}: "
        return ""
    return at
