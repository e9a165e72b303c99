"""P4_16 text to a :class:`~sfclab.p4.ast.Program` (lark, LALR), after the C preprocessor.

The text goes through :func:`~sfclab.p4.preprocess.preprocess` first, as p4c runs
cpp; an ``#include "file"`` between declarations is parsed on its own (once per
text and the types known before it) and kept as an :class:`~sfclab.p4.ast.Include`
holding the file's declarations, and positions are those of the user's files.

P4 cannot be parsed without knowing which identifiers are types (``T x;`` is a
declaration, ``a < b`` a comparison); like p4c's lexer, a post-lexer here
tracks the types declared so far, those of ``#include``-d files and those of
``core.p4`` / ``v1model.p4`` / ``tna.p4``, and hands them to the parser as
``TYPE_IDENT``; it also tells the ``<`` of a call's type arguments
(``pkt.lookahead<bit<8>>()``) from a comparison, as p4c's lexer does.

Bad input raises :class:`~sfclab.errors.P4SyntaxError`; P4_16 sfclab cannot read yet
(``list<T>``, ``typeof``) raises :class:`~sfclab.errors.UnsupportedP4Error`; both name the
line.

>>> prog = parse_p4('''
... header h_t { bit<8> a; }
... control c(inout h_t h) { apply { if (h.a < 3) { h.a = h.a + 1; } } }''')
>>> from sfclab.p4 import to_p4
>>> to_p4(prog.controls()[0].apply.stmts[0].cond)
'h.a < 3'
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import P4Error, P4SyntaxError, UnsupportedP4Error, too_long
from . import ast as A
from .arch import ARCH_FILES
from .build import Builder
from .parsecache import cache_file
from .preprocess import Preprocessed, preprocess

__all__ = ["parse_p4", "parse_p4_file", "include_types", "include_file", "arch_types",
           "UNSUPPORTED_WORDS", "library_dir"]


#: P4_16 keywords of constructs sfclab cannot read yet.
UNSUPPORTED_WORDS = frozenset({"list", "typeof"})

_DECL_KEYWORDS = {"header", "struct", "enum", "extern", "control", "parser", "header_union",
                  "package"}
#: Tokens a type ends with (a name after one is being declared).
_TYPE_ENDS = {"TYPE_IDENT", "MORETHAN", "SHR_FIRST", "RSQB", "BOOL", "VOID", "BIT", "INT_KW",
              "ERROR", "STRING"}
#: After ``name<``: a type argument list starts here (p4c's lexer tells these apart too).
_TARGS_AHEAD = re.compile(r"\s*(?:(bit|int|varbit|bool|tuple|string|void|error)\b"
                          r"|([A-Za-z_]\w*)\s*(\.)?)")
#: After a generic function's return type: its name and type parameters.
_GENERIC_AFTER = re.compile(r"\s+[A-Za-z_]\w*\s*<\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)"
                            r"\s*>\s*\(")
#: After a declared name: ``<T, U>(``, the type parameters of a generic function.
_TPARAMS_AHEAD = re.compile(r"\s*<\s*[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*>\s*\(")
#: P4_16 keywords that can never be a name (``apply``, ``key``, ``type`` … can).
RESERVED = frozenset({
    "action", "bit", "bool", "const", "control", "default", "else", "enum", "error", "exit",
    "extern", "false", "header", "if", "in", "inout", "int", "match_kind", "out", "parser",
    "return", "select", "string", "struct", "switch", "table", "transition", "true", "typedef",
    "void", "header_union", "varbit", "tuple", "for", "break", "continue", "package"})


def library_dir() -> Path:
    """The NF library's folder: ``p4/`` in a source checkout, ``sfclab/_p4`` in a wheel."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_p4", here.parent / "p4"):
        if (cand / "include").is_dir():
            return cand
    return here.parent / "p4"


# --- the post-lexer ------------------------------------------------------------------------

