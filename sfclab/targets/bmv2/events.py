"""BMv2's event logger, decoded into :class:`~sfclab.targets.traces.trace.PacketTrace`.

``simple_switch_grpc --nanolog ipc:///tmp/sfclab-….ipc`` publishes one binary
message per step of every packet on a nanomsg/NNG PUB socket.  The layout is
``src/bm_sim/event_logger.cpp`` (and BMv2's ``tools/nanomsg_client.py``): a
packed little-endian 40-byte header ::

    int type; uint64 switch_id; uint32 cxt_id; uint64 sig; uint64 id; uint64 copy_id

(``struct`` format ``<iQIQQQ``) followed by one or two ``int``: the port for
packet in/out, the object id for parser/deparser/checksum/pipeline/action
events, the header id for extract/emit, ``condition_id, result`` for a
condition and ``table_id, entry_handle`` for a table hit.  Type 999
(CONFIG_CHANGE) is the header alone.

:class:`NameMap` maps the numeric ids to names with the BMv2 JSON the switch
runs (``parsers``, ``deparsers``, ``headers``, ``actions``, ``checksums`` and
each pipeline's ``tables`` and ``conditionals``); table and action names in
p4c's JSON are the fully qualified ones (``SfcIngress.slot0_firewall.acl``).
:func:`decode_events` groups messages per packet into traces;
:class:`EventSubscriber` receives them with ``pynng`` or ``nnpy`` when one is
installed (neither is a dependency of sfclab).

>>> names = NameMap.from_json({"pipelines": [{"name": "ingress", "id": 0,
...     "tables": [{"name": "SfcIngress.slot0_firewall.acl", "id": 3, "key": [{}]}],
...     "conditionals": []}], "actions": [{"name": "SfcIngress.slot0_firewall.deny", "id": 7}]})
>>> msgs = [pack_message(PACKET_IN, 1, packet_id=5),
...         pack_message(PIPELINE_START, 0, packet_id=5),
...         pack_message(TABLE_HIT, 3, 12, packet_id=5),
...         pack_message(ACTION_EXECUTE, 7, packet_id=5),
...         pack_message(PIPELINE_DONE, 0, packet_id=5)]
>>> [t] = decode_events(msgs, names)
>>> [(e.kind, e.name) for e in t.events]  # doctest: +NORMALIZE_WHITESPACE
[('packet_in', ''), ('pipeline_start', 'ingress'),
 ('table_hit', 'SfcIngress.slot0_firewall.acl'), ('action', 'SfcIngress.slot0_firewall.deny'),
 ('pipeline_done', 'ingress'), ('drop', '')]
>>> t.ingress_port, t.nfs(), t.dropped, t.events[2].entry
(1, ['firewall'], True, 'entry handle 12')
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import TargetError
from ..traces.trace import Event, PacketTrace

__all__ = [
    "PACKET_IN", "PACKET_OUT", "PARSER_START", "PARSER_DONE", "PARSER_EXTRACT",
    "DEPARSER_START", "DEPARSER_DONE", "DEPARSER_EMIT", "CHECKSUM_UPDATE",
    "PIPELINE_START", "PIPELINE_DONE", "CONDITION_EVAL", "TABLE_HIT", "TABLE_MISS",
    "ACTION_EXECUTE", "CONFIG_CHANGE", "MESSAGE_TYPES", "HEADER",
    "RawEvent", "decode_message", "pack_message", "NameMap", "TraceBuilder",
    "decode_events", "EventSubscriber", "subscriber_backend", "statements_text", "ActionArgs",
]

# The EventType enum of event_logger.cpp, in order.
(PACKET_IN, PACKET_OUT, PARSER_START, PARSER_DONE, PARSER_EXTRACT, DEPARSER_START,
 DEPARSER_DONE, DEPARSER_EMIT, CHECKSUM_UPDATE, PIPELINE_START, PIPELINE_DONE,
 CONDITION_EVAL, TABLE_HIT, TABLE_MISS, ACTION_EXECUTE) = range(15)
CONFIG_CHANGE = 999

#: Message type -> (name, number of trailing ``int`` fields).
MESSAGE_TYPES: dict[int, tuple[str, int]] = {
    PACKET_IN: ("PACKET_IN", 1), PACKET_OUT: ("PACKET_OUT", 1),
    PARSER_START: ("PARSER_START", 1), PARSER_DONE: ("PARSER_DONE", 1),
    PARSER_EXTRACT: ("PARSER_EXTRACT", 1), DEPARSER_START: ("DEPARSER_START", 1),
    DEPARSER_DONE: ("DEPARSER_DONE", 1), DEPARSER_EMIT: ("DEPARSER_EMIT", 1),
    CHECKSUM_UPDATE: ("CHECKSUM_UPDATE", 1), PIPELINE_START: ("PIPELINE_START", 1),
    PIPELINE_DONE: ("PIPELINE_DONE", 1), CONDITION_EVAL: ("CONDITION_EVAL", 2),
    TABLE_HIT: ("TABLE_HIT", 2), TABLE_MISS: ("TABLE_MISS", 1),
    ACTION_EXECUTE: ("ACTION_EXECUTE", 1), CONFIG_CHANGE: ("CONFIG_CHANGE", 0),
}

#: ``msg_hdr_t`` (packed): type, switch_id, cxt_id, sig, id, copy_id.
HEADER = struct.Struct("<iQIQQQ")


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One event-logger message, undecoded ids and all."""

    type: int
    switch_id: int
    cxt_id: int
    sig: int
    packet_id: int
    copy_id: int
    fields: tuple[int, ...] = ()

    @property
    def type_name(self) -> str:
        return MESSAGE_TYPES[self.type][0]


