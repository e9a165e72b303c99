"""A P4Runtime server in front of the embedded switch model.

Any P4Runtime client — sfclab's runtime, finsy, p4runtime-shell — drives the
model as it drives BMv2.  The server follows the P4Runtime specification
(v1.4; ``p4runtime.proto`` as finsy ships it):

* ``SetForwardingPipelineConfig`` takes a P4Info and, as ``p4_device_config``,
  the P4 program text (UTF-8); the P4Info must be the one sfclab derives from
  the program.  ``VERIFY`` checks, ``VERIFY_AND_COMMIT`` replaces the pipeline
  and clears the forwarding state, ``VERIFY_AND_SAVE`` stages a pipeline that
  later ``Read`` / ``Write`` requests address while packets still run the old
  one until ``COMMIT``, ``RECONCILE_AND_COMMIT`` keeps the forwarding state
  (``INVALID_ARGUMENT`` when some of it has no place in the new program).
  ``GetForwardingPipelineConfig`` answers with the committed config (an unset
  ``config`` before there is one) in all four response types.
* ``Write`` checks the device, the role and the primary, then that a pipeline
  is set; a failed batch answers ``UNKNOWN`` with one ``p4.v1.Error`` per
  update in the status details (``OK`` for those that were applied).
  ``CONTINUE_ON_ERROR`` tries every update; ``ROLLBACK_ON_ERROR`` and
  ``DATAPLANE_ATOMIC`` (batches hold the lock packets also take) apply all
  or nothing, the updates that were taken back reporting ``ABORTED``.
  Entities: table entries (match kinds with the specification's canonical
  rules, priorities, default entries, const tables and const default actions,
  action scopes, direct counters and meters, ``controller_metadata`` /
  ``metadata``), counters, direct counters, meters, direct meters,
  registers, multicast groups, clone sessions and digest configurations.
* ``Read`` supports the wildcards of each entity; a request that cannot be
  served ends the stream with ``UNKNOWN`` and one ``p4.v1.Error`` per request.
* ``StreamChannel``: client arbitration as in the specification (the primary
  is the client whose election id is the highest ever seen; when it leaves,
  the others are told there is no primary, ``NOT_FOUND``, until one of them
  arbitrates again with an election id at least that high), packet-out (from
  the primary only) / packet-in through the CPU port with the
  ``@controller_header`` metadata, digest lists (buffered by
  ``max_timeout_ns`` / ``max_list_size``, duplicates suppressed until
  acknowledged or ``ack_timeout_ns``) and ``StreamError`` replies for refused
  stream messages.

Only the default role exists.  Not supported (``UNIMPLEMENTED``): action
profiles, value sets, extern entries, per-colour meter counters, idle-timeout
notifications (``idle_timeout_ns`` is kept and read back for tables that
support it).

The server listens on 127.0.0.1 (a free port unless one is given)::

    server = start()          # server.address: '127.0.0.1:40123'

"""

from __future__ import annotations

import bisect
import queue
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from finsy.proto import p4d, p4i, p4r, p4r_grpc, rpc_code, rpc_status
from google.protobuf import any_pb2

from ...errors import TargetError
from .errors import (ControlPlaneError, EntryExistsError, EntryNotFoundError, InvalidValueError,
                     ReadOnlyError, TableFullError, UnknownNameError)

__all__ = ["P4RuntimeModelServer", "start", "P4RT_API_VERSION"]

P4RT_API_VERSION = "1.4.0"

_CODES = {EntryExistsError: rpc_code.ALREADY_EXISTS, EntryNotFoundError: rpc_code.NOT_FOUND,
          TableFullError: rpc_code.RESOURCE_EXHAUSTED, ReadOnlyError: rpc_code.PERMISSION_DENIED,
          UnknownNameError: rpc_code.NOT_FOUND, InvalidValueError: rpc_code.INVALID_ARGUMENT}

_U = p4r.Update
_MF = p4i.MatchField
_SCOPE = p4i.ActionRef
_NO_PIPELINE = ("no forwarding pipeline config has been set "
                "(SetForwardingPipelineConfig first)")