class _TypeNames:
    """Turns identifiers that name types into ``TYPE_IDENT`` while tracking declarations.

    A name becomes a type where it is declared (``header``, ``struct``, ``enum``,
    ``extern``, ``control``, ``parser``, the last name of a ``typedef``), where
    it is a type parameter (``extern R<T, I>``, ``O get<D>(…)``) and where an
    ``#include`` declares it.  The state is per parse (thread-local).
    """

    always_accept = ("IDENT",)

    def __init__(self) -> None:
        self._local = threading.local()

    def start(self, types: set[str], resolve) -> None:
        self._local.types = types
        self._local.resolve = resolve

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        types: set[str] = self._local.types
        resolve = self._local.resolve
        pending = ""             # a declaring keyword waiting for its name
        generic_ok = False       # a `<` now opens type parameters
        tparams = False          # inside those type parameters
        extern_func = False      # inside `extern R f<T>(...);`
        extern_next = False      # the extern's name was declared: its body comes next
        extern_depth = -1        # brace depth just outside the extern body we are in
        typedef_last = ""
        in_typedef = False
        depth = 0
        prev = ""                # the previous token's type
        text = _BUILDER.pp.text
        for tok in stream:
            t, v = tok.type, str(tok)
            next_generic = False
            if t == "INCLUDE":
                types |= resolve(tok, types)
            elif t == "IDENT":
                if v in RESERVED:
                    raise P4SyntaxError(f"unexpected {v!r}", **_BUILDER.at(tok), width=len(v),
                                        hint=f"'{v}' is a P4 keyword and cannot stand here")
                if tparams:
                    types.add(v)
                elif pending:
                    types.add(v)
                    next_generic = True
                    extern_next = pending == "extern"
                    pending = ""
                else:
                    if v not in types and depth == 0 and _returns_type_param(text, tok, v):
                        types.add(v)                  # `T f<T>(…)`: T is f's type parameter
                    if v in types:
                        tok = Token.new_borrow_pos("TYPE_IDENT", v, tok)
                    else:
                        next_generic = extern_func or (extern_depth >= 0 and depth == extern_depth + 1) \
                            or (prev in _TYPE_ENDS and _TPARAMS_AHEAD.match(text, tok.end_pos)
                                is not None)
                if in_typedef:
                    typedef_last = v
            elif pending == "extern":     # `extern` not followed by a new name: a function
                pending, extern_func = "", True
            elif pending and pending != "enum":
                pending = ""
            if t not in ("IDENT", "TYPE_IDENT", "STRING", "INT"):
                if v in _DECL_KEYWORDS:
                    pending = v
                elif v == "typedef" or (v == "type" and depth == 0):
                    in_typedef = True
                elif v == "<" and generic_ok:
                    tparams = True
                elif v == "<" and prev == "IDENT" and _targs_ahead(text, tok.end_pos, types):
                    tok = Token.new_borrow_pos("LT_TARGS", v, tok)
                elif v == ">" or t == "SHR_FIRST":
                    tparams = False
                elif v == "{":
                    if extern_next:
                        extern_depth, extern_next = depth, False
                    depth += 1
                elif v == "}":
                    depth -= 1
                    if depth == extern_depth:
                        extern_depth = -1
                elif v == ";":
                    if in_typedef and typedef_last:
                        types.add(typedef_last)
                    in_typedef, typedef_last, extern_func = False, "", False
            generic_ok = next_generic
            prev = tok.type
            yield tok


def _returns_type_param(text: str, tok: Token, name: str) -> bool:
    """Whether *name* is the return type of a generic function declared right after it."""
    m = _GENERIC_AFTER.match(text, tok.end_pos)
    return m is not None and name in re.split(r"\s*,\s*", m.group(1).strip())


def _targs_ahead(text: str, pos: int, types: set[str]) -> bool:
    """Whether a type argument list starts at *pos* (``f<bit<8>>(…)``), not a comparison."""
    m = _TARGS_AHEAD.match(text, pos)
    if m is None:
        return False
    return m.group(1) is not None or (m.group(2) in types and m.group(3) is None)


