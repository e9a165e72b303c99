"""The chain language's syntax tree: what the user wrote, with positions.

The three front ends (FlexMesh text, P4SC sentences, P4SFC JSON) all produce
:class:`ChainDecl` objects; :mod:`sfclab.lang.build` turns them into IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["Pos", "NFRef", "FieldRef", "Cond", "IfElse", "MultiBranch", "Stmt",
           "MatchTerm", "LoopBack", "ChainDecl"]


class Pos(NamedTuple):
    """Where something was written: 1-based line and column, and its width."""

    line: int = 0
    column: int = 0
    width: int = 1


@dataclass(frozen=True, slots=True)
class NFRef:
    """An NF, an end point, or ``self`` as written."""

    name: str
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class FieldRef:
    """``nf.field`` or a bare ``field``."""

    nf: str | None
    name: str
    pos: Pos = Pos()

    def __str__(self) -> str:
        return f"{self.nf}.{self.name}" if self.nf else self.name


@dataclass(frozen=True, slots=True)
class Cond:
    field: FieldRef
    op: str
    value: int | str
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class IfElse:
    """``(then : other ? cond)``."""

    then: NFRef
    other: NFRef
    cond: Cond
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class MultiBranch:
    """``(v1@A : v2@B # field)``."""

    cases: tuple[tuple[int | str, NFRef, Pos], ...]
    field: FieldRef
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class LoopBack:
    """P4SC ``X loop N``: after X, start over from the first NF, N runs in all."""

    bound: int | None
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class Stmt:
    """``a => b => c`` optionally ending in a branch, from the last NF."""

    refs: tuple[NFRef, ...]
    branch: IfElse | MultiBranch | LoopBack | None = None
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class MatchTerm:
    """``field ==|!= value`` where value is exact, prefix, value &&& mask or lo..hi."""

    field: str
    negate: bool
    kind: str
    values: tuple[tuple[str, str, Pos], ...]  # (terminal type, text, pos)
    pos: Pos = Pos()


@dataclass(slots=True)
class ChainDecl:
    """One chain as written, in any of the three styles."""

    name: str
    style: str  # "flexmesh", "short", "p4sc" or "json"
    stmts: list[Stmt] = field(default_factory=list)
    match: tuple[MatchTerm, ...] = ()
    weight: float | None = None
    weight_pos: Pos = Pos()
    pos: Pos = Pos()
    #: P4SC: NFs marked ``first`` / ``last``; JSON: NF locations.
    first: list[NFRef] = field(default_factory=list)
    last: list[NFRef] = field(default_factory=list)
    attrs: dict[str, dict] = field(default_factory=dict)