class P4RTError(Exception):
    """One refused update or request, with its canonical code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _fail(code: int, message: str):
    raise P4RTError(code, message)


def _code_of(e: ControlPlaneError) -> int:
    return next((c for cls, c in _CODES.items() if isinstance(e, cls)), rpc_code.UNKNOWN)


# --- values ------------------------------------------------------------------------------------

def decode_int(data: bytes, bitwidth: int, what: str) -> int:
    """A P4Runtime bytestring as an unsigned int; OUT_OF_RANGE when it is empty or the value
    does not fit *bitwidth* (leading zero bytes are accepted, as the specification requires)."""
    v = int.from_bytes(data, "big")
    if not data or (bitwidth and v >> bitwidth):
        _bad_bytes(data, bitwidth, what)
    return v


def decode_signed(data: bytes, bitwidth: int, what: str) -> int:
    """A sign-extended P4Runtime bytestring as an ``int<bitwidth>``."""
    if not data:
        _bad_bytes(data, bitwidth, what)
    v = int.from_bytes(data, "big", signed=True)
    if not -(1 << (bitwidth - 1)) <= v < (1 << (bitwidth - 1)):
        _fail(rpc_code.OUT_OF_RANGE, f"{what}: {v} does not fit in int<{bitwidth}>")
    return v


def _bad_bytes(data: bytes, bitwidth: int, what: str):
    if not data:
        _fail(rpc_code.OUT_OF_RANGE, f"{what}: empty bytestring")
    _fail(rpc_code.OUT_OF_RANGE, f"{what}: value 0x{int.from_bytes(data, 'big'):x} does not "
                                 f"fit in {bitwidth} bits")


def encode_int(v: int) -> bytes:
    """The canonical (shortest) P4Runtime bytestring of an unsigned *v*."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def encode_signed(v: int) -> bytes:
    """The canonical bytestring of a signed *v* (two's complement, shortest)."""
    return v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True)


def _by_kind(kind: str | None, packets: int, nbytes: int) -> tuple[int, int]:
    """``(packets, bytes)`` as P4Runtime reports a counter of *kind* (the other one is 0)."""
    if kind == "packets":
        return packets, 0
    if kind == "bytes":
        return 0, nbytes
    return packets, nbytes


def _eid(msg) -> int | None:
    """A message's election id as an int, None when it is unset."""
    if not msg.HasField("election_id"):
        return None
    return (msg.election_id.high << 64) | msg.election_id.low


# --- one pipeline: the P4Info indexed against a model switch ------------------------------------

_KIND = {_MF.EXACT: "exact", _MF.LPM: "lpm", _MF.TERNARY: "ternary", _MF.RANGE: "range",
         _MF.OPTIONAL: "optional"}


@dataclass(eq=False)
class _ActionRef:
    """One action of one table: its P4Info, scope, model action and parameters by id."""

    id: int
    name: str
    scope: int
    info: object                              # the model's ActionInfo
    params: dict                              # param id -> (position, width, name)
    ids: tuple                                # param ids in the model's order


@dataclass(eq=False)
class _TableSpec:
    id: int
    name: str
    info: p4i.Table
    model: object                             # the model's Table
    fields: dict                              # field id -> (position, kind, width, name)
    order: tuple                              # (field id, kind, width) in the model's key order
    absent: tuple                             # the canonical value of each omitted field
    exact_mask: int                           # positions that must be given
    priority: bool                            # entries need a priority > 0
    actions: dict                             # action id -> _ActionRef
    by_model_action: dict                     # model action name -> _ActionRef
    const_default: bool
    idle: bool
    known_actions: dict                       # every action of the P4Info, by id


@dataclass(eq=False)
class _DigestState:
    config: p4r.DigestEntry.Config
    buffer: list = field(default_factory=list)           # [(key, P4Data)]
    timer: threading.Timer | None = None
    cache: dict = field(default_factory=dict)            # list id -> (sent at, {key})


