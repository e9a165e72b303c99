"""The live view: what the compiler did with the chains, one tab per pass.

:class:`LiveView` is an ipywidgets ``Tab``.  Its tabs (:data:`TABS`):

========== ===================================================================
chains     one graph per chain, edges labelled with their conditions
ir         P4SC's merged IR: fill by how many chains share a node, duplicates
           (replica tables) with a dashed red border
pipeline   FlexMesh's MA-FSA automaton, the default pipeline's slots, and the
           naive / MA-FSA / optimal pipelines side by side
fsm        per service path: its passes, the bitmap of each, rewinder and
           branch entries
placement  Dejavu's NFs on pipes × ingress/egress, throughput estimate
offload    P4SFC's pre-server / server / post-server split per path
p4         the generated program for v1model and TNA (highlighted; copy, download)
entries    the table entries, one table per group
========== ===================================================================

:meth:`LiveView.update` refreshes every tab in place (the same widgets get new
content; graphs keep the element widgets that stay).  Outside a widget front end
(nbconvert, a terminal) the view shows as the compiler's summary.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import anywidget
import ipywidgets as widgets
import traitlets as t

from ..compiler import ARCHS, CompiledChains
from ..errors import SfclabError, did_you_mean
from ..nfinfo import NFCatalog
from . import graphs as G

if TYPE_CHECKING:
    from ..codegen import Generated

__all__ = ["TABS", "LiveView", "CodeView", "highlight_p4", "normalize_show"]

#: Tab names, in display order.
TABS = ("chains", "ir", "pipeline", "fsm", "placement", "offload", "p4", "entries")
#: Above these, a tab shows the first ones and says how many it left out.
MAX_GRAPHS, MAX_ROWS = 24, 200
#: Seconds between showing a tab and laying its graphs out again.
RELAYOUT_DELAY = 0.25
Codes = Mapping[str, Union["Generated", SfclabError]]


def normalize_show(show: str | Iterable[str]) -> tuple[str, ...]:
    """Tab names from ``"ir,p4"`` or ``["ir", "p4"]``, checked, in :data:`TABS` order.

    >>> normalize_show("p4, chains")
    ('chains', 'p4')
    """
    names = [s.strip().lower() for s in (show.split(",") if isinstance(show, str) else show)]
    names = [n for n in names if n]
    for n in names:
        if n not in TABS:
            raise ValueError(f"unknown view {n!r}; "
                             + (did_you_mean(n, TABS) or f"views: {', '.join(TABS)}"))
    if not names:
        raise ValueError(f"no view given; views: {', '.join(TABS)}")
    return tuple(n for n in TABS if n in names)


# -- small HTML helpers -------------------------------------------------------------------------

_esc = html.escape
_CELL = "padding:2px 8px;border:1px solid var(--jp-border-color2,#ddd);vertical-align:top"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table; cells are HTML already."""
    th = "".join(f'<th style="{_CELL};text-align:left">{h}</th>' for h in head)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{c}</td>' for c in r) + "</tr>"
                   for r in rows)
    return f'<table style="border-collapse:collapse;font-size:12px;line-height:1.4;margin:4px 0">' \
           f"<tr>{th}</tr>{body}</table>"


def _chip(text: str, color: str, *, dashed: bool = False, ink: str = "#111") -> str:
    border = "dashed" if dashed else "solid"
    return (f'<span style="background:{color};color:{ink};border:1px {border} #333;'
            f'border-radius:4px;padding:0 5px;margin:1px;display:inline-block;'
            f'line-height:1.5">{_esc(text)}</span>')


def _chips(nodes: Sequence[str], catalog: NFCatalog) -> str:
    out = []
    for n in nodes:
        info = catalog.get(n.split("#")[0])
        out.append(_chip(n, G.nf_color(catalog, info.name if info else n),
                         dashed=bool(info and info.offload == "non")))
    return "".join(out) or "–"


def _note(text: str) -> str:
    return f'<div style="color:var(--jp-ui-font-color2,#666);margin:4px 0;line-height:1.4">' \
           f"{text}</div>"


def _more(total: int, shown: int, what: str) -> str:
    return _note(f"… and {total - shown} more {what} (see <code>compiled.explain()</code>)") \
        if total > shown else ""


_EMPTY = _note("No chains yet: write them in a <code>%%chain</code> cell or call "
               "<code>lab.add(…)</code>.")


