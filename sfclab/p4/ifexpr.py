"""C integer expressions, as ``#if`` evaluates them (:mod:`sfclab.p4.preprocess`).

:func:`evaluate` takes the tokens of an expression whose macros are already expanded
and ``defined`` replaced: integers (decimal, octal, hex, with ``u``/``l`` suffixes),
names (0, as cpp takes a name no macro defines), parentheses, the unary ``! ~ - +``,
the binary operators from ``*`` down to ``||`` with C's precedence, and ``?:``.

>>> evaluate(tokens("1 + 2 * 3 == 7 && !defined_nowhere"))
1
>>> evaluate(tokens("0x10 >> 2 ? 010 : -1"))
8
"""

from __future__ import annotations

import re

__all__ = ["IfError", "tokens", "evaluate"]

_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|&&|\|\||==|!=|<=|>=|<<|>>"
                    r"|[-+*/%()<>!~&|^?:])")


class IfError(Exception):
    """The expression is wrong (message, hint)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def tokens(expr: str) -> list[str]:
    """The tokens of *expr* (:class:`IfError` at one it cannot read)."""
    out: list[str] = []
    pos = 0
    expr = expr.rstrip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:
            raise IfError(f"#if: cannot read {expr[pos:].strip()[:20]!r}",
                          "a #if takes an integer expression of macros, numbers and "
                          "defined(NAME)")
        out.append(m.group(1))
        pos = m.end()
    return out


def evaluate(toks: list[str]) -> int:
    """The value of the expression *toks* are."""
    if not toks:
        raise IfError("#if with no expression", "write a condition: #if NAME > 1")
    p = _IfParser(toks)
    v = p.ternary()
    if p.i != len(toks):
        raise IfError(f"#if: unexpected {toks[p.i]!r}")
    return v


def _int(tok: str) -> int:
    tok = tok.rstrip("uUlL")
    if tok[:2] in ("0x", "0X"):
        return int(tok, 16)
    if len(tok) > 1 and tok[0] == "0":
        return int(tok, 8)
    return int(tok)


_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]


class _IfParser:
    def __init__(self, toks: list[str]) -> None:
        self.toks, self.i = toks, 0

    def peek(self) -> str:
        return self.toks[self.i] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None) -> str:
        t = self.peek()
        if want is not None and t != want:
            raise IfError(f"#if: expected {want!r}, got {t or 'the end'!r}")
        if not t:
            raise IfError("#if: the expression ends too early")
        self.i += 1
        return t

    def ternary(self) -> int:
        c = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return a if c else b
        return c

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.unary()
        v = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()
            w = self.binary(level + 1)
            v = _apply(op, v, w)
        return v

    def unary(self) -> int:
        t = self.take()
        if t == "(":
            v = self.ternary()
            self.take(")")
            return v
        if t == "!":
            return int(not self.unary())
        if t == "~":
            return ~self.unary()
        if t == "-":
            return -self.unary()
        if t == "+":
            return self.unary()
        if t[0].isdigit():
            return _int(t)
        if t[0].isalpha() or t[0] == "_":
            return 0                                    # an identifier no macro names
        raise IfError(f"#if: unexpected {t!r}")


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise IfError("#if: division by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "/" else a - q * b
    return {
        "||": lambda: int(bool(a) or bool(b)), "&&": lambda: int(bool(a) and bool(b)),
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "<<": lambda: a << b if 0 <= b < 4096 else 0, ">>": lambda: a >> b if b >= 0 else 0,
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}[op]()