# --- driver --------------------------------------------------------------------------------

_POSTLEX = _TypeNames()
_LOCK = threading.RLock()


@lru_cache(maxsize=1)
def _grammar() -> str:
    return resources.files(__package__).joinpath("p4.lark").read_text()


_BUILDER = Builder()


@lru_cache(maxsize=1)
def _parser() -> Lark:
    # The tables are cached only in the user's private cache directory (see .parsecache):
    # lark's own ``cache=True`` would load a pickle from a name anyone can plant in /tmp.
    grammar = _grammar()
    key = hashlib.sha256(f"{grammar}{lark.__version__}{sys.version_info[:2]}".encode()).hexdigest()
    path = cache_file(key[:32])
    return Lark(grammar, parser="lalr", lexer="contextual", postlex=_POSTLEX,
                transformer=_BUILDER, maybe_placeholders=True,
                cache=str(path) if path is not None else False)


def _declared_types(prog: A.Program) -> set[str]:
    out: set[str] = set()
    for d in prog.decls:
        if isinstance(d, (A.HeaderDecl, A.StructDecl, A.EnumDecl, A.ExternDecl, A.Typedef,
                          A.ControlDecl, A.ParserDecl)):
            out.add(d.name)
            out.update(getattr(d, "type_params", ()))
            for m in getattr(d, "methods", ()):
                out.update(m.type_params)
        elif isinstance(d, A.MethodDecl):
            out.update(d.type_params)
    return out


def arch_types(name: str) -> frozenset[str]:
    """The type names ``#include <name>`` declares: the file's and those of the files it
    includes (p4c's ``v1model.p4`` includes ``core.p4``)."""
    f = ARCH_FILES.get(Path(name).name)
    if f is None:
        return frozenset()
    out = set(f.types)
    for inc in f.includes:
        out |= arch_types(inc)
    return frozenset(out)


def include_candidates(name: str, base: Path | None) -> list[Path]:
    """Where ``#include "name"`` is looked for: next to the including file (*base*),
    then in the NF library's ``include/`` and the library itself."""
    cands = [(base / name).resolve()] if base is not None else []
    lib = library_dir()
    return cands + [(lib / "include" / Path(name).name).resolve(), (lib / name).resolve()]


def include_file(name: str, base: Path | None) -> Path | None:
    """The file ``#include "name"`` reads, or None if there is none."""
    return next((c for c in include_candidates(name, base) if c.is_file()), None)


#: Included files already parsed: (their text's key, the types before) -> (decls, types after).
_SEGMENTS: OrderedDict[tuple, tuple[tuple, frozenset[str]]] = OrderedDict()
_SEGMENTS_MAX = 128


def _segment_key(seg: Preprocessed) -> tuple:
    return (seg.text, seg.path, tuple((k, _segment_key(v)) for k, v in sorted(seg.segments.items())))


def _segment(seg: Preprocessed, types: frozenset[str], consts: dict[str, int]
             ) -> tuple[tuple, frozenset[str], dict[str, int]]:
    """An included file's declarations, the types and integer constants known after it
    (parsed once per text, types and constants known before it)."""
    key = (_segment_key(seg), types, frozenset(consts.items()))
    hit = _SEGMENTS.get(key)
    if hit is not None:
        _SEGMENTS.move_to_end(key)
        return hit
    after_consts = dict(consts)
    prog, after = _parse_pp(seg, set(types), after_consts)
    out = (prog.decls, frozenset(after), after_consts)
    _SEGMENTS[key] = out
    while len(_SEGMENTS) > _SEGMENTS_MAX:
        _SEGMENTS.popitem(last=False)
    return out


