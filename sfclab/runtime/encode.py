"""sfclab's table entries to P4Runtime messages and back, through a P4Info.

Entries are put in their canonical form for their table first
(:func:`~sfclab.codegen.entries.canonical`): a don't-care match (``/0``, mask 0,
the whole range, an optional wildcard) is left out of the ``FieldMatch`` list,
as the P4Runtime specification requires, and values are the shortest
bytestrings; an omitted field reads back as the don't-care it is, so what is
written reads back equal.

>>> from sfclab.codegen.entries import TableEntry, Exact
>>> # ix = P4InfoIndex(p4info); ix.update("INSERT", entry)   -> p4.v1.Update
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from finsy.proto import p4i, p4r

from ..codegen.entries import (Exact, Lpm, Match, Range, TableEntry, Ternary, canonical,
                               p4info_fields)
from ..errors import CompileError, TargetError, did_you_mean

__all__ = ["P4InfoIndex", "encode_value", "decode_value", "multicast_update"]

def encode_value(v: int) -> bytes:
    """The canonical P4Runtime bytestring of *v* (shortest big-endian, at least one byte).

    >>> encode_value(0), encode_value(256)
    (b'\\x00', b'\\x01\\x00')
    """
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def decode_value(b: bytes) -> int:
    return int.from_bytes(b, "big")


def multicast_update(kind: str, group_id: int, ports: Iterable[int] = ()) -> p4r.Update:
    """An INSERT / MODIFY / DELETE of multicast group *group_id*, one replica per port
    (instance 0, in ``egress_port``, which every P4Runtime server reads).

    >>> g = multicast_update("INSERT", 7, [2, 3]).entity.packet_replication_engine_entry
    >>> [r.egress_port for r in g.multicast_group_entry.replicas]
    [2, 3]
    """
    u = p4r.Update(type=p4r.Update.Type.Value(kind))
    g = u.entity.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = group_id
    if kind != "DELETE":
        for port in ports:
            g.replicas.add(egress_port=port, instance=0)
    return u


@dataclass
class P4InfoIndex:
    """Name and id look-ups of one P4Info."""

    info: p4i.P4Info
    tables: dict[str, p4i.Table] = field(default_factory=dict)
    actions: dict[str, p4i.Action] = field(default_factory=dict)
    tables_by_id: dict[int, p4i.Table] = field(default_factory=dict)
    actions_by_id: dict[int, p4i.Action] = field(default_factory=dict)
    _fields: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tables = {t.preamble.name: t for t in self.info.tables}
        self.actions = {a.preamble.name: a for a in self.info.actions}
        self.tables_by_id = {t.preamble.id: t for t in self.info.tables}
        self.actions_by_id = {a.preamble.id: a for a in self.info.actions}
        self._fields = p4info_fields(self.info)

    def table(self, name: str) -> p4i.Table:
        t = self.tables.get(name)
        if t is None:
            raise TargetError(f"the pipeline has no table {name!r}",
                              hint=did_you_mean(name, self.tables) or "push the program first")
        return t

    def action(self, name: str) -> p4i.Action:
        a = self.actions.get(name)
        if a is None:
            raise TargetError(f"the pipeline has no action {name!r}",
                              hint=did_you_mean(name, self.actions) or "")
        return a

    def fields(self, table: str) -> dict[str, tuple[str, int]]:
        """The table's match fields in key order: ``{name: (kind, bitwidth)}``."""
        self.table(table)
        return self._fields[table]

    def canonical(self, e: TableEntry) -> TableEntry:
        """*e* as the switch holds it and reads it back (don't-care fields left out, an
        exact value of a ternary field given its full mask …); TargetError if it does
        not fit the table."""
        try:
            return canonical(e, self.fields(e.table))
        except CompileError as err:
            raise TargetError(err.message, hint=err.hint) from None

    # -- encoding ------------------------------------------------------------------------------
    def table_entry(self, e: TableEntry, *, with_action: bool = True) -> p4r.TableEntry:
        t = self.table(e.table)
        ids = {f.name: f.id for f in t.match_fields}
        te = p4r.TableEntry(table_id=t.preamble.id)
        kinds = self.fields(e.table)
        for name, m in self.canonical(e).match:
            te.match.append(_field_match(ids[name], kinds[name][0], m))
        if e.priority:
            te.priority = e.priority
        if with_action:
            a = self.action(e.action)
            params = {p.name: p for p in a.params}
            te.action.action.action_id = a.preamble.id
            for name, v in e.params:
                p = params.get(name)
                if p is None:
                    raise TargetError(f"action {e.action} has no parameter {name!r}",
                                      hint=did_you_mean(name, params) or
                                      f"its parameters: {', '.join(params) or 'none'}")
                if not 0 <= v < 1 << p.bitwidth:
                    raise TargetError(f"action {e.action}: {name}={v} does not fit in "
                                      f"{p.bitwidth} bits")
                te.action.action.params.add(param_id=p.id, value=encode_value(v))
        return te

    def update(self, kind: str, e: TableEntry) -> p4r.Update:
        """An INSERT / MODIFY / DELETE update of entry *e*."""
        u = p4r.Update(type=p4r.Update.Type.Value(kind))
        u.entity.table_entry.CopyFrom(self.table_entry(e, with_action=kind != "DELETE"))
        return u

    # -- decoding ------------------------------------------------------------------------------
    def decode(self, te: p4r.TableEntry) -> TableEntry:
        """A read-back table entry as sfclab's :class:`TableEntry` (canonical: a field
        the switch omits is a don't-care, left out here too)."""
        t = self.tables_by_id[te.table_id]
        fields = {f.id: f for f in t.match_fields}
        match = []
        for fm in te.match:
            f = fields[fm.field_id]
            kind = fm.WhichOneof("field_match_type")
            if kind == "exact":
                m: Match = Exact(decode_value(fm.exact.value))
            elif kind == "lpm":
                m = Lpm(decode_value(fm.lpm.value), fm.lpm.prefix_len)
            elif kind == "ternary":
                m = Ternary(decode_value(fm.ternary.value), decode_value(fm.ternary.mask))
            elif kind == "range":
                m = Range(decode_value(fm.range.low), decode_value(fm.range.high))
            else:
                m = Exact(decode_value(fm.optional.value))
            match.append((f.name, m))
        order = {f.name: i for i, f in enumerate(t.match_fields)}
        match.sort(key=lambda x: order[x[0]])
        a = self.actions_by_id.get(te.action.action.action_id)
        params = {p.id: p.name for p in a.params} if a else {}
        return TableEntry(t.preamble.name, tuple(match), a.preamble.name if a else "",
                          tuple((params[p.param_id], decode_value(p.value))
                                for p in te.action.action.params),
                          te.priority or None)


def _field_match(field_id: int, kind: str, m: Match) -> p4r.FieldMatch:
    """One canonical match (see :meth:`P4InfoIndex.canonical`) as a ``FieldMatch``."""
    fm = p4r.FieldMatch(field_id=field_id)
    if kind == "optional":
        fm.optional.value = encode_value(m.value)
    elif isinstance(m, Exact):
        fm.exact.value = encode_value(m.value)
    elif isinstance(m, Lpm):
        fm.lpm.value, fm.lpm.prefix_len = encode_value(m.value), m.prefix_len
    elif isinstance(m, Ternary):
        fm.ternary.value, fm.ternary.mask = encode_value(m.value), encode_value(m.mask)
    elif isinstance(m, Range):
        fm.range.low, fm.range.high = encode_value(m.low), encode_value(m.high)
    return fm
