"""What ``%sfc push``, ``%sfc send``, ``%sfc trace`` and ``%sfc tables SWITCH`` show
when the Lab runs on a network (a ``%%topology`` cell).

* :class:`NetworkPushSummary`: the network target, and per switch its NF slots
  and entries (transit switches counted);
* :class:`NetworkSendView`: the packets sent from host to host in a table
  (select one with the mouse or the arrow keys), the selected packet's hops
  numbered on the topology drawing, and per hop the switch, the NFs, the tables
  hit or missed, the passes and the link taken, with each switch's per-pass
  timeline one click away;
* :class:`SwitchTables`: one switch's tables (occupancy, hits, misses).

Each has a text form for terminals and nbconvert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from ..ir.values import ValueKinds
from ..draw.topology import topology_svg, trace_highlight
from .markup import chip, esc, note, table
from .runtime_views import Rich, TablesView
from .send_view import PacketTable, timeline_html
from .topology_view import drawing_html

__all__ = ["NetworkPushSummary", "NetworkSendView", "SwitchTables", "network_row",
           "network_target_text"]


def network_target_text(target: Any) -> str:
    """A network target in words."""
    kind = getattr(target, "kind", "")
    return {"model-network": "the embedded network (a model switch per switch, in this "
                             "process)", "mininet": "a Mininet network"}.get(
        kind, kind or type(target).__name__)


class NetworkPushSummary(Rich):
    """What ``%sfc push`` did on a network: every switch's program and entries."""

    def __init__(self, network: Any, counts: dict[str, int]) -> None:
        prog = network.program
        busy = {s: sp for s, sp in prog.switches.items() if sp.slots}
        transit = [s for s, sp in prog.switches.items() if not sp.slots and counts.get(s)]
        where = network_target_text(network.target)
        total = sum(counts.values())
        text = [f"pushed to {where}: {len(counts)} switches, {total} table entries"]
        text += [f"  {s}: NF slots {' | '.join(sp.slots)}; {counts.get(s, 0)} entries"
                 for s, sp in busy.items()]
        if transit:
            text.append(f"  transit only (steering entries): {', '.join(transit)}")
        rows = [[f"<code>{esc(s)}</code>", "".join(chip(n, _color(network, n))
                                                    for n in sp.slots),
                 str(counts.get(s, 0)), esc(", ".join(sp.parts))] for s, sp in busy.items()]
        if transit:
            rows.append([esc(", ".join(transit)), "<i>none: transit</i>",
                         str(sum(counts[s] for s in transit)), "steering entries only"])
        html = (f"<div style='font-size:13px'><b>pushed</b> {len(counts)} switches of "
                f"<code>{esc(network.topology.name)}</code> over P4Runtime, each its own "
                f"program: <b>{total}</b> table entries · {esc(where)}</div>"
                + table(["switch", "NF slots", "entries", "chains"], rows)
                + note("<code>web@3</code>: web's packets come to this switch with 3 of their "
                       "NFs run upstream (the SFC header says which)."))
        super().__init__("\n".join(text), html)


def _color(network: Any, nf: str) -> str:
    from ..draw.chains import nf_color

    return nf_color(network.catalog, nf)


def network_row(k: int, t: Any) -> dict[str, Any]:
    """One network trace as a row of the packet table (passes: over every switch it
    crossed, and where it recirculated).

    >>> from sfclab.targets.network import NetworkTrace, Hop
    >>> t = NetworkTrace(source="h1", hops=[Hop(node="s1", kind="switch", in_port=1)])
    >>> network_row(1, t)["passes"]
    '0 (1 switch)'
    """
    hops = [h for h in t.hops if h.kind == "switch"]
    passes = sum(h.passes for h in hops)
    again = ", ".join(f"{h.passes} on {h.node}" for h in hops if h.passes > 1)
    n = len(hops)
    passes_text = f"{passes} ({again or f'{n} switch' + 'es' * (n != 1)})"
    outcome = f"{t.source} → {t.egress}" if t.delivered else t.outcome()
    return {"id": k, "chain": t.label or "?", "path": t.path or "–", "passes": passes_text,
            "outcome": outcome, "dropped": t.dropped, "nfs": " → ".join(t.nfs()) or "(none)"}


def _hop_rows(t: Any, program: Any) -> list[list[str]]:
    rows, before = [], []
    for k, h in enumerate(t.hops, 1):
        tables = "".join(
            f"<div><code>{esc(name)}</code> <b style='color:{'#2e7d32' if hit else '#c62828'}'>"
            f"{'hit' if hit else 'miss'}</b></div>" for name, hit in h.tables())
        out = "<br>".join(f"port {p} → <code>{esc(nb)}:{q}</code>" for p, nb, q in h.out)
        if h.kind == "host":
            out = "<b>delivered</b>"
        if h.dropped:
            words = h.drop_words(before)
            out += (f"<br><b style='color:#c62828'>dropped</b>"
                    + (f" {esc(words)}" if words.startswith(("after ", "before ")) else
                       f": {esc(words)}"))
        before += h.nfs
        header = ""
        if h.header is not None:
            path = program.path_of_spi(h.header[0]) if program is not None else None
            header = f"{path or 'path'} (spi {h.header[0]}), next NF {h.header[1]}"
        rows.append([str(k), f"<b>{esc(h.node)}</b> <small>{esc(h.kind)}</small>",
                     "" if h.in_port is None else str(h.in_port),
                     " → ".join(esc(n) for n in h.nfs) or "–",
                     tables or "–", str(h.passes) if h.kind == "switch" else "",
                     out, esc(header)])
    return rows


