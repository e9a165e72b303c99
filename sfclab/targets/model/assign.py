"""Assignment compiled to closures: scalars (wrapped to the target's width),
slices, stack elements chosen at run time, and whole headers, stacks and
structs (BMv2's ``assign_header``: copying an invalid header only marks the
destination invalid)."""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .expr import CE, INVALID, NOCONST, ConstVal, DynHeader, Scope, wrap_fn
from .storage import HeaderRef, ScalarRef, StackRef, StructRef, default_value, scalars
from .types import BOOL, Bits, BoolT

__all__ = ["AssignCompiler", "seq", "fused", "header_bases"]


class AssignCompiler:
    """Mixin: ``lvalue`` and ``store`` (needs the expression compiler)."""

    def lvalue(self, e: A.Node, sc: Scope):
        if isinstance(e, A.Slice):
            base = self.lvalue(e.expr, sc)
            return ("slice", base, self.const_int(e.hi, sc), self.const_int(e.lo, sc))
        r = self.path(e, sc)
        if r is None or isinstance(r, ConstVal) or not isinstance(r, (ScalarRef, HeaderRef, StructRef, StackRef, DynHeader, tuple)):
            raise self.error(f"{expr_p4(e)} cannot be assigned", e)
        return r

    def store(self, lv, ce: CE) -> Callable:
        """A closure writing *ce*'s value into *lv*."""
        if isinstance(lv, ScalarRef):
            s, t = lv.slot, lv.type
            f = ce.fn
            if isinstance(t, BoolT):
                if ce.t == BOOL:
                    def sb(p):
                        p.v[s] = f(p)
                    return sb

                def sb2(p):
                    p.v[s] = bool(f(p))
                return sb2
            wr = wrap_fn(t)
            if wr is None or (ce.t == t and ce.t is not None):
                if ce.const is not NOCONST:
                    c = ce.const

                    def sc_(p):
                        p.v[s] = c
                    sc_.store = ("c", s, c)
                    return sc_
                if ce.slot is not None:
                    r = ce.slot

                    def ss(p):
                        v = p.v
                        v[s] = v[r]
                    ss.store = ("s", s, r)
                    return ss

                def sf(p):
                    p.v[s] = f(p)
                sf.store = ("f", s, f)
                return sf
            if ce.const is not NOCONST:
                c = wr(ce.const)

                def sc2(p):
                    p.v[s] = c
                return sc2
            if not t.signed:
                m = t.mask

                def sm(p):
                    p.v[s] = f(p) & m
                sm.store = ("m", s, (f, m))
                return sm

            def sw_(p):
                p.v[s] = wr(f(p))
            return sw_
        if isinstance(lv, tuple) and lv[0] == "slice":
            _, base, hi, lo = lv
            w = hi - lo + 1
            m = ((1 << w) - 1) << lo
            rd = self._lv_reader(base)
            f = ce.fn
            val = CE(lambda p: (rd(p) & ~m) | ((f(p) << lo) & m), None)
            return self.store(base, val)
        if isinstance(lv, tuple) and isinstance(lv[0], DynHeader):
            dh, name = lv
            fi, base = dh.field_index(name), dh.base_fn()
            wr = wrap_fn(dh.field_type(name)) or (lambda x: x)
            f = ce.fn

            def sd(p):
                b = base(p)
                if b is not None:
                    p.v[b + fi] = wr(f(p))
            return sd
        if isinstance(lv, (HeaderRef, StructRef, StackRef)):
            return self._store_compound(lv, ce)
        if isinstance(lv, DynHeader):
            return self._store_dyn_header(lv, ce)
        raise self.error(f"cannot assign to {lv!r}")

    def _store_dyn_header(self, dh: DynHeader, ce: CE) -> Callable:
        """``s[i] = {…}`` / ``s[i] = h`` with *i* known per packet (out of range: no effect)."""
        base, t = dh.base_fn(), dh.stack.type.elem
        n = len(t.fields)
        if isinstance(ce.ref, list):
            names = [f for f, _ in t.fields if f != "$padding"]
            if len(names) != len(ce.ref):
                raise self.error("a list does not fit the assigned header")
            parts = [(dh.field_index(f), wrap_fn(dh.field_type(f)) or (lambda x: x), c.fn)
                     for f, c in zip(names, ce.ref)]

            def set_list(p):
                vals = [(fi, wr(f(p))) for fi, wr, f in parts]
                b = base(p)
                if b is not None:
                    for fi, x in vals:
                        p.v[b + fi] = x
                    p.v[b] = True
            return set_list
        src = ce.ref
        if not isinstance(src, HeaderRef) or src.type != t:
            raise self.error(f"cannot assign {getattr(src, 'path', src)} to an element of "
                             f"{dh.stack.path}")
        sb = src.base

        def copy(p):
            b = base(p)
            if b is not None:
                v = p.v
                if v[sb]:
                    v[b:b + n + 1] = v[sb:sb + n + 1]
                else:
                    v[b] = False
        return copy

    def _lv_reader(self, lv) -> Callable:
        if isinstance(lv, ScalarRef):
            s = lv.slot
            return lambda p: p.v[s]
        if isinstance(lv, tuple) and isinstance(lv[0], DynHeader):
            return self._from_ref(lv, None).fn
        if isinstance(lv, tuple) and lv[0] == "slice":          # x[7:4][1:0] = …
            _, base, hi, lo = lv
            rd, m = self._lv_reader(base), (1 << (hi - lo + 1)) - 1
            return lambda p: (rd(p) >> lo) & m
        raise self.error(f"cannot assign to a part of {lv!r}")

    def _store_compound(self, dst, ce: CE) -> Callable:
        if ce.pre is not None:             # a function computes the value: call it first
            pre = ce.pre
            return seq([pre, self._store_compound(dst, CE(None, ce.t, ref=ce.ref))])
        src = ce.ref
        if src is INVALID:                      # {#}
            bases = header_bases(dst)

            def invalid(p):
                v = p.v
                for b in bases:
                    v[b] = False
            return invalid
        if isinstance(src, (list, dict)):       # {a, b, c} or {f = a, g = b}
            return self._store_items(dst, src)
        if type(src) is not type(dst) or src.type != dst.type:
            raise self.error(f"cannot assign {getattr(src, 'path', src)} to {dst.path}")
        if isinstance(dst, HeaderRef):
            db, sb, n = dst.base, src.base, len(dst.fields) + 1
            siblings = dst.siblings

            def copy_header(p):
                v = p.v
                if v[sb]:
                    v[db:db + n] = v[sb:sb + n]
                    for s in siblings:          # the other members of its header_union
                        v[s] = False
                else:
                    v[db] = False
            return copy_header
        if isinstance(dst, StackRef):
            fns = [self._store_compound(d, CE(None, s.type, ref=s)) for d, s in zip(dst.elems, src.elems)]
            db, sb = dst.base, src.base

            def nxt(p):
                p.v[db] = p.v[sb]
            return seq([nxt] + fns)
        fns = []
        for name, d in dst.members.items():
            s = src.members[name]
            if isinstance(d, ScalarRef):
                fns.append(self.store(d, self._from_ref(s, None)))
            else:
                fns.append(self._store_compound(d, CE(None, s.type, ref=s)))
        return seq(fns)

    def _store_items(self, dst, src: list | dict) -> Callable:
        """``dst = {a, b}`` / ``dst = {f = a}``: every item read before any is written;
        a header becomes valid."""
        if isinstance(dst, HeaderRef):
            members = {n: f for n, f in dst.fields.items() if n != "$padding"}
        elif isinstance(dst, StructRef):
            members = dst.members
        else:
            raise self.error(f"a list cannot be assigned to {getattr(dst, 'path', dst)}")
        if isinstance(src, dict):
            rest = src.get(...) is True
            named = {k: v for k, v in src.items() if k is not ...}
            unknown = set(named) - set(members)
            if unknown or (len(named) != len(members) and not rest):
                raise self.error(f"{{…}} does not name the fields of {dst.path}: "
                                 f"{', '.join(members)}")
            pairs = [(m, named[n] if n in named else _default_of(m)) for n, m in members.items()]
        else:
            if len(src) != len(members):
                raise self.error(f"a list of {len(src)} does not fit {dst.path}, which has "
                                 f"{len(members)} fields")
            pairs = list(zip(members.values(), src))
        scal = [(d, c) for d, c in pairs if isinstance(d, ScalarRef)]
        rest = [self._store_compound(d, c) for d, c in pairs if not isinstance(d, ScalarRef)]
        reads = [self.cast(c, d.type).fn if isinstance(d.type, Bits) else c.fn for d, c in scal]
        sets = [(d.slot, bool if isinstance(d.type, BoolT) else wrap_fn(d.type) or _same)
                for d, _ in scal]
        if isinstance(dst, HeaderRef):
            b, siblings = dst.base, dst.siblings

            def mark(p):
                p.v[b] = True
                for s in siblings:
                    p.v[s] = False
            rest.append(mark)
        after = seq(rest)
        if not sets:
            return after

        def assign(p):
            vals = [r(p) for r in reads]
            v = p.v
            for (slot, conv), x in zip(sets, vals):
                v[slot] = conv(x)
            after(p)
        return assign