def decode_message(data: bytes) -> RawEvent:
    """Decode one message; :class:`ValueError` if it is short or of unknown type.

    >>> decode_message(pack_message(TABLE_MISS, 4, packet_id=9, copy_id=1))
    RawEvent(type=13, switch_id=0, cxt_id=0, sig=0, packet_id=9, copy_id=1, fields=(4,))
    """
    if len(data) < HEADER.size:
        raise ValueError(f"event-logger message of {len(data)} bytes, shorter than its "
                         f"{HEADER.size}-byte header")
    type_, switch_id, cxt_id, sig, pid, copy_id = HEADER.unpack_from(data)
    try:
        _, n = MESSAGE_TYPES[type_]
    except KeyError:
        raise ValueError(f"unknown event-logger message type {type_}") from None
    body = struct.Struct(f"<{n}i")
    if len(data) < HEADER.size + body.size:
        raise ValueError(f"{MESSAGE_TYPES[type_][0]} message of {len(data)} bytes; "
                         f"expected {HEADER.size + body.size}")
    return RawEvent(type_, switch_id, cxt_id, sig, pid, copy_id,
                    body.unpack_from(data, HEADER.size))


def pack_message(type_: int, *fields: int, switch_id: int = 0, cxt_id: int = 0, sig: int = 0,
                 packet_id: int = 0, copy_id: int = 0) -> bytes:
    """A message as BMv2 sends it (for tests and replays).

    >>> len(pack_message(PACKET_IN, 3)), len(pack_message(CONDITION_EVAL, 1, 1))
    (44, 48)
    """
    _, n = MESSAGE_TYPES[type_]
    if len(fields) != n:
        raise ValueError(f"{MESSAGE_TYPES[type_][0]} takes {n} field(s), got {len(fields)}")
    # Fields are C ints: an entry handle (uint32) is static_cast<int> as in BMv2.
    ints = [(int(v) + 2**31) % 2**32 - 2**31 for v in fields]
    return (HEADER.pack(type_, switch_id, cxt_id, sig, packet_id, copy_id)
            + struct.pack(f"<{n}i", *ints))


@dataclass(slots=True)
class NameMap:
    """BMv2 numeric ids -> names, from the BMv2 JSON the switch runs."""

    names: dict[tuple[str, int], str] = field(default_factory=dict)
    #: Condition id -> its source text (p4c's ``source_info.source_fragment``).
    conditions: dict[int, str] = field(default_factory=dict)
    #: Tables p4c synthesised for direct action calls (``tbl_…``, no key).
    synthetic_tables: set[int] = field(default_factory=set)
    ingress: str = "ingress"
    #: Action id -> what it decides of the packet's fate (:func:`action_verdict`).
    verdicts: dict[int, str] = field(default_factory=dict)
    #: Actions p4c made of plain statements (``program406``: no P4 name, called by a
    #: synthetic table): id -> the statements they run (:func:`statements_text`).
    statements: dict[int, str] = field(default_factory=dict)
    #: Actions whose last deciding primitive sets ``standard_metadata.mcast_grp``: a
    #: pipeline ending with one hands the packet to the replication engine.
    multicasts: set[int] = field(default_factory=set)
    #: Action id -> its parameters' names (the JSON's ``runtime_data``).
    params: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Table id -> the action and data of a default entry the program fixes
    #: (``action_entry_const``: p4c's tables for direct action calls, ``const
    #: default_action``), which no runtime changes.
    const_defaults: dict[int, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    #: Table name -> its key fields as P4Info names them (``hdr.ipv4.$valid$`` for
    #: ``hdr.ipv4.isValid()``), with their widths, to describe an entry.
    keys: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, cfg: Mapping[str, Any] | str | bytes | os.PathLike) -> NameMap:
        """From the JSON as a mapping, its text, or a path to it."""
        if isinstance(cfg, os.PathLike):
            cfg = json.loads(open(cfg, "rb").read())
        elif isinstance(cfg, (str, bytes)):
            cfg = json.loads(cfg)
        m = cls()
        for kind in ("header", "parser", "deparser", "action", "checksum", "pipeline"):
            for obj in cfg.get(kind + "s", ()):
                m.names[(kind, obj["id"])] = obj["name"]
        for a in cfg.get("actions", ()):
            if (v := action_verdict(a.get("primitives") or ())) is not None:
                m.verdicts[a["id"]] = v
                if v == "forward" and _last_decider(a["primitives"]) == _FATE_FIELDS[1]:
                    m.multicasts.add(a["id"])
            m.params[a["id"]] = tuple(p.get("name", "") for p in a.get("runtime_data") or ())
        made = set()
        widths = _field_widths(cfg)
        for pipe in cfg.get("pipelines", ()):
            for t in pipe.get("tables", ()):
                m.names[("table", t["id"])] = t["name"]
                if (d := _const_default(t.get("default_entry"))) is not None:
                    m.const_defaults[t["id"]] = d
                m.keys[t["name"]] = tuple(
                    (str(k.get("name", "")), widths.get(tuple(k.get("target") or ()), 0))
                    for k in t.get("key", ()))
                if t["name"].startswith("tbl_") and not t.get("key"):
                    m.synthetic_tables.add(t["id"])
                    made.update(t.get("action_ids", ()))
            for c in pipe.get("conditionals", ()):
                m.names[("condition", c["id"])] = c["name"]
                frag = (c.get("source_info") or {}).get("source_fragment")
                if frag:
                    m.conditions[c["id"]] = " ".join(str(frag).split())
        files: dict[str, list[str] | None] = {}

        def source(filename: str) -> list[str] | None:
            """The lines of a P4 file p4c compiled (beside the JSON), if it is there."""
            if filename not in files:
                try:
                    files[filename] = Path(filename).read_text().splitlines()
                except (OSError, UnicodeDecodeError, ValueError):
                    files[filename] = None
            return files[filename]

        for a in cfg.get("actions", ()):
            if a["id"] in made and "." not in a["name"]:
                m.statements[a["id"]] = statements_text(a.get("primitives") or (), a["name"],
                                                        source)
        pipes = [p["name"] for p in cfg.get("pipelines", ())]
        if pipes and "ingress" not in pipes:
            m.ingress = pipes[0]
        return m

    def name(self, kind: str, obj_id: int) -> str:
        """The name, or ``kind#id`` when the JSON does not have it."""
        return self.names.get((kind, obj_id), f"{kind}#{obj_id}")


