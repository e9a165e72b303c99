"""The network placement problem: chains, their candidate routes, switch budgets, costs.

A :class:`Problem` is what both solvers read (:mod:`.heuristic`, :mod:`.ilp`)
and what :func:`evaluate` scores, so the two are compared on one cost:

* every NF *instance* of a chain (``firewall``, ``nat#2``) gets one location on
  the chain's route, shared by all the chain's service paths: a switch on the
  route, or — for an NF that is not offloadable (P4SFC's class ``non``: it has
  no P4) — a server linked to a switch on the route;
* along every service path, locations never go back along the route (a packet
  only moves forward; an NF on a server is visited from the switch it hangs off);
  so a loop's body stays on one switch;
* each switch runs one composed program whose default pipeline has **one slot per
  NF type** placed on it, in the canonical order (protocol layer, then name:
  FlexMesh's layer order), shared by every chain that uses that type there;
  the slots' catalogue estimates plus the steering tables
  (:data:`STEERING_STAGES`, :data:`STEERING_TABLES`) must fit the switch's
  ``stages`` and ``tables``;
* the cost, weighted by traffic share and by :class:`Weights`: extra hops of the
  route over a shortest one; recirculations — a packet recirculates on a switch
  between two consecutive NFs of its path that both run there when the second's
  slot is not after the first's (the per-switch program does exactly that);
  server detours — one per run of consecutive NFs on one server; and, for runtime
  updates, slots added to a switch that is already running (each is a program
  reload of that switch).

>>> from sfclab.ir.topology import line
>>> from sfclab.ir.model import ChainSet, linear_chain
>>> p = build_problem(line(3), ChainSet.of([linear_chain("c", ["firewall", "nat"])]))
>>> c = p.chains[0]
>>> c.ingress, c.egress, c.defaulted, c.routes[0].switches
('h1', 'h2', ('ingress', 'egress'), ('s1', 's2', 's3'))
>>> c.units, c.pairs
((('firewall',), ('nat',)), (('firewall', 'nat', 1.0),))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from ...errors import CompileError, TopologyError, did_you_mean
from ...ir.model import ChainSet, ServicePath
from ...ir.topology import Topology
from ...nfinfo import NFCatalog
from ..common import nf_info

__all__ = ["Weights", "Route", "ChainProblem", "Problem", "ChainPlacement", "Cost", "Usage",
           "Solution", "build_problem", "evaluate", "chain_cost", "STEERING_STAGES", "STEERING_TABLES"]

#: Stages the steering tables take on every switch (initializer and arrival in the
#: first, rewinder in the last), and the tables (initializer, arrival, rewinder).
STEERING_STAGES = 2
STEERING_TABLES = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """What one unit of each cost is worth (per unit of traffic share)."""

    hops: float = 1.0
    recirculations: float = 1.0
    server: float = 2.0
    #: Per NF slot added to a switch that is already running (runtime updates).
    new_slots: float = 0.0


@dataclass(frozen=True, slots=True)
class Route:
    """Switches from the ingress switch to the egress switch, its extra hops over a
    shortest route, and per position the servers linked to that switch."""

    switches: tuple[str, ...]
    extra: int
    servers: tuple[tuple[str, ...], ...]

    def usable(self, q: int) -> bool:
        """NFs may run at position *q*: not a switch's second visit (``e1 a1 e1``
        goes out to ``a1``'s room; its NFs run at ``e1`` before or ``a1``)."""
        return self.switches.index(self.switches[q]) == q

    def __str__(self) -> str:
        return " ".join(self.switches)


@dataclass(frozen=True, slots=True, eq=False)
class ChainProblem:
    """One chain as the solvers see it."""

    name: str
    ingress: str                       # endpoint: host, server or SWITCH:PORT
    egress: str
    defaulted: tuple[str, ...]         # which of "ingress", "egress" were chosen by default
    weight: float                      # the chain's traffic share
    paths: tuple[ServicePath, ...]
    nf: Mapping[str, str]              # instance -> NF type
    on_server: frozenset[str]          # instances that must run on a server
    units: tuple[tuple[str, ...], ...]  # instances in route order; a loop body is one unit
    pairs: tuple[tuple[str, str, float], ...]   # consecutive (u, v) on some path, total weight
    firsts: tuple[tuple[str, float], ...]       # first instance of a path, total weight
    routes: tuple[Route, ...]

    @property
    def instances(self) -> tuple[str, ...]:
        return tuple(i for u in self.units for i in u)


