"""What p4c's front end refuses, refused by sfclab before any compiler runs.

:func:`check_program` walks a program in declaration order, with what its
architecture files (:mod:`.arch`), the files it includes and the program itself
declare, and raises :class:`~sfclab.errors.P4Error` at the first of:

* a ``#define`` that no included file reads, or that comes after the
  ``#include`` that reads it (it would change nothing);
* an extern specialised with the wrong number of type arguments (p4c's
  ``Type register has 1 type parameter(s), but it is specialized with 2``),
  built with arguments no constructor takes, a method it does not have, a call
  with the wrong number of arguments or with an argument whose type is not the
  parameter's (``bit<12>`` where ``bit<32>`` is declared: P4 never widens), a
  member of the wrong enum, a match kind the architecture does not declare, an
  instance that does not implement its extern's abstract methods;
* a name used before its declaration (P4_16 requires declaration before use;
  p4c says ``now: declaration not found``);
* on TNA, a register one packet may access more than once (:mod:`.paths`), which
  ``bf-p4c`` refuses, and Tofino's action, gateway and direct-resource rules
  (:mod:`.tofino_rules`).

Type arguments and types are compared as far as they are known here (widths of
``bit<W>``, typedefs, headers, structs, enums); what cannot be told is let through.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''#include <core.p4>
... #include <v1model.p4>
... control c() { register<bit<32>, bit<12>>(16) r; apply { } }''')
>>> try:
...     check_program(prog)
... except P4Error as e:
...     print(e.message)
register<bit<32>, bit<12>>: Type register has 1 type parameter(s), but it is specialized with 2
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import P4Error
from . import ast as A
from .arch import ARCH_FILES, DEFINES, ArchFile, Declarations
from .parser import include_file, parse_p4_file

__all__ = ["check_program", "Env", "environment", "arch_of"]


@dataclass
class Env:
    """Everything a program may use, by name, with the architecture it is for."""

    arch: str = ""
    defines: dict[str, int] = field(default_factory=dict)
    externs: dict[str, A.ExternDecl] = field(default_factory=dict)
    functions: dict[str, tuple[A.MethodDecl, ...]] = field(default_factory=dict)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    errors: set[str] = field(default_factory=set)
    match_kinds: dict[str, str] = field(default_factory=dict)       # kind -> declaring file
    values: set[str] = field(default_factory=set)
    types: dict[str, A.Node] = field(default_factory=dict)           # name -> declaration/type
    files: list[ArchFile] = field(default_factory=list)
    kinds_from: str = "core.p4"                  # who declares the match kinds, for messages
    other_forms: dict[str, list[tuple[str, A.ExternDecl]]] = field(default_factory=dict)

    def add_arch(self, f: ArchFile, defines: Mapping[str, int]) -> None:
        d: Declarations = f.declarations(defines)
        self.files.append(f)
        self.externs.update(d.externs)
        for k, v in d.functions.items():
            self.functions[k] = self.functions.get(k, ()) + v
        self.enums.update({k: tuple(m for m, _ in e.members) for k, e in d.enums.items()})
        self.types.update(d.enums)
        self.match_kinds.update({k: f.name for k in d.match_kinds})
        self.errors |= d.errors
        self.values |= d.values | set(d.functions)
        self.types.update(d.typedefs)
        current = {**{k: v for k, v in f.defines.items() if v is not None}, **defines}
        for cond in {c for c, _ in f.decls if c is not None}:   # forms another value selects
            if cond.define in current and not cond.holds(current):
                value = cond.at_least - 1 if cond.otherwise else cond.at_least
                how = (f"`#define {cond.define} {value}` (or later) before #include <{f.name}>"
                       if not cond.otherwise else
                       f"{cond.define} below {cond.at_least} (no #define: the default is "
                       f"{f.defines[cond.define]})")
                alt = f.declarations({**defines, cond.define: value}).externs
                for ext, decl in alt.items():
                    if decl != d.externs.get(ext):
                        self.other_forms.setdefault(ext, []).append((how, decl))

    def add_decls(self, decls: Iterable[A.Node]) -> None:
        """Declarations of an included file or of *extra* programs (all in scope)."""
        for d in decls:
            if isinstance(d, (A.ConstDecl, A.ActionDecl, A.Instance)):
                self.values.add(d.name)
            if isinstance(d, A.ExternDecl):
                self.externs[d.name] = d
            elif isinstance(d, A.MethodDecl):
                self.functions[d.name] = self.functions.get(d.name, ()) + (d,)
                self.values.add(d.name)
            elif isinstance(d, A.EnumDecl):
                self.enums[d.name] = tuple(m for m, _ in d.members)
                self.types[d.name] = d
            elif isinstance(d, A.ErrorDecl):
                self.errors |= set(d.members)
            elif isinstance(d, A.MatchKindDecl):
                self.match_kinds.update({k: "the program" for k in d.members})
            elif isinstance(d, (A.HeaderDecl, A.StructDecl)):
                self.types[d.name] = d
            elif isinstance(d, A.Typedef):
                self.types[d.name] = d.type


def arch_of(prog: A.Program) -> str:
    """The architecture a program includes (``v1model``, ``tna``), or ``""``."""
    for inc in prog.find(A.Include):
        f = ARCH_FILES.get(Path(inc.path).name) if inc.system else None
        if f is not None and f.arch:
            return f.arch
    return ""


def environment(prog: A.Program, *, base: Path | None = None,
                extra: Iterable[A.Program] = (), portable: bool = False) -> Env:
    """What *prog* may use: core.p4, its architecture file (with the macros defined
    before its ``#include``), the files it includes, *extra* programs' declarations
    (an NF's library includes) and its own top-level declarations.  *portable*: a
    program that includes no architecture (an NF) may use the match kinds every
    architecture declares."""
    env = Env()
    env.add_arch(ARCH_FILES["core.p4"], {})
    defines: dict[str, A.Define] = {}
    seen: set[str] = set()
    for d in prog.decls:
        if isinstance(d, A.Define):
            if d.name in defines and defines[d.name].value != d.value:
                raise _error(d, f"#define {d.name} is defined twice, with {defines[d.name].value} "
                                f"and {d.value}", "define it once, before the #include")
            if DEFINES[d.name] in seen:
                raise _error(d, f"#define {d.name} comes after #include <{DEFINES[d.name]}>, "
                                f"which reads it: it changes nothing there",
                             f"move it above #include <{DEFINES[d.name]}>")
            defines[d.name] = d
        elif isinstance(d, A.Include) and d.system:
            f = ARCH_FILES.get(Path(d.path).name)
            if f is not None and f.name not in seen:
                seen.add(f.name)
                if f.arch:
                    env.arch, env.kinds_from = f.arch, f"core.p4 and {f.name}"
                    env.defines = {k: v.value for k, v in defines.items() if k in f.defines}
                    env.add_arch(f, env.defines)
        elif isinstance(d, A.Include):
            for p in _included(d.path, base):
                env.add_decls(p.decls)
    for name, d in defines.items():
        if DEFINES[name] not in seen:
            raise _error(d, f"#define {name}: no included file reads it "
                            f"(#include <{DEFINES[name]}> does)",
                         f"remove it, or #include <{DEFINES[name]}> after it")
    if portable and not env.arch:
        kinds = [ARCH_FILES[f].declarations({}).match_kinds for f in ("v1model.p4", "tna.p4")]
        env.match_kinds.update({k: "v1model.p4 and tna.p4" for k in kinds[0] & kinds[1]})
        env.kinds_from = "core.p4 and both v1model.p4 and tna.p4 (an NF runs on either)"
    for p in extra:
        env.add_decls(p.decls)
    env.add_decls(prog.decls)
    return env


def _included(name: str, base: Path | None) -> list[A.Program]:
    path = include_file(name, base)
    return [] if path is None else list(_file_programs(path, path.stat().st_mtime_ns))


@lru_cache(maxsize=64)
def _file_programs(path: Path, _mtime: int) -> tuple[A.Program, ...]:
    prog = parse_p4_file(path)
    out = [prog]
    for inc in prog.find(A.Include):
        if not inc.system:
            out += _included(inc.path, path.parent)
    return tuple(out)


def _error(node: A.Node | None, msg: str, hint: str = "", text: str = "") -> P4Error:
    pos = getattr(node, "pos", None)
    return P4Error(msg, line=pos.line if pos else 0, column=pos.column if pos else 0,
                   source=pos.file if pos else "", hint=hint, text=text)


def check_program(prog: A.Program, *, base: Path | str | None = None,
                  extra: Iterable[A.Program] = (), text: str | None = None,
                  portable: bool = False) -> Env:
    """Refuse what p4c's front end would refuse in *prog* (see the module's doc);
    returns the environment it checked against.  *base*: where quoted includes are
    looked up (the program's folder); *text*: the program's text, for the caret;
    *extra*, *portable*: as for :func:`environment`."""
    if base is None and Path(prog.source).is_file():
        base = Path(prog.source).parent
    if text is None and Path(prog.source).is_file():
        text = Path(prog.source).read_text()
    try:
        env = environment(prog, base=Path(base) if base is not None else None, extra=extra,
                          portable=portable)
        from .resolve import Checker

        Checker(env).program(prog)
        if env.arch == "tna":
            from .paths import TNA, check_one_access
            from .tofino_rules import check_tofino

            for c in prog.controls():
                check_one_access(c, prog, TNA)
                check_tofino(c)
    except P4Error as e:
        if not e.text and text and (not e.source or e.source == prog.source):
            e.text = text
        raise
    return env