def _field_widths(cfg: Mapping[str, Any]) -> dict[tuple[str, ...], int]:
    """``(header instance, field)`` -> its width in bits, from the JSON's headers."""
    types = {h["name"]: h.get("fields", ()) for h in cfg.get("header_types", ())}
    out: dict[tuple[str, ...], int] = {}
    for h in cfg.get("headers", ()):
        out[(h["name"], "$valid$")] = 1
        for f in types.get(h.get("header_type"), ()):
            if isinstance(f[1], int):
                out[(h["name"], f[0])] = f[1]
    return out


def _const_default(entry: Any) -> tuple[int, tuple[int, ...]] | None:
    """A table's ``default_entry`` as (action id, data) when the program fixes it."""
    if not isinstance(entry, Mapping) or not entry.get("action_entry_const"):
        return None
    try:
        return entry["action_id"], tuple(int(str(v), 0) for v in entry.get("action_data") or ())
    except (KeyError, ValueError):
        return None


def statements_text(primitives: Iterable[Mapping[str, Any]], name: str = "",
                    source: Callable[[str], list[str] | None] | None = None) -> str:
    """What an action p4c made of plain statements runs, as the P4 source says it.

    Each primitive's ``source_info`` points at its statement: read from the program's
    file where *source(filename)* gives its lines (p4c writes the file beside the JSON),
    else from the ``source_fragment``, which p4c cuts short (``= 0; ...``, or without
    saying so); text that is not a statement (a constant's value) is left out, and so
    is a part of another primitive's statement (p4c copies a ``hash`` call's field list
    into temporaries first, each pointing at its field inside the call).  When nothing
    is left, the statement on the line the action is named after (``program446``: line
    446), else the name.

    >>> statements_text([{"op": "assign", "source_info": {"source_fragment": "a = b"}},
    ...                  {"op": "assign", "source_info": {"source_fragment": "= 0; ..."}},
    ...                  {"op": "exit", "source_info": {"source_fragment": "exit"}}])
    'a = b; exit'
    >>> lines = ["", "    const bit<9> P = 5;", "    x = P;  // z"]
    >>> statements_text([{"source_info": {"filename": "/w/program.p4", "line": 2, "column": 22,
    ...                                   "source_fragment": "5"}}], "program3", lambda f: lines)
    'x = P'
    >>> lines = ["    hash(h, A.crc16, 0, {s, d}, 256);"]
    >>> at = lambda col, frag: {"source_info": {"filename": "p.p4", "line": 1, "column": col,
    ...                                         "source_fragment": frag}}
    >>> statements_text([at(26, "s"), at(29, "d"), at(5, "hash(h, A.crc16, 0, {s, d}, 256)")],
    ...                 "program1", lambda f: lines)
    'hash(h, A.crc16, 0, {s, d}, 256)'
    """
    spans: list[tuple[str, int, int, int, str]] = []   # (file, line, start, end, text)
    for prim in primitives:
        info = prim.get("source_info") or {}
        text = _source_statement(source, info) if source else None
        if text is None:
            frag = " ".join(str(info.get("source_fragment") or "").split())
            text = None if frag.endswith("...") else frag
        if text and _statement_like(text):
            start = info.get("column") if isinstance(info.get("column"), int) else 0
            spans.append((str(info.get("filename") or ""), info.get("line") or 0, start,
                          start + len(text), text))
    out: list[str] = []
    for f, line, start, end, text in spans:
        inside = any((f2, l2) == (f, line) and s2 < start and end <= e2 and line
                     for f2, l2, s2, e2, _ in spans)
        if not inside and text not in out:
            out.append(text)
    files = [str((p.get("source_info") or {}).get("filename") or "") for p in primitives]
    m = re.fullmatch(r"([A-Za-z_]*?)(\d+)(?:_\d+)?", name)
    if not out and source is not None and m:
        named = [f for f in files if Path(f).stem == m.group(1)]
        lines = source(named[0]) if named else None
        if lines and 0 < int(m.group(2)) <= len(lines):
            text = lines[int(m.group(2)) - 1].split(";")[0].strip()
            if _statement_like(text):
                out.append(text)
    return "; ".join(out) or name


