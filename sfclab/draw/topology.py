"""A topology as SVG: switches with the NFs placed on them, hosts, servers, links.

:func:`topology_svg` draws a :class:`~sfclab.ir.topology.Topology` laid out by
:mod:`sfclab.draw.topology_layout` (a fat tree as core / aggregation / edge / hosts):

* a switch is a box with its name and one chip per NF type that runs on it
  (the NF's layer colour, as in every sfclab graph; the chains using it on
  hover); a server is an orange box with the NFs it runs for the chains; a
  host a small grey box (its addresses on hover);
* a link is a line; hovering it shows its ports, latency and bandwidth;
* a :class:`Highlight` — a chain's route, a service path, a packet's hops —
  draws its links in blue with the ports, numbers the nodes in the order they
  are visited, puts the NFs that ran there first, and fades the rest.

Nodes carry ``data-node`` and links ``data-link`` (``a--b``), so a front end
or a test can find them.

>>> from sfclab.ir.topology import line
>>> out = topology_svg(line(3), highlight=Highlight(walk=("h1", "s1", "s2", "s3", "h2")))
>>> out.count("data-node="), out.count('class="sfc-link sfc-visited"')
(5, 4)
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .chains import VISITED, nf_color
from ..ir.topology import Topology
from .layered import Box
from .topology_layout import NetLayout, natural_key, place, satellites, tiers
from ..nfinfo import NFCatalog

__all__ = ["Highlight", "Placed", "placed_nfs", "chain_highlight", "trace_highlight",
           "topology_svg", "MAX_HOSTS", "MAX_CHIPS"]

#: Above this many hosts, each switch's hosts are drawn as one box ("4 hosts").
MAX_HOSTS = 64
#: NF chips drawn in one switch box; the rest are counted ("+3 more").
MAX_CHIPS = 5
SWITCH_FILL, SWITCH_INK = "#eceff1", "#37474f"
SERVER_FILL, HOST_FILL = "#ffe0b2", "#f5f5f5"
LINK, CHIP_H = "#90a4ae", 16

_CSS = (".sfc-topo .sfc-idle{opacity:.28}"
        ".sfc-topo .sfc-link:hover .sfc-wire{stroke:#1976d2;stroke-width:3}"
        ".sfc-topo [data-node]{cursor:default}")


@dataclass(frozen=True, slots=True)
class Placed:
    """One NF instance placed on a node: its chain, instance name and NF type."""

    chain: str
    instance: str
    nf: str


@dataclass(frozen=True, slots=True)
class Highlight:
    """What to show in blue: *walk*, the nodes in the order visited (hosts, switches,
    servers; a node may come twice), and per node the NFs that *ran* there (NF types
    or instances) — those chips come first, the others fade.  The walk's nodes are
    numbered from *start*: a route or a packet starts at its source host, 0 and not
    numbered, so its first switch is hop 1, as in a network trace's hops (the
    table and the "hop N" sections of a send)."""

    walk: tuple[str, ...] = ()
    ran: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    start: int = 1


def placed_nfs(placement: Any) -> dict[str, list[Placed]]:
    """Node -> the NF instances a :class:`~sfclab.passes.netplace.NetworkPlacement`
    puts there, chain by chain."""
    out: dict[str, list[Placed]] = {}
    for c in placement.problem.chains:
        for inst, _, node in placement.chains[c.name].where:
            out.setdefault(node, []).append(Placed(c.name, inst, c.nf[inst]))
    return out


def _ink(color: str) -> str:
    """Black or white text, whichever reads on *color* (``#rrggbb``)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#111" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"


def _text_w(text: str, px: float = 7.0) -> float:
    return len(text) * px


class _Node:
    """What one drawn node shows."""

    def __init__(self, nid: str, kind: str, label: str, tip: str, members: tuple[str, ...] = ()
                 ) -> None:
        self.id, self.kind, self.label, self.tip, self.members = nid, kind, label, tip, members
        self.chips: list[tuple[str, str, bool, str]] = []     # label, nf type, on, tooltip
        self.more = 0
        self.steps: list[int] = []
        self.visited = False

    def size(self) -> tuple[float, float]:
        if self.kind == "host":
            return max(38.0, _text_w(self.label, 6.6) + 14), 22.0
        w = max(_text_w(self.label) + 24, 64.0,
                *(_text_w(c[0], 6.2) + 22 for c in self.chips))
        rows = len(self.chips) + (1 if self.more else 0)
        return w, 24.0 + rows * (CHIP_H + 2) + (4 if rows else 0)


def _chips(node: _Node, here: Sequence[Placed], ran: tuple[str, ...] | None) -> None:
    """The chips of a node: one per NF type (the NFs that ran first, by instance)."""
    by_type: dict[str, list[Placed]] = {}
    for p in here:
        by_type.setdefault(p.nf, []).append(p)
    chips = []
    for nf, ps in sorted(by_type.items()):
        users = ", ".join(f"{p.chain} ({p.instance})" for p in ps)
        tip = f"{nf} runs here for {users}"
        if ran is None:
            chips.append((0, nf if len(ps) == 1 else f"{nf} ×{len(ps)}", nf, True, tip))
            continue
        mine = [i for i in ran if i == nf or i.split("#")[0] == nf]
        label = ", ".join(dict.fromkeys(mine)) if mine else nf
        chips.append((0 if mine else 1, label, nf, bool(mine), tip))
    for extra in ran or ():                        # ran here, placed by no chain (a packet)
        nf = extra.split("#")[0]
        if nf not in by_type:
            chips.append((0, extra, nf, True, f"{extra} ran here"))
    chips.sort(key=lambda c: c[0])
    node.chips = [c[1:] for c in chips[:MAX_CHIPS]]
    node.more = max(0, len(chips) - MAX_CHIPS)


def _nodes(topology: Topology, rows: list[tuple[str, ...]], sats: dict[str, list[str]],
           placed: Mapping[str, Sequence[Placed]], usage: Mapping[str, Any],
           highlight: Highlight | None) -> tuple[dict[str, _Node], dict[str, str]]:
    """The drawn nodes, and for each topology node the drawn node it is in (hosts may
    be grouped)."""
    group = sum(len(v) for v in sats.values()) > MAX_HOSTS
    ran = highlight.ran if highlight is not None else {}
    nodes: dict[str, _Node] = {}
    alias: dict[str, str] = {}
    for s, sw in topology.switches.items():
        ports = ", ".join(f"{p} {nb}" for p, nb in sorted(topology.ports_used(s).items()))
        u = usage.get(s)
        slots = (f"\nNF slots: {' | '.join(u.types)} — {u.stages}/{u.stage_budget} stages, "
                 f"{u.tables}/{u.table_budget} tables for NFs" if u is not None else "")
        nodes[s] = _Node(s, "switch", s, f"switch {s}: {sw.arch}, {sw.stages} stages, "
                         f"{sw.tables} tables, ports 1..{sw.ports}{slots}\nlinked ports: {ports}")
    for s, members in sats.items():
        hosts = [m for m in members if topology.kind(m) == "host"]
        for m in members:
            obj = topology.node(m)
            if m in hosts and group and len(hosts) > 1:
                gid = f"{hosts[0]}…{hosts[-1]}"
                if gid not in nodes:
                    nodes[gid] = _Node(gid, "host", f"{len(hosts)} hosts",
                                       f"hosts {', '.join(hosts)} on {s}", tuple(hosts))
                alias[m] = gid
                continue
            at = ", ".join(f"{nb}:{topology.port(nb, m)}" for nb in topology.graph[m])
            if m in hosts:
                nodes[m] = _Node(m, "host", m, f"host {m}: {obj.ip}, {obj.mac_text}, at {at}")
            else:
                nodes[m] = _Node(m, "server", m, f"server {m}: runs "
                                 f"{', '.join(obj.nfs) or 'any NF'}, at {at}")
    for nid, node in nodes.items():
        if node.kind != "host":
            _chips(node, placed.get(nid, ()), ran.get(nid, ()) if highlight is not None else None)
    alias.update({n: n for n in nodes})
    if highlight is not None:
        for k, n in enumerate(highlight.walk, highlight.start):
            if n in alias:
                nodes[alias[n]].visited = True
                if k >= 1:
                    nodes[alias[n]].steps.append(k)
    return nodes, alias


def topology_svg(topology: Topology, placement: Any = None, *,
                 catalog: NFCatalog | None = None, highlight: Highlight | None = None,
                 title: str = "") -> str:
    """*topology* as an ``<svg>`` of its natural size: with the NFs *placement* (a
    :class:`~sfclab.passes.netplace.NetworkPlacement`, or None) puts on each node,
    and *highlight* in blue."""
    shape, rows = tiers(topology)
    sats = satellites(topology, rows)
    placed = placed_nfs(placement) if placement is not None else {}
    usage = placement.usage() if placement is not None else {}
    nodes, alias = _nodes(topology, rows, sats, placed, usage, highlight)
    drawn_sats = {s: list(dict.fromkeys(alias[m] for m in ms)) for s, ms in sats.items()}
    lay = place(rows, drawn_sats, {n: node.size() for n, node in nodes.items()})
    walk = [alias[n] for n in (highlight.walk if highlight else ()) if n in alias]
    hops = {frozenset(p) for p in zip(walk, walk[1:]) if p[0] != p[1]}
    on = set(walk)
    lift = max((_arc_lift(lay, alias[k.a], alias[k.b]) for k in topology.links), default=0.0)
    height = lay.height + lift + (12 if shape == "fat tree" else 0)    # pods' labels below
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sfc-svg sfc-topo" '
           f'width="{lay.width:.0f}" height="{height:.0f}" viewBox="0 {-lift if lift else 0:.0f} '
           f'{lay.width:.0f} {height:.0f}" font-family="sans-serif" role="img">'
           + (f"<title>{html.escape(title)}</title>" if title else "") + f"<style>{_CSS}</style>"]
    if shape == "fat tree":
        out += _pods(lay, rows, drawn_sats)
    labels = []
    seen: set[frozenset] = set()
    for link in sorted(topology.links, key=lambda k: (natural_key(k.a), natural_key(k.b))):
        a, b = alias[link.a], alias[link.b]
        key = frozenset((a, b))
        if a == b or key in seen:
            continue
        seen.add(key)
        visited = key in hops
        cls = "sfc-link" + (" sfc-visited" if visited else " sfc-idle" if highlight else "")
        tip = str(link) if a == link.a and b == link.b else f"{a} -- {b}"
        d, ends = _route(lay, a, b)
        color, width = (VISITED, 3.5) if visited else (LINK, 1.4)
        out.append(f'<g class="{cls}" data-link="{html.escape(a)}--{html.escape(b)}">'
                   f"<title>{html.escape(tip)}</title>"
                   f'<path d="{d}" fill="none" stroke="transparent" stroke-width="10"/>'
                   f'<path class="sfc-wire" d="{d}" fill="none" stroke="{color}" '
                   f'stroke-width="{width}"/></g>')
        if visited and link.a in alias and alias[link.a] == link.a and alias[link.b] == link.b:
            for node, (x, y) in zip((link.a, link.b), ends):
                labels.append(_port_label(str(link.port_of(node)), x, y))
    for nid in (n for row in lay.rows for n in row):
        node = nodes[nid]
        idle = highlight is not None and nid not in on
        out.append(_node_svg(node, lay.nodes[nid], catalog, idle))
    out += labels
    out.append("</svg>")
    return "".join(out)


