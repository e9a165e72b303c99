"""Match-action tables: entries, indexes and lookup as P4Runtime defines them.

A table with only ``exact`` keys is a dict; with one ``lpm`` key (and exact
ones) a dict per prefix length, searched longest first; with any ``ternary``,
``range`` or ``optional`` key (or several ``lpm``) a list sorted by priority,
highest first (P4Runtime: a larger number wins), searched in order.
Inserts and deletes update that index in place, entry by entry (the lookup
closure holds the same dict / list object); :meth:`Table.reindex` rebuilds it
whole, to the same result.

Match values in the API, per key kind: ``exact`` an int; ``lpm`` ``(value,
prefix_len)`` (an int alone is a full-length prefix); ``ternary`` ``(value,
mask)``, an int (all bits) or None (wildcard); ``range`` ``(lo, hi)``, an int or
None; ``optional`` an int or None.  Ints may also be given as bytes or as
``"10.0.0.1"``, ``"aa:bb:cc:dd:ee:ff"``, ``"0x800"`` strings.
"""

from __future__ import annotations

import bisect
import ipaddress
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import did_you_mean
from .errors import (EntryExistsError, EntryNotFoundError, InvalidValueError, ReadOnlyError,
                     TableFullError, UnknownNameError)

__all__ = ["KeySpec", "ActionInfo", "Entry", "Table", "to_int", "DEFAULT_SIZE"]

#: p4c's table size when the program gives none.
DEFAULT_SIZE = 1024
#: A ternary/range/optional table remembers the entry each key it looked up matched (the
#: scan in priority order runs once per distinct key until the entries change); past
#: this many keys it forgets them all and starts again.
SEEN_LIMIT = 4096
_UNSEEN = object()


