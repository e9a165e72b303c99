"""The names a P4 program may use (:class:`Env`): what its architecture files, the files it
includes and the program itself declare; built by :func:`sfclab.p4.check.environment`,
read by :mod:`sfclab.p4.check` and :mod:`sfclab.p4.resolve`, below both."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from . import ast as A
from .arch import ArchFile, Declarations
from .archdecls import declarations

__all__ = ["Env"]


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
        d: Declarations = declarations(f, defines)
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
                alt = declarations(f, {**defines, cond.define: value}).externs
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
