"""Chain text to :class:`~sfclab.lang.ast.ChainDecl` objects (LALR, lark).

Syntax errors become :class:`~sfclab.errors.ChainSyntaxError` with the line,
the column, a caret and a hint; nothing else escapes for bad input.

>>> [d.name for d in parse_decls("chain a: l2fwd\\nchain b { input => l3fwd => output; }")]
['a', 'b']
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple
from importlib import resources

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import ChainError, ChainSyntaxError
from .fastparse import Literals, fast_parse
from .ast import (ChainDecl, Cond, FieldRef, IfElse, LoopBack, MatchTerm, MultiBranch, NFRef, Pos,
                  Stmt, span)

__all__ = ["parse_decls", "strip_comments", "KEYWORDS", "fast_literals"]

KEYWORDS = frozenset({"chain", "match", "weight", "from", "to", "self", "before", "then", "or",
                      "and", "branch_end", "first", "last", "loop", "request", "End_of_Request"})


_SPECIAL = re.compile(r'["()#\n]|//')


def strip_comments(text: str) -> str:
    """Blank out comments, keeping every other character where it was.

    ``//`` starts a comment anywhere; ``#`` starts one outside parentheses unless
    it follows a name directly (``nat#2`` is a serial number).

    >>> strip_comments("a => b;  # note\\nc => (1@d # c.x) // end")
    'a => b;        \\nc => (1@d # c.x)       '
    """
    if "#" not in text and "//" not in text:
        return text
    out: list[str] = []
    depth, last, in_str = 0, 0, False
    for m in _SPECIAL.finditer(text):
        i, tok = m.start(), m.group()
        if i < last:
            continue
        if in_str:
            in_str = tok not in ('"', "\n")
        elif tok == '"':
            in_str = True
        elif tok == "(":
            depth += 1
        elif tok == ")":
            depth = max(0, depth - 1)
        elif tok == "//" or (tok == "#" and depth == 0 and not (
                i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = text.find("\n", i)
            j = len(text) if j < 0 else j
            out.append(text[last:i])
            out.append(" " * (j - i))
            last = j
    out.append(text[last:])
    return "".join(out)


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("chain.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=False,
                transformer=_ToAst(), propagate_positions=False)


@lru_cache(maxsize=1)
def fast_literals() -> Literals:
    """The grammar's literal token patterns and keywords, for :func:`~.fastparse.fast_parse`."""
    pats = {t.name: re.compile(t.pattern.to_regexp()) for t in _parser().terminals}
    # lark's priorities: MAC (3) before IPV6, IPV4, HEX (2) before NUMBER/INT.
    return [(n, pats[n]) for n in ("MAC", "IPV6", "IPV4", "HEX", "NUMBER")], KEYWORDS


def _pos(tok: Token) -> Pos:
    return Pos(tok.line or 0, tok.column or 0, max(1, len(tok)))


def _name(tok: Token) -> str:
    return tok[1:-1] if tok.type == "STRING" else str(tok)


def _ref(tok: Token) -> NFRef:
    return NFRef(_name(tok), _pos(tok))


class _Head(NamedTuple):
    """A chain head clause: its keyword token, its value and the token to point at."""

    keyword: Token
    value: object
    at: Token


def _num(tok: Token) -> int | str:
    if tok.type == "INT":
        return int(tok)
    if tok.type == "HEX":
        return int(tok, 16)
    return str(tok)


def _mvalue(kind: str, toks: list[Token]) -> tuple:
    return (kind, tuple((t.type, str(t), _pos(t)) for t in toks))


class _Sentence:
    __slots__ = ("kind", "refs", "extra", "pos")

    def __init__(self, kind: str, refs: list[NFRef], extra: object = None) -> None:
        self.kind, self.refs, self.extra, self.pos = kind, refs, extra, refs[0].pos


class _ToAst(Transformer):
    """Builds AST nodes bottom-up while the LALR parser runs (no parse tree)."""

    def nfref(self, c):
        return _ref(c[0])

    def alt(self, c):
        tok = c[0]
        return NFRef("self", _pos(tok)) if isinstance(tok, Token) else tok

    def field(self, c):
        name = _pos(c[-1])
        if len(c) == 2:
            return FieldRef(str(c[0]), str(c[1]), span(_pos(c[0]), name), name)
        return FieldRef(None, str(c[0]), name, name)

    def cond(self, c):
        f, op, val = c
        vpos = _pos(val)
        return Cond(f, str(op), _num(val), span(f.pos, vpos), vpos)

    def ifelse(self, c):
        a, b, cond = c
        return IfElse(a, b, cond, a.pos)

    def case(self, c):
        val, ref = c
        return (_num(val), ref, _pos(val))

    def multibranch(self, c):
        *cases, f = c
        return MultiBranch(tuple(cases), f, cases[0][2])

    def stmt(self, c):
        branch = c[-1] if isinstance(c[-1], (IfElse, MultiBranch)) else None
        refs = tuple(c[:-1] if branch else c)
        return Stmt(refs, branch, refs[0].pos)

    # -- classifier --
    def mfield(self, c):
        return (".".join(str(t) for t in c), span(_pos(c[0]), _pos(c[-1])))

    def mv_exact(self, c):
        return _mvalue("exact", c)

    def mv_prefix(self, c):
        return _mvalue("lpm", c)

    def mv_mask(self, c):
        return _mvalue("ternary", c)

    def mv_range(self, c):
        return _mvalue("range", c)

    def mterm(self, c):
        (fname, fpos), op, (kind, vals) = c
        return MatchTerm(fname, str(op) == "!=", kind, vals, fpos)

    def mexpr(self, c):
        return tuple(c)

    # -- head clauses: (keyword token, value, value position) --
    def match_clause(self, c):
        return _Head(c[0], c[1], c[0])

    def weight_clause(self, c):
        return _Head(c[0], float(c[1]), c[1])

    def from_clause(self, c):
        return _Head(c[0], _name(c[1]), c[1])

    to_clause = from_clause

    def _decl(self, c, style):
        name_tok = c[0]
        decl = ChainDecl(_name(name_tok), style, pos=_pos(name_tok))
        rest, seen = [], set()
        for item in c[1:]:
            if not isinstance(item, _Head):
                rest.append(item)
                continue
            kw = str(item.keyword)
            if kw in seen:
                raise ChainSyntaxError(f"`{kw}` is given twice in chain {decl.name!r}",
                                       line=item.keyword.line, column=item.keyword.column,
                                       width=len(kw), hint=f"keep one `{kw}` clause")
            seen.add(kw)
            at = _pos(item.at)
            if kw == "match":
                decl.match = item.value
            elif kw == "weight":
                decl.weight, decl.weight_pos = item.value, at
            elif kw == "from":
                decl.ingress, decl.ingress_pos = item.value, at
            else:
                decl.egress, decl.egress_pos = item.value, at
        return decl, rest

    def chain_block(self, c):
        decl, stmts = self._decl(c, "flexmesh")
        decl.stmts = stmts
        return decl

    def chain_short(self, c):
        decl, refs = self._decl(c, "short")
        decl.stmts = [Stmt(tuple(refs), None, refs[0].pos)]
        return decl

    def request_head(self, c):
        decl, _ = self._decl(c, "p4sc")
        return decl

    # -- P4SC sentences --
    def s_before(self, c):
        return _Sentence("before", c)

    def s_then(self, c):
        end = c.pop()[1] if isinstance(c[-1], tuple) else None
        return _Sentence("then", c, end)

    def branch_end(self, c):
        return ("end", c[0])

    def s_mark(self, c):
        return _Sentence(str(c[1]), [c[0]])

    def s_loop(self, c):
        ref, kw, *n = c
        bound = LoopBack(int(n[0]) if n else None, _pos(kw), _pos(n[0]) if n else _pos(kw))
        return _Sentence("loop", [ref], bound)

    def end_request(self, c):
        return "EOR"

    def start(self, c):
        return c


def _request_stmts(decl: ChainDecl, s: _Sentence) -> None:
    if s.kind == "before":
        decl.stmts.append(Stmt(tuple(s.refs), None, s.pos))
    elif s.kind == "then":
        src, *branches = s.refs
        end = s.extra
        cases = tuple((i, b, b.pos) for i, b in enumerate(branches))
        decl.stmts.append(Stmt((src,), MultiBranch(cases, FieldRef(src.name, "global_metadata", src.pos),
                                                   src.pos), s.pos))
        if end is not None:
            for b in branches:
                if b.name.lower() != end.name.lower():
                    decl.stmts.append(Stmt((b, end), None, b.pos))
    elif s.kind == "first":
        decl.first.append(s.refs[0])
    elif s.kind == "last":
        decl.last.append(s.refs[0])
    else:  # loop
        decl.stmts.append(Stmt((s.refs[0],), s.extra, s.pos))


def _group(items: list) -> list[ChainDecl]:
    """Gather P4SC sentences into requests; chain blocks stand alone."""
    decls: list[ChainDecl] = []
    current: ChainDecl | None = None
    count = 0
    for item in items:
        if isinstance(item, ChainDecl) and item.style != "p4sc":
            current = None
            decls.append(item)
        elif isinstance(item, ChainDecl):  # request head
            current = item
            decls.append(item)
        elif item == "EOR":
            current = None
        else:
            if current is None:
                count += 1
                current = ChainDecl(f"sfc{count}", "p4sc", pos=item.pos)
                decls.append(current)
            _request_stmts(current, item)
    return decls


_FRIENDLY = {
    "NAME": "a name", "SERIAL": "a name", "STRING": "a quoted name", "INT": "a number",
    "HEX": "a number", "NUMBER": "a number", "IPV4": "an IPv4 address", "IPV6": "an IPv6 address",
    "MAC": "a MAC address", "CMP": "a comparison (== != < <= > >=)", "EQOP": "== or !=",
    "SELF": "self", "FIRST": "first", "LAST": "last", "EOR": "End_of_Request",
    "PORTREF": "a switch port (s1:3)",
}


def expected_text(names: set[str], parser: Lark, friendly: dict[str, str]) -> str:
    """What a parser expected, for people: *friendly* names, or the keyword itself."""
    shown = []
    for name in sorted(names):
        if name in friendly:
            shown.append(friendly[name])
            continue
        term = next((t for t in parser.terminals if t.name == name), None)
        shown.append(f"`{term.pattern.value}`" if term is not None else name)
    uniq = list(dict.fromkeys(shown))
    return ", ".join(uniq[:8]) + (", …" if len(uniq) > 8 else "")


def _expected(names: set[str]) -> str:
    return expected_text(names, _parser(), _FRIENDLY)


def _hint(tok: str, expected: set[str], text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    before = src[: max(0, col - 1)]
    offset = sum(len(x) + 1 for x in lines[: max(0, line - 1)]) + max(0, col - 1)
    if tok == "-" or (tok == "->" and "{" in text):
        return "inside { } write `a => b;` (`->` is only for `chain NAME: a -> b`)"
    if tok == "=" and ("CMP" in expected or "EQOP" in expected):
        return "compare with `==`"
    if tok in ("&", "and", "AND") and "match" in before:
        return "join classifier terms with `&&`"
    if before.rstrip().endswith(("chain", "request")):
        return "a chain needs a name: `chain NAME { … }` (quote names with spaces)"
    if tok == "}" and text[: offset + 1].count("}") > text[:offset].count("{"):
        return "this `}` closes nothing: is there one too many?"
    if tok == "" and "RBRACE" in expected:
        return "close the chain with `}`"
    if "PORTREF" in expected:
        return "after `from` and `to` name a host (`from h1`) or a switch port, written " \
               "without spaces (`to s4:7`)"
    if {"WEIGHT", "FROM", "TO"} <= expected and "->" in src[col - 1:]:
        head = before.rstrip()
        return f"put a `:` before the NFs: `{head}: {src[col - 1:].strip()}`"
    if {"WEIGHT", "FROM", "TO"} <= expected:
        return "a chain head is `chain NAME [match …] [weight W] [from A] [to B]`, then " \
               "`{ … }` or `: a -> b`"
    if re.search(r"\bthen\b", src) and not re.search(r"\bor\b", src):
        return "a P4SC branch is `A then B or C [and branch_end=D]`"
    if "?" in src and "(" in src and tok in (")", ";", ":"):
        return "an if-else is `A => (B : C ? A.field == 1)` and a multibranch `A => (1@B : 2@C # A.field)`"
    if tok and not (tok[0].isalnum() or tok[0] in "_\"(){};:,.=<>!&#@?-"):
        return f"{tok!r} cannot appear here: names are letters, digits and _ (quote others)"
    if tok == "=>":
        return "a statement is `a => b => c;`: is an NF name missing?"
    in_block = text[:offset].count("{") > text[:offset].count("}")
    if tok == "(" and in_block and not before.rstrip().endswith("=>"):
        return "a branch follows its NF and `=>`: `firewall => (nat : drop ? " \
               "firewall.verdict == 0);`"
    return "see the chain language in the manual (docs/chain-language.md)"


def parse_decls(text: str, *, source: str = "<string>", fast: bool = True) -> list[ChainDecl]:
    """Parse chain text into declarations; raise :class:`ChainSyntaxError` on bad input.

    *fast* tries :func:`~sfclab.lang.fastparse.fast_parse` first (same result,
    less time); lark parses whatever it leaves and reports every error.
    """
    clean = strip_comments(text)
    decls = fast_parse(clean, fast_literals()) if fast else None
    if decls is not None:
        _separated(decls, clean, text, source)
        return decls
    try:
        items = _parser().parse(clean)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, source) from None
    except ChainError as e:  # raised by the transformer, which runs inside the parser
        e.text, e.source = text, source
        raise
    except VisitError as e:
        if isinstance(e.orig_exc, ChainError):
            e.orig_exc.text, e.orig_exc.source = text, source
            raise e.orig_exc from None
        raise ChainSyntaxError(f"cannot read the chain text: {e.orig_exc}", source=source,
                               text=text) from None
    decls = _group(items)
    _separated(decls, clean, text, source)
    return decls


def _separated(decls: list[ChainDecl], clean: str, text: str, source: str) -> None:
    """A line break ends a statement as ``;`` does, so ``;`` is optional at the end of
    a line; two statements on one line need it, or the line is ambiguous to a reader
    (``input => firewall nat => output``: a ``;`` or a ``=>`` left out?)."""
    lines = clean.splitlines()
    for decl in decls:
        if decl.style != "flexmesh":
            continue
        for a, b in zip(decl.stmts, decl.stmts[1:]):
            end = a.refs[-1].pos
            if a.branch is not None or end.line != b.pos.line or not 0 < end.line <= len(lines):
                continue
            if ";" in lines[end.line - 1][end.column - 1:b.pos.column - 1]:
                continue
            last, first = a.refs[-1].name, b.refs[0].name
            raise ChainSyntaxError(
                "two statements on one line without a `;` between them", line=b.pos.line,
                column=b.pos.column, width=max(1, b.pos.width), source=source, text=text,
                hint=f"end the first with `;` (`{last}; {first} …`), or join them with `=>` if "
                     f"{first!r} continues it (`{last} => {first} …`); a line break ends a "
                     f"statement too")


def _syntax_error(e: UnexpectedInput, text: str, source: str) -> ChainSyntaxError:
    line = getattr(e, "line", 0) or 0
    col = getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END"):
        lines = text.rstrip().splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        expected = set(getattr(e, "expected", ()) or ())
        return ChainSyntaxError(f"the text ends too early; expected {_expected(expected)}",
                                line=line, column=col, source=source, text=text,
                                hint=_hint("", expected, text, line, col))
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        expected = set(e.allowed or ())
        tok = ch
        if text.startswith("->", e.pos_in_stream):
            tok = "->"
        elif text.startswith("=", e.pos_in_stream):
            tok = "="
        return ChainSyntaxError(f"unexpected character {ch!r}"
                                + (f"; expected {_expected(expected)}" if expected else ""),
                                line=line, column=col, source=source, text=text,
                                hint=_hint(tok, expected, text, line, col))
    assert isinstance(e, UnexpectedToken)
    tok = str(e.token)
    expected = set(e.expected or ())
    if tok in ("->", "=>") and "BEFORE" in expected:
        return _headless(text, line, col, source)
    if tok == "=>" and _SHORT_ARROW() in expected:
        return _one_line_arrow(text, line, col, source)
    what = f"keyword {tok!r}" if tok in KEYWORDS else repr(tok)
    return ChainSyntaxError(f"unexpected {what}; expected {_expected(expected)}",
                            line=line, column=col, source=source, text=text,
                            hint=_hint(tok, expected, text, line, col), width=max(1, len(tok)))


@lru_cache(maxsize=1)
def _SHORT_ARROW() -> str:  # noqa: N802 - a constant, once the grammar is loaded
    """The grammar's name for the one-line form's ``->``."""
    return next(t.name for t in _parser().terminals if t.pattern.value == "->")


def _one_line_arrow(text: str, line: int, column: int, source: str) -> ChainSyntaxError:
    """``chain web: firewall => nat``: the one-line form joins NFs with ``->``."""
    src = strip_comments(text).splitlines()[line - 1]
    start, end = src.rfind(";", 0, column - 1) + 1, src.find(";", column - 1)
    fixed = src[start:end if end >= 0 else len(src)].replace("=>", "->").strip()
    return ChainSyntaxError("unexpected '=>': in the one-line form NFs are joined by `->`",
                            line=line, column=column, source=source, text=text, width=2,
                            hint=f"write `{fixed}`; `=>` joins NFs inside a block: "
                                 f"`chain NAME {{ input => a => b => output; }}`")


def _headless(text: str, line: int, column: int, source: str) -> ChainSyntaxError:
    """``firewall -> nat -> l3fwd`` with no ``chain NAME:`` before it (the arrow at
    *line*, *column*)."""
    src = strip_comments(text).splitlines()[line - 1]
    start = max(src.rfind(";", 0, column - 1), src.rfind("}", 0, column - 1)) + 1
    end = src.find(";", column - 1)
    body = src[start:] if end < 0 else src[start:end]
    col = start + len(body) - len(body.lstrip()) + 1
    body = body.strip()
    first = re.match(r'"[^"]*"|[^\s=-]+', body)
    arrow = " -> ".join(x.strip() for x in re.split(r"->|=>", body))
    return ChainSyntaxError(f"`{body}` is not a chain on its own: it needs a name",
                            line=line, column=col, source=source, text=text,
                            width=len(first.group()) if first else 1,
                            hint=f"write the one-line form `chain NAME: {arrow}` "
                                 f"(or `chain NAME {{ {arrow.replace('->', '=>')}; }}`)")
