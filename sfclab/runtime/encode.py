"""sfclab's table entries to P4Runtime messages and back, through a P4Info.

>>> from sfclab.codegen.entries import TableEntry, Exact
>>> # ix = P4InfoIndex(p4info); ix.update("INSERT", entry)   -> p4.v1.Update
"""

from __future__ import annotations

from dataclasses import dataclass, field

from finsy.proto import p4i, p4r

from ..codegen.entries import Exact, Lpm, Match, Range, TableEntry, Ternary
from ..errors import TargetError, did_you_mean

__all__ = ["P4InfoIndex", "encode_value", "decode_value"]


def encode_value(v: int) -> bytes:
    """The canonical P4Runtime bytestring of *v* (shortest big-endian, at least one byte)."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def decode_value(b: bytes) -> int:
    return int.from_bytes(b, "big")


@dataclass
class P4InfoIndex:
    """Name and id look-ups of one P4Info."""

    info: p4i.P4Info
    tables: dict[str, p4i.Table] = field(default_factory=dict)
    actions: dict[str, p4i.Action] = field(default_factory=dict)
    tables_by_id: dict[int, p4i.Table] = field(default_factory=dict)
    actions_by_id: dict[int, p4i.Action] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tables = {t.preamble.name: t for t in self.info.tables}
        self.actions = {a.preamble.name: a for a in self.info.actions}
        self.tables_by_id = {t.preamble.id: t for t in self.info.tables}
        self.actions_by_id = {a.preamble.id: a for a in self.info.actions}

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

    # -- encoding ------------------------------------------------------------------------------
    def table_entry(self, e: TableEntry, *, with_action: bool = True) -> p4r.TableEntry:
        t = self.table(e.table)
        fields = {f.name: f for f in t.match_fields}
        te = p4r.TableEntry(table_id=t.preamble.id)
        for name, m in e.match:
            f = fields.get(name)
            if f is None:
                raise TargetError(f"table {e.table} has no match field {name!r}",
                                  hint=did_you_mean(name, fields) or f"fields: {', '.join(fields)}")
            te.match.append(_field_match(f, m))
        if e.priority:
            te.priority = e.priority
        if with_action:
            a = self.action(e.action)
            params = {p.name: p for p in a.params}
            te.action.action.action_id = a.preamble.id
            for name, v in e.params:
                p = params.get(name)
                if p is None:
                    raise TargetError(f"action {e.action} has no parameter {name!r}")
                te.action.action.params.add(param_id=p.id, value=encode_value(v))
        return te

    def update(self, kind: str, e: TableEntry) -> p4r.Update:
        """An INSERT / MODIFY / DELETE update of entry *e*."""
        u = p4r.Update(type=p4r.Update.Type.Value(kind))
        u.entity.table_entry.CopyFrom(self.table_entry(e, with_action=kind != "DELETE"))
        return u

    # -- decoding ------------------------------------------------------------------------------
    def decode(self, te: p4r.TableEntry) -> TableEntry:
        """A read-back table entry as sfclab's :class:`TableEntry`."""
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
        a = self.actions_by_id.get(te.action.action.action_id)
        params = {p.id: p.name for p in a.params} if a else {}
        return TableEntry(t.preamble.name, tuple(match), a.preamble.name if a else "",
                          tuple((params[p.param_id], decode_value(p.value))
                                for p in te.action.action.params),
                          te.priority or None)


def _field_match(f: p4i.MatchField, m: Match) -> p4r.FieldMatch:
    fm = p4r.FieldMatch(field_id=f.id)
    MF = p4i.MatchField
    if isinstance(m, Exact):
        if f.match_type == MF.OPTIONAL:
            fm.optional.value = encode_value(m.value)
        elif f.match_type == MF.TERNARY:
            fm.ternary.value = encode_value(m.value)
            fm.ternary.mask = encode_value((1 << f.bitwidth) - 1)
        else:
            fm.exact.value = encode_value(m.value)
    elif isinstance(m, Lpm):
        fm.lpm.value, fm.lpm.prefix_len = encode_value(m.value), m.prefix_len
    elif isinstance(m, Ternary):
        fm.ternary.value, fm.ternary.mask = encode_value(m.value), encode_value(m.mask)
    elif isinstance(m, Range):
        fm.range.low, fm.range.high = encode_value(m.low), encode_value(m.high)
    return fm
