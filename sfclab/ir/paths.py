"""Service-path expansion: a chain graph as the linear NF sequences packets follow.

One path per combination of branch outcomes, loops unrolled to their bound,
each with its weight (the chain's share of traffic times the shares of the
branches taken) and the decisions taken on the way.

>>> from sfclab.ir.model import linear_chain
>>> [p.nodes for p in linear_chain("c", ["a", "b"]).paths()]
[('a', 'b')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from ..errors import ChainValidationError
from .elements import TERMINALS, Decision, ServicePath

if TYPE_CHECKING:
    from .model import Chain

__all__ = ["service_paths", "loop_body"]


def loop_body(g: nx.DiGraph, u: str, v: str) -> set[str]:
    """Nodes on the way back from loop target *v* to loop source *u* (both included),
    following non-loop edges."""
    if u == v:
        return {u}
    fwd = {n for n in nx.descendants(_dag(g), v)} | {v}
    back = {n for n in nx.ancestors(_dag(g), u)} | {u}
    return fwd & back


def _dag(g: nx.DiGraph) -> nx.DiGraph:
    cached = g.graph.get("_dag")
    if cached is None or cached[0] != g.number_of_edges():
        dag = nx.DiGraph((a, b) for a, b, k in g.edges(data="kind") if k != "loop")
        dag.add_nodes_from(g)
        g.graph["_dag"] = cached = (g.number_of_edges(), dag)
    return cached[1]


def service_paths(chain: Chain, weight: float = 1.0, *, limit: int = 10_000) -> list[ServicePath]:
    """Expand *chain* into its service paths, in a stable order.

    Raises :class:`ChainValidationError` when there are more than *limit* paths.
    """
    g = chain.graph
    out: list[ServicePath] = []
    loops = {(u, v): d["bound"] for u, v, d in g.edges(data=True) if d["kind"] == "loop"}
    bodies = {e: loop_body(g, *e) for e in loops}

    # Iterative DFS: (node, visited nodes, weight, decisions, loop counters).
    stack: list[tuple[str, tuple[str, ...], float, tuple[Decision, ...], dict]] = [
        ("input", (), weight, (), {})
    ]
    while stack:
        node, seq, w, dec, counts = stack.pop()
        if node in TERMINALS:
            nfs = tuple(g.nodes[n]["nf"] for n in seq)
            out.append(ServicePath(chain.name, 0, seq, nfs, node, w, dec))
            if len(out) > limit:
                raise ChainValidationError(
                    f"chain {chain.name!r} has more than {limit} service paths",
                    line=chain.line, column=chain.column, source=chain.source,
                    hint="split it into several chains or use fewer nested branches",
                )
            continue
        if node != "input":
            seq = (*seq, node)
        succ = g.succ[node]
        loop = next(((node, v) for v in succ if succ[v]["kind"] == "loop"), None)
        if loop is not None and counts.get(loop, 0) < loops[loop] - 1:
            d = succ[loop[1]]
            new = {e: c for e, c in counts.items()
                   if e == loop or e[0] not in bodies[loop] or e[0] == node}
            new[loop] = counts.get(loop, 0) + 1
            stack.append((loop[1], seq, w, (*dec, Decision(node, "loop", loop[1], d["cond"])), new))
            continue
        # Successors in reverse so the first-written branch is expanded first.
        for v in reversed(list(succ)):
            d = succ[v]
            kind = d["kind"]
            if kind == "loop":
                continue
            if kind == "seq":
                stack.append((v, seq, w, dec, counts))
            else:
                step = Decision(node, kind, v, d.get("cond"), tuple(d.get("cases", ())))
                stack.append((v, seq, w * d.get("share", 1.0), (*dec, step), counts))
    return [ServicePath(p.chain, i, p.nodes, p.nfs, p.terminal, p.weight, p.decisions)
            for i, p in enumerate(out)]
