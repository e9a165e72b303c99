"""Calls of a program's own functions (``bit<8> f(in bit<8> x) { return x + 1; }``).

A mixin of :class:`~.control.Compiler`.  Each call is compiled where it is written,
as p4c inlines functions: the parameters get storage of their own, ``in`` and
``inout`` arguments are copied in, the body runs, ``return v`` stores ``v`` and leaves
the body, and ``out`` and ``inout`` arguments are copied out; an ``out`` header
starts invalid.  A call is evaluated where the expression that holds it is, so
``a || f(x)`` does not call ``f`` when ``a`` holds.  A function that returns a
header or a struct gives a value whose call runs first (``CE.pre``).

Arguments may be named (``f(x = 1)``) and parameters may have default values;
:func:`bind_args` puts them in the parameters' order for actions and functions.
"""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .assign import header_bases, seq
from .expr import CE, Scope
from .storage import ScalarRef
from .types import Bits

__all__ = ["FunctionObj", "FunctionCalls", "ReturnValue", "bind_args", "invalidate_headers"]


class FunctionObj:
    """A top-level function, compiled at each of its calls."""

    __slots__ = ("decl",)

    def __init__(self, decl: A.FunctionDecl) -> None:
        self.decl = decl


class ReturnValue(Exception):
    """``return`` inside a function: the value is already in its slot."""


def bind_args(params: tuple[A.Param, ...], args: tuple[A.Node, ...], what: str,
              error: Callable[[str, A.Node | None], Exception], node: A.Node) -> list[A.Node]:
    """*args* in the order of *params*: positional first, then named ones
    (``name = value``); a missing argument takes its parameter's default value."""
    out: list[A.Node | None] = [None] * len(params)
    index = {p.name: i for i, p in enumerate(params)}
    pos = 0
    for a in args:
        if isinstance(a, A.NamedArg):
            if a.name not in index:
                raise error(f"{what} has no parameter {a.name!r}", a)
            out[index[a.name]] = a.value
        else:
            if pos >= len(params):
                raise error(f"{what} takes {len(params)} argument(s), got {len(args)}", node)
            out[pos] = a
            pos += 1
    for i, (p, a) in enumerate(zip(params, out)):
        if a is None:
            if p.default is None and not any(x.name == "optional" for x in p.annotations):
                raise error(f"{what}: no argument for parameter {p.name!r}", node)
            out[i] = p.default
    return out  # type: ignore[return-value]


def invalidate_headers(ref) -> Callable | None:
    """A closure making every header under *ref* invalid (an ``out`` header's start)."""
    bases = header_bases(ref)
    if not bases:
        return None

    def invalid(p):
        v = p.v
        for b in bases:
            v[b] = False
    return invalid


