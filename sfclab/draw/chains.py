"""sfclab's graphs as SVG: chains, P4SC's merged IR, FlexMesh's MA-FSA.

The builders turn compiler data into *elements*, cytoscape-style dicts
(``{"data": {...}, "classes": "..."}``) in sfclab's visual language
(:mod:`sfclab.draw.style`: NF colour by protocol layer, NFs as rounded boxes, end
points as double ellipses, non-offloadable NFs with a dashed border, edge colour
and dash by edge kind).  :func:`svg` lays them out (:func:`sfclab.draw.layered.layered`)
and draws them; a node carries ``data-node="ID"`` so a front end can tell which
was clicked, and the classes ``sfc-visited`` / ``sfc-idle`` highlight a path.
The notebook's views, the trace view and the HTML report all draw with it.

>>> from sfclab.lang import parse
>>> nodes, edges = chain_elements(parse("chain c { input => firewall => (nat : drop ? "
...                                     "firewall.verdict == 0); nat => output; }")["c"])
>>> [(e["data"]["id"], e["data"]["kind"], e["data"]["label"]) for e in edges][1:3]
[('firewall->nat', 'then', 'verdict == 0'), ('firewall->drop', 'else', 'else')]
>>> svg(nodes, edges).count('data-node=')
5
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ..ir.model import Chain
from .layered import layered
from ..nfinfo import ENDPOINTS, NFCatalog
from .style import EDGE_COLORS, ENDPOINT_COLORS, LAYER_COLORS, OTHER_LAYER_COLOR

__all__ = ["Element", "SHARE_COLORS", "VISITED", "CSS", "nf_color", "share_color", "edge_label",
           "chain_elements", "merged_elements", "automaton_elements", "svg"]

Element = dict[str, Any]
#: IR node fill by how many chains share the node: 1, 2, 3, 4, 5 or more.
SHARE_COLORS = ("#e0ecf4", "#9ebcda", "#8c96c6", "#8856a7", "#810f7c")
#: The colour of a highlighted (visited) path.
VISITED = "#1976d2"
_DASH = {"else": "6 4", "loop": "6 4", "case": "2 3"}


def nf_color(catalog: NFCatalog | None, nf: str | None) -> str:
    """The colour of an NF type (by its protocol layer) or of an end point."""
    if not nf:
        return OTHER_LAYER_COLOR
    if nf in ENDPOINTS:
        return ENDPOINT_COLORS[nf]
    info = catalog.get(nf) if catalog is not None else None
    return LAYER_COLORS.get(info.layer, OTHER_LAYER_COLOR) if info else OTHER_LAYER_COLOR


def share_color(k: int) -> str:
    """IR node fill for a node shared by *k* chains."""
    return SHARE_COLORS[max(1, min(k, len(SHARE_COLORS))) - 1]


def _size(label: str) -> tuple[int, int]:
    lines = label.split("\n")
    return max(56, 7 * max(len(x) for x in lines) + 22), 18 + 14 * len(lines)


def _node(nid: str, label: str, color: str, classes: str = "", **data: Any) -> Element:
    w, h = _size(label)
    return {"data": {"id": nid, "label": label, "color": color, "width": w, "height": h, **data},
            "classes": classes}


def edge_label(u: str, data: dict[str, Any]) -> str:
    """What an edge of a chain graph says: its condition, case values or loop bound."""
    kind, cond = data.get("kind", "seq"), data.get("cond")
    if kind == "then" and cond is not None:
        return f"{cond.field.removeprefix(f'{u}.')} {cond.op} {cond.value}"
    if kind == "case":
        return "= " + ", ".join(str(c) for c in data.get("cases", ()))
    if kind == "loop":
        return f"×{data['bound']}" if data.get("bound") else "loop"
    return {"else": "else", "exit": "done"}.get(kind, "")


def chain_elements(chain: Chain, catalog: NFCatalog | None = None
                   ) -> tuple[list[Element], list[Element]]:
    """A chain's graph: NF instances and end points, edges labelled with conditions."""
    g = chain.graph
    nodes = []
    for n, d in g.nodes(data=True):
        if d.get("kind") == "endpoint":
            nodes.append(_node(n, n, nf_color(catalog, n), kind="endpoint"))
        else:
            info = catalog.get(d["nf"]) if catalog is not None else None
            nodes.append(_node(n, n, nf_color(catalog, d["nf"]), kind="nf", nf=d["nf"],
                               written=d.get("label", n), layer=info.layer if info else 0,
                               offload=info.offload if info else ""))
    edges = [{"data": {"id": f"{u}->{v}", "source": u, "target": v, "kind": d.get("kind", "seq"),
                       "label": edge_label(u, d)}, "classes": ""}
             for u, v, d in g.edges(data=True)]
    return nodes, edges


def merged_elements(merge: Any, catalog: NFCatalog | None = None
                    ) -> tuple[list[Element], list[Element]]:
    """P4SC's merged IR (a :class:`~sfclab.passes.merge.MergedIR`): fill by how many
    chains share a node, replicas marked."""
    nodes = []
    for n in merge.nodes:
        k = len(n.chains)
        label = n.name + (f"\n{k} chains" if k > 1 else "") + ("\nduplicate" if n.replica else "")
        nodes.append(_node(n.name, label, share_color(k), "replica" if n.replica else "",
                           kind="nf", nf=n.nf, tables=n.tables, replica=n.replica,
                           chains=sorted(n.chains), paths=sorted(n.paths),
                           text="#fff" if k >= 4 else "#111"))
    edges = [{"data": {"id": f"{u}->{v}", "source": u, "target": v, "kind": "seq", "label": ""},
              "classes": ""} for u, v in merge.edges]
    return nodes, edges


