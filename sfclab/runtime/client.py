"""A synchronous P4Runtime client: arbitration, pipeline, writes, reads, packet I/O.

Built on finsy's P4Runtime protobufs and grpcio, it talks to any P4Runtime
target (sfclab's model, BMv2's ``simple_switch_grpc``, a Tofino) and is
synchronous, so notebook cells and scripts call it directly (where grpcio is
missing, :class:`~.inprocess.InProcessClient` is the same client of a server in
this process: sfclab's embedded model in Pyodide).  gRPC errors are
translated once, here: a refused ``Write`` raises
:class:`~sfclab.errors.RuntimeWriteError` with one line per failed update
(``* At index 2: ALREADY_EXISTS, '…'``); anything else raises
:class:`~sfclab.errors.TargetError` with the status and what to check.

::

    c = Client("127.0.0.1:9559").connect()
    c.set_pipeline(p4info, program_text)
    c.write(updates)
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Iterable, Sequence

from finsy.proto import p4r, rpc_code, rpc_status

try:
    import grpc
except ImportError:               # Pyodide: no gRPC; InProcessClient needs none
    grpc = None

from ..errors import RuntimeWriteError, TargetError, UpdateFailure
from .status import RpcFailure

__all__ = ["Client", "CODE_NAMES", "UNCERTAIN", "uncertain", "INDEX_SPACE"]

#: The ``p4.v1.Error.space`` of a failed update whose ``code`` is its index in the batch
#: (a server that lists only the failed updates of a big batch: sfclab's model).
INDEX_SPACE = "sfclab.update-index"

#: What a failed RPC raises: grpc's error, and the in-process one (same methods).
_RPC_ERRORS: tuple[type[BaseException], ...] = (
    (grpc.RpcError, RpcFailure) if grpc is not None else (RpcFailure,))


#: google.rpc canonical codes by number.
CODE_NAMES = {v: k for k, v in vars(rpc_code).items() if k.isupper() and isinstance(v, int)}


def _code_name(code: int) -> str:
    return CODE_NAMES.get(code, str(code))


class Client:
    """One P4Runtime session with one device (primary when its election id is the highest)."""

    def __init__(self, address: str, *, device_id: int = 1, election_id: int = 1,
                 timeout: float = 10.0) -> None:
        self.address, self.device_id, self.election_id = address, device_id, election_id
        self.timeout = timeout
        self.packet_ins: queue.Queue = queue.Queue()
        self.digests: queue.Queue = queue.Queue()
        self.is_primary = False
        self._channel = None
        self._stub = None
        self._out: queue.Queue = queue.Queue()
        self._arbitrated = threading.Event()
        self._stream = None
        self._stream_error: BaseException | None = None
        self._answered = False
        self._thread: threading.Thread | None = None

    # -- connection ----------------------------------------------------------------------------
    def connect(self) -> Client:
        """Open the channel and the stream, arbitrate, and wait for the answer."""
        if grpc is None:
            raise TargetError(f"cannot reach {self.address}: grpcio is not installed",
                              hint="pip install grpcio (in Pyodide there is none: use the "
                                   "embedded model, which is spoken to in-process)")
        from finsy.proto import p4r_grpc

        # a failed batch returns one p4.v1.Error per update in the trailing metadata:
        # room for a few hundred bytes per update of the session's largest batch
        self._channel = grpc.insecure_channel(self.address, options=[
            ("grpc.max_metadata_size", 8192 + 256 * 1024),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            self._channel.close()
            raise TargetError(f"no P4Runtime server answers at {self.address}",
                              hint="is the switch running? (sfclab model-switch, "
                                   "simple_switch_grpc, bf_switchd)") from None
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        self._out.put(self._arbitration())
        self._stream = self._stub.StreamChannel(iter(self._out.get, None))
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()
        self._arbitrated.wait(self.timeout)
        if not self._answered:
            why = self._stream_error
            self.close()
            raise self._refused(why)
        return self

    def _refused(self, why: BaseException | None) -> TargetError:
        """The error of an arbitration the server refused (*why*) or never answered."""
        if why is not None:
            return TargetError(f"{self.address} refused this controller: {why.code().name}: "
                               f"{why.details()}",
                               hint=f"election id {self.election_id} may be taken by another "
                                    "controller: pass a higher election_id")
        return TargetError(f"{self.address} did not answer the arbitration",
                           hint=f"is device id {self.device_id} right?")

    def close(self) -> None:
        self._out.put(None)
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def __enter__(self) -> Client:
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    def _arbitration(self) -> p4r.StreamMessageRequest:
        msg = p4r.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        msg.arbitration.election_id.high = self.election_id >> 64
        msg.arbitration.election_id.low = self.election_id & (2**64 - 1)
        return msg

    def _receive(self) -> None:
        try:
            for msg in self._stream:
                self._handle(msg)
        except grpc.RpcError as e:
            self._stream_error = e
        finally:
            self._arbitrated.set()          # wake connect() if the stream ended first

    def _handle(self, msg: p4r.StreamMessageResponse) -> None:
        """One message of the stream: the arbitration's answer, a packet-in, a digest."""
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            self.is_primary = msg.arbitration.status.code == rpc_code.OK
            self._answered = True
            self._arbitrated.set()
        elif kind == "packet":
            self.packet_ins.put(msg.packet)
        elif kind == "digest":
            self.digests.put(msg.digest)

    def _election(self, msg) -> None:
        msg.election_id.high = self.election_id >> 64
        msg.election_id.low = self.election_id & (2**64 - 1)

    def _call(self, what: str, fn, request):
        if self._stub is None:
            raise TargetError("the client is not connected", hint="call connect() first")
        try:
            return fn(request, timeout=self.timeout)
        except _RPC_ERRORS as e:
            raise _rpc_error(what, e) from None

    # -- RPCs ----------------------------------------------------------------------------------
    def capabilities(self) -> str:
        """The server's P4Runtime API version."""
        return self._call("Capabilities", self._stub.Capabilities,
                          p4r.CapabilitiesRequest()).p4runtime_api_version

    def set_pipeline(self, p4info, device_config: bytes, *, action: str = "VERIFY_AND_COMMIT",
                     cookie: int = 0) -> None:
        """Push a P4Info and the target's device config (``action``: P4Runtime's name)."""
        req = p4r.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        self._election(req)
        try:
            req.action = p4r.SetForwardingPipelineConfigRequest.Action.Value(action)
        except ValueError:
            raise TargetError(f"unknown pipeline action {action!r}", hint="VERIFY, "
                              "VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT, RECONCILE_AND_COMMIT") \
                from None
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", self._stub.SetForwardingPipelineConfig, req)

    def get_pipeline(self) -> p4r.ForwardingPipelineConfig:
        req = p4r.GetForwardingPipelineConfigRequest(device_id=self.device_id)
        return self._call("GetForwardingPipelineConfig", self._stub.GetForwardingPipelineConfig,
                          req).config

    def write(self, updates: Sequence[p4r.Update], *, atomicity: str = "CONTINUE_ON_ERROR",
              describe=None) -> None:
        """Send one batch; :class:`RuntimeWriteError` lists each failed update.

        *describe* (update index -> text) names the entity in the error."""
        if not updates:
            return
        req = p4r.WriteRequest(device_id=self.device_id,
                               atomicity=p4r.WriteRequest.Atomicity.Value(atomicity))
        self._election(req)
        req.updates.extend(updates)
        if self._stub is None:
            raise TargetError("the client is not connected", hint="call connect() first")
        try:
            self._stub.Write(req, timeout=self.timeout)
        except _RPC_ERRORS as e:
            failures, listed_only = _failures(e, describe)
            if not failures:
                raise _rpc_error("Write", e) from None
            said = f" (the switch: {e.details()})" if listed_only else ""
            raise RuntimeWriteError(f"{len(failures)} of {len(updates)} updates failed{said}",
                                    failures) from None

    def read(self, entities: Iterable[p4r.Entity]) -> list[p4r.Entity]:
        """Read entities (zero ids and empty matches are wildcards)."""
        req = p4r.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        if self._stub is None:
            raise TargetError("the client is not connected", hint="call connect() first")
        out: list[p4r.Entity] = []
        try:
            for resp in self._stub.Read(req, timeout=self.timeout):
                out.extend(resp.entities)
        except _RPC_ERRORS as e:
            raise _rpc_error("Read", e) from None
        return out

    def packet_out(self, payload: bytes, metadata: dict[int, bytes] | None = None) -> None:
        """Send a packet from the controller (metadata by packet_out field id)."""
        msg = p4r.StreamMessageRequest()
        msg.packet.payload = payload
        for mid, value in (metadata or {}).items():
            msg.packet.metadata.add(metadata_id=mid, value=value)
        self._out.put(msg)


