"""The C preprocessor p4c runs on every P4 program, in pure Python.

p4c hands each program to ``cpp -C -undef -nostdinc -x assembler-with-cpp`` (with
``-D__TARGET_BMV2__`` for ``p4c-bm2-ss``) before it parses it.  :func:`preprocess`
does the same without a C compiler (Pyodide has none): ``#include "file"`` and
``#include <file>`` (searched next to the including file, then in the ``-I``
folders, then in the NF library's ``include/``), object-like and function-like
``#define`` (with ``#`` and ``##``), ``#undef``, ``#if``/``#ifdef``/``#ifndef``/
``#elif``/``#else``/``#endif`` with ``defined`` and C integer expressions,
``#error``, ``#pragma once``, ``__LINE__``/``__FILE__``, and ``-D`` definitions.

What sfclab's parser needs to stay as it was is kept in the output, not expanded:

* ``#include <core.p4>``, ``<v1model.p4>``, ``<tna.p4>`` … (the files of
  :data:`~sfclab.p4.arch.ARCH_FILES`): sfclab knows what they declare, so the line
  stays and the parser makes an :class:`~sfclab.p4.ast.Include` of it; the macros
  those files define are defined here (``V1MODEL_VERSION`` is 20180101 unless
  the program defined it first, as in p4c's ``v1model.p4``);
* ``#define`` of a macro an architecture file reads (``V1MODEL_VERSION``,
  ``__TARGET_TOFINO__``), which the parser turns into a
  :class:`~sfclab.p4.ast.Define` (the checker needs to know it came before the
  ``#include``);
* an ``#include "file"`` at the top level of the program (between declarations)
  whose file holds whole declarations: the line stays and the file's own
  preprocessed text is a :class:`Preprocessed` in ``segments``, which the parser
  reads on its own (and caches) and keeps as the include's declarations.  An
  include anywhere else (inside a control …) is replaced by the file's text, as
  cpp does.

Every other directive becomes a blank line, so a line of the output is the line
of the source it came from; ``origin`` says where each output line was written
(file and line), for errors that name the user's file and line.

>>> pp = preprocess('''#define W 8
... #if W > 4
... const bit<W> x = 1;
... #else
... const bit<4> x = 1;
... #endif''')
>>> pp.text.splitlines()[2]
'const bit<8> x = 1;'
>>> pp.where(3)
('<string>', 3)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import P4SyntaxError
from .arch import ARCH_FILES, DEFINES
from .ifexpr import IfError, evaluate, tokens

__all__ = ["Macro", "Preprocessed", "preprocess", "BMV2_DEFINES", "MAX_INCLUDE_DEPTH"]

#: What ``p4c-bm2-ss`` defines on its own (the embedded model stands for BMv2).
BMV2_DEFINES: Mapping[str, str] = {"__TARGET_BMV2__": "1"}
#: How deep ``#include`` may nest (cpp's own limit is 200).
MAX_INCLUDE_DEPTH = 200
#: Lines one call of a function-like macro may span.
_MAX_CALL_LINES = 200

#: The macros each architecture file defines when included (v1model.p4's
#: ``V1MODEL_VERSION`` only when the program has not defined it).
_ARCH_MACROS: Mapping[str, Mapping[str, str]] = {
    "core.p4": {"_CORE_P4_": ""},
    "v1model.p4": {"_V1_MODEL_P4_": "", "V1MODEL_VERSION": "20180101"},
}


@dataclass(frozen=True, slots=True)
class Macro:
    """``#define name body`` (``params`` None) or ``#define name(params) body``."""

    name: str
    body: str
    params: tuple[str, ...] | None = None
    variadic: bool = False


@dataclass(frozen=True)
class Preprocessed:
    """A preprocessed file: its text, where each line came from, the includes kept."""

    text: str
    #: (file, line) of output line i + 1.
    origin: tuple[tuple[str, int], ...]
    #: output line of a kept ``#include "file"`` -> that file, preprocessed.
    segments: Mapping[int, Preprocessed] = field(default_factory=dict)
    #: the text of every file read (for the caret under an error).
    files: Mapping[str, str] = field(default_factory=dict)
    #: the file this is (its name as positions give it).
    path: str = "<string>"
    #: the macros defined at the end.
    macros: Mapping[str, Macro] = field(default_factory=dict)

    def where(self, line: int) -> tuple[str, int]:
        """The (file, line) output *line* (1-based) was written at."""
        if 1 <= line <= len(self.origin):
            return self.origin[line - 1]
        if self.origin:
            f, last = self.origin[-1]
            return f, last + line - len(self.origin)
        return self.path, line