@dataclass(eq=False)
class _Pipeline:
    """A verified pipeline: the config, the model switch and the state P4Runtime adds."""

    config: p4r.ForwardingPipelineConfig
    switch: object
    tables: dict = field(default_factory=dict)            # id -> _TableSpec
    actions: dict = field(default_factory=dict)           # id -> p4i.Action
    counters: dict = field(default_factory=dict)
    direct_counters: dict = field(default_factory=dict)   # table id -> p4i.DirectCounter
    meters: dict = field(default_factory=dict)
    direct_meters: dict = field(default_factory=dict)     # table id -> p4i.DirectMeter
    registers: dict = field(default_factory=dict)
    digests: dict = field(default_factory=dict)           # id -> p4i.Digest
    digest_names: dict = field(default_factory=dict)      # model digest name -> id
    packet_in: p4i.ControllerPacketMetadata | None = None
    packet_out: p4i.ControllerPacketMetadata | None = None
    digest_state: dict = field(default_factory=dict)      # digest id -> _DigestState
    extras: dict = field(default_factory=dict)   # (table, key, prio) -> (cookie, metadata, idle)
    mc_groups: dict = field(default_factory=dict)         # id -> MulticastGroupEntry as written
    clone_sessions: dict = field(default_factory=dict)    # id -> CloneSessionEntry as written

    @classmethod
    def of(cls, config: p4r.ForwardingPipelineConfig, switch) -> _Pipeline:
        info = config.p4info
        pl = cls(config, switch)
        pl.actions = {a.preamble.id: a for a in info.actions}
        for t in info.tables:
            pl.tables[t.preamble.id] = pl._table(t)
        pl.counters = {c.preamble.id: c for c in info.counters}
        pl.meters = {m.preamble.id: m for m in info.meters}
        pl.registers = {r.preamble.id: r for r in info.registers}
        pl.direct_counters = {d.direct_table_id: d for d in info.direct_counters}
        pl.direct_meters = {d.direct_table_id: d for d in info.direct_meters}
        pl.digests = {d.preamble.id: d for d in info.digests}
        pl.digest_names = {d.preamble.name.rsplit(".", 1)[-1]: d.preamble.id
                           for d in info.digests}
        for m in info.controller_packet_metadata:
            if m.preamble.name == "packet_in":
                pl.packet_in = m
            elif m.preamble.name == "packet_out":
                pl.packet_out = m
        for kind, pool in (("counter", pl.counters), ("meter", pl.meters),
                           ("register", pl.registers)):
            for obj in pool.values():
                pl.extern(kind, obj)        # every extern of the P4Info exists in the model
        return pl

    def _table(self, t: p4i.Table) -> _TableSpec:
        name = t.preamble.name
        try:
            mt = self.switch.table(name)
        except ControlPlaneError:
            _fail(rpc_code.INVALID_ARGUMENT, f"the P4Info's table {name} is not in the program")
        by_name = {f.name: f for f in t.match_fields}
        if [k.name for k in mt.keys] != [f.name for f in t.match_fields]:
            _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: the P4Info's match fields are not "
                                             f"the program's key")
        fields, order, absent, exact_mask = {}, [], [], 0
        for pos, k in enumerate(mt.keys):
            f = by_name[k.name]
            kind = _KIND.get(f.match_type)
            if kind is None or kind != k.kind or f.bitwidth != k.width:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}, {k.name}: the P4Info says "
                                                 f"{kind}/{f.bitwidth} bits, the program "
                                                 f"{k.kind}/{k.width}")
            fields[f.id] = (pos, kind, f.bitwidth, f.name)
            order.append((f.id, kind, f.bitwidth))
            full = (1 << f.bitwidth) - 1
            absent.append({"exact": None, "lpm": (0, 0), "ternary": (0, 0), "range": (0, full),
                           "optional": None}[kind])
            if kind == "exact":
                exact_mask |= 1 << pos
        actions = {}
        for ref in t.action_refs:
            a = self.actions.get(ref.id)
            if a is None:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: action id {ref.id} is not in "
                                                 f"the P4Info")
            try:
                info = mt.action(a.preamble.name)
            except ControlPlaneError:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: the program's table has no "
                                                 f"action {a.preamble.name}")
            widths = {n: (i, w) for i, (n, w) in enumerate(info.params)}
            params, ids = {}, [0] * len(info.params)
            for p in a.params:
                if p.name not in widths or widths[p.name][1] != p.bitwidth:
                    _fail(rpc_code.INVALID_ARGUMENT, f"action {a.preamble.name}: parameter "
                                                     f"{p.name} differs from the program's")
                pos = widths[p.name][0]
                params[p.id] = (pos, p.bitwidth, p.name)
                ids[pos] = p.id
            if len(params) != len(info.params):
                _fail(rpc_code.INVALID_ARGUMENT, f"action {a.preamble.name}: the P4Info lists "
                                                 f"{len(params)} parameters, the program "
                                                 f"{len(info.params)}")
            actions[ref.id] = _ActionRef(ref.id, a.preamble.name, ref.scope, info, params,
                                         tuple(ids))
        kinds = {k for _, k, _ in order}
        return _TableSpec(
            id=t.preamble.id, name=name, info=t, model=mt, fields=fields, order=tuple(order),
            absent=tuple(absent), exact_mask=exact_mask,
            priority=bool(kinds & {"ternary", "range", "optional"}), actions=actions,
            by_model_action={r.info.name: r for r in actions.values()},
            const_default=bool(t.const_default_action_id) or bool(mt.default_const),
            idle=t.idle_timeout_behavior != p4i.Table.NO_TIMEOUT, known_actions=self.actions)

    def table(self, ident: int) -> _TableSpec:
        t = self.tables.get(ident)
        if t is None:
            _fail(rpc_code.INVALID_ARGUMENT, f"no table with id {ident} in the P4Info")
        return t

    def get(self, pool: dict, ident: int, what: str):
        obj = pool.get(ident)
        if obj is None:
            _fail(rpc_code.INVALID_ARGUMENT, f"no {what} with id {ident} in the P4Info")
        return obj

    def extern(self, kind: str, obj):
        """The model's state of a P4Info counter / meter / register."""
        from .externs import CounterArray, MeterArray, RegisterArray

        cls = {"counter": CounterArray, "meter": MeterArray, "register": RegisterArray}[kind]
        try:
            return self.switch._extern(obj.preamble.name, cls, kind)
        except ControlPlaneError:
            _fail(rpc_code.INVALID_ARGUMENT, f"the P4Info's {kind} {obj.preamble.name} is not "
                                             f"in the program")


