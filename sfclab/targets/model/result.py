"""What :meth:`~.switch.ModelSwitch.process` returns, and the trace it builds.

While a packet runs, the compiled closures append plain tuples to one list
(cheap); :class:`ProcessResult` turns them into a
:class:`~sfclab.targets.traces.trace.PacketTrace` only when ``result.trace`` is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..traces.trace import Event, Outputs, PacketTrace

__all__ = ["ProcessResult", "PacketIn", "Digest", "build_trace", "PATH_ACTIONS"]

#: The composed program's actions whose ``path_id`` argument names the service path.
PATH_ACTIONS = frozenset(("set_token", "take_branch", "enter"))


@dataclass(frozen=True, slots=True)
class PacketIn:
    """A packet the switch sent to the controller (out of the CPU port): the
    ``@controller_header("packet_in")`` fields and the bytes after that header."""

    metadata: dict[str, int]
    payload: bytes


@dataclass(frozen=True, slots=True)
class Digest:
    """One digest message: the struct type's name and its fields."""

    name: str
    data: dict[str, Any]


def build_trace(raw: list, packet_id: int, ingress_port: int,
                outputs: list[tuple[int, bytes]], drop_reason: str) -> PacketTrace:
    """A :class:`PacketTrace` from the raw event tuples of one ``process`` call."""
    t = PacketTrace(packet_id=packet_id, ingress_port=ingress_port)
    add = t.events.append
    pn = 0
    for ev in raw:
        k = ev[0]
        if k == "pass":
            pn = ev[1]
        elif k == "table":
            tbl, e = ev[1], ev[2]
            if e is None:
                add(Event(kind="table_miss", name=tbl.name, pass_no=pn))
            else:
                add(Event(kind="table_hit", name=tbl.name, pass_no=pn, entry=e.desc))
        elif k == "action":
            info, args = ev[1], ev[2]
            add(Event(kind="action", name=info.name, pass_no=pn,
                      args=tuple((n, v) for (n, _), v in zip(info.params, args))))
        elif k == "condition":
            add(Event(kind="condition", name=ev[1], pass_no=pn, value=ev[2]))
        elif k in ("parser_start", "pipeline_start", "pipeline_done", "deparser_done",
                   "parser_state", "extract", "deparser_emit", "nf"):
            add(Event(kind=k, name=ev[1], pass_no=pn))
        elif k == "parser_done":
            add(Event(kind=k, name=ev[1], pass_no=pn, value=ev[2]))
        elif k in ("recirculate", "resubmit"):      # (kind, token[, how: "… on port 196"])
            add(Event(kind=k, pass_no=pn, value=ev[1], name=ev[2] if len(ev) > 2 else ""))
        elif k == "checksum":
            add(Event(kind=k, name=ev[1], pass_no=pn, value=ev[2]))
        elif k in ("drop", "packet_out", "clone", "packet_in", "note"):
            add(Event(kind=k, pass_no=pn, value=ev[1]))
        elif k == "digest":
            add(Event(kind=k, name=ev[1], pass_no=pn, value=ev[2]))
        else:  # pragma: no cover - every producer is listed above
            add(Event(kind="note", pass_no=pn, value=repr(ev)))
    if outputs:
        t.finish(egress_port=outputs[0][0], output=outputs[0][1])
    else:
        t.finish(drop_reason=drop_reason or "no output")
    return t


@dataclass(eq=False)
class ProcessResult(Outputs):
    """The packets one input produced, and how.

    ``outputs`` are ``(port, bytes)`` in the order they left (the CPU port
    included); ``packet_ins`` the ones sent to the controller, decoded;
    ``digests`` the digest messages it caused; ``trace`` the per-packet trace."""

    outputs: list[tuple[int, bytes]]
    packet_ins: list[PacketIn] = field(default_factory=list)
    digests: list[Digest] = field(default_factory=list)
    passes: int = 1
    drop_reason: str = ""
    packet_id: int = 0
    ingress_port: int = 0
    _raw: list = field(default_factory=list, repr=False)
    _trace: PacketTrace | None = field(default=None, repr=False)
    #: The trace's label (given to the trace when it is built).
    label: str = ""

    @property
    def trace(self) -> PacketTrace:
        if self._trace is None:
            self._trace = build_trace(self._raw, self.packet_id, self.ingress_port,
                                      self.outputs, self.drop_reason)
            self._trace.label = self.label
        return self._trace

    def facts(self, path_actions: frozenset[str] = PATH_ACTIONS) -> tuple[int | None, list]:
        """What a summary counts, read from the raw events without building the trace:
        the ``path_id`` argument of the last action named in *path_actions* (the
        composed program's ``set_token`` / ``take_branch`` / ``enter``; None: none ran)
        and ``(table, hit)`` for every table applied."""
        dp, tables = None, []
        for ev in self._raw:
            k = ev[0]
            if k == "table":
                tables.append((ev[1].name, ev[2] is not None))
            elif k == "action" and ev[1].name.rpartition(".")[2] in path_actions:
                for (name, _), v in zip(ev[1].params, ev[2]):
                    if name == "path_id":
                        dp = v
        return dp, tables