def _parse(text: str, source: str, base: Path | None, types: Iterable[str] = (), *,
           include_dirs: Iterable[str | Path] = (), defines: Mapping[str, object] = {}
           ) -> A.Program:
    too_long(text, P4SyntaxError, source=source)
    pp = preprocess(text, source=source, base=base, include_dirs=include_dirs, defines=defines,
                    library=library_dir())
    return _parse_pp(pp, set(types), {})[0]


def _parse_pp(pp: Preprocessed, types: set[str], consts: dict[str, int]
              ) -> tuple[A.Program, set[str]]:
    """Parse preprocessed text; the types known afterwards come back with the program
    (*consts*, the integer constants known, is updated too)."""
    included: dict[int, tuple] = {}

    def resolve(tok: Token, known: set[str]) -> set[str]:
        seg = pp.segments.get(tok.line)
        if seg is not None:
            decls, after, after_consts = _segment(seg, frozenset(known), consts)
            included[tok.line] = decls
            consts.update(after_consts)
            return set(after)
        raw = str(tok)
        body = raw[raw.index("include") + len("include"):].strip()
        return set(arch_types(body[1:-1]))

    with _LOCK:
        saved = _BUILDER.state(), getattr(_POSTLEX._local, "types", None), \
            getattr(_POSTLEX._local, "resolve", None)
        _POSTLEX.start(types, resolve)
        _BUILDER.begin(pp, included, consts)
        try:
            decls = _parser().parse(pp.text)
        except VisitError as e:
            if isinstance(e.orig_exc, P4Error):
                raise _with_text(e.orig_exc, pp) from None
            raise
        except P4Error as e:
            raise _with_text(e, pp) from None
        except UnexpectedInput as e:
            raise _syntax_error(e, pp) from None
        finally:   # an #include parses another file in the middle of this one
            _BUILDER.restore(saved[0])
            if saved[1] is not None:
                _POSTLEX.start(saved[1], saved[2])
    return A.Program(tuple(decls), pp.path), types


def _with_text(err: P4Error, pp: Preprocessed) -> P4Error:
    if not err.source:
        err.source = pp.path
    if not err.text:
        err.text = pp.files.get(err.source, "")
    return err


_OPERATORS = {"EQ_OP", "REL_OP", "ADD_OP", "MUL_OP", "UN_OP", "LOR", "LAND", "BOR", "BXOR", "BAND",
              "SHL", "SHR_FIRST", "LESSTHAN", "MORETHAN", "QMARK"}
_EXPECT_NAMES = {"IDENT": "a name", "TYPE_IDENT": "a type", "INT": "a number", "SEMICOLON": "';'",
                 "RBRACE": "'}'", "LBRACE": "'{'", "RPAR": "')'", "LPAR": "'('", "COLON": "':'",
                 "EQUAL": "'='", "STRING": "a string", "COMMA": "','"}


def _syntax_error(e: UnexpectedInput, pp: Preprocessed) -> P4Error:
    """The error lark found, at the place in the user's file it came from."""
    err = _raw_syntax_error(e, pp.text, pp.path)
    if err.line:
        err.source, err.line = pp.where(err.line)
        err.text = pp.files.get(err.source, "")
    return err