def to_int(value, width: int, what: str) -> int:
    """*value* (int, bytes or text) as an unsigned int of *width* bits, or InvalidValueError."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (bytes, bytearray)):
        value = int.from_bytes(value, "big")
    elif isinstance(value, str):
        s = value.strip()
        try:
            if s.count(".") == 3:
                value = int(ipaddress.IPv4Address(s))
            elif ":" in s and len(s.split(":")) == 6 and all(len(x) <= 2 for x in s.split(":")):
                value = int(s.replace(":", ""), 16)
            elif ":" in s:
                value = int(ipaddress.IPv6Address(s))
            else:
                value = int(s, 0)
        except ValueError:
            raise InvalidValueError(f"{what}: cannot read {value!r} as a number") from None
    if not isinstance(value, int):
        raise InvalidValueError(f"{what}: expected an int, got {type(value).__name__}")
    if value < 0 or value >> width:
        raise InvalidValueError(f"{what}: {value} does not fit in {width} bits "
                                f"(0 .. {(1 << width) - 1})")
    return value


@dataclass(slots=True)
class KeySpec:
    """One key element: its match-field name, kind, width and reader."""

    name: str
    kind: str
    width: int
    read: Callable


@dataclass(slots=True)
class ActionInfo:
    """An action as tables and the API see it."""

    name: str                               # fully qualified
    local: str                              # as written in the control
    params: list[tuple[str, int]]           # (name, width)
    fn: Callable                            # fn(p, args)
    default_only: bool = False
    table_only: bool = False
    #: arguments bound in the table's action list (``actions = { a(hdr.x); }``): the
    #: first ``bound`` parameters of the action, not in ``params``
    bound: int = 0

    def check_args(self, args, where: str) -> tuple:
        if args is None:
            args = ()
        if isinstance(args, Mapping):
            unknown = set(args) - {n for n, _ in self.params}
            if unknown:
                raise UnknownNameError(
                    f"{where}: action {self.name} has no parameter {sorted(unknown)[0]!r}; "
                    f"its parameters: {', '.join(n for n, _ in self.params) or '(none)'}")
            missing = [n for n, _ in self.params if n not in args]
            if missing:
                raise InvalidValueError(f"{where}: action {self.name} needs parameter(s) "
                                        f"{', '.join(missing)}")
            args = [args[n] for n, _ in self.params]
        elif not isinstance(args, Sequence) or isinstance(args, (str, bytes)):
            args = [args]
        if len(args) != len(self.params):
            raise InvalidValueError(
                f"{where}: action {self.name} takes {len(self.params)} parameter(s) "
                f"({', '.join(f'{n}: bit<{w}>' for n, w in self.params) or 'none'}), "
                f"got {len(args)}")
        return tuple(to_int(a, w, f"{where}: {self.name}({n})")
                     for a, (n, w) in zip(args, self.params))


@dataclass(slots=True, eq=False)
class Entry:
    match: tuple
    action: ActionInfo
    args: tuple
    priority: int = 0
    const: bool = False
    desc: str = ""
    tests: tuple = ()
    packets: int = 0
    bytes: int = 0
    seq: int = 0
    meter: object = None

    def params(self) -> dict[str, int]:
        return {n: v for (n, _), v in zip(self.action.params, self.args)}


@dataclass(eq=False)
class Table:
    """A table's entries and the lookup structure matching its key kinds."""

    name: str
    keys: list[KeySpec]
    actions: dict[str, ActionInfo]          # by qualified name
    default: tuple                          # (ActionInfo, args)
    default_const: bool = False
    size: int = DEFAULT_SIZE
    const_entries: bool = False
    counter_kind: str | None = None         # direct counter: packets / bytes / packets_and_bytes
    meter_kind: str | None = None           # direct meter
    entries: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        kinds = [k.kind for k in self.keys]
        if all(k == "exact" for k in kinds):
            self.mode = "exact"
        elif kinds.count("lpm") == 1 and all(k in ("exact", "lpm") for k in kinds):
            self.mode = "lpm"
        else:
            self.mode = "priority"
        self.initial_default = self.default
        self._seq = 0
        #: Lookups that hit an entry / missed, since the program was loaded.
        self.hits = self.misses = 0
        self.reindex()

    # -- lookup --------------------------------------------------------------------------------
    def reindex(self) -> None:
        """Rebuild the whole lookup index (and the lookup) from the entries."""
        es = list(self.entries.values())
        if self.mode == "exact":
            self.index = {self._exact_key(e): e for e in es}
        elif self.mode == "lpm":
            levels: dict[int, tuple] = {}          # mask -> (position, mask, {key: entry})
            for e in es:
                li, mask, key = self._lpm_place(e)
                levels.setdefault(mask, (li, mask, {}))[2][key] = e
            self.index = [levels[m] for m in sorted(levels, reverse=True)]
        else:
            self.index = sorted(es, key=_rank)
        self.lookup = self._make_lookup()

    def add_entry(self, e: Entry) -> None:
        """Put a made entry (:meth:`make_entry`) in the table and, in place, in its lookup
        index: what :meth:`insert` does once it has checked the entry (no checks here)."""
        self.entries[(e.match, e.priority)] = e
        if self.mode == "exact":
            self.index[self._exact_key(e)] = e
        elif self.mode == "lpm":
            li, mask, key = self._lpm_place(e)
            levels = self.index                   # longest prefix (largest mask) first
            for pos, (_, m, d) in enumerate(levels):
                if m == mask:
                    d[key] = e
                    return
                if m < mask:
                    levels.insert(pos, (li, mask, {key: e}))
                    return
            levels.append((li, mask, {key: e}))
        else:
            bisect.insort(self.index, e, key=_rank)
            self._seen.clear()

    def remove_entry(self, e: Entry) -> None:
        """Take an entry of the table out of it and, in place, out of its lookup index:
        what :meth:`delete` does once it has found the entry."""
        self.entries.pop((e.match, e.priority), None)
        if self.mode == "exact":
            self.index.pop(self._exact_key(e), None)
        elif self.mode == "lpm":
            _, mask, key = self._lpm_place(e)
            levels = self.index
            for pos, (_, m, d) in enumerate(levels):
                if m == mask:
                    d.pop(key, None)
                    if not d:
                        del levels[pos]           # as a rebuild has no empty level
                    return
        else:
            ordered = self.index
            i = bisect.bisect_left(ordered, _rank(e), key=_rank)
            if i < len(ordered) and ordered[i] is e:
                del ordered[i]
                self._seen.clear()
            else:                                 # not where its rank puts it: rebuild
                self.reindex()

    def _exact_key(self, e: Entry):
        """*e*'s key in an exact table's index (the value alone for a single key)."""
        return e.match if len(self.keys) != 1 else e.match[0]

    def _lpm_place(self, e: Entry) -> tuple:
        """``(lpm key position, prefix mask, key)``: *e*'s level and key in an LPM index."""
        li = next(i for i, k in enumerate(self.keys) if k.kind == "lpm")
        v, plen = e.match[li]
        w = self.keys[li].width
        mask = ((1 << w) - 1) ^ ((1 << (w - plen)) - 1)
        key = tuple(m if i != li else v for i, m in enumerate(e.match))
        return li, mask, key

    def _make_lookup(self) -> Callable:
        readers = [k.read for k in self.keys]
        if not readers:
            return lambda p: None
        if self.mode == "exact":
            idx = self.index
            if len(readers) == 1:
                r0 = readers[0]
                return lambda p: idx.get(r0(p))
            return lambda p: idx.get(tuple([r(p) for r in readers]))
        if self.mode == "lpm":
            levels = self.index

            def lpm(p):
                vals = [r(p) for r in readers]
                for li, mask, d in levels:
                    key = list(vals)
                    key[li] &= mask
                    e = d.get(tuple(key))
                    if e is not None:
                        return e
                return None
            return lpm
        ordered = self.index
        seen = self._seen = {}           # key values -> the entry they matched (or None)

        def scan(p):
            vals = tuple([r(p) for r in readers])
            e = seen.get(vals, _UNSEEN)
            if e is not _UNSEEN:
                return e
            for e in ordered:
                for x, (kind, a, b) in zip(vals, e.tests):
                    if kind == 0:
                        if x & b != a:
                            break
                    elif kind == 1:
                        if not a <= x <= b:
                            break
                else:
                    break
            else:
                e = None
            if len(seen) >= SEEN_LIMIT:
                seen.clear()
            seen[vals] = e
            return e
        return scan

    # -- the control plane -------------------------------------------------------------------
    def action(self, name: str) -> ActionInfo:
        a = self.actions.get(name)
        if a is None:
            by_local = [x for x in self.actions.values() if x.local == name or
                        x.name.rsplit(".", 1)[-1] == name]
            if len(by_local) == 1:
                return by_local[0]
            names = sorted(self.actions)
            raise UnknownNameError(f"table {self.name} has no action {name!r}; its actions: "
                                   f"{', '.join(names)}", hint=did_you_mean(name, names))
        return a

    def canonical(self, match, priority: int | None) -> tuple[tuple, int]:
        """The match key as stored, from the API's per-key values."""
        where = f"table {self.name}"
        if isinstance(match, Mapping):
            names = [k.name for k in self.keys]
            unknown = [n for n in match if n not in names]
            if unknown:
                raise UnknownNameError(f"{where} has no match field {unknown[0]!r}; its keys: "
                                       f"{', '.join(names) or '(none)'}",
                                       hint=did_you_mean(unknown[0], names))
            match = [match.get(k.name, _ABSENT) for k in self.keys]
        elif match is None:
            match = []
        elif not isinstance(match, Sequence) or isinstance(match, (str, bytes)):
            match = [match]
        if len(match) != len(self.keys):
            raise InvalidValueError(f"{where} has {len(self.keys)} key(s) "
                                    f"({', '.join(f'{k.name}: {k.kind}' for k in self.keys)}), "
                                    f"got {len(match)} value(s)")
        out = []
        for k, m in zip(self.keys, match):
            out.append(_canonical_key(k, m, f"{where}, key {k.name}"))
        if self.mode == "priority":
            if priority is None or priority <= 0:
                raise InvalidValueError(f"{where} has ternary/range/optional keys: each entry "
                                        f"needs a priority > 0 (a larger number wins)")
        elif priority:
            raise InvalidValueError(f"{where} has only exact/lpm keys: entries take no priority")
        return tuple(out), (priority or 0) if self.mode == "priority" else 0

    def make_entry(self, match: tuple, priority: int, action: ActionInfo, args: tuple,
                   const: bool = False) -> Entry:
        tests = []
        for k, m in zip(self.keys, match):
            full = (1 << k.width) - 1
            if k.kind == "exact":
                tests.append((0, m, full))
            elif k.kind == "lpm":
                v, plen = m
                tests.append((0, v, full ^ ((1 << (k.width - plen)) - 1)))
            elif k.kind == "ternary":
                tests.append((0, m[0], m[1]))
            elif k.kind == "range":
                tests.append((1, m[0], m[1]))
            else:   # optional
                tests.append((0, 0, 0) if m is None else (0, m, full))
        self._seq += 1
        e = Entry(match, action, args, priority, const, tests=tuple(tests), seq=self._seq)
        e.desc = self.describe(e)
        return e

    def describe(self, e: Entry) -> str:
        parts = []
        for k, m in zip(self.keys, e.match):
            hexw = (k.width + 3) // 4
            if k.kind == "exact":
                parts.append(f"{k.name}=0x{m:0{hexw}x}")
            elif (k.kind in ("lpm", "ternary") and m[1] == 0) or m is None or (
                    k.kind == "range" and tuple(m) == (0, (1 << k.width) - 1)):
                continue                          # a wildcard: left out, as P4Runtime does
            elif k.kind == "lpm":
                parts.append(f"{k.name}=0x{m[0]:0{hexw}x}/{m[1]}")
            elif k.kind == "ternary":
                parts.append(f"{k.name}=0x{m[0]:0{hexw}x}&&&0x{m[1]:0{hexw}x}")
            elif k.kind == "range":
                parts.append(f"{k.name}={m[0]}..{m[1]}")
            else:
                parts.append(f"{k.name}=" + ("*" if m is None else f"0x{m:0{hexw}x}"))
        if self.mode == "priority":
            parts.append(f"priority={e.priority}")
        return " ".join(parts)

    def check_action(self, a: ActionInfo, default: bool) -> None:
        if default and a.table_only:
            raise InvalidValueError(f"table {self.name}: action {a.name} is @tableonly and "
                                    f"cannot be the default action")
        if not default and a.default_only:
            raise InvalidValueError(f"table {self.name}: action {a.name} is @defaultonly and "
                                    f"cannot be used in an entry")

    def insert(self, match, action: str, params=None, priority: int | None = None) -> Entry:
        self._writable()
        key, prio = self.canonical(match, priority)
        a = self.action(action)
        self.check_action(a, False)
        args = a.check_args(params, f"table {self.name}")
        ident = (key, prio)
        if ident in self.entries:
            raise EntryExistsError(f"table {self.name} already has an entry "
                                   f"{self.entries[ident].desc}",
                                   hint="modify it, or delete it first")
        if len(self.entries) >= self.size:
            raise TableFullError(f"table {self.name} is full ({self.size} entries)")
        e = self.make_entry(key, prio, a, args)
        self.add_entry(e)
        return e

    def modify(self, match, action: str, params=None, priority: int | None = None) -> Entry:
        self._writable()
        key, prio = self.canonical(match, priority)
        old = self.entries.get((key, prio))
        if old is None:
            raise EntryNotFoundError(f"table {self.name} has no entry matching "
                                     f"{self._desc(key, prio)}")
        a = self.action(action)
        self.check_action(a, False)
        old.action, old.args = a, a.check_args(params, f"table {self.name}")
        return old

    def delete(self, match, priority: int | None = None) -> Entry:
        self._writable()
        key, prio = self.canonical(match, priority)
        e = self.entries.get((key, prio))
        if e is None:
            raise EntryNotFoundError(f"table {self.name} has no entry matching "
                                     f"{self._desc(key, prio)}")
        self.remove_entry(e)
        return e

    def find(self, match, priority: int | None = None) -> Entry:
        key, prio = self.canonical(match, priority)
        e = self.entries.get((key, prio))
        if e is None:
            raise EntryNotFoundError(f"table {self.name} has no entry matching "
                                     f"{self._desc(key, prio)}")
        return e

    def clear(self) -> None:
        self._writable()
        self.entries.clear()
        self.reindex()

    def set_default(self, action: str, params=None) -> None:
        if self.default_const:
            raise ReadOnlyError(f"table {self.name} has a const default action "
                                f"({self.default[0].name})")
        a = self.action(action)
        self.check_action(a, True)
        self.default = (a, a.check_args(params, f"table {self.name}"))

    def reset_default(self) -> None:
        self.default = self.initial_default

    def _writable(self) -> None:
        if self.const_entries:
            raise ReadOnlyError(f"table {self.name} has const entries and cannot be changed")

    def _desc(self, key: tuple, prio: int) -> str:
        return self.describe(Entry(key, None, (), prio))


