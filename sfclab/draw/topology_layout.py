"""Where to draw a topology: switches in tiers, hosts and servers beside their switch.

A data-centre network reads top-down: a fat tree as core, aggregation and edge
switches over the hosts, a leaf-spine as spines over leaves over hosts.
:func:`tiers` finds the tiers of a :class:`~sfclab.ir.topology.Topology`
(top first):

* topologies from the generators keep their roles: ``fat_tree`` (``c…``,
  ``a{pod}_{i}``, ``e{pod}_{i}``, pods side by side), ``leaf_spine``
  (``spine…``, ``leaf…``);
* a line or a ring of switches is one row, in its order;
* any other network is tiered by distance from the switches hosts hang off
  (those at the bottom; servers do not count), each tier ordered by its neighbours below.

:func:`place` then gives every node a box: tiers from top to bottom, the hosts
and servers of the bottom tier in a row under their switch, those of higher
tiers beside their switch in its row; the widest row sets the width and the
others spread evenly over it, so the pods of a fat tree line up with their
hosts.

Why not a library: the picture is the topology's own tiers (core, aggregation, edge; spines
over leaves), which a general layout (networkx's spring or multipartite layouts, graphviz)
does not know; placing by role is a few dozen lines and draws ``fat_tree(4)`` with its SVG
in 9 ms.

>>> from sfclab.ir.topology import fat_tree
>>> t = fat_tree(4)
>>> shape, rows = tiers(t)
>>> shape, [len(r) for r in rows], rows[0]
('fat tree', [4, 8, 8], ('c1', 'c2', 'c3', 'c4'))
>>> lay = place(rows, satellites(t, rows), {n: (40, 20) for n in t})
>>> lay.nodes["c1"].y < lay.nodes["a1_1"].y < lay.nodes["e1_1"].y < lay.nodes["h1"].y
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from ..ir.topology import Topology
from .layered import Box

__all__ = ["NetLayout", "tiers", "satellites", "place", "natural_key"]

TIER_GAP, SATELLITE_GAP, NODE_GAP, MARGIN = 70, 44, 14, 14

_FAT = {"c": re.compile(r"c(\d+)$"), "a": re.compile(r"a(\d+)_(\d+)$"),
        "e": re.compile(r"e(\d+)_(\d+)$")}
_LEAF_SPINE = {"spine": re.compile(r"spine(\d+)$"), "leaf": re.compile(r"leaf(\d+)$")}


def natural_key(name: str) -> tuple:
    """Sort ``h2`` before ``h10``: runs of digits compare as numbers.

    >>> sorted(["h10", "h2", "a1_10", "a1_2"], key=natural_key)
    ['a1_2', 'a1_10', 'h2', 'h10']
    """
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.findall(r"\d+|\D+", name))


@dataclass(frozen=True, slots=True)
class NetLayout:
    """Every node's box, the rows (top first, hosts' row last if any) and the size."""

    nodes: dict[str, Box]
    rows: tuple[tuple[str, ...], ...]
    width: float
    height: float


def _by_roles(names: Sequence[str], roles: Mapping[str, re.Pattern[str]]
              ) -> list[tuple[str, ...]] | None:
    """The switches in one row per role (in *roles*' order), or None if a name fits none."""
    rows: dict[str, list[str]] = {r: [] for r in roles}
    for n in names:
        role = next((r for r, pat in roles.items() if pat.match(n)), None)
        if role is None:
            return None
        rows[role].append(n)
    if any(not v for v in rows.values()):
        return None
    return [tuple(sorted(v, key=natural_key)) for v in rows.values()]


def tiers(topology: Topology) -> tuple[str, list[tuple[str, ...]]]:
    """The shape of *topology*'s switches (``fat tree``, ``leaf-spine``, ``line``,
    ``ring``, ``tiers``) and their rows, top first."""
    names = list(topology.switches)
    g = topology.switch_graph()
    for shape, roles in (("fat tree", _FAT), ("leaf-spine", _LEAF_SPINE)):
        rows = _by_roles(names, roles)
        if rows is not None:
            return shape, rows
    if len(names) <= 1 or (nx.is_connected(g) and max(d for _, d in g.degree) <= 2):
        return _chain_row(g, names)
    return "tiers", _tiered(topology, g, names)


def _chain_row(g: nx.Graph, names: list[str]) -> tuple[str, list[tuple[str, ...]]]:
    """A line or a ring as one row, from its first switch by name."""
    if len(names) <= 1:
        return "line", [tuple(names)]
    ends = sorted((n for n, d in g.degree if d == 1), key=natural_key)
    start = ends[0] if ends else min(names, key=natural_key)
    order = [start]
    while len(order) < len(names):
        nxt = sorted((n for n in g[order[-1]] if n not in order), key=natural_key)
        order.append(nxt[0])
    return ("line" if ends else "ring"), [tuple(order)]


def _tiered(topology: Topology, g: nx.Graph, names: list[str]) -> list[tuple[str, ...]]:
    bottom = [s for s in names if any(topology.kind(n) == "host" for n in topology.graph[s])]
    if not bottom:
        bottom = [min(names, key=natural_key)]
    dist: dict[str, int] = {}
    for comp in nx.connected_components(g):
        sources = [s for s in bottom if s in comp] or [min(comp, key=natural_key)]
        dist.update(nx.multi_source_dijkstra_path_length(g, sources))
    top = max(dist.values())
    rows: list[list[str]] = [[] for _ in range(top + 1)]
    for s in sorted(names, key=natural_key):
        rows[top - dist[s]].append(s)
    pos = {s: float(i) for i, s in enumerate(rows[-1])}
    for row in reversed(rows[:-1]):                     # each tier by its neighbours below
        key = {s: _mean([pos[n] for n in g[s] if n in pos and dist[n] < dist[s]], len(pos))
               for s in row}
        row.sort(key=lambda s: (key[s], natural_key(s)))
        pos.update({s: float(i) for i, s in enumerate(row)})
    return [tuple(r) for r in rows]


def _mean(xs: list[float], default: float) -> float:
    return sum(xs) / len(xs) if xs else default


def satellites(topology: Topology, rows: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """Switch -> the hosts and servers linked to it (a host or server with several
    switches hangs under the first of them in *rows*)."""
    order = {s: k for k, row in enumerate(rows) for k2, s in enumerate(row)}
    out: dict[str, list[str]] = {s: [] for row in rows for s in row}
    for n in sorted(topology, key=natural_key):
        if topology.kind(n) == "switch":
            continue
        sws = [nb for nb in topology.graph[n] if nb in order]
        if sws:
            out[min(sws, key=lambda s: (order[s], natural_key(s)))].append(n)
    return out


def _spread(names: Sequence[str], size: Mapping[str, tuple[float, float]], width: float,
            want: Mapping[str, float] | None = None) -> dict[str, float]:
    """x of each of *names* across *width*: where *want* says (else evenly), then
    pushed apart so none overlap, and back inside the width."""
    n = len(names)
    xs = [want[s] if want and s in want else MARGIN + (i + 0.5) * (width - 2 * MARGIN) / n
          for i, s in enumerate(names)]
    for i in range(1, n):                                # left to right: no overlaps
        need = xs[i - 1] + (size[names[i - 1]][0] + size[names[i]][0]) / 2 + NODE_GAP
        xs[i] = max(xs[i], need)
    over = xs[-1] + size[names[-1]][0] / 2 + MARGIN - width if n else 0
    if over > 0:                                         # right to left: back inside
        xs[-1] -= over
        for i in range(n - 2, -1, -1):
            xs[i] = min(xs[i], xs[i + 1] - (size[names[i]][0] + size[names[i + 1]][0]) / 2
                        - NODE_GAP)
    return dict(zip(names, xs))


def _row_width(names: Sequence[str], size: Mapping[str, tuple[float, float]]) -> float:
    return sum(size[s][0] for s in names) + NODE_GAP * max(len(names) - 1, 0) + 2 * MARGIN


def place(rows: Sequence[Sequence[str]], sats: Mapping[str, Sequence[str]],
          size: Mapping[str, tuple[float, float]]) -> NetLayout:
    """Boxes for the switches in *rows* (top first) and their satellites *sats*
    (hosts, servers) of the sizes *size* gives (width, height)."""
    bottom = rows[-1] if rows else ()
    # rows as drawn: a higher tier's satellites right after their switch
    drawn = [tuple(x for s in row for x in (s, *sats.get(s, ()))) for row in rows[:-1]]
    drawn.append(tuple(bottom))
    below = tuple(x for s in bottom for x in sats.get(s, ()))
    all_rows = drawn + ([below] if below else [])
    width = max((_row_width(r, size) for r in all_rows), default=2 * MARGIN)
    xs: dict[str, float] = {}
    if below and _row_width(below, size) >= _row_width(bottom, size):
        xs.update(_spread(below, size, width))           # the hosts set the pace
        want = {s: _mean([xs[h] for h in sats.get(s, ())], 0.0) for s in bottom
                if sats.get(s)}
        xs.update(_spread(bottom, size, width, want))
    else:
        xs.update(_spread(bottom, size, width))
        for s in bottom:                                 # each switch's hosts under it
            group = list(sats.get(s, ()))
            span = _row_width(group, size) - 2 * MARGIN
            left = xs[s] - span / 2
            for h in group:
                xs[h] = left + size[h][0] / 2
                left += size[h][0] + NODE_GAP
        if below:
            xs.update(_spread(below, size, width, {h: xs[h] for h in below}))
    for row in drawn[:-1]:
        xs.update(_spread(row, size, width))
    boxes: dict[str, Box] = {}
    y = MARGIN
    for k, row in enumerate(all_rows):
        h = max(size[s][1] for s in row) if row else 0
        for s in row:
            boxes[s] = Box(xs[s], y + h / 2, *size[s])
        gap = SATELLITE_GAP if k == len(all_rows) - 2 and below else TIER_GAP
        y += h + gap
    right = max((b.x + b.w / 2 for b in boxes.values()), default=0) + MARGIN
    bottom_y = max((b.y + b.h / 2 for b in boxes.values()), default=0) + MARGIN
    return NetLayout(boxes, tuple(all_rows), max(width, right), bottom_y)