def _source_statement(source: Callable[[str], list[str] | None], info: Mapping[str, Any]
                      ) -> str | None:
    lines = source(str(info.get("filename") or ""))
    line, col = info.get("line"), info.get("column")
    if not lines or not isinstance(line, int) or not 0 < line <= len(lines):
        return None
    return " ".join(lines[line - 1][max(0, (col or 1) - 1):].split(";")[0].split())


def _statement_like(text: str) -> bool:
    """An assignment, a call or ``exit`` / ``return`` (not a bare value, not a line cut
    after its ``=``, not the tail of a call cut at an argument: brackets balance)."""
    if text.startswith("=") or not ("=" in text or "(" in text or text in ("exit", "return")):
        return False
    depth = 0
    for ch in text:
        depth += (ch in "({[") - (ch in ")}]")
        if depth < 0:
            return False
    return depth == 0


#: ``(table, entry handle or None for its default entry)`` -> the action the switch holds
#: there and its data (:meth:`~sfclab.targets.bmv2.entries.HeldEntries.action_args`), or None.
ActionArgs = Callable[[str, "int | None"], "tuple[str, Sequence[int]] | None"]

_FATE_FIELDS = (["standard_metadata", "egress_spec"], ["standard_metadata", "mcast_grp"])
_OTHER_FATES = {"resubmit", "resubmit_preserving_field_list", "recirculate",
                "recirculate_preserving_field_list", "clone_ingress_pkt_to_egress",
                "clone_egress_pkt_to_egress", "clone", "clone_preserving_field_list"}


def action_verdict(primitives: Iterable[Mapping[str, Any]]) -> str | None:
    """What an action (its BMv2 JSON ``primitives``) last decides of the packet's fate:
    ``"drop"`` (``mark_to_drop``), ``"forward"`` (it sets ``egress_spec`` or
    ``mcast_grp``), ``"other"`` (it resubmits, recirculates or clones: no telling), or
    None (nothing).  BMv2 logs no drop; a pipeline whose last deciding action dropped
    the packet is a drop for sure, one that forwarded it is not (:mod:`sfclab.targets.bmv2.batch`).

    >>> action_verdict([{"op": "assign", "parameters": [
    ...     {"type": "field", "value": ["standard_metadata", "egress_spec"]}, {}]},
    ...     {"op": "mark_to_drop", "parameters": []}])
    'drop'
    """
    out = None
    for prim in primitives:
        op = prim.get("op")
        if op in _OTHER_FATES:
            return "other"
        if op == "mark_to_drop":
            out = "drop"
        elif op == "assign" and (prim.get("parameters") or [{}])[0].get("value") in _FATE_FIELDS:
            out = "forward"
    return out


def _last_decider(primitives: Iterable[Mapping[str, Any]]) -> list[str] | None:
    """The field the last ``assign`` to ``egress_spec`` / ``mcast_grp`` of an action sets."""
    out = None
    for prim in primitives:
        target = (prim.get("parameters") or [{}])[0].get("value")
        if prim.get("op") == "assign" and target in _FATE_FIELDS:
            out = target
    return out


#: The steps every pass of a packet logs in pairs (``simple_switch``'s ingress and egress
#: threads): a pair left open, or closed without being opened, means events were lost.
_PAIRS = ((PARSER_START, PARSER_DONE), (DEPARSER_START, DEPARSER_DONE))


@dataclass(slots=True)
class _State:
    trace: PacketTrace
    pass_no: int = 0
    parsed: bool = False        # a parser ran in this pass
    egress: bool = False        # the packet went through egress in this pass
    outs: list[int] = field(default_factory=list)
    #: (pass, message type) -> how many; for :meth:`TraceBuilder.gaps`
    counts: dict[tuple[int, int], int] = field(default_factory=dict)
    #: a table was applied and its action is not logged yet
    awaiting_action: bool = False
    broken: list[str] = field(default_factory=list)
    last_type: int = -1
    #: the last deciding action of the current pipeline (:func:`action_verdict`)
    verdict: str | None = None
    #: the table applied last (id) and the entry it hit (handle; None: a miss)
    applied: tuple[int, int | None] | None = None
    #: the egress passes of the current pass (one per copy the switch made of it), how
    #: many of them dropped their copy, and the deciding egress verdict of each copy whose
    #: egress pipeline is running (by BMv2's copy id)
    egress_passes: int = 0
    egress_drops: int = 0
    #: the current pass's ingress handed the packet to the replication engine (its last
    #: deciding action set ``mcast_grp``)
    multicast: bool = False
    copy_verdicts: dict[int, str | None] = field(default_factory=dict)


