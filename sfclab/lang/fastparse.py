"""A fast path for well-formed FlexMesh-style chain text.

The LALR parser that lark runs in pure Python handles ~60,000 tokens a second:
too slow for a thousand chains in an interactive budget.  This module reads the
common case (``chain`` blocks and one-line chains) with one regular expression
and a small recursive-descent reader, building the same AST nodes the lark
transformer builds.  Its token patterns are taken from ``chain.lark`` itself (the
caller, :mod:`sfclab.lang.parser`, passes them in: this module sits below it).

It never reports errors: on anything it does not fully recognise (P4SC
sentences, a keyword where a name should be, any syntax error) it returns
``None`` and the caller parses the text with lark, which stays the definition
of the language and the source of every error message.  A property test checks
that both produce identical ASTs.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from .ast import ChainDecl, Cond, FieldRef, IfElse, MatchTerm, MultiBranch, NFRef, Pos, Stmt, span

__all__ = ["fast_parse"]

_PUNCT = ["&&&", "=>", "->", "&&", "..", "==", "!=", "<=", ">=", "<", ">",
          "{", "}", "(", ")", ";", ":", "?", "@", "#", ",", "/", "."]
_CMP = {"==", "!=", "<=", ">=", "<", ">"}
_LITERALS = ("INT", "HEX", "IPV4", "MAC", "IPV6")


class _GiveUp(Exception):
    """Not the common case: let lark parse it."""


_WS = re.compile(r"\s*")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\#[0-9]+)?"
#: The most common statement, ``a => b;`` or ``a => b => c;``, read in one match.
_SEQ = re.compile(rf"({_NAME})[ \t]*=>[ \t]*({_NAME})(?:[ \t]*=>[ \t]*({_NAME}))?[ \t]*;")
_TOKENS = {
    "NAME": re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?![#\w])"),
    "SERIAL": re.compile(r"[A-Za-z_][A-Za-z0-9_]*\#[0-9]+(?!\w)"),
    "STRING": re.compile(r'"[^"\n]*"'),
    "PORTREF": re.compile(r"[A-Za-z_][A-Za-z0-9_]*:[0-9]+(?![\w#])"),
    "NUM": re.compile(r"[0-9A-Fa-f](?:[0-9A-Za-z]|\.[0-9])*(?::[0-9A-Fa-f:.]*[0-9A-Fa-f])*"),
}
_PUNCT_RX = {p: re.compile(re.escape(p)) for p in _PUNCT}
_PUNCT_RX["="] = re.compile(r"=(?![=>])")
_PUNCT_RX["&&"] = re.compile(r"&&(?!&)")
_PUNCT_RX["."] = re.compile(r"\.(?!\.)")
_PUNCT_RX["<"] = re.compile(r"<(?!=)")
_PUNCT_RX[">"] = re.compile(r">(?!=)")
_PUNCT_RX["-"] = re.compile(r"-(?!>)")


#: The grammar's literal token patterns, in lark's priority order, and its keywords; the
#: caller (:func:`sfclab.lang.parser.fast_literals`) takes both from ``chain.lark``.
Literals = tuple[list[tuple[str, re.Pattern[str]]], frozenset[str]]


class _Reader:
    """Reads straight from the text: each step is one regular-expression match."""

    def __init__(self, text: str, literals: Literals) -> None:
        self.text = text
        self.literals, self.keywords = literals
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.at = _WS.match(text).end()

    def pos(self, start: int, width: int) -> Pos:
        line = bisect_right(self.starts, start)
        return tuple.__new__(Pos, (line, start - self.starts[line - 1] + 1, width))

    def skip(self) -> None:
        self.at = _WS.match(self.text, self.at).end()

    # -- token helpers --
    def punct(self, p: str) -> bool:
        m = _PUNCT_RX[p].match(self.text, self.at)
        if m is None:
            return False
        self.at = m.end()
        self.skip()
        return True

    def expect(self, p: str) -> None:
        if not self.punct(p):
            raise _GiveUp

    def word(self) -> str | None:
        m = _TOKENS["NAME"].match(self.text, self.at)
        return m.group() if m else None

    def keyword(self, kw: str) -> bool:
        if self.word() != kw:
            return False
        self.at += len(kw)
        self.skip()
        return True

    def take(self, *kinds: str) -> tuple[str, str, Pos]:
        """The next token if it is one of *kinds* (NAME, SERIAL, STRING or a literal)."""
        text, at = self.text, self.at
        for kind in kinds:
            rx = _TOKENS.get(kind)
            if rx is None:
                continue
            m = rx.match(text, at)
            if m:
                val = m.group()
                if kind == "NAME" and val in self.keywords:
                    raise _GiveUp
                break
        else:
            m = _TOKENS["NUM"].match(text, at) if set(kinds) & {*_LITERALS, "NUMBER"} else None
            if m is None:
                raise _GiveUp
            val = m.group()
            for kind, rx in self.literals:
                lm = rx.match(val)
                if lm:
                    break
            if not lm or lm.end() != len(val):
                raise _GiveUp
            if kind == "NUMBER" and "." not in val:
                kind = "INT"
            if kind not in kinds:
                raise _GiveUp
        self.at = m.end()
        self.skip()
        return kind, val, self.pos(at, len(val))

    # -- grammar --
    def chains(self) -> list[ChainDecl]:
        out = []
        while self.at < len(self.text):
            out.append(self.chain())
        return out

    def chain(self) -> ChainDecl:
        if not self.keyword("chain"):
            raise _GiveUp
        kind, val, pos = self.take("NAME", "STRING")
        decl = ChainDecl(val[1:-1] if kind == "STRING" else val, "flexmesh", pos=pos)
        seen: set[str] = set()
        while (kw := self.word()) in ("match", "weight", "from", "to"):
            if kw in seen:
                raise _GiveUp  # lark reports the clause given twice
            seen.add(kw)
            self.keyword(kw)
            if kw == "match":
                decl.match = self.mexpr()
            elif kw == "weight":
                _, w, decl.weight_pos = self.take("INT", "NUMBER")
                decl.weight = float(w)
            else:
                kind, val, at = self.take("PORTREF", "NAME", "STRING")
                end = val[1:-1] if kind == "STRING" else val
                if kw == "from":
                    decl.ingress, decl.ingress_pos = end, at
                else:
                    decl.egress, decl.egress_pos = end, at
        if self.punct(":"):
            decl.style = "short"
            refs = [self.nfref()]
            while self.punct("->"):
                refs.append(self.nfref())
            self.punct(";")
            decl.stmts = [Stmt(tuple(refs), None, refs[0].pos)]
            return decl
        self.expect("{")
        while not self.punct("}"):
            decl.stmts.append(self.stmt())
        return decl

    def nfref(self) -> NFRef:
        kind, val, pos = self.take("SERIAL", "NAME", "STRING")
        return NFRef(val[1:-1] if kind == "STRING" else val, pos)

    def stmt(self) -> Stmt:
        m = _SEQ.match(self.text, self.at)
        if m and not any(g in self.keywords for g in m.groups() if g):
            refs = tuple(NFRef(m.group(i), self.pos(m.start(i), m.end(i) - m.start(i)))
                         for i in (1, 2, 3) if m.group(i))
            self.at = m.end()
            self.skip()
            return Stmt(refs, None, refs[0].pos)
        refs = [self.nfref()]
        branch = None
        while self.punct("=>"):
            if self.punct("("):
                branch = self.branch()
                break
            refs.append(self.nfref())
        self.punct(";")
        return Stmt(tuple(refs), branch, refs[0].pos)

    def alt(self) -> NFRef:
        if self.word() == "self":
            at = self.at
            self.keyword("self")
            return NFRef("self", self.pos(at, 4))
        return self.nfref()

    def branch(self) -> IfElse | MultiBranch:
        save = self.at
        try:
            kind, val, vpos = self.take("INT", "HEX", "NAME")
            is_case = self.punct("@")
        except _GiveUp:
            is_case = False
        if is_case:
            cases = [(_num(kind, val), self.nfref(), vpos)]
            while self.punct(":"):
                kind, val, vpos = self.take("INT", "HEX", "NAME")
                self.expect("@")
                cases.append((_num(kind, val), self.nfref(), vpos))
            self.expect("#")
            f = self.field()
            self.expect(")")
            return MultiBranch(tuple(cases), f, cases[0][2])
        self.at = save
        a = self.alt()
        self.expect(":")
        b = self.alt()
        self.expect("?")
        f = self.field()
        op = next((p for p in ("==", "!=", "<=", ">=", "<", ">") if self.punct(p)), None)
        if op is None:
            raise _GiveUp
        kind, val, vpos = self.take("INT", "HEX", "NAME")
        self.expect(")")
        return IfElse(a, b, Cond(f, op, _num(kind, val), span(f.pos, vpos), vpos), a.pos)

    def field(self) -> FieldRef:
        kind, val, pos = self.take("SERIAL", "NAME")
        if self.punct("."):
            _, name, npos = self.take("NAME")
            return FieldRef(val, name, span(pos, npos), npos)
        if kind == "SERIAL":
            raise _GiveUp
        return FieldRef(None, val, pos, pos)

    def mexpr(self) -> tuple[MatchTerm, ...]:
        terms = [self.mterm()]
        while self.punct("&&"):
            terms.append(self.mterm())
        return tuple(terms)

    def mterm(self) -> MatchTerm:
        _, first, fpos = self.take("NAME")
        name = first
        if self.punct("."):
            _, second, spos = self.take("NAME")
            name += "." + second
            fpos = span(fpos, spos)
        op = "==" if self.punct("==") else "!=" if self.punct("!=") else None
        if op is None:
            raise _GiveUp
        vals = [self.take(*_LITERALS)]
        kind = "exact"
        if self.punct("/"):
            kind = "lpm"
            vals.append(self.take("INT"))
        elif self.punct("&&&"):
            kind = "ternary"
            vals.append(self.take(*_LITERALS))
        elif self.punct(".."):
            kind = "range"
            vals.append(self.take(*_LITERALS))
        return MatchTerm(name, op == "!=", kind, tuple(vals), fpos)


def _num(kind: str, val: str) -> int | str:
    if kind == "INT":
        return int(val)
    if kind == "HEX":
        return int(val, 16)
    return val


def fast_parse(clean: str, literals: Literals) -> list[ChainDecl] | None:
    """Declarations of comment-free *clean* text, or None to let lark decide; *literals*
    from :func:`sfclab.lang.parser.fast_literals`."""
    try:
        return _Reader(clean, literals).chains()
    except _GiveUp:
        return None
