"""The fast placement: chain by chain, the cheapest placement on each candidate route.

Chains are placed one at a time (preset ones first, then the heaviest and
longest), each on the free room the earlier ones left.  For one chain and one
route, a dynamic programme over the chain's units (its NF instances in an order
every path follows; a loop body is one unit) and the route's positions finds
the cheapest monotone placement: the state is (unit, position, first unit of
the block at that position), which is all the cost needs — two consecutive NFs
share a switch exactly when they are in the same block — and all the budget
check needs (the block's new NF types on that switch).  Routes are tried in
order of extra hops and the search stops when a route's hop cost alone is no
better than the best found.  A chain that fits nowhere is retried first (up to
*restarts* times) before the placement is declared impossible, with the reason.

Every answer satisfies the exact solver's constraints, so its cost is an upper
bound on the optimum (:mod:`.ilp`).  On small random instances its cost is at most
1.5 × the optimum plus one path's share of traffic (``tests/network/test_netplace.py``);
on very tight budgets it can miss a placement that needs several chains moved at once.

>>> from sfclab.ir.topology import line
>>> from sfclab.ir.model import ChainSet, linear_chain
>>> from .problem import build_problem
>>> p = build_problem(line(3), ChainSet.of([linear_chain("c", ["firewall", "nat"])]))
>>> s = solve_heuristic(p)
>>> s.status, s.chains["c"].describe(), s.cost.total
('feasible', 's1[firewall, nat] s2 s3', 0.0)
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable

from .problem import (ChainPlacement, ChainProblem, Problem, Route, Solution, chain_cost,
                      evaluate)

__all__ = ["solve_heuristic", "explain_unplaceable", "SwitchRoom", "EPSILON"]

_INF = float("inf")
#: Tie-breaks, far below any real cost difference: per NF slot added (share slots),
#: and a tenth of it per share of a switch's free stages taken (keep room for others).
EPSILON = 1e-9


class SwitchRoom:
    """The NF types on each switch (with how many instances use each) and the
    stages and tables they leave free.  Slots a running switch has but no chain
    uses do not count: a reload drops them, and a switch that is not reloaded
    keeps a program that fitted."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.types: dict[str, dict[str, int]] = {s: {} for s in problem.budgets}
        self.used: dict[str, list[int]] = {s: [0, 0] for s in problem.budgets}
        #: Placements the improvement may still try (the heuristic's work budget).
        self.work = 0

    def need(self, s: str, types: Iterable[str]) -> tuple[int, int]:
        res = self.p.resources
        new = [t for t in types if t not in self.types[s]]
        return sum(res[t][0] for t in new), sum(res[t][1] for t in new)

    def free(self, s: str) -> tuple[int, int]:
        bs, bt = self.p.budgets[s]
        return bs - self.used[s][0], bt - self.used[s][1]

    def fits(self, s: str, types: Iterable[str]) -> bool:
        st, tb = self.need(s, types)
        fs, ft = self.free(s)
        return st <= fs and tb <= ft

    def add(self, s: str, t: str, n: int = 1) -> None:
        have = self.types[s]
        if t not in have:
            st, tb = self.p.resources.get(t, (0, 0))
            self.used[s][0] += st
            self.used[s][1] += tb
        have[t] = have.get(t, 0) + n

    def remove(self, s: str, t: str) -> None:
        have = self.types[s]
        have[t] -= 1
        if not have[t]:
            del have[t]
            st, tb = self.p.resources.get(t, (0, 0))
            self.used[s][0] -= st
            self.used[s][1] -= tb