class TraceBuilder:
    """Builds one :class:`PacketTrace` per packet from messages in arrival order.

    A packet is BMv2's packet id (per switch); recirculated and resubmitted
    copies keep it, so a parser starting again opens the next pass (``recirculate``
    when the previous pass went through egress, ``resubmit`` otherwise).
    *entry_name* describes a table hit from ``(table, entry handle)``; the
    default says the handle.  *action_args* gives the action and its data the switch
    holds for ``(table, entry handle)`` (handle None: the table's default entry), so
    an action shows its arguments as the model's trace does (BMv2 logs only the
    action's id); without it only the defaults the program fixes show theirs.
    Synthetic tables (p4c's ``tbl_…`` for direct action
    calls) are left out unless *synthetic_tables* is true; their actions stay.
    Multicast copies show as further ``packet_out`` events; an ingress clone
    (sfclab's programs make none) is re-parsed, so it would read as another pass.
    """

    def __init__(self, names: NameMap, *, device_id: int | None = None,
                 entry_name: Callable[[str, int], str | None] | None = None,
                 synthetic_tables: bool = False,
                 action_args: ActionArgs | None = None) -> None:
        self.names = names
        self.device_id = device_id
        self.entry_name = entry_name
        self.action_args = action_args
        self.synthetic_tables = synthetic_tables
        self._open: dict[tuple[int, int], _State] = {}
        self.config_changes = 0

    def feed(self, msg: bytes | RawEvent) -> None:
        ev = decode_message(msg) if isinstance(msg, (bytes, bytearray, memoryview)) else msg
        if self.device_id is not None and ev.switch_id != self.device_id:
            return
        if ev.type == CONFIG_CHANGE:
            self.config_changes += 1
            return
        key = (ev.switch_id, ev.packet_id)
        st = self._open.get(key)
        if st is None:
            port = ev.fields[0] if ev.type == PACKET_IN else -1
            st = self._open[key] = _State(PacketTrace(packet_id=ev.packet_id, ingress_port=port))
            if ev.type != PACKET_IN:
                self._add(st, "note", value="the packet arrived before events were read: "
                          "its first steps are missing")
        self._check(st, ev)
        self._apply(st, ev)

    def _check(self, st: _State, ev: RawEvent) -> None:
        """Count the paired steps and check that each table's action follows it (BMv2
        logs a table's hit or miss, then the action it runs; p4c turns a direct action
        call into a table of its own)."""
        t = ev.type
        if t == PARSER_START and st.parsed:
            pass_no = st.pass_no + 1
        else:
            pass_no = st.pass_no
        k = (pass_no, t if t not in (PIPELINE_START, PIPELINE_DONE) else (t, ev.fields[0]))
        st.counts[k] = st.counts.get(k, 0) + 1
        if st.awaiting_action and t != ACTION_EXECUTE:
            st.broken.append(f"the action of a table applied in pass {pass_no} is missing")
        elif t == ACTION_EXECUTE and not st.awaiting_action:
            st.broken.append(f"pass {pass_no}: an action came without its table")
        st.awaiting_action = t in (TABLE_HIT, TABLE_MISS)
        st.last_type = t

    def last_step(self, packet_id: int, switch_id: int | None = None) -> int | None:
        """The message type of the last event of a packet (None if none came)."""
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        return st.last_type if st is not None else None

    def fate(self, packet_id: int, switch_id: int | None = None) -> str | None:
        """What the pipeline the packet is in (or just left) decided so far: ``"drop"``,
        ``"forward"``, or None when it cannot be told (no deciding action, a resubmit or
        clone, or events missing)."""
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        if st is None or st.verdict not in ("drop", "forward") or st.broken \
                or st.awaiting_action:
            return None
        return st.verdict

    def unfinished(self, packet_id: int, switch_id: int | None = None) -> str | None:
        """Where a packet's events stop short of an end, in words (None: they end).

        BMv2 logs each step as its threads take it (receive, ingress, egress), so a
        switch descheduled mid-packet goes quiet with the packet half done.  The events
        end when a ``PACKET_OUT`` came, or when the last one closes a pipeline whose last
        deciding action dropped the packet or does not tell (:meth:`fate`); a pipeline
        that forwarded it, or any other step, is followed by more.

        >>> b = TraceBuilder(NameMap(), device_id=0)
        >>> b.feed(pack_message(PACKET_IN, 1, packet_id=4))
        >>> b.unfinished(4)
        'its events stop at PACKET_IN'
        >>> b.feed(pack_message(PACKET_OUT, 2, packet_id=4))
        >>> b.unfinished(4) is None
        True
        """
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        if st is None or st.outs:
            return None
        if st.last_type == PIPELINE_DONE:
            if self.fate(packet_id, switch_id) != "forward":
                return None
            return "its pipeline forwarded it, and its PACKET_OUT did not follow"
        return f"its events stop at {MESSAGE_TYPES[st.last_type][0]}"

    def gaps(self, packet_id: int, switch_id: int | None = None) -> list[str]:
        """What the events of a packet show was lost (empty when its log is whole as far as
        its structure tells): steps BMv2 logs in pairs (parser, each pipeline, deparser)
        with one half missing, a table without its action, a deparsed last pass without
        its ``PACKET_OUT``."""
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        if st is None:
            return ["no events came for it"]
        out = list(st.broken)
        if st.awaiting_action:
            out.append("the action of the last table applied is missing")
        if st.counts.get((0, PACKET_IN), 0) != 1:
            out.append("its PACKET_IN is missing")
        pipes = {k[1][1] for k in st.counts if isinstance(k[1], tuple)}
        for n in range(st.pass_no + 1):
            for a, b in _PAIRS + tuple(((PIPELINE_START, p), (PIPELINE_DONE, p)) for p in pipes):
                ca, cb = st.counts.get((n, a), 0), st.counts.get((n, b), 0)
                if ca != cb:
                    name = MESSAGE_TYPES[a[0] if isinstance(a, tuple) else a][0]
                    out.append(f"pass {n}: {ca} {name} but {cb} matching DONE")
            if st.counts.get((n, PARSER_START), 0) != 1:
                out.append(f"pass {n}: its PARSER_START is missing")
        last = st.pass_no
        if st.counts.get((last, DEPARSER_DONE), 0) and not st.outs:
            out.append("deparsed, but its PACKET_OUT is missing")
        return out

    def _add(self, st: _State, kind: str, name: str = "", **kw: Any) -> None:
        st.trace.add(Event(kind=kind, name=name, pass_no=st.pass_no, **kw))

    def _apply(self, st: _State, ev: RawEvent) -> None:
        n, t, f = self.names, ev.type, ev.fields
        if t == PACKET_IN:
            self._add(st, "packet_in", value=f[0])
        elif t == PACKET_OUT:
            st.outs.append(f[0])
            self._add(st, "packet_out", value=f[0])
        elif t == PARSER_START:
            if st.parsed:
                kind = "recirculate" if st.egress else "resubmit"
                st.pass_no += 1
                st.egress = False
                st.egress_passes = st.egress_drops = 0
                st.multicast = False
                st.copy_verdicts.clear()
                self._add(st, kind)
            st.parsed = True
            self._add(st, "parser_start", n.name("parser", f[0]))
        elif t == PARSER_DONE:
            self._add(st, "parser_done", n.name("parser", f[0]))
        elif t == PARSER_EXTRACT:
            self._add(st, "extract", n.name("header", f[0]))
        elif t in (DEPARSER_START, DEPARSER_DONE):
            st.egress = True
            if t == DEPARSER_DONE:
                self._add(st, "deparser_done", n.name("deparser", f[0]))
        elif t == DEPARSER_EMIT:
            self._add(st, "deparser_emit", n.name("header", f[0]))
        elif t == CHECKSUM_UPDATE:
            self._add(st, "checksum", n.name("checksum", f[0]), value="updated")
        elif t in (PIPELINE_START, PIPELINE_DONE):
            name = n.name("pipeline", f[0])
            if t == PIPELINE_START:
                # in egress, ingress let it through; each ingress decides anew
                st.verdict = None if name == n.ingress else "forward"
            if name != n.ingress:
                self._egress_copy(st, ev, t == PIPELINE_START)
            self._add(st, "pipeline_start" if t == PIPELINE_START else "pipeline_done", name)
        elif t == CONDITION_EVAL:
            text = n.conditions.get(f[0]) or n.name("condition", f[0])
            self._add(st, "condition", text, value=bool(f[1]))
        elif t in (TABLE_HIT, TABLE_MISS):
            st.applied = (f[0], f[1] & 0xFFFFFFFF if t == TABLE_HIT else None)
            if f[0] in n.synthetic_tables and not self.synthetic_tables:
                return
            table = n.name("table", f[0])
            if t == TABLE_MISS:
                self._add(st, "table_miss", table)
            else:
                handle = f[1] & 0xFFFFFFFF
                desc = self.entry_name(table, handle) if self.entry_name else None
                self._add(st, "table_hit", table,           # "": an entry of wildcards
                          entry=desc if desc is not None else f"entry handle {handle}")
        elif t == ACTION_EXECUTE:
            v = n.verdicts.get(f[0])
            if v is not None and st.verdict != "other":
                st.verdict = v
                if not st.egress:
                    st.multicast = f[0] in n.multicasts
            if v is not None and st.copy_verdicts.get(ev.copy_id, "other") != "other":
                st.copy_verdicts[ev.copy_id] = v
            if f[0] in n.statements:            # p4c's, of plain statements: what it runs
                self._add(st, "statements", n.statements[f[0]])
            else:
                self._add(st, "action", n.name("action", f[0]), args=self._args(st, f[0]))
            st.applied = None

    @staticmethod
    def _egress_copy(st: _State, ev: RawEvent, start: bool) -> None:
        """An egress pipeline starts or ends for one copy of the packet (BMv2 runs one
        per copy it makes: a multicast's replicas carry copy ids of their own, and their
        egress threads run side by side)."""
        if start:
            st.egress = True
            st.egress_passes += 1
            st.copy_verdicts[ev.copy_id] = "forward"
        elif st.copy_verdicts.pop(ev.copy_id, None) == "drop":
            st.egress_drops += 1

    def multicast(self, packet_id: int, switch_id: int | None = None) -> PacketTrace | None:
        """The packet's trace so far when its current pass's ingress handed it to the
        replication engine (its last deciding action set ``mcast_grp``), else None."""
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        return st.trace if st is not None and st.multicast else None

    def copies_out(self, packet_id: int, switch_id: int | None = None, *,
                   replicas: int = 0) -> int:
        """How many ``PACKET_OUT`` the packet's events announce so far: one per egress
        pass of its last pass (one per copy the switch made: a multicast makes one per
        replica) but those whose egress dropped their copy (its last deciding action was
        ``mark_to_drop``).  An egress still running counts (it may yet drop its copy).
        *replicas*: how many copies the switch made, when known otherwise (a multicast
        group's size: replicas whose egress has not started yet count too).

        >>> b = TraceBuilder(NameMap.from_json({"pipelines": [
        ...     {"name": "ingress", "id": 0}, {"name": "egress", "id": 1}]}), device_id=0)
        >>> for copy in (1, 2, 3):
        ...     b.feed(pack_message(PIPELINE_START, 1, packet_id=4, copy_id=copy))
        >>> b.feed(pack_message(PIPELINE_DONE, 1, packet_id=4, copy_id=2))
        >>> b.copies_out(4), b.copies_out(5)
        (3, 0)
        """
        st = self._open.get((self.device_id if switch_id is None else switch_id, packet_id))
        return 0 if st is None else max(st.egress_passes, replicas) - st.egress_drops

    def _args(self, st: _State, action: int) -> tuple[tuple[str, int], ...]:
        """The arguments *action* ran with: the data of the entry (or default entry) of
        the table applied before it, where that entry holds this action."""
        params = self.names.params.get(action, ())
        if not params or st.applied is None:
            return ()
        table, handle = st.applied
        fixed = self.names.const_defaults.get(table) if handle is None else None
        if fixed is not None:
            found: tuple[str, Sequence[int]] | None = (self.names.name("action", fixed[0]),
                                                       fixed[1])
        elif self.action_args is not None:
            found = self.action_args(self.names.name("table", table), handle)
        else:
            found = None
        if found is None or found[0] != self.names.name("action", action) \
                or len(found[1]) != len(params):
            return ()
        return tuple(zip(params, found[1]))

    def packets(self) -> list[int]:
        """Ids of the packets seen so far."""
        return [pid for _, pid in self._open]

    def finish(self) -> list[PacketTrace]:
        """Close every packet seen so far: out on its first packet-out port (a
        multicast's other copies stay as ``packet_out`` events), else dropped."""
        out = []
        for st in self._open.values():
            tr = st.trace
            if st.outs:
                tr.finish(egress_port=st.outs[0])
            else:
                reason = "no packet out: dropped by the program"
                tr.add(Event(kind="drop", pass_no=st.pass_no, value=reason))
                tr.finish(egress_port=None, drop_reason=reason)
            out.append(tr)
        self._open.clear()
        return sorted(out, key=lambda tr: tr.packet_id)