# --- streams and arbitration -------------------------------------------------------------------

@dataclass(eq=False)
class _Stream:
    """One StreamChannel: its outgoing queue and, once arbitrated, its election id."""

    out: queue.Queue = field(default_factory=queue.Queue)
    arbitrated: bool = False
    election_id: int | None = None


class _Abort:
    def __init__(self, code: int, message: str) -> None:
        self.code, self.message = code, message


class _BatchError(Exception):
    def __init__(self, errors: list, summary: str) -> None:
        super().__init__(summary)
        self.errors, self.summary = errors, summary


# --- the servicer ------------------------------------------------------------------------------

class P4RuntimeModelServer(p4r_grpc.P4RuntimeServicer):
    """P4Runtime for one embedded model switch (device id ``device_id``)."""

    def __init__(self, *, device_id: int = 1, cpu_port: int = 255) -> None:
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.active: _Pipeline | None = None      # what packets run
        self.saved: _Pipeline | None = None       # VERIFY_AND_SAVE'd, addressed by Read/Write
        self._lock = threading.RLock()
        self._streams: set[_Stream] = set()       # every open stream
        self._live: list[_Stream] = []            # the arbitrated ones
        self._primary: _Stream | None = None
        self._highest: int | None = None          # the highest election id ever seen
        self._list_id = 0
        self._grpc: grpc.Server | None = None
        self.address = ""

    # the committed pipeline, as ModelTarget and tools see it
    @property
    def switch(self):
        return self.active.switch if self.active is not None else None

    @property
    def config(self) -> p4r.ForwardingPipelineConfig | None:
        return self.active.config if self.active is not None else None

    @property
    def pipeline(self) -> _Pipeline | None:
        """The pipeline Read and Write address: the saved one, else the committed one."""
        return self.saved if self.saved is not None else self.active

    # -- life cycle ---------------------------------------------------------------------------
    def start(self, address: str = "127.0.0.1:0") -> str:
        """Serve on *address* (loopback, a free port by default); returns ``host:port``."""
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                             options=[("grpc.max_receive_message_length", 256 << 20),
                                      ("grpc.max_send_message_length", 256 << 20)])
        p4r_grpc.add_P4RuntimeServicer_to_server(self, server)
        host = address.rsplit(":", 1)[0]
        try:
            port = server.add_insecure_port(address)
        except RuntimeError:
            port = 0
        if port == 0:
            raise TargetError(f"cannot listen on {address}", hint="is the port in use?")
        server.start()
        self._grpc, self.address = server, f"{host}:{port}"
        return self.address

    def stop(self, grace: float = 0.5) -> None:
        if self._grpc is not None:
            with self._lock:
                for s in list(self._streams):
                    s.out.put(None)
                for pl in (self.active, self.saved):
                    if pl is not None:
                        self._stop_digests(pl)
            self._grpc.stop(grace).wait()
            self._grpc = None

    # -- RPCs ----------------------------------------------------------------------------------
    def Capabilities(self, request, context):
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RT_API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):
        return self._rpc(context, self._set_pipeline, request)

    def GetForwardingPipelineConfig(self, request, context):
        return self._rpc(context, self._get_pipeline, request)

    def Write(self, request, context):
        return self._rpc(context, self._write, request)

    def Read(self, request, context):
        try:
            self._check_device(request)
            if request.role:
                _fail(rpc_code.NOT_FOUND, f"no role {request.role!r} (the server knows only "
                                          f"the default role)")
            with self._lock:
                if self.pipeline is None:
                    _fail(rpc_code.FAILED_PRECONDITION, _NO_PIPELINE)
                responses, errors = self._read(request)
        except P4RTError as e:
            context.abort(_status_code(e.code), e.message)
        yield from responses
        if any(e.canonical_code != rpc_code.OK for e in errors):
            bad = [f"entity {i}: {e.message}" for i, e in enumerate(errors)
                   if e.canonical_code != rpc_code.OK]
            self._abort_batch(context, _BatchError(errors, "; ".join(bad[:3])))

    def StreamChannel(self, request_iterator, context):
        stream = _Stream()
        with self._lock:
            self._streams.add(stream)

        def reader():
            try:
                for msg in request_iterator:
                    abort = self._stream_request(msg, stream)
                    if abort is not None:
                        stream.out.put(abort)
                        return
            except Exception:               # the client went away (or the server stops)
                pass
            finally:
                self._stream_closed(stream)
                stream.out.put(None)

        threading.Thread(target=reader, daemon=True, name="p4rt-stream").start()
        while True:
            try:
                item = stream.out.get(timeout=0.5)
            except queue.Empty:
                if not context.is_active():
                    return
                continue
            if item is None:
                return
            if isinstance(item, _Abort):
                context.abort(_status_code(item.code), item.message)
            yield item

    # -- plumbing ------------------------------------------------------------------------------
    def _check_device(self, request) -> None:
        if request.device_id != self.device_id:
            _fail(rpc_code.NOT_FOUND, f"no device {request.device_id} (this switch is "
                                      f"device {self.device_id})")

    def _rpc(self, context, fn, request):
        try:
            self._check_device(request)
            with self._lock:
                return fn(request)
        except P4RTError as e:
            context.abort(_status_code(e.code), e.message)
        except _BatchError as e:
            self._abort_batch(context, e)
        except Exception as e:                  # a bug, not the request's fault
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {e!r}")

    @staticmethod
    def _abort_batch(context, e: _BatchError) -> None:
        status = rpc_status.Status(code=rpc_code.UNKNOWN, message=e.summary)
        for err in e.errors:
            status.details.append(_any(err))
        context.set_trailing_metadata((("grpc-status-details-bin",
                                        status.SerializeToString()),))
        context.abort(grpc.StatusCode.UNKNOWN, e.summary)

    def _check_role(self, request) -> None:
        if request.role or getattr(request, "role_id", 0):
            _fail(rpc_code.NOT_FOUND, f"no role {request.role or request.role_id!r} (the server "
                                      f"knows only the default role)")

    def _check_primary(self, request, what: str) -> None:
        eid = _eid(request)
        p = self._primary
        if p is None or eid is None or p.election_id != eid:
            who = "unset" if eid is None else str(eid)
            _fail(rpc_code.PERMISSION_DENIED,
                  f"{what}: election id {who} is not the primary's"
                  + (f" ({p.election_id})" if p is not None else " (there is no primary)"))

    # -- arbitration ---------------------------------------------------------------------------
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

    # -- pipeline ------------------------------------------------------------------------------
    def _set_pipeline(self, request):
        A = p4r.SetForwardingPipelineConfigRequest
        self._check_role(request)
        self._check_primary(request, "SetForwardingPipelineConfig")
        action = request.action
        if action == A.COMMIT:
            if request.HasField("config"):
                _fail(rpc_code.INVALID_ARGUMENT, "COMMIT takes no config (it commits the one "
                                                 "VERIFY_AND_SAVE saved)")
            if self.saved is None:
                _fail(rpc_code.NOT_FOUND, "COMMIT: no saved pipeline config (send "
                                          "VERIFY_AND_SAVE first)")
            self._activate(self.saved)
            return p4r.SetForwardingPipelineConfigResponse()
        if action not in (A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT,
                          A.RECONCILE_AND_COMMIT):
            _fail(rpc_code.INVALID_ARGUMENT, "SetForwardingPipelineConfig: the action is "
                                             "unspecified")
        if not request.HasField("config"):
            _fail(rpc_code.INVALID_ARGUMENT, f"{A.Action.Name(action)} needs a config")
        pl = self._verify(request.config)
        if action == A.VERIFY_AND_SAVE:
            if self.saved is not None:
                self._stop_digests(self.saved)
            self.saved = pl
        elif action == A.VERIFY_AND_COMMIT:
            self._activate(pl)
        elif action == A.RECONCILE_AND_COMMIT:
            if self.active is not None:
                self._reconcile(self.active, pl)
            self._activate(pl)
        return p4r.SetForwardingPipelineConfigResponse()

    def _activate(self, pl: _Pipeline) -> None:
        for old in (self.active, self.saved):
            if old is not None and old is not pl:
                self._stop_digests(old)
        self.active, self.saved = pl, None

    def _verify(self, config: p4r.ForwardingPipelineConfig) -> _Pipeline:
        from ...codegen.p4info import build_p4info, compare_p4info
        from .switch import ModelSwitch

        try:
            text = config.p4_device_config.decode()
        except UnicodeDecodeError:
            _fail(rpc_code.INVALID_ARGUMENT, "p4_device_config must be the P4 program's text "
                                             "(UTF-8) for sfclab's model switch")
        if not text.strip():
            _fail(rpc_code.INVALID_ARGUMENT, "p4_device_config is empty: the model switch "
                                             "needs the P4 program's text")
        try:
            switch = ModelSwitch(text, cpu_port=self.cpu_port)
            ours = build_p4info(switch.program)
        except Exception as e:           # the program's errors, whatever raises them
            _fail(rpc_code.INVALID_ARGUMENT, f"the program does not run on the model: {e}")
        diffs = compare_p4info(ours, config.p4info)
        if diffs:
            _fail(rpc_code.INVALID_ARGUMENT, "the P4Info does not match the program: "
                                             + "; ".join(diffs[:5]))
        return _Pipeline.of(config, switch)

    def _reconcile(self, old: _Pipeline, new: _Pipeline) -> None:
        """Carry *old*'s forwarding state into *new*; INVALID_ARGUMENT (and nothing changes)
        when some of it has no place there."""
        def cannot(why: str):
            _fail(rpc_code.INVALID_ARGUMENT, f"RECONCILE_AND_COMMIT: the forwarding state "
                                             f"cannot be kept: {why}")
        sw, nsw = old.switch, new.switch
        for name, ot in sw.tables.items():
            entries = [e for e in ot.entries.values() if not e.const]
            changed = ot.default is not ot.initial_default
            if not entries and not changed:
                continue
            nt = nsw.tables.get(name)
            if nt is None:
                cannot(f"the new program has no table {name}")
            if [(k.name, k.kind, k.width) for k in ot.keys] != \
                    [(k.name, k.kind, k.width) for k in nt.keys]:
                cannot(f"table {name} has another key in the new program")
            if len(entries) + len(nt.entries) > nt.size:
                cannot(f"table {name} holds {len(entries)} entries, more than its new size")

            def same(a):
                na = nt.actions.get(a.name)
                if na is None or na.params != a.params:
                    cannot(f"table {name}: action {a.name} is not the same in the new program")
                return na
            for e in entries:
                ne = nt.make_entry(e.match, e.priority, same(e.action), e.args)
                if nt.counter_kind:
                    ne.packets, ne.bytes = e.packets, e.bytes
                if nt.meter_kind:
                    ne.meter = e.meter
                nt.entries[(e.match, e.priority)] = ne
            if changed:
                if nt.default_const:
                    cannot(f"table {name}'s default action is const in the new program")
                nt.default = (same(ot.default[0]), ot.default[1])
            nt.reindex()
        new.extras.update((k, v) for k, v in old.extras.items() if k[0] in nsw.tables)
        for name, ext in sw.externs.items():
            st, nst = ext.state, getattr(nsw.externs.get(name), "state", None)
            kind = type(st).__name__
            if kind == "RegisterArray" and any(st.cells):
                if type(nst).__name__ != kind or (nst.size, nst.width, nst.signed) != \
                        (st.size, st.width, st.signed):
                    cannot(f"register {name} is not the same in the new program")
                nst.cells[:] = st.cells
            elif kind == "CounterArray" and (any(st.packets) or any(st.bytes)):
                if type(nst).__name__ != kind or nst.size != st.size:
                    cannot(f"counter {name} is not the same in the new program")
                nst.packets[:], nst.bytes[:] = st.packets, st.bytes
            elif kind == "MeterArray" and any(m.configured for m in st.meters):
                if type(nst).__name__ != kind or (nst.size, nst.kind) != (st.size, st.kind):
                    cannot(f"meter {name} is not the same in the new program")
                nst.meters[:] = st.meters
        nsw.mc_groups.update(sw.mc_groups)
        nsw.clone_sessions.update(sw.clone_sessions)
        new.mc_groups.update(old.mc_groups)
        new.clone_sessions.update(old.clone_sessions)
        by_name = {d.preamble.name: i for i, d in new.digests.items()}
        for i, st in old.digest_state.items():
            ni = by_name.get(old.digests[i].preamble.name)
            if ni is None:
                cannot(f"digest {old.digests[i].preamble.name} is not in the new program")
            new.digest_state[ni] = _DigestState(st.config)

    def _get_pipeline(self, request):
        R = p4r.GetForwardingPipelineConfigRequest
        resp = p4r.GetForwardingPipelineConfigResponse()
        if self.active is None:
            return resp                 # P4Runtime: the config field stays unset
        stored = self.active.config
        cfg = resp.config
        cfg.SetInParent()
        if request.response_type in (R.ALL, R.P4INFO_AND_COOKIE):
            cfg.p4info.CopyFrom(stored.p4info)
        if request.response_type in (R.ALL, R.DEVICE_CONFIG_AND_COOKIE):
            cfg.p4_device_config = stored.p4_device_config
        if stored.HasField("cookie"):
            cfg.cookie.CopyFrom(stored.cookie)
        return resp

    # -- writes --------------------------------------------------------------------------------
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
        dirty: set = set()               # tables whose lookup index must be rebuilt
        try:
            for u in request.updates:
                mark = len(undo) if rollback else 0
                try:
                    self._update(pl, u, undo, dirty)
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
        finally:
            for t in dirty:
                t.reindex()
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

    def _update(self, pl: _Pipeline, u: p4r.Update, undo, dirty) -> None:
        kind = u.entity.WhichOneof("entity")
        if kind is None:
            _fail(rpc_code.INVALID_ARGUMENT, "the update has no entity")
        if u.type not in (_U.INSERT, _U.MODIFY, _U.DELETE):
            _fail(rpc_code.INVALID_ARGUMENT, "the update type is unspecified")
        handler = getattr(self, f"_w_{kind}", None)
        if handler is None:
            _fail(rpc_code.UNIMPLEMENTED, f"the model does not support {kind} entities")
        handler(pl, getattr(u.entity, kind), u.type, undo, dirty)

    # table entries
    def _w_table_entry(self, pl: _Pipeline, te: p4r.TableEntry, op: int, undo, dirty) -> None:
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
            entries[ident] = e
            _index_add(mt, e, dirty)
            xkey = (name, key, prio)
            if te.controller_metadata or te.metadata or te.idle_timeout_ns:
                pl.extras[xkey] = (te.controller_metadata, te.metadata, te.idle_timeout_ns)
            if undo is not None:
                def undo_insert():
                    entries.pop(ident, None)
                    pl.extras.pop(xkey, None)
                    _index_remove(mt, e, dirty)
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
            del entries[ident]
            pl.extras.pop(xkey, None)
            _index_remove(mt, e, dirty)
            if undo is not None:
                def undo_delete():
                    entries[ident] = e
                    if old_x is not None:
                        pl.extras[xkey] = old_x
                    _index_add(mt, e, dirty)
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
        from .externs import Meter

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

    # externs
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

    def _w_counter_entry(self, pl: _Pipeline, ce: p4r.CounterEntry, op: int, undo, dirty):
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
                                undo, dirty):
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

    def _w_meter_entry(self, pl: _Pipeline, me: p4r.MeterEntry, op: int, undo, dirty):
        m = pl.get(pl.meters, me.meter_id, "meter")
        name = m.preamble.name
        if op != _U.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: meter entries can only be MODIFY'd")
        if me.HasField("counter_data"):
            _fail(rpc_code.UNIMPLEMENTED, "the model has no per-colour meter counters")
        st = pl.extern("meter", m)
        idx = self._indexes(me, st.size, name)
        from .externs import Meter

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

    def _w_direct_meter_entry(self, pl: _Pipeline, dm: p4r.DirectMeterEntry, op: int, undo,
                              dirty):
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

    def _w_register_entry(self, pl: _Pipeline, re_: p4r.RegisterEntry, op: int, undo, dirty):
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

    def _w_packet_replication_engine_entry(self, pl: _Pipeline, pre, op: int, undo, dirty):
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
                port = (decode_int(r.port, 32, f"{what} {ident}: port") if r.port
                        else r.egress_port)
                if (port, r.instance) in seen:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what} {ident}: replica (port {port}, "
                                                     f"instance {r.instance}) is given twice")
                seen.add((port, r.instance))
                reps.append((port, r.instance))
            if kind == "multicast_group_entry":
                if ident >= 1 << 16:
                    _fail(rpc_code.INVALID_ARGUMENT, f"multicast group id {ident} is not in "
                                                     f"1..65535")
                sw.set_multicast_group(ident, reps)
            else:
                if ident >= 1 << 15:
                    _fail(rpc_code.INVALID_ARGUMENT, f"clone session id {ident} is not in "
                                                     f"1..32767")
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

    def _w_digest_entry(self, pl: _Pipeline, de: p4r.DigestEntry, op: int, undo, dirty):
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

    # -- reads ---------------------------------------------------------------------------------
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

    # -- packets -------------------------------------------------------------------------------
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
            st.timer = threading.Timer(cfg.max_timeout_ns / 1e9, self._digest_timeout,
                                       (pl, ident, st))
            st.timer.daemon = True
            st.timer.start()

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


