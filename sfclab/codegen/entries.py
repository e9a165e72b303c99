"""The table entries a chain set needs, grouped so one chain can be installed alone.

* ``chain:NAME`` — the initializer entries of the chain's classifier, and the
  rewinder, branch, loop and save entries of its service paths: installing, changing or
  removing a chain is writing exactly this group (FlexMesh; P4NFV's pipeline
  manipulation);
* ``nf:SLOT`` — the example entries of each NF manifest, in every slot of that
  NF (``CodegenOptions.nf_entries="none"`` leaves NF tables empty).

Entries use the program's fully qualified names, so they mean the same thing to
the embedded model, to BMv2 and to a P4Runtime client (``to_finsy``).

A "don't care" match is *omitted*, as P4Runtime requires (a ``/0`` prefix, a
ternary mask of 0, a range over the whole field, an optional wildcard): an
entry never holds one, whoever made it (:func:`match_value` reads one as None,
:class:`TableEntry` drops ``Lpm(0, 0)`` / ``Ternary(0, 0)``, and
:func:`canonical` the full ranges once the field widths are known).

>>> from sfclab.compiler import compile
>>> from sfclab.codegen.compose import compose
>>> es = chain_entries(compose(compile("chain a match tcp.dport == 80: firewall -> nat")))
>>> print(es[0])
SfcIngress.initializer: hdr.tcp.dst_port=80 -> set_token(path_id=1, bitmap=0b11) prio 1  [chain:a]
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import CompileError, did_you_mean
from ..ir.classifier import FieldMatch
from ..ir.fields import FIELDS
from ..ir.values import ValueKinds, implied_keys
from ..passes.fsm import BranchEntry, cond_source
from .compose import SAVED_WIDTH, TERMINALS, Composition, InitKey, saved_field

__all__ = ["Exact", "Lpm", "Ternary", "Range", "Match", "TableEntry", "chain_entries",
           "nf_entries", "all_entries", "parse_value", "match_value", "canonical",
           "canonical_match", "make_entry", "p4info_fields", "network_entries", "network_head",
           "INGRESS",
           "range_to_ternary"]

#: The control every table and action of the composed program lives in.
INGRESS = "SfcIngress"


def _tbl(comp: Composition, name: str, pipelet=None) -> str:
    """A table's P4Runtime name: bf-p4c puts the pipeline's name in front on TNA
    (``pipe0.SfcIngress0.rewinder``); actions keep ``SfcIngress0.…``
    (:meth:`Composition.table`, :meth:`~Composition.action`)."""
    return comp.table(name, pipelet)


def _slot_pipelet(comp: Composition, slot: int):
    return comp.slots[slot].pipelet if slot < len(comp.slots) else None


def _token(comp: Composition, path_num: int, state: int) -> tuple:
    pid, st = comp.token_keys
    return ((pid, Exact(path_num)), (st, Exact(state)))


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


def _dont_care(m: Match) -> bool:
    """Whether *m* matches every value whatever the field's width (``/0``, mask 0); a
    value outside such a match is refused."""
    if isinstance(m, Lpm) and m.prefix_len == 0 or isinstance(m, Ternary) and m.mask == 0:
        if (m.value if isinstance(m, Lpm) else m.value & ~m.mask):
            raise CompileError(f"the match {m} has bits set beyond its "
                               f"{'prefix' if isinstance(m, Lpm) else 'mask'}",
                               hint="a don't-care match is 0/0 (or leave the field out)")
        return True
    return False


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One entry: fully qualified table and action names, match by field name.

    Don't-care matches are left out (P4Runtime omits them on the wire):

    >>> TableEntry("t", (("dst", Lpm(0, 0)),), "a") == TableEntry("t", (), "a")
    True
    """

    table: str
    match: tuple[tuple[str, Match], ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    priority: int | None = None
    group: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if any(_dont_care(m) for _, m in self.match):
            object.__setattr__(self, "match",
                               tuple((k, m) for k, m in self.match if not _dont_care(m)))

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

    def match_text(self, kinds: ValueKinds | None = None) -> list[tuple[str, str]]:
        """The match as ``(key, value)`` pairs people read (``10.0.1.0/24``, a MAC, a
        port); validity keys another key of their header implies are left out."""
        k = kinds or ValueKinds.library()
        hide = implied_keys(n for n, _ in self.match)
        return [(n, k.match(n, m)) for n, m in self.match if n not in hide]

    def describe(self, kinds: ValueKinds | None = None) -> str:
        """The entry on one line, its values printed by their kind (*kinds*: the
        program's, :meth:`ValueKinds.of_program`; default: the NF library's)."""
        k = kinds or ValueKinds.library()
        match = " ".join(f"{n}={v}" for n, v in self.match_text(k)) or "*"
        act = self.action.rpartition(".")[2]
        prio = f" prio {self.priority}" if self.priority is not None else ""
        return f"{self.table}: {match} -> {act}({k.args(self.action, self.params)}){prio}" \
               f"  [{self.group}]"

    def __str__(self) -> str:
        return self.describe()


def range_to_ternary(low: int, high: int, width: int) -> list[Ternary]:
    """The value/mask matches (prefixes) that together match exactly ``low .. high`` of a
    *width*-bit field, none overlapping another: how a range entry is written for a key
    the architecture matches as ternary (Tofino's range keys are at most 20 bits wide:
    :meth:`~.compose.Composition.key_kind`).  At most ``2 * width - 2`` of them; one
    entry with the range's priority per match keeps the table's first-match result.

    >>> [str(t) for t in range_to_ternary(1, 6, 3)]
    ['1&&&0x7', '2&&&0x6', '4&&&0x6', '6&&&0x7']
    >>> range_to_ternary(0, 255, 8)
    [Ternary(value=0, mask=0)]
    """
    top = (1 << width) - 1
    if not 0 <= low <= high <= top:
        raise CompileError(f"the range {low}..{high} is not within 0..{top} ({width} bits)",
                           hint="write low..high with 0 <= low <= high")
    out = []
    while low <= high:
        # the largest aligned block starting at low that stays within high
        size = (low & -low) if low else 1 << width
        while low + size - 1 > high:
            size >>= 1
        out.append(Ternary(low, top & ~(size - 1)))
        low += size
    return out


def _as_key(kind: str, width: int, m: Range) -> list[Match]:
    """Range *m* of a key the program matches as *kind*: itself, or its prefixes."""
    return list(range_to_ternary(m.low, m.high, width)) if kind == "ternary" else [m]


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
        top = (1 << key.width) - 1
        rs = [(0, top)]
        for t in terms:
            rs = _intersect(rs, _term_ranges(t, key.width))
        return [None if (a, b) == (0, top) else Range(a, b) for a, b in rs]
    value, mask = 0, 0
    for t in terms:
        m = t.effective_mask
        if (value ^ t.value) & mask & m:
            return []                                   # contradicting terms: never matches
        value, mask = (value & ~m) | (t.value & m), mask | m
    return [Ternary(value & mask, mask) if mask else None]


def _initializer_entries(comp: Composition) -> list[TableEntry]:
    fsm = comp.fsm
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
            if key.kind == "range" and (kind := comp.key_kind(key.kind, key.width)) != "range":
                alts = [x for a in alts
                        for x in ([a] if not isinstance(a, Range) else
                                  _as_key(kind, key.width, a))]
            combos = [c + ([(key.name, a)] if a is not None else []) for c in combos for a in alts]
        for match in combos:
            out.append(TableEntry(
                _tbl(comp, "initializer"), tuple(match), comp.action("set_token"),
                (("path_id", init.path_num), ("bitmap", init.bitmap)),
                len(chains) - rank, f"chain:{chain.name}",
                f"{chain.name} -> {init.path} #{init.path_num}"))
    return out


# --- FSM plan -> rewinder and branch entries ----------------------------------------------------

def _bind_hint(names: Sequence[str]) -> str:
    """How to give run-time names their values, wherever the user is."""
    cli = " ".join(f"--bind {n}=N" for n in names)
    py = ", ".join(f"{n!r}: N" for n in names)
    return (f"give each a value: `{cli}` on the command line, lab.bindings.update({{{py}}}) "
            f"in a Lab or notebook, CodegenOptions(bindings={{{py}}}) in Python")


def _cond_key(b: BranchEntry) -> tuple[str, int]:
    """The branch table's key a condition tests, and its width: the ingress port, the
    loop counter, the metadata the branching NF left, or the saved value of the NF
    the condition names when that one ran before (:mod:`sfclab.passes.fsm`)."""
    source = cond_source(b.cond)
    if source == "ingress_port":
        return "meta.sfc.ingress_port", 9
    if source == "counter":
        return "meta.sfc.counter", 8
    if b.saved is not None:
        return f"hdr.sfc.{saved_field(b.saved)}", SAVED_WIDTH
    return "meta.sfc.metadata", 32


def _cond_ranges(op: str, v: int, top: int) -> list[tuple[int, int]]:
    return {"==": [(v, v)], "!=": _complement([(v, v)], top),
            "<": [(0, v - 1)] if v > 0 else [], "<=": [(0, v)],
            ">": [(v + 1, top)] if v < top else [], ">=": [(v, top)]}[op]


def _branch_entries(comp: Composition, verdict=None) -> list[TableEntry]:
    """The branch tables' entries; *verdict* (TNA) gives the target path's end of the
    visit, which ``take_branch`` sets too (path number, state -> params)."""
    out = []
    bindings = comp.options.bindings
    for b in comp.fsm.branches:
        cond = b.cond
        if cond is None:
            continue
        key, width = _cond_key(b)
        top = (1 << width) - 1
        kind = comp.key_kind("range", width)

        def value(v: int | str) -> int | None:
            if isinstance(v, int):
                return v
            return bindings.get(v)

        if b.kind == "case":
            vals = [value(v) for v in b.cases]
            if any(v is None for v in vals):
                missing = [c for c, v in zip(b.cases, vals) if v is None]
                raise CompileError(f"multibranch case(s) {missing} of {b.node!r} are run-time "
                                   f"names with no value", hint=_bind_hint(missing))
            ranges = [(v, v) for v in vals]
        else:
            v = value(cond.value)
            if v is None:
                raise CompileError(f"condition '{cond}' compares with the run-time name "
                                   f"{cond.value!r}", hint=_bind_hint([cond.value]))
            ranges = _cond_ranges(cond.op, v, top)
            if b.kind == "else":
                ranges = _complement(ranges, top)
        chain = b.path.rpartition("/")[0]
        matches = [m for lo, hi in ranges
                   for m in ([None] if (lo, hi) == (0, top) else
                             _as_key(kind, width, Range(lo, hi)))]
        pl = _slot_pipelet(comp, b.slot)
        extra = verdict(b.target_num, b.state) if verdict is not None else ()
        for m in matches:
            cond_match = () if m is None else ((key, m),)
            out.append(TableEntry(
                _tbl(comp, f"slot{b.slot}_branch", pl),
                _token(comp, b.path_num, b.state) + cond_match,
                comp.action("take_branch", pl),
                (("path_id", b.target_num), ("bitmap", b.bitmap)) + extra,
                1, f"chain:{chain}", f"{b.path} after {b.node}: {b.kind} -> {b.target}"))
    return out


def _rewinder_entries(comp: Composition) -> list[TableEntry]:
    out = []
    port = comp.options.default_port
    for e in comp.fsm.rewinder:
        match = _token(comp, e.path_num, e.state)
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
    for f in comp.fsm.paths:
        for pas, slot, count in f.loop_counts:
            pl = _slot_pipelet(comp, slot)
            out.append(TableEntry(
                _tbl(comp, f"slot{slot}_loop", pl), _token(comp, f.num, pas),
                comp.action("count_loop", pl), (("loops", count),), None, f"chain:{f.path.chain}",
                f"{f.path.id} after slot {slot}: loop counter {count}"))
    return out


def _save_entries(comp: Composition) -> list[TableEntry]:
    return [TableEntry(_tbl(comp, f"slot{e.slot}_save", _slot_pipelet(comp, e.slot)),
                       _token(comp, e.path_num, e.state),
                       comp.action(f"save_md{e.index}", _slot_pipelet(comp, e.slot)), (), None,
                       f"chain:{e.path.rpartition('/')[0]}", str(e))
            for e in comp.fsm.saves]


def chain_entries(comp: Composition) -> list[TableEntry]:
    """Initializer, branch, loop, save and rewinder entries, chain by chain (one pipeline;
    a TNA program's: :func:`sfclab.codegen.tna_entries.tna_chain_entries`)."""
    return (_initializer_entries(comp) + _branch_entries(comp) + _loop_entries(comp)
            + _save_entries(comp) + _rewinder_entries(comp))


def network_head(comp: Composition, *, classified: Iterable[str],
                 arrivals: Iterable[tuple[int, int, str]],
                 ingress: Mapping[str, int] | None = None) -> list[TableEntry]:
    """A network switch's initializer entries (its classified chains') and arrival entries
    (see :func:`network_entries`)."""
    keep = set(classified)
    first = {e.chain: e for e in comp.fsm.initializer}
    out = [e for e in _initializer_entries(comp) if e.group[len("chain:"):] in keep]
    if ingress is not None:
        out = [replace(e, params=e.params + (("ingress_port", ingress[e.group[6:]]),))
               for e in out]
    for spi, si, chain in arrivals:
        e = first[chain]
        out.append(TableEntry(
            _tbl(comp, "arrival"), (("spi", Exact(spi)), ("si", Exact(si))), comp.action("enter"),
            (("path_id", e.path_num), ("bitmap", e.bitmap)), None, f"chain:{chain}",
            f"service path {spi}, next NF {si} -> {e.path} #{e.path_num}"))
    return out


def network_entries(comp: Composition, *, classified: Iterable[str],
                    arrivals: Iterable[tuple[int, int, str]],
                    exits: dict[str, tuple],
                    ingress: Mapping[str, int] | None = None) -> list[TableEntry]:
    """The chain entries of one switch of a network (``CodegenOptions.network``).

    The switch's chains are the parts of the network's chains it runs
    (:mod:`.network`): only those in *classified* start here and keep their
    initializer entries; ``(spi, si, chain)`` in *arrivals* enters *chain*'s first
    path when a packet arrives with service path *spi* and next-NF index *si*; a
    path in *exits* (path id -> ``("forward", spi, si, port)`` or ``("deliver",
    port)``) ends with that instead of ``finish``; *ingress* (chain -> network port,
    ``CodegenOptions.network_ingress``) is what a classified chain's ``set_token``
    writes as the port the packet entered the network on."""
    fsm = comp.fsm
    out = network_head(comp, classified=classified, arrivals=arrivals, ingress=ingress)
    out += _branch_entries(comp) + _loop_entries(comp) + _save_entries(comp)
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


_DONT_CARE = ("*", "_")


def match_value(kind: str, v: object) -> Match | None:
    """A match value as a manifest or a user writes it, for a field of match *kind*;
    None for a don't-care match (the field is left out of the entry).

    Text: ``"10.0.0.0/8"`` (lpm), ``"10 &&& 0xfff"`` (ternary), ``"1500..65535"``
    (range), a value alone (all bits), ``"*"`` (don't care); or a pair ``(value,
    prefix_len)``, ``(value, mask)``, ``(low, high)``, or a :data:`Match`.

    >>> match_value("lpm", "10.0.0.0/8"), match_value("lpm", "0.0.0.0/0")
    (Lpm(value=167772160, prefix_len=8), None)
    >>> match_value("ternary", "0 &&& 0"), match_value("range", (1, 5))
    (None, Range(low=1, high=5))
    """
    if isinstance(v, (Exact, Lpm, Ternary, Range)):
        m: Match = v
    elif isinstance(v, str) and v.strip() in _DONT_CARE:
        if kind == "exact":
            raise CompileError("an exact field has no don't-care value",
                               hint="give it a value: exact fields are never left out")
        return None
    elif isinstance(v, tuple):
        if len(v) != 2 or kind not in ("lpm", "ternary", "range"):
            raise CompileError(f"cannot read {v!r} as a {kind} match",
                               hint="(value, prefix_len), (value, mask) or (low, high)")
        a, b = parse_value(v[0]), v[1]
        m = (Lpm(a, _prefix_len(b)) if kind == "lpm" else
             Ternary(a, parse_value(b)) if kind == "ternary" else Range(a, parse_value(b)))
    else:
        m = _match_text(kind, v)
    return None if _dont_care(m) else m


def _prefix_len(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)) or not str(v).strip().isdigit():
        raise CompileError(f"the prefix length {v!r} is not a number",
                           hint="write the prefix as 10.0.0.0/8")
    return int(v)


