"""v1model's extern functions and extern-object methods, compiled to closures.

A mixin of :class:`~.control.Compiler`: ``extern_call`` compiles one call
statement (``mark_to_drop``, ``hash``, ``digest``, ``clone*``,
``resubmit*``, ``recirculate*``, ``truncate``, ``random``,
``verify_checksum*``, ``update_checksum*``, ``assert``, ``log_msg``) and
``method_call`` the methods of ``register``, ``counter``, ``meter``,
``direct_counter`` and ``direct_meter`` instances.  BMv2 semantics throughout,
for programs as p4c compiles them: a digest's data is what it was at the call
(p4c's ``RemoveComplexExpressions`` copies it into temporaries, although BMv2's
learn engine reads its fields when ingress ends), one digest per pass, the last
call wins; field lists (``@field_list(n)``) preserve the values the fields
have when the pass ends; out-of-range register, counter and meter indexes do
nothing.
"""

from __future__ import annotations

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .expr import NOCONST, CE, DynHeader, Scope
from .externs import CounterArray, MeterArray, RegisterArray, hash_fn, pack_bits
from .storage import HeaderRef, ScalarRef, StackRef, StructRef, scalars
from .types import BoolT, Bits, EnumT, StructT, VarbitT, annotation

__all__ = ["ExternObj", "ExternCalls"]


class ExternObj:
    """An extern instance in a control: its kind, qualified name and state."""

    __slots__ = ("kind", "name", "state", "type_args")

    def __init__(self, kind: str, name: str, state, type_args=()) -> None:
        self.kind, self.name, self.state, self.type_args = kind, name, state, type_args


def _width(t) -> int:
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, VarbitT):
        return None                     # as long as the packet made it: read per packet
    raise ValueError(f"no width for {t}")


