"""Where a line of a composed program comes from (an NF's control, a core table …), for
the messages of p4c (:mod:`.p4c`) and of sfclab's own checks (:mod:`.emitter`)."""

from __future__ import annotations

from ..p4 import ast as A

__all__ = ["locate"]


def locate(prog: A.Program, line: int) -> str:
    """The part of *prog* a line of its text belongs to: the innermost declaration
    that starts at or before the line (an NF's control, a core table …)."""
    best: A.Node | None = None
    outer: A.Node | None = None
    for d in prog.decls:
        if d.pos and d.pos.line <= line:  # type: ignore[union-attr]
            outer = d
    if isinstance(outer, A.ControlDecl):
        for d in outer.locals:
            if d.pos and d.pos.line <= line:
                best = d
    if outer is None:
        return "the program's header"
    what = f"{type(outer).__name__.removesuffix('Decl').lower()} '{outer.name}'"
    if best is not None and isinstance(best, (A.TableDecl, A.ActionDecl, A.Instance)):
        what += f", {type(best).__name__.removesuffix('Decl').lower()} '{best.name}'"
    return what