def _match_text(kind: str, v: object) -> Match:
    s = str(v)
    if kind == "lpm" and "/" in s:
        addr, _, plen = s.partition("/")
        return Lpm(parse_value(addr), _prefix_len(plen))
    if kind == "ternary" and "&&&" in s:
        val, _, mask = s.partition("&&&")
        return Ternary(parse_value(val), parse_value(mask))
    if kind == "range" and ".." in s:
        lo, _, hi = s.partition("..")
        return Range(parse_value(lo), parse_value(hi))
    return Exact(parse_value(v))          # all bits: canonical() gives it the field's form


def canonical_match(kind: str, width: int, m: Match, where: str = "") -> Match | None:
    """*m* in the one form a P4Runtime server accepts for a *kind* field of *width*
    bits (and reads back): an :class:`Exact` value of a ternary field gets the full
    mask, of an lpm field the full prefix, of a range field a one-value range; a
    don't-care match gives None (omit the field).  Bad values raise CompileError.

    >>> canonical_match("ternary", 8, Exact(6)), canonical_match("range", 8, Range(0, 255))
    (Ternary(value=6, mask=255), None)
    """
    try:
        return _canonical_match(kind, width, m)
    except CompileError as e:
        if where:
            e.message = f"{where}: {e.message}"
            e.args = (e.message,)
        raise


