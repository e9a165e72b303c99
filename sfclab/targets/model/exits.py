"""``exit`` inside an action, and which ``out`` / ``inout`` arguments BMv2 copies out.

P4_16 copies an action's ``out`` and ``inout`` arguments out on ``exit`` too.  p4c
(1.2.5, so BMv2) puts the copy-out before each ``exit``, and then its optimiser drops
the copy of a parameter whose value the rest of the action overwrites without reading
it — as if the ``exit`` were not there.  What is left is what BMv2 does, measured
(tests/fixtures/differential/exit_in_action.p4, and the random programs of
tests/differential): at an exit point (an ``exit``, or a call of an action that may
exit) a parameter is copied out unless the first statement after that point that
touches it, on the path going on past it, assigns it without reading it.  Code after
an ``exit`` in the same block is unreachable and gone (so ``x = y; exit; x = 9;``
copies ``y`` out), but code after a call that exits is not (p4c inlines the callee
later); a condition p4c folds (``true``, ``e == e``) counts as that constant.

:func:`exit_points` computes, per exit point of an action body, the parameters kept;
the body's exit points are wrapped (:func:`mark_exit`) to put that set on the
:class:`ExitSignal`, and the call (:func:`copy_out`) copies out just those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...p4 import ast as A
from ...p4.printer import expr_p4

__all__ = ["ExitSignal", "exit_points", "mark_exit", "copy_out", "folded"]


class ExitSignal(Exception):
    """``exit``: ends the current pipeline control.  ``keep``: the ``out`` / ``inout``
    parameters of the innermost action left that BMv2 copies out (None: not known)."""

    keep: frozenset | None = None


def folded(e: A.Node, const: Callable) -> bool | None:
    """A condition's value where p4c folds it (a constant, ``e == e``), else None."""
    if isinstance(e, A.Binary) and e.op in ("==", "!=", "<=", ">=", "<", ">") and \
            not any(isinstance(n, A.Call) for n in A.walk(e)) and \
            expr_p4(e.left) == expr_p4(e.right):
        return e.op in ("==", "<=", ">=")
    return const(e)


def _names(node: A.Node) -> set[str]:
    return {n.name for n in A.walk(node) if isinstance(n, A.Name)}


def _touch(st: A.Node, x: str) -> str | None:
    """How statement *st* first touches parameter *x*: ``"write"`` (assigned whole, not
    read), ``"read"``, or None."""
    if isinstance(st, A.Assign):
        if isinstance(st.lhs, A.Name) and st.lhs.name == x:
            return "read" if x in _names(st.rhs) else "write"
        return "read" if x in _names(st) else None
    if isinstance(st, A.Block):
        return _touch_all(st.stmts, x)
    if isinstance(st, A.If):
        if x in _names(st.cond):
            return "read"
        then = _touch(st.then, x)
        other = _touch(st.other, x) if st.other is not None else None
        if then == other == "write":
            return "write"
        return "read" if then or other else None
    return "read" if x in _names(st) else None


def _touch_all(stmts: Iterable[A.Node], x: str) -> str | None:
    for st in stmts:
        t = _touch(st, x)
        if t is not None:
            return t
    return None


def exit_points(stmts, params: list[str], const: Callable, may_exit: Callable,
                conts: tuple = ()) -> dict[int, frozenset]:
    """``{id(statement): parameters copied out}`` for every exit point in *stmts*
    (``may_exit(call)``: whether a call statement may exit; *conts*: the statements
    after the enclosing ones, innermost first)."""
    out: dict[int, frozenset] = {}
    stmts = list(stmts)
    i = 0
    while i < len(stmts):
        st, rest = stmts[i], stmts[i + 1:]
        if isinstance(st, A.Exit):
            out[id(st)] = _kept(params, conts)
            break                                   # the rest of the block is unreachable
        if isinstance(st, A.CallStmt) and may_exit(st.call):
            out[id(st)] = _kept(params, (rest, *conts))
        elif isinstance(st, A.Block):
            out |= exit_points(st.stmts, params, const, may_exit, (rest, *conts))
        elif isinstance(st, A.If):
            c = folded(st.cond, const)
            if c is not None:                       # p4c keeps only the branch taken
                taken = st.then if c else st.other
                stmts[i:i + 1] = list(taken.stmts if isinstance(taken, A.Block) else
                                      [taken] if taken is not None else [])
                continue
            for branch in (st.then, st.other):
                if branch is not None:
                    out |= exit_points([branch], params, const, may_exit, (rest, *conts))
        i += 1
    return out


def _kept(params: list[str], conts) -> frozenset:
    after = [st for block in conts for st in block]
    return frozenset(x for x in params if _touch_all(after, x) != "write")


def mark_exit(f: Callable, keep: frozenset) -> Callable:
    """*f*, an exit point of an action body: an exit out of it carries *keep*."""
    def exit_point(p):
        try:
            f(p)
        except ExitSignal as sig:
            if sig.keep is None:
                sig.keep = keep
            raise
    return exit_point


def copy_out(call: Callable, outs: list[tuple[str, Callable]]) -> Callable:
    """*call*, then the copy-out of its arguments (``(parameter, store)`` pairs); on an
    exit, the copy-out of the parameters the signal keeps."""
    if not outs:
        return call
    stores = [f for _, f in outs]

    def call_out(p):
        try:
            call(p)
        except ExitSignal as sig:
            keep, sig.keep = sig.keep, None
            for name, f in outs:
                if keep is None or name in keep:
                    f(p)
            raise
        for f in stores:
            f(p)
    return call_out