def automaton_elements(pipeline: Any, catalog: NFCatalog | None = None
                       ) -> tuple[list[Element], list[Element]]:
    """FlexMesh's MA-FSA (of a :class:`~sfclab.passes.pipeline.PipelineResult`):
    states (finals double-bordered), transitions labelled by NF."""
    a = pipeline.automaton
    nodes = [_node(f"s{s}", f"s{s}", "#f5f5f5", "state final" if s in a.finals else "state",
                   kind="state", start=s == a.start, final=s in a.finals)
             for s in range(a.n_states)]
    for n in nodes:
        n["data"]["width"] = n["data"]["height"] = 38
    edges = [{"data": {"id": f"s{s}-{nf}->s{t}", "source": f"s{s}", "target": f"s{t}",
                       "kind": "seq", "label": nf, "nf": nf, "color": nf_color(catalog, nf)},
              "classes": ""} for s, nf, t in a.transitions]
    return nodes, edges


# -- SVG --------------------------------------------------------------------------------------

#: The stylesheet the drawings need (in each ``<svg>``, or once in the page: ``svg(css=False)``).
CSS = (".sfc-idle{opacity:.35}"
        f".sfc-visited>rect,.sfc-visited>ellipse{{stroke:{VISITED};stroke-width:4}}"
        f"path.sfc-visited{{stroke:{VISITED};stroke-width:4}}"
        "[data-node]{cursor:pointer}")


def _shape(d: dict[str, Any], classes: str, x: float, y: float, w: float, h: float) -> str:
    kind = d.get("kind")
    fill = html.escape(str(d.get("color", OTHER_LAYER_COLOR)))
    stroke, width, dash = "#333", 1, ""
    if d.get("offload") == "non":
        width, dash = 2, ' stroke-dasharray="5 3"'
    if "replica" in classes.split():
        stroke, width, dash = "#d50000", 3, ' stroke-dasharray="6 3"'
    if kind == "endpoint" or "state" in classes.split():
        out = (f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" '
               f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/>')
        if kind == "endpoint" or "final" in classes.split():
            out += (f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{w / 2 - 3:.1f}" '
                    f'ry="{h / 2 - 3:.1f}" fill="none" stroke="#333" stroke-width="1"/>')
        return out
    return (f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w}" height="{h}" rx="8" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/>')


def _text(label: str, x: float, y: float, color: str, size: int = 12) -> str:
    lines = label.split("\n")
    first = y - (len(lines) - 1) * 7 + 4
    spans = "".join(f'<tspan x="{x:.1f}" y="{first + 14 * i:.1f}">{html.escape(s)}</tspan>'
                    for i, s in enumerate(lines))
    return f'<text text-anchor="middle" font-size="{size}" fill="{color}">{spans}</text>'


def svg(nodes: Sequence[Element], edges: Sequence[Element], *, title: str = "",
        css: bool = True) -> str:
    """The graph of *nodes* and *edges* (elements as the builders make them), laid
    out left to right, as an ``<svg>`` element of its natural size; *css* False leaves
    out the stylesheet (:data:`CSS`), for a page that has it once."""
    ids = {n["data"]["id"] for n in nodes}
    edges = [e for e in edges if e["data"]["source"] in ids and e["data"]["target"] in ids]
    lay = layered([(n["data"]["id"], n["data"]["width"], n["data"]["height"]) for n in nodes],
                  [(e["data"]["source"], e["data"]["target"], e["data"].get("label", ""))
                   for e in edges],
                  back={i for i, e in enumerate(edges) if e["data"].get("kind") == "loop"})
    colors = sorted({_edge_color(e["data"]) for e in edges} | {VISITED})
    markers = "".join(
        f'<marker id="sfc-arrow-{c[1:]}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="11" '
        f'markerHeight="11" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/></marker>' for c in colors)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sfc-svg" width="{lay.width:.0f}" '
           f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" '
           f'font-family="sans-serif" role="img">'
           + (f"<title>{html.escape(title)}</title>" if title else "")
           + (f"<style>{CSS}</style>" if css else "") + f"<defs>{markers}</defs>"]
    labels = []
    for e, route in zip(edges, lay.edges):
        d, classes = e["data"], e.get("classes", "")
        color = VISITED if "sfc-visited" in classes.split() else _edge_color(d)
        dash = _DASH.get(d.get("kind", "seq"), "")
        out.append(f'<path d="{route.d}" fill="none" stroke="{color}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "")
                   + (f' class="{html.escape(classes)}"' if classes else "")
                   + f' data-edge="{html.escape(d["id"])}" marker-end="url(#sfc-arrow-{color[1:]})"/>')
        if d.get("label"):
            labels.append(f'<text x="{route.label_x:.1f}" y="{route.label_y:.1f}" '
                          f'text-anchor="middle" font-size="10" fill="{color}" stroke="#fff" '
                          f'stroke-width="3" paint-order="stroke">{html.escape(d["label"])}</text>')
    for n in nodes:
        d, classes = n["data"], n.get("classes", "")
        b = lay.nodes[d["id"]]
        out.append(f'<g data-node="{html.escape(d["id"])}"'
                   + (f' class="{html.escape(classes)}"' if classes else "") + ">"
                   + _shape(d, classes, b.x, b.y, b.w, b.h)
                   + _text(d["label"], b.x, b.y, d.get("text", "#111")) + "</g>")
    out += labels
    out.append("</svg>")
    return "".join(out)


def _edge_color(d: dict[str, Any]) -> str:
    return d.get("color") or EDGE_COLORS.get(d.get("kind", "seq"), EDGE_COLORS["seq"])