def _failures(e, describe) -> tuple[list[UpdateFailure], bool]:
    """The failed updates in *e*'s trailer, and whether the server listed the failed
    ones only (each with its index, :data:`INDEX_SPACE`)."""
    details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
    if not details:
        return [], False
    status = rpc_status.Status.FromString(details)
    out = []
    listed_only = False
    for i, anyd in enumerate(status.details):
        err = p4r.Error()
        if not anyd.Unpack(err) or err.canonical_code == rpc_code.OK:
            continue
        if err.space == INDEX_SPACE:         # only the failed updates, with their indexes
            i, listed_only = err.code, True
        out.append(UpdateFailure(index=i, code=_code_name(err.canonical_code),
                                 message=err.message,
                                 entity=describe(i) if describe else ""))
    return out, listed_only


#: The gRPC statuses after which a request may or may not have taken effect: the
#: connection failed, or the answer came too late (the switch may have done it).
UNCERTAIN = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "UNKNOWN",
                       "INTERNAL"})


def _rpc_error(what: str, e) -> TargetError:
    """A failed RPC as a TargetError whose ``status`` is the gRPC status's name."""
    status, said = e.code().name, e.details() or ""
    err = TargetError(f"{what} failed: {status}: {said}", hint=_hint(status, said))
    err.status = status
    return err


def uncertain(err: BaseException) -> bool:
    """Whether the request that raised *err* may have taken effect all the same (a
    transport error or a timeout; not a refusal the switch answered)."""
    return getattr(err, "status", None) in UNCERTAIN


#: An INVALID_ARGUMENT that says only that some id is unknown, naming nothing (BMv2
#: 1.15.5 answers a Read of a table or counter id its P4Info lacks with ``Invalid P4 id``).
_BARE_ID = re.compile(r"(?i)(invalid|unknown)( [\w-]+){0,3} ids?\.?")


def _hint(status: str, said: str = "") -> str:
    """What to do after a refusal with gRPC *status*; INVALID_ARGUMENT's "does not fit
    the P4Info" only when the server's message *said* does not explain itself (it is
    empty or names no more than an unknown id): the model's refusals and most of BMv2's
    say what is wrong (a value too wide, ``Table has no direct counters``)."""
    if status == "INVALID_ARGUMENT" and said.strip() and not _BARE_ID.fullmatch(said.strip()):
        return ""
    return {
        "UNAVAILABLE": "the switch is not reachable: is it running?",
        "PERMISSION_DENIED": "another controller is primary (higher election id)",
        "FAILED_PRECONDITION": "push the pipeline first",
        "INVALID_ARGUMENT": "the request does not fit the program's P4Info",
        "NOT_FOUND": "check the device id and the names",
    }.get(status, "")
