"""A TNA parser's runs, remembered by the bytes they read: a flow cache for parsers.

A TNA packet runs two parsers a pass (ingress and egress), and a packet that goes round a
recirculation port runs them again; the packets of one flow carry the same headers.  A
parser whose effects depend on nothing but the bytes it reads runs once per distinct
header bytes: :class:`ParseCache` remembers what the run did (the slots it wrote, where it
stopped, its trace events, the headers it extracted) under the bytes it consumed, and a
later packet that starts with the same bytes gets the same effects written back, without
running the states.

Which parsers qualify is decided from the parser's P4 text (:func:`cacheable`), never
guessed: its calls are ``extract``, ``advance``, ``verify`` and the methods of its own
``Checksum`` instances only (no ``lookahead``, which reads past what it consumes; no value
set, counter, random, hash, sub-parser or function, whose state or result is not in the
bytes); it takes no ``*_from_parser_t`` metadata (the switch sets its timestamp before the
parse); and it reads the intrinsic metadata's timestamp (``ingress_mac_tstamp``,
``enq_tstamp``: different in every packet) nowhere but in the extract, so that a
remembered run is the new packet's run with that one slot set to the new timestamp.

What a run read is exactly the bytes it consumed (no lookahead), so a packet whose first
*n* bytes equal those of a remembered run that consumed *n* bytes makes every decision the
same way and ends at the same place.  Only runs that end without a parser error are
remembered, and only when nothing but the parser's own slots, position and memo changed.
Remembering a run costs more than running it (its slots are compared and copied), and
the runs kept cost the garbage collector, so a run is remembered the second time its bytes
are parsed: the first time only a hash of the bytes it consumed is noted (at most
:data:`SEEN` of them; then the notes start again).  A flow's second packet is remembered and its
later ones hit; packets that never repeat (metadata that changes with every packet, such
as a counter carried in bridged metadata) are parsed and never remembered.  The cache
holds at most :data:`LIMIT` runs (then it starts again).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from ....p4 import ast as A

__all__ = ["ParseCache", "cacheable", "LIMIT", "SEEN"]

#: The most runs one parser's cache holds; a full cache is emptied and fills again.
LIMIT = 1024
#: The most consumed bytes of runs not remembered (seen once) a cache notes; then it
#: starts again.
SEEN = 4096

_PACKET_METHODS = {"extract", "advance"}
_CHECKSUM_METHODS = {"add", "subtract", "subtract_all_and_deposit", "verify", "get"}
_FROM_PARSER = {"ingress_intrinsic_metadata_from_parser_t",
                "egress_intrinsic_metadata_from_parser_t"}
#: What the switch puts in every packet's Pkt that a parser must leave alone.
_KEPT = ("plen", "ingress_len", "resubmit", "recirculate", "clone", "digests", "truncate",
         "marked_drop", "emitted", "payload", "now", "in_egress", "color", "memo", "pipe")


def cacheable(decl: A.ParserDecl, intr_type: str, tstamp: str) -> str | None:
    """None when parser *decl*'s runs depend on the bytes it consumes only (with the
    intrinsic metadata of type *intr_type*'s field *tstamp* read only by its extract);
    else why not."""
    if not decl.params:
        return "it has no parameters"
    pkt = decl.params[0].name
    intr = None
    for prm in decl.params[1:]:
        t = prm.type.name if isinstance(prm.type, A.NamedType) else None
        if t in _FROM_PARSER:
            return f"it takes {t}, whose timestamp the switch sets"
        if t == intr_type:
            intr = prm.name
    checksums = set()
    for d in decl.locals:
        if isinstance(d, A.Instance) and isinstance(d.type, A.NamedType) \
                and d.type.name == "Checksum":
            checksums.add(d.name)
        elif not isinstance(d, A.VarDecl):
            return f"its local {getattr(d, 'name', d)} keeps state outside the packet"
    allowed_intr = set()                 # ids of the Name nodes of intr that may be read
    uses_intr = []
    variables = [d for d in decl.locals if isinstance(d, A.VarDecl)]
    for st in (*variables, *decl.states):
        for n in A.walk(st):
            if isinstance(n, A.Call):
                f = n.func
                if isinstance(f, A.Name) and f.name == "verify":
                    continue
                if isinstance(f, A.Member) and isinstance(f.expr, A.Name):
                    if f.expr.name == pkt and f.name in _PACKET_METHODS:
                        if f.name == "extract" and n.args and isinstance(n.args[0], A.Name) \
                                and n.args[0].name == intr:
                            allowed_intr.add(id(n.args[0]))
                        continue
                    if f.expr.name in checksums and f.name in _CHECKSUM_METHODS:
                        continue
                return f"it calls {_show(f)}"
            if isinstance(n, A.Member) and isinstance(n.expr, A.Name) and n.expr.name == intr:
                if n.name == tstamp:
                    return f"it reads {intr}.{tstamp}"
                allowed_intr.add(id(n.expr))
            if isinstance(n, A.Name) and intr is not None and n.name == intr:
                uses_intr.append(n)
    for n in uses_intr:
        if id(n) not in allowed_intr:
            return f"it uses {intr} as a whole"
    return None


def _show(f: A.Node) -> str:
    if isinstance(f, A.Member):
        return f"{_show(f.expr)}.{f.name}"
    return getattr(f, "name", type(f).__name__)


class ParseCache:
    """One parser's remembered runs (see the module's docstring).

    A packet is looked up (:meth:`hit`) by its bytes alone, the intrinsic metadata the
    switch would put in front being determined by *key* and the timestamp (so a hit
    never builds them); on a miss the switch puts them in front and :meth:`miss` parses.
    ``tstamp_slot`` is the slot the timestamp is extracted into (when the run extracts
    the header whose validity slot is ``valid_slot``), *ts* its value for this packet.

    ``region`` is the gress's slots (``lo, hi``): before its parser runs they hold a fresh
    packet's values, but for ``volatile`` ones, which the switch sets for each packet.  A
    run that writes outside the region is not remembered; a remembered run writes back
    the region's slots from the first it wrote to the last, in one slice where no
    volatile slot lies between (the slots it did not write hold, then as now, a fresh
    packet's values)."""

    __slots__ = ("parse", "tstamp_slot", "valid_slot", "region", "cuts", "runs", "lengths",
                 "lookups", "hits", "seen", "looked")

    def __init__(self, parse: Callable, tstamp_slot: int, valid_slot: int,
                 region: tuple[int, int], volatile: frozenset[int] = frozenset()) -> None:
        self.parse = parse
        self.tstamp_slot, self.valid_slot = tstamp_slot, valid_slot
        self.region, self.cuts = region, sorted(volatile)
        self.runs: dict = {}
        self.lengths: dict = {}          # key -> the lengths its parses consumed
        self.lookups = self.hits = 0     # in all
        self.seen: set[int] = set()      # hashes of (key, consumed bytes) of runs seen once
        self.looked = False              # whether the last miss is to be remembered

    def hit(self, p, key, ts: int) -> bool:
        """Look packet *p* up (``p.data``: the packet's bytes, without the intrinsic
        metadata the switch puts in front): True when a remembered run's effects were
        written into *p* (``p.pos`` then indexes ``p.data``); False when the caller is to
        put the intrinsic metadata in front and call :meth:`miss`."""
        self.lookups += 1
        data = p.data
        runs, seen = self.runs, self.seen
        again = False
        for n in self.lengths.get(key, ()):
            k = (key, data[:n])
            hit = runs.get(k)
            if hit is not None:
                self.hits += 1
                writes, events, ext, pos, stamped = hit
                v = p.v
                for a, b, vals in writes:
                    v[a:b] = vals
                if stamped:
                    v[self.tstamp_slot] = ts
                p.pos = pos
                p.tr.extend(events)
                if ext:                  # the headers extracted: only parsers write ext,
                    if p.ext:            # so a fresh packet's may be the remembered one
                        p.ext.update(ext)
                    else:
                        p.ext = ext
                return True
            if hash(k) in seen:
                again = True
        self.looked = again
        return False

    def miss(self, p, key, at: int) -> None:
        """Parse *p* (its bytes from *at* on are the packet's, those before the intrinsic
        metadata) after :meth:`hit` said no: remembered when its bytes were parsed once
        before, else noted."""
        if self.looked:
            self._record(p, key, at)
            return
        self.parse(p)
        if p.parser_error != "NoError" or p.pos < at:
            return
        seen = self.seen
        if len(seen) >= SEEN:
            seen.clear()
        seen.add(hash((key, p.data[at:p.pos])))   # an int: no object for the collector
        self._length(key, p.pos - at)

    def _length(self, key, n: int) -> None:
        known = self.lengths.get(key)
        if known is None:
            if len(self.lengths) >= LIMIT:
                self.lengths.clear()     # lengths of keys long gone (egress lengths vary)
                self.runs.clear()
            self.lengths[key] = [n]
        elif n not in known:
            known.append(n)

    def _record(self, p, key, at: int) -> None:
        v = p.v
        lo, hi = self.region
        head, before, tail = v[:lo], v[lo:hi], v[hi:]
        kept = [getattr(p, a, None) for a in _KEPT]
        n0 = len(p.tr)
        ext0 = dict(p.ext) if p.ext else {}
        self.parse(p)
        if p.parser_error != "NoError" or p.pos < at:
            return
        if any(getattr(p, a, None) is not x for a, x in zip(_KEPT, kept)) \
                or len(v) != lo + len(before) + len(tail) or v[:lo] != head or v[hi:] != tail:
            return                           # it changed more than its gress's slots
        changed: list[int] = []
        for a in range(0, hi - lo, 32):      # slot by slot only where a block changed
            now, old = v[lo + a:lo + a + 32], before[a:a + 32]
            if now != old:
                changed += [lo + a + i for i, (x, y) in enumerate(zip(now, old)) if x != y]
        writes = []
        first = 0
        for stop in [*(bisect_left(changed, c) for c in self.cuts), len(changed)]:
            if stop > first:                 # a slice up to the next volatile slot
                a, b = changed[first], changed[stop - 1] + 1
                writes.append((a, b, tuple(v[a:b])))
                first = stop
        valid = self.valid_slot               # the intrinsic metadata was extracted: its
        stamped = any(a <= valid < b for a, b, _ in writes)   # timestamp is this packet's
        ext = {k: e for k, e in (p.ext or {}).items() if ext0.get(k) is not e}
        if len(self.runs) >= LIMIT:
            self.runs.clear()
            self.lengths.clear()
        consumed = p.pos - at
        self.runs[(key, p.data[at:p.pos])] = (tuple(writes), tuple(p.tr[n0:]), ext, consumed,
                                                   stamped)
        self._length(key, consumed)
