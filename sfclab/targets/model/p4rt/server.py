"""The servicer: P4RuntimeModelServer ties the mixins together and owns the gRPC server,
the RPC entry points, the lock and the checks every request goes through.

Served over gRPC (:meth:`P4RuntimeModelServer.start`), or in-process to an
:class:`~sfclab.runtime.inprocess.InProcessClient` (where grpcio is missing: Pyodide),
which calls the same entry points and, for the stream, :meth:`~P4RuntimeModelServer.open_stream`,
:meth:`~P4RuntimeModelServer.stream_request` and :meth:`~P4RuntimeModelServer.close_stream`."""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from concurrent import futures

from finsy.proto import p4r, rpc_code

from ....errors import TargetError
from ....runtime.status import status_code
from .codec import _NO_PIPELINE, P4RTError, _BatchError, _eid, _fail
from .config import PipelineConfigMixin
from .entities import EntityWritesMixin
from .packets import PacketsMixin
from .pipeline import _Pipeline
from .reads import ReadsMixin
from .streams import ArbitrationMixin, _Abort, _Stream
from .trailer import batch_status
from .writes import TableWritesMixin

__all__ = ["P4RuntimeModelServer", "start", "P4RT_API_VERSION"]

P4RT_API_VERSION = "1.4.0"
#: How many StreamChannels a server keeps open at once by default (each costs two
#: threads; Stratum takes 5 controllers per switch by default).
MAX_STREAMS = 16



class _DaemonExecutor(futures.Executor):
    """Runs each RPC on a daemon thread.  A thread pool's workers are joined when the
    interpreter exits, and a StreamChannel handler waits for its client as long as the
    stream is open: a script that forgot ``close()`` would never end."""

    def submit(self, fn, /, *args, **kwargs) -> futures.Future:
        f: futures.Future = futures.Future()

        def run() -> None:
            if not f.set_running_or_notify_cancel():
                return
            try:
                f.set_result(fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - handed to the future
                f.set_exception(e)

        threading.Thread(target=run, daemon=True, name="sfclab-p4rt").start()
        return f

class P4RuntimeModelServer(ArbitrationMixin, PacketsMixin, PipelineConfigMixin,
                           TableWritesMixin, EntityWritesMixin, ReadsMixin):
    """P4Runtime for one embedded model switch (device id ``device_id``)."""

    def __init__(self, *, device_id: int = 1, cpu_port: int = 255,
                 max_streams: int = MAX_STREAMS, tna: dict | None = None) -> None:
        self.device_id = device_id
        self.cpu_port = cpu_port
        #: How a TNA program runs (:class:`~..tna.switch.TnaSwitch`: pipes, loopback, cpu_port).
        self.tna = dict(tna or {})
        #: Program text -> its parsed AST, handed over by an in-process pusher (ModelTarget)
        #: so that a pipeline config is not parsed again (a few kept).
        self.parsed: OrderedDict = OrderedDict()
        #: StreamChannels open at once at most (a real switch bounds its controllers too).
        self.max_streams = max_streams
        self.active: _Pipeline | None = None      # what packets run
        self.saved: _Pipeline | None = None       # VERIFY_AND_SAVE'd, addressed by Read/Write
        self._verified: tuple | None = None       # the last VERIFY'd config and its pipeline
        self._lock = threading.RLock()
        self._streams: set[_Stream] = set()       # every open stream
        self._live: list[_Stream] = []            # the arbitrated ones
        self._primary: _Stream | None = None
        self._highest: int | None = None          # the highest election id ever seen
        self._list_id = 0
        self._grpc = None                         # the grpc.Server, once started
        self.address = ""

    def know(self, text: str, program) -> None:
        """*program* is *text* parsed: a config carrying *text* is not parsed again."""
        self.parsed[text] = program
        self.parsed.move_to_end(text)
        while len(self.parsed) > 4:
            self.parsed.popitem(last=False)

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
        import grpc
        from finsy.proto import p4r_grpc

        server = grpc.server(_DaemonExecutor(),
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

    def stop(self, grace: float = 0.5, *, bound: float = 2.0) -> bool:
        """Stop serving: RPCs get *grace* seconds to finish, then are cancelled.  Waits at
        most *bound* seconds more for gRPC to say it stopped (after an undecodable stream
        message, grpcio never does); False when it did not say so in time.  In-process
        (never started): the streams are ended and True is returned."""
        with self._lock:
            for s in list(self._streams):
                s.out.put(None)
            for pl in (self.active, self.saved):
                if pl is not None:
                    self._stop_digests(pl)
        if self._grpc is None:
            return True
        server, self._grpc = self._grpc, None
        return server.stop(grace).wait(grace + bound)

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
            context.abort(status_code(e.code), e.message)
        yield from responses
        if any(e.canonical_code != rpc_code.OK for e in errors):
            bad = [f"entity {i}: {e.message}" for i, e in enumerate(errors)
                   if e.canonical_code != rpc_code.OK]
            self._abort_batch(context, _BatchError(errors, "; ".join(bad[:3])))

    def StreamChannel(self, request_iterator, context):
        stream = _Stream()
        with self._lock:
            full = len(self._streams) >= self.max_streams
            if not full:
                self._streams.add(stream)
        if full:                        # refused before it costs a thread
            context.abort(status_code(rpc_code.RESOURCE_EXHAUSTED),
                          f"this switch has {self.max_streams} StreamChannels open, the most "
                          f"it takes: close one (each controller needs one)")

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
                context.abort(status_code(item.code), item.message)
            yield item

    # -- the stream in-process (no gRPC, no thread: sfclab.runtime.inprocess) ------------------
    def open_stream(self, out) -> _Stream:
        """A stream whose responses go to ``out.put(msg)`` as they are made (an
        :class:`_Abort` ends it, as does None)."""
        stream = _Stream(out=out)
        with self._lock:
            if len(self._streams) >= self.max_streams:
                out.put(_Abort(rpc_code.RESOURCE_EXHAUSTED, f"this switch has "
                               f"{self.max_streams} streams open, the most it takes"))
                return stream
            self._streams.add(stream)
        return stream

    def stream_request(self, stream: _Stream, msg: p4r.StreamMessageRequest) -> None:
        """One message a client sends on *stream* (what StreamChannel's reader does)."""
        if stream not in self._streams:
            return
        abort = self._stream_request(msg, stream)
        if abort is not None:
            self.close_stream(stream)
            stream.out.put(abort)

    def close_stream(self, stream: _Stream) -> None:
        """The client closed *stream* (or it ended)."""
        if stream in self._streams:
            self._stream_closed(stream)

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
            context.abort(status_code(e.code), e.message)
        except _BatchError as e:
            self._abort_batch(context, e)
        except Exception as e:                  # a bug, not the request's fault
            context.abort(status_code(rpc_code.INTERNAL), f"internal error: {e!r}")

    @staticmethod
    def _abort_batch(context, e: _BatchError) -> None:
        status = batch_status(e.errors, e.summary)        # within gRPC's metadata limits
        context.set_trailing_metadata((("grpc-status-details-bin",
                                        status.SerializeToString()),))
        context.abort(status_code(rpc_code.UNKNOWN), status.message)

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


def start(address: str = "127.0.0.1:0", *, device_id: int = 1,
          cpu_port: int = 255) -> P4RuntimeModelServer:
    """Start a model switch's P4Runtime server (loopback, a free port by default)."""
    server = P4RuntimeModelServer(device_id=device_id, cpu_port=cpu_port)
    server.start(address)
    return server