def decode_events(messages: Iterable[bytes | RawEvent], names: NameMap, *,
                  device_id: int | None = None,
                  entry_name: Callable[[str, int], str | None] | None = None,
                  synthetic_tables: bool = False,
                  action_args: ActionArgs | None = None) -> list[PacketTrace]:
    """Traces of every packet in *messages* (all of each packet's messages must be
    there: a packet with no packet-out counts as dropped); see :class:`TraceBuilder`."""
    b = TraceBuilder(names, device_id=device_id, entry_name=entry_name,
                     synthetic_tables=synthetic_tables, action_args=action_args)
    for m in messages:
        b.feed(m)
    return b.finish()


# -- receiving -----------------------------------------------------------------------------

_INSTALL_HINT = ("pip install pynng (or nnpy); neither is a dependency of sfclab, and the "
                 "switch needs --nanolog and a BMv2 built with the event logger (-DBMELOG)")


def subscriber_backend(prefer: str | None = None) -> str:
    """``"pynng"`` or ``"nnpy"``, whichever imports (*prefer* first);
    :class:`TargetError` when neither does."""
    import importlib

    order = ["pynng", "nnpy"]
    if prefer:
        order = [prefer] + [o for o in order if o != prefer]
    for mod in order:
        try:
            importlib.import_module(mod)
        except ImportError:
            continue
        return mod
    raise TargetError("cannot read BMv2's event logger: neither pynng nor nnpy is installed",
                      hint=_INSTALL_HINT)