def _raw_syntax_error(e: UnexpectedInput, text: str, source: str) -> P4Error:
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        if ch == "#":
            word = text[e.pos_in_stream:].split(None, 1)[0] if text[e.pos_in_stream:].strip() else "#"
            return UnsupportedP4Error(
                f"the preprocessor directive {word} is outside the P4 subset sfclab reads",
                line=line, column=col, source=source, text=text, width=len(word),
                hint="sfclab reads #include lines only; write constants with `const`")
        return P4SyntaxError(f"unexpected character {ch!r}", line=line, column=col,
                             source=source, text=text)
    if isinstance(e, UnexpectedEOF):
        lines = text.splitlines() or [""]
        return P4SyntaxError("unexpected end of input", line=len(lines),
                             column=len(lines[-1]) + 1, source=source, text=text,
                             hint="a '}' or ';' is probably missing")
    assert isinstance(e, UnexpectedToken)
    tok = e.token
    word = str(tok)
    if word in UNSUPPORTED_WORDS:
        return UnsupportedP4Error(f"'{word}' is P4_16 that sfclab does not read yet",
                                  line=line, column=col, source=source, text=text, width=len(word))
    if tok.type == "$END":
        lines = text.splitlines() or [""]
        return P4SyntaxError("unexpected end of input", line=len(lines),
                             column=len(lines[-1]) + 1, source=source, text=text,
                             hint="a '}' or ';' is probably missing")
    exp = set(e.expected) - {"ANNOTATION"}
    if "INT" in exp:
        expected = ["an expression"]
    else:
        named = {_EXPECT_NAMES.get(x) or ("an operator" if x in _OPERATORS else repr(_literal(x)))
                 for x in exp}
        expected = sorted(named)
    hint = "expected " + (", ".join(expected[:6]) + (" …" if len(expected) > 6 else ""))
    if tok.type == "IDENT" and "a type" in expected and "a name" not in expected:
        hint = f"'{word}' is not a declared type: declare it (or #include the file that does)"
        arch = [a for a in ("v1model.p4", "tna.p4") if word in ARCH_FILES[a].types]
        if arch:
            hint = (f"'{word}' is declared by {arch[0]}; an NF keeps state through sfclab's "
                    f"portable API instead (SfcRegister, SfcCounter, SfcMeter, SfcHash, SfcDigest)")
    return P4SyntaxError(f"unexpected {word!r}", line=line, column=col, source=source,
                         text=text, width=max(1, len(word)), hint=hint)


def _literal(terminal: str) -> str:
    try:
        return _parser().get_terminal(terminal).pattern.value
    except Exception:  # pragma: no cover - names of anonymous terminals
        return terminal.lower()


def parse_p4(text: str, *, source: str = "<string>", base: str | Path | None = None,
             types: Iterable[str] = (), include_dirs: Iterable[str | Path] = (),
             defines: Mapping[str, object] = {}) -> A.Program:
    """Parse P4_16 *text* after running the C preprocessor on it as p4c does
    (:mod:`.preprocess`): ``#include "file"`` is looked up next to *base*, then in
    *include_dirs* (p4c's ``-I``), then in the NF library's ``include/``; *defines*
    are p4c's ``-D`` (``{"NAME": value}``, None for 1); *types* are type names
    known beforehand."""
    return _parse(text, source, Path(base) if base is not None else None, types=types,
                  include_dirs=include_dirs, defines=defines)


def include_types(*names: str) -> frozenset[str]:
    """The type names that ``#include <name>`` / ``#include "name"`` lines declare
    (``"core.p4"`` and the architectures are built in; others come from the library)."""
    out: set[str] = set()
    for name in names:
        if Path(name).name in ARCH_FILES:
            out |= arch_types(name)
            continue
        path = include_file(name, None)
        if path is None:
            cands = include_candidates(name, None)
            raise P4SyntaxError(f"cannot find the included file {name!r}",
                                hint=f"looked in {', '.join(str(c.parent) for c in cands)}")
        out |= _file_types(path, path.stat().st_mtime_ns)
    return frozenset(out)


@lru_cache(maxsize=64)
def _file_types(path: Path, _mtime: int) -> frozenset[str]:
    pp = preprocess(path.read_text(), source=str(path), base=path.parent, library=library_dir())
    return frozenset(_parse_pp(pp, set(), {})[1])


def parse_p4_file(path: str | Path, *, types: Iterable[str] = (),
                  include_dirs: Iterable[str | Path] = (),
                  defines: Mapping[str, object] = {}) -> A.Program:
    """Parse a ``.p4`` file (*include_dirs*, *defines*, *types*: as for :func:`parse_p4`)."""
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise P4SyntaxError(f"cannot read {p}: {getattr(e, 'strerror', None) or e}") from None
    return _parse(text, str(p), p.parent, types, include_dirs=include_dirs, defines=defines)