def _canonical_match(kind: str, width: int, m: Match) -> Match | None:
    top = (1 << width) - 1

    def fits(v: int, what: str = "value") -> int:
        if not 0 <= v <= top:
            raise CompileError(f"{what} {v} does not fit in {width} bits",
                               hint=f"use 0 .. {top}")
        return v

    if isinstance(m, Exact):
        v = fits(m.value)
        if kind in ("exact", "optional"):
            return m
        return (Lpm(v, width) if kind == "lpm" else Ternary(v, top) if kind == "ternary"
                else Range(v, v) if kind == "range" else m)
    if kind == "lpm" and isinstance(m, Lpm):
        if not 0 <= m.prefix_len <= width:
            raise CompileError(f"prefix length {m.prefix_len} is not in 0..{width}")
        mask = top ^ ((1 << (width - m.prefix_len)) - 1)
        if fits(m.value) & ~mask:
            raise CompileError(f"{m} has bits set beyond the prefix",
                               hint=f"use {m.value & mask}/{m.prefix_len}")
        return m if m.prefix_len else None
    if kind == "ternary" and isinstance(m, Ternary):
        if fits(m.value) & ~fits(m.mask, "mask"):
            raise CompileError(f"value 0x{m.value:x} has bits outside mask 0x{m.mask:x}",
                               hint=f"use 0x{m.value & m.mask:x} &&& 0x{m.mask:x}")
        return m if m.mask else None
    if kind == "range" and isinstance(m, Range):
        if fits(m.low) > fits(m.high):
            raise CompileError(f"range {m.low}..{m.high} is empty",
                               hint="write low..high with low <= high")
        return None if (m.low, m.high) == (0, top) else m
    raise CompileError(f"a {kind} field cannot take the match {m}",
                       hint={"exact": "give a value", "optional": "give a value, or leave it "
                             "out (don't care)"}.get(kind, f"write a {kind} match"))