@dataclass(frozen=True, slots=True)
class ChainPlacement:
    """Where one chain runs: its route, and per instance ``(position on the route,
    node)`` — the node is the switch at that position or a server linked to it."""

    chain: str
    route: tuple[str, ...]
    where: tuple[tuple[str, int, str], ...]

    def location(self, instance: str) -> tuple[int, str]:
        for i, p, n in self.where:
            if i == instance:
                return p, n
        raise KeyError(instance)

    def node(self, instance: str) -> str:
        return self.location(instance)[1]

    def describe(self, problem: Problem | None = None) -> str:
        """The nodes in the order a packet takes them, with the NFs each runs:
        ``e1_1[firewall, nat] a1_1 c1 …``; a detour to a server where it happens,
        then back on its switch: ``c1[firewall] srv1{ips} c1[l3fwd]``.

        >>> ChainPlacement("c", ("s1", "s2"), (("ips", 1, "box1"), ("l3fwd", 1, "s2"))).describe()
        's1 s2 box1{ips} s2[l3fwd]'
        """
        out = []
        for p, s in enumerate(self.route):
            steps: list[tuple[str, list[str]]] = []     # (node, its NFs), in path order
            for i, q, n in self.where:
                if q != p:
                    continue
                if steps and steps[-1][0] == n:
                    steps[-1][1].append(i)
                else:
                    steps.append((n, [i]))
            if not steps or steps[0][0] != s:
                steps.insert(0, (s, []))
            if steps[-1][0] != s:
                steps.append((s, []))
            out += [n + (f"[{', '.join(v)}]" if n == s else f"{{{', '.join(v)}}}") if v else n
                    for n, v in steps]
        return " ".join(out)


@dataclass(frozen=True, slots=True)
class Cost:
    """A placement's cost: each part (traffic-weighted) and the weighted total."""

    hops: float
    recirculations: float
    server_detours: float
    new_slots: int
    total: float

    def __str__(self) -> str:
        return (f"{self.total:.4g} (hops {self.hops:.4g}, recirculations "
                f"{self.recirculations:.4g}, server detours {self.server_detours:.4g}"
                + (f", new slots {self.new_slots}" if self.new_slots else "") + ")")


@dataclass(frozen=True, slots=True)
class Solution:
    """One solver's answer.  ``status``: ``optimal``, ``feasible``, ``time limit`` (the
    best found when time ran out), ``infeasible`` (``reason`` says why), ``skipped``."""

    solver: str
    status: str
    chains: Mapping[str, ChainPlacement]
    seconds: float
    cost: Cost | None = None
    #: A lower bound on the total cost (the exact solver's dual bound), if known.
    bound: float | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.cost is not None


@dataclass(frozen=True, slots=True)
class Usage:
    """What the NFs use on one switch."""

    switch: str
    types: tuple[str, ...]             # slots, in pipeline order
    stages: int
    tables: int
    stage_budget: int
    table_budget: int


@dataclass(eq=False)
class Problem:
    """Chains, routes and budgets; *preset* chains keep the placement given
    (runtime updates), *installed* are the slots running switches have (a slot
    placed on such a switch beyond these costs ``Weights.new_slots``)."""

    topology: Topology
    chains: tuple[ChainProblem, ...]
    weights: Weights
    budgets: dict[str, tuple[int, int]]          # switch -> (stages, tables) for NF slots
    resources: dict[str, tuple[int, int]]        # NF type -> (stages, tables)
    rank: dict[str, tuple[int, str]]             # NF type -> canonical pipeline rank
    installed: dict[str, frozenset[str]] = field(default_factory=dict)
    preset: dict[str, ChainPlacement] = field(default_factory=dict)

    def chain(self, name: str) -> ChainProblem:
        index = self.__dict__.get("_by_name")
        if index is None or len(index) != len(self.chains):
            index = self.__dict__["_by_name"] = {c.name: c for c in self.chains}
        return index[name]

    def descending(self, a: str, b: str) -> bool:
        """Does NF type *b* right after *a* on one switch need another pass?"""
        return self.rank[b] <= self.rank[a]

    def slots(self, types: Iterable[str]) -> tuple[str, ...]:
        """The pipeline of a switch running *types*: canonical order, one slot each."""
        return tuple(sorted(set(types), key=self.rank.__getitem__))

    def size(self) -> str:
        n = sum(len(c.instances) for c in self.chains)
        t = self.topology
        return (f"{len(self.chains)} chains, {n} NF instances on {t.name} "
                f"({len(t.switches)} switches)")


