"""What ``%sfc send``, ``%sfc trace`` and ``%sfc send-pcap`` show: the packets a Lab
sent, one selected, its per-pass timeline and its path on its chain's graph.

:class:`SendView` is a widget: a line saying which service paths the packets
covered (and which they did not reach, and why when the sender says), a table
of the packets (:class:`PacketTable`: packet, class, service path, passes, egress
or drop, NFs) whose rows can be selected with the mouse or the arrow keys, the
selected packet's chain drawn with the path it took highlighted, and its
timeline (:func:`timeline_html`): per pass, the blocks it ran (classifier, NFs,
branch and loop tables, rewinder), each table hit or missed with the entry that
matched, each action with its arguments, and how the pass ended.  Outside a
widget front end it shows as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets as t

from ..draw.chains import VISITED
from ..ir.values import ValueKinds
from ..nfinfo import ENDPOINTS, NFCatalog
from ..targets.traces.timeline import Pass, outcome_text, timeline, timeline_text
from . import graphs as G
from .markup import chip, esc, note

__all__ = ["SendView", "PacketTable", "timeline_html", "packet_row", "coverage"]


def packet_row(t: Any) -> dict[str, Any]:
    """One packet (a :class:`sfclab.lab.LabTrace`) as a row of the packet table."""
    tr = t.trace
    return {"id": tr.packet_id, "chain": t.chain or "?", "path": t.path or "–",
            "passes": tr.passes, "outcome": outcome_text(tr).replace("out on ", ""),
            "dropped": tr.dropped, "nfs": " → ".join(tr.nfs()) or "(none)"}


class PacketTable(anywidget.AnyWidget):
    """The packets as a table; a click (or the arrow keys) selects one."""

    _esm = """
    const COLS = [["id", "#"], ["chain", "class"], ["path", "service path"], ["passes", "passes"],
                  ["outcome", "egress / drop"], ["nfs", "NFs"]];
    export default { render({ model, el }) {
      el.classList.add("sfc-packets");
      const table = document.createElement("table");
      el.append(table);
      const mark = (scroll) => {
        const sel = model.get("selected");
        for (const tr of table.querySelectorAll("tbody tr")) {
          const on = Number(tr.dataset.index) === sel;
          tr.classList.toggle("sfc-selected", on);
          tr.setAttribute("aria-selected", on ? "true" : "false");
          if (on && scroll) tr.scrollIntoView({ block: "nearest" });
        }
      };
      const draw = () => {
        table.innerHTML = "";
        const head = table.createTHead().insertRow();
        for (const [, title] of COLS) {
          const th = document.createElement("th"); th.textContent = title; head.append(th);
        }
        const body = table.createTBody();
        model.get("rows").forEach((r, i) => {
          const tr = body.insertRow();
          tr.dataset.index = i; tr.tabIndex = 0;
          if (r.dropped) tr.classList.add("sfc-dropped");
          for (const [k] of COLS) tr.insertCell().textContent = r[k];
        });
        mark(false);
      };
      const select = (i) => {
        const n = model.get("rows").length;
        if (i < 0 || i >= n) return;
        model.set("selected", i); model.save_changes();
      };
      table.addEventListener("click", (e) => {
        const tr = e.target.closest("tbody tr");
        if (tr) { select(Number(tr.dataset.index)); tr.focus(); }
      });
      table.addEventListener("keydown", (e) => {
        const d = { ArrowDown: 1, ArrowUp: -1 }[e.key];
        if (d) {
          e.preventDefault(); select(model.get("selected") + d);
          const tr = table.querySelector(`tbody tr[data-index="${model.get("selected")}"]`);
          if (tr) tr.focus();
        }
      });
      model.on("change:rows", draw); model.on("change:selected", () => mark(true)); draw();
    } };
    """
    _css = """
    .sfc-packets { max-height: 232px; overflow: auto; border: 1px solid var(--jp-border-color2, #ddd); }
    .sfc-packets table { border-collapse: collapse; font-size: 12px; width: 100%; }
    .sfc-packets th { position: sticky; top: 0; background: var(--jp-layout-color2, #eee);
      text-align: left; padding: 3px 8px; }
    .sfc-packets td { padding: 2px 8px; border-top: 1px solid var(--jp-border-color3, #eee);
      white-space: nowrap; }
    .sfc-packets tbody tr { cursor: pointer; }
    .sfc-packets tbody tr:hover { background: var(--jp-layout-color2, #f3f3f3); }
    .sfc-packets tr.sfc-dropped td:nth-child(5) { color: #c62828; }
    .sfc-packets tr.sfc-selected, .sfc-packets tr.sfc-selected:hover {
      background: #1976d2; color: #fff; }
    .sfc-packets tr.sfc-selected td { color: #fff !important; }
    .sfc-packets tr:focus { outline: none; }
    """

    rows = t.List(t.Dict(), help="One dict per packet: id, chain, path, passes, outcome, "
                  "dropped, nfs.").tag(sync=True)
    selected = t.Int(-1, help="Index of the selected row (-1: none).").tag(sync=True)


# -- the timeline ---------------------------------------------------------------------------------

_GREY = "#e0e0e0"
_TD = "padding:2px 8px;vertical-align:top;border-top:1px solid var(--jp-border-color3,#eee)"


def _block_chip(name: str, nf: bool, catalog: NFCatalog | None) -> str:
    if not nf:
        return chip(name, _GREY)
    return chip(name, G.nf_color(catalog, name.split("#")[0]))


def _pass_html(p: Pass, catalog: NFCatalog | None, start: str) -> str:
    rows, where = [], ""
    for blk in p.blocks:
        if blk.where != where:                 # TNA: the pipelet the next blocks ran in
            where = blk.where
            rows.append(f"<tr class='sfc-pipelet'><td colspan='4' style='{_TD};font-size:11px;"
                        f"font-weight:bold;color:var(--jp-ui-font-color2,#666)'>"
                        f"{esc(where)}</td></tr>")
        steps = blk.steps or ()
        for k, s in enumerate(steps or [None]):
            cells = [_block_chip(blk.name, blk.nf, catalog) if k == 0 else ""]
            if s is None:
                cells += ["<i>nothing</i>", "", ""]
            else:
                verdict = ("" if s.hit is None else
                           f" <b style='color:{'#2e7d32' if s.hit else '#c62828'}'>"
                           f"{'hit' if s.hit else 'miss'}</b>")
                cells += [f"<code>{esc(s.table)}</code>{verdict}" if s.table else esc(s.text),
                          f"<code>{esc(s.entry)}</code>" if s.entry else "",
                          (f"<code>{esc(s.action)}</code>" if s.action else "")
                          + (f"<div class='sfc-step-note' style='font-size:11px;color:var("
                             f"--jp-ui-font-color2,#666)'>{esc(s.text)}</div>"
                             if s.table and s.text else "")]
            rows.append("<tr>" + "".join(
                f"<td style='{_TD}{';white-space:nowrap' if i < 2 else ''}'>{c}</td>"
                for i, c in enumerate(cells)) + "</tr>")
    th = "".join(f"<th style='{_TD};text-align:left'>{h}</th>"
                 for h in ("block", "table", "matched entry", "action"))
    color = {"out": "#2e7d32", "drop": "#c62828"}.get(p.end, "#6a1b9a")
    arrow = {"out": "→", "drop": "✗", "server": "⇄"}.get(p.end, "↻")
    head = (f"<div style='font-weight:bold;margin:2px 0'>pass {p.number}"
            f"<span style='font-weight:normal;color:var(--jp-ui-font-color2,#666)'> · "
            f"{esc(start)}</span></div>")
    return (f"<div class='sfc-pass' style='border-left:3px solid {color};padding-left:8px;"
            f"margin:6px 0'>{head}<table style='border-collapse:collapse;font-size:12px'>"
            f"<tr>{th}</tr>"
            f"{''.join(rows)}</table>"
            f"<div class='sfc-pass-end' style='color:{color};font-weight:bold;margin:3px 0'>"
            f"{arrow} {esc(p.end_text)}</div></div>")


def timeline_html(trace: Any, kinds: ValueKinds | None = None,
                  catalog: NFCatalog | None = None, *, path: str | None = None) -> str:
    """A packet's per-pass timeline as HTML (see :mod:`sfclab.targets.traces.timeline`)."""
    passes = timeline(trace, kinds)
    n = len(passes)
    head = (f"<div style='margin:4px 0'><b>packet {trace.packet_id}</b>"
            + (f" [{esc(trace.label)}]" if trace.label else "")
            + (f" on <b>{esc(path)}</b>" if path else "")
            + f": in on port {trace.ingress_port}, {n} pass{'es' if n != 1 else ''}, "
              f"NFs {esc(' → '.join(trace.nfs()) or '(none)')}, "
              f"<b>{esc(outcome_text(trace))}</b></div>")
    body, start = [], f"in on port {trace.ingress_port}"
    for p in passes:
        body.append(_pass_html(p, catalog, start))
        how = p.how or "recirculated"
        start = ("back from its server" if p.end == "server" else
                 f"{how} with {p.detail}" if p.detail else how)
    return f"<div class='sfc-timeline'>{head}{''.join(body)}</div>"


# -- coverage -------------------------------------------------------------------------------------

def coverage(traces: Sequence[Any], planned: Sequence[str], *,
             covered: Iterable[str] | None = None,
             missed: Mapping[str, str] | Iterable[Any] | None = None
             ) -> tuple[list[str], list[tuple[str, str]]]:
    """The service paths the packets took and those of *planned* they did not, with
    why: the sender's word (*covered*, *missed*: a mapping path -> why, or paths or
    ``(path, why)`` pairs) when it gives one, else what the traces show."""
    took = list(dict.fromkeys(covered if covered is not None else
                              (t.path for t in traces if t.path)))
    if missed is None:
        why = "no packet sent took it"
        out = [(p, why) for p in planned if p not in took]
    elif isinstance(missed, Mapping):
        out = [(str(p), str(w)) for p, w in missed.items()]
    else:
        out = [(str(m[0]), str(m[1])) if isinstance(m, tuple) else (str(m), "") for m in missed]
    return took, out


def _coverage_html(took: list[str], missed: list[tuple[str, str]]) -> str:
    ok = ", ".join(f"<b>{esc(p)}</b>" for p in took) or "none"
    text = f"service paths covered: {ok}"
    if missed:
        text += "; not reached: " + ", ".join(
            f"<b style='color:#c62828'>{esc(p)}</b>" + (f" ({esc(w)})" if w else "")
            for p, w in missed)
    return f"<div class='sfc-coverage' style='margin:4px 0'>{text}</div>"


# -- the view ------------------------------------------------------------------------------------

class SendView:
    """The packets a Lab sent (its :class:`~sfclab.lab.LabTrace` objects), one selected."""

    def __init__(self, lab: Any, traces: Sequence[Any], *,
                 covered: Iterable[str] | None = None,
                 missed: Mapping[str, str] | Iterable[Any] | None = None,
                 counts: Any = None, note: str = "") -> None:
        """*counts*: a :class:`~sfclab.targets.traces.store.TraceSummary` of every packet
        the traces stand for (some may have been dropped: *note* says so)."""
        self.lab, self.traces = lab, list(traces)
        self.counts, self.note = counts, note
        self.kinds = lab.value_kinds()
        chains = list(dict.fromkeys(t.chain for t in self.traces if t.chain))
        planned = [p.id for p in lab.compiled.paths if p.chain in chains]
        self.covered, self.missed = coverage(self.traces, planned, covered=covered,
                                             missed=missed)
        self.table = PacketTable(rows=[packet_row(x) for x in self.traces])
        self.summary = widgets.HTML(self._summary())
        self.title = widgets.HTML()
        self.graph = G.graph_widget()
        self.details = widgets.HTML()
        self.table.observe(lambda ch: self.show(ch["new"]), names="selected")
        self.widget = widgets.VBox([self.summary, self.table, self.title, self.graph,
                                    self.details], layout=widgets.Layout(width="100%"))
        if self.traces:
            self.table.selected = len(self.traces) - 1

    def _counts(self) -> tuple[int, int]:
        """Packets and drops, of every packet counted (else of the traces)."""
        if self.counts is not None:
            return self.counts.packets, self.counts.dropped
        return len(self.traces), sum(1 for x in self.traces if x.result.dropped)

    def _summary(self) -> str:
        n, dropped = self._counts()
        if not n:
            return note("No packets.")
        chains = ", ".join(dict.fromkeys(x.chain or "?" for x in self.traces))
        return (f"<div><b>{n:,} packet{'s' if n != 1 else ''}</b> of {esc(chains)}: "
                f"{n - dropped:,} out, {dropped:,} dropped · select a packet for its "
                f"timeline</div>" + _coverage_html(self.covered, self.missed)
                + (f"<div class='sfc-dropped-traces'>{note(esc(self.note))}</div>"
                   if self.note else ""))

    def show(self, k: int | None) -> None:
        """Show packet *k*'s timeline and its path on its chain's graph."""
        if k is None or not 0 <= k < len(self.traces):
            return
        x = self.traces[k]
        self.details.value = timeline_html(x.trace, self.kinds, self.lab.catalog, path=x.path)
        chains = self.lab.chains
        if x.chain not in chains:
            self.title.value = note(f"the chain {esc(str(x.chain))} is no longer in the lab")
            self.graph.show([], [])
            return
        chain = chains[x.chain]
        nodes, edges = G.chain_elements(chain, self.lab.catalog)
        path = next((p for p in self.lab.compiled.paths if p.id == x.path), None)
        visited = {"input", *(path.nodes if path else ()), path.terminal if path else ""}
        ran = x.trace.nfs()
        on = {n for n in visited if n in ENDPOINTS
              or chain.graph.nodes.get(n, {}).get("nf") in ran}
        for n in nodes:
            n["classes"] = "sfc-visited" if n["data"]["id"] in on else "sfc-idle"
        for e in edges:
            d = e["data"]
            e["classes"] = "sfc-visited" if d["source"] in on and d["target"] in on else ""
        self.title.value = (f"<div style='margin-top:6px'><b>{esc(chain.name)}</b>: the path of "
                            f"packet {x.trace.packet_id}" + (f" ({esc(x.path)})" if x.path else "")
                            + f" in <span style='color:{VISITED}'>blue</span></div>")
        self.graph.show(nodes, edges, title=f"chain {chain.name}")

    def text(self) -> str:
        if not self.traces:
            return "no packets sent yet"
        lines = [f"{'#':>4}  {'class':<10} {'path':<12} passes  {'egress / drop':<24} NFs"]
        for x in self.traces:
            r = packet_row(x)
            lines.append(f"{r['id']:>4}  {r['chain']:<10} {r['path']:<12} {r['passes']:>6}  "
                         f"{r['outcome']:<24} {r['nfs']}")
        lines.append("covered: " + (", ".join(self.covered) or "none")
                     + ("; not reached: " + ", ".join(p + (f" ({w})" if w else "")
                                                      for p, w in self.missed)
                        if self.missed else ""))
        if self.counts is not None and self.counts.packets > len(self.traces):
            lines.append(self.counts.text())
        if self.note:
            lines.append(self.note)
        last = self.traces[-1]
        lines += ["", timeline_text(last.trace, self.kinds, path=last.path)]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kw: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kw) or {}
        bundle["text/plain"] = self.text()
        return bundle
