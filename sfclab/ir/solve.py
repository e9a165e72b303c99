"""Which packets reach a chain: exact reasoning over classifiers and header presence.

A packet belongs to chain *C* on a switch when the initializer gives it to *C*:
it matches *C*'s classifier and none of the chains written before *C* (they
have higher priority).  :func:`regions` lists such packets as :class:`Region`\\ s
— the headers a packet carries and, per field, the set of values it may take
— and :func:`reachable` says whether there is any, with a proof when not.

The reasoning is exact per field.  A term's values are a union of ternary
*cubes* ``(value, mask)`` (:class:`ValueSet`): a prefix or a value/mask is one
cube, a range its prefix cover, ``!=`` the complement; intersections and
differences of cube sets are exact, so nothing is sampled or retried.

Header validity follows the initializer: a term on ``ipv4.src`` only matches
packets that have an IPv4 header (the key includes ``hdr.ipv4.isValid()``),
so a packet without IPv4 escapes every chain that tests IPv4.  Which headers a
packet can carry follows the composed parser (:data:`PARSE`): the headers it
extracts and the values of the fields it selects on (``eth.type`` is 0x8100
exactly when there is a VLAN tag, …).

>>> from sfclab.ir.classifier import Classifier, FieldMatch
>>> from sfclab.ir.fields import FIELDS
>>> src = Classifier((FieldMatch.prefix(FIELDS["ipv4.src"], 0x0A000000, 8),))
>>> dst = Classifier((FieldMatch.prefix(FIELDS["ipv4.dst"], 0x0A000000, 8),))
>>> mgmt = Classifier((FieldMatch.exact(FIELDS["vlan.vid"], 4000),))
>>> r = next(regions(mgmt, [src, dst]))
>>> r.headers, 0x0A000001 in r.domain("ipv4.src"), 0xC0A80001 in r.domain("ipv4.src")
(('vlan', 'ipv4', 'tcp'), False, True)
>>> reachable(mgmt, [src, dst]), reachable(mgmt, [Classifier()])
(True, False)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .classifier import Classifier, FieldMatch, format_value
from .fields import FIELDS

__all__ = ["ValueSet", "Region", "regions", "reachable", "solve", "PARSE", "NEEDS", "ALWAYS",
           "HEADERS", "parse_closure", "header_of"]

#: How the parser goes on after a header: the classifier field it selects on
#: (``None``: a field no classifier tests, such as the VLAN tag's EtherType) and,
#: per next header, the values that lead there (``None``: always, when parsed).
#: It mirrors ``parser_states`` in :mod:`sfclab.codegen.v1model` and the
#: constants of ``p4/include/sfc_headers.p4``.
PARSE: Mapping[str, tuple[str | None, Mapping[str, tuple[int, ...] | None]]] = {
    "ethernet": ("eth.type", {"ipv4": (0x0800,), "ipv6": (0x86DD,), "vlan": (0x8100,),
                              "mpls": (0x8847,), "sfc": (0x88B5,)}),
    "vlan": (None, {"ipv4": (0x0800,), "ipv6": (0x86DD,), "mpls": (0x8847,)}),
    "mpls": (None, {"ipv4": None}),
    "ipv4": ("ipv4.proto", {"tcp": (6,), "udp": (17,), "icmp": (1,)}),
    "ipv6": ("ipv6.next_hdr", {"tcp": (6,), "udp": (17,)}),
    "udp": ("udp.dport", {"vxlan": (4789,)}),
}
#: Headers the composed parser always extracts (``sfc``: a packet carrying it is
#: already inside a chain and is never classified again).
ALWAYS = ("ethernet", "sfc")
#: A header's parser state needs these too (as in the composer).
NEEDS: Mapping[str, tuple[str, ...]] = {
    "tcp": ("ipv4",), "udp": ("ipv4",), "icmp": ("ipv4",), "vxlan": ("udp", "ipv4"),
    "mpls": ("ipv4",)}
#: Every header a class packet may carry below Ethernet.
HEADERS = ("vlan", "mpls", "ipv4", "ipv6", "tcp", "udp", "icmp", "vxlan")
_NEVER = frozenset({"sfc"})
_STOP_FIRST = frozenset({"udp"})      # plain UDP before VXLAN


def header_of(field: str) -> str:
    """The header a classifier field lives in (``""``: standard metadata)."""
    return FIELDS[field].header


def parse_closure(used: Iterable[str]) -> frozenset[str]:
    """The headers a parser extracts when *used* are needed (with :data:`NEEDS`).

    >>> sorted(parse_closure({"tcp", "vlan"}))
    ['ethernet', 'ipv4', 'sfc', 'tcp', 'vlan']
    """
    need = set(used) | set(ALWAYS)
    for h in list(need):
        need.update(NEEDS.get(h, ()))
    return frozenset(need - {""})


# --- sets of field values as ternary cubes ----------------------------------------------------

Cube = tuple[int, int]


@dataclass(frozen=True, slots=True)
class ValueSet:
    """A set of *width*-bit values: disjoint cubes ``(value, mask)``, each the
    values ``x`` with ``x & mask == value``.

    >>> s = ValueSet.full(8) - ValueSet.of_range(8, 10, 200)
    >>> s.size(), 9 in s, 10 in s, s.nearest(100)
    (65, True, False, 8)
    """

    width: int
    cubes: tuple[Cube, ...]

    @classmethod
    def full(cls, width: int) -> ValueSet:
        return cls(width, ((0, 0),))

    @classmethod
    def of_values(cls, width: int, values: Iterable[int]) -> ValueSet:
        top = (1 << width) - 1
        return cls(width, tuple((v, top) for v in sorted(set(values))))

    @classmethod
    def of_range(cls, width: int, lo: int, hi: int) -> ValueSet:
        top, out = (1 << width) - 1, []
        while lo <= hi:
            k = (lo & -lo).bit_length() - 1 if lo else width
            while k and lo + (1 << k) - 1 > hi:
                k -= 1
            out.append((lo, top & ~((1 << k) - 1)))
            lo += 1 << k
        return cls(width, tuple(out))

    @classmethod
    def of_term(cls, t: FieldMatch, width: int) -> ValueSet:
        """The values term *t* accepts (its ``!=`` applied)."""
        return _term_set(t, width)

    def __bool__(self) -> bool:
        return bool(self.cubes)

    def __contains__(self, x: int) -> bool:
        return any(x & m == v for v, m in self.cubes)

    def __and__(self, other: ValueSet) -> ValueSet:
        out = [(va | vb, ma | mb) for va, ma in self.cubes for vb, mb in other.cubes
               if not (va ^ vb) & ma & mb]
        return ValueSet(self.width, tuple(out))

    def __sub__(self, other: ValueSet) -> ValueSet:
        cubes = list(self.cubes)
        for b in other.cubes:
            cubes = [c for a in cubes for c in _cube_minus(a, b)]
            if not cubes:
                break
        return ValueSet(self.width, tuple(cubes))

    def complement(self) -> ValueSet:
        return ValueSet.full(self.width) - self

    def size(self) -> int:
        """How many values the set holds."""
        return sum(1 << (self.width - m.bit_count()) for _, m in self.cubes)

    def nearest(self, x: int) -> int:
        """*x* if it is in the set, else the closest value of the set that keeps the
        bits of *x* a cube leaves free."""
        if x in self:
            return x
        if not self.cubes:
            raise ValueError("an empty set has no values")
        return min(((x & ~m) | v for v, m in self.cubes), key=lambda c: (abs(c - x), c))

    def sample(self, rng: random.Random) -> int:
        """A value of the set, uniformly at random."""
        sizes = [float(1 << (self.width - m.bit_count())) for _, m in self.cubes]
        v, m = rng.choices(self.cubes, weights=sizes)[0]
        return (rng.getrandbits(self.width) & ~m) | v

    def intervals(self) -> list[tuple[int, int]] | None:
        """The set as sorted, merged ``(low, high)`` intervals, or ``None`` when a
        cube is not a prefix (a value/mask with holes)."""
        top = (1 << self.width) - 1
        spans = []
        for v, m in self.cubes:
            free = top & ~m
            if free & (free + 1):
                return None
            spans.append((v, v | free))
        out: list[tuple[int, int]] = []
        for lo, hi in sorted(spans):
            if out and lo <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(hi, out[-1][1]))
            else:
                out.append((lo, hi))
        return out

    def describe(self, field: str = "") -> str:
        """The set as a user reads it (values, ranges or value/mask), for messages.

        >>> s = ValueSet.full(32) - ValueSet.of_range(32, 0x0A000000, 0x0AFFFFFF)
        >>> s.describe("ipv4.src")
        '{0.0.0.0..9.255.255.255, 11.0.0.0..255.255.255.255}'
        """
        f = FIELDS.get(field)
        show = (lambda v: format_value(f, v)) if f else str
        spans = self.intervals()
        if spans is not None:
            parts = [show(lo) if lo == hi else f"{show(lo)}..{show(hi)}" for lo, hi in spans]
        else:
            parts = [f"{show(v)} &&& 0x{m:x}" for v, m in self.cubes]
        more = f", … ({len(parts)} parts)" if len(parts) > 4 else ""
        return "{" + ", ".join(parts[:4]) + more + "}"


def _cube_minus(a: Cube, b: Cube) -> list[Cube]:
    va, ma = a
    vb, mb = b
    if (va ^ vb) & ma & mb:
        return [a]                          # disjoint
    out, free = [], mb & ~ma
    while free:                             # split off, high bit first, what differs from b
        bit = 1 << (free.bit_length() - 1)
        free ^= bit
        out.append(((va & ~bit) | (~vb & bit), ma | bit))
        va, ma = (va & ~bit) | (vb & bit), ma | bit
    return out


@lru_cache(maxsize=4096)
def _term_set(t: FieldMatch, width: int) -> ValueSet:
    top = (1 << width) - 1
    if t.kind == "range":
        s = ValueSet.of_range(width, t.value, min(t.high or 0, top))
    else:
        m = t.effective_mask & top if t.kind != "exact" else top
        s = ValueSet(width, ((t.value & m, m),))
    return s.complement() if t.negate else s


# --- packet shapes (which headers) ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Shape:
    headers: tuple[str, ...]
    rules: tuple[tuple[str, bool, tuple[int, ...]], ...]    # field in / not in values


@lru_cache(maxsize=256)
def _shapes(may: frozenset[str], must: frozenset[str]) -> tuple[_Shape, ...]:
    """Every header stack the parser can produce, simplest first: the headers of
    *may* can be parsed, those of *must* surely are (a value that selects one of
    them always leads there)."""
    out: list[_Shape] = []

    def walk(h: str, headers: tuple[str, ...], rules: tuple) -> None:
        field, kids = PARSE.get(h, (None, {}))
        taken = [(k, vals) for k, vals in kids.items() if k in must or k in _NEVER]
        stop = None
        if not any(vals is None for _, vals in taken):
            excl = tuple(v for _, vals in taken for v in vals or ())
            stop = _Shape(headers, rules + (((field, False, excl),) if field and excl else ()))
        if stop is not None and h in _STOP_FIRST:
            out.append(stop)
            stop = None
        for k, vals in kids.items():
            if k in may and k not in _NEVER:
                walk(k, (*headers, k), rules + (((field, True, vals),) if field and vals else ()))
        if stop is not None:
            out.append(stop)

    walk("ethernet", (), ())
    return tuple(out)


# --- regions and the search -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Region:
    """Packets of one shape: the headers below Ethernet (in parse order) and, per
    field, the values allowed (fields not listed may take any value)."""

    headers: tuple[str, ...]
    domains: Mapping[str, ValueSet]
    widths: Mapping[str, int] | None = None

    def has(self, field: str) -> bool:
        """Whether packets of this region carry *field*'s header."""
        return header_of(field) in ("", "ethernet") or header_of(field) in self.headers

    def fields(self) -> list[str]:
        """Every classifier field these packets carry."""
        return [f for f in FIELDS if self.has(f)]

    def domain(self, field: str) -> ValueSet:
        got = self.domains.get(field)
        return got if got is not None else ValueSet.full(_width(field, self.widths))

    def witness(self, prefer: Mapping[str, int] | None = None) -> dict[str, int]:
        """One packet of the region: a value for every field it carries, the one in
        *prefer* where the region allows it (else the nearest allowed)."""
        prefer = prefer or {}
        return {f: self.domain(f).nearest(prefer.get(f, 0)) for f in self.fields()}

    def __str__(self) -> str:
        head = "/".join(("ethernet", *self.headers))
        cons = [f"{f} in {vs.describe(f)}" for f, vs in self.domains.items()
                if vs.size() < (1 << vs.width)]
        return head + (": " + ", ".join(cons) if cons else "")


