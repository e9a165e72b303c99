"""Small, fast graph walks over a chain graph's adjacency dicts.

Chain graphs are small (tens of nodes) but there can be thousands of them;
these walks avoid networkx's per-call overhead and know about loop edges.

>>> import networkx as nx
>>> g = nx.DiGraph([("a", "b"), ("b", "c")])
>>> sorted(ancestors(g, "c")), find_cycle(g)
(['a', 'b'], None)
"""

from __future__ import annotations

import networkx as nx

__all__ = ["ancestors", "descendants", "find_cycle", "edges"]


def edges(g: nx.DiGraph):
    """``(u, v, attrs)`` for every edge, without networkx's view objects."""
    for u, nbrs in g._succ.items():
        for v, d in nbrs.items():
            yield u, v, d


def _walk(adj: dict, start: str, skip_loops: bool) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        n = todo.pop()
        for m, d in adj[n].items():
            if m not in seen and not (skip_loops and d.get("kind") == "loop"):
                seen.add(m)
                todo.append(m)
    seen.discard(start)
    return seen


def ancestors(g: nx.DiGraph, n: str, *, skip_loops: bool = False) -> set[str]:
    """Nodes with a path to *n* (not *n* itself, even on a cycle)."""
    return _walk(g._pred, n, skip_loops)


def descendants(g: nx.DiGraph, n: str, *, skip_loops: bool = False) -> set[str]:
    """Nodes reachable from *n* (not *n* itself, even on a cycle)."""
    return _walk(g._succ, n, skip_loops)


def find_cycle(g: nx.DiGraph, *, skip_loops: bool = True) -> list[tuple[str, str]] | None:
    """The edges of one cycle that does not use a loop edge, or None."""
    succ = g._succ
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for root in g:
        if root in state:
            continue
        stack = [(root, iter(succ[root].items()))]
        path = [root]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            for m, d in it:
                if skip_loops and d.get("kind") == "loop":
                    continue
                if state.get(m) == 1:
                    cyc = path[path.index(m):] + [m]
                    return list(zip(cyc, cyc[1:]))
                if m not in state:
                    state[m] = 1
                    path.append(m)
                    stack.append((m, iter(succ[m].items())))
                    break
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return None
