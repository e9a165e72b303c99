"""The chain language's syntax tree: what the user wrote, with positions.

The three front ends (FlexMesh text, P4SC sentences, P4SFC JSON) all produce
:class:`ChainDecl` objects; :mod:`sfclab.lang.build` turns them into IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["Pos", "NFRef", "FieldRef", "Cond", "IfElse", "MultiBranch", "Stmt",
           "MatchTerm", "LoopBack", "ChainDecl", "span"]


class Pos(NamedTuple):
    """Where something was written: 1-based line and column, and its width."""

    line: int = 0
    column: int = 0
    width: int = 1


def span(first: Pos, last: Pos) -> Pos:
    """From the start of *first* to the end of *last* (just *first* when they are on
    different lines: a caret marks one line).

    >>> span(Pos(1, 5, 3), Pos(1, 10, 2))
    Pos(line=1, column=5, width=7)
    >>> span(Pos(1, 5, 3), Pos(2, 1, 2))
    Pos(line=1, column=5, width=3)
    """
    if first.line != last.line or last.column < first.column:
        return first
    return Pos(first.line, first.column, last.column + last.width - first.column)


@dataclass(frozen=True, slots=True)
class NFRef:
    """An NF, an end point, or ``self`` as written."""

    name: str
    pos: Pos = Pos()


@dataclass(frozen=True, slots=True)
class FieldRef:
    """``nf.field`` or a bare ``field``; *pos* covers all of it, *name_pos* the field name."""

    nf: str | None
    name: str
    pos: Pos = Pos()
    name_pos: Pos = Pos()

    @property
    def nf_pos(self) -> Pos:
        """Where the NF part is written (the whole reference for a bare field)."""
        if self.nf is None:
            return self.pos
        return Pos(self.pos.line, self.pos.column, len(self.nf))

    def __str__(self) -> str:
        return f"{self.nf}.{self.name}" if self.nf else self.name


@dataclass(frozen=True, slots=True)
class Cond:
    """``field op value``; *pos* covers the whole condition, *value_pos* the value."""

    field: FieldRef
    op: str
    value: int | str
    pos: Pos = Pos()
    value_pos: Pos = Pos()


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
    """P4SC ``X loop N``: after X, start over from the first NF, N runs in all.
    *pos* is the ``loop`` keyword's, *bound_pos* the number's."""

    bound: int | None
    pos: Pos = Pos()
    bound_pos: Pos = Pos()


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
    #: Where the chain's traffic enters and leaves a network (``from … to …``).
    ingress: str | None = None
    egress: str | None = None
    ingress_pos: Pos = Pos()
    egress_pos: Pos = Pos()
