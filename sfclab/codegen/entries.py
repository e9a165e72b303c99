"""The table entries a chain set needs, grouped so one chain can be installed alone.

* ``chain:NAME`` — the initializer entries of the chain's classifier, and the
  rewinder and branch entries of its service paths: installing, changing or
  removing a chain is writing exactly this group (FlexMesh; P4NFV's pipeline
  manipulation);
* ``nf:SLOT`` — the example entries of each NF manifest, in every slot of that
  NF (``CodegenOptions.nf_entries="none"`` leaves NF tables empty).

Entries use the program's fully qualified names, so they mean the same thing to
the embedded model, to BMv2 and to a P4Runtime client (``to_finsy``).

>>> from sfclab.compiler import compile
>>> from sfclab.codegen.compose import compose
>>> es = chain_entries(compose(compile("chain a match tcp.dport == 80: firewall -> nat")))
>>> print(es[0])
SfcIngress.initializer: hdr.tcp.$valid$=1&&&0x1 hdr.tcp.dst_port=80&&&0xFFFF -> set_token(path_id=1, bitmap=3) prio 1  [chain:a]
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..errors import CompileError
from ..ir.classifier import FieldMatch
from ..ir.fields import FIELDS
from ..ir.model import Condition
from .compose import TERMINALS, Composition, InitKey

__all__ = ["Exact", "Lpm", "Ternary", "Range", "Match", "TableEntry", "chain_entries",
           "nf_entries", "all_entries", "network_entries", "parse_value", "INGRESS"]

#: The control every table and action of the composed program lives in.
INGRESS = "SfcIngress"


def _tbl(comp: Composition, name: str) -> str:
    """A table's P4Runtime name: bf-p4c puts the pipeline's name in front on TNA
    (``pipe.SfcIngress.rewinder``); actions keep ``SfcIngress.…`` on both."""
    return f"{comp.table_prefix}{INGRESS}.{name}"


@dataclass(frozen=True, slots=True)
class Exact:
    value: int

    def finsy(self) -> object:
        return self.value

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Lpm:
    value: int
    prefix_len: int

    def finsy(self) -> object:
        return f"{self.value}/{self.prefix_len}"

    def __str__(self) -> str:
        return f"{self.value}/{self.prefix_len}"


@dataclass(frozen=True, slots=True)
class Ternary:
    value: int
    mask: int

    def finsy(self) -> object:
        return f"0x{self.value:x}/&0x{self.mask:x}"

    def __str__(self) -> str:
        return f"{self.value}&&&0x{self.mask:X}"


@dataclass(frozen=True, slots=True)
class Range:
    low: int
    high: int

    def finsy(self) -> object:
        return f"{self.low}...{self.high}"

    def __str__(self) -> str:
        return f"{self.low}..{self.high}"


Match = Exact | Lpm | Ternary | Range


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One entry: fully qualified table and action names, match by field name."""

    table: str
    match: tuple[tuple[str, Match], ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    priority: int | None = None
    group: str = ""
    note: str = ""

    def to_finsy(self):
        """The entry as a finsy ``P4TableEntry`` (encode it with the program's P4Schema)."""
        import finsy

        return finsy.P4TableEntry(
            self.table, match=finsy.P4TableMatch({k: m.finsy() for k, m in self.match}),
            action=finsy.P4TableAction(self.action, **dict(self.params)),
            priority=self.priority or 0)

    def to_dict(self) -> dict:
        d = {"table": self.table, "match": {k: str(m) for k, m in self.match},
             "action": self.action, "params": dict(self.params), "group": self.group}
        if self.priority is not None:
            d["priority"] = self.priority
        if self.note:
            d["note"] = self.note
        return d

    def __str__(self) -> str:
        match = " ".join(f"{k}={m}" for k, m in self.match) or "*"
        act = self.action.rpartition(".")[2]
        params = ", ".join(f"{k}={v}" for k, v in self.params)
        prio = f" prio {self.priority}" if self.priority is not None else ""
        return f"{self.table}: {match} -> {act}({params}){prio}  [{self.group}]"


# --- classifier -> initializer entries -------------------------------------------------------

def _term_ranges(t: FieldMatch, width: int) -> list[tuple[int, int]]:
    top = (1 << width) - 1
    if t.kind == "range":
        rs = [(t.value, t.high or 0)]
    elif t.kind in ("exact", "lpm") or (t.kind == "ternary" and _is_prefix(t.mask or 0, width)):
        m = t.effective_mask
        rs = [(t.value & m, (t.value & m) | (top & ~m))]
    else:
        raise CompileError(f"the classifier term '{t}' cannot be written as a range",
                           hint="use a prefix or a value/mask whose mask is a prefix")
    return _complement(rs, top) if t.negate else rs


def _is_prefix(mask: int, width: int) -> bool:
    inv = ~mask & ((1 << width) - 1)
    return inv & (inv + 1) == 0


def _complement(rs: Sequence[tuple[int, int]], top: int) -> list[tuple[int, int]]:
    out, lo = [], 0
    for a, b in sorted(rs):
        if a > lo:
            out.append((lo, a - 1))
        lo = max(lo, b + 1)
    if lo <= top:
        out.append((lo, top))
    return out


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(max(x, y), min(p, q)) for x, p in a for y, q in b if max(x, y) <= min(p, q)]