# --- building ---------------------------------------------------------------------------------

def build_problem(topology: Topology, chains: ChainSet, *, catalog: NFCatalog | None = None,
                  weights: Weights | None = None, max_routes: int = 8, max_extra: int = 2,
                  installed: Mapping[str, Iterable[str]] | None = None,
                  preset: Mapping[str, ChainPlacement] | None = None) -> Problem:
    """The placement problem of *chains* on *topology*.

    A chain without ``ingress`` enters at the topology's first host, one without
    ``egress`` leaves at its last host (``ChainProblem.defaulted`` says which).
    Candidate routes: up to *max_routes* shortest routes, routes through a switch
    at most *max_extra* hops out of the way, and for an NF that needs a server, a
    route through each switch such a server hangs off."""
    if not topology.switches:
        raise TopologyError(f"topology {topology.name!r} has no switches",
                            source=topology.source or "<topology>",
                            hint="add switches (switch s1) or use a generator such as line(3)")
    weights = weights or Weights()
    shares = chains.weights()
    types = {nf for c in chains for p in c.paths(shares[c.name]) for nf in p.nfs}
    types |= {nf for ts in (installed or {}).values() for nf in ts}
    resources, rank = {}, {}
    for t in sorted(types):
        info = nf_info(catalog, t)
        resources[t] = (info.stages, info.tables)
        rank[t] = (info.layer, t)
    routes = _RouteFinder(topology, max_routes, max_extra)
    probs = tuple(_chain_problem(topology, c, shares[c.name], catalog, routes) for c in chains)
    budgets = {s: (max(0, sw.stages - STEERING_STAGES), max(0, sw.tables - STEERING_TABLES))
               for s, sw in topology.switches.items()}
    return Problem(topology, probs, weights, budgets, resources, rank,
                   {s: frozenset(v) for s, v in (installed or {}).items()}, dict(preset or {}))


def _endpoints(topology: Topology, chain) -> tuple[str, str, tuple[str, ...]]:
    hosts = list(topology.hosts)
    defaulted = []
    ends = []
    for what, spec, pick in (("ingress", chain.ingress, 0), ("egress", chain.egress, -1)):
        if spec is None:
            if not hosts:
                raise CompileError(f"chain {chain.name!r} has no {what} and topology "
                                   f"{topology.name!r} has no hosts to default to",
                                   hint=f"give it one (`from h1 to h2`, or a port such as s1:1)")
            spec = hosts[pick]
            defaulted.append(what)
        elif ":" not in spec and spec not in topology:
            raise CompileError(f"chain {chain.name!r}: its {what} {spec!r} is not in topology "
                               f"{topology.name!r}", hint=did_you_mean(spec, topology.hosts)
                               or f"hosts: {', '.join(hosts[:12]) or 'none'}")
        topology.endpoint(spec)          # checks SWITCH:PORT and attachment
        ends.append(spec)
    return ends[0], ends[1], tuple(defaulted)


def _units(chain, nodes: list[str]) -> tuple[tuple[str, ...], ...]:
    """The chain's NF instances in an order every path follows, a loop body as one unit."""
    g = chain.graph
    order = {n: i for i, n in enumerate(chain.nf_nodes())}
    sub = nx.DiGraph()
    sub.add_nodes_from(nodes)
    sub.add_edges_from((u, v) for u, v in g.edges if u in sub and v in sub)
    cond = nx.condensation(sub)
    members = cond.graph["mapping"]
    blocks: dict[int, list[str]] = {}
    for n in nodes:
        blocks.setdefault(members[n], []).append(n)
    key = {k: min(order.get(n, 0) for n in v) for k, v in blocks.items()}
    topo = nx.lexicographical_topological_sort(cond, key=key.__getitem__)
    return tuple(tuple(sorted(blocks[k], key=lambda n: order.get(n, 0))) for k in topo)