# --- lexical helpers ---------------------------------------------------------------------

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_DIRECTIVE = re.compile(r"\s*#\s*([A-Za-z_]\w*)?(.*)\Z", re.S)
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_]\w*|\d[\w.]*|\s+|##|.', re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\(([^)]*)\))?(.*)\Z", re.S)
_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")
_OPS = "+-<>=&|!~^*/%"


def _blank_comments(text: str) -> str:
    """*text* with every comment turned into spaces (newlines kept, strings untouched)."""
    if "/" not in text:
        return text

    def blank(m: re.Match) -> str:
        s = m.group()
        if s[0] == '"':
            return s
        if "\n" not in s:
            return " " * len(s)
        return "\n".join(" " * len(x) for x in s.split("\n"))
    return _COMMENT_OR_STRING.sub(blank, text)


def _logical_lines(text: str) -> list[tuple[str, int, int]]:
    """(line, first physical line, number of physical lines) with ``\\``-newlines joined."""
    out: list[tuple[str, int, int]] = []
    phys = text.split("\n")
    i = 0
    while i < len(phys):
        start, s = i, phys[i]
        while s.endswith("\\") and i + 1 < len(phys):
            i += 1
            s = s[:-1] + phys[i]
        out.append((s, start + 1, i - start + 1))
        i += 1
    return out


def _depth_change(line: str) -> int:
    s = _STRING.sub("", line) if '"' in line else line
    return s.count("{") - s.count("}")


# --- the preprocessor --------------------------------------------------------------------

