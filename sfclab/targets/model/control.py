"""Statements, actions, tables and controls compiled to closures ``fn(p)``.

:class:`Compiler` extends the expression compiler with statements
(assignment, ``if``, ``switch`` on ``action_run``, ``exit``, ``return``,
local declarations), header and stack methods (``setValid`` zeroes a header
that was invalid and adds its bytes to the packet length, as BMv2's
``add_header`` does; ``push_front``/``pop_front`` follow P4_16), table
application with direct counters, action calls, nested control instances and
v1model's externs (:mod:`.calls`).  ``exit`` and ``return`` are exceptions;
every other statement is a plain call.
"""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.names import local_name, qualified_objects
from ...p4.printer import expr_p4
from ..traces.trace import nf_of
from .assign import AssignCompiler, seq
from .calls import ExternCalls, ExternObj
from .functions import FunctionCalls, FunctionObj, bind_args
from .statements import LoopCompiler
from .errors import ModelCompileError
from .parser_only import cursors_outside_parsers
from .exits import ExitSignal, copy_out, exit_points, mark_exit
from .expr import CE, NOCONST, ConstVal, DynHeader, ExprCompiler, Scope, wrap_fn
from .storage import HeaderRef, ScalarRef, StackRef, StructRef, default_value
from .table_compile import ActionObj, TableCompiler, TableObj
from .tables import ActionInfo
from .types import BOOL, Bits, BoolT, EnumT

__all__ = ["Compiler", "ExitSignal", "ReturnSignal", "PacketIO", "TableObj", "ActionObj",
           "ControlInst", "seq"]


class ReturnSignal(Exception):
    """``return``: ends the current action or control body."""