def _chain_problem(topology: Topology, chain, share: float, catalog, routes: _RouteFinder
                   ) -> ChainProblem:
    ingress, egress, defaulted = _endpoints(topology, chain)
    paths = tuple(chain.paths(share))
    nodes = list(dict.fromkeys(n for p in paths for n in p.nodes))
    nf = {n: chain.graph.nodes[n]["nf"] for n in nodes}
    on_server = frozenset(n for n in nodes if nf_info(catalog, nf[n]).offload == "non"
                          or not _has_p4(catalog, nf[n]))
    pairs: dict[tuple[str, str], float] = {}
    firsts: dict[str, float] = {}
    for p in paths:
        if p.nodes:
            firsts[p.nodes[0]] = firsts.get(p.nodes[0], 0.0) + p.weight
        for a, b in zip(p.nodes, p.nodes[1:]):
            pairs[a, b] = pairs.get((a, b), 0.0) + p.weight
    needs = sorted({nf[n] for n in on_server})
    found = routes.routes(topology.endpoint(ingress)[0], topology.endpoint(egress)[0], needs)
    return ChainProblem(chain.name, ingress, egress, defaulted, share, paths, nf, on_server,
                        _units(chain, nodes), tuple((a, b, w) for (a, b), w in pairs.items()),
                        tuple(firsts.items()), found)


def _has_p4(catalog, nf: str) -> bool:
    definition = getattr(catalog, "definition", None)
    if definition is None:
        from ...p4.catalog import load_default

        definition = load_default().definition
    try:
        return definition(nf).has_p4
    except Exception:                        # a plain NFCatalog entry: assume P4 exists
        return True


class _RouteFinder:
    """Candidate routes between switches, cached per pair."""

    def __init__(self, topology: Topology, max_routes: int, max_extra: int) -> None:
        self.t = topology
        self.g = topology.switch_graph()
        self.max_routes, self.max_extra = max_routes, max_extra
        self._tree: dict[str, dict[str, list[str]]] = {}
        self._cache: dict[tuple, tuple[Route, ...]] = {}
        self.attached: dict[str, tuple[str, ...]] = {}
        for srv in sorted(topology.servers):
            for nb in sorted(topology.graph[srv]):
                if topology.kind(nb) == "switch":
                    self.attached[nb] = (*self.attached.get(nb, ()), srv)

    def _paths(self, a: str) -> dict[str, list[str]]:
        if a not in self._tree:
            self._tree[a] = nx.single_source_shortest_path(self.g, a)
        return self._tree[a]

    def routes(self, a: str, b: str, server_nfs: list[str]) -> tuple[Route, ...]:
        key = (a, b, tuple(server_nfs))
        if key not in self._cache:
            self._cache[key] = self._find(a, b, server_nfs)
        return self._cache[key]

    def _find(self, a: str, b: str, server_nfs: list[str]) -> tuple[Route, ...]:
        if b not in self._paths(a):
            raise CompileError(f"no route from switch {a!r} to switch {b!r}: they are not "
                               f"connected", hint="link them (possibly through other switches)")
        best = len(self._paths(a)[b]) - 1
        shortest = sorted(tuple(r) for r in nx.all_shortest_paths(self.g, a, b))[:self.max_routes]
        found: dict[tuple[str, ...], int] = {r: 0 for r in shortest}
        via_servers = [w for w, srvs in sorted(self.attached.items())
                       if any(self.t.node(s).runs(nf) for s in srvs for nf in server_nfs)]
        extra = []
        for w in via_servers + sorted(self.g):
            ways = self._vias(a, w, b) if w in via_servers else [self._via(a, w, b)]
            for r in ways:
                if r is None or r in found:
                    continue
                hops = len(r) - 1 - best
                if w in via_servers or hops <= self.max_extra:
                    extra.append((w not in via_servers, hops, r))
        extra.sort()                                   # server routes first, then fewest hops
        room = self.max_routes - len(found)
        for optional, hops, r in extra:
            if not optional or room > 0:
                found.setdefault(r, hops)
                room -= optional
        return tuple(Route(r, h, tuple(self.attached.get(s, ()) for s in r))
                     for r, h in sorted(found.items(), key=lambda e: (e[1], e[0])))

    def _vias(self, a: str, w: str, b: str, most: int = 4) -> list[tuple[str, ...]]:
        """Up to *most* routes from *a* through a server's switch *w* to *b*, each a
        shortest route there and one on (in name order): which spine a leaf reaches
        the server through decides where the NFs around it can run, so one is not
        enough."""
        if w not in self._paths(a) or b not in self._paths(w):
            return []
        out: list[tuple[str, ...]] = []
        for first in sorted(nx.all_shortest_paths(self.g, a, w)):
            for second in sorted(nx.all_shortest_paths(self.g, w, b)):
                r = (*first, *second[1:])
                steps = list(zip(r, r[1:]))
                if len(set(steps)) == len(steps) and r not in out:
                    out.append(r)
                if len(out) >= most:
                    return out
        return out

    def _via(self, a: str, w: str, b: str) -> tuple[str, ...] | None:
        """A shortest route from *a* to *w*, then one on to *b*.  It may cross a switch
        twice (``e1 a1 e1``: out to a switch with room and back), never a link twice
        the same way."""
        first, second = self._paths(a).get(w), self._paths(w).get(b)
        if first is None or second is None:
            return None
        r = (*first, *second[1:])
        steps = list(zip(r, r[1:]))
        return r if len(set(steps)) == len(steps) else None