# --- the model's lookup index, kept up to date entry by entry ---------------------------------
#
# Table.insert / Table.delete (tables.py) rebuild a table's whole lookup index after
# each entry: O(n) per update, O(n^2) for a FIB.  A Write updates the index in place
# instead (the lookup closure holds the same dict / list object): exact tables are a
# dict, LPM tables a list of (position, mask, dict) levels longest prefix first,
# the others a list sorted by (-priority, seq).  A table whose index does not have the
# expected shape is rebuilt once at the end of the batch instead.

def _prio_key(e) -> tuple:
    return (-e.priority, e.seq)


def _lpm_place(mt, e) -> tuple | None:
    li = next(i for i, k in enumerate(mt.keys) if k.kind == "lpm")
    v, plen = e.match[li]
    w = mt.keys[li].width
    mask = ((1 << w) - 1) ^ ((1 << (w - plen)) - 1)
    key = tuple(m if i != li else v for i, m in enumerate(e.match))
    return li, mask, key


def _index_add(mt, e, dirty: set) -> None:
    if mt in dirty:
        return
    idx, mode = mt.index, mt.mode
    if mode == "exact" and type(idx) is dict:
        idx[e.match[0] if len(mt.keys) == 1 else e.match] = e
    elif mode == "priority" and type(idx) is list:
        bisect.insort(idx, e, key=_prio_key)
    elif mode == "lpm" and type(idx) is list:
        li, mask, key = _lpm_place(mt, e)
        for pos, (_, m, d) in enumerate(idx):
            if m == mask:
                d[key] = e
                return
            if m < mask:
                idx.insert(pos, (li, mask, {key: e}))
                return
        idx.append((li, mask, {key: e}))
    else:
        dirty.add(mt)