def _pods(lay: NetLayout, rows: list[tuple[str, ...]], sats: Mapping[str, Sequence[str]]
          ) -> list[str]:
    """A fat tree's pods as grey boxes behind their aggregation and edge switches and
    hosts (``a{pod}_{i}``, ``e{pod}_{i}``)."""
    pods: dict[str, list[str]] = {}
    for row in rows[1:]:
        for s in row:
            pods.setdefault(s[1:].partition("_")[0], []).extend([s, *sats.get(s, ())])
    out = []
    for pod, members in sorted(pods.items(), key=lambda kv: natural_key(kv[0])):
        bs = [lay.nodes[m] for m in members if m in lay.nodes]
        x0 = min(b.x - b.w / 2 for b in bs) - 6
        x1 = max(b.x + b.w / 2 for b in bs) + 6
        y0 = min(b.top for b in bs) - 8
        y1 = max(b.y + b.h / 2 for b in bs) + 18
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}"'
                   f' rx="8" fill="#f7f9fa" stroke="#dfe4e7"/><text x="{(x0 + x1) / 2:.1f}" '
                   f'y="{y1 - 4:.1f}" text-anchor="middle" font-size="10" fill="#78909c">'
                   f"pod {html.escape(pod)}</text>")
    return out


def _clip(a: Box, x: float, y: float) -> tuple[float, float]:
    """Where the line from *a*'s centre towards (x, y) leaves *a*."""
    dx, dy = x - a.x, y - a.y
    if dx == 0 and dy == 0:
        return a.x, a.y
    t = min(a.w / 2 / abs(dx) if dx else float("inf"), a.h / 2 / abs(dy) if dy else float("inf"))
    return a.x + dx * t, a.y + dy * t