def _key_alternatives(key: InitKey, terms: list[FieldMatch]) -> list[Match | None]:
    """The values of one initializer key that together express *terms* (None: wildcard)."""
    if key.field.endswith(".$valid$"):
        return [Ternary(1, 1)] if terms else [None]
    if not terms:
        return [None]
    if key.kind == "range":
        rs = [(0, (1 << key.width) - 1)]
        for t in terms:
            rs = _intersect(rs, _term_ranges(t, key.width))
        return [Range(a, b) for a, b in rs]
    value, mask = 0, 0
    for t in terms:
        m = t.effective_mask
        if (value ^ t.value) & mask & m:
            return []                                   # contradicting terms: never matches
        value, mask = (value & ~m) | (t.value & m), mask | m
    return [Ternary(value, mask)]


def _initializer_entries(comp: Composition) -> list[TableEntry]:
    fsm = comp.compiled.fsm
    chains = list(comp.compiled.chains)
    first = {e.chain: e for e in fsm.initializer}
    out = []
    for rank, chain in enumerate(chains):
        init = first.get(chain.name)
        if init is None:
            continue
        terms = list(chain.match.terms) if chain.match else []
        combos: list[list[tuple[str, Match]]] = [[]]
        for key in comp.init_keys:
            if key.field.endswith(".$valid$"):
                header = key.field.removesuffix(".$valid$")
                mine = [t for t in terms if FIELDS[t.field].header == header]
            else:
                mine = [t for t in terms if t.field == key.field]
            alts = _key_alternatives(key, mine)
            combos = [c + ([(key.name, a)] if a is not None else []) for c in combos for a in alts]
        for match in combos:
            out.append(TableEntry(
                _tbl(comp, "initializer"), tuple(match), f"{INGRESS}.set_token",
                (("path_id", init.path_num), ("bitmap", init.bitmap)),
                len(chains) - rank, f"chain:{chain.name}",
                f"{chain.name} -> {init.path} #{init.path_num}"))
    return out


# --- FSM plan -> rewinder and branch entries ----------------------------------------------------

def _cond_key(cond: Condition) -> tuple[str, int]:
    if cond.field == "std.ingress_port":
        return "meta.sfc.ingress_port", 9
    if cond.name in ("global_counter", "counter"):
        return "meta.sfc.counter", 8
    return "meta.sfc.metadata", 32


def _cond_ranges(op: str, v: int, top: int) -> list[tuple[int, int]]:
    return {"==": [(v, v)], "!=": _complement([(v, v)], top),
            "<": [(0, v - 1)] if v > 0 else [], "<=": [(0, v)],
            ">": [(v + 1, top)] if v < top else [], ">=": [(v, top)]}[op]


