"""A P4Runtime server in front of the embedded switch model.

Any P4Runtime client — sfclab's runtime, finsy, p4runtime-shell — drives the
model as it drives BMv2: ``SetForwardingPipelineConfig`` takes a P4Info and,
as ``p4_device_config``, the P4 program text (sfclab parses and runs it);
``Write`` / ``Read`` work on table entries (with default entries and wildcard
reads), counters, direct counters, registers, meters, multicast groups and
clone sessions; ``StreamChannel`` does arbitration (election ids, primary
and backups), packet-out / packet-in through the CPU port, and digests.
Errors follow the P4Runtime specification: a failed ``Write`` answers
``UNKNOWN`` with one ``p4.v1.Error`` per update in the status details
(``ALREADY_EXISTS``, ``NOT_FOUND``, ``RESOURCE_EXHAUSTED``, ``INVALID_ARGUMENT``,
``OUT_OF_RANGE``, ``PERMISSION_DENIED`` …), and a failed update changes nothing.

The server listens on 127.0.0.1 (a free port unless one is given):

>>> server = start()                      # doctest: +SKIP
>>> server.address                         # doctest: +SKIP
'127.0.0.1:40123'
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from finsy.proto import p4d, p4i, p4r, p4r_grpc, rpc_code, rpc_status
from google.protobuf import any_pb2

from ...errors import SfclabError, TargetError
from .errors import (ControlPlaneError, EntryExistsError, EntryNotFoundError, InvalidValueError,
                     ReadOnlyError, TableFullError, UnknownNameError)

__all__ = ["P4RuntimeModelServer", "start", "P4RT_API_VERSION"]

P4RT_API_VERSION = "1.3.0"

_CODES = {EntryExistsError: rpc_code.ALREADY_EXISTS, EntryNotFoundError: rpc_code.NOT_FOUND,
          TableFullError: rpc_code.RESOURCE_EXHAUSTED, ReadOnlyError: rpc_code.PERMISSION_DENIED,
          UnknownNameError: rpc_code.NOT_FOUND, InvalidValueError: rpc_code.INVALID_ARGUMENT}


class P4RTError(Exception):
    """One refused update or request, with its canonical code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _fail(code: int, message: str):
    raise P4RTError(code, message)


# --- values ------------------------------------------------------------------------------------

def decode_int(data: bytes, bitwidth: int, what: str) -> int:
    """A P4Runtime bytestring as an int; OUT_OF_RANGE when it does not fit *bitwidth*."""
    if not data:
        _fail(rpc_code.INVALID_ARGUMENT, f"{what}: empty bytestring")
    v = int.from_bytes(data, "big")
    if bitwidth and v >> bitwidth:
        _fail(rpc_code.OUT_OF_RANGE, f"{what}: value 0x{v:x} does not fit in {bitwidth} bits")
    return v