# --- scoring ----------------------------------------------------------------------------------

def chain_cost(problem: Problem, c: ChainProblem, pl: ChainPlacement
               ) -> tuple[float, float, float]:
    """One chain's (hops, recirculations, server detours), traffic-weighted."""
    route = next(r for r in c.routes if r.switches == pl.route)
    loc = {i: (p, n) for i, p, n in pl.where}
    rec = det = 0.0
    for a, b, wt in c.pairs:
        na, nb = loc[a][1], loc[b][1]
        if na == nb and b not in c.on_server and problem.descending(c.nf[a], c.nf[b]):
            rec += wt
        if b in c.on_server and na != nb:
            det += wt
    det += sum(wt for i, wt in c.firsts if i in c.on_server)
    return c.weight * route.extra, rec, det


def _broken(problem: Problem, c: ChainProblem, pl: ChainPlacement) -> list[str]:
    route = next((r for r in c.routes if r.switches == pl.route), None)
    if route is None:
        return [f"chain {c.name}: route {' '.join(pl.route)} is not a candidate"]
    loc = {i: (p, n) for i, p, n in pl.where}
    if set(loc) != set(c.instances):
        return [f"chain {c.name}: instances placed {sorted(loc)} != {sorted(c.instances)}"]
    bad = []
    for i, (p, n) in loc.items():
        if not 0 <= p < len(route.switches) or not route.usable(p):
            bad.append(f"chain {c.name}: {i} at position {p}: not a place for NFs")
        elif i in c.on_server:
            if n not in route.servers[p] or not problem.topology.node(n).runs(c.nf[i]):
                bad.append(f"chain {c.name}: {i} needs a server running {c.nf[i]} at "
                           f"{route.switches[p]}, not {n}")
        elif n != route.switches[p]:
            bad.append(f"chain {c.name}: {i} is offloadable: on switch {route.switches[p]}, "
                       f"not {n}")
    bad += [f"chain {c.name}: {a} -> {b} goes back along the route"
            for a, b, _ in c.pairs if loc[a][0] > loc[b][0]]
    return bad


def evaluate(problem: Problem, placed: Mapping[str, ChainPlacement]
             ) -> tuple[Cost, dict[str, Usage], list[str]]:
    """The cost of *placed* (chain -> placement), what it uses on each switch, and
    every rule it breaks (empty when it is a valid placement)."""
    w = problem.weights
    bad: list[str] = []
    hops = rec = det = 0.0
    types: dict[str, set[str]] = {}
    for c in problem.chains:
        pl = placed.get(c.name)
        if pl is None:
            bad.append(f"chain {c.name}: not placed")
            continue
        broken = _broken(problem, c, pl)
        if broken:
            bad += broken
            continue
        h, r, d = chain_cost(problem, c, pl)
        hops, rec, det = hops + h, rec + r, det + d
        for i, _, n in pl.where:
            if i not in c.on_server:
                types.setdefault(n, set()).add(c.nf[i])
    usage = {}
    new = 0
    for s, ts in sorted(types.items()):
        st = sum(problem.resources.get(t, (0, 0))[0] for t in ts)
        tb = sum(problem.resources.get(t, (0, 0))[1] for t in ts)
        bs, bt = problem.budgets[s]
        usage[s] = Usage(s, problem.slots(ts), st, tb, bs, bt)
        if s in problem.installed:                  # a running switch: each new slot reloads it
            new += len(ts - problem.installed[s])
        if st > bs or tb > bt:
            bad.append(f"switch {s}: slots {', '.join(usage[s].types)} need {st} stages and "
                       f"{tb} tables; it has {bs} and {bt} for NFs")
    total = w.hops * hops + w.recirculations * rec + w.server * det + w.new_slots * new
    return Cost(hops, rec, det, new, total), usage, bad
