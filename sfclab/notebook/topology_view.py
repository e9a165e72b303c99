"""The live view's topology tab: the network, where every NF runs, the placement table.

:class:`TopologyPanel` is one tab of :class:`~sfclab.notebook.views.LiveView`
(it reads the Lab's :class:`~sfclab.api.labnet.NetworkState` through the view):

* the topology drawn by :func:`sfclab.draw.topology.topology_svg` — switches with
  the NFs placed on them, hosts, servers, links (ports on hover) — laid out as
  the network reads (a fat tree as core / aggregation / edge / hosts);
* a picker that highlights a chain's route, or one service path's, with the
  NFs it runs on each switch or server;
* the placement table: the exact solver (HiGHS) and the heuristic side by side
  (status, cost and its parts, time, gap to the best bound), where each chain
  runs, and what the NFs use of each switch's stages and tables — or, when no
  placement fits, why.

Without a topology the tab says how to give one (``%%topology``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..errors import SfclabError
from ..draw.topology import Highlight, chain_highlight, topology_svg
from .markup import bar, chip, esc, note, table

__all__ = ["TopologyPanel", "placement_html", "drawing_html", "NO_TOPOLOGY"]

NO_TOPOLOGY = note("No topology: the chains run on one switch. Write a network in a "
                   "<code>%%topology</code> cell (e.g. <code>use fat_tree(4)</code>, or "
                   "<code>switch s1, s2</code> … <code>link s1 -- s2</code>) to place them "
                   "across its switches.")
LEGEND = ("boxes: switches, with a chip per NF that runs there (colour: protocol layer; "
          "×2: two chains use it); "
          "dashed orange: servers (NFs a switch cannot run); grey: hosts. Hover a link for "
          "its ports, a chip for the chains using it.")


def drawing_html(svg: str) -> str:
    """An SVG drawing in a box that scrolls sideways rather than shrink the text."""
    return (f"<div class='sfc-topology' style='overflow-x:auto;max-width:100%'>"
            f"<div style='min-width:min(100%,{_width(svg)}px)'>{svg}</div></div>")


def _width(svg: str) -> int:
    head = svg[:300]
    k = head.find('width="')
    return int(float(head[k + 7:head.index('"', k + 7)])) if k >= 0 else 600


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _solvers(pl: Any) -> str:
    head = ["solver", "status", "cost", "extra hops", "recirculations", "server detours",
            "time", "gap"]
    rows = []
    for s in (pl.exact, pl.heuristic):
        if s is None:
            continue
        star = " ★" if s is pl.chosen else ""
        name = {"exact": "exact (ILP, HiGHS)", "heuristic": "heuristic"}.get(s.solver, s.solver)
        if s.cost is None:
            rows.append([f"{esc(name)}{star}", esc(s.status), "–", "", "", "", _ms(s.seconds),
                         esc(s.reason)])
            continue
        g = pl.gap(s)
        c = s.cost
        rows.append([f"<b>{esc(name)}</b>{star}", esc(s.status), f"{c.total:.4g}",
                     f"{c.hops:.4g}", f"{c.recirculations:.4g}", f"{c.server_detours:.4g}",
                     _ms(s.seconds), "–" if g is None else f"{100 * g:.2f} %"])
    w = pl.problem.weights
    return (table(head, rows)
            + note(f"cost = {w.hops:g} × extra hops + {w.recirculations:g} × recirculations + "
                   f"{w.server:g} × server detours, each weighted by its path's share of the "
                   f"traffic; gap: how far above the best lower bound the exact solver proved "
                   f"(0 %: optimal); ★ chosen (the cheaper; the heuristic on a tie)."))


def _route_html(pl: Any, c: Any, catalog: Any) -> str:
    """A chain's route, each switch with its NFs in the order they run; a detour to a
    server shown where it happens (``c1 ⇄ srv1 [ips] ⇄ c1 [l3fwd]``)."""
    cp = pl.chains[c.name]
    order = {i: k for k, i in enumerate(c.instances)}
    steps = []
    for q, s in enumerate(cp.route):
        here = sorted(((i, n) for i, p, n in cp.where if p == q), key=lambda x: order[x[0]])
        out, at = f"<code>{esc(s)}</code>", s
        for i, n in here:
            if n != at:
                out += f" ⇄ <code>{esc(n)}</code>"
                at = n
            out += chip(i, _color(catalog, c.nf[i]), dashed=n != s)
        if at != s:
            out += f" ⇄ <code>{esc(s)}</code>"
        steps.append(out)
    return " → ".join(steps)


def _color(catalog: Any, nf: str) -> str:
    from ..draw.chains import nf_color

    return nf_color(catalog, nf)


def _chains(pl: Any, catalog: Any) -> str:
    rows = []
    for c in pl.problem.chains:
        ends = f"{esc(c.ingress)} → {esc(c.egress)}"
        if c.defaulted:
            ends += f" <i>(default {' and '.join(c.defaulted)})</i>"
        rows.append([f"<b>{esc(c.name)}</b>", ends, _route_html(pl, c, catalog)])
    return table(["chain", "from → to", "route: the NFs on each switch (⇄ a server)"], rows)


def _usage(pl: Any) -> str:
    rows = []
    for s, u in pl.usage().items():
        rows.append([f"<code>{esc(s)}</code>", esc(" | ".join(u.types)),
                     bar(u.stages / u.stage_budget if u.stage_budget else 1.0, "#4e79a7",
                         width=100) + f" {u.stages} / {u.stage_budget}",
                     bar(u.tables / u.table_budget if u.table_budget else 1.0, "#4e79a7",
                         width=100) + f" {u.tables} / {u.table_budget}"])
    if not rows:
        return ""
    return ("<b>switches running NFs</b>"
            + table(["switch", "NF slots (pipeline order)", "stages for NFs", "tables for NFs"],
                    rows)
            + note("Each switch also spends 2 stages and 3 tables on steering (initializer, "
                   "arrival, rewinder); the rest is what NFs may use."))


def placement_html(placement: Any, catalog: Any = None) -> str:
    """The placement table of a :class:`~sfclab.passes.netplace.NetworkPlacement`:
    both solvers, where each chain runs, what each switch spends."""
    return (f"<b>network placement</b>: {esc(placement.problem.size())}"
            + _solvers(placement) + _chains(placement, catalog) + _usage(placement))


def error_html(e: SfclabError) -> str:
    """Why nothing could be placed (or built), as a red box."""
    hint = f"<br><b>hint:</b> {esc(e.hint)}" if getattr(e, "hint", "") else ""
    return (f"<div class='sfc-error' style='background:#ffebee;border-left:3px solid #c62828;"
            f"padding:4px 8px;margin:4px 0;white-space:pre-wrap'><b>no placement</b>: "
            f"{esc(getattr(e, 'message', str(e)))}{hint}</div>")


class TopologyPanel:
    """The topology tab (a panel of the live view: ``box``, ``content``, ``stale``,
    :meth:`update`); ``network`` is set by the view: a callable giving the Lab's
    :class:`~sfclab.api.labnet.NetworkState`, or None (no topology)."""

    def __init__(self) -> None:
        self.box = widgets.VBox()
        self.stale = True
        self.network: Callable[[], Any] | None = None
        self.head, self.drawing, self.table = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.pick = widgets.Dropdown(options=[("all chains", "")], value="",
                                     description="highlight",
                                     layout=widgets.Layout(width="max-content"))
        self.pick.observe(lambda _: self._draw(), "value")
        self.content: tuple[widgets.Widget, ...] = (self.head, self.pick, self.drawing,
                                                     self.table)
        self._state: Any = None
        self._placement: Any = None
        self._error: SfclabError | None = None
        self._catalog: Any = None

    def update(self, compiled: Any, codes: Any) -> None:
        state = self.network() if self.network is not None else None
        self._state, self._catalog = state, compiled.catalog
        if state is None:
            self.head.value, self.drawing.value, self.table.value = NO_TOPOLOGY, "", ""
            self._placement = None
            self._options([])
            return
        topo = state.topology
        head = f"<b>{esc(topo.summary())}</b>"
        self._error = None
        try:
            self._placement = state.network.placement if len(state.network.chains) else None
            problem = ""
        except SfclabError as e:
            self._placement, self._error, problem = None, e, error_html(e)
        if state.stale and not _same_chains(state):
            head += note("⚠ The chains changed since the push: the network still runs the "
                         "placement below. <code>%sfc update</code> moves it to the new chains "
                         "(consistently, switch by switch), <code>%sfc push</code> starts over.")
        if state.redefined:
            head += note(f"⚠ {esc(_redefined(state))}: <code>%sfc update --reload</code> "
                         f"reloads the switches running it, <code>%sfc push</code> starts over.")
        elif state.network.pushed:
            head += note("Running: pushed to every switch.")
        elif state.stopped:
            head += note(f"⚠ The topology changed since the push ({esc(state.stopped)}): the "
                         f"network that ran was stopped, with the NFs' state in registers. "
                         f"<code>%sfc push</code> runs the chains on this one.")
        elif state.holding:
            head += note(f"⚠ Nothing is pushed: the last push failed. {esc(state.holding)}: no "
                         f"chain runs. <code>%sfc push</code> once the cause is fixed.")
        self.head.value = head + note(LEGEND)
        pl = self._placement
        if pl is None and not problem:
            problem = note("No chains yet: write them in a <code>%%chain</code> cell "
                           "(<code>chain web match tcp.dport == 80 from h1 to h16: firewall -> "
                           "nat</code>) and the view shows where each NF runs.")
        self.table.value = problem or placement_html(pl, self._catalog)
        self._options([] if pl is None else
                      [(c.name, c.name) for c in pl.problem.chains]
                      + [(f"{p.id} (service path)", f"{c.name}\n{p.id}")
                         for c in pl.problem.chains if len(c.paths) > 1 for p in c.paths])
        self._draw()

    def text(self) -> str:
        """The tab as text (a terminal, nbconvert): the topology and the placement table."""
        state = self.network() if self.network is not None else None
        if state is None:
            return "no topology: the chains run on one switch (write one in a %%topology cell)"
        out = [state.topology.summary()]
        if self._placement is not None:
            out.append(self._placement.table())
        elif self._error is not None:
            out.append(f"no placement: {self._error}")
        else:
            out.append("no chains yet")
        if state.stale and not _same_chains(state):
            out.append("the chains changed since the push: %sfc update applies them")
        if state.redefined:
            out.append(f"{_redefined(state)}: %sfc update --reload applies it")
        if state.stopped:
            out.append(f"the topology changed since the push ({state.stopped}): the network "
                       f"that ran was stopped; %sfc push runs the chains on this one")
        if state.holding:
            out.append(f"nothing is pushed: the last push failed. {state.holding}: no chain "
                       f"runs (%sfc push once the cause is fixed)")
        return "\n".join(out)

    def _options(self, options: list[tuple[str, str]]) -> None:
        opts = [("all chains", "")] + options
        keep = self.pick.value if any(v == self.pick.value for _, v in opts) else ""
        with self.pick.hold_trait_notifications():
            self.pick.options = opts
            self.pick.value = keep
        self.pick.layout.display = "" if options else "none"

    def highlight(self) -> Highlight | None:
        """What the picker highlights (None: nothing picked)."""
        if not self.pick.value or self._placement is None:
            return None
        chain, _, path = self.pick.value.partition("\n")
        return chain_highlight(self._placement, chain, path or None)

    def _draw(self) -> None:
        if self._state is None:
            return
        svg = topology_svg(self._state.topology, self._placement, catalog=self._catalog,
                           highlight=self.highlight(), title=self._state.topology.name)
        self.drawing.value = drawing_html(svg)


def _same_chains(state: Any) -> bool:
    """Whether the network runs the Lab's chains (only NF code may differ)."""
    return [c.signature() for c in state.network.chains] == \
        [c.signature() for c in state.chains]


def _redefined(state: Any) -> str:
    """``NF gate was redefined since the push (%%nf): the switches still run its old code``."""
    one = len(state.redefined) == 1
    return (f"NF{'' if one else 's'} {', '.join(state.redefined)} {'was' if one else 'were'} "
            f"redefined since the push (%%nf): the switches still run "
            f"{'its' if one else 'their'} old code")
