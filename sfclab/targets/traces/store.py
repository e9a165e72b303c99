"""The packets a Lab sent, in bounded memory: the last traces whole, every packet counted.

A trace is kept whole (every event, the packet's outputs) for the last
:data:`DEFAULT_KEEP` packets (:attr:`TraceStore.keep`); older ones are dropped,
and :meth:`TraceStore.note` says so.  The :class:`TraceSummary` counts every
packet ever sent: per service path, per egress port (or drop), per drop reason,
and the hits and misses of every table.

A store is indexed by packet number, from 0 for the first packet sent: ``len()``
is the count of packets sent, ``store[-1]`` the last one, ``store[k:]`` the kept
traces from packet *k* on (so ``before = len(store)`` … ``store[before:]`` are the
packets sent since); iterating gives the kept traces, oldest first.

>>> store = TraceStore(keep=2)
>>> for k in range(5):
...     store.append(f"t{k}", "web/0", 1, "", [("acl", k % 2 == 0)])
>>> len(store), list(store), store[-1], store[1:]
(5, ['t3', 't4'], 't4', ['t3', 't4'])
>>> store.note()
'3 older traces dropped: the last 2 are kept whole (keep=2); the summary counts all 5 packets'
>>> print(store.summary.text())
5 packets: 5 out, 0 dropped
  service paths: web/0 ×5
  egress: port 1 ×5
  tables: acl 3 hits / 2 misses
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["TraceStore", "TraceSummary", "Window", "DEFAULT_KEEP"]

#: How many traces a store keeps whole unless told otherwise.
DEFAULT_KEEP = 2000


_COUNTS = ("paths", "egress", "drops", "hits", "misses")


class TraceSummary:
    """Counts of every packet sent: ``paths`` (service path, None when the packet took
    none), ``egress`` (port, None when dropped), ``drops`` (reason), ``hits`` and
    ``misses`` (table name)."""

    def __init__(self) -> None:
        self.packets = 0
        self.paths: Counter = Counter()
        self.egress: Counter = Counter()
        self.drops: Counter = Counter()
        self.hits: Counter = Counter()
        self.misses: Counter = Counter()

    def add(self, path: str | None, egress: int | None, drop_reason: str,
            tables: Iterable[tuple[str, bool]]) -> None:
        """Count one packet."""
        self.packets += 1
        self.paths[path] += 1
        self.egress[egress] += 1
        if egress is None:
            self.drops[drop_reason or "no reason given"] += 1
        hits, misses = self.hits, self.misses
        for name, hit in tables:
            if hit:
                hits[name] += 1
            else:
                misses[name] += 1

    @property
    def dropped(self) -> int:
        return self.egress[None]

    def copy(self) -> TraceSummary:
        out = TraceSummary()
        out.packets = self.packets
        for name in _COUNTS:
            setattr(out, name, Counter(getattr(self, name)))
        return out

    def __sub__(self, before: TraceSummary) -> TraceSummary:
        """The packets counted since *before* (a :meth:`copy` taken then)."""
        out = TraceSummary()
        out.packets = self.packets - before.packets
        for name in _COUNTS:
            setattr(out, name, getattr(self, name) - getattr(before, name))
        return out

    def text(self) -> str:
        """The counts, a line per kind."""
        n, dropped = self.packets, self.dropped
        lines = [f"{n} packet{'s' * (n != 1)}: {n - dropped} out, {dropped} dropped"]

        def counts(c: Counter, name=str) -> str:
            return ", ".join(f"{name(k)} ×{v}" for k, v in c.most_common())
        if self.paths:
            lines.append("  service paths: " + counts(
                self.paths, lambda p: p if p is not None else "(none)"))
        out = Counter({k: v for k, v in self.egress.items() if k is not None})
        if out:
            lines.append("  egress: " + counts(out, lambda p: f"port {p}"))
        if self.drops:
            lines.append("  dropped: " + counts(self.drops))
        tables = sorted(set(self.hits) | set(self.misses))
        if tables:
            lines.append("  tables: " + ", ".join(
                f"{t} {self.hits[t]} hit{'s' * (self.hits[t] != 1)} / {self.misses[t]} "
                f"miss{'es' * (self.misses[t] != 1)}" for t in tables))
        return "\n".join(lines)


class Window:
    """The last *keep* of a numbered sequence of items: ``len()`` counts every item
    appended, indexes are item numbers (negative ones from the end), slices give the
    kept items in range, iteration the kept items."""

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        self._items: deque = deque(maxlen=_check_keep(keep))
        self._count = 0

    @property
    def keep(self) -> int:
        """How many items are kept (setting it drops the oldest beyond it)."""
        return self._items.maxlen

    @keep.setter
    def keep(self, keep: int) -> None:
        self._items = deque(self._items, maxlen=_check_keep(keep))

    @property
    def first(self) -> int:
        """The number of the oldest item kept."""
        return self._count - len(self._items)

    @property
    def dropped(self) -> int:
        """How many items were dropped (the oldest)."""
        return self.first

    def push(self, item: Any) -> None:
        self._items.append(item)
        self._count += 1

    def clear(self) -> None:
        self._items.clear()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __bool__(self) -> bool:
        return self._count > 0

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            first = self.first
            return [self._items[i - first] for i in range(*k.indices(self._count)) if i >= first]
        i = k + self._count if k < 0 else k
        if not 0 <= i < self._count:
            raise IndexError(f"item {k} of {self._count}")
        if i < self.first:
            raise IndexError(f"the trace of packet {i} was dropped: the last {self.keep} are "
                             f"kept whole (the summary counts every packet)")
        return self._items[i - self.first]

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or window) of the same kept items."""
        if isinstance(other, (list, tuple, Window)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._count} sent, the last {len(self._items)} kept>"


def _check_keep(keep: int) -> int:
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
        from ...errors import SfclabError

        raise SfclabError(f"the count of traces to keep must be a whole number ≥ 1, not {keep!r}",
                          hint="e.g. lab.keep_traces = 5000")
    return keep


class TraceStore(Window):
    """The traces of the last :attr:`keep` packets, and a :class:`TraceSummary` of all."""

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        super().__init__(keep)
        self.summary = TraceSummary()

    def append(self, record: Any, path: str | None, egress: int | None, drop_reason: str,
               tables: Iterable[tuple[str, bool]]) -> None:
        """Keep *record* (dropping the oldest beyond :attr:`keep`) and count it."""
        self.push(record)
        self.summary.add(path, egress, drop_reason, tables)

    def clear(self) -> None:
        super().clear()
        self.summary = TraceSummary()

    def note(self) -> str:
        """A line saying how many older traces were dropped ('' when none was)."""
        gone = self.dropped
        if not gone:
            return ""
        return (f"{gone:,} older trace{'s' * (gone != 1)} dropped: the last {self.keep:,} are "
                f"kept whole (keep={self.keep}); the summary counts all {len(self):,} packets")
