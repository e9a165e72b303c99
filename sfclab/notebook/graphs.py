"""ipycytoscape graphs in sfclab's visual language, updated in place.

The colours and shapes are the chain editor's (``js/src/graph-style.js``): NF
colour by protocol layer, NFs as rounded boxes, end points as double ellipses,
non-offloadable NFs with a dashed border, edge colour and dash by edge kind.
The builders turn compiler data into *elements* (cytoscape ``{"data": …,
"classes": …}`` dicts); :func:`sync_graph` puts them into a widget, reusing the
Node and Edge widgets whose id stays, so an update sends only what changed.

Only what works in JupyterLab 4 is used: rendering, layouts run by the front end
(dagre) and click callbacks; positions are never synced back.

>>> from sfclab.lang import parse
>>> nodes, edges = chain_elements(parse("chain c { input => firewall => (nat : drop ? "
...                                     "firewall.verdict == 0); nat => output; }")["c"])
>>> [(e["data"]["id"], e["data"]["kind"], e["data"]["label"]) for e in edges][1:3]
[('firewall->nat', 'then', 'verdict == 0'), ('firewall->drop', 'else', 'else')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anywidget
import ipycytoscape as cy

from ..ir.model import Chain
from ..nfinfo import ENDPOINTS, NFCatalog
from ..passes.merge import MergedIR
from ..passes.pipeline import PipelineResult
from .editor import ENDPOINT_COLORS, LAYER_COLORS, OTHER_LAYER_COLOR

__all__ = ["GRAPH_STYLE", "GRAPH_HEIGHTS", "DAGRE", "SHARE_COLORS", "Element", "nf_color",
           "share_color", "edge_label", "chain_elements", "merged_elements", "automaton_elements",
           "graph_widget", "sync_graph"]

Element = dict[str, Any]

#: Left-to-right layered layout (cytoscape-dagre, bundled with ipycytoscape).
DAGRE = {"name": "dagre", "rankDir": "LR", "nodeSep": 24, "rankSep": 110, "fit": True,
         "padding": 16}
#: Heights (pixels) a graph widget can have.
GRAPH_HEIGHTS = (160, 220, 280, 360)
#: IR node fill by how many chains share the node: 1, 2, 3, 4, 5 or more.
SHARE_COLORS = ("#e0ecf4", "#9ebcda", "#8c96c6", "#8856a7", "#810f7c")


def _edge(color: str, **extra: Any) -> dict[str, Any]:
    return {"line-color": color, "target-arrow-color": color, "color": color, **extra}


#: The editor's stylesheet as cytoscape JSON (node sizes come from ``data(width)``,
#: ``data(height)``), plus the views' own classes.
GRAPH_STYLE: list[dict[str, Any]] = [
    {"selector": "node", "style": {
        "background-color": "data(color)", "label": "data(label)", "color": "#111",
        "font-size": 12, "font-family": "sans-serif", "text-valign": "center",
        "text-halign": "center", "text-wrap": "wrap", "shape": "round-rectangle",
        "width": "data(width)", "height": "data(height)", "border-width": 1,
        "border-color": "#333"}},
    {"selector": "node[kind = 'endpoint']", "style": {
        "shape": "ellipse", "border-width": 3, "border-style": "double"}},
    {"selector": "node[offload = 'non']", "style": {"border-style": "dashed", "border-width": 2}},
    {"selector": "node[text]", "style": {"color": "data(text)"}},
    {"selector": "node.replica", "style": {
        "border-color": "#d50000", "border-width": 3, "border-style": "dashed"}},
    {"selector": "node.state", "style": {"shape": "ellipse"}},
    {"selector": "node.final", "style": {"border-width": 4, "border-style": "double"}},
    {"selector": "edge", "style": {
        "width": 2, "curve-style": "bezier", "target-arrow-shape": "triangle",
        "label": "data(label)", "font-size": 10, "text-background-color": "#fff",
        "text-background-opacity": 0.85, "text-background-padding": 2, **_edge("#777")}},
    {"selector": "edge[kind = 'then']", "style": _edge("#2e7d32")},
    {"selector": "edge[kind = 'else']", "style": _edge("#c62828", **{"line-style": "dashed"})},
    {"selector": "edge[kind = 'case']", "style": _edge("#1565c0", **{"line-style": "dotted",
                                                                      "width": 3})},
    {"selector": "edge[kind = 'loop']", "style": _edge("#6a1b9a", **{
        "line-style": "dashed", "control-point-step-size": 70, "loop-direction": "0deg",
        "loop-sweep": "-60deg"})},
    {"selector": "edge[kind = 'exit']", "style": _edge("#6a1b9a")},
    {"selector": "edge[color]", "style": {"line-color": "data(color)",
                                          "target-arrow-color": "data(color)"}},
    {"selector": "node:selected", "style": {"border-width": 3, "border-color": "#1976d2"}},
]


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


def merged_elements(merge: MergedIR, catalog: NFCatalog | None = None
                    ) -> tuple[list[Element], list[Element]]:
    """P4SC's merged IR: fill by how many chains share a node, replicas marked."""
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


