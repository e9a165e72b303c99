"""The walk behind :func:`sfclab.p4.check.check_program`: names in declaration order,
extern instances, calls and their arguments, against an :class:`~.env.Env`.

A scope is a dict from name to the node that declares it (a variable, parameter,
constant, instance, action, table or extern function; None for names an
architecture file declares without a signature sfclab keeps).  A name is
resolved where it is used, so one declared further down is not found, as in p4c.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from ..errors import P4Error
from . import ast as A
from .printer import expr_p4, type_p4

if TYPE_CHECKING:
    from .env import Env

__all__ = ["Checker", "in_place"]

#: Methods every header, stack and table has (not externs).
_BUILTIN_METHODS = {"isValid", "setValid", "setInvalid", "apply", "push_front", "pop_front",
                    "minSizeInBits", "minSizeInBytes"}


def _err(node: A.Node | None, msg: str, hint: str = "") -> NoReturn:
    width = len(node.name) if isinstance(node, (A.Name, A.Instance)) else 1
    raise P4Error(msg, hint=hint, width=width, **A.error_at(node))


def in_place(decls: tuple[A.Node, ...]) -> list[A.Node]:
    """*decls* with the declarations each ``#include "file"`` among them brought in, in
    its place (an architecture file's ``#include <…>`` brings none here)."""
    out: list[A.Node] = []
    for d in decls:
        if isinstance(d, A.Include):
            out += in_place(d.decls)
        else:
            out.append(d)
    return out


def _line_of(decl: A.Node, use: A.Node) -> str:
    """``line N`` of *decl*, with its file's name when *use* is in another file."""
    pos, at = decl.pos, getattr(use, "pos", None)
    return f"{pos.file} line {pos.line}" if at is not None and at.file != pos.file \
        else f"line {pos.line}"


def _required(m: A.MethodDecl) -> int:
    return sum(1 for p in m.params if p.default is None
               and not any(a.name == "optional" for a in p.annotations))


def _signature(m: A.MethodDecl) -> str:
    from .printer import to_p4

    return to_p4(m).strip().removeprefix("extern ").rstrip(";")


class Checker:
    """Checks one program against *env* (raises :class:`P4Error` at the first fault)."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.scopes: list[dict[str, A.Node | None]] = [dict.fromkeys(env.values)]
        self.later: dict[str, A.Node] = {}       # names the enclosing block declares further down

    # -- scopes ---------------------------------------------------------------------------
    def declare(self, name: str, node: A.Node | None) -> None:
        self.scopes[-1][name] = node
        self.later.pop(name, None)

    def lookup(self, name: str) -> tuple[bool, A.Node | None]:
        for s in reversed(self.scopes):
            if name in s:
                return True, s[name]
        return False, None

    def resolve(self, n: A.Name) -> A.Node | None:
        found, node = self.lookup(n.name)
        if not found:
            later = self.later.get(n.name)
            hint = (f"'{n.name}' is declared at {_line_of(later, n)}, after this use: P4_16 "
                    f"requires a declaration before its use — move the declaration up"
                    if later is not None and later.pos else
                    f"declare '{n.name}' before using it")
            _err(n, f"{n.name}: declaration not found", hint)
        return node

    def _nested(self, params: tuple[A.Param, ...] = ()):
        scope: dict[str, A.Node | None] = {p.name: p for p in params}
        self.scopes.append(scope)
        return scope

    # -- declarations ---------------------------------------------------------------------
    def program(self, prog: A.Program) -> None:
        """*prog*'s declarations in order, those of each ``#include "file"`` in its place
        (a fault in an included file is refused at its line there, as p4c does)."""
        decls = in_place(prog.decls)
        self.later = {getattr(d, "name", ""): d for d in decls if hasattr(d, "name")}
        for d in decls:
            self.top(d)

    def top(self, d: A.Node) -> None:
        if isinstance(d, A.ControlDecl):
            self.control(d)
        elif isinstance(d, A.ParserDecl):
            self.parser(d)
        elif isinstance(d, (A.ConstDecl, A.VarDecl, A.Instance, A.ActionDecl)):
            self.local(d)
        elif isinstance(d, A.MethodDecl):
            self.declare(d.name, d)
        elif isinstance(d, A.FunctionDecl):
            self.declare(d.name, d)               # visible in its own body (p4c refuses the
            self._nested(d.params)                # recursion later)
            self.block(d.body, scoped=False)
            self.scopes.pop()

    def control(self, c: A.ControlDecl) -> None:
        self._block_decl(c.params + c.ctor_params, c.locals, lambda: self.block(c.apply))

    def parser(self, p: A.ParserDecl) -> None:
        self._block_decl(p.params, p.locals, lambda: [self.state(st) for st in p.states])

    def _block_decl(self, params: tuple[A.Param, ...], locals_: tuple[A.Node, ...],
                    body) -> None:
        """A control or parser: its parameters, its locals in order, then *body*."""
        outer = self.later
        self.later = {getattr(d, "name", ""): d for d in locals_}
        self._nested(params)
        for d in locals_:
            self.local(d)
        body()
        self.scopes.pop()
        self.later = outer

    def state(self, st: A.ParserState) -> None:
        self._nested()
        for s in st.stmts:
            self.stmt(s)
        if isinstance(st.transition, A.Select):
            for e in st.transition.exprs:
                self.expr(e)
            for case in st.transition.cases:
                for k in case.keys:
                    self.expr(k)
        self.scopes.pop()

    def local(self, d: A.Node) -> None:
        if isinstance(d, (A.VarDecl, A.ConstDecl)):
            init = d.init if isinstance(d, A.VarDecl) else d.value
            if init is not None:
                self.expr(init)
        elif isinstance(d, A.Instance):
            self.instance(d)
        elif isinstance(d, A.ActionDecl):
            self._nested(d.params)
            self.block(d.body, scoped=False)
            self.scopes.pop()
        elif isinstance(d, A.TableDecl):
            self.table(d)
        self.declare(d.name, d)  # type: ignore[attr-defined]

    def table(self, t: A.TableDecl) -> None:
        for k in t.keys:
            self.expr(k.expr)
            if k.match_kind not in self.env.match_kinds:
                _err(k, f"{k.match_kind}: match kind not declared by {self.env.kinds_from}",
                     f"declared: {', '.join(sorted(self.env.match_kinds))}")
        refs = list(t.actions) + [t.default_action] * (t.default_action is not None)
        refs += [e.action for e in t.entries or ()]
        for ref in refs:
            self.resolve(A.Name(ref.name, ref.pos))
            for a in ref.args or ():
                self.expr(a)
        for e in t.entries or ():
            for k in e.keys:
                self.expr(k)
        for p in t.properties:
            self.expr(p.value)

    # -- extern instances -----------------------------------------------------------------
    def instance(self, inst: A.Instance) -> None:
        for a in inst.args:
            if not (isinstance(a, A.Call) and isinstance(a.func, A.TypeName)):
                self.expr(a)
        t = inst.type
        ext = self.env.externs.get(t.name) if isinstance(t, A.NamedType) else None
        if ext is None:
            return
        if len(t.args) != len(ext.type_params):
            self._specialisation(inst, ext)
        binding = dict(zip(ext.type_params, t.args))
        ctors = [m for m in ext.methods if m.ret is None and m.name == ext.name]
        self.arguments(inst, f"{ext.name}(…) {inst.name}", ctors, inst.args, binding,
                       what="constructor")
        abstract = {m.name: m for m in ext.methods if m.abstract}
        body = {f.name: f for f in inst.body or ()}
        for name, m in abstract.items():
            if name not in body:
                _err(inst, f"{inst.name}: {ext.name} must implement its abstract method "
                           f"'{name}'", f"write `{type_p4(t)}(…) {inst.name} = {{ "
                                        f"{_signature(m)} {{ … }} }};`")
        for f in inst.body or ():
            m = abstract.get(f.name)
            if m is None:
                _err(f, f"{inst.name}.{f.name}: {ext.name} has no abstract method "
                        f"'{f.name}' to implement",
                     f"its abstract methods: {', '.join(abstract) or 'none'}")
            self._implements(inst, f, m, binding)
            self._nested(f.params)
            self.block(f.body, scoped=False)
            self.scopes.pop()

    def _specialisation(self, inst: A.Instance, ext: A.ExternDecl) -> NoReturn:
        t = inst.type
        msg = (f"{type_p4(t)}: Type {ext.name} has {len(ext.type_params)} type parameter(s), "
               f"but it is specialized with {len(t.args)}")
        hint = f"{ext.name}{'<' + ', '.join(ext.type_params) + '>' if ext.type_params else ''}"
        hint = f"the architecture declares {hint}"
        for how, other in self.env.other_forms.get(ext.name, []):
            if len(other.type_params) == len(t.args):
                form = f"<{', '.join(other.type_params)}>" if other.type_params else ""
                hint += f"; {ext.name}{form} needs {how}"
                break
        _err(inst, msg, hint)

    def _implements(self, inst: A.Instance, f: A.FunctionDecl, m: A.MethodDecl,
                    binding: dict[str, A.Node]) -> None:
        if not _required(m) <= len(f.params) <= len(m.params):
            _err(f, f"{inst.name}.{f.name}: {len(f.params)} parameter(s); the abstract method "
                    f"is {_signature(m)}")
        for p, q in zip(f.params, m.params):
            want = _subst(q.type, binding)
            if p.direction != q.direction or not self.same_type(p.type, want):
                _err(p, f"{inst.name}.{f.name}: parameter '{p.name}' is "
                        f"{p.direction} {type_p4(p.type)}; the abstract method's is "
                        f"{q.direction} {type_p4(want)}", f"declare it as {_signature(m)}")

    # -- statements -----------------------------------------------------------------------
    def block(self, b: A.Block, *, scoped: bool = True) -> None:
        if scoped:
            self._nested()
        outer = self.later
        self.later = {**outer, **{s.name: s for s in b.stmts
                                  if isinstance(s, (A.VarDecl, A.ConstDecl))}}
        for s in b.stmts:
            self.stmt(s)
        self.later = outer
        if scoped:
            self.scopes.pop()

    def stmt(self, s: A.Node) -> None:
        if isinstance(s, A.Block):
            self.block(s)
        elif isinstance(s, (A.VarDecl, A.ConstDecl)):
            self.local(s)
        elif isinstance(s, A.Assign):
            self.expr(s.lhs)
            self.expr(s.rhs)
            if isinstance(s.rhs, A.Call) and isinstance(self.type_of(s.rhs), A.VoidType):
                label = expr_p4(s.rhs.func)
                _err(s.rhs, f"{label} returns void: its result cannot be assigned",
                     f"call {label}(…) as a statement of its own")
        elif isinstance(s, A.CallStmt):
            self.expr(s.call)
        elif isinstance(s, A.If):
            self.expr(s.cond)
            self.stmt(s.then)
            if s.other is not None:
                self.stmt(s.other)
        elif isinstance(s, A.Switch):
            self.expr(s.expr)
            for c in s.cases:
                if c.body is not None:
                    self.block(c.body)
        elif isinstance(s, A.Return) and s.value is not None:
            self.expr(s.value)
        elif isinstance(s, A.For):
            for x in s.init:                      # p4c scopes them in the enclosing block
                self.stmt(x)
            self._nested()
            if s.cond is not None:
                self.expr(s.cond)
            self.stmt(s.body)
            for x in s.update:
                self.stmt(x)
            self.scopes.pop()
        elif isinstance(s, A.ForIn):
            self.expr(s.iterable)
            self._nested()
            self.declare(s.var.name, s.var)
            self.stmt(s.body)
            self.scopes.pop()

    # -- expressions ----------------------------------------------------------------------
    def expr(self, e: A.Node) -> None:
        if isinstance(e, A.Name):
            self.resolve(e)
        elif isinstance(e, A.StructExpr):
            for _, v in e.items:
                self.expr(v)
        elif isinstance(e, A.Member) and isinstance(e.expr, A.TypeName):
            self.type_member(e)
        elif isinstance(e, A.Call):
            self.call(e)
        else:
            for c in e.children():
                self.expr(c)

    def type_member(self, e: A.Member) -> None:
        owner = e.expr.name  # type: ignore[attr-defined]
        members = (tuple(sorted(self.env.errors)) if owner == "error"
                   else self.env.enums.get(owner))
        if members is not None and e.name not in members:
            _err(e, f"{owner}.{e.name}: {owner} has no member '{e.name}'",
                 f"its members: {', '.join(members)}")

    def call(self, e: A.Call) -> None:
        for a in e.args:
            self.expr(a)
        f = e.func
        if isinstance(f, A.TypeName):
            return
        if isinstance(f, A.Name):
            node = self.resolve(f)
            overloads = self.env.functions.get(f.name)
            if (node is None or isinstance(node, A.MethodDecl)) and overloads:
                self._type_args(e, f.name, overloads)
                self.arguments(e, f.name, list(overloads), e.args, {}, what="function")
            elif isinstance(node, (A.ActionDecl, A.FunctionDecl)):
                ret = node.ret if isinstance(node, A.FunctionDecl) else A.VoidType()
                what = "function" if isinstance(node, A.FunctionDecl) else "action"
                self.arguments(e, f.name, [A.MethodDecl(ret, node.name, node.params,
                                                        getattr(node, "type_params", ()))],
                               e.args, {}, what=what)
            return
        if not isinstance(f, A.Member):
            self.expr(f)
            return
        self.expr(f.expr)
        target = self.extern_of(f.expr)
        if target is None:
            return
        ext, binding, label = target
        methods = [m for m in ext.methods if m.name == f.name and m.ret is not None
                   and not m.abstract]
        if not methods:
            names = sorted({m.name for m in ext.methods if m.ret is not None and not m.abstract})
            _err(f, f"{label}.{f.name}: {ext.name} has no method '{f.name}'",
                 f"its methods: {', '.join(names) or 'none'}")
        self._type_args(e, f"{label}.{f.name}", methods)
        self.arguments(e, f"{label}.{f.name}", methods, e.args, binding, what="method")

    def _type_args(self, e: A.Call, label: str, methods) -> None:
        if e.type_args and not any(len(m.type_params) == len(e.type_args) for m in methods):
            n = methods[0].type_params
            _err(e, f"{label}: {len(e.type_args)} type argument(s), it takes {len(n)}",
                 f"declared as {_signature(methods[0])}")

    def extern_of(self, recv: A.Node) -> tuple[A.ExternDecl, dict, str] | None:
        """The extern *recv* is an instance (or a parameter) of, its type binding, its name."""
        if not isinstance(recv, A.Name):
            return None
        _, node = self.lookup(recv.name)
        t = node.type if isinstance(node, (A.Instance, A.Param)) else None
        if not isinstance(t, A.NamedType) or t.name not in self.env.externs:
            return None
        ext = self.env.externs[t.name]
        return ext, dict(zip(ext.type_params, t.args)), recv.name

    # -- arguments ------------------------------------------------------------------------
    def arguments(self, node: A.Node, label: str, overloads: list[A.MethodDecl],
                  args: tuple[A.Node, ...], binding: dict[str, A.Node], *, what: str) -> None:
        named = [a for a in args if isinstance(a, A.NamedArg)]
        if named:
            if len(named) != len(args):
                _err(named[0], f"{expr_p4(named[0])}: either all or none of the arguments of "
                               f"a call must be named (p4c)", "name every argument, or none")
            params = {p.name for m in overloads for p in m.params}
            for a in named:
                if a.name not in params:
                    _err(a, f"{label}: no parameter {a.name!r}",
                         f"its parameters: {', '.join(sorted(params)) or 'none'}")
            return
        fits = [m for m in overloads if _required(m) <= len(args) <= len(m.params)]
        if not fits:
            sigs = "; ".join(_signature(m) for m in overloads) or "none"
            counts = sorted({len(m.params) for m in overloads})
            _err(node, f"{label}: {len(args)} argument(s), but the {what} takes "
                       f"{' or '.join(map(str, counts))}", f"declared as: {sigs}")
        problems = []
        for m in fits:
            bad = self._mismatch(m, args, binding)
            if bad is None:
                return
            problems.append(bad)
        arg, msg = problems[0]
        _err(arg, f"{label}: {msg}", f"declared as: {'; '.join(_signature(m) for m in fits)}")

    def _mismatch(self, m: A.MethodDecl, args, binding) -> tuple[A.Node, str] | None:
        local = {k: v for k, v in binding.items() if k not in m.type_params}  # shadowed
        for p, a in zip(m.params, args):
            want = _subst(p.type, local)
            if isinstance(want, A.NamedType) and want.name in m.type_params:
                continue                                  # the method's own type parameter
            if isinstance(want, A.NamedType) and want.name in self.env.externs:
                ref = self.extern_of(a)              # an instance passed to a constructor
                if ref is None or ref[0].name != want.name:
                    return a, f"'{expr_p4(a)}' is not a {want.name} instance"
                if not all(self.same_type(x, y) for x, y in zip(want.args, ref[1].values())):
                    return a, (f"'{expr_p4(a)}' is a {ref[0].name}<"
                               f"{', '.join(type_p4(v) for v in ref[1].values())}>, "
                               f"not a {type_p4(want)}")
                continue
            got = self.type_of(a)
            if got is not None and not self.same_type(want, got):
                return a, (f"'{expr_p4(a)}' is a {type_p4(got)}, the parameter "
                           f"'{p.name}' a {type_p4(want)}")
            if p.direction in ("out", "inout") and not _lvalue(a):
                return a, (f"'{expr_p4(a)}' cannot be written (the parameter '{p.name}' is "
                           f"{p.direction})")
        return None

    # -- types ----------------------------------------------------------------------------
    def norm(self, t: A.Node | None) -> A.Node | None:
        """*t* with typedefs expanded; None for what cannot be told here."""
        for _ in range(8):
            if isinstance(t, A.NamedType) and not t.args and t.name in self.env.types:
                d = self.env.types[t.name]
                if isinstance(d, (A.HeaderDecl, A.StructDecl, A.EnumDecl)):
                    return t
                t = d
            else:
                break
        if isinstance(t, A.NamedType) and (t.name == "_" or t.name not in self.env.types
                                           and t.name not in self.env.externs):
            return None                                   # a type variable, or unknown
        return t

    def same_type(self, a: A.Node | None, b: A.Node | None) -> bool:
        a, b = self.norm(a), self.norm(b)
        if a is None or b is None:
            return True
        if isinstance(a, A.NamedType) and isinstance(b, A.NamedType):
            return a.name == b.name and len(a.args) == len(b.args) and all(
                self.same_type(x, y) for x, y in zip(a.args, b.args))
        return a == b

    def type_of(self, e: A.Node) -> A.Node | None:
        """The type of *e*, where it is plain (a declared name, a field, a cast …)."""
        if isinstance(e, A.Const):
            return A.BitType(e.width, e.signed) if e.width is not None else None
        if isinstance(e, A.BoolLit):
            return A.BoolType()
        if isinstance(e, A.Name):
            _, node = self.lookup(e.name)
            t = getattr(node, "type", None) if isinstance(
                node, (A.VarDecl, A.Param, A.ConstDecl)) else None
            return self.norm(t)
        if isinstance(e, A.Cast):
            return self.norm(e.type)
        if isinstance(e, A.Slice) and isinstance(e.hi, A.Const) and isinstance(e.lo, A.Const):
            return A.BitType(e.hi.value - e.lo.value + 1)
        if isinstance(e, A.Member):
            if isinstance(e.expr, A.TypeName):
                return A.NamedType(e.expr.name) if e.expr.name in self.env.enums else None
            return self._field(self.type_of(e.expr), e.name)
        if isinstance(e, A.Index):
            base = self.type_of(e.expr)
            return base.elem if isinstance(base, A.StackType) else None
        if isinstance(e, A.Binary):
            if e.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                return A.BoolType()
            left, right = self.type_of(e.left), self.type_of(e.right)
            if e.op == "++":
                ok = isinstance(left, A.BitType) and isinstance(right, A.BitType)
                return A.BitType(left.width + right.width) if ok else None  # type: ignore
            if e.op in ("<<", ">>"):
                return left
            return left if left is not None else right
        if isinstance(e, A.Unary):
            return A.BoolType() if e.op == "!" else self.type_of(e.expr)
        if isinstance(e, A.Ternary):
            return self.type_of(e.then) or self.type_of(e.other)
        if isinstance(e, A.Call) and isinstance(e.func, A.Member):
            return self._returns(e)
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            _, node = self.lookup(e.func.name)
            if isinstance(node, A.FunctionDecl) and not node.type_params:
                return self.norm(node.ret)
        return None

    def _returns(self, e: A.Call) -> A.Node | None:
        """What an extern method returns, when it has one non-generic overload."""
        f = e.func
        if f.name == "isValid":  # type: ignore[union-attr]
            return A.BoolType()
        target = self.extern_of(f.expr)  # type: ignore[union-attr]
        if target is None:
            return None
        ext, binding, _ = target
        name = f.name  # type: ignore[union-attr]
        methods = [m for m in ext.methods if m.name == name and m.ret is not None]
        if len(methods) != 1 or methods[0].type_params:
            return None
        return self.norm(_subst(methods[0].ret, binding))

    def _field(self, t: A.Node | None, name: str) -> A.Node | None:
        if isinstance(t, A.StackType):
            return t.elem if name in ("next", "last") else None
        if not isinstance(t, A.NamedType):
            return None
        d = self.env.types.get(t.name)
        if isinstance(d, (A.HeaderDecl, A.StructDecl)):
            for f in d.fields:
                if f.name == name:
                    return self.norm(f.type)
        return None


def _subst(t: A.Node | None, binding: dict[str, A.Node]) -> A.Node | None:
    if isinstance(t, A.NamedType):
        if not t.args and t.name in binding:
            return binding[t.name]
        if t.args:
            return A.NamedType(t.name, tuple(_subst(a, binding) for a in t.args))
    return t


def _lvalue(e: A.Node) -> bool:
    if isinstance(e, A.Name):
        return True
    if isinstance(e, (A.Member, A.Index, A.Slice)):
        return _lvalue(e.expr)
    return False
