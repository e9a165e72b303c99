"""Headers with a ``varbit<W>`` field: extracted with a length, emitted at their length.

A ``varbit`` value is held as ``(length in bits, value)``.  ``extract(h, n)`` reads
the fixed fields before the varbit field, ``n`` bits of it, and the fixed fields
after it, with BMv2's errors (``extract_VL`` in ``bm_sim/parser.cpp``): ``n`` above
the field's maximum is ``HeaderTooShort``, ``n`` not a whole number of bytes
``ParserInvalidArgument``, a packet too short for it all ``PacketTooShort``.
``emit`` writes the fixed fields and the varbit's bytes.

>>> from sfclab.targets.model.types import Bits, HeaderT, VarbitT
>>> t = HeaderT("opt_t", (("kind", Bits(8)), ("data", VarbitT(32))))
>>> read, write = varbit_codec(t)
>>> values, used = read(bytes([7, 0xAB, 0xCD, 0xEE]), 0, 16)
>>> values, used
([7, (16, 43981)], 3)
>>> write(values).hex()
'07abcd'
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import ModelCompileError
from .types import Bits, BoolT, HeaderT, VarbitT

__all__ = ["VarbitError", "varbit_codec"]


class VarbitError(Exception):
    """An extract of a varbit header failed with a P4 ``error`` (its name in ``code``)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _fixed(fields) -> tuple[list[tuple[int, bool, int]], int]:
    """(width, is_bool, sign bit or 0) per field, and their total width."""
    out = []
    for _, ft in fields:
        w = (ft.width if isinstance(ft, Bits) else 1 if isinstance(ft, BoolT)
             else ft.underlying.width)
        out.append((w, isinstance(ft, BoolT), 1 << (w - 1) if isinstance(ft, Bits)
                    and ft.signed else 0))
    return out, sum(w for w, _, _ in out)


def _unpack(n: int, total: int, spec) -> list:
    out, off = [], total
    for w, is_bool, sign in spec:
        off -= w
        x = (n >> off) & ((1 << w) - 1)
        if is_bool:
            x = bool(x)
        elif sign and x & sign:
            x -= sign << 1
        out.append(x)
    return out


def _pack(values, spec) -> int:
    n = 0
    for x, (w, _, _) in zip(values, spec):
        n = (n << w) | (int(x) & ((1 << w) - 1))
    return n


def varbit_codec(t: HeaderT) -> tuple[Callable, Callable]:
    """``(read(data, pos, nbits) -> (field values, bytes used), write(values) -> bytes)``
    for header type *t* with one ``varbit`` field."""
    i = t.varbit
    if i is None:
        raise ModelCompileError(f"header {t.name} has no varbit field")
    if sum(isinstance(ft, VarbitT) for _, ft in t.fields) > 1:
        raise ModelCompileError(f"header {t.name} has more than one varbit field")
    before, wb = _fixed(t.fields[:i])
    after, wa = _fixed(t.fields[i + 1:])
    if wb % 8 or wa % 8:
        raise ModelCompileError(f"header {t.name}: the fields before and after its varbit "
                                f"field must be whole bytes for the model")
    nb, na, most = wb // 8, wa // 8, t.fields[i][1].width

    def read(data: bytes, pos: int, nbits: int) -> tuple[list, int]:
        if nbits > most:
            raise VarbitError("HeaderTooShort")
        if nbits < 0 or nbits % 8:
            raise VarbitError("ParserInvalidArgument")
        nv = nbits // 8
        if len(data) - pos < nb + nv + na:
            raise VarbitError("PacketTooShort")
        head = _unpack(int.from_bytes(data[pos:pos + nb], "big"), wb, before)
        q = pos + nb
        var = (nbits, int.from_bytes(data[q:q + nv], "big"))
        q += nv
        tail = _unpack(int.from_bytes(data[q:q + na], "big"), wa, after)
        return head + [var] + tail, nb + nv + na

    def write(values) -> bytes:
        nbits, value = values[i]
        return (_pack(values[:i], before).to_bytes(nb, "big")
                + (value & ((1 << nbits) - 1)).to_bytes(nbits // 8, "big")
                + _pack(values[i + 1:], after).to_bytes(na, "big"))
    return read, write