class FunctionCalls:
    """Mixin: calls of user functions (needs the expression, statement and assignment
    compilers: ``expr``, ``block``, ``store``, ``lvalue``, ``layout``, ``env``)."""

    _fn_ret: list = []

    def user_function(self, e: A.Node, sc: Scope) -> FunctionObj | None:
        """The function *e* calls, when it is a call of the program's own function."""
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            f = sc.get(e.func.name)
            if isinstance(f, FunctionObj):
                return f
        return None

    def function_call(self, f: FunctionObj, e: A.Call, sc: Scope) -> tuple[Callable, object]:
        """``(run, result)``: a closure running the call, and where its result is
        (a :class:`ScalarRef`, a compound ref, or None for ``void``)."""
        d = f.decl
        args = bind_args(d.params, e.args, f"function {d.name}", self.error, e)
        if d.type_params:
            outer = self.env.type_vars
            self.env.type_vars = {**outer, **self._type_binding(d, e, args, sc)}
            try:
                return self._function_body(d, args, sc)
            finally:
                self.env.type_vars = outer
        return self._function_body(d, args, sc)

    def _type_binding(self, d: A.FunctionDecl, e: A.Call, args: list, sc: Scope) -> dict:
        """A generic function's type parameters: the call's type arguments, else the types
        of the arguments given for parameters of such a type."""
        if e.type_args:
            if len(e.type_args) != len(d.type_params):
                raise self.error(f"{d.name} takes {len(d.type_params)} type argument(s)", e)
            return {t: self.env.resolve(a) for t, a in zip(d.type_params, e.type_args)}
        out: dict = {}
        for prm, arg in zip(d.params, args):
            if isinstance(prm.type, A.NamedType) and prm.type.name in d.type_params:
                t = self.expr(arg, sc).t
                if t is not None and not (isinstance(t, Bits) and t.width == 0):
                    out.setdefault(prm.type.name, t)
        missing = [t for t in d.type_params if t not in out]
        if missing:
            raise self.error(f"{d.name}: the type of {', '.join(missing)} cannot be told from "
                             f"the arguments: write the type arguments, {d.name}<…>(…)", e)
        return out

    def _function_body(self, d: A.FunctionDecl, args: list, sc: Scope) -> tuple[Callable, object]:
        self._tmp += 1
        tag = f"{d.name}#{self._tmp}"
        inner = Scope(self.global_scope)
        before: list[Callable | None] = []
        after: list[Callable] = []
        for prm, arg in zip(d.params, args):
            ref = self.layout.build(self.env.resolve(prm.type), f"{tag}.{prm.name}")
            inner.names[prm.name] = ref
            self.copy_argument(prm, arg, ref, sc, before, after)
        ret = None
        if not isinstance(d.ret, A.VoidType):
            ret = self.layout.build(self.env.resolve(d.ret), f"{tag}.$return")
        self._fn_ret = self._fn_ret + [ret]
        try:
            body = self.block(d.body.stmts, inner, f"function {d.name}")
        finally:
            self._fn_ret = self._fn_ret[:-1]
        copy_in, copy_out = seq(before), seq(after)

        def run(p):
            copy_in(p)
            try:
                body(p)
            except ReturnValue:
                pass
            copy_out(p)
        return run, ret

    def copy_argument(self, prm: A.Param, arg: A.Node, ref, sc: Scope, before: list,
                      after: list) -> None:
        """P4's copy-in/copy-out of *arg* for parameter *prm*, whose storage is *ref*: the
        copy into it (an ``out`` header starts invalid instead) goes to *before*, the copy
        back of an ``out`` or ``inout`` argument to *after*."""
        t = getattr(ref, "type", None)
        if prm.direction == "out":
            before.append(invalidate_headers(ref))
        else:
            before.append(self.store(ref, self.expr(arg, sc, t if isinstance(t, Bits) else None)))
        if prm.direction in ("out", "inout"):
            after.append(self.store(self.lvalue(arg, sc), self._from_ref(ref, arg)))

    def function_value(self, f: FunctionObj, e: A.Call, sc: Scope) -> CE:
        """A call of *f* as an expression."""
        run, ret = self.function_call(f, e, sc)
        if ret is None:
            raise self.error(f"{expr_p4(e.func)} returns void: its result cannot be used", e)
        if isinstance(ret, ScalarRef):
            s = ret.slot

            def value(p):
                run(p)
                return p.v[s]
            return CE(value, ret.type)
        return CE(None, ret.type, ref=ret, pre=run)

    def function_return(self, s: A.Return, sc: Scope) -> Callable:
        """``return;`` / ``return v;`` inside a function body."""
        ret = self._fn_ret[-1]
        if s.value is None:
            def leave(p):
                raise ReturnValue()
            return leave
        if ret is None:
            raise self.error("a void function returns no value", s)
        t = ret.type
        store = self.store(ret, self.expr(s.value, sc, t if isinstance(t, Bits) else None))

        def give(p):
            store(p)
            raise ReturnValue()
        return give

    def in_function(self) -> bool:
        return bool(self._fn_ret)