class _Chain:
    """What the dynamic programme needs about one chain, computed once."""

    def __init__(self, p: Problem, c: ChainProblem) -> None:
        self.c = c
        units = c.units
        self.n = len(units)
        unit = {i: j for j, u in enumerate(units) for i in u}
        self.unit = unit
        self.sw = [frozenset(c.nf[i] for i in u if i not in c.on_server) for u in units]
        self.srv = [[(i, c.nf[i]) for i in u if i in c.on_server] for u in units]
        self.block = [[frozenset()] * self.n for _ in range(self.n)]
        for b in range(self.n):
            acc: frozenset[str] = frozenset()
            for j in range(b, self.n):
                acc = acc | self.sw[j]
                self.block[b][j] = acc
        self.rec = [[0.0] * (j + 1) for j in range(self.n)]
        self.into: dict[str, list[tuple[str, float]]] = {}
        for a, v, w in c.pairs:
            if v in c.on_server:
                self.into.setdefault(v, []).append((a, w))
            elif a not in c.on_server and p.descending(c.nf[a], c.nf[v]):
                j = unit[v]
                for b in range(unit[a] + 1):
                    self.rec[j][b] += w
        self.first = dict(c.firsts)

    def fresh(self, s: str, b: int, j: int, have, installed: frozenset[str]) -> int:
        """Slots unit *j* adds to running switch *s* that it does not run already."""
        def new(types):
            return sum(1 for t in types if t not in have and t not in installed)
        return new(self.block[b][j]) - (new(self.block[b][j - 1]) if j > b else 0)


def _server_for(p: Problem, servers: tuple[str, ...], nf: str) -> str | None:
    return next((s for s in servers if p.topology.node(s).runs(nf)), None)


def _best_on_route(p: Problem, ch: _Chain, route: Route, room: SwitchRoom,
                   cache: dict) -> tuple[float, list[int]] | None:
    """The cheapest placement of *ch* on *route*: (cost without hops, position per unit).
    *cache* keeps what a block costs on a switch, for every route of one placement."""
    w = p.weights
    n, L = ch.n, len(route.switches)
    if n == 0:
        return 0.0, []
    res = p.resources
    usable = [route.usable(q) for q in range(L)]

    def step(j: int, q: int, b: int) -> float | None:
        if not usable[q]:
            return None
        s = route.switches[q]
        key = (s, b, j)
        hit = cache.get(key, ())
        if hit == ():
            if not ch.sw[j] or room.fits(s, ch.block[b][j]):
                have = room.types[s]
                new = [t for t in ch.block[b][j] if t not in have]
                old = [t for t in ch.block[b][j - 1] if t not in have] if j > b else []
                # how much of the switch's free room this unit takes (tie-break: keep room)
                taken = (sum(res[t][0] for t in new) - sum(res[t][0] for t in old)) \
                    / max(1, room.free(s)[0])
                hit = (len(new) - len(old), taken)
            else:
                hit = None
            cache[key] = hit
        if hit is None:
            return None
        added, taken = hit
        cost = w.recirculations * ch.rec[j][b] + EPSILON * (added + 0.1 * taken)
        if s in p.installed:
            cost += w.new_slots * ch.fresh(s, b, j, room.types[s], p.installed[s])
        for i, nf in ch.srv[j]:
            here = _server_for(p, route.servers[q], nf)
            if here is None:
                return None
            d = ch.first.get(i, 0.0)
            for a, wt in ch.into.get(i, ()):
                if not (ch.unit[a] >= b and a in ch.c.on_server
                        and _server_for(p, route.servers[q], ch.c.nf[a]) == here):
                    d += wt
            cost += w.server * d
        return cost

    layers: list[list[dict[int, tuple[float, tuple[int, int] | None]]]] = []
    prev: list[dict[int, tuple[float, tuple[int, int] | None]]] | None = None
    for j in range(n):
        cur: list[dict[int, tuple[float, tuple[int, int] | None]]] = [{} for _ in range(L)]
        run, run_at = (0.0, None) if j == 0 else (_INF, None)
        for q in range(L):
            if run < _INF:
                c = step(j, q, j)
                if c is not None:
                    cur[q][j] = (run + c, run_at)
            if prev is not None:
                for b, (cost, _) in prev[q].items():
                    c = step(j, q, b)
                    if c is not None and cost + c < cur[q].get(b, (_INF,))[0]:
                        cur[q][b] = (cost + c, (q, b))
                for b, (cost, _) in prev[q].items():
                    if cost < run:
                        run, run_at = cost, (q, b)
        layers.append(cur)
        prev = cur
    end = min(((cost, q, b) for q in range(L) for b, (cost, _) in prev[q].items()), default=None)
    if end is None:
        return None
    cost, q, b = end
    pos = [0] * n
    for j in range(n - 1, -1, -1):
        pos[j] = q
        back = layers[j][q][b][1]
        if back is not None:
            q, b = back
    return cost, pos