def _width(field: str, widths: Mapping[str, int] | None) -> int:
    return (widths or {}).get(field) or FIELDS[field].width


def _terms(c: Classifier | Sequence[FieldMatch] | None) -> tuple[FieldMatch, ...] | None:
    if c is None:
        return None
    return tuple(c.terms) if isinstance(c, Classifier) else tuple(c)


class _Budget:
    def __init__(self, steps: int) -> None:
        self.left = steps

    def tick(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _OutOfBudget


class _OutOfBudget(Exception):
    pass


def _parse_sets(parsed: Iterable[str] | None, named: set[str]) -> tuple[frozenset, frozenset]:
    if parsed is None:      # unknown program: any header may be parsed, the named ones are
        return frozenset(HEADERS) | parse_closure(named), parse_closure(named)
    p = parse_closure(parsed)
    return p, p


def regions(match: Classifier | Sequence[FieldMatch] | None,
            earlier: Sequence[Classifier | None] = (), *, parsed: Iterable[str] | None = None,
            widths: Mapping[str, int] | None = None, budget: int = 20_000) -> Iterator[Region]:
    """The packets *match* takes and no classifier of *earlier* does, as disjoint
    regions, simplest header stack first.

    *parsed*: the headers the program's parser extracts (``Composition.headers``);
    ``None`` (not known) lets a packet carry any header, a sound over-approximation.
    An earlier ``None`` (a chain without ``match``) takes every packet.  Stops after
    *budget* search steps (a pathological chain set), without a wrong answer."""
    mine = _terms(match) or ()
    before = [_terms(e) for e in earlier]
    named = {header_of(t.field) for t in mine} | {
        header_of(t.field) for ts in before for t in (ts or ())}
    if any(not ts for ts in before):
        return                              # a chain without a match takes every packet
    may, must = _parse_sets(parsed, named)
    steps = _Budget(budget)
    try:
        for shape in _shapes(may, must):
            for dom in _search(shape, mine, before, widths, steps):
                yield Region(shape.headers, dom, widths)
    except _OutOfBudget:
        return


def reachable(match: Classifier | Sequence[FieldMatch] | None,
              earlier: Sequence[Classifier | None] = (), *, parsed: Iterable[str] | None = None,
              widths: Mapping[str, int] | None = None, budget: int = 20_000) -> bool | None:
    """Whether some packet matches *match* and none of *earlier*; ``None`` when the
    search ran out of *budget* steps before it could tell."""
    mine = _terms(match) or ()
    before = [_terms(e) for e in earlier]
    named = {header_of(t.field) for t in mine} | {
        header_of(t.field) for ts in before for t in (ts or ())}
    if any(not ts for ts in before):
        return False                        # a chain without a match takes every packet
    may, must = _parse_sets(parsed, named)
    steps = _Budget(budget)
    try:
        return any(next(_search(s, mine, before, widths, steps), None) is not None
                   for s in _shapes(may, must))
    except _OutOfBudget:
        return None


def solve(match: Classifier | Sequence[FieldMatch] | None,
          earlier: Sequence[Classifier | None] = (), **kw) -> Region | None:
    """The first region of :func:`regions`, or ``None`` when no packet reaches *match*."""
    return next(regions(match, earlier, **kw), None)


@lru_cache(maxsize=1024)
def _shape_domains(shape: _Shape, widths: tuple[tuple[str, int], ...]) -> dict[str, ValueSet]:
    """The values the parser allows the fields it selects on, for packets of *shape*."""
    w = dict(widths)
    dom: dict[str, ValueSet] = {}
    for f, inside, vals in shape.rules:
        vs = ValueSet.of_values(_width(f, w), vals)
        cur = dom.get(f) or ValueSet.full(_width(f, w))
        dom[f] = cur & vs if inside else cur - vs
    return dom


def _search(shape: _Shape, mine: tuple[FieldMatch, ...], before: list, widths, steps: _Budget
            ) -> Iterator[dict[str, ValueSet]]:
    valid = {"", "ethernet", *shape.headers}
    if any(header_of(t.field) not in valid for t in mine):
        return
    if any(not ts for ts in before):
        return                              # a chain without a match takes every packet
    dom = dict(_shape_domains(shape, tuple(sorted((widths or {}).items()))))

    def get(d: dict[str, ValueSet], f: str) -> ValueSet:
        got = d.get(f)
        return got if got is not None else ValueSet.full(_width(f, widths))

    for t in mine:
        dom[t.field] = get(dom, t.field) & _term_set(t, _width(t.field, widths))
        if not dom[t.field]:
            return
    pending = [ts for ts in before if all(header_of(t.field) in valid for t in ts)]

    def dfs(d: dict[str, ValueSet], i: int) -> Iterator[dict[str, ValueSet]]:
        steps.tick()
        while i < len(pending) and any(
                not (get(d, t.field) & _term_set(t, _width(t.field, widths))) for t in pending[i]):
            i += 1                          # this earlier chain cannot match here anyway
        if i == len(pending):
            yield d
            return
        held = dict(d)
        for t in pending[i]:                # disjoint: terms before t hold, t fails
            s = _term_set(t, _width(t.field, widths))
            fails = get(held, t.field) - s
            if fails:
                yield from dfs({**held, t.field: fails}, i + 1)
            held[t.field] = get(held, t.field) & s

    yield from dfs(dom, 0)
