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
  ``bf-p4c`` refuses, and Tofino's action, gateway, direct-resource and range-key rules
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

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ..errors import P4Error
from . import ast as A
from .arch import ARCH_FILES, DEFINES
from .archdecls import declarations
from .env import Env
from .parser import include_file, parse_p4_file
from .resolve import Checker, in_place

__all__ = ["check_program", "Env", "environment", "arch_of", "widths_of", "included_decls"]


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
        elif isinstance(d, A.Include) and d.system and not d.decls:
            f = ARCH_FILES.get(Path(d.path).name)
            if f is not None and f.name not in seen:
                seen.add(f.name)
                if f.arch:
                    env.arch, env.kinds_from = f.arch, f"core.p4 and {f.name}"
                    env.defines = {k: v.value for k, v in defines.items() if k in f.defines}
                    env.add_arch(f, env.defines)
        elif isinstance(d, A.Include):
            if d.decls:
                env.add_decls(included_decls(d))
            else:
                for p in _included(d.path, base):
                    env.add_decls(p.decls)
    for name, d in defines.items():
        if DEFINES[name] not in seen:
            raise _error(d, f"#define {name}: no included file reads it "
                            f"(#include <{DEFINES[name]}> does)",
                         f"remove it, or #include <{DEFINES[name]}> after it")
    if portable and not env.arch:
        kinds = [declarations(ARCH_FILES[f], {}).match_kinds for f in ("v1model.p4", "tna.p4")]
        env.match_kinds.update({k: "v1model.p4 and tna.p4" for k in kinds[0] & kinds[1]})
        env.kinds_from = "core.p4 and both v1model.p4 and tna.p4 (an NF runs on either)"
    for p in extra:
        env.add_decls(p.decls)
    env.add_decls(prog.decls)
    return env


def widths_of(prog: A.Program, control: A.ControlDecl, *, extra: Iterable[A.Program] = (),
              portable: bool = False):
    """A function giving the width in bits of an expression in *control* of *prog* (None:
    not known); *extra*, *portable* as for :func:`environment`."""
    return _widths(Checker(environment(prog, extra=extra, portable=portable)), control)


def _widths(checker, control: A.ControlDecl):
    """The width in bits of an expression in *control* (None: not known), as *checker*
    types it with the control's parameters and locals in scope."""
    scope = {p.name: p for p in control.params}
    scope.update((d.name, d) for d in control.locals if isinstance(d, (A.VarDecl, A.ConstDecl)))

    def width_of(e: A.Node) -> int | None:
        checker.scopes.append(scope)
        try:
            t = checker.type_of(e)
        finally:
            checker.scopes.pop()
        return t.width if isinstance(t, A.BitType) and t.width else None

    return width_of


def included_decls(inc: A.Include) -> list[A.Node]:
    """The declarations ``#include "file"`` brought in, those of the files it includes
    in their place."""
    return in_place(inc.decls)


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


def _error(node: A.Node | None, msg: str, hint: str = "") -> P4Error:
    return P4Error(msg, hint=hint, **A.error_at(node))


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
        checker = Checker(env)
        checker.program(prog)
        if env.arch == "tna":
            from .paths import TNA, check_one_access
            from .tofino_rules import check_tofino

            for c in prog.controls():
                check_one_access(c, prog, TNA)
                check_tofino(c, width_of=_widths(checker, c))
    except P4Error as e:
        if not e.text and text and (not e.source or e.source == prog.source):
            e.text = text
        raise
    return env