class EventSubscriber:
    """A SUB socket on a switch's ``--nanolog`` address.

    PUB/SUB drops what is sent before the subscription is connected, so open the
    subscriber before sending packets (it dials in the background and reconnects
    if the switch starts later).  A ``tcp://`` address (a switch sfclab starts) is
    read by sfclab's own subscriber (backend ``sp``, :mod:`sfclab.targets.bmv2.sp`: no library, read
    in bulk); ``ipc://`` with pynng or nnpy.

    >>> EventSubscriber("ipc:///tmp/x.ipc", NameMap(), backend="no-such-backend")
    Traceback (most recent call last):
    ...
    sfclab.errors.TargetError: cannot read BMv2's event logger: unknown backend 'no-such-backend'
    hint: use 'pynng', 'nnpy' or 'sp'
    """

    def __init__(self, address: str, names: NameMap, *, backend: str | None = None,
                 device_id: int | None = None, connect=None) -> None:
        """*connect(host, port, rcvbuf=…)*: how a ``tcp://`` address is reached (in the
        switch's own namespace: :meth:`sfclab.targets.bmv2.target.Bmv2Target.tcp`); only sfclab's own reader
        (``sp``) can use it."""
        if backend not in (None, "pynng", "nnpy", "sp"):
            raise TargetError(f"cannot read BMv2's event logger: unknown backend {backend!r}",
                              hint="use 'pynng', 'nnpy' or 'sp'")
        self.address = address
        self.names = names
        self.device_id = device_id
        self._dial = connect if address.startswith("tcp://") else None
        if self._dial is not None and backend not in (None, "sp"):
            raise TargetError(f"{address} is in the switch's own network namespace: only "
                              f"sfclab's own reader reaches it, not {backend}",
                              hint="backend='sp' (or leave it out)")
        if backend is None and address.startswith("tcp://"):
            backend = "sp"          # sfclab's own reader (:mod:`sfclab.targets.bmv2.sp`), in bulk
        self.backend = backend if backend == "sp" else subscriber_backend(backend)
        self._sock: Any = None
        self._ready: list[bytes] = []
        self._timeout_exc: tuple[type[BaseException], ...] = ()
        self._try_again: type[BaseException] = BlockingIOError
        self._open()

    def _open(self) -> None:
        if self.backend == "sp":
            from .sp import SpSubscriber

            self._sock = SpSubscriber(self.address, dial=self._dial)
        elif self.backend == "pynng":
            import pynng

            self._sock = pynng.Sub0(recv_timeout=100, recv_buffer_size=8192)
            self._sock.subscribe(b"")
            self._sock.dial(self.address, block=False)
            from pynng.exceptions import Timeout, TryAgain

            self._timeout_exc = (Timeout,)
            self._try_again = TryAgain
        else:
            import nnpy
            from nnpy.errors import NNError

            self._sock = nnpy.Socket(nnpy.AF_SP, nnpy.SUB)
            self._sock.connect(self.address)
            self._sock.setsockopt(nnpy.SUB, nnpy.SUB_SUBSCRIBE, "")
            self._sock.setsockopt(nnpy.SOL_SOCKET, nnpy.RCVTIMEO, 100)
            self._timeout_exc = (NNError,)

    def wait_connected(self, timeout: float = 2.0) -> bool:
        """Wait until the socket is connected to the switch (PUB/SUB drops what is
        published before); False if it is not after *timeout* seconds."""
        import time

        if self.backend == "sp":
            return self._sock.wait_connected(timeout)
        end = time.monotonic() + timeout
        while True:
            pipes = getattr(self._sock, "pipes", None)
            if pipes is None:               # nnpy cannot say: give it a moment
                time.sleep(min(0.2, timeout))
                return True
            if pipes:
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.01)

    def recv(self, wait: float = 0.1) -> bytes | None:
        """One message, or None if none came within *wait* seconds."""
        if self.backend == "sp":
            if not self._ready:
                self._ready = self._sock.recv(wait)[::-1]
            return self._ready.pop() if self._ready else None
        ms = max(1, int(wait * 1000))
        try:
            if self.backend == "pynng":
                if wait <= 0:
                    try:
                        return bytes(self._sock.recv(block=False))
                    except self._try_again:
                        return None
                self._sock.recv_timeout = ms
            else:
                import nnpy

                self._sock.setsockopt(nnpy.SOL_SOCKET, nnpy.RCVTIMEO, ms)
            return bytes(self._sock.recv())
        except self._timeout_exc as e:
            code = getattr(e, "error_no", None)      # nnpy: only a timeout is quiet
            if code is not None and code not in (errno.ETIMEDOUT, errno.EAGAIN):
                raise TargetError(f"reading BMv2 events from {self.address}: {e}") from None
            return None

    def fileno(self) -> int | None:
        """A descriptor that is readable when a message waits (pynng, sp), else None."""
        if self.backend == "sp":
            return self._sock.fileno()
        return getattr(self._sock, "recv_fd", None) if self.backend == "pynng" else None

    def poll(self) -> list[bytes]:
        """Every message waiting, without blocking."""
        if self.backend == "sp":
            out, self._ready = self._ready[::-1], []
            return out + self._sock.poll()
        out = []
        while (m := self.recv(0.0)) is not None:
            out.append(m)
        return out

    def messages(self, *, quiet: float = 0.3, timeout: float = 5.0,
                 first: float | None = None) -> list[bytes]:
        """Messages until none came for *quiet* seconds (or *timeout* passed).  The
        first may take up to *first* seconds (default *quiet*): a switch with pcap-file
        ports starts reading them only ``--use-files`` seconds after its first config is
        committed, so wait for its first event that long, not *quiet*."""
        from ..ports.interfaces import drain

        wait = quiet if first is None else first
        head = self._recv_list(wait) if wait > 0 else self.poll()
        return head + drain(self._recv_list, quiet, timeout) if head else []

    def _recv_list(self, wait: float) -> list[bytes]:
        m = self.recv(wait)
        return [m] if m is not None else []

    def collect(self, *, quiet: float = 0.3, timeout: float = 5.0, first: float | None = None,
                entry_name: Callable[[str, int], str | None] | None = None
                ) -> list[PacketTrace]:
        """Traces of the packets the switch processed since the last call (see
        :meth:`messages` for *quiet*, *timeout* and *first*)."""
        return decode_events(self.messages(quiet=quiet, timeout=timeout, first=first),
                             self.names, device_id=self.device_id, entry_name=entry_name)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> EventSubscriber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