def _route(lay: NetLayout, a: str, b: str) -> tuple[str, tuple[tuple[float, float], ...]]:
    """The SVG path of a link and the points where it leaves each end: a straight line,
    or an arc over the row when both ends are in one row with nodes between them."""
    A, B = lay.nodes[a], lay.nodes[b]
    lift = _arc_lift(lay, a, b)
    if lift:
        x1, y1, x2, y2 = A.x, A.top, B.x, B.top
        cy = min(y1, y2) - lift
        return (f"M {x1:.1f} {y1:.1f} C {x1:.1f} {cy:.1f} {x2:.1f} {cy:.1f} {x2:.1f} {y2:.1f}",
                ((x1, y1 - 8), (x2, y2 - 8)))
    p, q = _clip(A, B.x, B.y), _clip(B, A.x, A.y)
    return f"M {p[0]:.1f} {p[1]:.1f} L {q[0]:.1f} {q[1]:.1f}", (
        (p[0] + (q[0] - p[0]) * 0.12, p[1] + (q[1] - p[1]) * 0.12),
        (q[0] + (p[0] - q[0]) * 0.12, q[1] + (p[1] - q[1]) * 0.12))


def _arc_lift(lay: NetLayout, a: str, b: str) -> float:
    """How far above its row the link *a* -- *b* arcs (0: it is a straight line): when
    both are in one row with nodes between them."""
    row = next((r for r in lay.rows if a in r and b in r), None)
    if row is None or a == b or abs(row.index(a) - row.index(b)) <= 1:
        return 0.0
    return 20.0 + 5 * abs(row.index(a) - row.index(b))


