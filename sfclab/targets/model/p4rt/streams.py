"""StreamChannel streams and client arbitration (primary / backup, as the specification
has it), and the stream's error replies."""

from __future__ import annotations

import queue
from dataclasses import dataclass, field

from finsy.proto import p4r, rpc_code

from .codec import _eid

__all__ = ["_Stream", "_Abort", "ArbitrationMixin"]


@dataclass(eq=False)
class _Stream:
    """One StreamChannel: its outgoing queue and, once arbitrated, its election id."""

    out: queue.Queue = field(default_factory=queue.Queue)
    arbitrated: bool = False
    election_id: int | None = None


class _Abort:
    def __init__(self, code: int, message: str) -> None:
        self.code, self.message = code, message


class ArbitrationMixin:
    """Arbitration and stream messages of :class:`~.server.P4RuntimeModelServer`."""

    def _stream_request(self, msg, stream: _Stream) -> _Abort | None:
        kind = msg.WhichOneof("update")
        with self._lock:
            if kind == "arbitration":
                return self._arbitrate(msg.arbitration, stream)
            if kind == "packet":
                self._packet_out(msg.packet, stream)
            elif kind == "digest_ack":
                self._digest_ack(msg.digest_ack, stream)
            elif kind == "other":
                err = self._stream_error(rpc_code.UNIMPLEMENTED,
                                         "the model has no architecture-specific stream messages")
                err.error.other.other.CopyFrom(msg.other)
                stream.out.put(err)
        return None

    def _arbitrate(self, a: p4r.MasterArbitrationUpdate, stream: _Stream) -> _Abort | None:
        eid = _eid(a)
        first = not stream.arbitrated
        if a.device_id != self.device_id:
            return (_Abort(rpc_code.NOT_FOUND, f"no device {a.device_id} (this switch is device "
                                               f"{self.device_id})") if first else
                    _Abort(rpc_code.FAILED_PRECONDITION, f"this stream is for device "
                                                         f"{self.device_id}, not {a.device_id}"))
        if a.HasField("role") and (a.role.name or a.role.id):
            who = a.role.name or a.role.id
            return (_Abort(rpc_code.NOT_FOUND, f"no role {who!r} (the server knows only the "
                                               f"default role)") if first else
                    _Abort(rpc_code.FAILED_PRECONDITION, "the role of a stream cannot change"))
        if eid is not None and any(s.election_id == eid for s in self._live if s is not stream):
            return _Abort(rpc_code.INVALID_ARGUMENT,
                          f"election id {eid} is already used by another controller")
        if first:
            stream.arbitrated = True
            self._live.append(stream)
        stream.election_id = eid
        was_primary = self._primary is stream
        old = self._primary
        if eid is not None and (self._highest is None or eid >= self._highest):
            self._highest = eid
            self._primary = stream
            if old is None:
                self._notify(self._live)
            else:
                self._notify([s for s in self._live if s is not stream])
                self._notify([stream])
            if old is not stream:
                self._primary_changed()
        elif was_primary:
            self._primary = None
            self._notify(self._live)
            self._primary_changed()
        else:
            self._notify([stream])
        return None

    def _notify(self, streams) -> None:
        p = self._primary
        for s in streams:
            msg = p4r.StreamMessageResponse()
            a = msg.arbitration
            a.device_id = self.device_id
            if self._highest is not None:
                a.election_id.high = self._highest >> 64
                a.election_id.low = self._highest & (2**64 - 1)
            if p is None:
                a.status.code, a.status.message = rpc_code.NOT_FOUND, "there is no primary"
            elif s is p:
                a.status.code, a.status.message = rpc_code.OK, "primary"
            else:
                a.status.code, a.status.message = rpc_code.ALREADY_EXISTS, "backup"
            s.out.put(msg)

    def _primary_changed(self) -> None:
        # P4Runtime: the server may empty the digest cache when the primary changes
        for pl in (self.active, self.saved):
            if pl is not None:
                for st in pl.digest_state.values():
                    st.cache.clear()

    def _stream_closed(self, stream: _Stream) -> None:
        with self._lock:
            self._streams.discard(stream)
            if stream in self._live:
                self._live.remove(stream)
                if self._primary is stream:
                    self._primary = None
                    self._notify(self._live)
                    self._primary_changed()

    @staticmethod
    def _stream_error(code: int, message: str) -> p4r.StreamMessageResponse:
        msg = p4r.StreamMessageResponse()
        msg.error.canonical_code, msg.error.message = code, message
        return msg

    def _to_primary(self, msg) -> None:
        if self._primary is not None:
            self._primary.out.put(msg)
