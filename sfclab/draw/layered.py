"""A layered, left-to-right layout for small directed graphs (chains, the merged IR,
the MA-FSA), computed in Python so a view can draw it as SVG at once.

It follows the usual layered (Sugiyama) steps, kept small: edges that close a
cycle (loops) are set aside; nodes get a rank by the longest path from a
source; the order inside a rank is improved by barycentre sweeps; vertical
positions follow the predecessors' (the main line straight, branches below it)
while keeping nodes apart; the gap
between two ranks is wide enough for the labels of the edges crossing it.  Back
edges are routed as arcs above the graph, self-loops as small loops on top of
their node, parallel edges fanned out.

Why not a library: graphviz's ``dot`` is a system program a pip install or Binder lacks, and
networkx has no layered layout that orders ranks; grandalf (pure-Python Sugiyama) took 29 ms
(after a 0.4 s import) on the demo's merged IR (15 nodes, 17 edges) where this takes 1.6 ms,
and leaves label gaps, back-edge arcs and self-loops to the caller.

>>> lay = layered([("a", 40, 20), ("b", 40, 20), ("c", 40, 20)],
...               [("a", "b", ""), ("b", "c", "x"), ("c", "b", "")], back={2})
>>> [round(lay.nodes[n].x) for n in "abc"], lay.edges[2].back
([32, 136, 240], True)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = ["Box", "Route", "Layout", "layered", "label_width"]

RANK_SEP, NODE_SEP, MARGIN = 64, 22, 12
_CHAR = 6.2              # average width of a 10 px sans-serif character (edge labels)


def label_width(text: str, char: float = _CHAR) -> float:
    """Roughly how wide *text* is drawn (its longest line)."""
    return max((len(x) for x in text.split("\n")), default=0) * char


@dataclass(frozen=True, slots=True)
class Box:
    """A node: its centre and size."""

    x: float
    y: float
    w: float
    h: float

    @property
    def top(self) -> float:
        return self.y - self.h / 2


@dataclass(frozen=True, slots=True)
class Route:
    """An edge: an SVG path (``d``), where its label goes, and whether it runs back
    (against the ranks) or is a self-loop."""

    d: str
    label_x: float
    label_y: float
    back: bool = False
    self_loop: bool = False


@dataclass(frozen=True, slots=True)
class Layout:
    nodes: dict[str, Box]
    edges: tuple[Route, ...]
    width: float
    height: float


def _back_edges(order: Sequence[str], edges: Sequence[tuple[str, str, str]],
                back: Collection[int]) -> set[int]:
    """Edges to set aside so the rest is acyclic: the given ones, self-loops, and
    those a depth-first search finds closing a cycle."""
    out = set(back) | {i for i, (u, v, _) in enumerate(edges) if u == v}
    succ: dict[str, list[tuple[int, str]]] = {n: [] for n in order}
    for i, (u, v, _) in enumerate(edges):
        if i not in out:
            succ[u].append((i, v))
    state: dict[str, int] = {}                        # 1: on the stack, 2: done
    indeg = {n: 0 for n in order}
    for i, (u, v, _) in enumerate(edges):
        if i not in out:
            indeg[v] += 1
    for root in sorted(order, key=lambda n: indeg[n] > 0):
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                continue
            i, v = nxt
            if state.get(v) == 1:
                out.add(i)
            elif v not in state:
                state[v] = 1
                stack.append((v, iter(succ[v])))
    return out


def _ranks(order: Sequence[str], dag: Sequence[tuple[str, str]]) -> dict[str, int]:
    preds: dict[str, list[str]] = {n: [] for n in order}
    succ: dict[str, list[str]] = {n: [] for n in order}
    for u, v in dag:
        preds[v].append(u)
        succ[u].append(v)
    indeg = {n: len(preds[n]) for n in order}
    todo = [n for n in order if indeg[n] == 0]
    rank = {n: 0 for n in order}
    while todo:
        u = todo.pop(0)
        for v in succ[u]:
            rank[v] = max(rank[v], rank[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                todo.append(v)
    return rank


def layered(nodes: Sequence[tuple[str, float, float]], edges: Sequence[tuple[str, str, str]],
            *, back: Collection[int] = (), rank_sep: float = RANK_SEP,
            node_sep: float = NODE_SEP, margin: float = MARGIN) -> Layout:
    """Lay out *nodes* (``(id, width, height)``) and *edges* (``(source, target,
    label)``); *back* are indices of edges known to run back (loops)."""
    order = [n for n, _, _ in nodes]
    size = {n: (w, h) for n, w, h in nodes}
    backs = _back_edges(order, edges, back)
    dag = [(u, v) for i, (u, v, _) in enumerate(edges) if i not in backs]
    rank = _ranks(order, dag)
    nranks = max(rank.values(), default=-1) + 1
    layers: list[list[str]] = [[] for _ in range(nranks)]
    for n in order:
        layers[rank[n]].append(n)
    preds: dict[str, list[str]] = {n: [] for n in order}
    succs: dict[str, list[str]] = {n: [] for n in order}
    for u, v in dag:
        preds[v].append(u)
        succs[u].append(v)

    # order inside the ranks: barycentre sweeps down and up
    pos = {n: float(i) for layer in layers for i, n in enumerate(layer)}
    for sweep in range(4):
        down = sweep % 2 == 0
        for layer in (layers[1:] if down else layers[-2::-1]):
            near = preds if down else succs
            key = {n: (sum(pos[m] for m in near[n]) / len(near[n]) if near[n] else pos[n])
                   for n in layer}
            layer.sort(key=lambda n: (key[n], pos[n]))
            for i, n in enumerate(layer):
                pos[n] = float(i)

    # vertical positions: each node at the (upper) median of its predecessors, pushed
    # down when its rank's node above is in the way: the main line stays straight and
    # branches hang below it
    y: dict[str, float] = {}
    for layer in layers:
        last: tuple[str, float] | None = None
        for n in layer:
            placed = sorted(y[m] for m in preds[n] if m in y)
            wish = placed[(len(placed) - 1) // 2] if placed else (
                last[1] + (size[last[0]][1] + size[n][1]) / 2 + node_sep if last else 0.0)
            if last is not None:
                wish = max(wish, last[1] + (size[last[0]][1] + size[n][1]) / 2 + node_sep)
            y[n] = wish
            last = (n, wish)
    for layer in layers:                       # sources: beside their successors if free
        for i, n in enumerate(layer):
            if preds[n] or not succs[n]:
                continue
            placed = sorted(y[m] for m in succs[n])
            want = placed[(len(placed) - 1) // 2]
            lo = y[layer[i - 1]] + (size[layer[i - 1]][1] + size[n][1]) / 2 + node_sep \
                if i else float("-inf")
            hi = y[layer[i + 1]] - (size[layer[i + 1]][1] + size[n][1]) / 2 - node_sep \
                if i + 1 < len(layer) else float("inf")
            y[n] = min(max(want, lo), hi) if lo <= hi else y[n]

    # horizontal positions: rank gaps wide enough for the labels crossing them
    widths = [max((size[n][0] for n in layer), default=0) for layer in layers]
    gap = [rank_sep] * max(nranks - 1, 0)
    for i, (u, v, label) in enumerate(edges):
        if i not in backs and label and rank[v] == rank[u] + 1:
            gap[rank[u]] = max(gap[rank[u]], label_width(label) + 28)
    xs, left = [], 0.0
    for r in range(nranks):
        xs.append(left + widths[r] / 2)
        left += widths[r] + (gap[r] if r < nranks - 1 else 0)

    # room above for back edges and self-loops
    top = min((y[n] - size[n][1] / 2 for n in order), default=0.0)
    nback = sum(1 for i in backs if edges[i][0] != edges[i][1])
    lift = (16 + 12 * nback if nback else 0) + (24 if any(u == v for u, v, _ in edges) else 0)
    dy = margin + lift - top
    boxes = {n: Box(margin + xs[rank[n]], y[n] + dy, *size[n]) for n in order}
    routes = _routes(edges, boxes, backs, margin + (12 if nback else 0), rank, layers)
    width = 2 * margin + left
    height = max((b.y + b.h / 2 for b in boxes.values()), default=0) + margin
    for r in routes:                                     # labels below the lowest node
        height = max(height, r.label_y + margin)
    return Layout(boxes, tuple(routes), width, height)


def _detour(a: Box, b: Box, between: list[Box]) -> float | None:
    """The height a long edge from *a* to *b* must pass at to miss the nodes of the
    ranks it crosses (below them, or above if that is nearer), or None."""
    hit = []
    for n in between:
        t = (n.x - a.x) / (b.x - a.x) if b.x != a.x else 0.5
        line_y = a.y + t * (b.y - a.y)
        if abs(line_y - n.y) < n.h / 2 + 6:
            hit.append(n)
    if not hit:
        return None
    low = max(n.y + n.h / 2 for n in hit) + 14
    high = min(n.y - n.h / 2 for n in hit) - 14
    mid = (a.y + b.y) / 2
    return high if mid - high < low - mid else low


def _routes(edges: Sequence[tuple[str, str, str]], boxes: dict[str, Box], backs: set[int],
            arc_top: float, rank: dict[str, int], layers: list[list[str]]) -> list[Route]:
    seen: dict[tuple[str, str], int] = {}
    count: dict[tuple[str, str], int] = {}
    for u, v, _ in edges:
        count[(u, v)] = count.get((u, v), 0) + 1
    routes = []
    level = 0
    for i, (u, v, _) in enumerate(edges):
        a, b = boxes[u], boxes[v]
        k = seen[(u, v)] = seen.get((u, v), -1) + 1
        fan = (k - (count[(u, v)] - 1) / 2) * 16
        if u == v:
            x0, x1, t = a.x - a.w / 4, a.x + a.w / 4, a.top
            h = 22 + k * 8
            routes.append(Route(f"M {x0:.1f} {t:.1f} C {x0:.1f} {t - h:.1f} {x1:.1f} {t - h:.1f} "
                                f"{x1:.1f} {t:.1f}", a.x, t - h * 0.75 - 3, self_loop=True))
        elif i in backs or b.x <= a.x:
            peak = arc_top + 12 * level
            level += 1
            routes.append(Route(f"M {a.x:.1f} {a.top:.1f} C {a.x:.1f} {peak:.1f} {b.x:.1f} "
                                f"{peak:.1f} {b.x:.1f} {b.top:.1f}", (a.x + b.x) / 2,
                                peak + 0.25 * (min(a.top, b.top) - peak) - 3, back=True))
        else:
            x1, y1 = a.x + a.w / 2, a.y + fan * 0.5
            x2, y2 = b.x - b.w / 2, b.y + fan * 0.5
            mx = (x1 + x2) / 2
            via = _detour(a, b, [boxes[n] for r in range(rank[u] + 1, rank[v])
                                 for n in layers[r]]) if rank[v] > rank[u] + 1 else None
            if via is not None:
                q1, q2 = x1 + (x2 - x1) * 0.25, x1 + (x2 - x1) * 0.75
                routes.append(Route(f"M {x1:.1f} {y1:.1f} C {q1:.1f} {y1:.1f} {q1:.1f} "
                                    f"{via:.1f} {mx:.1f} {via:.1f} C {q2:.1f} {via:.1f} "
                                    f"{q2:.1f} {y2:.1f} {x2:.1f} {y2:.1f}", mx, via - 4))
                continue
            routes.append(Route(f"M {x1:.1f} {y1:.1f} C {mx:.1f} {y1 + fan:.1f} {mx:.1f} "
                                f"{y2 + fan:.1f} {x2:.1f} {y2:.1f}", mx,
                                (y1 + y2) / 2 + fan * 0.75 - 4))
    return routes