def _index_remove(mt, e, dirty: set) -> None:
    if mt in dirty:
        return
    idx, mode = mt.index, mt.mode
    if mode == "exact" and type(idx) is dict:
        idx.pop(e.match[0] if len(mt.keys) == 1 else e.match, None)
    elif mode == "priority" and type(idx) is list:
        i = bisect.bisect_left(idx, _prio_key(e), key=_prio_key)
        if i < len(idx) and idx[i] is e:
            del idx[i]
        else:
            dirty.add(mt)
    elif mode == "lpm" and type(idx) is list:
        _, mask, key = _lpm_place(mt, e)
        for pos, (_, m, d) in enumerate(idx):
            if m == mask:
                d.pop(key, None)
                if not d:
                    del idx[pos]
                return
    else:
        dirty.add(mt)


def _meter_config(out: p4r.MeterConfig, meter) -> None:
    cir, cburst, pir, pburst = meter.config()
    out.cir, out.cburst = round(cir * 1e6), cburst
    out.pir, out.pburst = round(pir * 1e6), pburst


def _any(msg) -> any_pb2.Any:
    a = any_pb2.Any()
    a.Pack(msg)
    return a


def _status_code(code: int) -> grpc.StatusCode:
    """The gRPC status of a canonical (google.rpc) code."""
    return next((sc for sc in grpc.StatusCode if sc.value[0] == code), grpc.StatusCode.UNKNOWN)


def start(address: str = "127.0.0.1:0", *, device_id: int = 1,
          cpu_port: int = 255) -> P4RuntimeModelServer:
    """Start a model switch's P4Runtime server (loopback, a free port by default)."""
    server = P4RuntimeModelServer(device_id=device_id, cpu_port=cpu_port)
    server.start(address)
    return server