def _place_chain(p: Problem, ch: _Chain, room: SwitchRoom) -> tuple[float, ChainPlacement] | None:
    """The cheapest placement of one chain on the room left (not committed)."""
    c = ch.c
    best: tuple[float, Route, list[int]] | None = None
    cache: dict = {}
    room.work -= 1
    for route in c.routes:
        hop = p.weights.hops * c.weight * route.extra
        if best is not None and hop >= best[0]:
            break
        found = _best_on_route(p, ch, route, room, cache)
        if found is not None and (best is None or hop + found[0] < best[0]):
            best = (hop + found[0], route, found[1])
    if best is None:
        return None
    cost, route, pos = best
    where = []
    for j, unit in enumerate(c.units):
        s = route.switches[pos[j]]
        for i in unit:
            node = _server_for(p, route.servers[pos[j]], c.nf[i]) if i in c.on_server else s
            where.append((i, pos[j], node))
    return cost, ChainPlacement(c.name, route.switches, tuple(where))


class _State:
    """A placement being built: what is placed, the room left, who uses which switch."""

    def __init__(self, p: Problem) -> None:
        self.p = p
        self.room = SwitchRoom(p)
        self.placed: dict[str, ChainPlacement] = {}
        self.cost: dict[str, float] = {}
        self.users: dict[str, set[str]] = {}

    def commit(self, pl: ChainPlacement) -> None:
        c = self.p.chain(pl.chain)
        for i, _, node in pl.where:
            if i not in c.on_server:
                self.room.add(node, c.nf[i])
                self.users.setdefault(node, set()).add(c.name)
        self.placed[c.name] = pl
        w = self.p.weights
        h, r, d = chain_cost(self.p, c, pl)
        self.cost[c.name] = w.hops * h + w.recirculations * r + w.server * d

    def uncommit(self, name: str) -> ChainPlacement:
        pl = self.placed.pop(name)
        c = self.p.chain(name)
        for i, _, node in pl.where:
            if i not in c.on_server:
                self.room.remove(node, c.nf[i])
                self.users[node].discard(name)
        del self.cost[name]
        return pl

    def total(self) -> float:
        return sum(self.cost.values())


def _greedy(p: Problem, data: dict[str, _Chain], order: list[ChainProblem], work: int
            ) -> tuple[_State, list[str]]:
    st = _State(p)
    st.room.work = work
    for pl in p.preset.values():
        st.commit(pl)
    failed = []
    for c in order:
        found = _place_chain(p, data[c.name], st.room)
        if found is not None:
            st.commit(found[1])
        elif not _repair(p, data, st, c.name):
            failed.append(c.name)
    return st, failed


def _repair(p: Problem, data: dict[str, _Chain], st: _State, name: str) -> bool:
    """Make room for chain *name*: move one chain that uses a switch on its routes
    out of the way (place *name* first, then that chain again)."""
    switches = {s for r in p.chain(name).routes for s in r.switches}
    for other in sorted({m for s in switches for m in st.users.get(s, ())} - set(p.preset)):
        if st.room.work <= 0:
            break
        old = st.uncommit(other)
        found = _place_chain(p, data[name], st.room)
        if found is not None:
            st.commit(found[1])
            again = _place_chain(p, data[other], st.room)
            if again is not None:
                st.commit(again[1])
                return True
            st.uncommit(name)
        st.commit(old)
    return False