def _port_label(text: str, x: float, y: float) -> str:
    return (f'<text x="{x:.1f}" y="{y + 3:.1f}" text-anchor="middle" font-size="10" '
            f'font-weight="bold" fill="{VISITED}" stroke="#fff" stroke-width="3" '
            f'paint-order="stroke">{html.escape(text)}</text>')


def _node_svg(node: _Node, b: Box, catalog: NFCatalog | None, idle: bool) -> str:
    cls = ' class="sfc-idle"' if idle else (' class="sfc-visited"' if node.visited else "")
    fill = {"switch": SWITCH_FILL, "server": SERVER_FILL, "host": HOST_FILL}[node.kind]
    stroke = VISITED if node.visited else {"switch": SWITCH_INK, "server": "#e65100",
                                           "host": "#9e9e9e"}[node.kind]
    width = 2.5 if node.visited else 1.2
    left, top = b.x - b.w / 2, b.top
    parts = [f'<g data-node="{html.escape(node.id)}"{cls}><title>{html.escape(node.tip)}</title>',
             f'<rect x="{left:.1f}" y="{top:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" '
             f'rx="{4 if node.kind == "host" else 6}" fill="{fill}" stroke="{stroke}" '
             f'stroke-width="{width}"' + (' stroke-dasharray="5 3"' if node.kind == "server"
                                          else "") + "/>"]
    if node.kind == "host":
        parts.append(f'<text x="{b.x:.1f}" y="{b.y + 4:.1f}" text-anchor="middle" '
                     f'font-size="11" fill="#333">{html.escape(node.label)}</text>')
    else:
        parts.append(f'<text x="{b.x:.1f}" y="{top + 16:.1f}" text-anchor="middle" '
                     f'font-size="12" font-weight="bold" fill="{SWITCH_INK}">'
                     f"{html.escape(node.label)}</text>")
        y = top + 24
        for label, nf, on, tip in node.chips:
            color = nf_color(catalog, nf)
            parts.append(f'<g{"" if on else " opacity=" + chr(34) + "0.35" + chr(34)}>'
                         f"<title>{html.escape(tip)}</title>"
                         f'<rect x="{left + 6:.1f}" y="{y:.1f}" width="{b.w - 12:.1f}" '
                         f'height="{CHIP_H}" rx="4" fill="{color}" stroke="#333" '
                         f'stroke-width="0.8"/><text x="{b.x:.1f}" y="{y + 12:.1f}" '
                         f'text-anchor="middle" font-size="11" fill="{_ink(color)}">'
                         f"{html.escape(label)}</text></g>")
            y += CHIP_H + 2
        if node.more:
            parts.append(f'<text x="{b.x:.1f}" y="{y + 12:.1f}" text-anchor="middle" '
                         f'font-size="10" fill="#555">+{node.more} more</text>')
    if node.steps:
        parts.append(_badge(",".join(map(str, node.steps)), left, top))
    parts.append("</g>")
    return "".join(parts)


