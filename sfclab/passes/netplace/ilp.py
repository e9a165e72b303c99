"""The exact placement: an integer linear programme solved by HiGHS (``highspy``).

Variables (all 0/1 but the cost indicators, which the objective pushes to 0/1):

* ``r[c,k]`` — chain *c* takes its candidate route *k*;
* ``x[c,v,k,q,n]`` — instance *v* runs at position *q* of route *k* on node *n*
  (the switch there, or a server linked to it that runs the NF);
* ``t[s,τ]`` — switch *s* has a slot for NF type *τ*;
* ``y`` — a recirculation between consecutive *u*, *v* on one switch (only for
  pairs whose slots are in the wrong order); ``z`` — a server detour into *v*.

Constraints: one route per chain, and every instance placed on the chain's route
(``Σ_{q,n} x[c,v,k,q,n] = r[c,k]``); positions never go back along a path
(``Σ q·x[u,k] ≤ Σ q·x[v,k]`` per route); ``x ≤ t`` for the slot it needs; per
switch ``Σ stages(τ)·t[s,τ]`` and ``Σ tables(τ)·t[s,τ]`` within its budgets;
``y ≥ x[u,k,q,s] + x[v,k,q,s] − 1``; ``z ≥ X[v,n] − X[u,n]`` where ``X`` sums a
node's ``x`` over routes and positions.  The objective is the cost of
:func:`~.problem.evaluate`, so the two solvers are compared on one number (HiGHS's
dual bound gives the gap); it is scaled so that the smallest difference two
placements can have is 1, plus :data:`SLOT_TIE_BREAK` per slot (prefer sharing
slots) — HiGHS's tolerances are absolute (about 1e-7), so an unscaled tie-break
small enough not to change the optimum would be lost in them.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping
from contextlib import contextmanager

from ...errors import CompileError
from .problem import ChainPlacement, Problem, Solution, evaluate

__all__ = ["solve_exact", "build_model", "Model", "SLOT_TIE_BREAK", "exact_available",
           "NEEDS_HIGHSPY"]

#: Why the exact solver cannot run where highspy is missing (Pyodide: JupyterLite's kernel).
NEEDS_HIGHSPY = "the exact network placement needs highspy, which is not installed here"


def exact_available() -> bool:
    """Whether HiGHS (``highspy``, with numpy) can be imported here: not in Pyodide."""
    return all(importlib.util.find_spec(m) is not None for m in ("highspy", "numpy"))

#: The objective's cost per slot, in units of the smallest real cost difference.
SLOT_TIE_BREAK = 1e-4
#: … and per position along the route an NF is placed at (earlier is preferred).
POSITION_TIE_BREAK = 1e-6


class Model:
    """The ILP in row form, with what each column means."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.rows: list[tuple[list[int], list[float], float, float]] = []
        self.meaning: dict[int, tuple] = {}
        self.scale = 1.0
        self.exact_units = False

    def col(self, cost: float = 0.0, *, integer: bool = True, lo: float = 0.0, hi: float = 1.0,
            meaning: tuple | None = None) -> int:
        self.cost.append(cost)
        self.lower.append(lo)
        self.upper.append(hi)
        self.integer.append(integer)
        k = len(self.cost) - 1
        if meaning is not None:
            self.meaning[k] = meaning
        return k

    def row(self, cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        merged: dict[int, float] = {}
        for c, v in zip(cols, vals):
            merged[c] = merged.get(c, 0.0) + v
        kept = [(c, v) for c, v in merged.items() if v != 0.0]     # HiGHS wants no zeros
        if kept:
            self.rows.append(([c for c, _ in kept], [v for _, v in kept], lo, hi))

    @property
    def size(self) -> str:
        return f"{len(self.cost)} variables, {len(self.rows)} constraints"


def _unit(p: Problem) -> tuple[float, bool]:
    """The cost unit: every placement's cost is a whole multiple of it when the
    weights are (near) rational — the gcd of path shares times cost weights — so a
    gap under one unit proves a placement optimal.  ``(unit, exact)``; when there
    is no such unit, the smallest share times weight, not exact."""
    from fractions import Fraction
    from math import gcd, lcm

    w = p.weights
    coeff = [v for v in (w.hops, w.recirculations, w.server) if v > 0]
    values = [Fraction(x.weight * k).limit_denominator(10 ** 6) for c in p.chains
              for x in c.paths if x.weight > 0 for k in coeff]
    if w.new_slots > 0:
        values.append(Fraction(w.new_slots).limit_denominator(10 ** 6))
    values = [v for v in values if v > 0]
    if not values:
        return 1.0, False
    g = Fraction(gcd(*(v.numerator for v in values)), lcm(*(v.denominator for v in values)))
    if g > 0 and float(min(values) / g) < 1e7:
        return float(g), True
    return float(min(values)), False


def build_model(p: Problem) -> Model:
    """The integer programme of *p* (see the module docstring)."""
    m = Model()
    unit, m.exact_units = _unit(p)
    m.scale = scale = 1.0 / unit
    w = p.weights
    inf = float("inf")
    slot: dict[tuple[str, str], int] = {}

    def t(s: str, nf: str) -> int:
        if (s, nf) not in slot:
            fresh = s in p.installed and nf not in p.installed[s]      # a reload of s
            slot[s, nf] = m.col(SLOT_TIE_BREAK + scale * (w.new_slots if fresh else 0.0),
                                meaning=("slot", s, nf))
        return slot[s, nf]

    for c in p.chains:
        preset = p.preset.get(c.name)
        r = [m.col(scale * w.hops * c.weight * route.extra,
                   lo=1.0 if preset and preset.route == route.switches else 0.0,
                   hi=0.0 if preset and preset.route != route.switches else 1.0,
                   meaning=("route", c.name, k)) for k, route in enumerate(c.routes)]
        m.row(r, [1.0] * len(r), 1.0, 1.0)
        x: dict[str, dict[int, list[tuple[int, int, str]]]] = {}   # v -> k -> [(col, q, node)]
        fixed = {i: (q, n) for i, q, n in preset.where} if preset else {}
        for v in c.instances:
            x[v] = {}
            for k, route in enumerate(c.routes):
                cols = []
                for q, s in enumerate(route.switches):
                    nodes = ([n for n in route.servers[q] if p.topology.node(n).runs(c.nf[v])]
                             if v in c.on_server else [s]) if route.usable(q) else []
                    for n in nodes:
                        on = preset is not None and route.switches == preset.route \
                            and fixed[v] == (q, n)
                        col = m.col(POSITION_TIE_BREAK * q, lo=1.0 if on else 0.0,
                                    hi=0.0 if preset and not on else 1.0,
                                    meaning=("at", c.name, v, k, q, n))
                        cols.append((col, q, n))
                        if v not in c.on_server:
                            m.row([col, t(s, c.nf[v])], [1.0, -1.0], -inf, 0.0)
                x[v][k] = cols
                m.row([col for col, _, _ in cols] + [r[k]], [1.0] * len(cols) + [-1.0], 0.0, 0.0)
        for a, b, wt in c.pairs:
            if a == b:                # a loop on one instance: one place, one more pass each
                if a not in c.on_server:
                    m.col(scale * w.recirculations * wt, integer=False, lo=1.0)
                continue
            for k, route in enumerate(c.routes):
                xa, xb = x[a][k], x[b][k]
                # b at or before position q only if a is too (cumulative form: tight in LP)
                for q in range(len(route.switches) - 1):
                    ca = [col for col, qa, _ in xa if qa <= q]
                    cb = [col for col, qb, _ in xb if qb <= q]
                    m.row(cb + ca, [1.0] * len(cb) + [-1.0] * len(ca), -inf, 0.0)
                if b not in c.on_server and a not in c.on_server \
                        and p.descending(c.nf[a], c.nf[b]):
                    # a recirculation when b is not after a: y ≥ x[a,q] − Σ_{q' > q} x[b,q']
                    for ca, q, _ in xa:
                        later = [col for col, qb, _ in xb if qb > q]
                        y = m.col(scale * w.recirculations * wt, integer=False)
                        m.row([y, ca, *later], [1.0, -1.0] + [1.0] * len(later), 0.0, inf)
        _detours(m, c, x, scale * w.server)
    by_switch: dict[str, list[tuple[int, str]]] = {}
    for (s, nf), col in slot.items():
        by_switch.setdefault(s, []).append((col, nf))
    for s, cols in by_switch.items():
        for which in (0, 1):                                   # stages, tables
            m.row([col for col, _ in cols], [float(p.resources[nf][which]) for _, nf in cols],
                  -inf, float(p.budgets[s][which]))
    return m


def _detours(m: Model, c, x, weight: float) -> None:
    """z ≥ X[v,n] − X[u,n] for pairs into a server instance v; z ≥ X[v,n] for firsts."""
    inf = float("inf")

    def total(v: str) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for cols in x[v].values():
            for col, _, n in cols:
                out.setdefault(n, []).append(col)
        return out

    firsts = dict(c.firsts)
    for v in sorted(c.on_server):
        xv = total(v)
        into = [(a, wt) for a, b, wt in c.pairs if b == v]
        if v in firsts:
            into.append((None, firsts[v]))
        for a, wt in into:
            xa = total(a) if a is not None else {}
            for n, cols in xv.items():
                z = m.col(weight * wt, integer=False)
                other = xa.get(n, [])
                m.row([z, *cols, *other], [1.0] + [-1.0] * len(cols) + [1.0] * len(other),
                      0.0, inf)


@contextmanager
def _quiet_stdout():
    """HiGHS prints a banner on stdout when the first solver is made: keep it out."""
    try:
        fd = os.dup(1)
    except OSError:                 # no real stdout (some notebook kernels)
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(fd, 1)
        os.close(fd)


def solve_exact(p: Problem, *, time_limit: float = 60.0, max_variables: int = 400_000,
                start: Mapping[str, ChainPlacement] | None = None) -> Solution:
    """Solve the ILP of *p* with HiGHS within *time_limit* seconds (``skipped`` when
    the model has more than *max_variables* columns); *start*: a placement to start
    from (the heuristic's), so the search begins with its cost as the one to beat."""
    t0 = time.perf_counter()
    try:
        import highspy
        import numpy as np
    except ImportError:                                    # pragma: no cover - a dependency
        raise CompileError(NEEDS_HIGHSPY,
                           hint="pip install highspy (or use solver='heuristic')") from None
    m = build_model(p)
    if len(m.cost) > max_variables:
        return Solution("exact", "skipped", {}, time.perf_counter() - t0,
                        reason=f"{m.size}: more than {max_variables} variables")
    with _quiet_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", 1)
    ties = _ties(m)
    if m.exact_units and ties < 0.5:           # below one unit: nothing cheaper exists
        h.setOptionValue("mip_abs_gap", 0.999 - ties)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(m.cost), len(m.rows)
    lp.col_cost_ = np.array(m.cost)
    lp.col_lower_ = np.array(m.lower)
    lp.col_upper_ = np.array(m.upper)
    lp.row_lower_ = np.array([r[2] for r in m.rows])
    lp.row_upper_ = np.array([r[3] for r in m.rows])
    a = lp.a_matrix_
    a.format_ = highspy.MatrixFormat.kRowwise
    a.start_ = np.cumsum([0] + [len(r[0]) for r in m.rows], dtype=np.int32)
    a.index_ = np.array([i for r in m.rows for i in r[0]], dtype=np.int32)
    a.value_ = np.array([v for r in m.rows for v in r[1]])
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                       for i in m.integer]
    h.passModel(lp)
    if start:
        idx = _start(p, m, start)
        h.setSolution(len(idx), np.array(idx, dtype=np.int32), np.ones(len(idx)))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    seconds = time.perf_counter() - t0
    has_solution = info.primal_solution_status == 2          # kSolutionStatusFeasible
    if status == "Infeasible":
        return Solution("exact", "infeasible", {}, seconds,
                        reason="no placement satisfies every budget and route")
    if not has_solution:
        return Solution("exact", "time limit" if "limit" in status.lower() else "failed", {},
                        seconds, reason=f"HiGHS: {status} without a placement ({m.size})")
    values = h.getSolution().col_value
    placed = _read(p, m, values)
    cost, _, bad = evaluate(p, placed)
    if bad:
        return Solution("exact", "failed", placed, seconds,
                        reason="the solution breaks a rule: " + "; ".join(bad[:3]))
    bound = max(0.0, (info.mip_dual_bound - ties) / m.scale)
    return Solution("exact", "optimal" if status == "Optimal" else "time limit", placed,
                    seconds, cost, bound)


