"""The live view: what the compiler did with the chains, one tab per pass.

:class:`LiveView` is an ipywidgets ``Tab``.  Its tabs (:data:`TABS`):

========== ===================================================================
chains     one graph per chain, edges labelled with their conditions
ir         P4SC's merged IR: fill by how many chains share a node, duplicates
           (replica tables) with a dashed red border
pipeline   the default pipeline's slots; the naive / MA-FSA / optimal pipelines
           drawn one above the other with the pass each path runs each slot in;
           their figures side by side; FlexMesh's MA-FSA automaton
fsm        per service path: its passes drawn over the slots (NFs numbered in
           run order, bitmaps, recirculations), rewinder and branch entries
placement  Dejavu's NFs on pipes × ingress/egress, a chosen path's route (its
           recirculations in red), the throughput model with the paths marked
offload    P4SFC's pre-server / server / post-server split per path
topology   the network (``%%topology``): where each NF runs, a chain's route,
           the network placement table (:mod:`.topology_view`)
p4         the generated program for v1model and TNA (highlighted; copy, download)
entries    the table entries, one table per group; after a push, what the
           switch session installed beyond them (flood's entries, multicast
           groups) and its notes
========== ===================================================================

:meth:`LiveView.update` refreshes the tab on show at once and the others when
they are shown: an edit costs what the visible tab needs, and the P4 program
and its entries are generated only when their tab is opened (the generated
code comes from a callable, :data:`CodeSource`, which the Lab caches).  Tabs
are updated in place: the same widgets get new content, and a graph (an SVG
drawn in Python, :mod:`.graphs`) is sent only when its drawing changed.
Outside a widget front end (nbconvert, a terminal) the view shows as the
compiler's summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Union

import ipywidgets as widgets
import traitlets as t

from ..compiler import ARCHS, CompiledChains
from ..draw.switch import passes_svg, pipelines_svg, placement_svg, throughput_figure
from ..errors import SfclabError, did_you_mean
from ..ir.values import ValueKinds
from ..nfinfo import NFCatalog
from . import graphs as G
from .codeview import CodeView, highlight_p4
from .markup import EMPTY, chip, chips, esc, more, note, picture, table
from .runtime_views import Installed, installed_html
from .topology_view import TopologyPanel

if TYPE_CHECKING:
    from ..codegen import Generated

__all__ = ["TABS", "LiveView", "CodeView", "CodeSource", "InstalledSource", "highlight_p4",
           "normalize_show"]

#: Tab names, in display order.
TABS = ("chains", "ir", "pipeline", "fsm", "placement", "offload", "topology", "p4",
        "entries")
#: Above these, a tab shows the first ones and says how many it left out.
MAX_GRAPHS, MAX_ROWS = 24, 200
#: Architecture -> the generated program (or the error generating it raised; None:
#: nothing generated), called when a tab that shows code is refreshed.
CodeSource = Callable[[str], Union["Generated", SfclabError, None]]
Codes = Union[CodeSource, Mapping[str, Union["Generated", SfclabError]], "Generated", None]
#: What the switch holds beyond the generated entries (after a push), for the entries tab.
InstalledSource = Callable[[], Installed]


def code_source(generated: Codes) -> CodeSource:
    """A :data:`CodeSource` from a callable, a mapping arch -> Generated, one Generated,
    or None (nothing generated)."""
    if generated is None:
        return lambda arch: None
    if isinstance(generated, Mapping):
        return generated.get
    if callable(generated):
        return generated
    return lambda arch: generated if arch == generated.arch else None


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


# -- the tabs -----------------------------------------------------------------------------------

class _Panel:
    """One tab: a VBox whose children are updated in place, when it is shown."""

    def __init__(self) -> None:
        self.box = widgets.VBox()
        #: The widgets the tab shows (in :attr:`box` while the tab is on show).
        self.content: tuple[widgets.Widget, ...] = ()
        #: The content is older than the view's compiled chains (refresh when shown).
        self.stale = True

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:  # pragma: no cover
        raise NotImplementedError


class _HtmlPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.html = widgets.HTML()
        self.content = (self.html,)

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        body = self.render(compiled, codes) if len(compiled.chains) else EMPTY
        self.html.value = f'<div style="line-height:1.4">{body}</div>'

    def render(self, compiled: CompiledChains, codes: CodeSource) -> str:  # pragma: no cover
        raise NotImplementedError


def _nf_details(catalog: NFCatalog, data: dict) -> str:
    """What a click on an NF node shows."""
    nf = data.get("nf") or ""
    info = catalog.get(nf) if nf else None
    if info is None:
        return f"<b>{esc(str(data.get('id', '')))}</b>"
    fields = ", ".join(f"{n} (bit&lt;{w}&gt;)" for n, w in info.fields.items()) or "none"
    extra = "".join(f"; {k} {esc(', '.join(map(str, data[k])))}"
                    for k in ("chains", "paths") if data.get(k))
    return (f"<b>{esc(str(data['id']))}</b>: {esc(info.name)}, layer {info.layer}, "
            f"{info.offload} offloadable, {info.tables} tables, ~{info.stages} stages; "
            f"fields: {fields}{extra}<br>{esc(info.description)}")


class _ChainsPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.note, self.details = widgets.HTML(), widgets.HTML()
        self.graphs = G.Graphs()
        self.graphs.on_click(self._click)
        self.catalog: NFCatalog | None = None
        self.content = (self.note, self.graphs, self.details)

    def _click(self, data: dict) -> None:
        if self.catalog is not None:
            self.details.value = _nf_details(self.catalog, data)

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        self.catalog = compiled.catalog
        chains = list(compiled.chains)
        npaths: dict[str, int] = {}
        for p in compiled.paths:
            npaths[p.chain] = npaths.get(p.chain, 0) + 1
        weights = compiled.chains.weights()
        items = []
        for c in chains[:MAX_GRAPHS]:
            match = f" match <code>{esc(str(c.match))}</code>" if c.match else ""
            head = (f"<b>{esc(c.name)}</b>{match} · share {weights[c.name]:.3g} · "
                    f"{npaths.get(c.name, 0)} service path(s)")
            items.append((c.name, head, *G.chain_elements(c, compiled.catalog)))
        self.graphs.set(items)
        self.note.value = (EMPTY if not chains else
                           note("Click an NF for its details.")
                           + more(len(chains), MAX_GRAPHS, "chains"))


class _IrPanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.head, self.details = widgets.HTML(), widgets.HTML()
        self.graph = G.graph_widget(on_click=self._click)
        self.catalog: NFCatalog | None = None
        self.content = (self.head, self.graph, self.details)

    def _click(self, data: dict) -> None:
        if self.catalog is not None:
            self.details.value = _nf_details(self.catalog, data)

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        self.catalog, m = compiled.catalog, compiled.merge
        if m is None:
            self.head.value = note("The merge pass did not run.")
            self.graph.show([], [])
            return
        legend = "".join(chip(f"{k}{'+' if k == len(G.SHARE_COLORS) else ''} chain"
                               f"{'s' if k > 1 else ''}", G.share_color(k),
                               ink="#fff" if k >= 4 else "#111")
                         for k in range(1, len(G.SHARE_COLORS) + 1))
        self.head.value = (
            (EMPTY if not len(compiled.chains) else "")
            + f"<b>P4SC merged IR</b> (LCS merge): {esc(str(m.lcs))}; baseline "
              f"{esc(str(m.parallel))}<br>shared by: {legend} · dashed red border: "
              f"a duplicate of an NF's tables (replica) · click a node for its chains")
        self.graph.show(*G.merged_elements(m, compiled.catalog), title="merged IR")


def _pipeline_table(pr) -> str:
    cols = [("naive", pr.naive), ("MA-FSA", pr.mafsa), ("optimal", pr.optimal)]
    head = [""] + [f"{n}{' ★' if p.method == pr.chosen.method else ''}" for n, p in cols]
    rows = [
        ["order"] + [" | ".join(esc(s) for s in p.slots) or "–" for _, p in cols],
        ["slots"] + [str(p.report.slots) for _, p in cols],
        ["duplicated slots"] + [str(p.report.duplicated_slots) for _, p in cols],
        ["weighted recirculations"] + [f"{p.report.weighted_recirculations:.4g}"
                                       for _, p in cols],
        ["worst path (passes)"] + [f"{esc(p.report.worst_path)} ({p.report.worst_passes})"
                                   for _, p in cols],
        ["exact"] + ["yes" if p.exact else "heuristic" for _, p in cols],
    ]
    return table(head, rows)


class _PipelinePanel(_Panel):
    def __init__(self) -> None:
        super().__init__()
        self.slots, self.pictures, self.table = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.graph = G.graph_widget()
        self.content = (self.slots, self.pictures, self.table, self.graph)

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        pr = compiled.pipeline
        if pr is None or not len(compiled.chains):
            self.slots.value, self.table.value = EMPTY if pr else note("No pipeline."), ""
            self.pictures.value = ""
            self.graph.show([], [])
            return
        cat = compiled.catalog
        slots = "".join(chip(f"{i}: {nf}", G.nf_color(cat, nf)) for i, nf in enumerate(pr.slots))
        pairs = ", ".join(f"{a}&gt;{b}" for a, b in pr.pairs) or "–"
        about = note(f"NF pairs by protocol layer: {pairs}. The MA-FSA at the bottom "
                      "(FlexMesh §V) accepts every service path.")
        self.slots.value = (f"<b>default function pipeline</b> ({pr.chosen.method}): "
                            f"{slots}{about}")
        self.pictures.value = picture(pipelines_svg(pr, compiled.paths, cat))
        curve = "".join(f"<br>{esc(str(p))}" for p in pr.tradeoff)
        self.table.value = _pipeline_table(pr) + (note("duplicated-slot trade-off:" + curve)
                                                  if curve else "")
        self.graph.show(*G.automaton_elements(pr, cat), title="MA-FSA")


class _FsmPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: CodeSource) -> str:
        plan, cat = compiled.fsm, compiled.catalog
        if plan is None:
            return note("The fsm pass did not run.")
        w = plan.widths
        out = [f"<b>token</b>: path id {w.path_id} bits, state {w.state}, bitmap {w.bitmap}, "
               f"counter {w.counter} · slot <i>i</i> is bitmap bit <i>i</i>"]
        out.append(note("Each row is a pass through the pipeline's slots; the NFs a path runs "
                        "are numbered in run order; a red arrow is a recirculation."))
        for f in plan.paths[:MAX_ROWS // 4]:
            rew = [e for e in plan.rewinder if e.path == f.path.id]
            br = [e for e in plan.branches if e.path == f.path.id]
            entries = "".join(f"<br><code>{esc(str(e))}</code>" for e in rew + br)
            out.append(f"<div class='sfc-fsm-path' style='margin-top:10px'><b>{esc(f.path.id)}"
                       f"</b> #{f.num} · weight {f.path.weight:.3g} · "
                       f"{f.passes} pass{'es' if f.passes > 1 else ''} · "
                       f"{esc(f.path.describe().partition(': ')[2])}"
                       + picture(passes_svg(plan, f, cat))
                       + note("rewinder / branch entries:" + entries) + "</div>")
        out.append(more(len(plan.paths), MAX_ROWS // 4, "service paths"))
        return "".join(out)


class _PlacementPanel(_Panel):
    """The placement drawn on the pipes with one path's route (chosen in a menu: the
    most recirculated first), the throughput model with the paths marked, the numbers."""

    def __init__(self) -> None:
        super().__init__()
        self.head, self.picture, self.rest = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.route = widgets.Dropdown(description="route of", options=[],
                                      layout=widgets.Layout(width="340px"))
        self.route.observe(lambda _: self._draw(), "value")
        self.compiled: CompiledChains | None = None
        self.ran_html = widgets.HTML()
        #: What packets did on a TNA model, per path (``Lab.ran_paths``), or None.
        self.ran: Callable[[], Mapping[str, Any]] | None = None
        self._ran: Mapping[str, Any] = {}
        self.content = (self.head, self.route, self.picture, self.ran_html, self.rest)

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        pl, self.compiled = compiled.placement, None
        self._ran = self.ran() if self.ran is not None else {}
        if pl is None or not len(compiled.chains):
            self.head.value = EMPTY if pl else note(
                f"The placement pass (Dejavu: NFs on the pipes of a multi-pipe switch) runs "
                f"for <code>tna</code>; this lab compiles for <code>{esc(compiled.arch)}</code>."
                f" Use <code>%%chain --arch tna</code> or <code>Lab(placement=True)</code>.")
            self.picture.value = self.rest.value = self.ran_html.value = ""
            self.route.layout.display = "none"
            return
        self.head.value = (
            f"<b>placement</b> on {pl.pipes} pipes × {pl.stages} stages"
            + (f", less sfclab's core ({pl.reserved.ingress} of each ingress, "
               f"{pl.reserved.egress} of each egress)" if pl.reserved.ingress else "")
            + f" (external ports "
            f"{pl.external_share:.0%} of the bandwidth): {pl.best.weighted_recirculations:.4g}"
            f" weighted recirculations (naive {pl.naive.weighted_recirculations:.4g}) · "
            f"numbers: the route's NFs in order · ↻ red: a recirculation")
        rec = dict(pl.best.recirculations)
        ids = sorted((p.id for p in compiled.paths if p.nfs),
                     key=lambda i: (-rec.get(i, 0), i))
        self.route.layout.display = "" if ids else "none"
        keep = self.route.value if self.route.value in ids else (ids[0] if ids else None)
        if list(self.route.options) != ids:
            self.route.options = ids                 # (no drawing yet: compiled is None)
        if self.route.value != keep:
            self.route.value = keep
        self.compiled = compiled
        self._draw()
        naive = dict(pl.naive.recirculations)
        ran = self._ran
        rows = [[esc(pid), str(k), str(naive.get(pid, "")), f"{tp:.2f} T"]
                + ([_ran_cell(ran.get(pid), k)] if ran else [])
                for (pid, k), (_, tp) in list(zip(pl.best.recirculations,
                                                  pl.best.throughput))[:MAX_ROWS]]
        self.rest.value = (picture(throughput_figure(pl).svg)
                           + table(["service path", "recirculations", "naive",
                                    "throughput (of T)"]
                                   + (["ran on the TNA model: recirculations"] if ran else []),
                                   rows)
                           + more(len(pl.best.recirculations), MAX_ROWS, "paths"))

    def _draw(self) -> None:
        c = self.compiled
        if c is None or c.placement is None:
            return
        path = next((p for p in c.paths if p.id == self.route.value), None)
        self.picture.value = picture(placement_svg(
            c.placement.best, c.catalog, stages=c.placement.stages, path=path,
            entry_pipe=c.options.entry_pipe, exit_pipe=c.options.exit_pipe,
            reserved=c.placement.reserved))
        self.ran_html.value = _ran_line(self.route.value, self._ran,
                                        dict(c.placement.best.recirculations))


def _ran_cell(ran: Any, planned: int) -> str:
    """The recirculations the packets of a path made on the TNA model, red where they
    differ from the plan's."""
    if ran is None:
        return "<span style='color:var(--jp-ui-font-color2,#666)'>no packets</span>"
    text = esc(ran.recirculations_text())
    off = set(ran.recirculations) != {planned}
    return f"<span style='color:#c62828'>{text}</span>" if off else text