def _branch_entries(comp: Composition) -> list[TableEntry]:
    out = []
    bindings = comp.options.bindings
    for b in comp.compiled.fsm.branches:
        cond = b.cond
        if cond is None:
            continue
        key, width = _cond_key(cond)
        top = (1 << width) - 1

        def value(v: int | str) -> int | None:
            if isinstance(v, int):
                return v
            return bindings.get(v)

        if b.kind == "case":
            vals = [value(v) for v in b.cases]
            if any(v is None for v in vals):
                missing = [c for c, v in zip(b.cases, vals) if v is None]
                raise CompileError(f"multibranch case(s) {missing} of {b.node!r} are run-time "
                                   f"names with no value", hint="pass bindings={'name': value} "
                                   "to the code generator")
            ranges = [(v, v) for v in vals]
        else:
            v = value(cond.value)
            if v is None:
                raise CompileError(f"condition '{cond}' compares with the run-time name "
                                   f"{cond.value!r}", hint="pass bindings={'name': value}")
            ranges = _cond_ranges(cond.op, v, top)
            if b.kind == "else":
                ranges = _complement(ranges, top)
        chain = b.path.rpartition("/")[0]
        for lo, hi in ranges:
            out.append(TableEntry(
                _tbl(comp, f"slot{b.slot}_branch"),
                (("hdr.sfc.path_id", Exact(b.path_num)), ("hdr.sfc.state", Exact(b.state)),
                 (key, Range(lo, hi))),
                f"{INGRESS}.take_branch", (("path_id", b.target_num), ("bitmap", b.bitmap)),
                1, f"chain:{chain}", f"{b.path} after {b.node}: {b.kind} -> {b.target}"))
    return out


def _rewinder_entries(comp: Composition) -> list[TableEntry]:
    out = []
    port = comp.options.default_port
    for e in comp.compiled.fsm.rewinder:
        match = (("hdr.sfc.path_id", Exact(e.path_num)), ("hdr.sfc.state", Exact(e.state)))
        chain = e.path.rpartition("/")[0]
        if e.done:
            act, params = "finish", (("terminal", TERMINALS[e.terminal or "output"]),
                                     ("port", port))
        else:
            act, params = "next_pass", (("state", e.next_state), ("bitmap", e.bitmap or 0),
                                        ("loops", e.counter or 0))
        out.append(TableEntry(_tbl(comp, "rewinder"), match, f"{INGRESS}.{act}", params, None,
                              f"chain:{chain}", str(e)))
    return out


def _loop_entries(comp: Composition) -> list[TableEntry]:
    out = []
    for f in comp.compiled.fsm.paths:
        for pas, slot, count in f.loop_counts:
            out.append(TableEntry(
                _tbl(comp, f"slot{slot}_loop"),
                (("hdr.sfc.path_id", Exact(f.num)), ("hdr.sfc.state", Exact(pas))),
                f"{INGRESS}.count_loop", (("loops", count),), None, f"chain:{f.path.chain}",
                f"{f.path.id} after slot {slot}: loop counter {count}"))
    return out


def chain_entries(comp: Composition) -> list[TableEntry]:
    """Initializer, branch, loop and rewinder entries, chain by chain."""
    return (_initializer_entries(comp) + _branch_entries(comp) + _loop_entries(comp)
            + _rewinder_entries(comp))


