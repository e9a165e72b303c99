"""Network placement: every NF instance of every chain onto a switch (or a server) of a topology.

Not one of the one-switch :data:`~sfclab.passes.PASSES`: it runs when a
topology is given (:class:`sfclab.network.Network`).  The problem and its cost
are in :mod:`.problem`; two solvers answer it and are reported side by side,
as the pipeline pass reports its candidates:

* :func:`~.ilp.solve_exact` — an integer programme solved by HiGHS: optimal
  (or, at its time limit, the best found with its gap to the dual bound);
* :func:`~.heuristic.solve_heuristic` — a greedy dynamic programme, chain by
  chain, fast enough for thousands of chains.

>>> from sfclab.ir.topology import line
>>> from sfclab.ir.model import ChainSet, linear_chain
>>> r = place_network(line(3, stages=8), ChainSet.of([linear_chain("c", ["heavy_hitter", "nat"])]))
>>> print(r.table())                                     # doctest: +ELLIPSIS
network placement: 1 chains, 2 NF instances on line3 (3 switches)
  solver     status           cost     hops   recirc   server      time        gap
  exact      optimal             0        0        0        0  ...
  heuristic  feasible            0        0        0        0  ...
  chosen: heuristic
  c  h1 -> h2 (default ingress and egress)  s1[heavy_hitter] s2[nat] s3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...errors import CompileError
from ...ir.model import ChainSet
from ...ir.topology import Topology
from ...nfinfo import NFCatalog
from .heuristic import explain_unplaceable, solve_heuristic
from .ilp import NEEDS_HIGHSPY, exact_available, solve_exact
from .problem import (STEERING_STAGES, STEERING_TABLES, ChainPlacement, ChainProblem, Cost,
                      Problem, Route, Solution, Usage, Weights, build_problem, evaluate)

__all__ = ["NetworkPlacement", "place_network", "solve", "SOLVERS", "Weights", "Problem",
           "ChainProblem", "ChainPlacement", "Route", "Solution", "Cost", "Usage",
           "build_problem", "evaluate", "solve_exact", "solve_heuristic", "explain_unplaceable",
           "STEERING_STAGES", "STEERING_TABLES"]

#: ``solver=`` values: ``auto`` runs the exact solver when the instance has at most
#: ``exact_chains`` chains, the heuristic always; the chosen answer is the cheaper
#: (the heuristic's when they cost the same).  Where highspy is missing (Pyodide) the
#: exact solver is ``skipped`` (its reason says why) and the heuristic's answer is
#: chosen; ``exact`` alone then raises :class:`CompileError`, saying it needs highspy.
SOLVERS = ("auto", "both", "exact", "heuristic")


@dataclass(frozen=True, slots=True)
class NetworkPlacement:
    """Both solvers' answers for one problem, and the one chosen."""

    problem: Problem
    exact: Solution | None
    heuristic: Solution | None
    chosen: Solution

    @property
    def chains(self) -> Mapping[str, ChainPlacement]:
        return self.chosen.chains

    @property
    def cost(self) -> Cost:
        assert self.chosen.cost is not None
        return self.chosen.cost

    def usage(self) -> dict[str, Usage]:
        """Slots, stages and tables used on every switch that runs NFs."""
        return evaluate(self.problem, self.chosen.chains)[1]

    def gap(self, s: Solution) -> float | None:
        """How far *s* is above the best lower bound known (0.0: optimal)."""
        if s.cost is None:
            return None
        bounds = [x.bound for x in (self.exact,) if x is not None and x.bound is not None]
        if self.exact is not None and self.exact.status == "optimal" and self.exact.cost:
            bounds.append(self.exact.cost.total)
        if not bounds:
            return None
        lb = max(bounds)
        return 0.0 if s.cost.total <= lb + 1e-12 else (s.cost.total - lb) / max(s.cost.total,
                                                                                 1e-12)

    def table(self) -> str:
        """Both solvers side by side, then where each chain runs (as text)."""
        head = (f"  {'solver':<10} {'status':<12} {'cost':>8} {'hops':>8} {'recirc':>8} "
                f"{'server':>8} {'time':>9} {'gap':>10}")
        lines = [f"network placement: {self.problem.size()}", head]
        for s in (self.exact, self.heuristic):
            if s is None:
                continue
            if s.cost is None:
                lines.append(f"  {s.solver:<10} {s.status:<12} {'-':>8} {'':>8} {'':>8} {'':>8} "
                             f"{_ms(s.seconds):>9} {'':>10}  {s.reason}")
                continue
            g = self.gap(s)
            gap = "" if g is None else f"{100 * g:.2f}%"
            c = s.cost
            lines.append(f"  {s.solver:<10} {s.status:<12} {c.total:>8.4g} {c.hops:>8.4g} "
                         f"{c.recirculations:>8.4g} {c.server_detours:>8.4g} "
                         f"{_ms(s.seconds):>9} {gap:>10}")
        lines.append(f"  chosen: {self.chosen.solver}")
        for c in self.problem.chains:
            pl = self.chosen.chains[c.name]
            how = f" (default {' and '.join(c.defaulted)})" if c.defaulted else ""
            lines.append(f"  {c.name}  {c.ingress} -> {c.egress}{how}  {pl.describe()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _ms(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 10 else f"{s:.1f} s"


def solve(problem: Problem, *, solver: str = "auto", exact_chains: int = 40,
          time_limit: float = 60.0) -> NetworkPlacement:
    """Run the solvers *solver* names on *problem*; :class:`CompileError` with the
    reason (chain, switch, budget) when no placement exists."""
    if solver not in SOLVERS:
        from ...errors import did_you_mean

        raise CompileError(f"unknown placement solver {solver!r}",
                           hint=did_you_mean(solver, SOLVERS) or f"use one of {', '.join(SOLVERS)}")
    heur = solve_heuristic(problem) if solver != "exact" else None
    run_exact = solver in ("exact", "both") or (solver == "auto"
                                                and len(problem.chains) <= exact_chains)
    start = heur.chains if heur is not None and heur.ok else None
    exact = None
    if run_exact and not exact_available():                  # no HiGHS here (Pyodide)
        if solver == "exact":
            raise CompileError(NEEDS_HIGHSPY, hint="pip install highspy (or use "
                                                   "solver='heuristic')")
        exact = Solution("exact", "skipped", {}, 0.0,
                         reason=f"{NEEDS_HIGHSPY} (pip install highspy)")
    elif run_exact:
        exact = solve_exact(problem, time_limit=time_limit, start=start)
    found = [s for s in (exact, heur) if s is not None and s.ok]
    if not found:
        raise CompileError(_no_placement(problem, exact, heur),
                           hint="raise the switches' stages/tables, add switches or servers on "
                                "the chains' routes, or spread the chains' endpoints")
    # the cheaper; the heuristic's on a tie (ties are broken the same way every run)
    chosen = min(found, key=lambda s: (round(s.cost.total, 12), s.solver != "heuristic"))
    return NetworkPlacement(problem, exact, heur, chosen)


def _no_placement(problem: Problem, exact: Solution | None, heur: Solution | None) -> str:
    """Why there is no placement: the heuristic's reason (chain, switch, budget), and
    whether the exact solver proved that none exists."""
    if heur is not None and heur.reason:
        why = heur.reason
    else:
        from .heuristic import SwitchRoom

        why = explain_unplaceable(problem, problem.chains[0], SwitchRoom(problem))
    if exact is not None and exact.status == "infeasible":
        return f"no network placement exists (the exact solver proved it): {why}"
    if exact is not None:
        return (f"no network placement found: {why} (the exact solver stopped: "
                f"{exact.status}, {exact.reason})")
    return (f"the heuristic found no network placement: {why} (solver='exact' tells whether "
            f"one exists)")


def place_network(topology: Topology, chains: ChainSet, *, catalog: NFCatalog | None = None,
                  solver: str = "auto", weights: Weights | None = None, exact_chains: int = 40,
                  time_limit: float = 60.0, max_routes: int = 8, max_extra: int = 2,
                  ) -> NetworkPlacement:
    """Place *chains* on *topology*: build the problem, run the solvers, pick the cheaper."""
    problem = build_problem(topology, chains, catalog=catalog, weights=weights,
                            max_routes=max_routes, max_extra=max_extra)
    return solve(problem, solver=solver, exact_chains=exact_chains, time_limit=time_limit)