def _ran_line(pid: str | None, ran: Mapping[str, Any], planned: Mapping[str, int]) -> str:
    """Under the drawing: the route the chosen path's packets took on the TNA model."""
    if not ran:
        return note("What the packets did shows here once they ran on a TNA model "
                    "(<code>Lab(arch=\"tna\")</code>, <code>%sfc send</code>).")
    r = ran.get(pid) if pid is not None else None
    if r is None:
        return note(f"no packet of {esc(pid or '')} ran on the TNA model yet")
    plan = planned.get(pid, 0)
    went = r.recirculations_text()
    same = "as planned" if set(r.recirculations) == {plan} else f"the plan: {plan}"
    return (f"<div style='font-size:12px;margin:4px 0'><b>what {r.packets} packet(s) of "
            f"{esc(pid)} did on the TNA model</b>: {esc(went)} recirculation(s), {same}"
            f"<br><code>{esc(r.route_text())}</code></div>")


class _OffloadPanel(_HtmlPanel):
    def render(self, compiled: CompiledChains, codes: CodeSource) -> str:
        off, cat = compiled.offload, compiled.catalog
        if off is None:
            return note("The offload pass did not run.")
        rows = []
        for s in off.paths[:MAX_ROWS]:
            half = {n: " ◐" for n in s.partial}
            rows.append([esc(s.path), chips(s.pre_server, cat, marks=half),
                         chips(s.server, cat), chips(s.post_server, cat, marks=half)])
        per_chain = "; ".join(f"{esc(c)}: {esc(', '.join(nfs)) or '–'}"
                              for c, nfs in off.chain_server)
        return ("<b>P4SFC offload</b>: where each NF of a service path runs, each NF once. "
                "Dashed border: not offloadable; ◐ partially offloaded: the switch runs it, "
                "a process on a server keeps its state (P4SFC §III-D)"
                + table(["service path", "pre-server (switch)", "server",
                         "post-server (switch)"], rows)
                + more(len(off.paths), MAX_ROWS, "paths")
                + note(f"Processes started on servers, per chain (server NFs and the state "
                       f"of ◐ NFs): {per_chain}"))