def _badge(text: str, x: float, y: float) -> str:
    w = max(16.0, 6.5 * len(text) + 8)
    return (f'<rect x="{x - 6:.1f}" y="{y - 8:.1f}" width="{w:.1f}" height="16" rx="8" '
            f'fill="{VISITED}"/><text class="sfc-step" x="{x - 6 + w / 2:.1f}" y="{y + 4:.1f}" '
            f'text-anchor="middle" font-size="10" font-weight="bold" fill="#fff">'
            f"{html.escape(text)}</text>")


def _walk(names: Iterable[str]) -> tuple[str, ...]:
    """*names* without the same node twice back to back."""
    out: list[str] = []
    for n in names:
        if not out or out[-1] != n:
            out.append(n)
    return tuple(out)


def chain_highlight(placement: Any, chain: str, path: str | None = None) -> Highlight:
    """A chain's route from its ingress to its egress, with a detour to each server
    its NFs (those of service path *path*, if given) run on, and the NF instances on
    every node.

    >>> from sfclab.ir.topology import line
    >>> from sfclab.ir.model import ChainSet, linear_chain
    >>> from sfclab.passes.netplace import place_network
    >>> pl = place_network(line(3, stages=8), ChainSet.of([linear_chain("c", ["heavy_hitter", "nat"])]))
    >>> h = chain_highlight(pl, "c")
    >>> h.walk, dict(h.ran)
    (('h1', 's1', 's2', 's3', 'h2'), {'s1': ('heavy_hitter',), 's2': ('nat',)})
    """
    c = placement.problem.chain(chain)
    pl = placement.chains[chain]
    keep = None
    if path is not None:
        keep = set(next(p.nodes for p in c.paths if p.id == path))
    ran: dict[str, list[str]] = {}
    servers: dict[int, list[str]] = {}
    for inst, q, node in pl.where:
        if keep is not None and inst not in keep:
            continue
        ran.setdefault(node, []).append(inst)
        if node != pl.route[q] and node not in servers.get(q, []):
            servers.setdefault(q, []).append(node)
    walk: list[str] = [] if ":" in c.ingress else [c.ingress]
    start = 1 - len(walk)                     # the ingress host is hop 0: not numbered
    for q, s in enumerate(pl.route):
        walk.append(s)
        for srv in servers.get(q, ()):
            walk += [srv, s]
    if ":" not in c.egress:
        walk.append(c.egress)
    return Highlight(_walk(walk), {n: tuple(v) for n, v in ran.items()}, start)


def trace_highlight(trace: Any) -> Highlight:
    """The hops of a :class:`~sfclab.targets.network.NetworkTrace`: the host it came
    from (hop 0, not numbered), every node in the order it got there, numbered as
    the trace numbers its hops, the NFs that ran on each."""
    ran: dict[str, list[str]] = {}
    for h in trace.hops:
        if h.nfs:
            ran.setdefault(h.node, []).extend(h.nfs)
    walk = (trace.source, *(h.node for h in trace.hops))
    return Highlight(walk, {n: tuple(v) for n, v in ran.items()}, 0)
