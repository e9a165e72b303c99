"""Integer constant expressions, folded where the parser needs a number.

P4_16 lets a width, a stack size, a table's ``size`` and an entry's priority be an
expression (``bit<(8 * 8)>``, ``h_t[N + 1]``); :func:`fold` computes such an
expression from literals and the constants declared before it (arbitrary-precision
integers, as p4c evaluates them: widths and signs are applied by casts only).

>>> from sfclab.p4 import ast as A
>>> fold(A.Binary("*", A.Const(8), A.Name("N")), {"N": 4})
32
>>> fold(A.Name("unknown"), {}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping

from . import ast as A

__all__ = ["fold"]

_BIN = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b if 0 <= b < 1 << 16 else None,
    ">>": lambda a, b: a >> b if b >= 0 else None,
    "/": lambda a, b: a // b if b > 0 and a >= 0 else None,
    "%": lambda a, b: a % b if b > 0 and a >= 0 else None,
}


def _wrap(v: int, t: A.Node) -> int | None:
    if not isinstance(t, A.BitType):
        return None
    if t.width == 0:
        return v
    m = (1 << t.width) - 1
    v &= m
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


def fold(e: A.Node | None, consts: Mapping[str, int]) -> int | None:
    """The value of integer expression *e*, or None when it is not a constant here."""
    if isinstance(e, A.Const):
        return _wrap(e.value, A.BitType(e.width, e.signed)) if e.width is not None else e.value
    if isinstance(e, A.Name):
        return consts.get(e.name)
    if isinstance(e, A.Unary):
        v = fold(e.expr, consts)
        if v is None:
            return None
        return {"-": -v, "+": v, "~": ~v}.get(e.op)
    if isinstance(e, A.Binary) and e.op in _BIN:
        a, b = fold(e.left, consts), fold(e.right, consts)
        if a is None or b is None:
            return None
        return _BIN[e.op](a, b)
    if isinstance(e, A.Cast):
        v = fold(e.expr, consts)
        return None if v is None else _wrap(v, e.type)
    return None