def _improve(p: Problem, data: dict[str, _Chain], st: _State, groups: bool) -> None:
    """Rip up and re-place while the work budget lasts: one costly chain at a time,
    then with each chain sharing its switches, then (*groups*) with all of them;
    a change is kept only when the total cost drops."""
    tol = 1e-12
    room = st.room
    for _ in range(3):
        better = False
        costly = sorted((n for n in st.cost if st.cost[n] > tol and n not in p.preset),
                        key=lambda n: -st.cost[n])
        for name in costly:
            if room.work <= 0:
                return
            old = st.uncommit(name)
            found = _place_chain(p, data[name], room)
            if found is not None and _cost_of(p, found[1]) < _cost_of(p, old) - tol:
                st.commit(found[1])
                better = True
            else:
                st.commit(old)
        for name in [n for n in costly if st.cost[n] > tol]:
            switches = {s for r in p.chain(name).routes for s in r.switches}
            partners = sorted({m for s in switches for m in st.users.get(s, ())} - {name}
                              - set(p.preset))
            for other in partners:
                if room.work <= 0 or st.cost[name] <= tol:
                    break
                better |= _swap(p, data, st, name, other, tol)
            if groups and st.cost.get(name, 0.0) > tol and room.work > 0:
                better |= _neighbourhood(p, data, st, name, tol)
        if not better:
            return


def _cost_of(p: Problem, pl: ChainPlacement) -> float:
    w = p.weights
    h, r, d = chain_cost(p, p.chain(pl.chain), pl)
    return w.hops * h + w.recirculations * r + w.server * d


def _swap(p: Problem, data: dict[str, _Chain], st: _State, a: str, b: str, tol: float) -> bool:
    """Re-place *a* and *b* in both orders; keep the cheaper if it beats the present."""
    return _replace_group(p, data, st, [a, b], [[a, b], [b, a]], tol)


def _replace_group(p: Problem, data: dict[str, _Chain], st: _State, names: list[str],
                   orders: list[list[str]], tol: float) -> bool:
    before = sum(st.cost[n] for n in names)
    old = [st.uncommit(n) for n in names]
    for order in orders:
        done = []
        for n in order:
            found = _place_chain(p, data[n], st.room)
            if found is None:
                break
            st.commit(found[1])
            done.append(n)
        if len(done) == len(order) and sum(st.cost[n] for n in names) < before - tol:
            return True
        for n in reversed(done):
            st.uncommit(n)
    for pl in old:
        st.commit(pl)
    return False


def _neighbourhood(p: Problem, data: dict[str, _Chain], st: _State, name: str, tol: float,
                   most: int = 6) -> bool:
    """Re-place a costly chain first and the chains sharing its switches after it."""
    switches = {s for r in p.chain(name).routes for s in r.switches}
    others = sorted({m for s in switches for m in st.users.get(s, ())} - {name}
                    - set(p.preset), key=lambda n: (-len(p.chain(n).instances), n))[:most]
    group = [name, *others]
    rng = random.Random(name)
    orders = [group, [name, *reversed(others)]] + [[name, *rng.sample(others, len(others))]
                                                   for _ in range(4)]
    return _replace_group(p, data, st, group, orders, tol)


def _orders(p: Problem, free: list[ChainProblem], shuffles: int) -> list[list[ChainProblem]]:
    """Orders to try: heaviest and longest first; hardest (costly pairs, servers)
    first; then *shuffles* random orders (seeded: the same answer every run)."""
    index = {c.name: k for k, c in enumerate(p.chains)}

    def hard(c: ChainProblem) -> float:
        down = sum(w for a, b, w in c.pairs if p.descending(c.nf[a], c.nf[b]))
        return down + len(c.on_server) * c.weight

    first = sorted(free, key=lambda c: (-c.weight * (1 + len(c.instances)), index[c.name]))
    second = sorted(free, key=lambda c: (-hard(c), -len(c.instances), index[c.name]))
    out = [first] if second == first else [first, second]
    rng = random.Random(0)
    for _ in range(shuffles):
        out.append(rng.sample(first, len(first)))
    return out


#: Up to this many chains the heuristic also tries random orders and moves whole
#: groups of chains (small instances, where it is compared with the exact solver).
SMALL = 40


