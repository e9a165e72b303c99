"""A self-contained HTML report of a chain set on a switch (``sfclab demo --html``).

No JavaScript and no files beside it: chain graphs are inline SVG, laid out in
layers (topological generations, loops drawn back), in sfclab's visual language
(:mod:`sfclab.style`).

>>> import sfclab
>>> svg = chain_svg(sfclab.parse("chain a: firewall -> nat")["a"])
>>> svg.startswith("<svg") and "firewall" in svg
True
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import networkx as nx

from .ir.model import Chain
from .style import EDGE_COLORS, ENDPOINT_COLORS, LAYER_COLORS, OTHER_LAYER_COLOR

__all__ = ["chain_svg", "html_report", "bar"]

_W, _H, _DX, _DY = 118, 34, 160, 60


def _layers(chain: Chain) -> dict[str, tuple[int, int]]:
    g = chain.graph
    dag = nx.DiGraph((u, v) for u, v, d in g.edges(data=True) if d.get("kind") != "loop")
    dag.add_nodes_from(g.nodes)
    try:
        gens = list(nx.topological_generations(dag))
    except nx.NetworkXUnfeasible:
        gens = [list(g.nodes)]
    return {n: (x, y) for x, gen in enumerate(gens) for y, n in enumerate(sorted(gen))}


def _color(chain: Chain, n: str, catalog) -> str:
    d = chain.graph.nodes[n]
    if d.get("kind") == "endpoint":
        return ENDPOINT_COLORS.get(n, OTHER_LAYER_COLOR)
    info = catalog.get(d["nf"]) if catalog is not None else None
    return LAYER_COLORS.get(info.layer, OTHER_LAYER_COLOR) if info else OTHER_LAYER_COLOR


def chain_svg(chain: Chain, catalog=None) -> str:
    """One chain's graph as an SVG element: NFs as rounded boxes coloured by layer,
    end points as ellipses, edges coloured by kind and labelled with conditions."""
    pos = _layers(chain)
    width = (max((x for x, _ in pos.values()), default=0) + 1) * _DX + 20
    height = (max((y for _, y in pos.values()), default=0) + 1) * _DY + 20

    def center(n: str) -> tuple[float, float]:
        x, y = pos[n]
        return 10 + x * _DX + _W / 2, 10 + y * _DY + _H / 2

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           'fill="context-stroke"/></marker></defs>']
    for u, v, d in chain.graph.edges(data=True):
        (x1, y1), (x2, y2) = center(u), center(v)
        kind = d.get("kind", "seq")
        color = EDGE_COLORS.get(kind, EDGE_COLORS["seq"])
        dash = ' stroke-dasharray="6 4"' if kind in ("else", "loop") else ""
        if kind == "loop" or x2 <= x1:       # drawn back over the boxes
            mid = min(y1, y2) - _DY / 2
            path = f"M {x1} {y1 - _H / 2} C {x1} {mid} {x2} {mid} {x2} {y2 - _H / 2}"
        else:
            path = f"M {x1 + _W / 2} {y1} L {x2 - _W / 2} {y2}"
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash} '
                   f'marker-end="url(#arrow)"/>')
        label = _edge_label(u, d)
        if label:
            out.append(f'<text x="{(x1 + x2) / 2}" y="{(y1 + y2) / 2 - 6}" fill="{color}" '
                       f'text-anchor="middle" font-size="10">{html.escape(label)}</text>')
    for n in chain.graph.nodes:
        cx, cy = center(n)
        fill = _color(chain, n, catalog)
        if chain.graph.nodes[n].get("kind") == "endpoint":
            shape = (f'<ellipse cx="{cx}" cy="{cy}" rx="{_W / 2 - 14}" ry="{_H / 2}" '
                     f'fill="{fill}" stroke="#333"/>')
        else:
            shape = (f'<rect x="{cx - _W / 2}" y="{cy - _H / 2}" width="{_W}" height="{_H}" '
                     f'rx="8" fill="{fill}" stroke="#333"/>')
        out.append(shape + f'<text x="{cx}" y="{cy + 4}" text-anchor="middle">'
                           f'{html.escape(n)}</text>')
    out.append("</svg>")
    return "".join(out)


def _edge_label(u: str, d: dict) -> str:
    kind, cond = d.get("kind", "seq"), d.get("cond")
    if kind == "then" and cond is not None:
        return f"{cond.field.removeprefix(u + '.')} {cond.op} {cond.value}"
    if kind == "case":
        return "= " + ", ".join(map(str, d.get("cases", ())))
    if kind == "loop":
        return f"×{d.get('bound', '')}"
    return {"else": "else"}.get(kind, "")


def bar(share: float, width: int = 20) -> str:
    """A text bar for a share in [0, 1]: ``█████···············``."""
    full = max(0, min(width, round(share * width)))
    return "█" * full + "·" * (width - full)


def _table(head: Iterable[str], rows: Iterable[Iterable]) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def html_report(title: str, *, chains, catalog, sections: list[tuple[str, str]],
                tables: list[tuple[str, list[str], list[list]]], program: str = "") -> str:
    """The report: chain graphs, then text *sections* (preformatted), then *tables*."""
    css = ("body{font-family:sans-serif;margin:2em;max-width:1200px}h1{font-size:1.6em}"
           "h2{border-bottom:1px solid #ccc;margin-top:1.6em}pre{background:#f6f8fa;padding:1em;"
           "overflow:auto;font-size:12px}table{border-collapse:collapse;margin:.5em 0}"
           "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;font-size:13px}"
           "th{background:#f0f0f0}.chain{display:inline-block;margin:0 1.5em 1em 0;"
           "vertical-align:top}")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{css}</style></head><body><h1>{html.escape(title)}</h1>",
             "<h2>Chains</h2>"]
    for c in chains:
        parts.append(f"<div class='chain'><b>{html.escape(c.name)}</b>"
                     + (f" <small>match {html.escape(str(c.match))}</small>" if c.match else "")
                     + f"<br>{chain_svg(c, catalog)}</div>")
    for name, text in sections:
        parts.append(f"<h2>{html.escape(name)}</h2><pre>{html.escape(text)}</pre>")
    for name, head, rows in tables:
        parts.append(f"<h2>{html.escape(name)}</h2>{_table(head, rows)}")
    if program:
        parts.append("<h2>P4 program</h2><details><summary>show the composed v1model program"
                     f"</summary><pre>{html.escape(program)}</pre></details>")
    parts.append("</body></html>")
    return "".join(parts)