def canonical(e: TableEntry, fields: Mapping[str, tuple[str, int]]) -> TableEntry:
    """*e* with every match in its canonical form for its table, whose match *fields*
    are ``{name: (kind, width)}`` (a P4Info's), in the table's order; CompileError
    for a field the table does not have, an exact field left out, or a bad value.
    An entry already canonical is returned as it is."""
    given = dict(e.match)
    if len(given) != len(e.match) or not given.keys() <= fields.keys():
        unknown = [k for k in given if k not in fields]
        if unknown:
            raise CompileError(f"table {e.table} has no match field {unknown[0]!r}",
                               hint=did_you_mean(unknown[0], fields) or
                               f"its fields: {', '.join(fields) or 'none'}")
        raise CompileError(f"table {e.table}: a match field is given twice")
    match = []
    for name, (kind, width) in fields.items():
        m = given.get(name)
        if m is None:
            if kind == "exact":
                raise CompileError(f"table {e.table}: exact field {name!r} needs a value",
                                   hint="exact fields are never left out")
            continue
        try:
            c = _canonical_match(kind, width, m)
        except CompileError as err:
            raise CompileError(f"table {e.table}, {name}: {err.message}", hint=err.hint) \
                from None
        if c is not None:
            match.append((name, c))
    match_t = tuple(match)
    return e if match_t == e.match else replace(e, match=match_t)