class NetworkSendView:
    """Packets sent across the Lab's network (network traces), one selected."""

    def __init__(self, lab: Any, traces: Sequence[Any], *, summary: str = "") -> None:
        self.lab, self.traces = lab, list(traces)
        self.network = lab.network
        first = len(self.network.traces) - len(self.traces) + 1
        self.table = PacketTable(rows=[network_row(first + k, t)
                                       for k, t in enumerate(self.traces)])
        self.summary = widgets.HTML(self._summary(summary))
        self.drawing, self.hops = widgets.HTML(), widgets.HTML()
        self.table.observe(lambda ch: self.show(ch["new"]), names="selected")
        self.widget = widgets.VBox([self.summary, self.table, self.drawing, self.hops],
                                   layout=widgets.Layout(width="100%"))
        if self.traces:
            self.table.selected = len(self.traces) - 1

    def _summary(self, text: str) -> str:
        n = len(self.traces)
        if not n:
            return note("No packets.")
        dropped = sum(1 for t in self.traces if t.dropped)
        head = esc(text) if text else (f"{n} packet{'s' * (n != 1)}: {n - dropped} delivered, "
                                       f"{dropped} dropped")
        return (f"<div><b>{head}</b> · select a packet for its hops across the network</div>")

    def show(self, k: int | None) -> None:
        """Show packet *k*: its hops on the topology and hop by hop."""
        if k is None or not 0 <= k < len(self.traces):
            return
        t = self.traces[k]
        net = self.network
        placement = self._placement()
        svg = topology_svg(net.topology, placement, catalog=net.catalog,
                           highlight=trace_highlight(t), title=net.topology.name)
        end = (f"delivered to <b>{esc(t.egress)}</b>" if t.delivered else
               f"<b style='color:#c62828'>dropped</b> ({esc(t.drop_reason)})")
        self.drawing.value = (
            f"<div style='margin-top:6px'>packet from <b>{esc(t.source)}</b>"
            + (f" [{esc(t.label)}]" if t.label else "")
            + (f" on {esc(t.path)}" if t.path else "")
            + f": {esc(' → '.join(t.switches()))}; {end}. Its hops in "
              f"<span style='color:#1976d2'>blue</span>, numbered in order.</div>"
            + drawing_html(svg))
        head = ["#", "node", "in port", "NFs", "tables", "passes", "left on", "SFC header"]
        self.hops.value = (table(head, _hop_rows(t, net.program)) + self._timelines(t))

    def _placement(self) -> Any:
        try:
            return self.network.placement
        except Exception:                         # noqa: BLE001 - drawn without NFs then
            return None

    def _timelines(self, t: Any) -> str:
        out = []
        for k, h in enumerate(t.hops, 1):
            if h.kind != "switch" or h.trace is None:
                continue
            sp = self.network.program.switches.get(h.node)
            kinds = ValueKinds.of_program(sp.generated.program.program) if sp else None
            out.append(f"<details style='margin:2px 0'><summary>hop {k}: "
                       f"<b>{esc(h.node)}</b>'s passes, table by table</summary>"
                       + timeline_html(h.trace, kinds, self.network.catalog) + "</details>")
        return "".join(out)

    def text(self) -> str:
        if not self.traces:
            return "no packets sent yet"
        lines = [f"{'#':>4}  {'class':<10} {'path':<12} {'passes':<18} {'egress / drop':<16} NFs"]
        first = len(self.network.traces) - len(self.traces) + 1
        for k, t in enumerate(self.traces):
            r = network_row(first + k, t)
            lines.append(f"{r['id']:>4}  {r['chain']:<10} {r['path']:<12} {r['passes']:<18} "
                         f"{r['outcome']:<16} {r['nfs']}")
        return "\n".join(lines + ["", self.traces[-1].text()])

    def _repr_mimebundle_(self, **kw: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kw) or {}
        bundle["text/plain"] = self.text()
        return bundle


class SwitchTables(Rich):
    """``%sfc tables SWITCH``: one switch's tables, headed by the switch."""

    def __init__(self, switch: str, rows: Sequence[Any]) -> None:
        view = TablesView(rows)
        head = f"switch {switch}"
        super().__init__(f"{head}\n{view.text()}",
                         f"<div style='font-size:13px;margin:2px 0'><b>switch "
                         f"<code>{esc(switch)}</code></b>: its tables, and the lookups of the "
                         f"packets sent through it</div>" + view._repr_html_())
