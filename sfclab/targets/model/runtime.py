"""The control-plane API of :class:`~.switch.ModelSwitch`, P4Runtime-like.

Objects are named by their fully qualified P4Runtime names
(``SfcIngress.slot0_firewall.acl``); a unique dotted suffix (``acl``,
``slot0_firewall.acl``) is accepted too.  Values are ints (or bytes, or
``"10.0.0.1"``-style text); match values per key kind are described in
:mod:`.tables`.  Refusals raise the classes of :mod:`.errors`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import did_you_mean
from .errors import EntryNotFoundError, InvalidValueError, UnknownNameError
from .externs import CounterArray, Meter, MeterArray, RegisterArray
from .result import Digest
from .tables import Entry, Table, to_int

__all__ = ["ControlPlane", "EntryView"]


@dataclass(frozen=True, slots=True)
class EntryView:
    """A table entry as read back: match per key name, action, params, counters."""

    table: str
    match: dict
    action: str
    params: dict
    priority: int = 0
    const: bool = False
    packets: int = 0
    bytes: int = 0
    meter: tuple | None = field(default=None)


def _by_kind(kind: str | None, packets: int, nbytes: int) -> tuple[int, int]:
    """``(packets, bytes)`` as P4Runtime reports a counter of *kind* (the other one is 0)."""
    if kind == "packets":
        return packets, 0
    if kind == "bytes":
        return 0, nbytes
    return packets, nbytes


def _resolve(kind: str, name: str, pool: dict):
    if name in pool:
        return pool[name]
    cands = [n for n in pool if n.endswith("." + name)]
    if len(cands) == 1:
        return pool[cands[0]]
    if len(cands) > 1:
        raise UnknownNameError(f"{kind} name {name!r} is ambiguous: {', '.join(sorted(cands))}")
    names = sorted(pool)
    raise UnknownNameError(f"no {kind} named {name!r}; the program's {kind}s: "
                           f"{', '.join(names) or '(none)'}",
                           hint=did_you_mean(name, names + [n.rsplit('.', 1)[-1] for n in names]))


class ControlPlane:
    """Mixin: tables, counters, registers, meters, multicast, clone sessions, digests."""

    tables: dict
    externs: dict

    # -- tables ----------------------------------------------------------------------------
    def table(self, name: str) -> Table:
        return _resolve("table", name, self.tables)

    def insert(self, table: str, match=None, action: str = "NoAction", params=None, *,
               priority: int | None = None) -> EntryView:
        """Add an entry; EntryExistsError if its key (and priority) is installed."""
        t = self.table(table)
        return self._view(t, t.insert(match, action, params, priority))

    def modify(self, table: str, match=None, action: str = "NoAction", params=None, *,
               priority: int | None = None) -> EntryView:
        """Change an installed entry's action; EntryNotFoundError if there is none."""
        t = self.table(table)
        return self._view(t, t.modify(match, action, params, priority))

    def delete(self, table: str, match=None, *, priority: int | None = None) -> EntryView:
        """Remove an entry; EntryNotFoundError if there is none."""
        t = self.table(table)
        return self._view(t, t.delete(match, priority))

    def clear(self, table: str) -> None:
        self.table(table).clear()

    def set_default(self, table: str, action: str, params=None) -> None:
        """Set the action a miss runs (ReadOnlyError for a const default action)."""
        self.table(table).set_default(action, params)

    def reset_default(self, table: str) -> None:
        self.table(table).reset_default()

    def default_action(self, table: str) -> tuple[str, dict]:
        a, args = self.table(table).default
        return a.name, {n: v for (n, _), v in zip(a.params, args)}

    def entries(self, table: str) -> list[EntryView]:
        """The installed entries (const ones included), highest priority first."""
        t = self.table(table)
        es = sorted(t.entries.values(), key=lambda e: (-e.priority, e.seq))
        return [self._view(t, e) for e in es]

    def entry(self, table: str, match=None, *, priority: int | None = None) -> EntryView:
        t = self.table(table)
        return self._view(t, t.find(match, priority))

    def _view(self, t: Table, e: Entry) -> EntryView:
        pk, by = _by_kind(t.counter_kind, e.packets, e.bytes) if t.counter_kind else (0, 0)
        return EntryView(t.name, {k.name: m for k, m in zip(t.keys, e.match)}, e.action.name,
                         e.params(), e.priority, e.const, pk, by,
                         e.meter.config() if isinstance(e.meter, Meter) else None)

    def table_info(self, table: str) -> dict:
        """Keys (name, kind, width), actions with parameters, size and default action."""
        t = self.table(table)
        return {"name": t.name, "keys": [(k.name, k.kind, k.width) for k in t.keys],
                "actions": {a.name: list(a.params) for a in t.actions.values()},
                "size": t.size, "default": self.default_action(table),
                "const_entries": t.const_entries, "default_const": t.default_const}

    # -- externs ---------------------------------------------------------------------------
    def _extern(self, name: str, cls, what: str):
        pool = {n: e for n, e in self.externs.items() if isinstance(e.state, cls)}
        return _resolve(what, name, pool).state

    def read_register(self, name: str, index: int | None = None):
        """One cell, or all cells as a list."""
        r: RegisterArray = self._extern(name, RegisterArray, "register")
        if index is None:
            return list(r.cells)
        self._index(r, index)
        return r.cells[index]

    def write_register(self, name: str, index: int, value) -> None:
        r: RegisterArray = self._extern(name, RegisterArray, "register")
        self._index(r, index)
        if r.signed:
            lo, hi = -(1 << (r.width - 1)), (1 << (r.width - 1)) - 1
            if not isinstance(value, int) or not lo <= value <= hi:
                raise InvalidValueError(f"register {r.name}: {value!r} is not an int<{r.width}>")
            r.cells[index] = value
        else:
            r.cells[index] = to_int(value, r.width, f"register {r.name}[{index}]")

    def reset_register(self, name: str) -> None:
        r: RegisterArray = self._extern(name, RegisterArray, "register")
        r.cells[:] = [0] * r.size

    def read_counter(self, name: str, index: int | None = None):
        """``(packets, bytes)`` at *index*, or a list of them for every index."""
        c: CounterArray = self._extern(name, CounterArray, "counter")
        if index is None:
            return [_by_kind(c.kind, pk, by) for pk, by in zip(c.packets, c.bytes)]
        self._index(c, index)
        return _by_kind(c.kind, c.packets[index], c.bytes[index])

    def reset_counter(self, name: str) -> None:
        if name in self.direct_counters or any(n.endswith("." + name) for n in self.direct_counters):
            t = _resolve("direct counter", name, self.direct_counters)
            for e in t.entries.values():
                e.packets = e.bytes = 0
            return
        c: CounterArray = self._extern(name, CounterArray, "counter")
        c.packets[:] = [0] * c.size
        c.bytes[:] = [0] * c.size

    def read_direct_counter(self, table: str, match=None, *, priority: int | None = None):
        """``(packets, bytes)`` of one entry of a table with a direct counter."""
        t = self.table(table)
        if t.counter_kind is None:
            raise UnknownNameError(f"table {t.name} has no direct counter")
        e = t.find(match, priority)
        return _by_kind(t.counter_kind, e.packets, e.bytes)

    def set_meter(self, name: str, index: int | None = None, *, cir: float, cburst: int,
                  pir: float, pburst: int) -> None:
        """Configure a meter cell (all cells when *index* is None): rates in units
        (packets or bytes) per second, bursts in units, as P4Runtime's MeterConfig."""
        m: MeterArray = self._extern(name, MeterArray, "meter")
        if cir > pir:
            raise InvalidValueError(f"meter {m.name}: cir {cir} is above pir {pir}")
        cells = range(m.size) if index is None else [index]
        for i in cells:
            self._index(m, i)
            m.meters[i].configure(cir / 1e6, cburst, pir / 1e6, pburst, self.now_us())
        return None

    def reset_meter(self, name: str, index: int | None = None) -> None:
        m: MeterArray = self._extern(name, MeterArray, "meter")
        for i in (range(m.size) if index is None else [index]):
            m.meters[i].reset()

    def set_direct_meter(self, table: str, match=None, *, priority: int | None = None,
                         cir: float, cburst: int, pir: float, pburst: int) -> None:
        t = self.table(table)
        if t.meter_kind is None:
            raise UnknownNameError(f"table {t.name} has no direct meter")
        e = t.find(match, priority)
        e.meter = Meter(t.meter_kind)
        e.meter.configure(cir / 1e6, cburst, pir / 1e6, pburst, self.now_us())

    def now_us(self) -> int:
        """The switch clock (microseconds since it started): what ``process`` uses for
        timestamps and meters unless given ``now_us``."""
        return int((time.monotonic() - self._t0) * 1e6)

    @staticmethod
    def _index(obj, index) -> None:
        if not isinstance(index, int) or not 0 <= index < obj.size:
            raise InvalidValueError(f"{obj.name}: index {index!r} is not in 0..{obj.size - 1}")

    # -- packet replication ------------------------------------------------------------------
    def set_multicast_group(self, group: int, replicas: Iterable) -> None:
        """Replicas are ports or ``(port, rid)`` pairs (rid: ``egress_rid``, default 0)."""
        if not isinstance(group, int) or not 0 < group < (1 << 16):
            raise InvalidValueError(f"multicast group id {group!r} is not in 1..65535")
        self.mc_groups[group] = self._replicas(replicas, f"multicast group {group}")

    def delete_multicast_group(self, group: int) -> None:
        if self.mc_groups.pop(group, None) is None:
            raise EntryNotFoundError(f"multicast group {group} is not configured")

    def set_clone_session(self, session: int, replicas: Iterable) -> None:
        """Where clones to *session* go: ports or ``(port, instance)`` pairs."""
        if not isinstance(session, int) or not 0 <= session < (1 << 15):
            raise InvalidValueError(f"clone session id {session!r} is not in 0..32767")
        self.clone_sessions[session] = self._replicas(replicas, f"clone session {session}")

    def delete_clone_session(self, session: int) -> None:
        if self.clone_sessions.pop(session, None) is None:
            raise EntryNotFoundError(f"clone session {session} is not configured")

    @staticmethod
    def _replicas(replicas: Iterable, what: str) -> list[tuple[int, int]]:
        out = []
        for r in replicas:
            port, rid = (r, 0) if isinstance(r, int) else r
            out.append((to_int(port, 9, f"{what}: port"), to_int(rid, 16, f"{what}: rid")))
        return out

    # -- digests ---------------------------------------------------------------------------
    def read_digests(self, name: str | None = None) -> list[Digest]:
        """Digests received since the last read (of type *name* only, if given)."""
        keep, out = [], []
        for d in self.pending_digests:
            (out if name is None or d.name == name else keep).append(d)
        self.pending_digests = keep
        return out