class _P4Panel(_Panel):
    """Both architectures' programs; each generated when its inner tab is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.codes = {a: CodeView(filename=f"sfclab_{a}.p4") for a in ARCHS}
        self.tabs = widgets.Tab(children=list(self.codes.values()), titles=list(ARCHS))
        self.content = (self.tabs,)
        self._source: CodeSource = code_source(None)
        self._pending: set[str] = set()
        self.tabs.observe(lambda ch: self._fill(ch["new"]), "selected_index")

    def update(self, compiled: CompiledChains, codes: CodeSource) -> None:
        self._source, self._pending = codes, set(ARCHS)
        self._fill(self.tabs.selected_index)

    def _fill(self, index: int | None) -> None:
        arch = ARCHS[index or 0]
        if arch not in self._pending:
            return
        self._pending.discard(arch)
        view, gen = self.codes[arch], self._source(arch)
        if gen is None:
            view.set_error(f"no program generated for {arch}")
        elif isinstance(gen, SfclabError):
            view.set_error(f"{type(gen).__name__}: {gen}")
        else:
            text = gen.program.text
            view.set_code(text, title=f"{arch}: {text.count(chr(10)) + 1} lines, "
                                      f"{len(gen.entries)} table entries")


class _EntriesPanel(_HtmlPanel):
    #: What the switch holds beyond the generated entries (set by the view).
    installed: InstalledSource = staticmethod(Installed)

    def render(self, compiled: CompiledChains, codes: CodeSource) -> str:
        gen = codes(compiled.arch)
        if gen is None:
            return note("No program generated.")
        if isinstance(gen, SfclabError):
            return note(esc(f"{type(gen).__name__}: {gen}"))
        kinds = ValueKinds.of_program(gen.program.program)
        out = [f"<b>{len(gen.entries)} table entries</b> for {esc(gen.arch)}, by group; "
               f"addresses, MACs and ports as written, prefixes as /n"]
        for group, entries in gen.groups().items():
            rows = [[esc(e.table),
                     "<br>".join(f"{esc(k)} = {esc(v)}" for k, v in e.match_text(kinds)) or "*",
                     esc(e.action.rpartition(".")[2]), esc(kinds.args(e.action, e.params)),
                     "" if e.priority is None else str(e.priority), esc(e.note)]
                    for e in entries[:MAX_ROWS]]
            out.append(f"<details open><summary><b>{esc(group)}</b> ({len(entries)})</summary>"
                       + table(["table", "match", "action", "params", "priority", "note"], rows)
                       + more(len(entries), MAX_ROWS, "entries") + "</details>")
        extra = self.installed()
        if extra:
            out.append(f"<div class='sfc-installed' style='margin-top:10px'>"
                       f"{installed_html(extra, kinds)}</div>")
        return "".join(out)


_PANELS: dict[str, type[_Panel]] = {
    "chains": _ChainsPanel, "ir": _IrPanel, "pipeline": _PipelinePanel, "fsm": _FsmPanel,
    "placement": _PlacementPanel, "offload": _OffloadPanel, "topology": TopologyPanel,
    "p4": _P4Panel, "entries": _EntriesPanel,
}


# -- the view -------------------------------------------------------------------------------------

class LiveView(widgets.Tab):
    """Tabs showing what the compiler did; :meth:`update` refreshes them in place.

    ``LiveView(compiled, generated, show=("chains", "p4"))``; *generated* is a
    :data:`CodeSource` (called when a code tab is shown), a mapping architecture →
    Generated (or the :class:`~sfclab.errors.SfclabError` generating it raised), or
    one :class:`~sfclab.codegen.Generated`; *installed* (an :data:`InstalledSource`)
    says what the switch holds beyond the generated entries, for the entries tab
    (:meth:`pushed` refreshes it).  Only the tab on show is refreshed at once; the
    others when they are shown (or all by :meth:`refresh`).
    """

    show = t.Tuple(help="The tabs shown, in order (names from TABS).")
    summary = t.Unicode("", help="The compiler's summary of what is shown (the text/plain "
                        "form of the view).")

    def __init__(self, compiled: CompiledChains | None = None, generated: Codes = None, *,
                 show: str | Iterable[str] | None = None,
                 installed: InstalledSource | None = None, **kwargs: Any) -> None:
        names = normalize_show(show) if show is not None else TABS
        self.panels: dict[str, _Panel] = {n: _PANELS[n]() for n in names}
        if installed is not None and "entries" in self.panels:
            self.panels["entries"].installed = installed
        self._compiled: CompiledChains | None = None
        self._codes: CodeSource = code_source(None)
        super().__init__(children=[p.box for p in self.panels.values()], titles=list(names),
                         show=names, **kwargs)
        self.observe(self._tab_selected, "selected_index")
        self._mount(self.selected_index or 0)
        if compiled is not None:
            self.update(compiled, generated)

    def update(self, compiled: CompiledChains, generated: Codes = None, *,
               network: Callable[[], Any] | None = None) -> None:
        """Show *compiled* (and the code *generated* gives; *network*: the Lab's network
        state, for the topology tab): the tab on show now, the others when shown."""
        self._compiled, self._codes = compiled, code_source(generated)
        for panel in self.panels.values():
            panel.stale = True
            panel.network = network
        self._refresh(self.selected_index or 0)
        self._mount(self.selected_index or 0)
        self.summary = (self.panels["topology"].text() if self.show == ("topology",)
                        else compiled.summary())

    def pushed(self) -> None:
        """The switch changed (a push or an update): the entries tab shows it (now if on
        show, else when shown)."""
        names = list(self.panels)
        if "entries" in self.panels:
            self.panels["entries"].stale = True
            if names.index("entries") == (self.selected_index or 0):
                self._refresh(names.index("entries"))

    def follow_packets(self, ran: Callable[[], Mapping[str, Any]]) -> None:
        """Show what packets did beside the plan (the placement tab): *ran* gives, per
        service path, what the packets sent on a TNA model did (``Lab.ran_paths``)."""
        if "placement" in self.panels:
            self.panels["placement"].ran = ran
            self.panels["placement"].stale = True

    def sent(self) -> None:
        """Packets ran: the placement tab shows what they did (now if on show, else when
        shown)."""
        names = list(self.panels)
        if "placement" in self.panels:
            self.panels["placement"].stale = True
            if names.index("placement") == (self.selected_index or 0):
                self._refresh(names.index("placement"))

    def refresh(self, *names: str) -> None:
        """Bring the tabs *names* (default: every tab) up to date now, shown or not."""
        for k, name in enumerate(self.panels):
            if not names or name in names:
                self._refresh(k)

    def _refresh(self, index: int) -> None:
        panel = list(self.panels.values())[index]
        if panel.stale and self._compiled is not None:
            panel.update(self._compiled, self._codes)
            panel.stale = False

    def _mount(self, index: int) -> None:
        """Only the tab on show holds its widgets: a browser showing the view again (a
        re-run cell) renders that tab's widgets, not every tab's."""
        for k, panel in enumerate(self.panels.values()):
            want = panel.content if k == index else ()
            if panel.box.children != want:
                panel.box.children = want

    def _tab_selected(self, change: dict) -> None:
        if change["new"] is not None:
            self._refresh(change["new"])
            self._mount(change["new"])

    def _repr_mimebundle_(self, **kwargs: Any) -> dict | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None and self.summary:
            bundle["text/plain"] = self.summary
        return bundle

    def __repr__(self) -> str:
        return f"<LiveView {', '.join(self.show)}>"
