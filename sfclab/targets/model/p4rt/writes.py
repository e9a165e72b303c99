"""Write: batches (atomicity, per-update errors, rollback) and table entries (match
fields, actions, priorities, default entries, direct counters and meters)."""

from __future__ import annotations

from finsy.proto import p4i, p4r, rpc_code

from ..errors import ControlPlaneError
from .codec import (_NO_PIPELINE, _U, P4RTError, _bad_bytes, _BatchError, _code_of, _fail,
                    decode_int)
from .pipeline import _Pipeline, _TableSpec

__all__ = ["TableWritesMixin"]

_SCOPE = p4i.ActionRef


class TableWritesMixin:
    """Write batches and table entries of :class:`~.server.P4RuntimeModelServer`."""

    def _write(self, request):
        self._check_role(request)
        self._check_primary(request, "Write")
        pl = self.pipeline
        if pl is None:
            _fail(rpc_code.FAILED_PRECONDITION, _NO_PIPELINE)
        W = p4r.WriteRequest
        if request.atomicity not in (W.CONTINUE_ON_ERROR, W.ROLLBACK_ON_ERROR,
                                     W.DATAPLANE_ATOMIC):
            _fail(rpc_code.INVALID_ARGUMENT, f"unknown atomicity {request.atomicity}")
        # batches hold the lock that packets take too, so ROLLBACK_ON_ERROR is dataplane-atomic
        rollback = request.atomicity != W.CONTINUE_ON_ERROR
        undo: list | None = [] if rollback else None
        results: list = []               # per update: None (applied) or (code, message)
        for u in request.updates:
            mark = len(undo) if rollback else 0
            try:
                self._update(pl, u, undo)
                results.append(None)
            except P4RTError as e:
                results.append((e.code, e.message))
            except ControlPlaneError as e:
                results.append((_code_of(e), e.message))
            except Exception as e:          # a bug: report it, keep the batch consistent
                results.append((rpc_code.INTERNAL, f"internal error: {e!r}"))
            if rollback and results[-1] is not None:
                del undo[mark:]      # a failed update leaves no undo behind
        failed = any(r is not None for r in results)
        if failed and rollback:
            for fn in reversed(undo):
                fn()
        if not failed:
            return p4r.WriteResponse()
        errors = []
        for r in results:
            if r is not None:
                errors.append(p4r.Error(canonical_code=r[0], message=r[1]))
            elif rollback:
                errors.append(p4r.Error(canonical_code=rpc_code.ABORTED,
                                        message="not applied: the batch was rolled back"))
            else:
                errors.append(p4r.Error(canonical_code=rpc_code.OK))
        bad = [f"update {i}: {r[1]}" for i, r in enumerate(results) if r is not None]
        raise _BatchError(errors, f"{len(bad)} of {len(results)} updates failed: "
                                  + "; ".join(bad[:3]))

    def _update(self, pl: _Pipeline, u: p4r.Update, undo) -> None:
        kind = u.entity.WhichOneof("entity")
        if kind is None:
            _fail(rpc_code.INVALID_ARGUMENT, "the update has no entity")
        if u.type not in (_U.INSERT, _U.MODIFY, _U.DELETE):
            _fail(rpc_code.INVALID_ARGUMENT, "the update type is unspecified")
        handler = getattr(self, f"_w_{kind}", None)
        if handler is None:
            _fail(rpc_code.UNIMPLEMENTED, f"the model does not support {kind} entities")
        handler(pl, getattr(u.entity, kind), u.type, undo)

    # table entries
    def _w_table_entry(self, pl: _Pipeline, te: p4r.TableEntry, op: int, undo) -> None:
        ts = pl.table(te.table_id)
        name, mt = ts.name, ts.model
        if op != _U.DELETE:              # a DELETE considers the key fields only
            if te.is_const:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name}: a written entry cannot be const")
            if te.HasField("time_since_last_hit") or (te.idle_timeout_ns and not ts.idle):
                _fail(rpc_code.INVALID_ARGUMENT,
                      f"{name}: the table does not support idle timeout" if not ts.idle
                      else f"{name}: time_since_last_hit is read-only")
            if te.HasField("meter_counter_data"):
                _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        if te.is_default_action:
            return self._w_default_entry(pl, ts, te, op, undo)
        has_action = te.HasField("action")
        if mt.const_entries and (op != _U.MODIFY or has_action):
            _fail(rpc_code.PERMISSION_DENIED, f"{name} is a const table: only its direct "
                                              f"resources can be modified")
        if not ts.order:
            if op == _U.INSERT:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name} has no key: it takes no entries, "
                                                 f"only its default entry can be modified")
            _fail(rpc_code.NOT_FOUND, f"{name} has no key and so no entries")
        key = self._match(ts, te)
        prio = te.priority
        if ts.priority:
            if prio <= 0:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name} has ternary/range/optional fields: "
                                                 f"each entry needs a priority > 0")
        elif prio:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name} has only exact/lpm fields: its entries "
                                             f"take no priority")
        ident = (key, prio)
        entries = mt.entries
        if op == _U.INSERT:
            if not has_action:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name}: an inserted entry needs an action")
            a, args = self._action(ts, te.action, False)
            if ident in entries:
                _fail(rpc_code.ALREADY_EXISTS, f"{name} already has an entry "
                                               f"{entries[ident].desc}")
            if len(entries) >= mt.size:
                _fail(rpc_code.RESOURCE_EXHAUSTED, f"{name} is full ({mt.size} entries)")
            e = mt.make_entry(key, prio, a, args)
            self._direct_resources(pl, ts, e, te, insert=True)
            mt.add_entry(e)
            xkey = (name, key, prio)
            if te.controller_metadata or te.metadata or te.idle_timeout_ns:
                pl.extras[xkey] = (te.controller_metadata, te.metadata, te.idle_timeout_ns)
            if undo is not None:
                def undo_insert():
                    mt.remove_entry(e)
                    pl.extras.pop(xkey, None)
                undo.append(undo_insert)
            return
        e = entries.get(ident)
        if e is None:
            _fail(rpc_code.NOT_FOUND, f"{name} has no entry {mt._desc(key, prio)}")
        if e.const and (op == _U.DELETE or has_action):
            _fail(rpc_code.PERMISSION_DENIED, f"{name}: entry {e.desc} is const")
        xkey = (name, key, prio)
        old_x = pl.extras.get(xkey)
        if op == _U.DELETE:
            mt.remove_entry(e)
            pl.extras.pop(xkey, None)
            if undo is not None:
                def undo_delete():
                    mt.add_entry(e)
                    if old_x is not None:
                        pl.extras[xkey] = old_x
                undo.append(undo_delete)
            return
        old = (e.action, e.args, e.packets, e.bytes, e.meter)
        if has_action:
            a, args = self._action(ts, te.action, False)
        self._direct_resources(pl, ts, e, te, insert=False)
        if has_action:
            e.action, e.args = a, args
            if te.controller_metadata or te.metadata or te.idle_timeout_ns:
                pl.extras[xkey] = (te.controller_metadata, te.metadata, te.idle_timeout_ns)
            else:
                pl.extras.pop(xkey, None)
        if undo is not None:
            def undo_modify():
                e.action, e.args, e.packets, e.bytes, e.meter = old
                if old_x is None:
                    pl.extras.pop(xkey, None)
                else:
                    pl.extras[xkey] = old_x
            undo.append(undo_modify)

    def _direct_resources(self, pl: _Pipeline, ts: _TableSpec, e, te, *, insert: bool) -> None:
        """``counter_data`` / ``meter_config`` of a written entry (validated before any change)."""
        mt = ts.model
        if te.HasField("counter_data"):
            if not mt.counter_kind:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct counter")
            d = te.counter_data
            if d.packet_count < 0 or d.byte_count < 0:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: negative counter data")
        meter = None
        if te.HasField("meter_config"):
            if not mt.meter_kind:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct meter")
            meter = self._meter(pl, mt.meter_kind, te.meter_config, ts.name)
        if te.HasField("counter_data"):
            e.packets, e.bytes = te.counter_data.packet_count, te.counter_data.byte_count
        if mt.meter_kind and (insert or te.HasField("meter_config") or te.HasField("action")):
            # INSERT / MODIFY without meter_config: the default (GREEN) configuration
            e.meter = meter

    @staticmethod
    def _meter(pl: _Pipeline, kind: str, cfg: p4r.MeterConfig, what: str):
        """A configured model meter for *cfg* (rates per second, as P4Runtime gives them)."""
        from ..externs import Meter

        if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
            _fail(rpc_code.INVALID_ARGUMENT, f"{what}: negative meter rates or bursts")
        if cfg.cir > cfg.pir:
            _fail(rpc_code.INVALID_ARGUMENT, f"{what}: cir {cfg.cir} is above pir {cfg.pir}")
        m = Meter(kind)
        m.configure(cfg.cir / 1e6, cfg.cburst, cfg.pir / 1e6, cfg.pburst, pl.switch.now_us())
        return m

    def _w_default_entry(self, pl: _Pipeline, ts: _TableSpec, te, op: int, undo) -> None:
        name, mt = ts.name, ts.model
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: the default entry can only be MODIFY'd")
        if te.match or te.priority:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: the default entry has no match and no "
                                             f"priority")
        if te.idle_timeout_ns:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: default entries have no idle timeout")
        if ts.const_default:
            _fail(rpc_code.PERMISSION_DENIED, f"{name} has a const default action")
        if te.HasField("counter_data") or te.HasField("meter_config"):
            _fail(rpc_code.UNIMPLEMENTED, "the model keeps no direct resources for default "
                                          "entries")
        old = mt.default
        mt.default = self._action(ts, te.action, True) if te.HasField("action") \
            else mt.initial_default
        if undo is not None:
            undo.append(lambda: setattr(mt, "default", old))

    def _match(self, ts: _TableSpec, te: p4r.TableEntry) -> tuple:
        out = list(ts.absent)
        seen = 0
        fields = ts.fields
        for fm in te.match:
            f = fields.get(fm.field_id)
            if f is None:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: no match field with id "
                                                 f"{fm.field_id}")
            pos, kind, w, fname = f
            if seen >> pos & 1:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: match field {fname} is given "
                                                 f"twice")
            seen |= 1 << pos
            got = fm.WhichOneof("field_match_type")
            if got != kind:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}, {fname}: a {kind} field, given "
                                                 f"{got or 'no value'}")
            if kind == "exact":
                b = fm.exact.value
                v = int.from_bytes(b, "big")
                if not b or v >> w:
                    _bad_bytes(b, w, f"{ts.name}, {fname}")
                out[pos] = v
            elif kind == "lpm":
                what = f"{ts.name}, {fname}"
                v, plen = decode_int(fm.lpm.value, w, what), fm.lpm.prefix_len
                if not 0 < plen <= w:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: prefix length {plen} is not in "
                                                     f"1..{w} (a /0 match is omitted)")
                if v & ((1 << (w - plen)) - 1):
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: 0x{v:x}/{plen} has bits set "
                                                     f"beyond the prefix")
                out[pos] = (v, plen)
            elif kind == "ternary":
                what = f"{ts.name}, {fname}"
                v = decode_int(fm.ternary.value, w, what)
                m = decode_int(fm.ternary.mask, w, what + " (mask)")
                if m == 0:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: a zero mask is a don't-care "
                                                     f"match, which must be omitted")
                if v & ~m:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: value 0x{v:x} has bits outside "
                                                     f"mask 0x{m:x}")
                out[pos] = (v, m)
            elif kind == "range":
                what = f"{ts.name}, {fname}"
                lo, hi = decode_int(fm.range.low, w, what), decode_int(fm.range.high, w, what)
                if lo > hi:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: low {lo} > high {hi}")
                if lo == 0 and hi == (1 << w) - 1:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: the full range is a don't-care "
                                                     f"match, which must be omitted")
                out[pos] = (lo, hi)
            else:
                out[pos] = decode_int(fm.optional.value, w, f"{ts.name}, {fname}")
        missing = ts.exact_mask & ~seen
        if missing:
            names = [f[3] for f in fields.values() if missing >> f[0] & 1]
            _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: exact field(s) {', '.join(names)} "
                                             f"missing (exact fields are never omitted)")
        return tuple(out)

    def _action(self, ts: _TableSpec, ta: p4r.TableAction, default: bool):
        kind = ta.WhichOneof("type")
        if kind != "action":
            _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} is a direct table: its entries take "
                                             f"an action, not {kind or 'nothing'}")
        act = ta.action
        ref = ts.actions.get(act.action_id)
        if ref is None:
            _fail(rpc_code.INVALID_ARGUMENT,
                  f"{ts.name} has no action with id {act.action_id}" +
                  ("" if act.action_id in ts.known_actions else
                   " (no action of the P4Info has that id)"))
        if default and (ref.scope == _SCOPE.TABLE_ONLY or ref.info.table_only):
            _fail(rpc_code.PERMISSION_DENIED, f"{ts.name}: {ref.name} is @tableonly, it cannot "
                                              f"be the default action")
        if not default and (ref.scope == _SCOPE.DEFAULT_ONLY or ref.info.default_only):
            _fail(rpc_code.PERMISSION_DENIED, f"{ts.name}: {ref.name} is @defaultonly, it "
                                              f"cannot be used in an entry")
        params = ref.params
        args = [None] * len(params)
        for p in act.params:
            q = params.get(p.param_id)
            if q is None:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ref.name} has no parameter with id "
                                                 f"{p.param_id}")
            pos, w, pname = q
            if args[pos] is not None:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ref.name}: parameter {pname} given twice")
            b = p.value
            v = int.from_bytes(b, "big")
            if not b or v >> w:
                _bad_bytes(b, w, f"{ref.name}({pname})")
            args[pos] = v
        if None in args:
            missing = [params[i][2] for i, v in zip(ref.ids, args) if v is None]
            _fail(rpc_code.INVALID_ARGUMENT, f"{ref.name}: missing parameter(s) "
                                             f"{', '.join(missing)}")
        return ref.info, tuple(args)