class PacketIO:
    """The ``packet_in`` / ``packet_out`` parameter of a parser or deparser."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


class ControlInst:
    """A control instantiated inside another (``inner() slot0;``), compiled at its apply.

    Applied with the same arguments everywhere, its parameters are those arguments;
    applied with different ones (``copy``), it has parameters of its own, which each
    apply copies the arguments into and out of (P4's copy-in/copy-out)."""

    __slots__ = ("decl", "path", "apply", "bound", "copy", "params", "ctor")

    def __init__(self, decl: A.ControlDecl, path: tuple[str, ...], copy: bool = False,
                 ctor: dict | None = None) -> None:
        self.decl, self.path, self.apply, self.bound = decl, path, None, None
        self.copy, self.params = copy, None
        #: constructor parameter -> its value (a constant, an instance)
        self.ctor = ctor or {}


def _apply_sites(decl: A.Node) -> dict[str, set[str]]:
    """Instance name -> the distinct argument lists ``inst.apply(…)`` is called with."""
    from ...p4.ast import walk

    out: dict[str, set[str]] = {}
    for n in walk(decl):
        if (isinstance(n, A.Call) and isinstance(n.func, A.Member) and n.func.name == "apply"
                and isinstance(n.func.expr, A.Name)):
            out.setdefault(n.func.expr.name, set()).add(", ".join(map(expr_p4, n.args)))
    return out


def _has(node: A.Node, kind: type) -> bool:
    from ...p4.ast import walk
    return any(isinstance(n, kind) for n in walk(node))


def _packet_io(prm: A.Param) -> bool:
    return isinstance(prm.type, A.NamedType) and prm.type.name in ("packet_in", "packet_out")


class Compiler(FunctionCalls, LoopCompiler, ExternCalls, TableCompiler, AssignCompiler,
               ExprCompiler):
    """Compiles a whole program's controls for one :class:`~.switch.ModelSwitch`."""

    def __init__(self, sw, env, layout, prog: A.Program) -> None:
        super().__init__(env)
        self.sw = sw
        #: the exit points of the action being compiled (:mod:`.exits`)
        self._exit_keep: dict[int, frozenset] = {}
        self.layout = layout
        self.qnames = {(o.path, id(o.decl)): o.name for o in qualified_objects(prog)}
        self.global_scope = Scope()
        self._tmp = 0
        self._sites: dict[str, set[str]] = {}     # control instances' apply arguments
        self._path: tuple[str, ...] = ()          # the control being compiled
        self.outside_parser = cursors_outside_parsers(prog)

    # -- statements ----------------------------------------------------------------------
    def block(self, stmts, sc: Scope, where: str) -> Callable:
        inner = sc.child()
        return seq([self.stmt(s, inner, where) for s in stmts])

    def stmt(self, s: A.Node, sc: Scope, where: str) -> Callable | None:
        if isinstance(s, A.Block):
            return self.block(s.stmts, sc, where)
        if isinstance(s, A.Assign):
            lv = self.lvalue(s.lhs, sc)
            want = lv.type if isinstance(lv, ScalarRef) else None
            rhs = self.expr(s.rhs, sc, want)
            self.check_width(want, rhs, s.rhs)
            return self.store(lv, rhs)
        if isinstance(s, A.If):
            return self._if(s, sc, where)
        if isinstance(s, A.CallStmt):
            f = self.call_stmt(s.call, sc, where)
            keep = self._exit_keep.get(id(s))
            return f if keep is None else mark_exit(f, keep)
        if isinstance(s, A.Switch):
            return self._switch(s, sc, where)
        if isinstance(s, A.VarDecl):
            return self.var_decl(s, sc)
        if isinstance(s, A.ConstDecl):
            t = self.env.resolve(s.type)
            sc.names[s.name] = ConstVal(self.const_value(s.value, sc, t), t)
            return None
        if isinstance(s, A.Exit):
            keep = self._exit_keep.get(id(s))

            def do_exit(p):
                sig = ExitSignal()
                sig.keep = keep
                raise sig
            return do_exit
        if isinstance(s, A.Return) and self.in_function():
            return self.function_return(s, sc)
        if isinstance(s, A.Return):
            def do_return(p):
                raise ReturnSignal()
            return do_return
        if isinstance(s, A.Empty):
            return None
        if isinstance(s, (A.For, A.ForIn, A.Break, A.Continue)):
            return self.loop_stmt(s, sc, where)
        raise self.error(f"unsupported statement {type(s).__name__}", s)

    def const_value(self, e: A.Node, sc: Scope, t):
        c = self.expr(e, sc, t if isinstance(t, Bits) else None)
        if c.const is NOCONST:
            raise self.error(f"{expr_p4(e)} is not a compile-time constant", e)
        return self.cast(c, t).const if isinstance(t, (Bits, BoolT)) else c.const

    def var_decl(self, d: A.VarDecl, sc: Scope) -> Callable | None:
        t = self.env.resolve(d.type)
        self._tmp += 1
        ref = self.layout.build(t, f"{d.name}#{self._tmp}")
        sc.names[d.name] = ref
        if d.init is None:
            return None
        init = self.expr(d.init, sc, t if isinstance(t, Bits) else None)
        self.check_width(t, init, d.init)
        return self.store(ref, init)

    def _if(self, s: A.If, sc: Scope, where: str) -> Callable:
        c = self.expr(s.cond, sc)
        fc = c.fn
        then = self.stmt(s.then, sc.child(), where) or (lambda p: None)
        other = self.stmt(s.other, sc.child(), where) if s.other is not None else None
        text = expr_p4(s.cond)
        yes, no = ("condition", text, True), ("condition", text, False)
        if other is None:
            def if1(p):
                if fc(p):
                    p.tr.append(yes)
                    then(p)
                else:
                    p.tr.append(no)
            return if1

        def if2(p):
            if fc(p):
                p.tr.append(yes)
                then(p)
            else:
                p.tr.append(no)
                other(p)
        return if2

    def _switch(self, s: A.Switch, sc: Scope, where: str) -> Callable:
        e = s.expr
        if not (isinstance(e, A.Member) and e.name == "action_run" and isinstance(e.expr, A.Call)):
            return self.value_switch(s, sc, where)
        tobj = self._table_of(e.expr, sc)
        apply = tobj.apply
        cases: dict[str, Callable] = {}
        default = None
        pending: list[str] = []
        for case in s.cases:
            pending.append(case.label)
            if case.body is None:
                continue
            body = self.block(case.body.stmts, sc, where)
            for label in pending:
                if label == "default":
                    default = body
                    continue
                a = sc.get(label)
                if not isinstance(a, ActionObj):
                    raise self.error(f"{label} is not an action of {tobj.table.name}", case)
                cases[a.info.name] = body
            pending = []

        def switch(p):
            _, a = apply(p)
            body = cases.get(a.name, default)
            if body is not None:
                body(p)
        return switch

    def _table_of(self, call: A.Call, sc: Scope) -> TableObj:
        f = call.func
        if isinstance(f, A.Member) and f.name == "apply":
            t = self.path(f.expr, sc)
            if isinstance(t, TableObj):
                return t
        raise self.error(f"{expr_p4(call)} is not a table application", call)

    def call_value(self, e: A.Node, sc: Scope) -> CE:
        f = self.user_function(e, sc)
        if f is not None:
            return self.function_value(f, e, sc)
        if isinstance(e, A.Member) and e.name in ("hit", "miss") and isinstance(e.expr, A.Call):
            apply = self._table_of(e.expr, sc).apply
            if e.name == "hit":
                return CE(lambda p: apply(p)[0], BOOL)
            return CE(lambda p: not apply(p)[0], BOOL)
        if isinstance(e, A.Call) and isinstance(e.func, A.Member):
            base = self.path(e.func.expr, sc)
            if isinstance(base, PacketIO) and e.func.name == "lookahead":
                return self.lookahead(e)
        if isinstance(e, A.Member) and isinstance(e.expr, A.Call):
            return self._member_of_result(e, sc)
        raise self.error(f"cannot use {expr_p4(e)} as a value", e)

    def _member_of_result(self, e: A.Member, sc: Scope) -> CE:
        """``f(x).field``: a field of the header or struct a call gives."""
        whole = self.expr(e.expr, sc)
        ref = whole.ref
        sub = (ref.fields.get(e.name) if isinstance(ref, HeaderRef) else
               ref.members.get(e.name) if isinstance(ref, StructRef) else None)
        if sub is None:
            raise self.error(f"cannot use {expr_p4(e)} as a value", e)
        part = self._from_ref(sub, e)
        pre = whole.pre
        if pre is None:
            return part
        if part.fn is None:
            return CE(None, part.t, ref=part.ref, pre=pre)
        f = part.fn

        def value(p):
            pre(p)
            return f(p)
        return CE(value, part.t)

    def lookahead(self, e: A.Call) -> CE:
        raise self.error("lookahead is only supported in parsers", e)

    # -- calls ---------------------------------------------------------------------------
    def call_stmt(self, e: A.Call, sc: Scope, where: str) -> Callable:
        f = e.func
        if isinstance(f, A.Member):
            base = self.path(f.expr, sc)
            m = f.name
            if isinstance(base, HeaderRef) or isinstance(base, DynHeader):
                return self._header_method(base, m, e)
            if isinstance(base, StackRef):
                return self._stack_method(base, m, e, sc)
            if isinstance(base, TableObj) and m == "apply":
                apply = base.apply
                return lambda p: apply(p)
            if isinstance(base, ControlInst) and m == "apply":
                return self.instance_apply(base, e, sc)
            if isinstance(f.expr, A.TypeName) and m == "apply":
                return self.type_apply(e, sc, where)
            if isinstance(base, ExternObj):
                return self.method_call(base, m, e, sc)
            if isinstance(base, PacketIO):
                return self.packet_method(base, m, e, sc)
            raise self.error(f"cannot call {expr_p4(f)}", e)
        if isinstance(f, A.Name):
            target = sc.get(f.name)
            if isinstance(target, ActionObj):
                return self.action_call(target, e, sc)
            if isinstance(target, FunctionObj):
                return self.function_call(target, e, sc)[0]
            if f.name == "verify":
                return self.verify(e, sc)
            return self.extern_call(f.name, e, sc, where)
        raise self.error(f"cannot call {expr_p4(f)}", e)

    def packet_method(self, io: PacketIO, m: str, e: A.Call, sc: Scope) -> Callable:
        raise self.error(f"packet.{m} is not supported here", e)

    def verify(self, e: A.Call, sc: Scope) -> Callable:
        raise self.error("verify() is only allowed in parsers", e)

    def _header_method(self, h, m: str, e: A.Call) -> Callable:
        if isinstance(h, DynHeader):
            base_fn = h.base_fn()
            t = h.stack.type.elem
        else:
            b0 = h.base
            base_fn = lambda p: b0  # noqa: E731
            t = h.type
        n, nbytes = len(t.fields), t.nbytes
        zeros = [default_value(ft) for _, ft in t.fields]
        siblings = h.siblings if isinstance(h, HeaderRef) else ()
        if m == "setValid":
            def set_valid(p):
                b = base_fn(p)
                if b is not None:
                    v = p.v
                    for s in siblings:         # the other members of its header_union
                        v[s] = False
                    if not v[b]:
                        v[b + 1:b + 1 + n] = zeros
                        v[b] = True
                        p.plen += nbytes
            return set_valid
        if m == "setInvalid":
            def set_invalid(p):
                b = base_fn(p)
                if b is not None and p.v[b]:
                    p.v[b] = False
                    p.plen -= nbytes
            return set_invalid
        if m == "isValid":
            return lambda p: None
        raise self.error(f"headers have no method {m}", e)

    def _stack_method(self, st: StackRef, m: str, e: A.Call, sc: Scope) -> Callable:
        count = self.const_int(e.args[0], sc) if e.args else 1
        size, stride, b0, nb = st.type.size, st.stride, st.base + 1, st.base
        if m == "push_front":       # as BMv2 does it: swaps, then the first `count` invalid
            def push(p):
                v = p.v
                k = min(count, size)
                for i in range(size - 1, k - 1, -1):
                    a, b = b0 + i * stride, b0 + (i - k) * stride
                    v[a:a + stride], v[b:b + stride] = v[b:b + stride], v[a:a + stride]
                for i in range(k):
                    v[b0 + i * stride] = False
                v[nb] = min(size, v[nb] + count)
            return push
        if m == "pop_front":        # swaps, then the last `count` invalid
            def pop(p):
                v = p.v
                k = min(count, size)
                for i in range(size - k):
                    a, b = b0 + i * stride, b0 + (i + k) * stride
                    v[a:a + stride], v[b:b + stride] = v[b:b + stride], v[a:a + stride]
                for i in range(size - k, size):
                    v[b0 + i * stride] = False
                v[nb] = max(0, v[nb] - count)
            return pop
        raise self.error(f"header stacks have no method {m}", e)

    def action_call(self, a: ActionObj, e: A.Call, sc: Scope) -> Callable:
        decl, fn, info = a.decl, a.info.fn, a.info
        args = bind_args(decl.params, e.args, f"action {info.local}", self.error, e)
        if any(x is None for x in args):        # an @optional parameter left out
            raise self.error(f"action {info.local} takes {len(decl.params)} argument(s)", e)
        ins, outs, before = [], [], []
        for prm, arg, slot in zip(decl.params, args, a.slots):
            if not isinstance(slot, ScalarRef):          # a header or struct: copied
                ins.append(CE(lambda p: None, None, const=None))
                back: list = []
                self.copy_argument(prm, arg, slot, sc, before, back)
                outs += [(prm.name, f) for f in back]
                continue
            if prm.direction in ("", "in"):
                ins.append(self.expr(arg, sc, slot.type if isinstance(slot.type, Bits) else None))
            else:
                if prm.direction == "inout":
                    ins.append(self.expr(arg, sc, slot.type))
                else:
                    ins.append(CE(lambda p, s=slot.slot: p.v[s], slot.type))
                outs.append((prm.name, self.store(self.lvalue(arg, sc), self._from_ref(slot, arg))))
        wraps = [(wrap_fn(s.type) if isinstance(s, ScalarRef) else None) or (lambda x: x)
                 for s in a.slots]
        readers = [c.fn for c in ins]
        copy_in = seq(before) if any(f is not None for f in before) else None
        if all(c.const is not NOCONST for c in ins):
            args = tuple(w(c.const) for w, c in zip(wraps, ins))

            def call_const(p):
                p.tr.append(("action", info, args))
                fn(p, args)
            call = call_const
        else:
            def call(p):
                args = tuple([w(r(p)) for w, r in zip(wraps, readers)])
                p.tr.append(("action", info, args))
                fn(p, args)
        if copy_in is not None:
            return seq([copy_in, copy_out(call, outs)])
        return copy_out(call, outs)

    def _may_exit(self, call: A.Call, sc: Scope, seen: frozenset = frozenset()) -> bool:
        """Whether *call* calls an action whose body has an ``exit`` (or calls one that does)."""
        a = sc.get(call.func.name) if isinstance(call.func, A.Name) else None
        if not isinstance(a, ActionObj) or a.decl.name in seen:
            return False
        seen = seen | {a.decl.name}
        return any(isinstance(n, A.Exit) or (isinstance(n, A.CallStmt) and
                                              self._may_exit(n.call, sc, seen))
                   for n in A.walk(a.decl.body))

    def _const_cond(self, e: A.Node):
        """A condition's value when it is a compile-time constant, else None."""
        try:
            c = self.expr(e, self.global_scope)
        except ModelCompileError:
            return None
        return bool(c.const) if c.const is not NOCONST else None

    # -- declarations --------------------------------------------------------------------
    def compile_action(self, d: A.ActionDecl, sc: Scope, qname: str) -> ActionObj:
        inner = sc.child()
        slots = []
        params = []
        for prm in d.params:
            t = self.env.resolve(prm.type)
            ref = self.layout.build(t, f"{qname}.{prm.name}")
            if not isinstance(ref, ScalarRef) and not prm.direction:
                raise self.error(f"action parameter {prm.name} must be a scalar: the control "
                                 f"plane gives a directionless parameter's value", prm)
            inner.names[prm.name] = ref
            slots.append(ref)
            w = t.width if isinstance(t, Bits) else 1 if isinstance(t, BoolT) else \
                t.underlying.width if isinstance(t, EnumT) and t.underlying else 32
            params.append((prm.name, w))
        outs = [q.name for q in d.params if q.direction in ("out", "inout")]
        outer, self._exit_keep = self._exit_keep, exit_points(
            d.body.stmts, outs, self._const_cond, lambda call: self._may_exit(call, sc)
        ) if outs else {}
        try:
            body = self.block(d.body.stmts, inner, f"action {qname}")
        finally:
            self._exit_keep = outer
        if _has(d.body, A.Return):
            raw = body

            def body(p):
                try:
                    raw(p)
                except ReturnSignal:
                    pass
        scalar = [isinstance(r, ScalarRef) for r in slots]
        if not all(scalar):           # a header or struct argument is copied in by the call
            idx = [i for i, k in enumerate(scalar) if k]
            ss = [slots[i].slot for i in idx]
            bools = [isinstance(slots[i].type, BoolT) for i in idx]
            run = body

            def fn(p, args):
                v = p.v
                for s, i, b in zip(ss, idx, bools):
                    v[s] = bool(args[i]) if b else args[i]
                run(p)
            return ActionObj(ActionInfo(qname, d.name, params, fn), d, slots)
        ss = [r.slot for r in slots]
        bools = [isinstance(r.type, BoolT) for r in slots]
        if not ss:
            fn = lambda p, args: body(p)  # noqa: E731
        elif len(ss) == 1 and not bools[0]:
            s0 = ss[0]

            def fn(p, args):
                p.v[s0] = args[0]
                body(p)
        else:
            def fn(p, args):
                v = p.v
                for s, a, b in zip(ss, args, bools):
                    v[s] = bool(a) if b else a
                body(p)
        info = ActionInfo(qname, d.name, params, fn)
        return ActionObj(info, d, slots)

    def compile_locals(self, decls, sc: Scope, path: tuple[str, ...]) -> list[Callable]:
        """Bind a control's local declarations in *sc*; returns the initialisers."""
        inits = []
        controls = {c.name: c for c in self.sw.program.controls()}
        controls.update((q.name, q) for q in self.sw.program.find(A.ParserDecl))
        for d in decls:
            if isinstance(d, A.ConstDecl):
                t = self.env.resolve(d.type)
                sc.names[d.name] = ConstVal(self.const_value(d.value, sc, t), t)
            elif isinstance(d, A.VarDecl):
                f = self.var_decl(d, sc)
                if f is not None:
                    inits.append(f)
            elif isinstance(d, A.Instance):
                tname = d.type.name if isinstance(d.type, A.NamedType) else ""
                if tname in controls:
                    multi = len(self._sites.get(d.name, ())) > 1
                    decl = controls[tname]
                    sc.names[d.name] = ControlInst(decl, (*path, d.name), multi,
                                                   self._ctor_args(decl, d.args, sc, d))
                else:
                    qn = self.qnames.get((path, id(d)), ".".join((*path, local_name(d))))
                    sc.names[d.name] = self.make_extern(d, qn)
            elif isinstance(d, A.ActionDecl):
                qn = self.qnames.get((path, id(d)), ".".join((*path, local_name(d))))
                a = self.compile_action(d, sc, qn)
                sc.names[d.name] = a
                self.sw.actions[qn] = a.info
            elif isinstance(d, A.TableDecl):
                qn = self.qnames.get((path, id(d)), ".".join((*path, local_name(d))))
                sc.names[d.name] = self.compile_table(d, sc, qn)
        return inits

    def control_body(self, decl: A.ControlDecl, path: tuple[str, ...], bindings: dict) -> Callable:
        """A control's apply block (locals initialised first) as one closure."""
        sc = Scope(self.global_scope, dict(bindings))
        self._sites = _apply_sites(decl)
        outer, self._path = self._path, path
        try:
            inits = self.compile_locals(decl.locals, sc, path)
            body = seq(inits + [self.block(decl.apply.stmts, sc, f"control {'.'.join(path)}")])
        finally:
            self._path = outer
        if _has(decl.apply, A.Return):
            raw = body

            def body(p):
                try:
                    raw(p)
                except ReturnSignal:
                    pass
        return body

    def instance_apply(self, inst: ControlInst, e: A.Call, sc: Scope) -> Callable:
        params = inst.decl.params
        if len(e.args) != len(params):
            raise self.error(f"{inst.decl.name}.apply takes {len(params)} argument(s)", e)
        if inst.copy:
            return self._apply_copying(inst, e, sc)
        bindings, copies = {}, []
        for prm, arg in zip(params, e.args):
            r = self.path(arg, sc)
            if isinstance(r, (ScalarRef, HeaderRef, StructRef, StackRef, PacketIO)):
                bindings[prm.name] = r
            else:
                t = self.env.resolve(prm.type)
                ref = self.layout.build(t, f"{'.'.join(inst.path)}.{prm.name}")
                bindings[prm.name] = ref
                copies.append(self.store(ref, self.expr(arg, sc, t if isinstance(t, Bits) else None)))
        key = tuple(sorted((k, id(v)) for k, v in bindings.items()))
        if inst.apply is None:
            inst.apply, inst.bound = self.instance_body(inst, bindings), key
        elif inst.bound != key:
            raise self.error(f"control instance {'.'.join(inst.path)} is applied with different "
                             f"arguments in two places; the model supports one binding", e)
        return seq(copies + [self._traced(inst)])

    def _traced(self, inst: ControlInst) -> Callable:
        body = inst.apply
        nf = nf_of(inst.path[-1])
        if nf is None:
            return body

        def run_nf(p):
            p.tr.append(("nf", nf))
            body(p)
        return run_nf

    def _apply_copying(self, inst: ControlInst, e: A.Call, sc: Scope) -> Callable:
        """``inst.apply(args)`` of an instance applied with different arguments elsewhere."""
        if inst.params is None:
            inst.params = {}
            for prm in inst.decl.params:
                t = self.env.resolve(prm.type) if not _packet_io(prm) else None
                inst.params[prm.name] = (None if t is None else
                                         self.layout.build(t, f"{'.'.join(inst.path)}.{prm.name}"))
        before, after, bindings = [], [], {}
        for prm, arg in zip(inst.decl.params, e.args):
            ref = inst.params[prm.name]
            if ref is None:                          # packet_in / packet_out: passed on
                bindings[prm.name] = self.path(arg, sc)
                continue
            bindings[prm.name] = ref
            self.copy_argument(prm, arg, ref, sc, before, after)
        if inst.apply is None:
            inst.apply = self.instance_body(inst, bindings)
        return seq(before + [self._traced(inst)] + after)

    def instance_body(self, inst: ControlInst, bindings: dict) -> Callable:
        """The body an instance's apply runs (a control's; a parser's in parsers)."""
        if not isinstance(inst.decl, A.ControlDecl):
            raise self.error(f"{inst.decl.name} is a parser: it is applied in parser states",
                             inst.decl)
        return self.control_body(inst.decl, inst.path, {**inst.ctor, **bindings})

    def _ctor_args(self, decl, args: tuple[A.Node, ...], sc: Scope, where: A.Node) -> dict:
        """A control's constructor parameters bound to the instance's arguments: an instance
        (``C2(c1) c2;``) or a compile-time constant."""
        params = getattr(decl, "ctor_params", ())
        if len(args) > len(params):
            raise self.error(f"{decl.name} takes {len(params)} constructor argument(s), "
                             f"got {len(args)}", where)
        args = bind_args(params, args, decl.name, self.error, where)   # named, defaults
        if any(a is None for a in args):
            raise self.error(f"{decl.name} takes {len(params)} constructor argument(s)", where)
        out: dict = {}
        for prm, arg in zip(params, args):
            obj = sc.get(arg.name) if isinstance(arg, A.Name) else None
            if isinstance(obj, (ControlInst, ExternObj)):
                out[prm.name] = obj
                continue
            t = self.env.resolve(prm.type)
            out[prm.name] = ConstVal(self.const_value(arg, sc, t), t)
        return out

    def type_apply(self, e: A.Call, sc: Scope, where: str) -> Callable:
        """``C.apply(args)``: a control (or parser) applied by its type, as if instantiated
        right there without constructor arguments."""
        name = e.func.expr.name  # type: ignore[union-attr]
        decl = next((c for c in self.sw.program.controls() if c.name == name), None) or \
            next((q for q in self.sw.program.find(A.ParserDecl) if q.name == name), None)
        if decl is None:
            raise self.error(f"{name} is neither a control nor a parser", e)
        self._tmp += 1
        inst = ControlInst(decl, (*self._path, name), True)
        return self.instance_apply(inst, e, sc)

