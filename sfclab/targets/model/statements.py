"""Loops and ``switch`` on a value, compiled to closures ``fn(p)``.

A mixin of :class:`~.control.Compiler`:

* ``for (init; cond; update) body`` (p4c 1.2.5.16 takes it, and p4c-bm2-ss runs it
  on BMv2), with ``break`` and ``continue``; the ``init`` declarations live in the
  enclosing block, as p4c scopes them.  A loop that runs more than
  :data:`MAX_ITERATIONS` times is left with a note in the trace (P4 loops are meant to
  end; BMv2 would spin);
* ``for (T x in a .. b)`` and ``for (T x in stack)`` (p4test takes them; BMv2 does
  not), over the range's values or the stack's elements in order;
* ``switch (value) { 1: { … } 2: 3: { … } default: { … } }``: the first label equal
  to the value runs, an empty case falls through to the next body.
"""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .expr import NOCONST, Scope
from .storage import StackRef
from .types import Bits, EnumT

__all__ = ["LoopCompiler", "BreakSignal", "ContinueSignal", "MAX_ITERATIONS"]

#: Iterations one loop may run for one packet before the model gives up on it.
MAX_ITERATIONS = 100_000


class BreakSignal(Exception):
    """``break``: leaves the innermost loop."""


class ContinueSignal(Exception):
    """``continue``: goes on with the innermost loop's next round."""


def _round(body: Callable, p) -> bool:
    """One round of a loop's body; False when it breaks out of the loop."""
    try:
        body(p)
    except BreakSignal:
        return False
    except ContinueSignal:
        pass
    return True


def _raise(kind: type[Exception]) -> Callable:
    def signal(p):
        raise kind()
    return signal


class LoopCompiler:
    """Mixin: loops and value switches (needs ``stmt``, ``block``, ``expr``, ``store``)."""

    def loop_stmt(self, s: A.Node, sc: Scope, where: str) -> Callable | None:
        """``for``, ``for … in``, ``break`` and ``continue``."""
        if isinstance(s, A.Break):
            return _raise(BreakSignal)
        if isinstance(s, A.Continue):
            return _raise(ContinueSignal)
        if isinstance(s, A.For):
            return self._for(s, sc, where)
        return self._for_in(s, sc, where)

    def _for(self, s: A.For, sc: Scope, where: str) -> Callable:
        from .assign import seq

        init = seq([self.stmt(x, sc, where) for x in s.init])
        inner = sc.child()
        cond = self.expr(s.cond, inner).fn if s.cond is not None else (lambda p: True)
        body = self.stmt(s.body, inner.child(), where) or (lambda p: None)
        update = seq([self.stmt(x, inner, where) for x in s.update])
        text = f"for loop at {s.pos}" if s.pos else "for loop"

        def loop(p):
            init(p)
            n = 0
            while cond(p):
                n += 1
                if n > MAX_ITERATIONS:
                    p.tr.append(("note", f"{text} ran {MAX_ITERATIONS} times: the model left it"))
                    break
                if not _round(body, p):
                    break
                update(p)
        return loop

    def _for_in(self, s: A.ForIn, sc: Scope, where: str) -> Callable:
        inner = sc.child()
        var = s.var
        if isinstance(s.iterable, A.Range):
            lo, hi = self.expr(s.iterable.lo, sc), self.expr(s.iterable.hi, sc)
            self.var_decl(var, inner)
            ref = inner.names[var.name]
            flo, fhi = lo.fn, hi.fn
            setv = ref.slot
            body = self.stmt(s.body, inner.child(), where) or (lambda p: None)

            def over_range(p):
                a, b = flo(p), fhi(p)
                x = a
                while x <= b:
                    p.v[setv] = x
                    if not _round(body, p):
                        break
                    x += 1
            return over_range
        stack = self.path(s.iterable, sc)
        if not isinstance(stack, StackRef):
            raise self.error(f"for … in {expr_p4(s.iterable)}: the model iterates over a range "
                             f"a .. b or a header stack", s)
        self.var_decl(var, inner)
        ref = inner.names[var.name]
        from .expr import CE

        copies = [self.store(ref, CE(None, e.type, ref=e)) for e in stack.elems]
        body = self.stmt(s.body, inner.child(), where) or (lambda p: None)

        def over_stack(p):
            for copy in copies:
                copy(p)
                if not _round(body, p):
                    break
        return over_stack

    def value_switch(self, s: A.Switch, sc: Scope, where: str) -> Callable:
        """``switch (value) { label: body … }``."""
        x = self.expr(s.expr, sc)
        t = x.t
        table: dict = {}
        default = None
        pending: list = []
        for case in s.cases:
            pending.append(case)
            if case.body is None:
                continue
            body = self.block(case.body.stmts, sc, where)
            for c in pending:
                if c.label == "default" and c.expr is None:
                    default = body
                    continue
                v = self.expr(c.expr, sc, t if isinstance(t, Bits) else None)
                if v.const is NOCONST:
                    raise self.error(f"switch label {c.label} is not a compile-time constant", c)
                key = v.const
                if isinstance(t, Bits) and isinstance(key, int) and t.width:
                    key &= t.mask if not t.signed else -1
                table.setdefault(key, body)
            pending = []
        f = x.fn
        if isinstance(t, EnumT) or not isinstance(t, Bits) or not t.signed:
            def switch(p):
                body = table.get(f(p), default)
                if body is not None:
                    body(p)
            return switch

        def switch_signed(p):
            body = table.get(f(p), default)
            if body is not None:
                body(p)
        return switch_signed