def solve_heuristic(problem: Problem, *, restarts: int | None = None,
                    effort: float | None = None) -> Solution:
    """Place every chain greedily, then improve (see the module docstring).

    *restarts*: random orders tried besides the two fixed ones (default: 8 up to
    :data:`SMALL` chains, none above); *effort*: placements each improvement may try,
    per chain (default: 30 up to :data:`SMALL` chains, 1 above) — the same work on
    every run, so the same answer."""
    t0 = time.perf_counter()
    data = {c.name: _Chain(problem, c) for c in problem.chains}
    free = [c for c in problem.chains if c.name not in problem.preset]
    small = len(free) <= SMALL
    if restarts is None:
        restarts = 8 if small else 0
    work = int(len(free) * (effort if effort is not None else 30 if small else 1)) + len(free)
    best: tuple[_State, list[str]] | None = None
    for order in _orders(problem, free, restarts):
        st, failed = _greedy(problem, data, order, work)
        if failed:              # once more with the chains that failed first
            order = [c for c in order if c.name in failed] + [c for c in order
                                                              if c.name not in failed]
            st, failed = _greedy(problem, data, order, work)
        if not failed:
            st.room.work = work - len(free)
            _improve(problem, data, st, small)
        if best is None or (len(failed), st.total()) < (len(best[1]), best[0].total()):
            best = (st, failed)
        if not failed and st.total() <= 1e-12:
            break                                         # nothing left to gain
    st, failed = best
    seconds = time.perf_counter() - t0
    if failed:
        why = explain_unplaceable(problem, problem.chain(failed[0]), st.room)
        return Solution("heuristic", "infeasible", dict(st.placed), seconds, reason=why)
    cost, _, bad = evaluate(problem, st.placed)
    if bad:                                    # a bug, not the user's input
        return Solution("heuristic", "failed", dict(st.placed), seconds,
                        reason="the heuristic broke a rule: " + "; ".join(bad[:3]))
    return Solution("heuristic", "feasible", dict(st.placed), seconds, cost)


def explain_unplaceable(p: Problem, c: ChainProblem, room: SwitchRoom) -> str:
    """Why *c* fits on none of its routes, given the room the other chains left."""
    ch = _Chain(p, c)
    ends = f"from {c.ingress} to {c.egress}"
    on_routes = list(dict.fromkeys(s for r in c.routes for s in r.switches))
    for j, unit in enumerate(c.units):
        for i, nf in ch.srv[j]:
            if not any(_server_for(p, r.servers[q], nf) for r in c.routes
                       for q in range(len(r.switches))):
                return (f"chain {c.name}: {i} ({nf}) is not offloadable (P4SFC) and no server "
                        f"that runs {nf} hangs off a switch on a route {ends} (switches "
                        f"{', '.join(on_routes[:8])}); add a server running {nf} linked to one "
                        f"of them")
        types = ch.sw[j]
        if types and not any(room.fits(s, types) for s in on_routes):
            st = sum(p.resources[t][0] for t in types)
            tb = sum(p.resources[t][1] for t in types)
            what = ", ".join(sorted(types))
            loop = " (a loop body: on one switch)" if len(unit) > 1 else ""
            return (f"chain {c.name}: no switch on its routes {ends} has room for {what}{loop}"
                    f" ({st} stages, {tb} tables): " + _rooms(p, room, on_routes))
    types = set().union(*ch.sw) if ch.sw else set()
    st = sum(p.resources[t][0] for t in types)
    tb = sum(p.resources[t][1] for t in types)
    return (f"chain {c.name}: each of its NFs fits some switch, but not all of them in order "
            f"along any route {ends} (they need {st} stages and {tb} tables in all): "
            + _rooms(p, room, on_routes))


def _rooms(p: Problem, room: SwitchRoom, switches: list[str], most: int = 6) -> str:
    parts = []
    for s in switches[:most]:
        fs, ft = room.free(s)
        bs, bt = p.budgets[s]
        ts = ", ".join(p.slots(room.types[s])) or "no NFs"
        parts.append(f"{s} has {fs} of {bs} stages and {ft} of {bt} tables free ({ts})")
    more = f"; … {len(switches) - most} more" if len(switches) > most else ""
    return "; ".join(parts) + more + (" — budgets are the switch's stages and tables less "
                                       "the steering tables'")
