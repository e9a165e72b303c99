"""Where the chain editor puts nodes: a left-to-right layout, and free visible spots.

Nodes are boxes :data:`NODE_HEIGHT` high and :func:`node_width` wide (the editor's
front end draws them with exactly these sizes, read from the node dicts).  A new
node goes to the free spot nearest to where it belongs, inside the visible part
of the canvas when that is known and has room, never on top of another node.

>>> nodes = [{"id": "input", "x": 60, "y": 60, "width": 56.0},
...          {"id": "output", "x": 210, "y": 60, "width": 67.0}]
>>> free_spot(nodes, node_width("l3fwd"), near=(210, 60))
(210.0, 120.0)
>>> free_spot(nodes, 60, near=(400, 60), view=(0, 0, 300, 200))
(258.0, 120.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..draw.layered import label_width

__all__ = ["NODE_HEIGHT", "node_width", "layered_positions", "free_spot", "overlaps",
           "next_to_last", "in_view", "place_nodes", "tidy_positions", "DX", "DY", "LABEL_PX"]

#: Height of a node on the canvas, and the gaps kept between nodes (pixels at zoom 1).
NODE_HEIGHT = 32.0
GAP_X, GAP_Y = 24.0, 22.0
#: Distance between layout columns and rows (columns farther apart for an edge label).
DX, DY = 150.0, 90.0
#: Room between an edge label and the arrowhead or node on either side of it.
LABEL_CLEAR = 8.0
#: The least size of an edge label on screen, in pixels (js/src/zoom.js: LABEL_PX).
LABEL_PX = 11.0
_TERMINAL = ("output", "drop", "cpu")
_MARGIN = 12.0  # keep a new node this far inside the visible edge

Point = tuple[float, float]
View = Sequence[float]  # x1, y1, x2, y2 in model coordinates


def node_width(label: str) -> float:
    """Width of a node showing *label* (room for the text at 12 px, at least 56).

    >>> node_width("nat"), node_width("stateful_firewall")
    (56.0, 150.0)
    """
    return float(max(56, round(7.5 * len(label) + 22)))


def layered_positions(nodes: list[Mapping[str, Any]], edges: list[Mapping[str, Any]], *,
                      dx: float = DX, dy: float = DY,
                      label_scale: float = 1.0) -> dict[str, tuple[float, float]]:
    """Left-to-right layers by longest path from the sources (loop edges ignored);
    columns farther apart than *dx* where an edge label needs it (drawn *label_scale*
    times its 10 px size: the editor draws labels larger when it shows a chain zoomed out).

    >>> layered_positions([{"id": "a"}, {"id": "b"}], [{"source": "a", "target": "b", "kind": "seq"}])
    {'a': (60, 60), 'b': (210, 60)}
    """
    ids = [n["id"] for n in nodes]
    layer = dict.fromkeys(ids, 0)
    fwd = [(e["source"], e["target"]) for e in edges if e["kind"] != "loop"
           and e["source"] != e["target"]]
    for _ in range(len(ids)):  # Bellman-Ford style; stops early on a DAG
        changed = False
        for u, v in fwd:
            if layer[v] < layer[u] + 1 <= len(ids):
                layer[v], changed = layer[u] + 1, True
        if not changed:
            break
    for t in _TERMINAL:  # end points go to the last column
        if t in layer:
            layer[t] = max(layer.values())
    x = _columns(nodes, edges, layer, dx, label_scale)
    rows: dict[int, int] = {}
    pos = {}
    for n in ids:
        row = rows.get(layer[n], 0)
        rows[layer[n]] = row + 1
        pos[n] = (round(x[layer[n]]), round(60 + dy * row))
    return pos


def _columns(nodes: list[Mapping[str, Any]], edges: list[Mapping[str, Any]],
             layer: dict[str, int], dx: float, scale: float) -> list[float]:
    """The x of each column: *dx* apart, or farther where an edge label between two
    columns needs it (its text, and the arrowhead and a margin either side of it)."""
    width = {n["id"]: n.get("width") or node_width(n["id"]) for n in nodes}
    count = max(layer.values(), default=-1) + 1
    step = [dx] * max(count - 1, 0)
    for e in edges:
        u, v, label = e["source"], e["target"], e.get("label") or ""
        if label and layer[v] == layer[u] + 1:
            step[layer[u]] = max(step[layer[u]],
                                 (width[u] + width[v]) / 2 + _label_room(label, scale))
    xs = [60.0]
    for s in step:
        xs.append(xs[-1] + s)
    return xs


def _label_room(label: str, scale: float = 1.0) -> float:
    """The gap an edge needs between two nodes to show *label* (10 px times *scale*,
    with Cytoscape's background padding) clear of the arrowhead and of both nodes."""
    return (label_width(label) + 4) * scale + 2 * (LABEL_CLEAR + 10)


def tidy_positions(nodes: list[Mapping[str, Any]], edges: list[Mapping[str, Any]],
                   dx: float, width: float | None) -> dict[str, tuple[float, float]]:
    """:func:`layered_positions` for a canvas *width* pixels wide that will show all of
    it (fit, at most 1.2 times): zoomed out, the editor draws edge labels larger than
    10 px in the model (:data:`LABEL_PX` on screen), so their columns move apart."""
    scale = 1.0
    pos = layered_positions(nodes, edges, dx=dx)
    widest = max((n.get("width") or node_width(n["id"]) for n in nodes), default=0.0)
    for _ in range(6 if width else 0):
        xs = [x for x, _ in pos.values()]
        zoom = min(1.2, float(width) / (max(xs) - min(xs) + widest + 60))
        want = max(1.0, LABEL_PX / 10 / zoom)
        if want <= scale + 0.01:
            break
        scale = want
        pos = layered_positions(nodes, edges, dx=dx, label_scale=scale)
    return pos


def overlaps(x: float, y: float, width: float, nodes: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a node *width* wide at (x, y) would touch one of *nodes* (gaps included).

    >>> overlaps(100, 60, 56, [{"x": 60, "y": 60, "width": 56}])
    True
    >>> overlaps(200, 60, 56, [{"x": 60, "y": 60, "width": 56}])
    False
    """
    return any(abs(n["x"] - x) < (width + n.get("width", width)) / 2 + GAP_X
               and abs(n["y"] - y) < NODE_HEIGHT + GAP_Y for n in nodes)


def in_view(x: float, y: float, view: View | None, width: float = 0.0) -> bool:
    """Whether a node *width* wide at (x, y) lies wholly inside *view* (x1, y1, x2, y2)."""
    if not view:
        return True
    x1, y1, x2, y2 = view
    return x1 <= x - width / 2 and x + width / 2 <= x2 and y1 <= y - NODE_HEIGHT / 2 \
        and y + NODE_HEIGHT / 2 <= y2


def free_spot(nodes: list[Mapping[str, Any]], width: float, *, near: Point,
              view: View | None = None, step: float = 15.0) -> tuple[float, float]:
    """The free point nearest to *near* for a node *width* wide.

    With a *view* (the visible extent, x1, y1, x2, y2) the node lies wholly inside
    it when it has room; otherwise (or without a view) the nearest free point at all.
    """
    if view and len(view) == 4:
        x1, y1, x2, y2 = view
        lo_x, hi_x = x1 + width / 2 + _MARGIN, x2 - width / 2 - _MARGIN
        lo_y, hi_y = y1 + NODE_HEIGHT / 2 + _MARGIN, y2 - NODE_HEIGHT / 2 - _MARGIN
        if lo_x <= hi_x and lo_y <= hi_y:
            start = (min(max(near[0], lo_x), hi_x), min(max(near[1], lo_y), hi_y))
            spot = _search(nodes, width, start, near, (lo_x, lo_y, hi_x, hi_y), step)
            if spot is not None:
                return spot
    box = (near[0] - 40 * DX, near[1] - 40 * DY, near[0] + 40 * DX, near[1] + 40 * DY)
    spot = _search(nodes, width, near, near, box, step)
    return spot if spot is not None else (float(near[0]), float(near[1]))


def _search(nodes: list[Mapping[str, Any]], width: float, start: Point, near: Point,
            box: tuple[float, float, float, float], step: float) -> tuple[float, float] | None:
    """Grid points around *start* inside *box*, ring by ring; the free one nearest *near*."""
    lo_x, lo_y, hi_x, hi_y = box
    best: tuple[float, bool, bool, float, float] | None = None  # ties: below, then right
    ring = 0
    offset = ((start[0] - near[0]) ** 2 + (start[1] - near[1]) ** 2) ** 0.5
    limit = int(max(hi_x - lo_x, hi_y - lo_y) / step) + 1
    while ring <= limit:
        for i in range(-ring, ring + 1):
            for j in (range(-ring, ring + 1) if abs(i) == ring else (-ring, ring)):
                x, y = start[0] + i * step, start[1] + j * step
                if not (lo_x <= x <= hi_x and lo_y <= y <= hi_y) or overlaps(x, y, width, nodes):
                    continue
                cand = ((x - near[0]) ** 2 + (y - near[1]) ** 2, y < near[1], x < near[0],
                        float(round(x, 1)), float(round(y, 1)))
                if best is None or cand < best:
                    best = cand
        # points of later rings are at least (ring + 1) * step from start: none can win
        if best is not None and (ring + 1) * step - offset > best[0] ** 0.5:
            break
        ring += 1
    return None if best is None else (best[3], best[4])


def next_to_last(nodes: list[Mapping[str, Any]], view: View | None) -> Point:
    """Where a node added without a position belongs: right of the NF added last
    (of those in view), else right of ``input``, else near the view's left edge."""
    seen = [n for n in nodes if in_view(n["x"], n["y"], view)]
    nfs = [n for n in seen if n.get("kind") == "nf"]
    anchor = nfs[-1] if nfs else next((n for n in seen if n["id"] == "input"), None)
    if anchor is not None:
        return (anchor["x"] + DX, anchor["y"])
    if view and len(view) == 4:
        return (view[0] + DX / 2, (view[1] + view[3]) / 2)
    return (max((n["x"] for n in nodes), default=-90.0) + DX, 60.0)


def place_nodes(nodes: list[dict[str, Any]], edges: list[Mapping[str, Any]],
                old: dict[str, tuple[float, float]]) -> None:
    """Positions for a redrawn chain: nodes that stay keep theirs; a new node goes
    right of the node before it (or to its place in a fresh layout), on a free spot.

    >>> nodes = [{"id": i, "width": 60.0} for i in ("input", "nat", "l3fwd", "output")]
    >>> edges = [{"source": u, "target": v, "kind": "seq"}
    ...          for u, v in [("input", "nat"), ("nat", "l3fwd"), ("l3fwd", "output")]]
    >>> place_nodes(nodes, edges, {"input": (60, 60), "nat": (210, 60), "output": (360, 60)})
    >>> [(n["id"], n["x"], n["y"]) for n in nodes]  # l3fwd is not drawn over output
    [('input', 60, 60), ('nat', 210, 60), ('l3fwd', 360.0, 120.0), ('output', 360, 60)]
    """
    fresh = layered_positions(nodes, edges)
    placed: list[dict[str, Any]] = []
    for n in nodes:
        if n["id"] in old:
            n["x"], n["y"] = old[n["id"]]
            placed.append(n)
    if len(placed) == len(nodes):
        return
    where = {n["id"]: n for n in placed}
    preds: dict[str, list[str]] = {}
    for e in edges:
        if e["kind"] != "loop" and e["source"] != e["target"]:
            preds.setdefault(e["target"], []).append(e["source"])
    for n in sorted((n for n in nodes if n["id"] not in old), key=lambda n: fresh[n["id"]]):
        before = next((where[p] for p in preds.get(n["id"], []) if p in where), None)
        near = (before["x"] + DX, before["y"]) if before is not None and old else fresh[n["id"]]
        n["x"], n["y"] = free_spot(placed, n["width"], near=near) if old else fresh[n["id"]]
        placed.append(n)
        where[n["id"]] = n
