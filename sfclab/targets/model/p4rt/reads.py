"""Read: every entity with its wildcards, answered in chunks, with one p4.v1.Error per
requested entity when some cannot be served."""

from __future__ import annotations

from finsy.proto import p4r, rpc_code

from ..errors import ControlPlaneError
from .codec import P4RTError, _by_kind, _code_of, _fail, encode_int, encode_signed
from .pipeline import _Pipeline, _TableSpec

__all__ = ["ReadsMixin"]


class ReadsMixin:
    """Reads of :class:`~.server.P4RuntimeModelServer`."""

    _CHUNK = 1000                        # entities per ReadResponse

    def _read(self, request) -> tuple[list, list]:
        pl = self.pipeline
        out: list = []
        errors: list = []
        for ent in request.entities:
            kind = ent.WhichOneof("entity")
            try:
                if kind is None:
                    _fail(rpc_code.INVALID_ARGUMENT, "the entity is empty (P4Runtime has no "
                                                     "read-everything entity)")
                handler = getattr(self, f"_r_{kind}", None)
                if handler is None:
                    _fail(rpc_code.UNIMPLEMENTED, f"the model does not support {kind} entities")
                found = list(handler(pl, getattr(ent, kind)))
            except P4RTError as e:
                errors.append(p4r.Error(canonical_code=e.code, message=e.message))
                continue
            except ControlPlaneError as e:
                errors.append(p4r.Error(canonical_code=_code_of(e), message=e.message))
                continue
            errors.append(p4r.Error(canonical_code=rpc_code.OK))
            out += found
        responses = []
        for i in range(0, len(out), self._CHUNK):
            resp = p4r.ReadResponse()
            resp.entities.extend(out[i:i + self._CHUNK])
            responses.append(resp)
        if not responses and not any(e.canonical_code for e in errors):
            responses.append(p4r.ReadResponse())
        return responses, errors

    def _r_table_entry(self, pl: _Pipeline, te: p4r.TableEntry):
        want_counter = te.HasField("counter_data")
        want_meter = te.HasField("meter_config")
        if te.HasField("meter_counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        if te.table_id == 0:
            if (te.match or te.priority or te.HasField("action") or te.controller_metadata
                    or te.metadata or te.is_default_action or te.idle_timeout_ns):
                _fail(rpc_code.INVALID_ARGUMENT, "a read of all tables (table_id 0) takes no "
                                                 "other filter")
            tables = list(pl.tables.values())
        else:
            tables = [pl.table(te.table_id)]
        for ts in tables:
            if te.HasField("time_since_last_hit") and not ts.idle:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} does not support idle timeout")
            mt = ts.model
            if te.is_default_action:
                if te.match or te.priority:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: the default entry has no "
                                                     f"match and no priority")
                yield self._entity_default(ts)
                continue
            if te.match:
                key = self._match(ts, te)
                if ts.priority and te.priority:
                    e = mt.entries.get((key, te.priority))
                    entries = [e] if e is not None else []
                elif ts.priority:
                    entries = [e for e in mt.entries.values() if e.match == key]
                else:
                    e = mt.entries.get((key, 0))
                    entries = [e] if e is not None and not te.priority else []
            else:
                entries = sorted(mt.entries.values(), key=lambda e: (-e.priority, e.seq))
            action_id = te.action.action.action_id if te.HasField("action") else 0
            for e in entries:
                if te.priority and e.priority != te.priority:
                    continue
                x = pl.extras.get((ts.name, e.match, e.priority))
                cookie, meta, idle = x if x is not None else (0, b"", 0)
                if te.controller_metadata and cookie != te.controller_metadata:
                    continue
                if te.metadata and meta != te.metadata:
                    continue
                ref = ts.by_model_action.get(e.action.name)
                if action_id and (ref is None or ref.id != action_id):
                    continue
                yield self._entity_entry(ts, e, ref, x, want_counter, want_meter)

    def _entity_entry(self, ts: _TableSpec, e, ref, x, want_counter: bool,
                      want_meter: bool) -> p4r.Entity:
        out = p4r.Entity()
        te = out.table_entry
        te.table_id = ts.id
        full_ranges = ts.absent
        match = te.match
        for (fid, kind, w), m, absent in zip(ts.order, e.match, full_ranges):
            if m == absent:
                continue                # a don't-care match is omitted
            fm = match.add()
            fm.field_id = fid
            if kind == "exact":
                fm.exact.value = encode_int(m)
            elif kind == "lpm":
                fm.lpm.value, fm.lpm.prefix_len = encode_int(m[0]), m[1]
            elif kind == "ternary":
                fm.ternary.value, fm.ternary.mask = encode_int(m[0]), encode_int(m[1])
            elif kind == "range":
                fm.range.low, fm.range.high = encode_int(m[0]), encode_int(m[1])
            else:
                fm.optional.value = encode_int(m)
        if e.priority:
            te.priority = e.priority
        if ref is not None:
            a = te.action.action
            a.action_id = ref.id
            for pid, v in zip(ref.ids, e.args):
                a.params.add(param_id=pid, value=encode_int(v))
        if e.const:
            te.is_const = True
        if x is not None:
            te.controller_metadata, te.metadata, te.idle_timeout_ns = x
        mt = ts.model
        if want_counter and mt.counter_kind:
            pk, by = _by_kind(mt.counter_kind, e.packets, e.bytes)
            te.counter_data.packet_count, te.counter_data.byte_count = pk, by
        if want_meter and mt.meter_kind and e.meter is not None and e.meter.configured:
            _meter_config(te.meter_config, e.meter)
        return out

    def _entity_default(self, ts: _TableSpec) -> p4r.Entity:
        out = p4r.Entity()
        te = out.table_entry
        te.table_id = ts.id
        te.is_default_action = True
        a, args = ts.model.default
        ref = ts.by_model_action.get(a.name)
        if ref is not None:
            act = te.action.action
            act.action_id = ref.id
            for pid, v in zip(ref.ids, args):
                act.params.add(param_id=pid, value=encode_int(v))
        return out

    def _r_counter_entry(self, pl: _Pipeline, ce: p4r.CounterEntry):
        counters = ([pl.get(pl.counters, ce.counter_id, "counter")] if ce.counter_id
                    else list(pl.counters.values()))
        for c in counters:
            st = pl.extern("counter", c)
            for i in self._indexes(ce, st.size, c.preamble.name):
                out = p4r.Entity()
                e = out.counter_entry
                e.counter_id = c.preamble.id
                e.index.index = i
                e.data.packet_count, e.data.byte_count = _by_kind(st.kind, st.packets[i],
                                                                  st.bytes[i])
                yield out

    def _r_direct_counter_entry(self, pl: _Pipeline, dc: p4r.DirectCounterEntry):
        te = dc.table_entry
        if te.table_id == 0:
            if te.match or te.priority:
                _fail(rpc_code.INVALID_ARGUMENT, "a read of all tables (table_id 0) takes no "
                                                 "match")
            tables = [ts for ts in pl.tables.values() if ts.model.counter_kind]
        else:
            ts = pl.table(te.table_id)
            if not ts.model.counter_kind:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct counter")
            tables = [ts]
        for ts in tables:
            if te.match:
                entries = [self._direct_entry(pl, te)[1]]
            else:
                entries = sorted(ts.model.entries.values(), key=lambda e: (-e.priority, e.seq))
            for e in entries:
                out = p4r.Entity()
                d = out.direct_counter_entry
                ref = ts.by_model_action.get(e.action.name)
                d.table_entry.CopyFrom(self._entity_entry(ts, e, ref, None, False,
                                                          False).table_entry)
                d.table_entry.ClearField("action")
                d.data.packet_count, d.data.byte_count = _by_kind(ts.model.counter_kind,
                                                                  e.packets, e.bytes)
                yield out

    def _r_meter_entry(self, pl: _Pipeline, me: p4r.MeterEntry):
        if me.HasField("counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        meters = ([pl.get(pl.meters, me.meter_id, "meter")] if me.meter_id
                  else list(pl.meters.values()))
        for m in meters:
            st = pl.extern("meter", m)
            for i in self._indexes(me, st.size, m.preamble.name):
                out = p4r.Entity()
                out.meter_entry.meter_id = m.preamble.id
                out.meter_entry.index.index = i
                if st.meters[i].configured:
                    _meter_config(out.meter_entry.config, st.meters[i])
                yield out

    def _r_direct_meter_entry(self, pl: _Pipeline, dm: p4r.DirectMeterEntry):
        if dm.HasField("counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        te = dm.table_entry
        tables = ([ts for ts in pl.tables.values() if ts.model.meter_kind] if te.table_id == 0
                  else [pl.table(te.table_id)])
        for ts in tables:
            if not ts.model.meter_kind:
                _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct meter")
            entries = ([self._direct_entry(pl, te)[1]] if te.match else
                       sorted(ts.model.entries.values(), key=lambda e: (-e.priority, e.seq)))
            for e in entries:
                out = p4r.Entity()
                d = out.direct_meter_entry
                ref = ts.by_model_action.get(e.action.name)
                d.table_entry.CopyFrom(self._entity_entry(ts, e, ref, None, False,
                                                          False).table_entry)
                d.table_entry.ClearField("action")
                if e.meter is not None and e.meter.configured:
                    _meter_config(d.config, e.meter)
                yield out

    def _r_register_entry(self, pl: _Pipeline, re_: p4r.RegisterEntry):
        regs = ([pl.get(pl.registers, re_.register_id, "register")] if re_.register_id
                else list(pl.registers.values()))
        for r in regs:
            st = pl.extern("register", r)
            enc = encode_signed if st.signed else encode_int
            for i in self._indexes(re_, st.size, r.preamble.name):
                out = p4r.Entity()
                out.register_entry.register_id = r.preamble.id
                out.register_entry.index.index = i
                out.register_entry.data.bitstring = enc(st.cells[i])
                yield out

    def _r_packet_replication_engine_entry(self, pl: _Pipeline, pre):
        kind = pre.WhichOneof("type")
        if kind in (None, "multicast_group_entry"):
            gid = pre.multicast_group_entry.multicast_group_id
            for i in ([gid] if gid else sorted(pl.mc_groups)):
                if i in pl.mc_groups:
                    out = p4r.Entity()
                    out.packet_replication_engine_entry.multicast_group_entry.CopyFrom(
                        pl.mc_groups[i])
                    yield out
        if kind in (None, "clone_session_entry"):
            sid = pre.clone_session_entry.session_id
            for i in ([sid] if sid else sorted(pl.clone_sessions)):
                if i in pl.clone_sessions:
                    out = p4r.Entity()
                    out.packet_replication_engine_entry.clone_session_entry.CopyFrom(
                        pl.clone_sessions[i])
                    yield out

    def _r_digest_entry(self, pl: _Pipeline, de: p4r.DigestEntry):
        if de.digest_id:
            pl.get(pl.digests, de.digest_id, "digest")
        for i in ([de.digest_id] if de.digest_id else sorted(pl.digest_state)):
            st = pl.digest_state.get(i)
            if st is not None:
                out = p4r.Entity()
                out.digest_entry.digest_id = i
                out.digest_entry.config.CopyFrom(st.config)
                yield out


def _meter_config(out: p4r.MeterConfig, meter) -> None:
    cir, cburst, pir, pburst = meter.config()
    out.cir, out.cburst = round(cir * 1e6), cburst
    out.pir, out.pburst = round(pir * 1e6), pburst
