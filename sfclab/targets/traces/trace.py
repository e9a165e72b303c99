"""Per-packet traces, the same for every target.

The embedded model records a :class:`PacketTrace` as it runs a packet; the BMv2
target builds the same objects from BMv2's event logger
(:mod:`sfclab.targets.bmv2.events`).  The notebook views, ``%sfc trace`` and
``sfclab diff-targets`` read only these objects, so they do not care which
target ran.

Events follow BMv2's event logger (packet in/out, parser start/extract/done,
pipeline start/done, condition, table hit/miss, action, deparser emit/done) plus
what sfclab's composed program adds: an ``nf`` event when a slot runs its NF,
``parser_state`` for each parser state entered, ``recirculate`` / ``resubmit`` /
``clone`` / ``drop`` / ``digest`` / ``checksum`` events, a ``server`` event where
the packet went out to a server, which ran NFs (``value``) and sent it back (a
one-switch program's detour, :mod:`sfclab.codegen.detour`), and ``note`` events in
which a target says in words what happened (a parser error, an ``exit``, a
recirculation limit, a BMv2 quirk).  Names are the program's
fully-qualified names (``MyIngress.slot3_firewall.acl``); the NF a name belongs
to is recovered from sfclab's stable slot names (``slot3_firewall``).

>>> t = PacketTrace(packet_id=1, ingress_port=1)
>>> t.add(Event(kind="pipeline_start", name="ingress"))
>>> t.add(Event(kind="table_hit", name="MyIngress.slot0_firewall.acl", entry="5-tuple deny"))
>>> t.add(Event(kind="packet_out", value=2))
>>> t.finish(egress_port=2)
>>> t.nfs(), t.passes, t.tables()
(['firewall'], 1, [('MyIngress.slot0_firewall.acl', True)])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...ir.values import ValueKinds

__all__ = ["EVENT_KINDS", "Event", "PacketTrace", "Outputs", "nf_of", "diff_traces", "server_text"]

EVENT_KINDS = (
    "packet_in", "parser_start", "parser_state", "extract", "parser_done", "pipeline_start",
    "pipeline_done", "condition", "table_hit", "table_miss", "action", "nf", "deparser_emit",
    "deparser_done", "checksum", "recirculate", "resubmit", "clone", "digest", "drop",
    "packet_out", "server", "note", "statements",
)

_SLOT = re.compile(r"(?:^|\.)slot(\d+)_([A-Za-z0-9_]+?)(?:_(\d+))?(?:\.|$)")
#: The tables the composed program's core puts after a slot (not the slot's NF).
_CORE_TABLE = re.compile(r"(?:^|\.)slot(\d+)_(branch|loop|save)$")


def nf_of(name: str) -> str | None:
    """The NF instance a program name belongs to (``slot3_nat_2`` → ``nat#2``), or None.

    A slot's own control tables (``slot2_branch``, ``slot4_loop``, ``slot3_save``)
    belong to no NF.

    >>> nf_of("MyIngress.slot3_firewall.acl"), nf_of("slot1_nat_2"), nf_of("rewinder")
    ('firewall', 'nat#2', None)
    >>> nf_of("SfcIngress.slot3_branch"), nf_of("SfcIngress.slot3_save")     # the core's tables
    (None, None)
    """
    m = _SLOT.search(name)
    if m is None or _CORE_TABLE.search(name):
        return None
    return m.group(2) + (f"#{m.group(3)}" if m.group(3) else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One step of a packet through a switch."""

    kind: str
    name: str = ""
    #: Which pass (0 = first) through the pipeline the event belongs to.
    pass_no: int = 0
    #: Table hits: the matched entry, described; actions: arguments.
    entry: str | None = None
    args: tuple[tuple[str, int], ...] = ()
    #: Conditions: the result; packet out / drop: the port or reason; pass
    #: boundaries: the token (path id, state, bitmap …) as a mapping.
    value: Any = None

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown trace event kind {self.kind!r}")

    def text(self, kinds: ValueKinds | None = None) -> str:
        """The event in words; addresses, MACs and ports in the matched entry and the
        action's arguments printed by their kind (*kinds*: the program's, default
        the NF library's)."""
        k, kv = self.kind, kinds or ValueKinds.library()
        if k == "table_hit":
            entry = kv.described(self.entry) if self.entry else ""
            return f"table {self.name}: hit" + (f" [{entry}]" if entry else "")
        if k == "table_miss":
            return f"table {self.name}: miss"
        if k == "action":
            return f"action {self.name}({kv.args(self.name, self.args)})"
        if k == "condition":
            return f"if {self.name}: {self.value}"
        if k in ("recirculate", "resubmit"):      # name: how, where a target says (TNA)
            return (f"{self.name or k} -> pass {self.pass_no + 1}"
                    + (f" {_token(self.value)}" if self.value else ""))
        if k == "packet_out":
            return f"out on port {self.value}"
        if k == "drop":
            return f"dropped: {self.value}"
        if k == "nf":
            return f"NF {self.name}"
        if k == "statements":
            return f"run {self.name}"
        if k == "server":
            return server_text(self)
        if k == "parser_state":
            return f"parser state {self.name}"
        if k == "parser_done" and self.value not in (None, "", "NoError"):
            return f"parser done {self.name}: error {self.value}"
        if k == "note":
            return f"note: {self.value}"
        if k == "packet_in":
            return f"in on port {self.value}"
        if k == "clone":
            return f"clone {self.value}"
        if k == "digest":
            return f"digest {self.name} {_token(self.value)}"
        if k == "checksum":
            return f"checksum {self.name}: {self.value}"
        return f"{k.replace('_', ' ')} {self.name}".rstrip()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "pass": self.pass_no}
        for key in ("name", "entry", "value"):
            v = getattr(self, key)
            if v not in (None, ""):
                d[key] = dict(v) if isinstance(v, Mapping) else v
        if self.args:
            d["args"] = dict(self.args)
        return d


