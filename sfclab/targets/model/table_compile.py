"""Tables compiled from their declarations: keys (named by ``@name`` or the key
expression's text), actions (with ``@defaultonly`` / ``@tableonly``), default
action, size, ``const entries`` with P4's priorities (source order, or the
``priority`` given), direct counters and meters, and the apply closure that
looks up, counts, traces and runs the action."""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .calls import ExternObj
from .expr import Scope
from .storage import HeaderRef
from .tables import DEFAULT_SIZE, ActionInfo, KeySpec, Table, _canonical_key
from .types import Bits, BoolT, EnumT, ErrorT, annotation

__all__ = ["TableCompiler", "TableObj", "ActionObj"]


class TableObj:
    __slots__ = ("table", "apply")

    def __init__(self, table: Table, apply: Callable) -> None:
        self.table, self.apply = table, apply


class ActionObj:
    __slots__ = ("info", "decl", "slots")

    def __init__(self, info: ActionInfo, decl, slots) -> None:
        self.info, self.decl, self.slots = info, decl, slots


class TableCompiler:
    """Mixin: ``compile_table`` (needs the expression compiler and ``sw``)."""

    def compile_table(self, d: A.TableDecl, sc: Scope, qname: str) -> TableObj:
        keys = []
        for k in d.keys:
            ce = self.expr(k.expr, sc)
            name = annotation(k.annotations, "name")
            name = name.strip().strip('"') if name else expr_p4(k.expr)
            t = ce.t
            if isinstance(t, BoolT):
                f = ce.fn
                read, w = (lambda p, f=f: 1 if f(p) else 0), 1
            elif isinstance(t, Bits) and t.width:
                w = t.width
                read = ce.fn if not t.signed else (lambda p, f=ce.fn, m=t.mask: f(p) & m)
                if ce.slot is not None and not t.signed:
                    read = (lambda p, s=ce.slot: p.v[s])
                    valid = self._key_header(k.expr, sc)
                    if valid is not None:   # BMv2 looks up a field of an invalid header as 0
                        read = (lambda p, s=ce.slot, b=valid: p.v[s] if p.v[b] else 0)
            elif isinstance(t, EnumT) and t.underlying is not None:
                w, read = t.underlying.width, ce.fn
            elif isinstance(t, (ErrorT, EnumT)):      # BMv2 numbers errors and plain enums
                codes, f = self._codes(t), ce.fn
                w, read = 32, (lambda p, f=f, codes=codes: codes[f(p)])
            else:
                raise self.error(f"table {qname}: key {expr_p4(k.expr)} has no fixed width", k)
            if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise self.error(f"table {qname}: match kind {k.match_kind} is not supported", k)
            valid = self._key_header(k.expr, sc) if ce.slot is None else None
            if valid is not None:       # (a slice, a signed field: as above)
                read = (lambda p, r=read, b=valid: r(p) if p.v[b] else 0)
            keys.append(KeySpec(name, k.match_kind, w, read))
        actions: dict[str, ActionInfo] = {}
        by_local: dict[str, ActionInfo] = {}
        for ref in d.actions:
            a = sc.get(ref.name)
            if not isinstance(a, ActionObj):
                raise self.error(f"table {qname}: {ref.name} is not an action", ref)
            info = self._bound(a, ref, sc) if ref.args else a.info
            if annotation(ref.annotations, "defaultonly") is not None or \
                    annotation(ref.annotations, "tableonly") is not None:
                info = ActionInfo(info.name, info.local, info.params, info.fn,
                                  annotation(ref.annotations, "defaultonly") is not None,
                                  annotation(ref.annotations, "tableonly") is not None,
                                  info.bound)
            actions[info.name] = info
            by_local[ref.name] = info
        default_ref = d.default_action
        if default_ref is None:
            noa = sc.get("NoAction")
            default = (noa.info, ())
            if noa.info.name not in actions:
                actions[noa.info.name] = noa.info
        else:
            info = by_local.get(default_ref.name)
            if info is None:
                raise self.error(f"table {qname}: default action {default_ref.name} is not in "
                                 f"its actions", default_ref)
            default = (info, self._ref_args(default_ref, info, sc))
        tbl = Table(qname, keys, actions, default, d.default_const, d.size or DEFAULT_SIZE)
        ctr = d.property("counters")
        if ctr is not None:
            obj = self.path(ctr, sc)
            if isinstance(obj, ExternObj) and obj.kind == "direct_counter":
                tbl.counter_kind = obj.state
                self.sw.direct_counters[obj.name] = tbl
        mtr = d.property("meters")
        if mtr is not None:
            obj = self.path(mtr, sc)
            if isinstance(obj, ExternObj) and obj.kind == "direct_meter":
                tbl.meter_kind = obj.state
                self.sw.direct_meters[obj.name] = tbl
        if d.entries:
            self._const_entries(tbl, d, by_local, sc)
        tbl.const_entries = bool(d.entries) and d.entries_const
        self.sw.tables[qname] = tbl
        return TableObj(tbl, self._apply_fn(tbl))

    def _key_header(self, e: A.Node, sc: Scope) -> int | None:
        """The validity slot of the header whose field (or a slice of it) key *e* is.
        Not for a stack element's field: p4c copies that key into a temporary first,
        which reads the field's value whatever the header's validity."""
        if isinstance(e, A.Slice):
            e = e.expr
        if isinstance(e, A.Member) and not isinstance(e.expr, A.Index):
            base = self.path(e.expr, sc)
            if isinstance(base, HeaderRef) and e.name in base.fields:
                return base.base
        return None

    def _bound(self, a: ActionObj, ref: A.ActionRef, sc: Scope) -> ActionInfo:
        """*a* with its first parameters bound in the table's action list
        (``actions = { setbyte(hdr.b); }``): the control plane gives only the rest."""
        n = len(ref.args)
        if n > len(a.decl.params):
            raise self.error(f"action {ref.name} takes {len(a.decl.params)} argument(s)", ref)
        inner = sc.child()
        rest = []
        for i, slot in enumerate(a.slots[n:]):
            inner.names[f"$cp{i}"] = slot
            rest.append(A.Name(f"$cp{i}"))
        call = self.action_call(a, A.Call(A.Name(ref.name), tuple(ref.args) + tuple(rest)), inner)
        slots = [s.slot for s in a.slots[n:]]

        def fn(p, args):
            v = p.v
            for s, x in zip(slots, args):
                v[s] = x
            call(p)
        return ActionInfo(a.info.name, a.info.local, a.info.params[n:], fn, bound=n)

    def _ref_args(self, ref: A.ActionRef, info: ActionInfo, sc: Scope) -> tuple:
        args = ref.args or ()
        args = args[info.bound:] if len(args) > len(info.params) else args
        if len(args) != len(info.params):
            raise self.error(f"action {info.local} takes {len(info.params)} argument(s)", ref)
        return tuple(self.const_int(a, sc) & ((1 << w) - 1) for a, (_, w) in zip(args, info.params))

    def _const_entries(self, tbl: Table, d: A.TableDecl, by_local, sc: Scope) -> None:
        n = len(d.entries)
        running = None
        explicit = [e.priority for e in d.entries if e.priority is not None]
        top = (max(explicit) if explicit else 0) + n
        # @priority(N) on const entries (p4c): BMv2's own order, the smallest N wins; an
        # entry without one has its position (1, 2 …)
        annotated = [annotation(e.annotations, "priority") for e in d.entries]
        by_annotation = None
        if any(x is not None for x in annotated):
            bm = [self._priority_value(x, ent) if x is not None else i + 1
                  for i, (x, ent) in enumerate(zip(annotated, d.entries))]
            by_annotation = [max(bm) + 1 - b for b in bm]
        for i, ent in enumerate(d.entries):
            match = []
            for k, ks in zip(tbl.keys, ent.keys):
                match.append(_canonical_key(k, self._keyset(ks, k, sc), f"table {tbl.name}"))
            if by_annotation is not None:
                running = by_annotation[i]
            elif ent.priority is not None:
                running = ent.priority
            else:
                running = (running - 1) if running is not None else top - i
            prio = max(1, running) if tbl.mode == "priority" else 0
            info = by_local.get(ent.action.name)
            if info is None:
                raise self.error(f"table {tbl.name}: {ent.action.name} is not one of its actions",
                                 ent)
            e = tbl.make_entry(tuple(match), prio, info, self._ref_args(ent.action, info, sc),
                               const=True)
            tbl.entries.setdefault((e.match, prio), e)
        tbl.reindex()

    def _priority_value(self, text: str, ent: A.TableEntry) -> int:
        v = self.expr_text(text)
        if not isinstance(v, int):
            raise self.error(f"@priority({text}): the priority must be an integer constant", ent)
        return v

    def _codes(self, t) -> dict:
        """Error or plain-enum member -> the number BMv2 gives it (declaration order)."""
        if isinstance(t, ErrorT):
            return {name: i for i, name in enumerate(self.env.errors)}
        return {v: i for i, (_, v) in enumerate(t.members)}

    def _key_int(self, e: A.Node, sc: Scope) -> int:
        v = self.const_int(e, sc)
        if isinstance(v, str):                   # error.NoError, a plain enum's member
            c = self.expr(e, sc)
            return self._codes(c.t).get(v, 0)
        return v

    def _keyset(self, ks: A.Node, k, sc: Scope):
        if isinstance(ks, (A.Default, A.DontCare)):
            return None
        full = (1 << k.width) - 1
        if isinstance(ks, A.Mask):
            v, m = self._key_int(ks.value, sc) & full, self._key_int(ks.mask, sc) & full
            if k.kind == "lpm":
                plen = bin(m).count("1")
                return (v & m, plen)
            return (v & m, m)
        if isinstance(ks, A.Range):
            return (self._key_int(ks.lo, sc) & full, self._key_int(ks.hi, sc) & full)
        return self._key_int(ks, sc) & full

    def _apply_fn(self, tbl: Table) -> Callable:
        counting = tbl.counter_kind is not None
        metering = tbl.meter_kind is not None

        def apply(p):
            e = tbl.lookup(p)
            tr = p.tr
            if e is None:
                tbl.misses += 1
                a, args = tbl.default
                tr.append(("table", tbl, None))
                tr.append(("action", a, args))
                a.fn(p, args)
                return False, a
            tbl.hits += 1
            if counting:
                e.packets += 1
                e.bytes += p.ingress_len
            if metering:
                p.color = e.meter.execute(p.ingress_len, p.now) if e.meter is not None else 0
            tr.append(("table", tbl, e))
            a = e.action
            tr.append(("action", a, e.args))
            a.fn(p, e.args)
            return True, a
        return apply