# -- P4 highlighting and the code widget ----------------------------------------------------------

_P4_KEYWORDS = frozenset(
    "action actions apply const control default default_action else entries enum extern "
    "false header header_union if in inout key out package parser return select size "
    "state struct switch table transition true tuple typedef type value_set".split())
_P4_TYPES = frozenset("bit bool error int string varbit void match_kind packet_in "
                      "packet_out".split())
_P4_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<meta>^[ \t]*\#[^\n]*)
  | (?P<annotation>@[A-Za-z_]\w*)
  | (?P<number>\b\d+[ws]\d+\b|\b0[xXbBoOdD][0-9a-fA-F_]+\b|\b\d[\d_]*\b)
  | (?P<word>\b[A-Za-z_]\w*\b)
""", re.S | re.M | re.X)


def highlight_p4(code: str) -> str:
    """P4 source as HTML with ``<span class="p4-…">`` around keywords, types, numbers,
    strings, comments, annotations and preprocessor lines.

    >>> highlight_p4('table t { size = 16; } // x')
    '<span class="p4-keyword">table</span> t { <span class="p4-keyword">size</span> = \
<span class="p4-number">16</span>; } <span class="p4-comment">// x</span>'
    """
    out, last = [], 0
    for m in _P4_TOKEN.finditer(code):
        kind, text = m.lastgroup, m.group()
        if kind == "word":
            kind = "keyword" if text in _P4_KEYWORDS else "type" if text in _P4_TYPES else ""
        out.append(_esc(code[last:m.start()], quote=False))
        out.append(f'<span class="p4-{kind}">{_esc(text, quote=False)}</span>' if kind
                   else _esc(text, quote=False))
        last = m.end()
    out.append(_esc(code[last:], quote=False))
    return "".join(out)


class CodeView(anywidget.AnyWidget):
    """A read-only program listing with syntax highlighting, Copy and Download buttons
    (both run in the browser: the clipboard and the file never pass through the kernel)."""

    _esm = """
    export default { render({ model, el }) {
      const bar = document.createElement("div"), pre = document.createElement("pre");
      bar.className = "sfc-code-bar"; pre.className = "sfc-code";
      const title = document.createElement("span"), copy = document.createElement("button"),
            save = document.createElement("button");
      copy.textContent = "Copy"; save.textContent = "Download";
      copy.className = save.className = "jupyter-button";
      copy.onclick = async () => {
        const text = model.get("code");
        try { await navigator.clipboard.writeText(text); }
        catch (e) {   // no clipboard API (plain http): select the listing and copy that
          const r = document.createRange(); r.selectNodeContents(pre);
          const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
          document.execCommand("copy");
        }
        copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy"; }, 1200);
      };
      save.onclick = () => {
        const url = URL.createObjectURL(new Blob([model.get("code")], { type: "text/plain" }));
        const a = document.createElement("a");
        a.href = url; a.download = model.get("filename"); a.click();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      };
      bar.append(title, copy, save); el.append(bar, pre);
      const draw = () => {
        const err = model.get("error");
        title.textContent = err ? "" : model.get("title");
        copy.disabled = save.disabled = !!err || !model.get("code");
        if (err) { pre.textContent = err; pre.classList.add("sfc-error"); }
        else { pre.innerHTML = model.get("html"); pre.classList.remove("sfc-error"); }
      };
      model.on("change", draw); draw();
    } };
    """
    _css = """
    .sfc-code-bar { display: flex; gap: 6px; align-items: center; margin: 2px 0; }
    .sfc-code-bar span { flex: 1; color: var(--jp-ui-font-color2, #666); font-size: 12px; }
    .sfc-code { max-height: 480px; overflow: auto; margin: 0; padding: 6px;
      background: var(--jp-cell-editor-background, #f7f7f7); font-size: 12px;
      font-family: var(--jp-code-font-family, monospace); }
    .sfc-code.sfc-error { color: var(--jp-error-color1, #d32f2f); white-space: pre-wrap; }
    .p4-keyword { color: var(--jp-mirror-editor-keyword-color, #008000); font-weight: bold; }
    .p4-type { color: var(--jp-mirror-editor-variable-2-color, #05a); }
    .p4-number { color: var(--jp-mirror-editor-number-color, #080); }
    .p4-string { color: var(--jp-mirror-editor-string-color, #ba2121); }
    .p4-comment { color: var(--jp-mirror-editor-comment-color, #408080); font-style: italic; }
    .p4-meta, .p4-annotation { color: var(--jp-mirror-editor-meta-color, #aa22ff); }
    """

    code = t.Unicode("", help="The program text (what Copy and Download give).").tag(sync=True)
    html = t.Unicode("", help="The program as highlighted HTML (highlight_p4).").tag(sync=True)
    filename = t.Unicode("program.p4", help="File name Download saves as.").tag(sync=True)
    title = t.Unicode("", help="One line above the listing.").tag(sync=True)
    error = t.Unicode("", help="Why there is no program (shown instead of it).").tag(sync=True)

    def set_code(self, code: str, *, title: str = "") -> None:
        """Show *code* (highlighted); clears any error."""
        with self.hold_sync():
            self.code, self.html, self.title, self.error = code, highlight_p4(code), title, ""

    def set_error(self, message: str) -> None:
        with self.hold_sync():
            self.code, self.html, self.title, self.error = "", "", "", message


# -- the tabs -----------------------------------------------------------------------------------

class _Panel:
    """One tab: a VBox whose children are updated in place."""

    def __init__(self) -> None:
        self.box = widgets.VBox()
        self.graphs: list[Any] = []

    def update(self, compiled: CompiledChains, codes: Codes) -> None:  # pragma: no cover
        raise NotImplementedError

    def shown(self) -> None:
        """The tab became visible: lay its graphs out again (hidden ones have no size).
        In a kernel this waits a moment, for the browser to size the graphs first."""
        def relayout() -> None:
            for g in self.graphs:
                if g.comm is not None:
                    g.relayout()

        try:
            asyncio.get_running_loop().call_later(RELAYOUT_DELAY, relayout)
        except RuntimeError:                     # no event loop: not in a kernel
            relayout()


class _HtmlPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.html = widgets.HTML()
        self.box.children = (self.html,)

    def update(self, compiled: CompiledChains, codes: Codes) -> None:
        body = self.render(compiled, codes) if len(compiled.chains) else _EMPTY
        self.html.value = f'<div style="line-height:1.4">{body}</div>'

    def render(self, compiled: CompiledChains, codes: Codes) -> str:  # pragma: no cover
        raise NotImplementedError


def _nf_details(catalog: NFCatalog, data: dict) -> str:
    """What a click on an NF node shows."""
    nf = data.get("nf") or ""
    info = catalog.get(nf) if nf else None
    if info is None:
        return f"<b>{_esc(str(data.get('id', '')))}</b>"
    fields = ", ".join(f"{n} (bit&lt;{w}&gt;)" for n, w in info.fields.items()) or "none"
    extra = "".join(f"; {k} {_esc(', '.join(map(str, data[k])))}"
                    for k in ("chains", "paths") if data.get(k))
    return (f"<b>{_esc(str(data['id']))}</b>: {_esc(info.name)}, layer {info.layer}, "
            f"{info.offload} offloadable, {info.tables} tables, ~{info.stages} stages; "
            f"fields: {fields}{extra}<br>{_esc(info.description)}")


class _ChainsPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.note, self.details = widgets.HTML(), widgets.HTML()
        self.items: dict[str, tuple[widgets.VBox, widgets.HTML, Any]] = {}
        self.catalog: NFCatalog | None = None

    def _click(self, data: dict) -> None:
        if self.catalog is not None:
            self.details.value = _nf_details(self.catalog, data)

    def update(self, compiled: CompiledChains, codes: Codes) -> None:
        self.catalog = compiled.catalog
        chains = list(compiled.chains)
        npaths: dict[str, int] = {}
        for p in compiled.paths:
            npaths[p.chain] = npaths.get(p.chain, 0) + 1
        weights = compiled.chains.weights()
        for c in chains[:MAX_GRAPHS]:
            if c.name not in self.items:
                head, graph = widgets.HTML(), G.graph_widget(height=220, on_click=self._click)
                self.items[c.name] = (widgets.VBox([head, graph]), head, graph)
            _, head, graph = self.items[c.name]
            match = f" match <code>{_esc(str(c.match))}</code>" if c.match else ""
            head.value = (f"<b>{_esc(c.name)}</b>{match} · share {weights[c.name]:.3g} · "
                          f"{npaths.get(c.name, 0)} service path(s)")
            G.sync_graph(graph, *G.chain_elements(c, compiled.catalog))
        keep = {c.name for c in chains[:MAX_GRAPHS]}
        for name in [n for n in self.items if n not in keep]:
            box, head, graph = self.items.pop(name)
            for w in (*graph.graph.nodes, *graph.graph.edges, graph.graph, graph, head, box):
                w.close()
        self.graphs = [self.items[n][2] for n in self.items]
        self.note.value = (_EMPTY if not chains else
                           _note("Click an NF for its details.")
                           + _more(len(chains), MAX_GRAPHS, "chains"))
        self.box.children = (self.note, *(self.items[c.name][0] for c in chains[:MAX_GRAPHS]),
                             self.details)


class _IrPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.head, self.details = widgets.HTML(), widgets.HTML()
        self.graph = G.graph_widget(height=280, on_click=self._click)
        self.graphs = [self.graph]
        self.catalog: NFCatalog | None = None
        self.box.children = (self.head, self.graph, self.details)

    def _click(self, data: dict) -> None:
        if self.catalog is not None:
            self.details.value = _nf_details(self.catalog, data)

    def update(self, compiled: CompiledChains, codes: Codes) -> None:
        self.catalog, m = compiled.catalog, compiled.merge
        if m is None:
            self.head.value = _note("The merge pass did not run.")
            G.sync_graph(self.graph, [], [])
            return
        legend = "".join(_chip(f"{k}{'+' if k == len(G.SHARE_COLORS) else ''} chain"
                               f"{'s' if k > 1 else ''}", G.share_color(k),
                               ink="#fff" if k >= 4 else "#111")
                         for k in range(1, len(G.SHARE_COLORS) + 1))
        self.head.value = (
            (_EMPTY if not len(compiled.chains) else "")
            + f"<b>P4SC merged IR</b> (LCS merge): {_esc(str(m.lcs))}; baseline "
              f"{_esc(str(m.parallel))}<br>shared by: {legend} · dashed red border: "
              f"a duplicate of an NF's tables (replica) · click a node for its chains")
        G.sync_graph(self.graph, *G.merged_elements(m, compiled.catalog))


def _pipeline_table(pr) -> str:
    cols = [("naive", pr.naive), ("MA-FSA", pr.mafsa), ("optimal", pr.optimal)]
    head = [""] + [f"{n}{' ★' if p.method == pr.chosen.method else ''}" for n, p in cols]
    rows = [
        ["order"] + [" | ".join(_esc(s) for s in p.slots) or "–" for _, p in cols],
        ["slots"] + [str(p.report.slots) for _, p in cols],
        ["duplicated slots"] + [str(p.report.duplicated_slots) for _, p in cols],
        ["weighted recirculations"] + [f"{p.report.weighted_recirculations:.4g}"
                                       for _, p in cols],
        ["worst path (passes)"] + [f"{_esc(p.report.worst_path)} ({p.report.worst_passes})"
                                   for _, p in cols],
        ["exact"] + ["yes" if p.exact else "heuristic" for _, p in cols],
    ]
    return _table(head, rows)


class _PipelinePanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.slots, self.table = widgets.HTML(), widgets.HTML()
        self.graph = G.graph_widget(height=220)
        self.graphs = [self.graph]
        self.box.children = (self.slots, self.graph, self.table)

    def update(self, compiled: CompiledChains, codes: Codes) -> None:
        pr = compiled.pipeline
        if pr is None or not len(compiled.chains):
            self.slots.value, self.table.value = _EMPTY if pr else _note("No pipeline."), ""
            G.sync_graph(self.graph, [], [])
            return
        cat = compiled.catalog
        slots = "".join(_chip(f"{i}: {nf}", G.nf_color(cat, nf)) for i, nf in enumerate(pr.slots))
        pairs = ", ".join(f"{a}&gt;{b}" for a, b in pr.pairs) or "–"
        about = _note(f"NF pairs by protocol layer: {pairs}. The MA-FSA below (FlexMesh §V) "
                      "accepts every service path.")
        self.slots.value = (f"<b>default function pipeline</b> ({pr.chosen.method}): "
                            f"{slots}{about}")
        curve = "".join(f"<br>{_esc(str(p))}" for p in pr.tradeoff)
        self.table.value = _pipeline_table(pr) + (_note("duplicated-slot trade-off:" + curve)
                                                  if curve else "")
        G.sync_graph(self.graph, *G.automaton_elements(pr, cat))


class _FsmPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: Codes) -> str:
        plan, cat = compiled.fsm, compiled.catalog
        if plan is None:
            return _note("The fsm pass did not run.")
        w = plan.widths
        out = [f"<b>token</b>: path id {w.path_id} bits, state {w.state}, bitmap {w.bitmap}, "
               f"counter {w.counter} · slot <i>i</i> is bitmap bit <i>i</i>"]
        head = ["pass", "bitmap"] + [f"{i}: {_esc(nf)}" for i, nf in enumerate(plan.slots)]
        for f in plan.paths[:MAX_ROWS // 4]:
            rows = []
            for s in f.states:
                cells = []
                for i, nf in enumerate(plan.slots):
                    run = [n for n, (ps, slot) in zip(f.path.nodes, f.placement)
                           if ps == s.state and slot == i]
                    cells.append(_chip(", ".join(run), G.nf_color(cat, nf)) if run else "")
                rows.append([f"s{s.state}" + (f" (counter {s.counter})" if s.counter else ""),
                             f"<code>{bin(s.bitmap)}</code>", *cells])
            rew = [e for e in plan.rewinder if e.path == f.path.id]
            br = [e for e in plan.branches if e.path == f.path.id]
            entries = "".join(f"<br><code>{_esc(str(e))}</code>" for e in rew + br)
            out.append(f"<br><b>{_esc(f.path.id)}</b> #{f.num} · weight {f.path.weight:.3g} · "
                       f"{f.passes} pass{'es' if f.passes > 1 else ''} · "
                       f"{_esc(f.path.describe().partition(': ')[2])}"
                       + _table(head, rows) + _note("rewinder / branch entries:" + entries))
        out.append(_more(len(plan.paths), MAX_ROWS // 4, "service paths"))
        return "".join(out)


class _PlacementPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: Codes) -> str:
        pl, cat = compiled.placement, compiled.catalog
        if pl is None:
            return _note(f"The placement pass (Dejavu: NFs on the pipes of a multi-pipe switch) "
                         f"runs for <code>tna</code>; this lab compiles for "
                         f"<code>{_esc(compiled.arch)}</code>. Use <code>%%chain --arch tna</code>"
                         f" or <code>Lab(placement=True)</code>.")
        cells = {(p.pipe, p.gress): nfs for p, nfs in pl.best.pipelets}
        grid = _table(["pipe", "ingress", "egress"],
                      [[str(p)] + [_chips(cells.get((p, g), ()), cat)
                                   for g in ("ingress", "egress")]
                       for p in sorted({p for p, _ in cells})])
        naive = dict(pl.naive.recirculations)
        rows = [[_esc(pid), str(k), str(naive.get(pid, "")), f"{tp:.2f} T"]
                for (pid, k), (_, tp) in list(zip(pl.best.recirculations,
                                                  pl.best.throughput))[:MAX_ROWS]]
        return (f"<b>placement</b> on {pl.pipes} pipes × {pl.stages} stages (external ports "
                f"{pl.external_share:.0%} of the bandwidth): "
                f"{pl.best.weighted_recirculations:.4g} weighted recirculations "
                f"(naive {pl.naive.weighted_recirculations:.4g})" + grid
                + _table(["service path", "recirculations", "naive", "throughput (of T)"], rows)
                + _more(len(pl.best.recirculations), MAX_ROWS, "paths"))


class _OffloadPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: Codes) -> str:
        off, cat = compiled.offload, compiled.catalog
        if off is None:
            return _note("The offload pass did not run.")
        rows = [[_esc(s.path), _chips(s.pre_server, cat), _chips(s.server, cat),
                 _chips(s.post_server, cat), _chips(s.on_server, cat)]
                for s in off.paths[:MAX_ROWS]]
        per_chain = "; ".join(f"{_esc(c)}: {_esc(', '.join(nfs)) or '–'}"
                              for c, nfs in off.chain_server)
        return ("<b>P4SFC offload</b>: dashed border = not offloadable"
                + _table(["service path", "pre-server (switch)", "server",
                          "post-server (switch)", "runs on a server"], rows)
                + _more(len(off.paths), MAX_ROWS, "paths")
                + _note(f"NF instances on a server, per chain: {per_chain}"))


class _P4Panel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.codes = {a: CodeView(filename=f"sfclab_{a}.p4") for a in ARCHS}
        self.tabs = widgets.Tab(children=list(self.codes.values()), titles=list(ARCHS))
        self.box.children = (self.tabs,)

    def update(self, compiled: CompiledChains, codes: Codes) -> None:
        for arch, view in self.codes.items():
            gen = codes.get(arch)
            if gen is None:
                view.set_error(f"no program generated for {arch}")
            elif isinstance(gen, SfclabError):
                view.set_error(f"{type(gen).__name__}: {gen}")
            else:
                text = gen.program.text
                view.set_code(text, title=f"{arch}: {text.count(chr(10)) + 1} lines, "
                                          f"{len(gen.entries)} table entries")


class _EntriesPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: Codes) -> str:
        gen = codes.get(compiled.arch)
        if gen is None:
            return _note("No program generated.")
        if isinstance(gen, SfclabError):
            return _note(_esc(f"{type(gen).__name__}: {gen}"))
        out = [f"<b>{len(gen.entries)} table entries</b> for {_esc(gen.arch)}, by group"]
        for group, entries in gen.groups().items():
            rows = [[_esc(e.table), "<br>".join(f"{_esc(k)} = {_esc(str(m))}" for k, m in e.match)
                     or "*", _esc(e.action.rpartition(".")[2]),
                     _esc(", ".join(f"{k}={v}" for k, v in e.params)),
                     "" if e.priority is None else str(e.priority), _esc(e.note)]
                    for e in entries[:MAX_ROWS]]
            out.append(f"<details open><summary><b>{_esc(group)}</b> ({len(entries)})</summary>"
                       + _table(["table", "match", "action", "params", "priority", "note"], rows)
                       + _more(len(entries), MAX_ROWS, "entries") + "</details>")
        return "".join(out)


_PANELS: dict[str, type[_Panel]] = {
    "chains": _ChainsPanel, "ir": _IrPanel, "pipeline": _PipelinePanel, "fsm": _FsmPanel,
    "placement": _PlacementPanel, "offload": _OffloadPanel, "p4": _P4Panel,
    "entries": _EntriesPanel,
}


# -- the view -------------------------------------------------------------------------------------

class LiveView(widgets.Tab):
    """Tabs showing what the compiler did; :meth:`update` refreshes them in place.

    ``LiveView(compiled, generated, show=("chains", "p4"))``; *generated* is a
    :class:`~sfclab.codegen.Generated` or a mapping architecture → Generated (or
    the :class:`~sfclab.errors.SfclabError` generating it raised).
    """

    show = t.Tuple(help="The tabs shown, in order (names from TABS).")
    summary = t.Unicode("", help="The compiler's summary of what is shown (the text/plain "
                        "form of the view).")

    def __init__(self, compiled: CompiledChains | None = None,
                 generated: Generated | Codes | None = None, *,
                 show: str | Iterable[str] | None = None, **kwargs: Any) -> None:
        names = normalize_show(show) if show is not None else TABS
        self.panels: dict[str, _Panel] = {n: _PANELS[n]() for n in names}
        super().__init__(children=[p.box for p in self.panels.values()], titles=list(names),
                         show=names, **kwargs)
        self.observe(self._tab_selected, "selected_index")
        if compiled is not None:
            self.update(compiled, generated)

    @property
    def needs_code(self) -> bool:
        """Whether a tab shows generated code (p4, entries)."""
        return bool({"p4", "entries"} & set(self.show))

    def update(self, compiled: CompiledChains, generated: Generated | Codes | None = None
               ) -> None:
        """Show *compiled* (and *generated*) in every tab, reusing the widgets."""
        if generated is None:
            codes: Codes = {}
        elif isinstance(generated, Mapping):
            codes = generated
        else:
            codes = {generated.arch: generated}
        for panel in self.panels.values():
            panel.update(compiled, codes)
        self.summary = compiled.summary()

    def _tab_selected(self, change: dict) -> None:
        if change["new"] is not None:
            list(self.panels.values())[change["new"]].shown()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None and self.summary:
            bundle["text/plain"] = self.summary
        return bundle

    def __repr__(self) -> str:
        return f"<LiveView {', '.join(self.show)}>"
