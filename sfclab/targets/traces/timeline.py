"""A packet's trace as a per-pass timeline people read.

A :class:`~sfclab.targets.traces.trace.PacketTrace` lists every step a switch took
(parser states, token checks, conditions …).  :func:`timeline` keeps what a
person follows, grouped by pass through the pipeline and, inside a pass, by
*block*: the classifier that gave the packet its token, each NF the packet ran
(its tables hit or missed with the entry that matched, its actions with their
arguments), the branch and loop tables of the composed program, and the
rewinder; each pass ends in a recirculation (with the token the next pass
starts from), an egress port or a drop.  Values are printed by their kind
(:mod:`sfclab.ir.values`).  :func:`timeline_text` is the same as text, for
terminals, ``sfclab demo`` and the notebook's plain-text fallback.

>>> from sfclab.targets.traces.trace import Event, PacketTrace
>>> t = PacketTrace(packet_id=1, ingress_port=1)
>>> for e in [Event(kind="table_hit", name="SfcIngress.initializer", entry="hdr.tcp.dst_port=0x0050&&&0xffff"),
...           Event(kind="action", name="SfcIngress.set_token", args=(("path_id", 1), ("bitmap", 3))),
...           Event(kind="nf", name="l3fwd"),
...           Event(kind="table_hit", name="SfcIngress.slot1_l3fwd.ipv4_lpm", entry="hdr.ipv4.dst_addr=0x0a000000/8"),
...           Event(kind="action", name="SfcIngress.slot1_l3fwd.route", args=(("dmac", 513), ("smac", 254), ("port", 2))),
...           Event(kind="packet_out", value=2)]:
...     t.add(e)
>>> t.finish(egress_port=2)
>>> print(timeline_text(t))
packet 1: in on port 1, 1 pass, NFs l3fwd, out on port 2
pass 0
  classifier  initializer: hit hdr.tcp.dst_port=80 -> set_token(path_id=1, bitmap=0b11)
  NF l3fwd    ipv4_lpm: hit hdr.ipv4.dst_addr=10.0.0.0/8 -> route(dmac=00:00:00:00:02:01, smac=00:00:00:00:00:fe, port=2)
  -> out on port 2
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...ir.values import ValueKinds
from .trace import _CORE_TABLE, PacketTrace, _token, nf_of, server_text

__all__ = ["Step", "Block", "Pass", "timeline", "timeline_text", "outcome_text"]

#: Tables of the composed program (not of an NF), by the block they form.
_CONTROL = (("initializer", "classifier"), ("arrival", "arrival"), ("rewinder", "rewinder"),
            ("pass_end", "pass end"))
_SLOT_PART = {"branch": "branch after slot {}", "loop": "loop counter",
              "save": "save after slot {}"}


@dataclass(frozen=True, slots=True)
class Step:
    """One thing a block did: a table applied (``hit`` True / False, ``entry`` the
    matched entry) and the action that ran, or an event (digest, clone, note)."""

    table: str = ""
    hit: bool | None = None
    entry: str = ""
    action: str = ""
    text: str = ""

    def __str__(self) -> str:
        parts = []
        if self.table:
            parts.append(f"{self.table}: {'hit' if self.hit else 'miss'}"
                         + (f" {self.entry}" if self.entry else ""))
        if self.action:
            parts.append(self.action)
        if self.text:
            parts.append(self.text)
        return " -> ".join(parts)


@dataclass(frozen=True, slots=True)
class Block:
    """A stretch of a pass: an NF instance (``nf`` True) or a part of the composed
    program (classifier, branch, loop counter, rewinder); ``where`` the pipelet it ran
    in where the target names them (TNA: ``pipe 1 egress``; '' on v1model)."""

    name: str
    nf: bool
    steps: tuple[Step, ...]
    where: str = ""

    @property
    def title(self) -> str:
        return f"NF {self.name}" if self.nf else self.name


@dataclass(frozen=True, slots=True)
class Pass:
    """One pass through the pipeline: where it started, its blocks, how it ended
    (``end`` is ``"recirculate"``, ``"out"``, ``"drop"`` or ``"server"``; ``detail``
    the next token, the port, the reason or what the server did; ``how`` how the packet
    came back where the target says, e.g. TNA's ``recirculated on port 68``)."""

    number: int
    blocks: tuple[Block, ...]
    end: str
    detail: str
    how: str = ""

    @property
    def end_text(self) -> str:
        if self.end == "recirculate":
            return f"{self.how or 'recirculate'} -> pass {self.number + 1} {self.detail}".rstrip()
        if self.end == "out":
            return f"out on port {self.detail}"
        if self.end == "drop":
            return f"dropped: {self.detail}"
        return self.detail            # "server": out to the server and back (its words)


def _block_of(name: str) -> tuple[str, bool]:
    """The block a table or action belongs to: (NF instance, True) or (part, False)."""
    last = name.rpartition(".")[2]
    for table, block in _CONTROL:
        if last == table:
            return block, False
    m = _CORE_TABLE.search(name)
    if m is not None:
        return _SLOT_PART[m[2]].format(m[1]), False
    nf = nf_of(name)
    return (nf, True) if nf is not None else ("", False)


def _short(name: str) -> str:
    """``SfcIngress.slot3_l3fwd.ipv4_lpm`` -> ``ipv4_lpm``."""
    return name.rpartition(".")[2]


#: Conditions of the composed program (token checks, its control metadata): not an NF's.
_PROGRAM_STATE = ("hdr.sfc.", "meta.sfc.", "meta.ctl.", "standard_metadata.")


class _Builder:
    def __init__(self, kinds: ValueKinds) -> None:
        self.kinds = kinds
        self.passes: list[Pass] = []
        self.blocks: list[tuple[str, bool, list[Step], str]] = []
        #: The pipelet running now, where the target names it (TNA: ``pipe 0 egress``).
        self.where = ""
        #: The NF block's condition that was false last (why it applied no table).
        self.false_cond: dict[int, str] = {}
        #: The port the rewinder's ``finish`` gave (the chain's exit unless an NF sets one).
        self.finish_port: Any = None

    def condition(self, ev) -> None:
        if self.blocks and self.blocks[-1][1] and ev.value is False \
                and not ev.name.startswith(_PROGRAM_STATE):
            self.false_cond[len(self.blocks) - 1] = ev.name

    def block(self, name: str, nf: bool) -> list[Step]:
        if not self.blocks or self.blocks[-1][:2] != (name, nf) \
                or self.blocks[-1][3] != self.where:
            self.blocks.append((name, nf, [], self.where))
        return self.blocks[-1][2]

    def pipelet(self, ev) -> None:
        """A ``pipeline_start``: TNA's name the pipelet (``pipe 1 egress``), which the
        blocks after it carry; v1model's (``ingress``) say nothing new."""
        if ev.name.startswith("pipe "):
            self.where = ev.name

    def table(self, ev, hit: bool) -> None:
        name, nf = _block_of(ev.name)
        if not name and self.blocks:                  # a table sfclab did not name: stay
            name, nf = self.blocks[-1][:2]
        entry = self.kinds.described(ev.entry) if hit and ev.entry else ""
        self.block(name or "program", nf).append(Step(table=_short(ev.name), hit=hit,
                                                      entry=entry))

    def action(self, ev) -> None:
        if ev.name.endswith("NoAction"):
            return
        text = f"{_short(ev.name)}({self.kinds.args(ev.name, ev.args)})"
        name, nf = _block_of(ev.name)
        if _short(ev.name) == "finish" and self.blocks and self.blocks[-1][0] == "rewinder":
            self.finish_port = dict(ev.args).get("port")
        if self.blocks and self.blocks[-1][3] == self.where \
                and (not name or (name, nf) == self.blocks[-1][:2] or not nf):
            steps = self.blocks[-1][2]                 # the action of the table just applied
            if steps and steps[-1].table and not steps[-1].action:
                steps[-1] = Step(steps[-1].table, steps[-1].hit, steps[-1].entry, text)
                return
        self.block(name or "program", nf).append(Step(action=text))

    def end_pass(self, number: int, end: str, detail: str, how: str = "") -> None:
        blocks = tuple(Block(n, nf, tuple(s) if s or not nf else (self._no_table(k),), w)
                       for k, (n, nf, s, w) in enumerate(self.blocks))
        self.passes.append(Pass(number, blocks, end, detail, how))
        self.blocks, self.false_cond = [], {}

    def _no_table(self, k: int) -> Step:
        """An NF that ran but applied no table: say why when its trace tells (the
        condition around its tables was false)."""
        cond = self.false_cond.get(k)
        return Step(text=f"applied no table: {cond} is false" if cond else
                    "applied no table")

    def exit_port(self, trace: PacketTrace) -> None:
        """The rewinder's ``finish(…, port=P)`` names the chain's exit, used only when no
        NF chose a port: when the packet left elsewhere, say which NF chose that."""
        last = self.passes[-1] if self.passes else None
        if self.finish_port is None or last is None or last.end != "out" \
                or str(self.finish_port) == last.detail:
            return
        chooser = next((b.name for b in reversed(last.blocks) if b.nf
                        and any("port=" in s.action for s in b.steps)), "an NF")
        note = (f"port {self.finish_port} is the chain's exit when no NF picks one; "
                f"{chooser} picked port {last.detail}")
        blocks = tuple(Block(b.name, b.nf, tuple(
            Step(s.table, s.hit, s.entry, s.action, note) if s.action.startswith("finish(")
            else s for s in b.steps), b.where) if b.name == "rewinder" and not b.nf else b
            for b in last.blocks)
        self.passes[-1] = Pass(last.number, blocks, last.end, last.detail, last.how)


def timeline(trace: PacketTrace, kinds: ValueKinds | None = None) -> tuple[Pass, ...]:
    """The passes of *trace*, each as blocks of steps (see the module's docstring)."""
    b = _Builder(kinds or ValueKinds.library())
    current = 0
    ended = False
    for ev in trace.events:
        if ev.pass_no != current:
            if not ended:
                b.end_pass(current, "recirculate", "")
            current, ended = ev.pass_no, False
        k = ev.kind
        if k == "nf":
            b.block(ev.name, True)
        elif k in ("table_hit", "table_miss"):
            b.table(ev, k == "table_hit")
        elif k == "action":
            b.action(ev)
        elif k == "condition":
            b.condition(ev)
        elif k == "pipeline_start":
            b.pipelet(ev)
        elif k in ("recirculate", "resubmit"):
            token = ev.value.items() if isinstance(ev.value, Mapping) else None
            b.end_pass(current, "recirculate", f"({b.kinds.args('token', token)})" if token
                       else _token(ev.value) if ev.value else "", ev.name)
            ended = True
        elif k == "server":
            b.end_pass(current, "server", server_text(ev))
            ended = True
        elif k == "digest" and isinstance(ev.value, Mapping):
            b.block(*(b.blocks[-1][:2] if b.blocks else ("program", False))).append(
                Step(text=f"digest {ev.name} ({b.kinds.args(ev.name, ev.value.items())})"))
        elif k in ("digest", "clone") or (k == "note" and ev.value):
            b.block(b.blocks[-1][0] if b.blocks else "program",
                    b.blocks[-1][1] if b.blocks else False).append(Step(text=ev.text()))
    if not ended or b.blocks:
        if trace.dropped:
            b.end_pass(current, "drop", trace.drop_reason or "no reason given")
        else:
            b.end_pass(current, "out", str(trace.egress_port))
    b.exit_port(trace)
    return tuple(b.passes)


def outcome_text(trace: PacketTrace) -> str:
    """``out on port 2`` or ``dropped: reason``; in sfclab's composed program (whose
    ingress drops at its end what an NF or the chain's ``drop`` asked for) the reason is
    the NF the packet ran last, as a person reads it: ``dropped after firewall``.

    >>> from sfclab.targets.traces.trace import Event, PacketTrace
    >>> t = PacketTrace(packet_id=1, ingress_port=1)
    >>> t.add(Event(kind="nf", name="firewall"))
    >>> t.finish(drop_reason="mark_to_drop() in control SfcIngress")
    >>> outcome_text(t)
    'dropped after firewall'
    """
    if trace.dropped:
        reason = trace.drop_reason or "no reason given"
        if reason.endswith(("control SfcIngress", "control SfcEgress")):
            nfs = trace.nfs()
            return f"dropped after {nfs[-1]}" if nfs else "dropped before any NF"
        return f"dropped: {reason}"
    return f"out on port {trace.egress_port}"


def timeline_text(trace: PacketTrace, kinds: ValueKinds | None = None, *,
                  path: str | None = None) -> str:
    """The timeline as text: a header line, then per pass its blocks and its end."""
    passes = timeline(trace, kinds)
    label = f" [{trace.label}]" if trace.label else ""
    on = f" {path}" if path else ""
    n = len(passes)
    lines = [f"packet {trace.packet_id}{label}{on}: in on port {trace.ingress_port}, "
             f"{n} pass{'es' if n != 1 else ''}, "
             f"NFs {' -> '.join(trace.nfs()) or '(none)'}, {outcome_text(trace)}"]
    for p in passes:
        lines.append(f"pass {p.number}")
        width = max((len(b.title) for b in p.blocks), default=0)
        where = ""
        for blk in p.blocks:
            if blk.where != where:
                where = blk.where
                lines.append(f" {where}:")
            steps = [str(s) for s in blk.steps] or ["(nothing)"]
            lines.append(f"  {blk.title:<{width}}  {steps[0]}")
            lines += [f"  {'':<{width}}  {s}" for s in steps[1:]]
        lines.append(f"  -> {p.end_text}")
    return "\n".join(lines)
