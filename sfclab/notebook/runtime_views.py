"""What ``%sfc push``, ``%sfc tables`` and ``%sfc help`` show.

Each is a rich output with an HTML form for notebooks and a plain-text form for
terminals and nbconvert.  Addresses and URLs are shown in the HTML form as code,
so JupyterLab does not turn them into links that lead nowhere.

* :class:`TablesView`: per table its entries against its size on a logarithmic
  bar (two entries in a 1,024-entry table still show), and its lookups, hits and
  misses side by side on one scale (a table every packet missed is as visible as
  one every packet hit);
* :class:`PushSummary`: the target, the program and the entries per group, what the
  switch session installed beyond them, and what it could not do (its notes);
* :func:`installed_html`: what a session installed beyond the generated entries
  (:func:`sfclab.runtime.installed.installed_beyond`: flood's entries and multicast
  groups for the switch's ports) and its notes;
* :class:`Rich`: any text with an HTML form (``%sfc help``: :func:`help_output`);
* :func:`drift_output`: the warning ``%sfc send``, ``trace`` and ``tables`` show first
  when the target runs other chains than the Lab (:func:`sfclab.api.drift.drift`);
* :func:`update_text`: what ``%sfc update`` did.

>>> from sfclab.lab import TableUse
>>> print(TablesView([TableUse("SfcIngress.acl", 2, 1024, 0, 5)]).text())
table           entries /  size  occupancy (log)       hits  misses
SfcIngress.acl        2 /  1024  ███···············       0       5

On a TNA model the tables come by pipe:

>>> print(TablesView([TableUse("pipe1.SfcIngress1.acl", 2, 1024, 3, 0, (1,))]).text())
pipe 1 (pipeline pipe1)
table                  entries /  size  occupancy (log)       hits  misses
pipe1.SfcIngress1.acl        2 /  1024  ███···············       3       0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..cli.report import log_share, occupancy_text, target_text
from ..runtime.installed import Installed, installed_beyond
from .markup import CELL, bar, esc, note, table

__all__ = ["TablesView", "PushSummary", "Rich", "Installed", "installed_beyond", "installed_html",
           "help_output", "target_text", "drift_output", "update_text"]

HIT, MISS, FILL = "#59a14f", "#e15759", "#4e79a7"


class Rich:
    """Plain text with an HTML form (shown in notebooks, text in terminals)."""

    def __init__(self, text: str, html: str) -> None:
        self.text, self.html = text, html

    def _repr_mimebundle_(self, **kw: Any) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text


def help_output(commands: Sequence[tuple[str, str]], about: str) -> Rich:
    """``%sfc help``: one line per command (usage, what it does), then *about*; in HTML
    the usages are code, so the URLs in them are not made links.

    >>> print(help_output([("%sfc push", "push the program")], "lab: 0 chains").text)
    %sfc push                                                    push the program
    lab: 0 chains
    """
    text = "\n".join([*(f"{u:<60} {w}" for u, w in commands), about])
    rows = "".join(f"<tr><td style='padding:1px 10px 1px 0'><code>{esc(u)}</code></td>"
                   f"<td>{esc(w)}</td></tr>" for u, w in commands)
    return Rich(text, f"<table style='font-size:12px;border-collapse:collapse'>{rows}</table>"
                      f"<div style='margin-top:4px'>{esc(about)}</div>")


def installed_html(installed: Installed, kinds: Any = None) -> str:
    """What the switch holds beyond the generated entries: the entries (with *kinds*,
    values as people write them) and multicast groups as tables, the notes as warnings."""
    out = [f"<b>installed on the switch beyond the generated entries</b>: "
           f"{esc(installed.summary())}"]
    if installed.entries:
        out.append(table(["table", "match", "action", "params", "priority", "note"],
                         [_entry_row(e, kinds) for e in installed.entries]))
    if installed.groups:
        out.append(table(["multicast group", "ports", "note"],
                         [[str(g.id), esc(", ".join(map(str, g.ports))), esc(g.note)]
                          for g in installed.groups]))
    out += [_warning(n) for n in installed.notes]
    return "".join(out)


def _entry_row(e: Any, kinds: Any) -> list[str]:
    if kinds is None:
        match = "<br>".join(f"{esc(k)} = {esc(str(m))}" for k, m in e.match) or "*"
        args = esc(", ".join(f"{k}={v}" for k, v in e.params))
    else:
        match = "<br>".join(f"{esc(k)} = {esc(v)}" for k, v in e.match_text(kinds)) or "*"
        args = esc(kinds.args(e.action, e.params))
    return [esc(e.table), match, esc(e.action.rpartition(".")[2]), args,
            "" if e.priority is None else str(e.priority), esc(e.note)]


def _warning(text: str) -> str:
    return (f"<div class='sfc-note' style='background:#fff8e1;color:#5d4037;border-left:3px "
            f"solid #f9a825;padding:2px 8px;margin:4px 0'>note: {esc(text)}</div>")


class TablesView:
    """Occupancy (entries / size) and lookups (hits, misses) of every table with
    entries or lookups (rows like :class:`sfclab.lab.TableUse`); with *installed*, what
    the switch holds beyond the generated entries."""

    def __init__(self, rows: Sequence[Any], installed: Installed | None = None) -> None:
        self.rows = [r for r in rows if r.entries or _misses(r) or (r.hits or 0)]
        self.installed = installed or Installed()
        #: When no table has entries or lookups: a line saying so (not an empty table).
        self.empty = (f"no entries and no lookups in any of the program's {len(rows)} tables"
                      if rows and not self.rows else "")

    def groups(self) -> list[tuple[str, list[Any]]]:
        """The rows by pipe on a TNA model (a heading per pipe, or per set of pipes
        that run one pipeline and share its entries); one untitled group elsewhere."""
        by: dict[tuple[int, ...], list[Any]] = {}
        for r in self.rows:
            by.setdefault(tuple(getattr(r, "pipes", ()) or ()), []).append(r)
        if list(by) == [()]:
            return [("", self.rows)]
        return [(_pipes_title(p, rows), rows) for p, rows in sorted(by.items())]

    def text(self) -> str:
        extra = f"\n{self.installed.text()}" if self.installed else ""
        if self.empty:
            return self.empty + extra
        return "\n".join((f"{title}\n" if title else "") + occupancy_text(rows)
                         for title, rows in self.groups()) + extra

    def _repr_html_(self) -> str:
        if self.empty:
            return note(self.empty)
        most = max((((r.hits or 0) + _misses(r)) for r in self.rows), default=0)
        rows = []
        for title, group in self.groups():
            if title:
                rows.append([f"<b>{esc(title)}</b>", "", "", ""])
            rows += self._html_rows(group, most)
        head = ["table", "entries / size", "occupancy (log scale)",
                f"lookups: <span style='color:{HIT}'>■ hit</span> "
                f"<span style='color:{MISS}'>■ miss</span>"]
        extra = (f"<details class='sfc-installed'><summary>{esc(self.installed.summary())} "
                 f"installed beyond the generated entries</summary>{installed_html(self.installed)}"
                 f"</details>" if self.installed.entries or self.installed.groups else "")
        return (table(head, rows, cls="sfc-tables")
                + note("Occupancy on a log scale: one entry in a table of 1,024 shows; lookups "
                       "of the packets this lab sent, on one scale for every table.")
                + extra + "".join(_warning(n) for n in self.installed.notes))

    @staticmethod
    def _html_rows(group: Sequence[Any], most: int) -> list[list[str]]:
        rows = []
        for r in group:
            hits, misses = r.hits or 0, _misses(r)
            pct = 100 * r.entries / r.size if r.size else 0
            occ = (bar(log_share(r.entries, r.size), FILL, width=140,
                       title=f"{r.entries} of {r.size} entries ({pct:.2g} %)")
                   + f" <span style='font-size:11px'>{pct:.2g} %</span>")
            rows.append([f"<code>{esc(r.table)}</code>",
                         f"<div style='text-align:right'>{r.entries:,} / {r.size:,}</div>",
                         occ, _lookups(hits, misses, most)])
        return rows

    def _repr_mimebundle_(self, **kw: Any) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self._repr_html_()}


def _pipes_title(pipes: tuple[int, ...], rows: Sequence[Any]) -> str:
    """``pipe 1 (pipeline pipe1)`` or ``pipes 0, 1 (pipeline pipe: the same entries in
    each)``: a group of tables on a TNA model."""
    if not pipes:
        return "not in a pipe"
    name = rows[0].table.split(".", 1)[0] if rows else ""
    if len(pipes) == 1:
        return f"pipe {pipes[0]} (pipeline {name})"
    return (f"pipes {', '.join(map(str, pipes))} (pipeline {name}: the same entries in each; "
            f"lookups of them all)")


def _misses(r: Any) -> int:
    return getattr(r, "misses", 0) or 0


def _lookups(hits: int, misses: int, most: int) -> str:
    """A stacked bar of hits and misses, scaled to the busiest table, and the counts."""
    if not most:
        return "<span style='color:var(--jp-ui-font-color2,#666)'>no lookups</span>"
    width = 140
    part = (lambda k, c: f"<div style='background:{c};width:{max(k / most * width, 2):.1f}px;"
                         f"height:12px'></div>" if k else "")
    return (f"<div style='display:inline-flex;background:var(--jp-layout-color2,#eee);"
            f"width:{width}px;height:12px;vertical-align:middle'>{part(hits, HIT)}"
            f"{part(misses, MISS)}</div> <span style='font-size:11px'>{hits} hit · "
            f"{misses} miss</span>")


class PushSummary(Rich):
    """What ``%sfc push`` did: the target, the program and its entries per group, what the
    session installed beyond them and its notes (:class:`Installed`)."""

    def __init__(self, target: Any, generated: Any, count: int,
                 groups: Mapping[str, int] | None = None,
                 installed: Installed | None = None) -> None:
        groups = dict(groups if groups is not None else
                      {g: len(es) for g, es in generated.groups().items()})
        installed = installed or Installed()
        if not isinstance(count, int):                # a push that reports more than a count
            count = len(generated.entries) + len(installed.entries)
        lines = generated.program.text.count("\n") + 1
        chains = {g.removeprefix("chain:"): k for g, k in groups.items() if g.startswith("chain:")}
        nfs = {g.removeprefix("nf:"): k for g, k in groups.items() if g.startswith("nf:")}
        where = target_text(target)
        entries = f"{count}" + (f" ({len(generated.entries)} generated, "
                                f"{len(installed.entries)} for this switch)"
                                if installed.entries else "")
        text = [f"pushed to {where}:",
                f"  program: {generated.arch}, {lines} lines",
                f"  {entries} table entries"]
        rows = [["target", f"<code>{esc(where)}</code>"],
                ["program", f"{esc(generated.arch)}, {lines} lines"],
                ["table entries", f"<b>{esc(entries)}</b>"]]
        for name, per in (("per chain", chains), ("per NF slot", nfs)):
            if per:
                text.append(f"  {name}: " + ", ".join(f"{c} {k}" for c, k in per.items()))
                rows.append([name, esc(", ".join(f"{c}: {k}" for c, k in per.items()))])
        if installed.entries or installed.groups:
            text.append(f"  for this switch: {installed.summary()}")
            rows.append(["for this switch", esc(installed.summary())])
        text += [f"note: {n}" for n in installed.notes]
        html = ("<div style='font-size:13px'><b>pushed</b> the program and its entries "
                "over P4Runtime</div><table style='border-collapse:collapse;font-size:12px'>"
                + "".join(f"<tr><th style='{CELL};text-align:left'>{k}</th>"
                          f"<td style='{CELL}'>{v}</td></tr>" for k, v in rows) + "</table>"
                + "".join(_warning(n) for n in installed.notes))
        super().__init__("\n".join(text), html)


def drift_output(drift: Any) -> Rich:
    """The warning shown before a send, trace or tables output when the target runs
    other chains (or NF code) than the Lab, or nothing is pushed yet a failed first push
    left its program on the switch (a :class:`sfclab.api.drift.Drift`)."""
    text = f"warning: {drift.message()}"
    if drift.needs == "push":                 # a failed first push left its program
        kind, then = " sfc-stranded", "Push again once the cause is fixed: "
    else:
        kind = ""
        then = ("What follows is the old program"
                f"{'' if drift.needs != 'reload' else ' (this change needs a program reload'}"
                f"{esc(': ' + drift.reason) if drift.needs == 'reload' and drift.reason else ''}"
                f"{')' if drift.needs == 'reload' else ''}. Apply it with ")
    html = (f"<div class='sfc-warning sfc-drift{kind}' style='background:#fff8e1;"
            f"color:#5d4037;border-left:3px solid #f9a825;padding:4px 8px;margin:4px 0;"
            f"overflow-wrap:break-word'>⚠ <b>{esc(_first_up(drift.headline()))}</b>: "
            f"{esc(drift.what())}. {then}<code>{esc(drift.command)}</code>.</div>")
    return Rich(text, html)


def update_text(plan: Any) -> str:
    """What ``%sfc update`` did, from the plan :meth:`sfclab.Lab.update` returns (a
    ``reload`` plan was carried out: the update reloaded the program).

    >>> from sfclab.runtime.session import UpdatePlan
    >>> update_text(UpdatePlan("reload", reason="the NF slots change (a | a | b)"))
    "reloaded the program (the NF slots change (a | a | b)) and wrote every entry: the target runs the Lab's chains"
    """
    if plan is None:
        return "nothing was pushed before: pushed every switch"
    switches = getattr(plan, "switches", None)
    if switches is not None:                       # a network: one line per switch
        if plan.kind == "none":
            return "nothing to change"
        return "\n".join([f"network update: {plan.kind} ({plan.writes} writes)"] + [
            f"  {s}: {update_text(p)}" for s, p in switches.items() if p.kind != "none"]
            + [f"  {m}" for m in getattr(plan, "moved", ())])
    if plan.kind == "reload":
        why = f" ({plan.reason})" if plan.reason else ""
        return "; ".join([f"reloaded the program{why} and wrote every entry: the target runs "
                          f"the Lab's chains"] + [str(c) for c in getattr(plan, "carried", ())])
    return str(plan)


def _first_up(text: str) -> str:
    """*text* with its first letter a capital (the rest as it is: ``Lab's`` stays)."""
    return text[:1].upper() + text[1:]
