"""P4 expressions to Python closures ``fn(p) -> value``.

:class:`ExprCompiler` turns each AST expression once into a :class:`CE`: the
closure, its static type, and — when it is one — the slot it reads or the
constant it is, which lets the operators specialise (``p.v[3] + 1`` is one
closure, not three).  Arithmetic on ``bit<W>`` wraps modulo ``2**W``;
``int<W>`` wraps in two's complement; untyped literals take the type of the
other operand.  Paths (``hdr.mpls[i].label``) resolve to storage
(:mod:`.storage`), or to a :class:`DynHeader` when a stack index is only
known at run time.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .errors import ModelCompileError
from .parser_only import cursor_outside_parser
from .refusal import refusal
from .storage import HeaderRef, ScalarRef, StackRef, StructRef, scalars
from .types import BOOL, ERROR, INT, STRING, Bits, BoolT, EnumT, TupleT, Type, UnionT

__all__ = ["CE", "NOCONST", "INVALID", "Scope", "ConstVal", "DynHeader", "ExprCompiler", "wrap_fn",
           "to_unsigned"]

NOCONST = object()


class CE:
    """A compiled expression: ``fn(p)``, its type, and what it is when simple."""

    __slots__ = ("fn", "t", "slot", "const", "ref", "pre")

    def __init__(self, fn, t, slot=None, const=NOCONST, ref=None, pre=None) -> None:
        self.fn, self.t, self.slot, self.const, self.ref = fn, t, slot, const, ref
        #: for a compound value a call computes (a function returning a header): the call
        self.pre = pre


def _chain(fns: tuple[Callable, ...], op: str) -> Callable:
    """``bool(f1(p) and f2(p) and …)`` (or ``or``) as one generated function; an operand
    that compares a slot or a value with a constant (tagged ``cmp``) is written inline."""
    env: dict = {}
    terms = []
    for i, f in enumerate(fns):
        tag = getattr(f, "cmp", None)
        if tag is None:
            env[f"F{i}"] = f
            terms.append(f"F{i}(p)")
            continue
        text, inner, c = tag
        env[f"C{i}"] = c
        if inner is None:
            terms.append(text.format(f"C{i}"))
        else:
            env[f"F{i}"] = inner
            terms.append(text.format(f"F{i}", f"C{i}"))
    body = f" {op} ".join(f"({t})" for t in terms)
    load = "    v = p.v\n" if "v[" in body else ""
    exec(f"def chain(p):\n{load}    return bool({body})\n", env)  # noqa: S102 - generated
    return env["chain"]


class ConstVal:
    """A named constant (``const bit<16> X = 0x800;``)."""

    __slots__ = ("value", "type")

    def __init__(self, value, t) -> None:
        self.value, self.type = value, t


class Scope:
    """Names visible at one point: a dict chained to its parent."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: Scope | None = None, names: dict | None = None) -> None:
        self.names = names if names is not None else {}
        self.parent = parent

    def get(self, name: str):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def child(self) -> Scope:
        return Scope(self)


class DynHeader:
    """A stack element whose index is computed per packet (``s[i]``, ``s.next``, ``s.last``)."""

    __slots__ = ("stack", "idx", "what")

    def __init__(self, stack: StackRef, idx: Callable, what: str) -> None:
        self.stack, self.idx, self.what = stack, idx, what

    def base_fn(self) -> Callable:
        b0, stride, size, idx = self.stack.base + 1, self.stack.stride, self.stack.type.size, self.idx
        if self.what == "index":
            path = self.stack.path

            def checked(p):
                i = idx(p)
                if 0 <= i < size:
                    return b0 + i * stride
                # P4_16: an out-of-range read is undefined, a write does nothing.  BMv2
                # (1.15) stops with std::out_of_range where p4c leaves such an access in
                # the program; it often removes it (a copy-in and copy-out of the same
                # field), and the programs BMv2 passes never reach one
                p.tr.append(("note", f"{path}[{i}] is out of the stack's bounds (size "
                                     f"{size}): read as 0, not written"))
                return None
            return checked

        def base(p):
            i = idx(p)
            return b0 + i * stride if 0 <= i < size else None
        return base

    def field_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self.stack.type.elem.fields):
            if n == name:
                return i + 1
        raise ModelCompileError(f"header {self.stack.type.elem.name} has no field {name!r}")

    def field_type(self, name: str) -> Type:
        return self.stack.type.elem.fields[self.field_index(name) - 1][1]