def server_text(e: Event) -> str:
    """A ``server`` event in words: ``out on port 8 to its server, which ran ips;
    back with next NF 3``."""
    args = dict(e.args)
    ran = ", ".join(e.value) if e.value else "nothing"
    back = (f"; back with next NF {args['si']}" if "si" in args else "; it did not come back")
    return f"out on port {args.get('port', '?')} to its {e.name or 'server'}, which ran {ran}{back}"


def _token(tok: Any) -> str:
    if isinstance(tok, Mapping):
        return "(" + ", ".join(f"{k}={v}" for k, v in tok.items()) + ")"
    return str(tok)


@dataclass(slots=True, kw_only=True)
class PacketTrace:
    """Everything one packet did: events in order and how it left the switch."""

    packet_id: int
    ingress_port: int
    events: list[Event] = field(default_factory=list)
    egress_port: int | None = None
    dropped: bool = False
    drop_reason: str = ""
    output: bytes | None = None
    #: Which chain class sent it, when known (``web``), for the views.
    label: str = ""

    def add(self, event: Event) -> None:
        self.events.append(event)

    def finish(self, *, egress_port: int | None = None, drop_reason: str = "",
               output: bytes | None = None) -> None:
        self.egress_port = egress_port
        self.dropped = egress_port is None
        self.drop_reason = drop_reason if egress_port is None else ""
        self.output = output

    @property
    def passes(self) -> int:
        """Passes through the ingress pipeline (1 + recirculations/resubmits)."""
        starts = sum(1 for e in self.events if e.kind == "pipeline_start"
                     and e.name.lower().endswith("ingress"))
        return max(1, starts) if self.events else 0

    def nfs(self) -> list[str]:
        """NF instances the packet ran, in order (from ``nf`` events, which the model
        records, or else :meth:`nfs_seen`), a server's among them."""
        if not any(e.kind == "nf" for e in self.events):
            return self.nfs_seen()
        return [n for e in self.events if e.kind in ("nf", "server")
                for n in ((e.name,) if e.kind == "nf" else e.value)]

    def nfs_seen(self) -> list[str]:
        """NF instances named by the tables and actions the packet ran (sfclab's slot
        names), in order: what a switch's event logger can tell.  An NF that applies
        no table and calls no action of its own does not show."""
        out: list[str] = []
        last: tuple[int, str] | None = None
        for e in self.events:
            if e.kind == "server":
                out += e.value
                last = None
            elif e.kind in ("table_hit", "table_miss", "action"):
                nf = nf_of(e.name)
                if nf is not None and (e.pass_no, nf) != last:
                    out.append(nf)
                    last = (e.pass_no, nf)
        return out

    def tables(self) -> list[tuple[str, bool]]:
        return [(e.name, e.kind == "table_hit") for e in self.events
                if e.kind in ("table_hit", "table_miss")]

    @property
    def outcome(self) -> str:
        return f"port {self.egress_port}" if not self.dropped else f"drop ({self.drop_reason or 'no reason given'})"

    def text(self, kinds: ValueKinds | None = None) -> str:
        """Every event but the parser's and deparser's bookkeeping, one per line
        (values printed by their kind, as :meth:`Event.text`)."""
        head = f"packet {self.packet_id}" + (f" [{self.label}]" if self.label else "")
        lines = [f"{head}: in on port {self.ingress_port}, {self.passes} pass(es), "
                 f"NFs {' -> '.join(self.nfs()) or '(none)'}, {self.outcome}"]
        for e in self.events:
            if e.kind in ("parser_start", "deparser_done", "pipeline_done") or (
                    e.kind == "parser_done" and e.value in (None, "", "NoError")):
                continue
            lines.append(f"  [{e.pass_no}] {e.text(kinds)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"packet_id": self.packet_id, "ingress_port": self.ingress_port,
                "egress_port": self.egress_port, "dropped": self.dropped,
                "drop_reason": self.drop_reason, "passes": self.passes, "nfs": self.nfs(),
                "label": self.label, "output": self.output.hex() if self.output else None,
                "events": [e.to_dict() for e in self.events]}


