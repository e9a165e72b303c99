"""P4Runtime in-process: a client and a server in one Python process, with no gRPC.

Where grpcio is missing (Pyodide: JupyterLite's kernel, which has neither gRPC nor
threads), sfclab's embedded model is spoken to in-process: :class:`InProcessClient` is a
:class:`~.client.Client` whose RPCs call the server's handlers directly, with the same
P4Runtime messages (``p4.v1.WriteRequest`` …) a gRPC channel would carry, and whose
stream is a pair of calls instead of two threads.  Errors come back as a gRPC client
sees them (:class:`~.status.RpcFailure`: a status, its details, the trailing metadata), so the
client translates them with the same code (``RuntimeWriteError`` lists each failed
update).

The server is any P4Runtime servicer in the shape gRPC calls (``Write(request,
context)`` …: sfclab's :class:`~sfclab.targets.model.p4rt.P4RuntimeModelServer`) with
three stream calls instead of ``StreamChannel``: ``open_stream(out)`` (``out.put(msg)``
receives each ``StreamMessageResponse``), ``stream_request(stream, msg)`` and
``close_stream(stream)``.

:func:`~.status.grpc_available` says which transport this Python has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from finsy.proto import p4r

from .client import Client
from .status import RpcFailure, status_code

__all__ = ["InProcessClient", "InProcessContext", "between_writes"]


class InProcessContext:
    """What a servicer's handler gets instead of a ``grpc.ServicerContext``."""

    def __init__(self) -> None:
        self.trailing: tuple = ()

    def abort(self, code, details: str):
        raise RpcFailure(code, details, self.trailing)

    def set_trailing_metadata(self, metadata) -> None:
        self.trailing = tuple(metadata)

    def is_active(self) -> bool:
        return True


class _Stub:
    """The unary RPCs of a servicer, called as a gRPC stub's are (``timeout`` ignored: the
    call runs to its end in this thread)."""

    def __init__(self, servicer: Any) -> None:
        self._servicer = servicer

    def _unary(self, name: str):
        def call(request, timeout: float | None = None):
            answer = getattr(self._servicer, name)(request, InProcessContext())
            if name == "Write":
                _after_write()
            return answer
        return call

    def __getattr__(self, name: str):
        if name in ("Capabilities", "SetForwardingPipelineConfig",
                    "GetForwardingPipelineConfig", "Write"):
            return self._unary(name)
        raise AttributeError(name)

    def Read(self, request, timeout: float | None = None) -> Iterator:
        return self._servicer.Read(request, InProcessContext())


#: What runs after every in-process Write (:func:`between_writes`), and whether it runs now.
_hooks: list[Callable[[], None]] = []
_running = False


@contextmanager
def between_writes(fn: Callable[[], None]) -> Iterator[None]:
    """While the block runs, call ``fn()`` after every in-process Write RPC that succeeded
    (of any client): where no thread can start (Pyodide), what runs "at the same time" as a
    change of the switches runs between its writes.  A Write ``fn`` makes itself calls
    nothing."""
    _hooks.append(fn)
    try:
        yield
    finally:
        _hooks.remove(fn)


def _after_write() -> None:
    global _running
    if _running or not _hooks:
        return
    _running = True
    try:
        for fn in list(_hooks):
            fn()
    finally:
        _running = False


class _Inbox:
    """The client's end of an in-process stream: each message the server puts is handled
    at once, in the server's call (what a gRPC client's receiving thread does)."""

    def __init__(self, client: InProcessClient) -> None:
        self._client = client

    def put(self, msg) -> None:
        self._client._received(msg)


class InProcessClient(Client):
    """A :class:`~.client.Client` of a P4Runtime servicer in this process (see the module's
    docstring); ``address`` is ``"in-process"``.

    >>> from sfclab.targets.model.p4rt import P4RuntimeModelServer
    >>> c = InProcessClient(P4RuntimeModelServer()).connect()
    >>> c.is_primary, c.capabilities()
    (True, '1.4.0')
    >>> c.close()
    """

    def __init__(self, servicer: Any, *, device_id: int = 1, election_id: int = 1,
                 timeout: float = 10.0) -> None:
        super().__init__("in-process", device_id=device_id, election_id=election_id,
                         timeout=timeout)
        self.servicer = servicer
        self._in_stream = None

    def connect(self) -> InProcessClient:
        """Open the stream and arbitrate; the answer comes back within the call."""
        self._stub = _Stub(self.servicer)
        self._in_stream = self.servicer.open_stream(_Inbox(self))
        self._send(self._arbitration())
        if not self._answered:
            why = self._stream_error
            self.close()
            raise self._refused(why)
        return self

    def close(self) -> None:
        if self._in_stream is not None:
            stream, self._in_stream = self._in_stream, None
            self.servicer.close_stream(stream)
        self._stub = None

    def packet_out(self, payload: bytes, metadata: dict[int, bytes] | None = None) -> None:
        msg = p4r.StreamMessageRequest()
        msg.packet.payload = payload
        for mid, value in (metadata or {}).items():
            msg.packet.metadata.add(metadata_id=mid, value=value)
        self._send(msg)

    def _send(self, msg) -> None:
        if self._in_stream is None:
            from ..errors import TargetError

            raise TargetError("the client is not connected", hint="call connect() first")
        self.servicer.stream_request(self._in_stream, msg)

    def _received(self, msg) -> None:
        """One stream message from the server: a response, an abort (the stream ends) or
        None (the server closed it)."""
        if msg is None:
            self._in_stream = None
        elif isinstance(msg, p4r.StreamMessageResponse):
            self._handle(msg)
        else:                                  # the server aborted the stream: code, message
            self._stream_error = RpcFailure(status_code(msg.code), msg.message)
            self._in_stream = None
