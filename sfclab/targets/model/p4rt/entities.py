"""Writes of the other entities: counters, direct counters, meters, direct meters,
registers, the packet replication engine (multicast groups, clone sessions) and digest
configurations."""

from __future__ import annotations

from finsy.proto import p4r, rpc_code

from .codec import _U, _fail, decode_int, decode_signed
from .pipeline import _DigestState, _Pipeline

__all__ = ["EntityWritesMixin"]

#: The first multicast group / clone session id a P4Runtime write may not use.
_FIRST_RESERVED = 1 << 15


class EntityWritesMixin:
    """Writes of counters, meters, registers, PRE and digest entries."""

    @staticmethod
    def _indexes(entry, size: int, what: str):
        if not entry.HasField("index"):
            return range(size)
        i = entry.index.index
        if i < 0:
            _fail(rpc_code.INVALID_ARGUMENT, f"{what}: negative index {i}")
        if i >= size:
            _fail(rpc_code.OUT_OF_RANGE, f"{what}: index {i} is not below its size {size}")
        return (i,)

    def _w_counter_entry(self, pl: _Pipeline, ce: p4r.CounterEntry, op: int, undo):
        c = pl.get(pl.counters, ce.counter_id, "counter")
        name = c.preamble.name
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: counter entries can only be MODIFY'd")
        st = pl.extern("counter", c)
        idx = self._indexes(ce, st.size, name)
        if not ce.HasField("data"):
            return
        d = ce.data
        if d.packet_count < 0 or d.byte_count < 0:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: negative counter data")
        old = [(i, st.packets[i], st.bytes[i]) for i in idx] if undo is not None else None
        for i in idx:
            st.packets[i], st.bytes[i] = d.packet_count, d.byte_count
        if undo is not None:
            def undo_counter():
                for i, pk, by in old:
                    st.packets[i], st.bytes[i] = pk, by
            undo.append(undo_counter)

    def _direct_entry(self, pl: _Pipeline, te: p4r.TableEntry):
        """The installed entry a direct counter / meter entity names (NOT_FOUND if none)."""
        ts = pl.table(te.table_id)
        if te.is_default_action:
            _fail(rpc_code.UNIMPLEMENTED, "the model keeps no direct resources for default "
                                          "entries")
        key = self._match(ts, te)
        e = ts.model.entries.get((key, te.priority))
        if e is None:
            _fail(rpc_code.NOT_FOUND, f"{ts.name} has no entry {ts.model._desc(key, te.priority)}")
        return ts, e

    def _w_direct_counter_entry(self, pl: _Pipeline, dc: p4r.DirectCounterEntry, op: int,
                                undo):
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, "direct counter entries can only be MODIFY'd")
        ts = pl.table(dc.table_entry.table_id)
        if not ts.model.counter_kind:
            _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct counter")
        ts, e = self._direct_entry(pl, dc.table_entry)
        if not dc.HasField("data"):
            return
        if dc.data.packet_count < 0 or dc.data.byte_count < 0:
            _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name}: negative counter data")
        old = (e.packets, e.bytes)
        e.packets, e.bytes = dc.data.packet_count, dc.data.byte_count
        if undo is not None:
            undo.append(lambda: (setattr(e, "packets", old[0]), setattr(e, "bytes", old[1])))

    def _w_meter_entry(self, pl: _Pipeline, me: p4r.MeterEntry, op: int, undo):
        m = pl.get(pl.meters, me.meter_id, "meter")
        name = m.preamble.name
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: meter entries can only be MODIFY'd")
        if me.HasField("counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        st = pl.extern("meter", m)
        idx = self._indexes(me, st.size, name)
        from ..externs import Meter

        cfg = me.config if me.HasField("config") else None
        if cfg is not None:
            self._meter(pl, st.kind, cfg, name)          # validates
        old = [(i, st.meters[i]) for i in idx]
        for i in idx:
            st.meters[i] = self._meter(pl, st.kind, cfg, name) if cfg is not None \
                else Meter(st.kind)
        if undo is not None:
            def undo_meter():
                for i, cell in old:
                    st.meters[i] = cell
            undo.append(undo_meter)

    def _w_direct_meter_entry(self, pl: _Pipeline, dm: p4r.DirectMeterEntry, op: int, undo):
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, "direct meter entries can only be MODIFY'd")
        if dm.HasField("counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        ts = pl.table(dm.table_entry.table_id)
        if not ts.model.meter_kind:
            _fail(rpc_code.INVALID_ARGUMENT, f"{ts.name} has no direct meter")
        ts, e = self._direct_entry(pl, dm.table_entry)
        old = e.meter
        e.meter = self._meter(pl, ts.model.meter_kind, dm.config, ts.name) \
            if dm.HasField("config") else None
        if undo is not None:
            undo.append(lambda: setattr(e, "meter", old))

    def _w_register_entry(self, pl: _Pipeline, re_: p4r.RegisterEntry, op: int, undo):
        r = pl.get(pl.registers, re_.register_id, "register")
        name = r.preamble.name
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: register entries can only be MODIFY'd")
        st = pl.extern("register", r)
        idx = self._indexes(re_, st.size, name)
        if re_.data.WhichOneof("data") != "bitstring":
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: the data must be a bitstring "
                                             f"({'int' if st.signed else 'bit'}<{st.width}>)")
        b = re_.data.bitstring
        v = (decode_signed if st.signed else decode_int)(b, st.width, name)
        old = [(i, st.cells[i]) for i in idx] if undo is not None else None
        for i in idx:
            st.cells[i] = v
        if undo is not None:
            def undo_register():
                for i, x in old:
                    st.cells[i] = x
            undo.append(undo_register)

    def _w_packet_replication_engine_entry(self, pl: _Pipeline, pre, op: int, undo):
        kind = pre.WhichOneof("type")
        sw = pl.switch
        if kind == "multicast_group_entry":
            g = pre.multicast_group_entry
            ident, what, store, model = (g.multicast_group_id, "multicast group", pl.mc_groups,
                                         sw.mc_groups)
        elif kind == "clone_session_entry":
            g = pre.clone_session_entry
            ident, what, store, model = (g.session_id, "clone session", pl.clone_sessions,
                                         sw.clone_sessions)
        else:
            _fail(rpc_code.INVALID_ARGUMENT, "the packet replication engine entry is empty")
        if ident == 0:
            _fail(rpc_code.INVALID_ARGUMENT, f"{what} id 0 is reserved (it is the wildcard "
                                             f"of reads)")
        if ident >= _FIRST_RESERVED:
            # BMv2's P4Runtime server (PI) keeps ids from 32768 up for its clone sessions
            _fail(rpc_code.OUT_OF_RANGE if kind == "multicast_group_entry"
                  else rpc_code.INVALID_ARGUMENT, f"{what} id {ident} is not in 1..32767")
        exists = ident in store
        if op == _U.INSERT and exists:
            _fail(rpc_code.ALREADY_EXISTS, f"{what} {ident} already exists")
        if op != _U.INSERT and not exists:
            _fail(rpc_code.NOT_FOUND, f"{what} {ident} does not exist")
        old = (store.get(ident), model.get(ident))
        if op == _U.DELETE:
            del store[ident]
            model.pop(ident, None)
        else:
            reps, seen = [], set()
            for r in g.replicas:
                if r.backup_replicas:
                    _fail(rpc_code.UNIMPLEMENTED, "the model has no backup replicas")
                given = r.WhichOneof("port_kind")
                if given is None:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what} {ident}: a replica without a "
                                                     f"port")
                port = (decode_int(r.port, 32, f"{what} {ident}: port") if given == "port"
                        else r.egress_port)
                if (port, r.instance) in seen:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what} {ident}: replica (port {port}, "
                                                     f"instance {r.instance}) is given twice")
                seen.add((port, r.instance))
                reps.append((port, r.instance))
            if kind == "multicast_group_entry":
                sw.set_multicast_group(ident, reps)
            else:
                sw.set_clone_session(ident, reps)
            store[ident] = type(g)()
            store[ident].CopyFrom(g)
        if undo is not None:
            def undo_pre():
                for d, v in ((store, old[0]), (model, old[1])):
                    if v is None:
                        d.pop(ident, None)
                    else:
                        d[ident] = v
            undo.append(undo_pre)

    def _w_digest_entry(self, pl: _Pipeline, de: p4r.DigestEntry, op: int, undo):
        d = pl.get(pl.digests, de.digest_id, "digest")
        name = d.preamble.name
        st = pl.digest_state.get(de.digest_id)
        if op == _U.INSERT and st is not None:
            _fail(rpc_code.ALREADY_EXISTS, f"digest {name} is already configured")
        if op != _U.INSERT and st is None:
            _fail(rpc_code.NOT_FOUND, f"digest {name} is not configured")
        if op != _U.DELETE and not de.HasField("config"):
            _fail(rpc_code.INVALID_ARGUMENT, f"digest {name}: a config is needed")
        if op == _U.DELETE:
            if st.timer is not None:            # buffered digests are dropped
                st.timer.cancel()
                st.timer = None
            st.buffer.clear()
            del pl.digest_state[de.digest_id]
        elif st is None:
            pl.digest_state[de.digest_id] = _DigestState(p4r.DigestEntry.Config())
            pl.digest_state[de.digest_id].config.CopyFrom(de.config)
        else:
            old_cfg = p4r.DigestEntry.Config()
            old_cfg.CopyFrom(st.config)
            st.config.CopyFrom(de.config)
        if undo is not None:
            def undo_digest():
                if op == _U.INSERT:
                    pl.digest_state.pop(de.digest_id, None)
                elif op == _U.DELETE:
                    pl.digest_state[de.digest_id] = st
                else:
                    st.config.CopyFrom(old_cfg)
            undo.append(undo_digest)
