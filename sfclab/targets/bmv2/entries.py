"""What a BMv2 table ran a packet with: the entry it hit, as the model's traces say it.

BMv2's event logger gives a table hit as ``(table id, entry handle)`` and an action
as its id: no match, no arguments.  The switch's Thrift runtime holds the rest
(:meth:`~sfclab.targets.bmv2.thrift.Bmv2Thrift.table_entry`, ``default_entry``): :class:`HeldEntries`
asks it once per entry (until :meth:`HeldEntries.forget`, at each batch) and gives
:class:`~sfclab.targets.bmv2.events.TraceBuilder` the action and its data (``action_args``) and the
entry described as the model describes its entries (``entry_name``:
``hdr.ipv4.dst_addr=0x0a000100/24``, wildcards left out, ``priority=N`` in a table
matched by priority).  A switch whose Thrift server does not serve these calls, or
cannot be reached, is not asked again; its traces show actions without arguments
and entries by their handle.

>>> e = HeldEntry.from_thrift({1: [{1: 1, 3: {1: b"\\x0a\\x00\\x01\\x00", 2: 24}}], 2: {1: -1},
...                            3: 0, 4: {1: 1, 2: b"ingress.route", 3: [b"\\x01\\x01", b"\\x09"]}})
>>> e.action, e.args
('ingress.route', (257, 9))
>>> e.describe((("hdr.ipv4.dst_addr", 32),))
'hdr.ipv4.dst_addr=0x0a000100/24'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import TargetError
from .events import NameMap
from .thrift import Bmv2Thrift, ThriftError

__all__ = ["HeldEntry", "HeldEntries"]

#: BMv2's ``BmMatchParamType`` -> the match kind; the struct's field id for its value.
_MATCH = {0: ("exact", 2), 1: ("lpm", 3), 2: ("ternary", 4), 3: ("valid", 5), 4: ("range", 6)}
#: Thrift's own errors (``TApplicationException``) say the server cannot do the call.
_CANNOT = ("UNKNOWN_METHOD", "INTERNAL_ERROR", "PROTOCOL_ERROR")
_INT32_MAX = (1 << 31) - 1


def _int(v: Any) -> int:
    return int.from_bytes(v, "big") if isinstance(v, (bytes, bytearray)) else int(v or 0)


@dataclass(frozen=True, slots=True)
class HeldEntry:
    """An entry (or a default entry: no match) as BMv2 holds it."""

    action: str
    args: tuple[int, ...]
    #: Per key field: its kind and values (exact: (v,); lpm: (v, prefix length);
    #: ternary: (v, mask); range: (low, high); valid: (0 or 1,)).
    match: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: P4Runtime's priority (BMv2 keeps ``INT32_MAX - priority``); None: no priority.
    priority: int | None = None

    @classmethod
    def from_thrift(cls, entry: Mapping[int, Any] | None, *, default: bool = False
                    ) -> HeldEntry | None:
        """From a ``BmMtEntry`` (or, *default*, a ``BmActionEntry``); None for an entry
        of an action profile (no data of its own)."""
        if not isinstance(entry, Mapping):
            return None
        act = entry if default else entry.get(4)
        if not isinstance(act, Mapping) or act.get(1) != 1:          # ACTION_DATA
            return None
        name = act.get(2, b"")
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        args = tuple(_int(v) for v in act.get(3) or ())
        if default:
            return cls(name, args)
        match = []
        for p in entry.get(1) or ():
            kind, fid = _MATCH.get(p.get(1), ("exact", 2))
            v = p.get(fid) or {}
            match.append((kind, tuple(_int(v.get(i)) for i in sorted(v))))
        prio = (entry.get(2) or {}).get(1, -1)
        return cls(name, args, tuple(match), _INT32_MAX - prio if prio >= 0 else None)

    def describe(self, keys: Sequence[tuple[str, int]]) -> str:
        """The entry as the model describes its entries (:mod:`sfclab.targets.model`)."""
        parts = []
        for (name, width), (kind, v) in zip(keys, self.match):
            hexw = (width + 3) // 4 if width else 1
            if (kind in ("lpm", "ternary") and v[1] == 0) or (
                    kind == "range" and width and v == (0, (1 << width) - 1)):
                continue                              # a wildcard: left out, as the model does
            if kind == "lpm":
                parts.append(f"{name}=0x{v[0]:0{hexw}x}/{v[1]}")
            elif kind == "ternary":
                parts.append(f"{name}=0x{v[0]:0{hexw}x}&&&0x{v[1]:0{hexw}x}")
            elif kind == "range":
                parts.append(f"{name}={v[0]}..{v[1]}")
            else:
                parts.append(f"{name}=0x{v[0]:0{hexw}x}")
        if self.priority is not None:
            parts.append(f"priority={self.priority}")
        return " ".join(parts)


class HeldEntries:
    """``(table, entry handle or None)`` -> the :class:`HeldEntry` BMv2 holds there,
    each asked once until :meth:`forget`; :attr:`off` says why it stopped asking."""

    def __init__(self, thrift: Bmv2Thrift, names: NameMap | None = None) -> None:
        self.thrift = thrift
        self.names = names or NameMap()
        self.off: str | None = None
        self._known: dict[tuple[str, int | None], HeldEntry | None] = {}

    def get(self, table: str, handle: int | None) -> HeldEntry | None:
        key = (table, handle)
        if key not in self._known and self.off is None:
            try:
                raw = (self.thrift.default_entry(table) if handle is None
                       else self.thrift.table_entry(table, handle))
                self._known[key] = HeldEntry.from_thrift(raw, default=handle is None)
            except ThriftError as e:
                if e.code in _CANNOT:
                    self.off = e.message
                self._known[key] = None                   # a handle BMv2 no longer has
            except TargetError as e:
                self.off = e.message
        return self._known.get(key)

    def action_args(self, table: str, handle: int | None) -> tuple[str, tuple[int, ...]] | None:
        """:data:`~sfclab.targets.bmv2.events.ActionArgs`: the action and data held there."""
        e = self.get(table, handle)
        return (e.action, e.args) if e is not None else None

    def entry_name(self, table: str, handle: int) -> str | None:
        """The hit entry described as the model does (None: unknown)."""
        e = self.get(table, handle)
        keys = self.names.keys.get(table)
        return e.describe(keys) if e is not None and keys is not None else None

    def forget(self, names: NameMap | None = None) -> None:
        """Ask again from now on (the entries may have changed; *names*: the program's,
        when it changed)."""
        self._known.clear()
        if names is not None:
            self.names = names