def automaton_elements(pipeline: PipelineResult, catalog: NFCatalog | None = None
                       ) -> tuple[list[Element], list[Element]]:
    """FlexMesh's MA-FSA: states (finals double-bordered), transitions labelled by NF."""
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


class _GraphCss(anywidget.AnyWidget):
    """The graph heights as CSS classes.  anywidget loads ``_css`` when the model is
    created, before any graph view renders: ipycytoscape fits the layout to the
    container's size at its first render, when a ``layout.height`` has not been
    applied yet (its own CSS says 400px), but its DOM classes have."""

    _esm = "export default { render() {} };"
    _css = "\n".join(f".custom-widget.sfc-graph-{h} {{ height: {h}px; }}" for h in GRAPH_HEIGHTS)


_CSS: _GraphCss | None = None


def graph_widget(*, height: int = 220, layout: dict[str, Any] | None = None,
                 on_click: Callable[[dict], Any] | None = None) -> cy.CytoscapeWidget:
    """An empty graph widget with sfclab's style, *height* pixels tall (one of
    :data:`GRAPH_HEIGHTS`); *on_click(data)* gets a clicked node's data dict."""
    global _CSS
    if height not in GRAPH_HEIGHTS:
        raise ValueError(f"height must be one of {GRAPH_HEIGHTS}, not {height!r}")
    if _CSS is None or _CSS.comm is None:
        _CSS = _GraphCss()
    w = cy.CytoscapeWidget()
    w.set_style(GRAPH_STYLE)
    w.cytoscape_layout = dict(layout or DAGRE)
    w.user_zooming_enabled = False          # the wheel scrolls the notebook, not the graph
    w.min_zoom, w.max_zoom = 0.2, 1.25      # small graphs are not blown up
    w.add_class(f"sfc-graph-{height}")
    w.layout.height = f"{height}px"
    w.layout.width = "100%"
    if on_click is not None:
        w.on("node", "click", lambda target: on_click(target.get("data", {})))
    return w


def sync_graph(widget: cy.CytoscapeWidget, nodes: Sequence[Element],
               edges: Sequence[Element]) -> bool:
    """Make *widget* show *nodes* and *edges* and lay them out; returns True if
    anything changed.

    When the elements are the same (ids, in order) only changed data and classes
    are sent, the element widgets stay, and the layout runs again.  Otherwise the
    graph is emptied in one message and refilled with new element widgets in the
    next (the front end lays it out then): ipycytoscape's front end removes element
    views asynchronously, so re-adding an id (or reordering) in a single update
    would collide with the element being removed.
    """
    g = widget.graph
    want_n = [_el(e, False) for e in nodes]
    want_e = [_el(e, True) for e in edges]
    ids = [d["id"] for d, _ in want_n], [d["id"] for d, _ in want_e]
    if ids == ([w.data.get("id") for w in g.nodes], [w.data.get("id") for w in g.edges]):
        changed = False
        with g.hold_sync():
            for w, (data, classes) in zip([*g.nodes, *g.edges], [*want_n, *want_e]):
                if dict(w.data) != data:
                    w.data, changed = data, True
                if w.classes != classes:
                    w.classes, changed = classes, True
        if changed:
            widget.relayout()                   # labels, hence node sizes, may differ
        return changed
    old = [*g.nodes, *g.edges]
    with g.hold_sync():
        g.nodes, g.edges, g._adj = [], [], {}
    new_nodes = [cy.Node(data=d, classes=c) for d, c in want_n]
    new_edges = [cy.Edge(data=d, classes=c) for d, c in want_e]
    adj: dict[str, dict[str, int]] = {d["id"]: {} for d, _ in want_n}
    for d, _ in want_e:
        adj.setdefault(d["source"], {})[d["target"]] = 1
    with g.hold_sync():
        g.nodes, g.edges, g._adj = new_nodes, new_edges, adj
    for w in old:
        w.close()
    return True


def _el(element: Element, edge: bool) -> tuple[dict[str, Any], str]:
    classes = element.get("classes", "")
    if edge:
        classes = (classes + " directed").strip()
    return dict(element["data"]), classes