def _start(p: Problem, m: Model, placed: Mapping[str, ChainPlacement]) -> list[int]:
    """The 0/1 columns that are 1 in *placed* (routes, locations, slots); HiGHS
    completes the rest (the cost indicators)."""
    where = {(c, i): (q, n) for c, pl in placed.items() for i, q, n in pl.where}
    slots = {(n, p.chain(c).nf[i]) for c, pl in placed.items() for i, _, n in pl.where
             if i not in p.chain(c).on_server}
    ones = []
    for col, mean in m.meaning.items():
        if mean[0] == "route":
            _, c, k = mean
            if c in placed and p.chain(c).routes[k].switches == placed[c].route:
                ones.append(col)
        elif mean[0] == "at":
            _, c, v, k, q, n = mean
            if c in placed and p.chain(c).routes[k].switches == placed[c].route \
                    and where.get((c, v)) == (q, n):
                ones.append(col)
        elif mean[0] == "slot" and (mean[1], mean[2]) in slots:
            ones.append(col)
    return ones


def _ties(m: Model) -> float:
    """The most the tie-breaks can add to the objective."""
    return SLOT_TIE_BREAK * sum(1 for v in m.cost if v == SLOT_TIE_BREAK) + \
        POSITION_TIE_BREAK * sum(mean[4] for mean in m.meaning.values() if mean[0] == "at")


def _read(p: Problem, m: Model, values) -> dict[str, ChainPlacement]:
    routes: dict[str, int] = {}
    where: dict[str, list[tuple[str, int, str]]] = {}
    for col, meaning in m.meaning.items():
        if values[col] < 0.5:
            continue
        if meaning[0] == "route":
            routes[meaning[1]] = meaning[2]
        elif meaning[0] == "at":
            _, chain, v, k, q, n = meaning
            where.setdefault(chain, []).append((k, v, q, n))
    out = {}
    for c in p.chains:
        k = routes[c.name]
        order = {v: i for i, v in enumerate(c.instances)}
        spots = sorted(((v, q, n) for kk, v, q, n in where.get(c.name, []) if kk == k),
                       key=lambda e: order[e[0]])
        out[c.name] = ChainPlacement(c.name, c.routes[k].switches, tuple(spots))
    return out