def to_unsigned(x: int, w: int) -> int:
    return x & ((1 << w) - 1)


def wrap_fn(t: Type) -> Callable[[int], int] | None:
    """A function putting an int into *t*'s range (None when nothing to do)."""
    if not isinstance(t, Bits) or t.width == 0:
        return None
    m = t.mask
    if not t.signed:
        return lambda x: x & m
    h = 1 << (t.width - 1)
    return lambda x: ((x + h) & m) - h


def _bits_name(t: Bits) -> str:
    return f"{'int' if t.signed else 'bit'}<{t.width}>"


def _const(value, t) -> CE:
    return CE(lambda p: value, t, const=value)


#: ``{#}``: the value of an invalid header or header union.
INVALID = object()
#: The size methods of a header (constants: a varbit field counts 0 in min, its most in max).
_SIZES = {"minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}

_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_,
          "|": operator.or_, "^": operator.xor}
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
        "<=": operator.le, ">=": operator.ge}


class ExprCompiler:
    """Compiles expressions in a :class:`Scope`; subclasses add statements and calls."""

    #: ids of the stack cursors (``.next``, ``.last``, ``.lastIndex``) written outside a
    #: parser (:mod:`.parser_only`; the compiler sets them)
    outside_parser: frozenset[int] = frozenset()

    def __init__(self, env) -> None:
        self.env = env

    # -- hooks for subclasses ------------------------------------------------------------
    def call_value(self, e: A.Call, sc: Scope) -> CE:
        raise ModelCompileError(f"cannot call {expr_p4(e.func)} in an expression here")

    def error(self, msg: str, node: A.Node | None = None, *, hint: str = "") -> ModelCompileError:
        """The refusal *msg* of *node*: its place, its line with a caret, *hint*."""
        return refusal(msg, node, hint=hint)

    def check_width(self, t, ce: CE, node: A.Node | None) -> None:
        """p4c's refusal of an implicit conversion where a value of type *t* is stored: a
        run-time ``bit<W>`` value into a ``bit<V>`` (V != W; P4 never widens nor narrows
        without a cast) or into a ``bool``.  Constants are let through (their type here
        may be looser than p4c's)."""
        ct = ce.t
        if ce.const is not NOCONST or not isinstance(ct, Bits) or not ct.width:
            return
        if isinstance(t, BoolT) or (isinstance(t, Bits) and t.width and t.width != ct.width):
            want = _bits_name(t) if isinstance(t, Bits) else "bool"
            raise self.error(f"a {_bits_name(ct)} value where a {want} is wanted: "
                             f"{expr_p4(node)} (p4c refuses it: P4 converts widths only with a "
                             f"cast, ({want})(…))", node)

    # -- paths -------------------------------------------------------------------------------
    def path(self, e: A.Node, sc: Scope):
        """The storage (or other named object) an expression denotes, or None."""
        if isinstance(e, A.Name):
            return sc.get(e.name)
        if isinstance(e, A.Member):
            base = self.path(e.expr, sc)
            if isinstance(base, (HeaderRef, StructRef)):
                sub = base.fields.get(e.name) if isinstance(base, HeaderRef) else base.members.get(e.name)
                if sub is None:
                    raise self.error(f"{base.path} has no field {e.name!r}", e)
                return sub
            if isinstance(base, StackRef):
                if id(e) in self.outside_parser:
                    raise cursor_outside_parser(e)
                if e.name == "next":
                    b = base.base
                    return DynHeader(base, lambda p: p.v[b], "next")
                if e.name == "last":
                    b = base.base
                    return DynHeader(base, lambda p: p.v[b] - 1, "last")
                return None
            if isinstance(base, DynHeader):
                return (base, e.name)
            return None
        if isinstance(e, A.Index):
            base = self.path(e.expr, sc)
            if isinstance(base, StructRef) and isinstance(base.type, TupleT):
                return self._tuple_element(base, e, sc)
            if not isinstance(base, StackRef):
                return None
            idx = self.expr(e.index, sc)
            if idx.const is not NOCONST:
                if not 0 <= idx.const < base.type.size:
                    raise self.error(f"index {idx.const} is out of {base.path}'s bounds", e)
                return base.elems[idx.const]
            return DynHeader(base, idx.fn, "index")
        return None

    def _tuple_element(self, base: StructRef, e: A.Index, sc: Scope):
        """``t[i]`` of a tuple: its element *i*, a compile-time constant within its size."""
        i = self.const_int(e.index, sc)
        if not 0 <= i < len(base.members):
            raise self.error(f"index {i} is out of the tuple {base.path}'s "
                             f"{len(base.members)} elements", e)
        return base.members[str(i)]

    # -- expressions -------------------------------------------------------------------------
    def expr(self, e: A.Node, sc: Scope, want: Type | None = None) -> CE:
        m = getattr(self, "_e_" + type(e).__name__, None)
        if m is None:
            raise self.error(f"unsupported expression {expr_p4(e)}", e)
        ce = m(e, sc, want)
        if want is not None and isinstance(want, Bits) and want.width and ce.t == INT:
            return self.cast(ce, want)
        return ce

    def _e_Const(self, e: A.Const, sc, want):
        if e.width is not None:
            t = Bits(e.width, e.signed)
            return _const(wrap_fn(t)(e.value), t)
        return _const(e.value, INT)

    def _e_BoolLit(self, e, sc, want):
        return _const(e.value, BOOL)

    def _e_StringLit(self, e, sc, want):
        return _const(e.value, STRING)

    def _e_Name(self, e: A.Name, sc, want):
        r = sc.get(e.name)
        return self._from_ref(r, e)

    def _from_ref(self, r, e):
        if isinstance(r, ScalarRef):
            s = r.slot
            return CE(lambda p: p.v[s], r.type, slot=s, ref=r)
        if isinstance(r, ConstVal):
            return _const(r.value, r.type)
        if isinstance(r, (HeaderRef, StructRef, StackRef)):
            return CE(None, getattr(r, "type", None), ref=r)
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], DynHeader):
            dh, name = r
            fi, base = dh.field_index(name), dh.base_fn()

            def dyn(p):
                b = base(p)
                return p.v[b + fi] if b is not None else 0
            return CE(dyn, dh.field_type(name))
        if r is None:
            raise self.error(f"unknown name {expr_p4(e)!r}", e)
        return CE(None, None, ref=r)

    def _e_Member(self, e: A.Member, sc, want):
        if isinstance(e.expr, A.TypeName):
            return self._type_member(e)
        if isinstance(e.expr, A.Call):
            return self.call_value(e, sc)       # t.apply().hit / .miss
        r = self.path(e, sc)
        if r is None:
            base = self.path(e.expr, sc)
            if isinstance(base, StackRef):
                if e.name == "size":
                    return _const(base.type.size, Bits(32))
                if e.name == "lastIndex":
                    if id(e) in self.outside_parser:
                        raise cursor_outside_parser(e)
                    b = base.base
                    return CE(lambda p: (p.v[b] - 1) & 0xFFFFFFFF, Bits(32))
            raise self.error(f"cannot evaluate {expr_p4(e)}", e)
        return self._from_ref(r, e)

    def _type_member(self, e: A.Member) -> CE:
        tn = e.expr.name
        if tn == "error":
            if e.name not in self.env.errors:
                raise self.error(f"unknown error {e.name!r}", e)
            return _const(e.name, ERROR)
        t = self.env.named(tn)
        if isinstance(t, EnumT):
            return _const(t.value(e.name), t.underlying or t)
        raise self.error(f"{tn} is not an enum", e)

    def _e_Index(self, e, sc, want):
        r = self.path(e, sc)
        if r is None:
            raise self.error(f"cannot index {expr_p4(e.expr)}", e)
        return self._from_ref(r, e)

    def _e_Slice(self, e: A.Slice, sc, want):
        x = self.expr(e.expr, sc)
        hi, lo = self.const_int(e.hi, sc), self.const_int(e.lo, sc)
        w = hi - lo + 1
        m = (1 << w) - 1
        t = Bits(w)
        if x.const is not NOCONST:
            return _const((to_unsigned(x.const, x.t.width) >> lo) & m, t)
        f = x.fn
        if isinstance(x.t, Bits) and x.t.signed:
            xw = x.t.width
            return CE(lambda p: ((f(p) & ((1 << xw) - 1)) >> lo) & m, t)
        if x.slot is not None:
            s = x.slot
            return CE(lambda p: (p.v[s] >> lo) & m, t)
        return CE(lambda p: (f(p) >> lo) & m, t)

    def const_int(self, e: A.Node, sc: Scope) -> int:
        c = self.expr(e, sc)
        if c.const is NOCONST:
            raise self.error(f"{expr_p4(e)} must be a compile-time constant", e)
        return c.const

    def _e_Cast(self, e: A.Cast, sc, want):
        t = self.env.resolve(e.type)
        return self.cast(self.expr(e.expr, sc, t if isinstance(t, Bits) else None), t)

    def cast(self, x: CE, t: Type) -> CE:
        """*x* converted to type *t* (P4's explicit and implicit casts)."""
        src = x.t
        if src == t:
            return x
        if isinstance(t, EnumT) and t.underlying is not None:
            t = t.underlying
        if isinstance(t, Bits) and not t.width:        # to `int`: the value as it is
            return CE(x.fn, INT, x.slot, x.const, x.ref)
        if isinstance(t, BoolT):
            if isinstance(src, Bits):
                f = x.fn
                return self._fold(CE(lambda p: f(p) != 0, BOOL), x)
            return x
        if isinstance(t, Bits):
            f = x.fn
            if isinstance(src, BoolT):
                return self._fold(CE(lambda p: 1 if f(p) else 0, t), x)
            if not isinstance(src, Bits):
                return CE(f, t, x.slot, x.const, x.ref)
            w = t.width
            m = (1 << w) - 1
            if src.signed and src.width and not t.signed:
                # a signed value is held sign-extended: masking reinterprets it
                return self._fold(CE(lambda p: f(p) & m, t), x)
            if t.signed:
                h = 1 << (w - 1)
                return self._fold(CE(lambda p: ((f(p) + h) & m) - h, t), x)
            if src.width and src.width <= w and not src.signed:
                return CE(f, t, x.slot, x.const, x.ref)
            if x.slot is not None:
                s = x.slot
                return self._fold(CE(lambda p: p.v[s] & m, t), x)
            return self._fold(CE(lambda p: f(p) & m, t), x)
        return x

    def _fold(self, out: CE, inp: CE, *more: CE) -> CE:
        """*out* as a constant when its inputs are constants."""
        if inp.const is not NOCONST and all(m.const is not NOCONST for m in more):
            return _const(out.fn(None), out.t)
        return out

    def _e_Unary(self, e: A.Unary, sc, want):
        x = self.expr(e.expr, sc)
        f = x.fn
        if e.op == "!":
            return self._fold(CE(lambda p: not f(p), BOOL), x)
        t = x.t
        if e.op == "~":
            if isinstance(t, Bits) and t.width and not t.signed:
                m = t.mask
                return self._fold(CE(lambda p: f(p) ^ m, t), x)
            wr = wrap_fn(t) or (lambda v: v)
            return self._fold(CE(lambda p: wr(~f(p)), t), x)
        if e.op == "+":
            return x
        if e.op == "-":
            wr = wrap_fn(t)
            if wr is None:
                return self._fold(CE(lambda p: -f(p), t), x)
            return self._fold(CE(lambda p: wr(-f(p)), t), x)
        raise self.error(f"unknown operator {e.op}", e)

    def _unify(self, a: CE, b: CE) -> tuple[CE, CE, Type]:
        ta, tb = a.t, b.t
        if ta == INT and isinstance(tb, Bits) and tb.width:
            return self.cast(a, tb), b, tb
        if tb == INT and isinstance(ta, Bits) and ta.width:
            return a, self.cast(b, ta), ta
        return a, b, ta

    def _e_Binary(self, e: A.Binary, sc, want):
        op = e.op
        if op in ("&&", "||"):
            return self._logic(e, sc)
        # the operands' own types (p4c's): an untyped literal takes the other operand's
        # type; untyped constants compute in infinite precision, and take the type the
        # context wants only at the end (expr)
        a = self.expr(e.left, sc)
        b = self.expr(e.right, sc, None if op in ("<<", ">>", "++") else
                      (a.t if isinstance(a.t, Bits) and a.t.width else None))
        if op == "++":
            return self._concat(a, b)
        if op in ("<<", ">>"):
            return self._shift(op, a, b)
        if op not in _CMP and a.t == INT and isinstance(b.t, Bits) and b.t.width:
            a = self.cast(a, b.t)
        if (a.const is NOCONST and b.const is NOCONST and isinstance(a.t, Bits)
                and isinstance(b.t, Bits) and a.t.width and b.t.width
                and a.t.width != b.t.width):
            raise self.error(f"{op} of a {_bits_name(a.t)} and a {_bits_name(b.t)} value: "
                             f"{expr_p4(e)} (p4c refuses it: cast one operand to the other's "
                             f"width)", e)
        a, b, t = self._unify(a, b)
        if op in _CMP:
            return self._compare(op, a, b)
        return self._arith(op, a, b, t, e)

    def _logic(self, e: A.Binary, sc) -> CE:
        """``a && b && …`` (or ``||``) as one closure over its operands, left to right,
        stopping at the first that decides."""
        parts: list[CE] = []

        def operands(x: A.Node) -> None:
            if isinstance(x, A.Binary) and x.op == e.op:
                operands(x.left)
                operands(x.right)
            else:
                parts.append(self.expr(x, sc))
        operands(e)
        fns = tuple(c.fn for c in parts)
        return self._fold(CE(_chain(fns, "and" if e.op == "&&" else "or"), BOOL), *parts)

    def _compare(self, op: str, a: CE, b: CE) -> CE:
        if a.fn is None or b.fn is None:
            return self._compare_refs(op, a, b)
        fn = _CMP[op]
        fa, fb = a.fn, b.fn
        if a.slot is not None and b.const is not NOCONST:
            s, c = a.slot, b.const
            if op == "==":
                def eq(p):
                    return p.v[s] == c
                eq.cmp = (f"v[{s}] == {{}}", None, c)          # for _logic's generated code
                return CE(eq, BOOL)
            if op == "!=":
                def ne(p):
                    return p.v[s] != c
                ne.cmp = (f"v[{s}] != {{}}", None, c)
                return CE(ne, BOOL)
            return CE(lambda p: fn(p.v[s], c), BOOL)
        if b.const is not NOCONST:
            c = b.const

            def cmp_c(p):
                return fn(fa(p), c)
            if op in ("==", "!="):
                cmp_c.cmp = (f"{{}}(p) {op} {{}}", fa, c)
            return self._fold(CE(cmp_c, BOOL), a)
        return self._fold(CE(lambda p: fn(fa(p), fb(p)), BOOL), a, b)

    def _compare_refs(self, op: str, a: CE, b: CE) -> CE:
        if op not in ("==", "!=") or a.ref is None or b.ref is None:
            raise self.error(f"cannot compare with {op}")
        if isinstance(a.ref, (list, dict)) or isinstance(b.ref, (list, dict)):
            return self._compare_with_expr(op, a, b)
        sa = [s.slot for s in scalars(a.ref)]
        sb = [s.slot for s in scalars(b.ref)]
        va = [a.ref.base] if isinstance(a.ref, HeaderRef) else []
        vb = [b.ref.base] if isinstance(b.ref, HeaderRef) else []
        neg = op == "!="
        pres = [c.pre for c in (a, b) if c.pre is not None]
        if va and vb:                  # headers: equal when both invalid, or valid and alike
            ia, ib = va[0], vb[0]

            def cmp(p):
                for f in pres:
                    f(p)
                v = p.v
                if v[ia] != v[ib]:
                    return neg
                eq = not v[ia] or [v[i] for i in sa] == [v[i] for i in sb]
                return eq != neg
            return CE(cmp, BOOL)

        def cmp(p):
            for f in pres:
                f(p)
            v = p.v
            eq = [v[i] for i in va + sa] == [v[i] for i in vb + sb]
            return eq != neg
        return CE(cmp, BOOL)

    def _compare_with_expr(self, op: str, a: CE, b: CE) -> CE:
        """``s == { x, y }`` (or ``{ f = x }``): a struct or header against a list or
        struct expression, field by field in the declared order."""
        if isinstance(a.ref, (list, dict)):
            a, b = b, a
        if isinstance(a.ref, (list, dict)):
            raise self.error(f"cannot compare two list or struct expressions with {op}")
        left = [self._from_ref(s, None) for s in scalars(a.ref)]
        right = self._shaped(a.ref, b)
        if len(left) != len(right):
            raise self.error(f"cannot compare {a.ref.path} with an expression of "
                             f"{len(right)} fields")
        pairs = tuple((x.fn, y.fn) for x, y in zip(left, right))
        pres = tuple(c.pre for c in (a, b, *left, *right) if c.pre is not None)
        neg = op == "!="

        def cmp(p):
            for f in pres:
                f(p)
            eq = all(fx(p) == fy(p) for fx, fy in pairs)
            return eq != neg
        return CE(cmp, BOOL)

    def _shaped(self, ref, ce: CE) -> list[CE]:
        """The scalar values of *ce* (a value, a list or struct expression, a reference)
        in the order of *ref*'s scalars."""
        if isinstance(ref, ScalarRef):
            return [self.cast(ce, ref.type) if ce.t == INT else ce]
        subs = list(ref.fields.values() if isinstance(ref, HeaderRef) else
                    ref.members.values() if isinstance(ref, StructRef) else [])
        if isinstance(ce.ref, list):
            if len(ce.ref) != len(subs):
                raise self.error(f"{ref.path} has {len(subs)} fields, the list "
                                 f"{len(ce.ref)}")
            return [v for r, x in zip(subs, ce.ref) for v in self._shaped(r, x)]
        if isinstance(ce.ref, dict):
            names = list(ref.fields if isinstance(ref, HeaderRef) else ref.members)
            missing = [n for n in names if n not in ce.ref]
            if missing:
                raise self.error(f"the struct expression has no field {missing[0]!r}")
            return [v for n, r in zip(names, subs) for v in self._shaped(r, ce.ref[n])]
        return [self._from_ref(s, None) for s in scalars(ce.ref)]

    def _arith(self, op: str, a: CE, b: CE, t: Type, e) -> CE:
        wr = wrap_fn(t)
        fa, fb = a.fn, b.fn
        if op in ("|+|", "|-|"):
            return self._saturate(op, a, b, t)
        if op in ("/", "%"):
            div = operator.floordiv if op == "/" else operator.mod

            def dv(p):
                y = fb(p)
                return div(fa(p), y) if y else 0
            return self._fold(CE(dv if wr is None else (lambda p: wr(dv(p))), t), a, b)
        fn = _ARITH.get(op)
        if fn is None:
            raise self.error(f"unsupported operator {op}", e)
        m = t.mask if isinstance(t, Bits) and t.width and not t.signed else None
        if m is not None and op in ("&", "|", "^") and wr is not None:
            wr_needed = False      # bitwise ops on in-range operands stay in range
        else:
            wr_needed = wr is not None
        if a.slot is not None and b.const is not NOCONST:
            s, c = a.slot, b.const
            if op == "+" and m is not None:
                return CE(lambda p: (p.v[s] + c) & m, t)
            if op == "-" and m is not None:
                return CE(lambda p: (p.v[s] - c) & m, t)
            if op == "&":
                return CE(lambda p: p.v[s] & c, t)
        if b.const is not NOCONST:
            c = b.const
            if not wr_needed:
                return self._fold(CE(lambda p: fn(fa(p), c), t), a)
            if m is not None:
                return self._fold(CE(lambda p: fn(fa(p), c) & m, t), a)
            return self._fold(CE(lambda p: wr(fn(fa(p), c)), t), a)
        if not wr_needed:
            return self._fold(CE(lambda p: fn(fa(p), fb(p)), t), a, b)
        if m is not None:
            return self._fold(CE(lambda p: fn(fa(p), fb(p)) & m, t), a, b)
        return self._fold(CE(lambda p: wr(fn(fa(p), fb(p))), t), a, b)

    def _saturate(self, op: str, a: CE, b: CE, t: Type) -> CE:
        if not isinstance(t, Bits) or not t.width:
            raise self.error("saturating arithmetic needs a fixed-width type")
        if t.signed:
            lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
        else:
            lo, hi = 0, t.mask
        fa, fb = a.fn, b.fn
        sign = 1 if op == "|+|" else -1
        return self._fold(CE(lambda p: min(hi, max(lo, fa(p) + sign * fb(p))), t), a, b)

    def _shift(self, op: str, a: CE, b: CE) -> CE:
        t = a.t
        fa, fb = a.fn, b.fn
        if isinstance(t, Bits) and t.width:
            w, m = t.width, t.mask
            wr = wrap_fn(t)
            if op == "<<":
                if b.const is not NOCONST:
                    c = b.const
                    if c >= w:
                        return _const(0, t)
                    if t.signed:
                        return self._fold(CE(lambda p: wr(fa(p) << c), t), a)
                    return self._fold(CE(lambda p: (fa(p) << c) & m, t), a)

                def shl(p):
                    n = fb(p)
                    return wr(fa(p) << n) if n < w else 0
                return self._fold(CE(shl, t), a, b)
            if t.signed:
                return self._fold(CE(lambda p: fa(p) >> min(fb(p), w), t), a, b)
            return self._fold(CE(lambda p: fa(p) >> fb(p), t), a, b)
        if op == "<<":
            return self._fold(CE(lambda p: fa(p) << fb(p), t), a, b)
        return self._fold(CE(lambda p: fa(p) >> fb(p), t), a, b)

    def _concat(self, a: CE, b: CE) -> CE:
        ta, tb = a.t, b.t
        if not (isinstance(ta, Bits) and isinstance(tb, Bits) and ta.width and tb.width):
            raise self.error("++ needs two fixed-width operands")
        wb, mb, ma = tb.width, tb.mask, ta.mask
        t = Bits(ta.width + wb, ta.signed)
        fa, fb = a.fn, b.fn
        out = CE(lambda p: ((fa(p) & ma) << wb) | (fb(p) & mb), t)
        if t.signed:
            wr = wrap_fn(t)
            g = out.fn
            out = CE(lambda p: wr(g(p)), t)
        return self._fold(out, a, b)

    def _e_Ternary(self, e: A.Ternary, sc, want):
        c = self.expr(e.cond, sc)
        a = self.expr(e.then, sc)                   # (c ? 2 : 3w1) is a bit<3>
        b = self.expr(e.other, sc, a.t if isinstance(a.t, Bits) and a.t.width else None)
        a, b, t = self._unify(a, b)
        fc, fa, fb = c.fn, a.fn, b.fn
        return self._fold(CE(lambda p: fa(p) if fc(p) else fb(p), t), c, a, b)

    def _e_Call(self, e: A.Call, sc, want):
        if isinstance(e.func, A.Member) and e.func.name in _SIZES and not e.args:
            r = self.path(e.func.expr, sc)
            t = r.type if isinstance(r, HeaderRef) else r.stack.type.elem \
                if isinstance(r, DynHeader) else None
            if t is not None:
                bits = t.nbits if e.func.name.startswith("min") else t.max_bits
                return _const(bits if e.func.name.endswith("Bits") else (bits + 7) // 8,
                              Bits(32))
        if isinstance(e.func, A.Member) and e.func.name == "isValid" and not e.args:
            r = self.path(e.func.expr, sc)
            if isinstance(r, StructRef) and isinstance(r.type, UnionT):   # a header_union
                bases = [m.base for m in r.members.values()]
                return CE(lambda p: any(p.v[b] for b in bases), BOOL)
            if isinstance(r, HeaderRef):
                b = r.base
                return CE(lambda p: p.v[b], BOOL, slot=b)
            if isinstance(r, DynHeader):
                base = r.base_fn()

                def valid(p):
                    x = base(p)
                    return x is not None and p.v[x]
                return CE(valid, BOOL)
        return self.call_value(e, sc)

    def _e_ListExpr(self, e: A.ListExpr, sc, want):
        items = [self.expr(x, sc) for x in e.items]
        return CE(None, None, ref=items)

    def _e_StructExpr(self, e: A.StructExpr, sc, want):
        items = {n: self.expr(x, sc) for n, x in e.items}
        if e.rest:
            items[...] = True               # `...`: the fields not named take their defaults
        return CE(None, None, ref=items)

    def _e_InvalidExpr(self, e: A.InvalidExpr, sc, want):
        return CE(None, None, ref=INVALID)

    def _e_TypeName(self, e, sc, want):
        raise self.error(f"type {e.name} used as a value", e)

