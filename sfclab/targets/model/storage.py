"""Where a packet's state lives: one flat list of values per packet.

The compiler gives every scalar of the program (header fields, validity bits,
stack counters, metadata, local variables, action parameters) a slot in one
list; a packet's state is a copy of the template list (:class:`Layout`), so
reading a field is ``p.v[slot]``.  A header is its validity slot followed by
its fields; a stack is its ``nextIndex`` slot followed by its elements.

:class:`Pkt` is the per-pass packet state every compiled closure receives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .types import BoolT, EnumT, ErrorT, HeaderT, StackT, StringT, StructT, Type, UnionT, VarbitT

__all__ = ["ScalarRef", "HeaderRef", "StackRef", "StructRef", "Ref", "Layout", "Pkt",
           "scalars", "default_value"]


@dataclass(eq=False, slots=True)
class ScalarRef:
    slot: int
    type: Type
    path: str


@dataclass(eq=False, slots=True)
class HeaderRef:
    base: int                       # the validity slot; fields follow
    type: HeaderT
    path: str
    fields: dict[str, ScalarRef] = field(default_factory=dict)
    #: the validity slots of the other members of the header_union it is in
    siblings: tuple[int, ...] = ()


@dataclass(eq=False, slots=True)
class StackRef:
    base: int                       # the nextIndex slot; elements follow
    type: StackT
    path: str
    elems: list[HeaderRef] = field(default_factory=list)

    @property
    def stride(self) -> int:
        """Slots per element: a header's validity and fields; a header_union's members'."""
        elem = self.type.elem
        if isinstance(elem, UnionT):
            return sum(len(h.fields) + 1 for _, h in elem.fields)
        return len(elem.fields) + 1


@dataclass(eq=False, slots=True)
class StructRef:
    type: StructT
    path: str
    members: dict[str, "Ref"] = field(default_factory=dict)


Ref = ScalarRef | HeaderRef | StackRef | StructRef


def default_value(t: Type):
    if isinstance(t, BoolT):
        return False
    if isinstance(t, ErrorT):
        return "NoError"
    if isinstance(t, EnumT):
        return t.members[0][1] if t.underlying is None else 0
    if isinstance(t, StringT):
        return ""
    if isinstance(t, VarbitT):
        return (0, 0)
    return 0


class Layout:
    """Allocates slots; ``template`` is a fresh packet's list."""

    def __init__(self) -> None:
        self.template: list = []
        self.names: list[str] = []

    def alloc(self, init, name: str) -> int:
        self.template.append(init)
        self.names.append(name)
        return len(self.template) - 1

    def build(self, t: Type, path: str) -> Ref:
        """Allocate storage for a value of type *t* named *path*."""
        if isinstance(t, HeaderT):
            h = HeaderRef(self.alloc(False, path + ".$valid"), t, path)
            for fname, ft in t.fields:
                h.fields[fname] = ScalarRef(self.alloc(default_value(ft), f"{path}.{fname}"), ft,
                                            f"{path}.{fname}")
            return h
        if isinstance(t, StackT):
            s = StackRef(self.alloc(0, path + ".$next"), t, path)
            for i in range(t.size):
                s.elems.append(self.build(t.elem, f"{path}[{i}]"))
            return s
        if isinstance(t, StructT):
            s = StructRef(t, path)
            for fname, ft in t.fields:
                s.members[fname] = self.build(ft, f"{path}.{fname}")
            if isinstance(t, UnionT):        # setting one member valid invalidates the others
                bases = [m.base for m in s.members.values()]
                for m in s.members.values():
                    m.siblings = tuple(b for b in bases if b != m.base)
            return s
        return ScalarRef(self.alloc(default_value(t), path), t, path)


def scalars(ref: Ref) -> list[ScalarRef]:
    """Every scalar slot below *ref* (validity bits not included)."""
    if isinstance(ref, ScalarRef):
        return [ref]
    if isinstance(ref, HeaderRef):
        return [f for n, f in ref.fields.items() if n != "$padding"]
    if isinstance(ref, StackRef):
        return [s for e in ref.elems for s in scalars(e)]
    return [s for m in ref.members.values() for s in scalars(m)]


class Pkt:
    """A packet during one pass: its values, its bytes, and what it asked for.

    ``data`` holds the bytes the parser reads (from ``pos``); ``payload`` is
    what the parser left, emitted after the headers.  ``tr`` collects raw trace
    events (tuples) that :mod:`.result` turns into :class:`~sfclab.targets.traces.trace.Event`.
    The request fields mirror BMv2's packet registers: they are not metadata
    and survive from ingress to egress for a unicast packet."""

    __slots__ = ("v", "data", "pos", "tr", "plen", "ingress_len", "resubmit", "recirculate",
                 "clone", "digests", "truncate", "marked_drop", "emitted", "payload", "now",
                 "in_egress", "parser_error", "color")

    #: A packet whose parsers and deparsers remember header bytes (the TNA model's, which
    #: parses a packet's headers again in every gress) sets these in a subclass:
    #: ``memo`` maps (header type, bytes) to the values extracting them gave, for the
    #: whole packet; ``ext`` maps a header's validity slot to (values, bytes) as this
    #: gress's parser extracted it.  None here: every extract and emit computes.
    memo = None
    ext = None

    def __init__(self, v: list, data: bytes, tr: list, now: int) -> None:
        self.v = v
        self.data = data
        self.pos = 0
        self.tr = tr
        self.plen = len(data)
        self.ingress_len = len(data)
        self.resubmit = None        # field-list slots to preserve, or None
        self.recirculate = None
        self.clone = None           # (kind, session, slots)
        self.digests: list = []
        self.truncate = None
        self.marked_drop = ""
        self.emitted: list = []
        self.payload = b""
        self.now = now
        self.in_egress = False
        self.parser_error = "NoError"
        self.color = 0