class Outputs:
    """What a packet's result offers whichever target ran it: ``outputs`` are
    ``(port, bytes)`` in the order they left the switch."""

    outputs: list[tuple[int, bytes]]

    @property
    def dropped(self) -> bool:
        return not self.outputs

    @property
    def ports(self) -> list[int]:
        return [p for p, _ in self.outputs]

    def output(self, port: int | None = None) -> bytes | None:
        """The bytes sent out of *port* (the only output when None), or None."""
        if port is None:
            if len(self.outputs) > 1:
                raise ValueError(f"{len(self.outputs)} outputs: name the port")
            return self.outputs[0][1] if self.outputs else None
        return next((b for p, b in self.outputs if p == port), None)


def diff_traces(a: PacketTrace, b: PacketTrace, *,
                outputs: tuple[Iterable[tuple[int, bytes]], Iterable[tuple[int, bytes]]]
                | None = None, across: bool = False) -> list[str]:
    """What differs between two traces of the same packet on two targets:
    egress port or drop, output bytes, NF sequence, passes, tables applied.  NF
    sequences are compared as the tables and actions show them
    (:meth:`PacketTrace.nfs_seen`) unless both traces record NFs themselves.
    *across*: the targets run two architectures (v1model, TNA), whose passes and
    table names differ by design: those are not compared.

    *outputs*: both packets' ``(port, bytes)`` outputs, compared as sets of copies
    (a multicast's copies leave a switch in an order of its own) instead of the
    traces' single egress port and output."""
    out = []
    if outputs is not None:
        oa, ob = (sorted(o) for o in outputs)
        if [p for p, _ in oa] != [p for p, _ in ob]:
            out.append(f"outcome: {_ports_text(oa, a)} vs {_ports_text(ob, b)}")
        elif oa != ob:
            port, x, y = next((p, x, y) for (p, x), (_, y) in zip(oa, ob) if x != y)
            out.append(f"output bytes differ on port {port}: {x.hex()} vs {y.hex()}")
    else:
        if (a.dropped, a.egress_port) != (b.dropped, b.egress_port):
            out.append(f"outcome: {a.outcome} vs {b.outcome}")
        if a.output != b.output and not (a.dropped and b.dropped):
            out.append("output bytes differ: "
                       f"{(a.output or b'').hex()} vs {(b.output or b'').hex()}")
    both = all(any(e.kind == "nf" for e in t.events) for t in (a, b))
    na, nb = (a.nfs(), b.nfs()) if both else (a.nfs_seen(), b.nfs_seen())
    if na != nb:
        out.append(f"NFs: {' -> '.join(na)} vs {' -> '.join(nb)}")
    if across:
        return out
    if a.passes != b.passes:
        out.append(f"passes: {a.passes} vs {b.passes}")
    if a.tables() != b.tables():
        out.append("tables: " + _first_difference(a.tables(), b.tables()))
    return out


def _ports_text(outputs: list[tuple[int, bytes]], t: PacketTrace) -> str:
    if not outputs:
        return t.outcome if t.dropped else "drop"
    return ("port " if len(outputs) == 1 else "ports ") + ", ".join(str(p) for p, _ in outputs)


def _first_difference(x: Iterable, y: Iterable) -> str:
    xs, ys = list(x), list(y)
    for i in range(max(len(xs), len(ys))):
        l = xs[i] if i < len(xs) else None  # noqa: E741
        r = ys[i] if i < len(ys) else None
        if l != r:
            return f"#{i}: {l} vs {r}"
    return "equal"