def _same(x):
    return x


def _default_of(ref) -> CE:
    """The value a field ``...`` leaves out takes: 0, false, an invalid header."""
    if isinstance(ref, ScalarRef):
        v = default_value(ref.type)
        return CE(lambda p: v, ref.type, const=v)
    return CE(None, None, ref=INVALID)


def header_bases(ref) -> list[int]:
    """The validity slots of every header under *ref*."""
    if isinstance(ref, HeaderRef):
        return [ref.base]
    if isinstance(ref, StackRef):
        return [e.base for e in ref.elems]
    if isinstance(ref, StructRef):
        return [b for m in ref.members.values() for b in header_bases(m)]
    return []


def _stores(specs: list[tuple]) -> Callable:
    """One generated function doing the scalar stores *specs* in order (each a store
    closure's ``store`` tag: a constant, a slot copy, a value, a masked value), the
    calls to a closure per store saved."""
    env: dict = {}
    lines = ["def stores(p):", "    v = p.v"]
    for i, (kind, s, x) in enumerate(specs):
        if kind == "c":
            env[f"C{i}"] = x
            lines.append(f"    v[{s}] = C{i}")
        elif kind == "s":
            lines.append(f"    v[{s}] = v[{x}]")
        elif kind == "f":
            env[f"F{i}"] = x
            lines.append(f"    v[{s}] = F{i}(p)")
        else:
            env[f"F{i}"] = x[0]
            lines.append(f"    v[{s}] = F{i}(p) & {x[1]}")
    exec("\n".join(lines), env)                          # noqa: S102 - generated here
    return env["stores"]


def _fuse_stores(fns: list[Callable]) -> list[Callable]:
    """*fns* with each run of two or more scalar stores (closures tagged ``store`` by
    :meth:`store`) made one function; order and effects as before."""
    out: list[Callable] = []
    run: list[Callable] = []
    for f in fns + [None]:
        if f is not None and getattr(f, "store", None) is not None:
            run.append(f)
            continue
        if len(run) > 1:
            out.append(_stores([g.store for g in run]))
        else:
            out += run
        run = []
        if f is not None:
            out.append(f)
    return out


def fused(fns: list[Callable | None]) -> list[Callable]:
    """*fns* without the Nones, each run of scalar stores fused into one function: what
    :func:`seq` runs, for a caller that calls them itself."""
    return _fuse_stores([f for f in fns if f is not None])


def seq(fns: list[Callable]) -> Callable:
    """One closure running *fns* in order."""
    fns = fused(fns)
    if not fns:
        return lambda p: None
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        a, b = fns

        def two(p):
            a(p)
            b(p)
        return two
    if len(fns) == 3:
        a, b, c = fns

        def three(p):
            a(p)
            b(p)
            c(p)
        return three
    fs = tuple(fns)

    def many(p):
        for f in fs:
            f(p)
    return many