def _rank(e: Entry) -> tuple:
    """The order of a priority table's index: highest priority first, then oldest first."""
    return (-e.priority, e.seq)


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _canonical_key(k: KeySpec, m, what: str):
    w = k.width
    full = (1 << w) - 1
    if k.kind == "exact":
        if m is _ABSENT or m is None:
            raise InvalidValueError(f"{what}: an exact key needs a value")
        return to_int(m, w, what)
    if k.kind == "lpm":
        if m is _ABSENT or m is None:
            return (0, 0)
        if isinstance(m, tuple):
            v, plen = to_int(m[0], w, what), m[1]
            if not isinstance(plen, int) or not 0 <= plen <= w:
                raise InvalidValueError(f"{what}: prefix length {plen!r} is not in 0..{w}")
        else:
            v, plen = to_int(m, w, what), w
        mask = full ^ ((1 << (w - plen)) - 1)
        if v & ~mask:
            raise InvalidValueError(f"{what}: 0x{v:x}/{plen} has bits set beyond the prefix",
                                    hint=f"use 0x{v & mask:x}/{plen}")
        return (v, plen)
    if k.kind == "ternary":
        if m is _ABSENT or m is None:
            return (0, 0)
        if isinstance(m, tuple):
            v, mask = to_int(m[0], w, what), to_int(m[1], w, what + " (mask)")
        else:
            v, mask = to_int(m, w, what), full
        if v & ~mask:
            raise InvalidValueError(f"{what}: value 0x{v:x} has bits outside mask 0x{mask:x}",
                                    hint=f"use 0x{v & mask:x}")
        return (v, mask)
    if k.kind == "range":
        if m is _ABSENT or m is None:
            return (0, full)
        if isinstance(m, tuple):
            lo, hi = to_int(m[0], w, what), to_int(m[1], w, what)
        else:
            lo = hi = to_int(m, w, what)
        if lo > hi:
            raise InvalidValueError(f"{what}: range {lo}..{hi} is empty")
        return (lo, hi)
    if k.kind == "optional":
        if m is _ABSENT or m is None:
            return None
        return to_int(m, w, what)
    raise InvalidValueError(f"{what}: match kind {k.kind!r} is not supported")
