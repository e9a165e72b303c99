"""What ``%sfc tables`` and ``%sfc trace`` show: occupancy bars and packet traces.

:class:`TablesView` is a rich output (HTML bars with hit counts; plain text for
nbconvert and terminals).  :class:`TraceView` is a widget: a list of the packets
a Lab sent; selecting one shows its passes, NFs, tables hit or missed with the
matched entries, actions and how it left, and highlights the service path it
took on its chain's graph.  Its ``_repr_mimebundle_`` falls back to text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from ..report import bar
from . import graphs as G

__all__ = ["TablesView", "TraceView", "trace_text"]

_VISITED = [
    {"selector": "node.sfc-visited", "style": {"border-width": 4, "border-color": "#1976d2"}},
    {"selector": "edge.sfc-visited", "style": {"width": 5, "line-color": "#1976d2",
                                               "target-arrow-color": "#1976d2"}},
    {"selector": "node.sfc-idle", "style": {"opacity": 0.35}},
]
_KEEP = ("nf", "table_hit", "table_miss", "recirculate", "drop", "packet_out", "digest",
         "packet_in")


class TablesView:
    """Occupancy (entries / size) and hits of every table with entries."""

    def __init__(self, rows: Sequence[Any]) -> None:
        self.rows = [r for r in rows if r.entries]

    def text(self) -> str:
        w = max((len(r.table) for r in self.rows), default=10)
        lines = [f"{'table':<{w}}  {'occupancy':<20}  entries /   size   hits"]
        for r in self.rows:
            hits = "" if r.hits is None else f"{r.hits:6d}"
            lines.append(f"{r.table:<{w}}  {bar(r.share, 20)}  {r.entries:7d} / {r.size:6d} {hits}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.rows:
            pct = max(r.share * 100, 0.5 if r.entries else 0)
            rows.append(
                f"<tr><td style='text-align:left'><code>{html.escape(r.table)}</code></td>"
                f"<td style='width:220px'>"
                f"<div style='background:#eee;width:200px;height:12px'><div style='background:"
                f"#4e79a7;width:{pct:.1f}%;height:12px'></div></div></td>"
                f"<td style='text-align:right'>{r.entries} / {r.size}</td>"
                f"<td style='text-align:right'>{'' if r.hits is None else r.hits}</td></tr>")
        return ("<table><thead><tr><th style='text-align:left'>table</th><th>occupancy</th><th>entries / size</th>"
                "<th>hits</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")

    def _repr_mimebundle_(self, **kw) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self._repr_html_()}


def trace_text(t) -> str:
    """One packet: header line, then the steps that matter (no token checks)."""
    tr = t.trace
    lines = [tr.text().splitlines()[0] + (f"  [{t.path}]" if t.path else "")]
    for ev in tr.events:
        if ev.kind in _KEEP or (ev.kind == "action" and not ev.name.endswith("NoAction")):
            lines.append(f"  pass {ev.pass_no}: {ev.text()}")
    return "\n".join(lines)


class TraceView:
    """The packets a Lab sent, one selectable at a time, its path on its chain's graph."""

    def __init__(self, lab, traces: Sequence[Any]) -> None:
        self.lab, self.traces = lab, list(traces)
        labels = [(f"#{t.trace.packet_id} {t.chain or '?'} {t.path or ''} → "
                   + ("drop" if t.result.dropped else f"port {', '.join(map(str, t.result.ports))}"),
                   k) for k, t in enumerate(self.traces)]
        self.select = widgets.Select(options=labels, rows=min(10, max(3, len(labels))),
                                     layout=widgets.Layout(width="320px"))
        self.details = widgets.HTML()
        self.graph = G.graph_widget(height=220)
        self.graph.set_style(G.GRAPH_STYLE + _VISITED)
        self._chain = None
        self.select.observe(lambda ch: self.show(ch["new"]), names="value")
        self.widget = widgets.HBox([self.select, widgets.VBox([self.graph, self.details],
                                                              layout=widgets.Layout(flex="1"))])
        if self.traces:
            self.select.value = len(self.traces) - 1
            self.show(len(self.traces) - 1)

    def show(self, k: int | None) -> None:
        if k is None:
            return
        t = self.traces[k]
        self.details.value = f"<pre style='font-size:12px'>{html.escape(trace_text(t))}</pre>"
        chains = self.lab.chains
        if t.chain not in chains:
            return
        chain = chains[t.chain]
        nodes, edges = G.chain_elements(chain, self.lab.catalog)
        path = next((p for p in self.lab.compiled.paths if p.id == t.path), None)
        visited = {"input", *(path.nodes if path else ()), path.terminal if path else ""}
        ran = t.trace.nfs()
        on = {n for n in visited if n in ("input", "output", "drop", "cpu")
              or chain.graph.nodes.get(n, {}).get("nf") in ran}
        for n in nodes:
            n["classes"] = "sfc-visited" if n["data"]["id"] in on else "sfc-idle"
        for e in edges:
            d = e["data"]
            e["classes"] = "sfc-visited" if d["source"] in on and d["target"] in on else ""
        G.sync_graph(self.graph, nodes, edges)

    def text(self) -> str:
        return "\n\n".join(trace_text(t) for t in self.traces) or "no packets sent yet"

    def _repr_mimebundle_(self, **kw) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kw) or {}
        bundle["text/plain"] = self.text()
        return bundle
