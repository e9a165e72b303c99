"""Packet-out from the primary, packet-in and digest lists to it (buffered, deduplicated
until acknowledged)."""

from __future__ import annotations

import threading
import time

from finsy.proto import p4d, p4r, rpc_code

from .codec import _NO_PIPELINE, encode_int
from .pipeline import _DigestState, _Pipeline
from .streams import _Stream

__all__ = ["PacketsMixin"]


class PacketsMixin:
    """Packets and digests of :class:`~.server.P4RuntimeModelServer`."""

    def _packet_out(self, po: p4r.PacketOut, stream: _Stream) -> None:
        def refuse(code: int, message: str) -> None:
            err = self._stream_error(code, message)
            err.error.packet_out.packet_out.CopyFrom(po)
            stream.out.put(err)
        if stream is not self._primary:
            return refuse(rpc_code.PERMISSION_DENIED, "packet-out from a client that is not "
                                                      "the primary: dropped")
        pl = self.active
        if pl is None:
            return refuse(rpc_code.FAILED_PRECONDITION, _NO_PIPELINE)
        meta = {}
        if pl.packet_out is not None:
            spec = {m.id: m for m in pl.packet_out.metadata}
            for m in po.metadata:
                s = spec.get(m.metadata_id)
                if s is None:
                    return refuse(rpc_code.INVALID_ARGUMENT, f"packet_out has no metadata "
                                                             f"field with id {m.metadata_id}")
                if s.name in meta:
                    return refuse(rpc_code.INVALID_ARGUMENT, f"packet_out metadata {s.name} "
                                                             f"is given twice")
                v = int.from_bytes(m.value, "big")
                if not m.value or v >> s.bitwidth:
                    return refuse(rpc_code.INVALID_ARGUMENT, f"packet_out metadata {s.name}: "
                                                             f"the value does not fit "
                                                             f"{s.bitwidth} bits")
                meta[s.name] = v
            missing = [s.name for s in spec.values() if s.name not in meta]
            if missing:
                return refuse(rpc_code.INVALID_ARGUMENT, f"packet_out metadata "
                                                         f"{', '.join(missing)} missing (each "
                                                         f"field is given exactly once)")
        elif po.metadata:
            return refuse(rpc_code.INVALID_ARGUMENT, "the program has no packet_out header "
                                                     "for metadata")
        try:
            result = pl.switch.packet_out(po.payload, **meta)
        except Exception as e:
            return refuse(rpc_code.INTERNAL, f"the model could not run the packet: {e}")
        self.deliver(result)

    def deliver(self, result) -> None:
        """Send the packet-ins and digests of a processed packet to the primary client
        (the caller holds the server's lock, as ModelTarget.send does)."""
        pl = self.active
        if pl is None:
            return
        for pin in getattr(result, "packet_ins", ()):
            msg = p4r.StreamMessageResponse()
            msg.packet.payload = pin.payload
            if pl.packet_in is not None:
                for m in pl.packet_in.metadata:
                    if m.name in pin.metadata:
                        msg.packet.metadata.add(metadata_id=m.id,
                                                value=encode_int(int(pin.metadata[m.name])))
            self._to_primary(msg)
        for dg in getattr(result, "digests", ()):
            ident = pl.digest_names.get(dg.name)
            if ident is None and len(pl.digests) == 1:
                ident = next(iter(pl.digests))
            st = pl.digest_state.get(ident)
            if st is not None:
                self._digest(pl, ident, st, dg.data)

    # -- digests -------------------------------------------------------------------------------
    def _digest(self, pl: _Pipeline, ident: int, st: _DigestState, data: dict) -> None:
        key = tuple(sorted(data.items()))
        now = time.monotonic()
        ack = st.config.ack_timeout_ns / 1e9
        for lid, (sent, keys) in list(st.cache.items()):
            if now - sent >= ack:
                del st.cache[lid]
            elif key in keys:
                return                  # sent and not acknowledged yet
        if any(k == key for k, _ in st.buffer):
            return
        st.buffer.append((key, self._digest_data(pl, ident, data)))
        cfg = st.config
        if cfg.max_timeout_ns == 0 or cfg.max_list_size == 1 or \
                (cfg.max_list_size and len(st.buffer) >= cfg.max_list_size):
            self._flush_digest(pl, ident, st)
        elif st.timer is None:
            st.timer = _timer(cfg.max_timeout_ns / 1e9, self._digest_timeout, (pl, ident, st))
            if st.timer is None:        # no thread starts here (Pyodide): the list goes now
                self._flush_digest(pl, ident, st)

    def _digest_timeout(self, pl: _Pipeline, ident: int, st: _DigestState) -> None:
        with self._lock:
            st.timer = None
            if pl.digest_state.get(ident) is st:
                self._flush_digest(pl, ident, st)

    def _flush_digest(self, pl: _Pipeline, ident: int, st: _DigestState) -> None:
        if st.timer is not None:
            st.timer.cancel()
            st.timer = None
        if not st.buffer or pl is not self.active or self._primary is None:
            st.buffer.clear()           # nobody to send them to: dropped, not cached
            return
        self._list_id += 1
        msg = p4r.StreamMessageResponse()
        d = msg.digest
        d.digest_id, d.list_id, d.timestamp = ident, self._list_id, time.time_ns()
        d.data.extend(data for _, data in st.buffer)
        if st.config.ack_timeout_ns:
            st.cache[self._list_id] = (time.monotonic(), {k for k, _ in st.buffer})
        st.buffer.clear()
        self._to_primary(msg)

    def _stop_digests(self, pl: _Pipeline) -> None:
        for st in pl.digest_state.values():
            if st.timer is not None:
                st.timer.cancel()
                st.timer = None

    @staticmethod
    def _digest_data(pl: _Pipeline, ident: int, data: dict) -> p4d.P4Data:
        spec = pl.digests[ident].type_spec
        out = p4d.P4Data()
        kind = spec.WhichOneof("type_spec")
        values = list(data.values())
        if kind == "bitstring" and len(values) == 1:
            out.bitstring = encode_int(int(values[0]))
            return out
        names = list(data)
        if kind == "struct":
            st = pl.config.p4info.type_info.structs.get(spec.struct.name)
            if st is not None and {m.name for m in st.members} == set(data):
                names = [m.name for m in st.members]
        target = out.tuple if kind == "tuple" else out.struct
        for n in names:
            target.members.add(bitstring=encode_int(int(data[n])))
        return out

    def _digest_ack(self, ack: p4r.DigestListAck, stream: _Stream) -> None:
        pl = self.active
        if stream is not self._primary:
            code, why = rpc_code.PERMISSION_DENIED, "digest lists are acknowledged by the primary"
        elif pl is None or ack.digest_id not in pl.digests:
            code, why = rpc_code.INVALID_ARGUMENT, f"no digest with id {ack.digest_id}"
        else:
            st = pl.digest_state.get(ack.digest_id)
            if st is not None:
                st.cache.pop(ack.list_id, None)
            return
        err = self._stream_error(code, why)
        err.error.digest_list_ack.digest_list_ack.CopyFrom(ack)
        stream.out.put(err)


def _timer(seconds: float, fn, args: tuple) -> threading.Timer | None:
    """A started daemon timer calling ``fn(*args)``, or None where no thread can start
    (Pyodide: JupyterLite's kernel)."""
    timer = threading.Timer(seconds, fn, args)
    timer.daemon = True
    try:
        timer.start()
    except RuntimeError:
        return None
    return timer
