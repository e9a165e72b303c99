"""The stand-in BMv2's event logger: a nanomsg ``NN_PUB`` socket, as BMv2 1.15.5 has it.

BMv2 publishes each event with ``nn_send`` on a nanomsg PUB socket bound to its
``--nanolog`` address.  nanomsg (``src/protocols/utils/dist.c``, ``src/aio/usock``)
hands a message to every subscriber's connection that can take it *now*: it writes it
to the kernel at once when the socket accepts it; a message the kernel takes only in
part keeps that connection busy until nanomsg's worker thread has written the rest;
a message for a busy connection is **dropped** (nothing says so).  Each accepted
connection's send buffer is nanomsg's ``NN_SNDBUF`` default, 128 KiB (the kernel
doubles it).  What fits is the kernel's doing: on ``ipc://`` (``AF_UNIX`` stream) each
message is a buffer of its own, about 340 events; on ``tcp://`` the bytes are
coalesced and the subscriber's receive buffer holds more (:mod:`sfclab.targets.bmv2.sp`).

This class does the same with Python sockets: same protocol (the SP handshake, then
each message framed by its length; on IPC a byte 1 first), same buffer, same drops, so
a subscriber that falls behind the stand-in loses what it would lose behind a real BMv2.
:attr:`NanoPub.dropped` counts the messages dropped (for the stand-in's log).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading

from sfclab.targets.bmv2.sp import SP_HEADER_PUB, parse_address, sp_frame

#: nanomsg's default ``NN_SNDBUF`` (set on every accepted connection).
NN_SNDBUF = 128 * 1024


class _Pipe:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending = b""          # the unwritten rest of a message: the pipe is busy
        self.greeted = False
        self.hello = b""


class NanoPub:
    """A PUB socket bound at *address* (``ipc://PATH`` or ``tcp://HOST:PORT``)."""

    def __init__(self, address: str) -> None:
        self.transport, where = parse_address(address)
        if self.transport == "ipc":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(where)
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(where)
        self._listener.listen(8)
        self._lock = threading.Lock()
        self._pipes: list[_Pipe] = []
        self._stop = threading.Event()
        self.dropped = 0
        self._worker = threading.Thread(target=self._work, daemon=True, name="nanomsg-worker")
        self._worker.start()

    # -- the worker: accepts, handshakes, writes the rest of partly written messages --------
    def _work(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                readers = [self._listener] + [p.sock for p in self._pipes if not p.greeted]
                writers = [p.sock for p in self._pipes if p.pending]
            try:
                r, w, _ = select.select(readers, writers, [], 0.05)
            except (OSError, ValueError):
                return                              # closed under us
            with self._lock:
                for s in r:
                    if s is self._listener:
                        self._accept()
                    else:
                        self._greet(s)
                for p in [p for p in self._pipes if p.sock in w]:
                    self._flush(p)

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, NN_SNDBUF)
        conn.sendall(SP_HEADER_PUB)
        conn.setblocking(False)
        self._pipes.append(_Pipe(conn))

    def _greet(self, sock: socket.socket) -> None:
        p = next(p for p in self._pipes if p.sock is sock)
        try:
            data = sock.recv(8 - len(p.hello))
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(p)
            return
        p.hello += data
        if len(p.hello) == 8:
            p.greeted = True                        # only now do messages go to it

    def _close(self, p: _Pipe) -> None:
        self._pipes.remove(p)
        p.sock.close()

    def _flush(self, p: _Pipe) -> None:
        """The worker writes the rest of a message once the socket takes it."""
        try:
            n = p.sock.send(p.pending)
        except BlockingIOError:
            return
        except OSError:
            self._close(p)
            return
        p.pending = p.pending[n:]

    def _offer(self, p: _Pipe, frame: bytes) -> bool:
        """``nn_pipe_send``: a busy pipe takes nothing (False: dropped); an idle one takes
        the message, writing now what the kernel accepts and the rest later."""
        if p.pending:
            return False
        try:
            n = p.sock.send(frame)
        except BlockingIOError:
            n = 0
        except OSError:
            self._close(p)
            return True
        p.pending = frame[n:]
        return True

    # -- publishing --------------------------------------------------------------------------
    def send(self, msg: bytes) -> None:
        frame = sp_frame(self.transport, bytes(msg))
        with self._lock:
            for p in list(self._pipes):
                if p.greeted and not self._offer(p, frame):
                    self.dropped += 1

    @property
    def pipes(self) -> int:
        """Subscribers connected (handshake done)."""
        with self._lock:
            return sum(p.greeted for p in self._pipes)

    def close(self) -> None:
        self._stop.set()
        self._worker.join(1)
        with self._lock:
            for p in list(self._pipes):
                self._close(p)
            self._listener.close()