def network_entries(comp: Composition, *, classified: Iterable[str],
                    arrivals: Iterable[tuple[int, int, str]],
                    exits: dict[str, tuple]) -> list[TableEntry]:
    """The chain entries of one switch of a network (``CodegenOptions.network``).

    The switch's chains are the parts of the network's chains it runs
    (:mod:`.network`): only those in *classified* start here and keep their
    initializer entries; ``(spi, si, chain)`` in *arrivals* enters *chain*'s first
    path when a packet arrives with service path *spi* and next-NF index *si*; a
    path in *exits* (path id -> ``("forward", spi, si, port)`` or ``("deliver",
    port)``) ends with that instead of ``finish``."""
    keep = set(classified)
    fsm = comp.compiled.fsm
    first = {e.chain: e for e in fsm.initializer}
    out = [e for e in _initializer_entries(comp) if e.group[len("chain:"):] in keep]
    for spi, si, chain in arrivals:
        e = first[chain]
        out.append(TableEntry(
            _tbl(comp, "arrival"), (("spi", Exact(spi)), ("si", Exact(si))), f"{INGRESS}.enter",
            (("path_id", e.path_num), ("bitmap", e.bitmap)), None, f"chain:{chain}",
            f"service path {spi}, next NF {si} -> {e.path} #{e.path_num}"))
    out += _branch_entries(comp) + _loop_entries(comp)
    for r, e in zip(fsm.rewinder, _rewinder_entries(comp)):
        how = exits.get(r.path) if r.done else None
        if how is not None and how[0] == "forward":
            _, spi, si, port = how
            e = replace(e, action=f"{INGRESS}.forward",
                        params=(("spi", spi), ("si", si), ("port", port)),
                        note=f"{e.note}: forward as service path {spi}, next NF {si}, port {port}")
        elif how is not None:
            e = replace(e, action=f"{INGRESS}.deliver", params=(("port", how[1]),),
                        note=f"{e.note}: deliver on port {how[1]}")
        out.append(e)
    return out


# --- NF manifests -> NF entries -----------------------------------------------------------------

_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


def parse_value(v: int | str) -> int:
    """An entry value as written in a manifest: an int, ``"0x1F"``, ``"10.0.0.1"``,
    ``"2001:db8::1"`` or ``"00:11:22:33:44:55"``.

    >>> parse_value("10.0.1.1"), parse_value("0xff"), parse_value("00:00:00:00:00:02")
    (167772417, 255, 2)
    """
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise CompileError(f"cannot read the value {v!r}", hint="use a number or an address")
    if isinstance(v, int):
        return v
    s = v.strip()
    try:
        if _MAC.match(s):
            return int(s.replace(":", ""), 16)
        if "." in s or ":" in s:
            return int(ipaddress.ip_address(s))
        return int(s, 0)
    except ValueError:
        raise CompileError(f"cannot read the value {v!r}",
                           hint="use a number, 0x…, an IPv4/IPv6 address or a MAC") from None


def _match_value(kind: str, v: int | str) -> Match:
    s = str(v)
    if kind == "lpm":
        addr, _, plen = s.partition("/")
        return Lpm(parse_value(addr), int(plen))
    if kind == "ternary":
        val, _, mask = s.partition("&&&")
        return Ternary(parse_value(val), parse_value(mask))
    if kind == "range":
        lo, _, hi = s.partition("..")
        return Range(parse_value(lo), parse_value(hi))
    return Exact(parse_value(v))


def nf_entries(comp: Composition) -> list[TableEntry]:
    """Each NF manifest's example entries, in every slot of that NF."""
    if comp.options.nf_entries == "none":
        return []
    if comp.options.nf_entries != "examples":
        raise CompileError(f"nf_entries must be 'examples' or 'none', not "
                           f"{comp.options.nf_entries!r}")
    defs = {d.name: d for d in comp.nfs}
    out = []
    for slot in comp.slots:
        d = defs[slot.nf]
        for e in d.entries:
            kinds = dict(d.table(e.table).keys)
            match = tuple((k, _match_value(kinds[k], v)) for k, v in e.match.items())
            prefix = f"{INGRESS}.{slot.instance}"
            out.append(TableEntry(_tbl(comp, f"{slot.instance}.{e.table}"), match,
                                  f"{prefix}.{e.action}",
                                  tuple((k, parse_value(v)) for k, v in e.params.items()),
                                  e.priority, f"nf:{slot.instance}",
                                  f"example entry of {d.name}"))
    return out


def all_entries(comp: Composition) -> list[TableEntry]:
    return chain_entries(comp) + nf_entries(comp)


def groups(entries: Iterable[TableEntry]) -> dict[str, list[TableEntry]]:
    """Entries by group (``chain:web``, ``nf:slot0_firewall`` …), in order."""
    out: dict[str, list[TableEntry]] = {}
    for e in entries:
        out.setdefault(e.group, []).append(e)
    return out
