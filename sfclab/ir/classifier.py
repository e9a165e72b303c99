"""A chain's classifier: which packets belong to the chain.

A :class:`Classifier` is a conjunction (``&&``) of :class:`FieldMatch` terms,
each an exact value, a prefix, a value/mask or a range on one header field,
possibly negated (``!=``).  It is what the initializer table matches on.

>>> from sfclab.ir.fields import FIELDS
>>> m = FieldMatch.prefix(FIELDS["ipv4.dst"], 0x0A000100, 24)
>>> str(m), m.matches(0x0A000105), m.matches(0x0A000205)
('ipv4.dst == 10.0.1.0/24', True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import values
from .fields import FIELDS, HeaderField

__all__ = ["FieldMatch", "Classifier", "format_value"]


def format_value(f: HeaderField, v: int) -> str:
    """Print *v* the way a user writes values of field *f*."""
    return values.format_value(v, f.literal)


@dataclass(frozen=True, slots=True)
class FieldMatch:
    """One classifier term.

    ``kind`` is ``"exact"`` (``value``), ``"lpm"`` (``value`` / ``prefix_len``),
    ``"ternary"`` (``value &&& mask``) or ``"range"`` (``value .. high``).
    """

    field: str
    kind: str
    value: int
    mask: int | None = None
    prefix_len: int | None = None
    high: int | None = None
    negate: bool = False

    @classmethod
    def exact(cls, f: HeaderField, v: int, negate: bool = False) -> FieldMatch:
        return cls(f.name, "exact", v, negate=negate)

    @classmethod
    def prefix(cls, f: HeaderField, v: int, plen: int, negate: bool = False) -> FieldMatch:
        mask = ((1 << plen) - 1) << (f.width - plen) if plen else 0
        return cls(f.name, "lpm", v & mask, prefix_len=plen, negate=negate)

    @property
    def header_field(self) -> HeaderField:
        return FIELDS[self.field]

    @property
    def effective_mask(self) -> int:
        """The bits this term compares, for ternary encodings."""
        w = self.header_field.width
        full = (1 << w) - 1
        if self.kind == "lpm":
            plen = self.prefix_len or 0
            return ((1 << plen) - 1) << (w - plen) if plen else 0
        if self.kind == "ternary":
            return self.mask or 0
        return full

    def matches(self, x: int) -> bool:
        if self.kind == "range":
            hit = self.value <= x <= (self.high or 0)
        else:
            m = self.effective_mask
            hit = (x & m) == (self.value & m)
        return hit != self.negate

    def __str__(self) -> str:
        f = self.header_field
        val = format_value(f, self.value)
        if self.kind == "lpm":
            val += f"/{self.prefix_len}"
        elif self.kind == "ternary":
            val += f" &&& 0x{self.mask:x}"
        elif self.kind == "range":
            val += f"..{format_value(f, self.high or 0)}"
        return f"{self.field} {'!=' if self.negate else '=='} {val}"


@dataclass(frozen=True, slots=True)
class Classifier:
    """A conjunction of field matches; the empty classifier matches everything."""

    terms: tuple[FieldMatch, ...] = ()

    def matches(self, packet: Mapping[str, int]) -> bool:
        """Whether a packet with these field values (``{"ipv4.dst": …}``) matches.
        A field the packet lacks fails every term on it."""
        return all(t.field in packet and t.matches(packet[t.field]) for t in self.terms)

    def fields(self) -> list[str]:
        return list(dict.fromkeys(t.field for t in self.terms))

    def __str__(self) -> str:
        return " && ".join(str(t) for t in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)
