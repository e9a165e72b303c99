"""What an architecture file declares, parsed: the externs, functions, enums and match
kinds in force for one program, given the macros it defines.

:mod:`sfclab.p4.arch` holds the declarations as P4 text and the type names the parser
needs; this module sits above both and parses them (once per file and macro set).

>>> from sfclab.p4.arch import ARCH_FILES
>>> v1 = ARCH_FILES["v1model.p4"]
>>> externs(v1, {})["register"].type_params
('T',)
>>> externs(v1, {"V1MODEL_VERSION": 20200408})["register"].type_params
('T', 'I')
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from . import ast as A
from .arch import ARCH_FILES, ArchFile, Declarations
from .parser import parse_p4

__all__ = ["declarations", "externs"]


def declarations(f: ArchFile, defines: Mapping[str, int]) -> Declarations:
    """What *f* declares when *defines* are set before its ``#include``
    (the file's defaults for the others)."""
    values = {**{k: v for k, v in f.defines.items() if v is not None}, **defines}
    key = tuple(sorted((k, values[k]) for k in f.defines if k in values))
    return _declarations(f.name, key)


def externs(f: ArchFile, defines: Mapping[str, int]) -> Mapping[str, A.ExternDecl]:
    """The extern objects *f* declares under *defines*."""
    return declarations(f, defines).externs


@lru_cache(maxsize=32)
def _declarations(name: str, defines: tuple[tuple[str, int], ...]) -> Declarations:
    f = ARCH_FILES[name]
    env = dict(defines)
    text = "\n".join(d for cond, d in f.decls if cond is None or cond.holds(env))
    prog = parse_p4(text, source=f"<{f.source}>", types=f.types | {"_", "T"} | _core_types(f))
    externs = {d.name: d for d in prog.decls if isinstance(d, A.ExternDecl)}
    functions: dict[str, tuple[A.MethodDecl, ...]] = {}
    for d in prog.decls:
        if isinstance(d, A.MethodDecl):
            functions[d.name] = functions.get(d.name, ()) + (d,)
    enums = {d.name: d for d in prog.decls if isinstance(d, A.EnumDecl)}
    kinds = frozenset(k for d in prog.decls if isinstance(d, A.MatchKindDecl) for k in d.members)
    values = set(f.values) | {d.name for d in prog.decls if isinstance(d, (A.ConstDecl,
                                                                            A.ActionDecl))}
    typedefs = {n: A.BitType(w) for n, w in f.typedefs.items()}
    errors = frozenset(m for d in prog.decls if isinstance(d, A.ErrorDecl) for m in d.members)
    return Declarations(MappingProxyType(externs), MappingProxyType(functions),
                        MappingProxyType(enums), kinds, frozenset(values),
                        MappingProxyType(typedefs), errors)


def _core_types(f: ArchFile) -> frozenset[str]:
    return ARCH_FILES["core.p4"].types if f.name != "core.p4" else frozenset()