class _Error(Exception):
    """A directive is wrong (message, hint); turned into a P4SyntaxError with its place."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


class _Out:
    """Output lines of one file (or of the program), with where each came from."""

    __slots__ = ("lines", "origin", "segments", "depth", "scanned", "last")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.origin: list[tuple[str, int]] = []
        self.segments: dict[int, Preprocessed] = {}
        self.depth = 0
        self.scanned = 0
        self.last = ""          # the last character that is not a space

    def add(self, line: str, where: tuple[str, int]) -> None:
        self.lines.append(line)
        self.origin.append(where)

    def at_top(self) -> bool:
        """Whether the output so far ends between two top-level declarations."""
        for line in self.lines[self.scanned:]:
            if line.strip() and not line.lstrip().startswith("#"):   # not a kept directive
                self.depth += _depth_change(line)
                self.last = line.rstrip()[-1]
        self.scanned = len(self.lines)
        return self.depth == 0 and self.last in ("", ";", "}")


class _State:
    """What one run of the preprocessor knows: macros, search folders, files read."""

    def __init__(self, macros: dict[str, Macro], include_dirs: tuple[Path, ...],
                 library: Path | None) -> None:
        self.macros = macros
        self.include_dirs = include_dirs
        self.library = library
        self.files: dict[str, str] = {}
        self.once: set[Path] = set()
        self.stack: list[Path] = []
        self._rx: tuple[frozenset, re.Pattern | None] = (frozenset(), None)

    def macro_rx(self) -> re.Pattern | None:
        """A pattern finding any macro name (or ``__LINE__``/``__FILE__``) in a line."""
        names = frozenset(self.macros)
        if names != self._rx[0]:
            alts = "|".join(sorted(map(re.escape, names | {"__LINE__", "__FILE__"}),
                                   key=len, reverse=True))
            self._rx = (names, re.compile(rf"\b(?:{alts})\b"))
        return self._rx[1]


class _Expander:
    """Macro expansion of one line (C's rules, as far as P4 programs use them)."""

    def __init__(self, st: _State, file: str, line: int) -> None:
        self.st, self.file, self.line = st, file, line

    def expand(self, text: str, disabled: frozenset[str] = frozenset()) -> str:
        toks = _TOKEN.findall(text)
        macros = self.st.macros
        out: list[str] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t == "__LINE__":
                out.append(str(self.line))
                i += 1
                continue
            if t == "__FILE__":
                out.append('"' + self.file.replace("\\", "\\\\") + '"')
                i += 1
                continue
            m = macros.get(t)
            if m is None or t in disabled:
                out.append(t)
                i += 1
                continue
            if m.params is None:
                self._put(out, self.expand(self._paste(m.body), disabled | {t}))
                i += 1
                continue
            j = i + 1
            while j < len(toks) and toks[j].isspace():
                j += 1
            if j >= len(toks) or toks[j] != "(":
                out.append(t)                      # a function-like macro's name alone
                i += 1
                continue
            args, k = self._args(toks, j, m)
            body = self._substitute(m, args, disabled)
            self._put(out, self.expand(body, disabled | {t}))
            i = k
        return "".join(out)

    @staticmethod
    def _put(out: list[str], s: str) -> None:
        """Append an expansion, with a space where it would glue onto an operator."""
        if out and s and out[-1] and out[-1][-1] in _OPS and s[0] in _OPS:
            out.append(" ")
        out.append(s)

    def _args(self, toks: list[str], j: int, m: Macro) -> tuple[list[str], int]:
        depth, cur, args = 0, [], []
        k = j
        while k < len(toks):
            t = toks[k]
            if t == "(":
                depth += 1
                if depth == 1:
                    k += 1
                    continue
            elif t == ")":
                depth -= 1
                if depth == 0:
                    args.append("".join(cur))
                    break
            elif t == "," and depth == 1:
                args.append("".join(cur))
                cur = []
                k += 1
                continue
            cur.append(t)
            k += 1
        else:
            raise _Error(f"unterminated argument list invoking macro {m.name!r}",
                         "close the call's parenthesis")
        params = m.params or ()
        if args == [""] and not params:
            args = []
        if m.variadic:
            fixed = len(params)
            if len(args) < fixed:
                raise _Error(f"macro {m.name!r} requires at least {fixed} argument(s), "
                             f"but only {len(args)} given")
            args = args[:fixed] + [",".join(args[fixed:])]
        elif len(args) != len(params):
            raise _Error(f"macro {m.name!r} takes {len(params)} argument(s), "
                         f"but {len(args)} given", f"#define {m.name}({', '.join(params)})")
        return args, k + 1

    def _substitute(self, m: Macro, args: list[str], disabled: frozenset[str]) -> str:
        names = list(m.params or ()) + (["__VA_ARGS__"] if m.variadic else [])
        index = {p: i for i, p in enumerate(names)}
        body = _TOKEN.findall(m.body)
        n = len(body)

        def near(k: int, step: int) -> int:
            while 0 <= k < n and body[k].isspace():
                k += step
            return k
        out: list[str] = []
        i = 0
        while i < n:
            t = body[i]
            if t == "#":
                j = near(i + 1, 1)
                if j < n and body[j] in index:
                    arg = " ".join(args[index[body[j]]].split())
                    out.append('"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"')
                    i = j + 1
                    continue
            if t in index:
                before, after = near(i - 1, -1), near(i + 1, 1)
                raw = (before >= 0 and body[before] == "##") or (after < n and body[after] == "##")
                arg = args[index[t]].strip()
                out.append(arg if raw else self.expand(arg, disabled))
                i += 1
                continue
            out.append(t)
            i += 1
        return self._paste("".join(out))

    @staticmethod
    def _paste(s: str) -> str:
        return re.sub(r"\s*##\s*", "", s) if "##" in s else s


def _if_value(expr: str, ex: _Expander) -> int:
    """The value of a ``#if`` expression (C's integer arithmetic: :mod:`.ifexpr`)."""
    macros = ex.st.macros
    expr = _DEFINED.sub(lambda m: "1" if (m.group(1) or m.group(2)) in macros else "0", expr)
    try:
        return evaluate(tokens(ex.expand(expr)))
    except IfError as e:
        raise _Error(e.message, e.hint) from None


# --- one file ------------------------------------------------------------------------------

class _File:
    """Runs the directives of one file, writing into an :class:`_Out`."""

    def __init__(self, st: _State, text: str, name: str, base: Path | None) -> None:
        self.st, self.name, self.base = st, name, base
        self.text = text
        st.files.setdefault(name, text)

    def run(self, out: _Out) -> None:
        lines = _logical_lines(_blank_comments(self.text))
        conds: list[list] = []        # [parent active, a branch taken, #else seen, line]
        active = True
        i = 0
        while i < len(lines):
            s, ln, n = lines[i]
            i += 1
            m = _DIRECTIVE.match(s) if "#" in s else None
            if m is not None and s.lstrip().startswith("#"):
                try:
                    kept, active = self._directive(m.group(1) or "", m.group(2), ln, active,
                                                   conds, out)
                except _Error as e:
                    raise self._error(e, ln, s) from None
                self._emit(out, kept, ln, n)
                continue
            if not active:
                self._emit(out, None, ln, n)
                continue
            rx = self.st.macro_rx()
            if rx is not None and rx.search(s):
                s, ln, n, i = self._call_lines(lines, i, s, ln, n)
                try:
                    s = _Expander(self.st, self.name, ln).expand(s)
                except _Error as e:
                    raise self._error(e, ln, s) from None
            self._emit(out, s, ln, n)
        if conds:
            raise self._error(_Error(f"#{conds[-1][4]} at line {conds[-1][3]} has no #endif",
                                     "close it with #endif"), conds[-1][3], "")

    def _call_lines(self, lines, i: int, s: str, ln: int, n: int):
        """Join the lines a function-like macro's call spans (its parentheses)."""
        if not any(self.st.macros[x].params is not None for x in _IDENT.findall(s)
                   if x in self.st.macros):
            return s, ln, n, i
        joined = 0
        while s.count("(") > s.count(")") and i < len(lines) and joined < _MAX_CALL_LINES:
            nxt = lines[i][0]
            if nxt.lstrip().startswith("#"):
                break
            s = s + "\n" + nxt
            n += lines[i][2]
            i += 1
            joined += 1
        return s.replace("\n", " "), ln, n, i

    def _emit(self, out: _Out, kept: str | None, ln: int, n: int) -> None:
        where = self.name
        out.add(kept if kept is not None else "", (where, ln))
        for k in range(1, n):
            out.add("", (where, ln + k))

    def _error(self, e: _Error, ln: int, s: str) -> P4SyntaxError:
        col = len(s) - len(s.lstrip()) + 1 if s else 1
        return P4SyntaxError(e.message, line=ln, column=col, source=self.name,
                             text=self.text, hint=e.hint, width=max(1, len(s.strip())))

    # -- directives ------------------------------------------------------------------------
    def _directive(self, name: str, rest: str, ln: int, active: bool, conds: list,
                   out: _Out) -> tuple[str | None, bool]:
        """Run one directive: (the line to keep or None, whether lines are read now)."""
        ex = _Expander(self.st, self.name, ln)
        if name in ("if", "ifdef", "ifndef"):
            taken = False
            if active:
                word = rest.split()[0] if rest.split() else ""
                if name != "if" and not _IDENT.fullmatch(word):
                    raise _Error(f"#{name} needs a macro name", f"#{name} NAME")
                taken = (bool(_if_value(rest, ex)) if name == "if" else
                         (word in self.st.macros) == (name == "ifdef"))
            conds.append([active, taken, False, ln, name])
            return None, active and taken
        if name in ("elif", "else", "endif"):
            if not conds:
                raise _Error(f"#{name} without #if", "every #else, #elif and #endif closes a #if")
            top = conds[-1]
            if name == "endif":
                conds.pop()
                return None, top[0]
            if top[2]:
                raise _Error(f"#{name} after #else", "#else is the last branch of a #if")
            if name == "else":
                top[2] = True
                now = top[0] and not top[1]
                top[1] = True
                return None, now
            now = top[0] and not top[1] and bool(_if_value(rest, ex))
            top[1] = top[1] or now
            return None, now
        if not active:
            return None, False
        if name == "define":
            return self._define(rest), True
        if name == "undef":
            word = rest.strip()
            if not _IDENT.fullmatch(word):
                raise _Error("#undef needs a macro name", "#undef NAME")
            self.st.macros.pop(word, None)
            return None, True
        if name == "include":
            return self._include(rest, ex, out, ln), True
        if name == "error":
            raise _Error(f"#error {rest.strip()}".rstrip(),
                         "the program stops itself here: see the condition around this line")
        if name in ("warning", "line", "pragma", "ident", ""):
            if name == "pragma" and rest.split() == ["once"] and self.st.stack:
                self.st.once.add(self.st.stack[-1])
            return None, True
        raise _Error(f"unknown preprocessor directive #{name}",
                     "the preprocessor knows #include, #define, #undef, #if, #ifdef, #ifndef, "
                     "#elif, #else, #endif, #error, #warning, #pragma and #line")

    def _define(self, rest: str) -> str | None:
        m = _DEFINE.match(rest)
        if m is None:
            raise _Error("#define needs a macro name", "#define NAME value")
        name, params, body = m.group(1), m.group(3), m.group(4).strip()
        if name == "defined":
            raise _Error("'defined' cannot be used as a macro name")
        if m.group(2) is None:
            self.st.macros[name] = Macro(name, body)
            if name in DEFINES:       # the parser keeps it: the checker reads where it stands
                return f"#define {name} {body}"
            return None
        ps = [p.strip() for p in params.split(",")] if params.strip() else []
        variadic = bool(ps) and ps[-1] == "..."
        if variadic:
            ps = ps[:-1]
        for p in ps:
            if not _IDENT.fullmatch(p):
                raise _Error(f"#define {name}: {p!r} is not a parameter name",
                             f"#define {name}(a, b) …")
        self.st.macros[name] = Macro(name, body, tuple(ps), variadic)
        return None

    def _include(self, rest: str, ex: _Expander, out: _Out, ln: int) -> str | None:
        rest = rest.strip()
        if rest[:1] not in ('"', "<"):
            rest = ex.expand(rest).strip()
        m = re.fullmatch(r'"([^"]*)"|<([^>]*)>', rest)
        if m is None:
            raise _Error(f"#include expects \"FILE\" or <FILE>, got {rest[:40]!r}",
                         '#include "headers.p4" or #include <v1model.p4>')
        name, system = (m.group(1), False) if m.group(1) is not None else (m.group(2), True)
        if "\x00" in name:
            raise _Error("the included file's name holds a NUL character",
                         'write the name of a .p4 file: #include "headers.p4"')
        arch = ARCH_FILES.get(Path(name).name)
        path = None if (system and arch is not None) else self._find(name, system)
        if path is None and arch is not None:
            for f in (arch.includes or ()) + (arch.name,):
                for k, v in _ARCH_MACROS.get(f, {}).items():
                    self.st.macros.setdefault(k, Macro(k, v))
            return f"#include <{name}>"         # sfclab knows what it declares
        if path is None:
            raise _Error(f"cannot find the included file {name!r}",
                         "looked in " + ", ".join(str(c.parent) for c in
                                                  self._candidates(name, system)))
        if path in self.st.once:
            return None
        if len(self.st.stack) >= MAX_INCLUDE_DEPTH:
            raise _Error(f"#include nested too deeply ({MAX_INCLUDE_DEPTH} files)",
                         "a file probably includes itself: guard it with #ifndef/#define")
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise _Error(f"cannot read the included file {name!r}: "
                         f"{getattr(e, 'strerror', None) or e}") from None
        top = out.at_top()
        sub, whole = self._run_cached(path, text)
        if top and whole:
            out.segments[len(out.lines) + 1] = _freeze(sub, self.st, str(path))
            return f"#include <{name}>" if system else f'#include "{name}"'
        base = len(out.lines)                 # inside a declaration: the text, as cpp does
        for line, where in zip(sub.lines, sub.origin):
            out.add(line, where)
        for k, seg in sub.segments.items():
            out.segments[base + k] = seg
        return None

    def _run_cached(self, path: Path, text: str) -> tuple[_Out, bool]:
        """The included file's output (and whether it holds whole declarations), and its
        effect on the macros (the same file with
        the same macros before it gives the same: kept for the next program that
        includes it, as every NF includes the library's headers)."""
        st = self.st
        key = (path, text, frozenset(st.macros.items()), st.include_dirs, st.library,
               frozenset(st.once), len(st.stack))
        hit = _FILES.get(key)
        if hit is None:
            sub = _Out()
            before = set(st.files)
            st.stack.append(path)
            try:
                _File(st, text, str(path), path.parent).run(sub)
            finally:
                st.stack.pop()
            hit = (sub, dict(st.macros), frozenset(st.once),
                   {f: st.files[f] for f in set(st.files) - before}, sub.at_top())
            _FILES[key] = hit
            while len(_FILES) > _FILES_MAX:
                _FILES.pop(next(iter(_FILES)))
        else:
            st.macros.clear()
            st.macros.update(hit[1])
            st.once |= hit[2]
            for f, t in hit[3].items():
                st.files.setdefault(f, t)
        sub = hit[0]
        out = _Out()                          # a copy: the caller appends to it
        out.lines, out.origin, out.segments = list(sub.lines), list(sub.origin), dict(sub.segments)
        return out, hit[4]

    def _candidates(self, name: str, system: bool) -> list[Path]:
        """Where ``#include`` looks: next to the including file (``"file"`` only), the
        ``-I`` folders, then the NF library's ``include/`` and the library itself."""
        out = [] if system or self.base is None else [self.base / name]
        out += [d / name for d in self.st.include_dirs]
        lib = self.st.library
        if lib is not None:
            out += [lib / "include" / Path(name).name, lib / name]
        return out

    def _find(self, name: str, system: bool) -> Path | None:
        try:
            if Path(name).is_absolute():
                return Path(name).resolve() if Path(name).is_file() else None
            for cand in self._candidates(name, system):
                if cand.is_file():
                    return cand.resolve()
        except (OSError, ValueError) as e:   # a name too long for the file system …
            raise _Error(f"cannot read the included file {name[:60]!r}: "
                         f"{getattr(e, 'strerror', None) or e}",
                         'write the name of a .p4 file: #include "headers.p4"') from None
        return None


#: Included files already preprocessed (see ``_File._run_cached``), the oldest dropped first.
_FILES: dict[tuple, tuple] = {}
_FILES_MAX = 64


def _freeze(out: _Out, st: _State, path: str) -> Preprocessed:
    return Preprocessed("\n".join(out.lines), tuple(out.origin), dict(out.segments),
                        st.files, path, dict(st.macros))


# --- entry point ---------------------------------------------------------------------------

def _macro_of(name: str, value) -> Macro:
    return Macro(name, "1" if value is None else str(value))


def preprocess(text: str, *, source: str = "<string>", base: str | Path | None = None,
               include_dirs: Iterable[str | Path] = (), defines: Mapping[str, object] = {},
               library: Path | None = None) -> Preprocessed:
    """Run the C preprocessor on *text* as p4c does (see the module's doc).

    *source* names the text in positions; *base* is its folder (for
    ``#include "file"``); *include_dirs* are ``-I`` folders; *defines* are ``-D``
    macros (a value of None defines the macro as 1); *library* is the NF library's
    folder (searched last).  Raises :class:`~sfclab.errors.P4SyntaxError` naming the
    file and line of a directive that is wrong."""
    macros = {k: _macro_of(k, v) for k, v in defines.items()}
    if "#" not in text and not macros and "__LINE__" not in text and "__FILE__" not in text:
        n = text.count("\n") + 1
        return Preprocessed(text, tuple((source, i) for i in range(1, n + 1)), {},
                            {source: text}, source, {})
    st = _State(macros, tuple(Path(d) for d in include_dirs), library)
    out = _Out()
    head = [f"#define {k} {m.body}" for k, m in macros.items() if k in DEFINES]
    for line in head:
        out.add(line, ("<command-line>", 1))
    _File(st, text, source, Path(base) if base is not None else None).run(out)
    return Preprocessed("\n".join(out.lines), tuple(out.origin), dict(out.segments), st.files,
                        source, dict(st.macros))