def encode_int(v: int) -> bytes:
    """The canonical (shortest) P4Runtime bytestring of *v*."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


# --- the P4Info, indexed ------------------------------------------------------------------------

@dataclass
class _Index:
    info: p4i.P4Info
    tables: dict[int, p4i.Table] = field(default_factory=dict)
    actions: dict[int, p4i.Action] = field(default_factory=dict)
    counters: dict[int, p4i.Counter] = field(default_factory=dict)
    direct_counters: dict[int, p4i.DirectCounter] = field(default_factory=dict)
    meters: dict[int, p4i.Meter] = field(default_factory=dict)
    registers: dict[int, p4i.Register] = field(default_factory=dict)
    digests: dict[int, p4i.Digest] = field(default_factory=dict)
    packet_in: p4i.ControllerPacketMetadata | None = None
    packet_out: p4i.ControllerPacketMetadata | None = None

    @classmethod
    def of(cls, info: p4i.P4Info) -> _Index:
        ix = cls(info)
        for kind in ("tables", "actions", "counters", "direct_counters", "meters", "registers",
                     "digests"):
            setattr(ix, kind, {o.preamble.id: o for o in getattr(info, kind)})
        for m in info.controller_packet_metadata:
            if m.preamble.name == "packet_in":
                ix.packet_in = m
            elif m.preamble.name == "packet_out":
                ix.packet_out = m
        return ix

    def get(self, kind: str, ident: int, what: str):
        obj = getattr(self, kind).get(ident)
        if obj is None:
            _fail(rpc_code.NOT_FOUND, f"no {what} with id {ident} in the P4Info")
        return obj


# --- the servicer ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Client:
    election_id: int
    out: queue.Queue = field(default_factory=queue.Queue)


class P4RuntimeModelServer(p4r_grpc.P4RuntimeServicer):
    """P4Runtime for one embedded model switch (device id ``device_id``)."""

    def __init__(self, *, device_id: int = 1, cpu_port: int = 255) -> None:
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.switch = None               # ModelSwitch, once a pipeline is committed
        self.index: _Index | None = None
        self.config: p4r.ForwardingPipelineConfig | None = None
        self._saved: tuple | None = None
        self._lock = threading.RLock()
        self._clients: list[_Client] = []
        self._digest_config: dict[int, p4r.DigestEntry.Config] = {}
        self._digest_list_id = 0
        self._grpc: grpc.Server | None = None
        self.address = ""

    # -- life cycle ---------------------------------------------------------------------------
    def start(self, address: str = "127.0.0.1:0") -> str:
        """Serve on *address* (loopback, a free port by default); returns ``host:port``."""
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        p4r_grpc.add_P4RuntimeServicer_to_server(self, server)
        host = address.rsplit(":", 1)[0]
        port = server.add_insecure_port(address)
        if port == 0:
            raise TargetError(f"cannot listen on {address}", hint="is the port in use?")
        server.start()
        self._grpc, self.address = server, f"{host}:{port}"
        return self.address

    def stop(self, grace: float = 0.5) -> None:
        if self._grpc is not None:
            for c in list(self._clients):
                c.out.put(None)
            self._grpc.stop(grace).wait()
            self._grpc = None

    # -- arbitration ----------------------------------------------------------------------------
    def _primary(self) -> _Client | None:
        return max(self._clients, key=lambda c: c.election_id, default=None)

    def _check_primary(self, election, what: str) -> None:
        eid = (election.high << 64) | election.low
        p = self._primary()
        if p is None or p.election_id != eid:
            _fail(rpc_code.PERMISSION_DENIED,
                  f"{what}: election id {eid} is not the primary's"
                  + (f" ({p.election_id})" if p else " (no client has arbitrated)"))

    def _announce(self) -> None:
        p = self._primary()
        for c in self._clients:
            msg = p4r.StreamMessageResponse()
            a = msg.arbitration
            a.device_id = self.device_id
            if p is not None:
                a.election_id.high, a.election_id.low = p.election_id >> 64, p.election_id & (2**64 - 1)
            a.status.code = rpc_code.OK if c is p else rpc_code.ALREADY_EXISTS
            a.status.message = "primary" if c is p else "backup"
            c.out.put(msg)

    # -- RPCs -----------------------------------------------------------------------------------
    def Capabilities(self, request, context):
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RT_API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):
        return self._rpc(context, self._set_pipeline, request)

    def GetForwardingPipelineConfig(self, request, context):
        return self._rpc(context, self._get_pipeline, request)

    def Write(self, request, context):
        return self._rpc(context, self._write, request)

    def Read(self, request, context):
        resp = self._rpc(context, self._read, request)
        if resp is not None:
            yield resp

    def StreamChannel(self, request_iterator, context):
        client: _Client | None = None

        def reader():
            nonlocal client
            try:
                for msg in request_iterator:
                    client = self._stream_request(msg, client, context) or client
            except grpc.RpcError:
                pass
            finally:
                with self._lock:
                    if client in self._clients:
                        self._clients.remove(client)
                        self._announce()
                if client is not None:
                    client.out.put(None)
                else:
                    done.put(None)

        done: queue.Queue = queue.Queue()
        threading.Thread(target=reader, daemon=True).start()
        while client is None:          # until arbitration (or the stream ends first)
            try:
                done.get(timeout=0.05)
                return
            except queue.Empty:
                if not context.is_active():
                    return
        while True:
            msg = client.out.get()
            if msg is None:
                return
            yield msg

    # -- plumbing ------------------------------------------------------------------------------
    def _rpc(self, context, fn, request):
        try:
            if request.device_id != self.device_id:
                _fail(rpc_code.NOT_FOUND, f"no device {request.device_id} (this switch is "
                                          f"device {self.device_id})")
            with self._lock:
                return fn(request)
        except P4RTError as e:
            context.abort(_status_code(e.code), e.message)
        except _BatchError as e:
            status = rpc_status.Status(code=rpc_code.UNKNOWN, message=e.summary)
            for err in e.errors:
                status.details.append(_any(err))
            context.set_trailing_metadata((("grpc-status-details-bin",
                                            status.SerializeToString()),))
            context.abort(grpc.StatusCode.UNKNOWN, e.summary)

    def _stream_request(self, msg, client: _Client | None, context) -> _Client | None:
        kind = msg.WhichOneof("update")
        with self._lock:
            if kind == "arbitration":
                a = msg.arbitration
                if a.device_id != self.device_id:
                    context.abort(grpc.StatusCode.NOT_FOUND, f"no device {a.device_id}")
                eid = (a.election_id.high << 64) | a.election_id.low
                if client is None:
                    if any(c.election_id == eid for c in self._clients):
                        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                      f"election id {eid} is already used by another client")
                    client = _Client(eid)
                    self._clients.append(client)
                else:
                    client.election_id = eid
                self._announce()
                return client
            if client is None:
                return None            # P4Runtime: arbitration comes first; ignore the rest
            if kind == "packet":
                self._packet_out(msg.packet, client)
            elif kind == "digest_ack":
                pass
        return client

    def _primary_out(self, msg) -> None:
        p = self._primary()
        if p is not None:
            p.out.put(msg)

    # -- pipeline ------------------------------------------------------------------------------
    def _set_pipeline(self, request):
        A = p4r.SetForwardingPipelineConfigRequest
        self._check_primary(request.election_id, "SetForwardingPipelineConfig")
        if request.action == A.COMMIT:
            if self._saved is None:
                _fail(rpc_code.FAILED_PRECONDITION, "COMMIT: no saved pipeline config "
                                                    "(send VERIFY_AND_SAVE first)")
            self._commit(*self._saved, reconcile=False)
            return p4r.SetForwardingPipelineConfigResponse()
        if request.action not in (A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT,
                                  A.RECONCILE_AND_COMMIT):
            _fail(rpc_code.INVALID_ARGUMENT, "SetForwardingPipelineConfig: unspecified action")
        switch = self._verify(request.config)
        if request.action == A.VERIFY_AND_SAVE:
            self._saved = (request.config, switch)
        elif request.action in (A.VERIFY_AND_COMMIT, A.RECONCILE_AND_COMMIT):
            self._commit(request.config, switch,
                         reconcile=request.action == A.RECONCILE_AND_COMMIT)
        return p4r.SetForwardingPipelineConfigResponse()

    def _verify(self, config: p4r.ForwardingPipelineConfig):
        from ...codegen.p4info import build_p4info, compare_p4info
        from .switch import ModelSwitch

        try:
            text = config.p4_device_config.decode()
        except UnicodeDecodeError:
            _fail(rpc_code.INVALID_ARGUMENT, "p4_device_config must be the P4 program's text "
                                             "(UTF-8) for sfclab's model switch")
        try:
            switch = ModelSwitch(text, cpu_port=self.cpu_port)
            ours = build_p4info(switch.program)
        except SfclabError as e:
            _fail(rpc_code.INVALID_ARGUMENT, f"the program does not run on the model: {e}")
        diffs = compare_p4info(ours, config.p4info)
        if diffs:
            _fail(rpc_code.INVALID_ARGUMENT, "the P4Info does not match the program: "
                                             + "; ".join(diffs[:5]))
        return switch

    def _commit(self, config, switch, *, reconcile: bool) -> None:
        old_switch, old_index = self.switch, self.index
        self.switch, self.index, self.config = switch, _Index.of(config.p4info), config
        self._digest_config = {}
        if reconcile and old_switch is not None and old_index is not None:
            self._reconcile(old_switch)

    def _reconcile(self, old) -> None:
        """Keep the entries whose tables and actions the new program still has."""
        for name in list(old.tables):
            if name not in self.switch.tables:
                continue
            for e in old.entries(name):
                if not e.const:
                    try:
                        self.switch.insert(name, list(e.match.values()), e.action, e.params,
                                           priority=e.priority or None)
                    except ControlPlaneError:
                        pass

    def _get_pipeline(self, request):
        if self.config is None:
            _fail(rpc_code.FAILED_PRECONDITION, "no pipeline config has been set")
        R = p4r.GetForwardingPipelineConfigRequest
        cfg = p4r.ForwardingPipelineConfig()
        if request.response_type in (R.ALL, R.P4INFO_AND_COOKIE):
            cfg.p4info.CopyFrom(self.config.p4info)
        if request.response_type in (R.ALL, R.DEVICE_CONFIG_AND_COOKIE):
            cfg.p4_device_config = self.config.p4_device_config
        cfg.cookie.CopyFrom(self.config.cookie)
        return p4r.GetForwardingPipelineConfigResponse(config=cfg)

    def _need_pipeline(self):
        if self.switch is None:
            _fail(rpc_code.FAILED_PRECONDITION, "no pipeline config has been set "
                                                "(SetForwardingPipelineConfig first)")

    # -- writes --------------------------------------------------------------------------------
    def _write(self, request):
        self._need_pipeline()
        self._check_primary(request.election_id, "Write")
        W = p4r.WriteRequest
        rollback = request.atomicity in (W.ROLLBACK_ON_ERROR, W.DATAPLANE_ATOMIC)
        undo: list = []
        errors: list[p4r.Error] = []
        failed = False
        for i, u in enumerate(request.updates):
            try:
                undo.append(self._update(u))
                errors.append(p4r.Error(canonical_code=rpc_code.OK))
            except P4RTError as e:
                failed = True
                errors.append(p4r.Error(canonical_code=e.code, message=e.message))
            except ControlPlaneError as e:
                failed = True
                errors.append(p4r.Error(canonical_code=_CODES.get(type(e), rpc_code.UNKNOWN),
                                        message=e.message))
            if failed and rollback:
                break
        if failed:
            if rollback:
                for fn in reversed(undo):
                    fn()
                errors += [p4r.Error(canonical_code=rpc_code.ABORTED, message="rolled back")
                           for _ in range(len(request.updates) - len(errors))]
                errors = [p4r.Error(canonical_code=rpc_code.ABORTED, message="rolled back")
                          if e.canonical_code == rpc_code.OK else e for e in errors]
            bad = [f"update {i}: {e.message}" for i, e in enumerate(errors)
                   if e.canonical_code not in (rpc_code.OK, rpc_code.ABORTED)]
            raise _BatchError(errors, "; ".join(bad[:3]))
        return p4r.WriteResponse()

    def _update(self, u: p4r.Update):
        U = p4r.Update
        kind = u.entity.WhichOneof("entity")
        handler = getattr(self, f"_w_{kind}", None)
        if handler is None:
            _fail(rpc_code.UNIMPLEMENTED, f"writing {kind} entities is not supported by the model")
        if u.type not in (U.INSERT, U.MODIFY, U.DELETE):
            _fail(rpc_code.INVALID_ARGUMENT, "update type unspecified")
        return handler(getattr(u.entity, kind), u.type)

    def _w_table_entry(self, te: p4r.TableEntry, op: int):
        U = p4r.Update
        t = self.index.get("tables", te.table_id, "table")
        name = t.preamble.name
        if te.is_default_action:
            if op != U.MODIFY:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name}: the default entry can only be MODIFY'd")
            if te.match:
                _fail(rpc_code.INVALID_ARGUMENT, f"{name}: a default entry has no match")
            old = self.switch.default_action(name)
            if te.HasField("action"):
                act, params = self._action(t, te.action, default=True)
                self.switch.set_default(name, act, params)
            else:
                self.switch.reset_default(name)
            return lambda: self.switch.set_default(name, *old)
        match = self._match(t, te)
        prio = te.priority or None
        if op == U.DELETE:
            old = self.switch.entry(name, match, priority=prio)
            self.switch.delete(name, match, priority=prio)
            return lambda: self.switch.insert(name, match, old.action, old.params, priority=prio)
        if not te.HasField("action"):
            _fail(rpc_code.INVALID_ARGUMENT, f"{name}: an entry needs an action")
        act, params = self._action(t, te.action)
        if op == U.INSERT:
            self.switch.insert(name, match, act, params, priority=prio)
            return lambda: self.switch.delete(name, match, priority=prio)
        old = self.switch.entry(name, match, priority=prio)
        self.switch.modify(name, match, act, params, priority=prio)
        return lambda: self.switch.modify(name, match, old.action, old.params, priority=prio)

    def _match(self, t: p4i.Table, te: p4r.TableEntry) -> list:
        fields = {f.id: (k, f) for k, f in enumerate(t.match_fields)}
        out: list = [None] * len(t.match_fields)
        given = set()
        MF = p4i.MatchField
        for fm in te.match:
            if fm.field_id not in fields:
                _fail(rpc_code.INVALID_ARGUMENT, f"{t.preamble.name}: no match field "
                                                 f"{fm.field_id}")
            if fm.field_id in given:
                _fail(rpc_code.INVALID_ARGUMENT, f"{t.preamble.name}: match field "
                                                 f"{fm.field_id} given twice")
            given.add(fm.field_id)
            k, f = fields[fm.field_id]
            what = f"{t.preamble.name}, {f.name}"
            w, kind = f.bitwidth, fm.WhichOneof("field_match_type")
            want = {MF.EXACT: "exact", MF.LPM: "lpm", MF.TERNARY: "ternary", MF.RANGE: "range",
                    MF.OPTIONAL: "optional"}.get(f.match_type)
            if kind != want:
                _fail(rpc_code.INVALID_ARGUMENT, f"{what}: a {want} field, given {kind}")
            if kind == "exact":
                out[k] = decode_int(fm.exact.value, w, what)
            elif kind == "lpm":
                v, plen = decode_int(fm.lpm.value, w, what), fm.lpm.prefix_len
                if not 0 < plen <= w:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: prefix length {plen} out of "
                                                     f"1..{w} (omit the field for /0)")
                if v & ((1 << (w - plen)) - 1):
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: bits set beyond the prefix")
                out[k] = (v, plen)
            elif kind == "ternary":
                v, m = decode_int(fm.ternary.value, w, what), decode_int(fm.ternary.mask, w, what)
                if m == 0:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: a zero mask must be omitted")
                if v & ~m:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: value bits outside the mask")
                out[k] = (v, m)
            elif kind == "range":
                lo, hi = decode_int(fm.range.low, w, what), decode_int(fm.range.high, w, what)
                if lo > hi:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: low {lo} > high {hi}")
                if lo == 0 and hi == (1 << w) - 1:
                    _fail(rpc_code.INVALID_ARGUMENT, f"{what}: a full range must be omitted")
                out[k] = (lo, hi)
            else:
                out[k] = decode_int(fm.optional.value, w, what)
        for k, f in enumerate(t.match_fields):
            if f.id not in given:
                if f.match_type in (MF.EXACT,):
                    _fail(rpc_code.INVALID_ARGUMENT, f"{t.preamble.name}: exact field "
                                                     f"{f.name} is missing")
                if f.match_type == MF.RANGE:
                    out[k] = (0, (1 << f.bitwidth) - 1)
                elif f.match_type == MF.LPM:
                    out[k] = (0, 0)
        return out

    def _action(self, t: p4i.Table, ta: p4r.TableAction, default: bool = False):
        if ta.WhichOneof("type") != "action":
            _fail(rpc_code.UNIMPLEMENTED, f"{t.preamble.name}: only direct actions are supported")
        a = self.index.get("actions", ta.action.action_id, "action")
        refs = {r.id: r for r in t.action_refs}
        if a.preamble.id not in refs:
            _fail(rpc_code.INVALID_ARGUMENT, f"{t.preamble.name} has no action {a.preamble.name}")
        params = {p.id: p for p in a.params}
        got = {}
        for p in ta.action.params:
            if p.param_id not in params:
                _fail(rpc_code.INVALID_ARGUMENT, f"{a.preamble.name}: no parameter {p.param_id}")
            spec = params[p.param_id]
            got[spec.name] = decode_int(p.value, spec.bitwidth, f"{a.preamble.name}({spec.name})")
        if len(got) != len(params):
            missing = [p.name for p in a.params if p.name not in got]
            _fail(rpc_code.INVALID_ARGUMENT, f"{a.preamble.name}: missing parameter(s) "
                                             f"{', '.join(missing)}")
        return a.preamble.name, got

    def _w_register_entry(self, re_: p4r.RegisterEntry, op: int):
        if op != p4r.Update.MODIFY:
            _fail(rpc_code.INVALID_ARGUMENT, "registers can only be MODIFY'd")
        r = self.index.get("registers", re_.register_id, "register")
        name, index = r.preamble.name, re_.index.index
        bits = r.type_spec.bitstring
        width = (bits.bit or bits.int or bits.varbit).bitwidth if bits else 0
        value = decode_int(re_.data.bitstring, width, name)
        old = self.switch.read_register(name, index)
        self.switch.write_register(name, index, value)
        return lambda: self.switch.write_register(name, index, old)

    def _w_counter_entry(self, ce: p4r.CounterEntry, op: int):
        c = self.index.get("counters", ce.counter_id, "counter")
        if op != p4r.Update.MODIFY or ce.data.packet_count or ce.data.byte_count:
            _fail(rpc_code.INVALID_ARGUMENT, f"{c.preamble.name}: counters can only be reset "
                                             f"(MODIFY with zero data)")
        self.switch.reset_counter(c.preamble.name)
        return lambda: None

    def _w_packet_replication_engine_entry(self, pre: p4r.PacketReplicationEngineEntry, op: int):
        U = p4r.Update
        kind = pre.WhichOneof("type")
        if kind == "multicast_group_entry":
            g = pre.multicast_group_entry
            reps = [(r.egress_port, r.instance) for r in g.replicas]
            if op == U.DELETE:
                self.switch.delete_multicast_group(g.multicast_group_id)
                return lambda: self.switch.set_multicast_group(g.multicast_group_id, reps)
            self.switch.set_multicast_group(g.multicast_group_id, reps)
            return lambda: self.switch.delete_multicast_group(g.multicast_group_id)
        if kind == "clone_session_entry":
            s = pre.clone_session_entry
            reps = [(r.egress_port, r.instance) for r in s.replicas]
            if op == U.DELETE:
                self.switch.delete_clone_session(s.session_id)
                return lambda: self.switch.set_clone_session(s.session_id, reps)
            self.switch.set_clone_session(s.session_id, reps)
            return lambda: self.switch.delete_clone_session(s.session_id)
        _fail(rpc_code.INVALID_ARGUMENT, "empty packet replication entry")

    def _w_digest_entry(self, de: p4r.DigestEntry, op: int):
        self.index.get("digests", de.digest_id, "digest")
        old = self._digest_config.get(de.digest_id)
        if op == p4r.Update.DELETE:
            self._digest_config.pop(de.digest_id, None)
        else:
            self._digest_config[de.digest_id] = de.config
        return lambda: (self._digest_config.__setitem__(de.digest_id, old) if old
                        else self._digest_config.pop(de.digest_id, None))

    # -- reads ---------------------------------------------------------------------------------
    def _read(self, request):
        self._need_pipeline()
        resp = p4r.ReadResponse()
        for ent in request.entities:
            kind = ent.WhichOneof("entity")
            handler = getattr(self, f"_r_{kind}", None)
            if handler is None:
                _fail(rpc_code.UNIMPLEMENTED, f"reading {kind} entities is not supported")
            for out in handler(getattr(ent, kind)):
                resp.entities.add().CopyFrom(out)
        return resp

    def _r_table_entry(self, te: p4r.TableEntry):
        tables = ([self.index.get("tables", te.table_id, "table")] if te.table_id
                  else list(self.index.tables.values()))
        for t in tables:
            name = t.preamble.name
            if te.is_default_action:
                act, params = self.switch.default_action(name)
                yield self._entity_table(t, None, act, params, 0, default=True)
                continue
            want = self._match(t, te) if te.match else None
            for e in self.switch.entries(name):
                if want is not None and list(e.match.values()) != want:
                    continue
                yield self._entity_table(t, e, e.action, e.params, e.priority,
                                         counters=te.HasField("counter_data"))

    def _entity_table(self, t, e, action: str, params: dict, priority: int, *,
                      default: bool = False, counters: bool = False) -> p4r.Entity:
        out = p4r.Entity()
        te = out.table_entry
        te.table_id = t.preamble.id
        te.is_default_action = default
        if priority:
            te.priority = priority
        if e is not None:
            MF = p4i.MatchField
            for f, m in zip(t.match_fields, e.match.values()):
                fm = p4r.FieldMatch(field_id=f.id)
                full = (1 << f.bitwidth) - 1
                if f.match_type == MF.EXACT:
                    fm.exact.value = encode_int(m)
                elif f.match_type == MF.LPM:
                    if m[1] == 0:
                        continue
                    fm.lpm.value, fm.lpm.prefix_len = encode_int(m[0]), m[1]
                elif f.match_type == MF.TERNARY:
                    if m[1] == 0:
                        continue
                    fm.ternary.value, fm.ternary.mask = encode_int(m[0]), encode_int(m[1])
                elif f.match_type == MF.RANGE:
                    if tuple(m) == (0, full):
                        continue
                    fm.range.low, fm.range.high = encode_int(m[0]), encode_int(m[1])
                else:
                    if m is None:
                        continue
                    fm.optional.value = encode_int(m)
                te.match.append(fm)
            if counters:
                te.counter_data.packet_count, te.counter_data.byte_count = e.packets, e.bytes
        actions = {a.preamble.name: a for a in (self.index.actions[r.id] for r in t.action_refs)}
        a = actions.get(action)
        if a is not None:
            te.action.action.action_id = a.preamble.id
            for p in a.params:
                te.action.action.params.add(param_id=p.id, value=encode_int(params.get(p.name, 0)))
        return out

    def _r_counter_entry(self, ce: p4r.CounterEntry):
        counters = ([self.index.get("counters", ce.counter_id, "counter")] if ce.counter_id
                    else list(self.index.counters.values()))
        for c in counters:
            values = self.switch.read_counter(c.preamble.name)
            indexes = [ce.index.index] if ce.HasField("index") else range(len(values))
            for i in indexes:
                if not 0 <= i < len(values):
                    _fail(rpc_code.OUT_OF_RANGE, f"{c.preamble.name}: index {i} out of range")
                pk, by = values[i]
                out = p4r.Entity()
                out.counter_entry.counter_id = c.preamble.id
                out.counter_entry.index.index = i
                out.counter_entry.data.packet_count, out.counter_entry.data.byte_count = pk, by
                yield out

    def _r_direct_counter_entry(self, dc: p4r.DirectCounterEntry):
        for ent in self._r_table_entry(dc.table_entry):
            out = p4r.Entity()
            t = self.index.tables[ent.table_entry.table_id]
            match = self._match(t, ent.table_entry)
            pk, by = self.switch.read_direct_counter(t.preamble.name, match,
                                                     priority=ent.table_entry.priority or None)
            out.direct_counter_entry.table_entry.CopyFrom(ent.table_entry)
            out.direct_counter_entry.data.packet_count = pk
            out.direct_counter_entry.data.byte_count = by
            yield out

    def _r_register_entry(self, re_: p4r.RegisterEntry):
        regs = ([self.index.get("registers", re_.register_id, "register")] if re_.register_id
                else list(self.index.registers.values()))
        for r in regs:
            values = self.switch.read_register(r.preamble.name)
            indexes = [re_.index.index] if re_.HasField("index") else range(len(values))
            for i in indexes:
                if not 0 <= i < len(values):
                    _fail(rpc_code.OUT_OF_RANGE, f"{r.preamble.name}: index {i} out of range")
                out = p4r.Entity()
                out.register_entry.register_id = r.preamble.id
                out.register_entry.index.index = i
                out.register_entry.data.bitstring = encode_int(values[i])
                yield out

    def _r_packet_replication_engine_entry(self, pre):
        return iter(())

    # -- packets -------------------------------------------------------------------------------
    def _packet_out(self, po: p4r.PacketOut, client: _Client) -> None:
        if self.switch is None:
            return
        meta = {}
        if self.index.packet_out is not None:
            spec = {m.id: m for m in self.index.packet_out.metadata}
            for m in po.metadata:
                if m.metadata_id in spec:
                    meta[spec[m.metadata_id].name] = int.from_bytes(m.value, "big")
        result = self.switch.packet_out(po.payload, **meta)
        self.deliver(result)

    def deliver(self, result) -> None:
        """Send the packet-ins and digests of a processed packet to the primary client."""
        for pin in getattr(result, "packet_ins", ()):
            msg = p4r.StreamMessageResponse()
            msg.packet.payload = pin.payload
            if self.index.packet_in is not None:
                for m in self.index.packet_in.metadata:
                    if m.name in pin.metadata:
                        msg.packet.metadata.add(metadata_id=m.id,
                                                value=encode_int(pin.metadata[m.name]))
            self._primary_out(msg)
        digests = getattr(result, "digests", ())
        if digests and self._digest_config:
            by_name = {d.preamble.name.rsplit(".", 1)[-1]: d for d in self.index.digests.values()}
            for dg in digests:
                spec = by_name.get(dg.name) or next(iter(self.index.digests.values()), None)
                if spec is None or spec.preamble.id not in self._digest_config:
                    continue
                self._digest_list_id += 1
                msg = p4r.StreamMessageResponse()
                msg.digest.digest_id = spec.preamble.id
                msg.digest.list_id = self._digest_list_id
                msg.digest.timestamp = time.time_ns()
                data = msg.digest.data.add()
                for v in dg.data.values():
                    data.struct.members.add(bitstring=encode_int(int(v)))
                self._primary_out(msg)


class _BatchError(Exception):
    def __init__(self, errors: list, summary: str) -> None:
        super().__init__(summary)
        self.errors, self.summary = errors, summary


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