class ExternCalls:
    """Mixin: v1model externs (needs ``expr``, ``store``, ``sw`` and ``error``)."""

    # -- helpers ---------------------------------------------------------------------------
    def field_items(self, e: A.Node, sc: Scope) -> list[tuple]:
        """A field list as ``(read, width, valid_slot_or_None)`` items, in order."""
        out: list[tuple] = []
        if isinstance(e, A.ListExpr):
            for x in e.items:
                out += self.field_items(x, sc)
            return out
        r = self.path(e, sc)
        if isinstance(r, HeaderRef):
            for f in scalars(r):
                s = f.slot
                out.append((lambda p, s=s: p.v[s], _width(f.type), r.base))
            return out
        if isinstance(r, (StructRef, StackRef)):
            for sub in (r.members.values() if isinstance(r, StructRef) else r.elems):
                out += self._ref_items(sub)
            return out
        valid = None
        if isinstance(e, A.Member):
            base = self.path(e.expr, sc)
            if isinstance(base, HeaderRef):
                valid = base.base
        ce = self.expr(e, sc)
        try:
            w = _width(ce.t)
        except ValueError:
            raise self.error(f"{expr_p4(e)} has no fixed width and cannot be hashed", e) from None
        f = ce.fn
        if isinstance(ce.t, BoolT):
            g = f
            f = lambda p: 1 if g(p) else 0  # noqa: E731
        elif isinstance(ce.t, Bits) and ce.t.signed:
            g, m = f, ce.t.mask
            f = lambda p: g(p) & m  # noqa: E731
        return out + [(f, w, valid)]

    def _ref_items(self, r) -> list[tuple]:
        if isinstance(r, ScalarRef):
            s = r.slot
            return [(lambda p, s=s: p.v[s], _width(r.type), None)]
        if isinstance(r, HeaderRef):
            return [(lambda p, s=f.slot: p.v[s], _width(f.type), r.base) for f in scalars(r)]
        subs = r.members.values() if isinstance(r, StructRef) else r.elems
        return [i for sub in subs for i in self._ref_items(sub)]

    @staticmethod
    def bytes_of(items: list[tuple]):
        """A closure packing a field list into bytes (fields of invalid headers left out)."""
        valids = {valid for _, _, valid in items}
        if any(w is None for _, w, _ in items):          # a varbit: its length varies

            def build_varbit(p):
                v = p.v
                vals, widths = [], []
                for read, w, valid in items:
                    if valid is None or v[valid]:
                        x = read(p)
                        if w is None:
                            w, x = x
                        vals.append(x)
                        widths.append(w)
                return pack_bits(vals, widths)
            return build_varbit
        if len(valids) == 1:            # one header (or none): one validity test
            valid = valids.pop()
            reads = [(read, w) for read, w, _ in items]
            total = sum(w for _, w in reads)
            pad = (-total) % 8
            nbytes = (total + pad) // 8

            def build_one(p):
                if valid is not None and not p.v[valid]:
                    return b""
                n = 0
                for read, w in reads:
                    n = (n << w) | read(p)
                return (n << pad).to_bytes(nbytes, "big")
            return build_one

        def build(p):
            v = p.v
            vals, widths = [], []
            for read, w, valid in items:
                if valid is None or v[valid]:
                    vals.append(read(p))
                    widths.append(w)
            return pack_bits(vals, widths)
        return build

    def field_list_slots(self, index: int) -> list[int]:
        """Slots of the user-metadata fields annotated ``@field_list(index, …)``."""
        out: list[int] = []

        def walk(ref) -> None:
            if not isinstance(ref, StructRef):
                return
            annots = ref.type.field_annotations if isinstance(ref.type, StructT) else {}
            for name, sub in ref.members.items():
                body = annotation(annots.get(name, ()), "field_list")
                ids = set()
                if body:
                    for tok in body.split(","):
                        tok = tok.strip()
                        try:
                            ids.add(int(tok.split("w")[-1], 0))
                        except ValueError:
                            c = self.expr_text(tok)
                            if c is not None:
                                ids.add(c)
                if index in ids:
                    out.extend(s.slot for s in scalars(sub))
                else:
                    walk(sub)
        walk(self.sw.meta_ref)
        return out

    def expr_text(self, text: str):
        """The value of a constant written in an annotation (an enum member), or None."""
        from ...p4 import parse_p4
        try:
            prog = parse_p4(f"const bit<32> __x = {text};", types=list(self.env.decls))
            return self.const_int(prog.decls[0].value, self.global_scope)
        except Exception:
            return None

    def _slots_of_data(self, e: A.Node, sc: Scope) -> list[int]:
        if isinstance(e, A.ListExpr):
            return [s for x in e.items for s in self._slots_of_data(x, sc)]
        r = self.path(e, sc)
        if r is None or isinstance(r, (DynHeader, tuple)):
            return []
        return [s.slot for s in scalars(r)]

    # -- extern functions ------------------------------------------------------------------
    def extern_call(self, name: str, e: A.Call, sc: Scope, where: str):
        args = e.args
        sw = self.sw
        if name == "mark_to_drop":
            spec, grp = sw.sm_slot("egress_spec"), sw.sm_slot("mcast_grp")
            drop_port = sw.drop_port
            why = f"mark_to_drop() in {where}"

            def mark(p):
                p.v[spec] = drop_port
                p.v[grp] = 0
                p.marked_drop = why
            return mark
        if name == "hash":
            return self._hash(e, sc)
        if name == "random":
            out, lo, hi = args
            dst = self.lvalue(out, sc)
            flo, fhi = self.expr(lo, sc).fn, self.expr(hi, sc).fn
            rng = sw.rng
            return self.store(dst, CE(lambda p: rng.randint(flo(p), max(flo(p), fhi(p))), None))
        if name == "digest":
            return self._digest(e, sc)
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            kind = self.expr(args[0], sc).const
            sess = self.expr(args[1], sc).fn
            if name == "clone":
                slots: list[int] = []
            elif name == "clone3":
                slots = self._slots_of_data(args[2], sc)
            else:
                slots = self.field_list_slots(self.const_int(args[2], sc))

            def clone(p):
                p.clone = (kind, sess(p), slots)
            return clone
        if name in ("resubmit", "recirculate", "resubmit_preserving_field_list",
                    "recirculate_preserving_field_list"):
            if name.endswith("field_list"):
                slots = self.field_list_slots(self.const_int(args[0], sc))
            else:
                slots = self._slots_of_data(args[0], sc) if args else []
            attr = "resubmit" if name.startswith("resubmit") else "recirculate"

            def flag(p):
                setattr(p, attr, slots)
            return flag
        if name == "truncate":
            n = self.expr(args[0], sc).fn

            def trunc(p):
                p.truncate = n(p)
            return trunc
        if name in ("verify_checksum", "verify_checksum_with_payload",
                    "update_checksum", "update_checksum_with_payload"):
            return self._checksum(name, e, sc)
        if name in ("assert", "assume"):
            c = self.expr(args[0], sc).fn
            text = f"{name}({expr_p4(args[0])}) failed in {where}"

            def check(p):
                if not c(p):
                    p.tr.append(("note", text + " (BMv2 would abort)"))
                    p.marked_drop = text
                    p.v[sw.sm_slot("egress_spec")] = sw.drop_port
            return check
        if name == "log_msg":
            fmt = self.expr(args[0], sc).const
            vals = [self.expr(a, sc).fn for a in args[1:]]
            if vals and isinstance(args[1], A.ListExpr):
                vals = [self.expr(x, sc).fn for x in args[1].items]

            def log(p):
                msg = fmt
                for f in vals:
                    msg = msg.replace("{}", str(f(p)), 1)
                p.tr.append(("note", f"log_msg: {msg}"))
            return log
        raise self.error(f"extern {name}() is not supported by the model", e)

    def _hash(self, e: A.Call, sc: Scope):
        out, algo, base, data, mx = e.args
        dst = self.lvalue(out, sc)
        a = self.expr(algo, sc).const
        h = hash_fn(a)
        build = self.bytes_of(self.field_items(data, sc))
        fb, fm = self.expr(base, sc).fn, self.expr(mx, sc).fn

        def value(p):
            m = fm(p) or 1
            return fb(p) + h(build(p)) % m
        return self.store(dst, CE(value, None))

    def _checksum(self, name: str, e: A.Call, sc: Scope):
        cond, data, field, algo = e.args
        fc = self.expr(cond, sc).fn
        h = hash_fn(self.expr(algo, sc).const)
        build = self.bytes_of(self.field_items(data, sc))
        with_payload = name.endswith("with_payload")
        target = self.expr(field, sc)
        text = expr_p4(field)
        if name.startswith("update"):
            dst = self.lvalue(field, sc)
            w = _width(target.t)
            m = (1 << w) - 1
            if with_payload:
                setter = self.store(dst, CE(lambda p: h(build(p) + p.payload) & m, None))
            else:
                setter = self.store(dst, CE(lambda p: h(build(p)) & m, None))
            rd = target.fn

            def update(p):
                if fc(p):
                    setter(p)
                    p.tr.append(("checksum", text, rd(p)))
            return update
        err = self.sw.sm_slot("checksum_error")
        rd = target.fn

        def verify(p):
            if fc(p):
                got = h(build(p) + (p.payload if with_payload else b""))
                ok = got == rd(p)
                p.tr.append(("checksum", text, "ok" if ok else f"bad (computed 0x{got:04x})"))
                if not ok:
                    p.v[err] = 1
        return verify

    def _digest(self, e: A.Call, sc: Scope):
        recv, data = e.args
        tname = None
        if e.type_args and isinstance(e.type_args[0], A.NamedType):
            tname = e.type_args[0].name
        r = self.path(data, sc) if not isinstance(data, A.ListExpr) else None
        if tname is None and isinstance(r, StructRef):
            tname = r.type.name
        names: list[str] = []
        if tname is not None:
            t = self.env.named(tname)
            if isinstance(t, StructT):
                names = [n for n, _ in t.fields]
        items: list = []    # (name, fn, at_call)
        exprs = data.items if isinstance(data, A.ListExpr) else None
        if exprs is None and isinstance(r, StructRef):
            for n, sub in r.members.items():
                for s in scalars(sub):
                    items.append((n if isinstance(sub, ScalarRef) else s.path,
                                  lambda p, s=s.slot: p.v[s], False))
        elif exprs is not None:
            for i, x in enumerate(exprs):
                n = names[i] if i < len(names) else f"f{i}"
                ce = self.expr(x, sc)
                is_field = ce.slot is not None or isinstance(self.path(x, sc), ScalarRef)
                items.append((n, ce.fn, not is_field))
        else:
            ce = self.expr(data, sc)
            items.append((names[0] if names else "value", ce.fn, ce.slot is None))
        label = tname or "digest"

        def digest(p):
            # p4c copies the data into temporaries at the call (backends/bmv2/common/
            # lower.cpp, RemoveComplexExpressions: "We want the digest to appear as if it
            # is executed instantly"), so later writes to the fields do not show.
            pre = {n: f(p) for n, f, _ in items}
            if p.digests:
                p.tr.append(("note", f"digest {label} replaces an earlier digest in this pass "
                                     f"(BMv2 sends one per pass)"))
            p.digests = [(label, items, pre)]
        return digest

    # -- methods of extern objects --------------------------------------------------------
    def method_call(self, obj: ExternObj, method: str, e: A.Call, sc: Scope):
        args = e.args
        st = obj.state
        if isinstance(st, RegisterArray):
            if method == "read":
                dst = self.lvalue(args[0], sc)
                idx = self.expr(args[1], sc).fn
                cells, size = st.cells, st.size
                setter = self.store(dst, CE(lambda p: cells[idx(p)], None))

                def read(p):
                    if idx(p) < size:
                        setter(p)
                return read
            if method == "write":
                idx = self.expr(args[0], sc).fn
                val = self.expr(args[1], sc, Bits(st.width, st.signed)).fn
                cells, size, m = st.cells, st.size, (1 << st.width) - 1

                def write(p):
                    i = idx(p)
                    if i < size:
                        cells[i] = val(p) & m if not st.signed else val(p)
                return write
        if isinstance(st, CounterArray) and method == "count":
            idx = self.expr(args[0], sc).fn
            return lambda p: st.count(idx(p), p.ingress_len)
        if isinstance(st, MeterArray) and method == "execute_meter":
            idx = self.expr(args[0], sc).fn
            dst = self.lvalue(args[1], sc)
            size, meters = st.size, st.meters
            holder: list = [0]
            setter = self.store(dst, CE(lambda p: holder[0], None))

            def execute(p):
                i = idx(p)
                if i < size:
                    holder[0] = meters[i].execute(p.ingress_len, p.now)
                    setter(p)
            return execute
        if obj.kind == "direct_counter" and method == "count":
            return lambda p: None
        if obj.kind == "direct_meter" and method == "read":
            dst = self.lvalue(args[0], sc)
            return self.store(dst, CE(lambda p: p.color, None))
        raise self.error(f"{obj.kind} {obj.name} has no method {method} the model supports", e)

    def make_extern(self, inst: A.Instance, qname: str) -> ExternObj:
        t = inst.type
        kind = t.name if isinstance(t, A.NamedType) else ""
        targs = [self.env.resolve(x) for x in t.args] if isinstance(t, A.NamedType) else []
        vals = []
        for a in inst.args:
            c = self.expr(a, self.global_scope)
            vals.append(c.const if c.const is not NOCONST else None)
        if kind == "register":
            w = targs[0] if targs else Bits(32)
            obj = RegisterArray(qname, int(vals[0]), _width(w), isinstance(w, Bits) and w.signed)
        elif kind == "counter":
            obj = CounterArray(qname, int(vals[0]), str(vals[1]))
        elif kind == "meter":
            obj = MeterArray(qname, int(vals[0]), str(vals[1]))
        elif kind in ("direct_counter", "direct_meter"):
            obj = str(vals[0])
        elif kind == "value_set":         # a parser value set: (value, mask) members
            obj = []
        else:
            raise self.error(f"extern {kind} ({qname}) is not supported by the model", inst)
        ext = ExternObj(kind, qname, obj, tuple(targs))
        self.sw.externs[qname] = ext
        return ext