def p4info_fields(info) -> dict[str, dict[str, tuple[str, int]]]:
    """Each table's match fields in a P4Info, in key order: ``{table: {name: (kind,
    width)}}`` (what :func:`canonical` takes)."""
    from finsy.proto import p4i

    mf = p4i.MatchField
    kinds = {mf.EXACT: "exact", mf.LPM: "lpm", mf.TERNARY: "ternary", mf.RANGE: "range",
             mf.OPTIONAL: "optional"}
    return {t.preamble.name: {f.name: (kinds.get(f.match_type, "unspecified"), f.bitwidth)
                              for f in t.match_fields} for t in info.tables}


def make_entry(table: str, match: Mapping[str, object], kinds: Mapping[str, str], action: str,
               params: Mapping[str, object] | None = None, priority: int | None = None, *,
               group: str = "", note: str = "") -> TableEntry:
    """An entry from values as written (:func:`match_value`, :func:`parse_value`); *kinds*
    gives each match field's kind.

    >>> e = make_entry("r", {"dst": "0.0.0.0/0"}, {"dst": "lpm"}, "set_nexthop", {"port": 1})
    >>> e.match, e.params
    ((), (('port', 1),))
    """
    out = []
    for k, v in match.items():
        if k not in kinds:
            raise CompileError(f"table {table} has no match field {k!r}",
                               hint=did_you_mean(k, kinds) or f"its fields: {', '.join(kinds)}")
        m = match_value(kinds[k], v)
        if m is not None:
            out.append((k, m))
    return TableEntry(table, tuple(out), action,
                      tuple((k, parse_value(v)) for k, v in (params or {}).items()),
                      priority, group, note)


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
        own = {a.name for a in d.control.actions()} if d.control is not None else set()
        for e in d.entries:
            action = (comp.action(f"{slot.instance}.{e.action}", slot.pipelet) if e.action in own
                      else e.action)
            out.append(make_entry(_tbl(comp, f"{slot.instance}.{e.table}", slot.pipelet), e.match,
                                  dict(d.table(e.table).keys), action, e.params, e.priority,
                                  group=f"nf:{slot.instance}", note=f"example entry of {d.name}"))
    return out


def all_entries(comp: Composition) -> list[TableEntry]:
    return chain_entries(comp) + nf_entries(comp)


def groups(entries: Iterable[TableEntry]) -> dict[str, list[TableEntry]]:
    """Entries by group (``chain:web``, ``nf:slot0_firewall`` …), in order."""
    out: dict[str, list[TableEntry]] = {}
    for e in entries:
        out.setdefault(e.group, []).append(e)
    return out
