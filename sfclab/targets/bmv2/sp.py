"""BMv2's nanomsg sockets from sfclab's side, by hand: the event logger's subscriber, read
in bulk (:class:`SpSubscriber`), and the peer of the packet-in socket (:class:`SpPair`).

BMv2's event logger is a nanomsg ``NN_PUB`` socket (``--nanolog ADDR``).  nanomsg
sends each message to a subscriber only if the kernel takes it at once: while the
socket towards the subscriber is full, messages are **dropped**, silently.  How many
fit is the transport's doing, measured with BMv2 1.15.5 and its nanomsg 1.1:

* ``ipc://`` (an ``AF_UNIX`` stream): every message is an skb of its own, charged to
  the sender's 256 KiB send buffer until read, so about **340 messages** (some 7 packets
  of a 4-NF chain, ~45 events each) fit; a subscriber descheduled for a few
  milliseconds on a busy machine loses events (issue 20: 18-33 packets of 500);
* ``tcp://127.0.0.1:PORT``: small writes are coalesced into the stream, and the
  receiver's buffer (asked large here) holds them as well: about **3,000 messages**
  with a subscriber that reads nothing (measured: 60-72 packets of ``firewall ->
  l3fwd``), more than the 32 packets sfclab keeps in flight (:mod:`sfclab.targets.bmv2.batch`)
  produce, so a subscriber descheduled for a while loses nothing.

So a switch sfclab starts logs on ``tcp://127.0.0.1:PORT``, and this module reads it:
the SP handshake (``\\0SP\\0``, protocol, 0), then frames of a 64-bit big-endian length
and the message (on IPC each frame starts with a byte 1).  :meth:`SpSubscriber.poll`
takes everything the kernel holds in one ``recv`` and splits it, so reading costs a few
microseconds per message, not a library call each.  PUB filters nothing: every message
comes (a SUB filters on its side, and this one wants them all).

>>> sub = SpSubscriber("tcp://127.0.0.1:1", connect=False)
>>> sub._feed(bytes(SP_HEADER_PUB) + (3).to_bytes(8, "big") + b"abc" + (2).to_bytes(8, "big"))
>>> sub._take(), bytes(sub._buf)
([b'abc'], b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02')
"""

from __future__ import annotations

import contextlib
import errno
import select
import socket
import struct
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from ...errors import TargetError

__all__ = ["SpSocket", "SpSubscriber", "SpPair", "SP_HEADER_SUB", "SP_HEADER_PUB", "sp_frame",
           "parse_address", "RCVBUF"]

#: nanomsg's protocol numbers: NN_PAIR = 16, NN_PUB = 32, NN_SUB = 33.
NN_PAIR, NN_PUB, NN_SUB = 16, 32, 33
SP_HEADER_SUB = struct.pack(">4sHH", b"\0SP\0", NN_SUB, 0)
SP_HEADER_PUB = struct.pack(">4sHH", b"\0SP\0", NN_PUB, 0)
#: The receive buffer asked for a TCP subscriber (where the kernel allows it).
RCVBUF = 8 << 20
_SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def parse_address(address: str) -> tuple[str, object]:
    """``("tcp", (host, port))`` or ``("ipc", path)``; :class:`TargetError` otherwise.

    >>> parse_address("tcp://127.0.0.1:9099"), parse_address("ipc:///tmp/e.ipc")
    (('tcp', ('127.0.0.1', 9099)), ('ipc', '/tmp/e.ipc'))
    """
    if address.startswith("ipc://"):
        return "ipc", address[len("ipc://"):]
    parts = urlsplit(address)
    if parts.scheme == "tcp" and parts.hostname:
        try:
            if parts.port:
                return "tcp", (parts.hostname, parts.port)
        except ValueError:
            pass
    raise TargetError(f"cannot reach the nanomsg socket {address!r}",
                      hint="give tcp://HOST:PORT or ipc:///PATH")


def sp_frame(transport: str, msg: bytes) -> bytes:
    """One message as it crosses the wire (a publisher's side).

    >>> sp_frame("ipc", b"x")
    b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01x'
    """
    head = len(msg).to_bytes(8, "big")
    return (b"\x01" + head if transport == "ipc" else head) + msg


class SpSocket:
    """The connecting end of a nanomsg socket at *address* (``tcp://`` or ``ipc://``),
    speaking protocol :attr:`PROTOCOL` to a peer of protocol :attr:`PEER`.

    It connects when made (and again on :meth:`poll` until the peer listens:
    :meth:`wait_connected` waits for that)."""

    PROTOCOL, PEER, WHAT = NN_SUB, NN_PUB, "a nanomsg PUB socket"

    def __init__(self, address: str, *, connect: bool = True,
                 dial: Callable[..., socket.socket] | None = None) -> None:
        """*dial(host, port, rcvbuf=…)*: how a ``tcp://`` address is reached (a switch in a network
        namespace of its own: through its keeper, :meth:`sfclab.targets.bmv2.target.Bmv2Target.tcp`); by
        default, from here."""
        self.address = address
        self._dial = dial
        self.transport, self._where = parse_address(address)
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._hdr = 9 if self.transport == "ipc" else 8
        self._greeted = False
        #: receive buffer the kernel gave (bytes), once connected
        self.rcvbuf = 0
        if connect:
            self._connect()

    # -- connection ------------------------------------------------------------------------
    def _connect(self) -> bool:
        if self._sock is not None:
            return True
        if self.transport == "tcp" and self._dial is not None:
            try:
                s = self._dial(*self._where, rcvbuf=RCVBUF)
            except (OSError, TargetError):
                return False
        elif self.transport == "ipc":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            s = socket.socket(socket.AF_INET6 if ":" in self._where[0] else socket.AF_INET,
                              socket.SOCK_STREAM)
            self._grow_rcvbuf(s)
        try:
            s.settimeout(1.0)
            if self._dial is None or self.transport != "tcp":
                s.connect(self._where)
            s.sendall(struct.pack(">4sHH", b"\0SP\0", self.PROTOCOL, 0))
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        self.rcvbuf = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self._sock = s
        return True

    @staticmethod
    def _grow_rcvbuf(s: socket.socket) -> None:
        """Ask for :data:`RCVBUF` (beyond ``rmem_max`` as root); leave TCP's own tuning
        (up to ``tcp_rmem``) where neither is allowed."""
        try:
            s.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, RCVBUF)
            return
        except OSError:
            pass
        with contextlib.suppress(OSError, ValueError):
            if int(open("/proc/sys/net/core/rmem_max").read()) >= RCVBUF:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)

    def wait_connected(self, timeout: float = 2.0) -> bool:
        """Connect and wait for the publisher's handshake; False after *timeout* s."""
        end = time.monotonic() + timeout
        while True:
            if self._connect():
                self._read()
                if self._greeted:
                    return True
                wait = end - time.monotonic()
                if wait > 0:
                    select.select([self._sock], [], [], min(wait, 0.05))
            if time.monotonic() >= end:
                return False
            if self._sock is None:
                time.sleep(0.01)

    def fileno(self) -> int | None:
        return self._sock.fileno() if self._sock is not None else None

    # -- reading ---------------------------------------------------------------------------
    def _read(self) -> None:
        """Everything the kernel holds, into the buffer."""
        s = self._sock
        while s is not None:
            try:
                chunk = s.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    return
                raise TargetError(f"reading BMv2 events from {self.address}: {e}") from None
            if not chunk:                       # the switch closed it (stopped)
                self._drop()
                return
            self._feed(chunk)
            if len(chunk) < (1 << 20):
                return

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._greeted = None, False
        self._buf.clear()

    def _feed(self, chunk: bytes) -> None:
        self._buf += chunk
        if not self._greeted and len(self._buf) >= 8:
            head = bytes(self._buf[:8])
            if head[:4] != b"\0SP\0" or head[4:6] != self.PEER.to_bytes(2, "big"):
                self._drop()
                raise TargetError(f"{self.address} is not {self.WHAT} (it greeted with "
                                  f"{head!r})", hint="is it the switch's address?")
            del self._buf[:8]
            self._greeted = True

    def _take(self) -> list[bytes]:
        """The whole messages in the buffer (a partial one stays)."""
        buf, hdr, out, off = self._buf, self._hdr, [], 0
        if not self._greeted:
            return out
        end = len(buf)
        while off + hdr <= end:
            n = int.from_bytes(buf[off + hdr - 8:off + hdr], "big")
            if off + hdr + n > end:
                break
            out.append(bytes(buf[off + hdr:off + hdr + n]))
            off += hdr + n
        if off:
            del buf[:off]
        return out

    def poll(self) -> list[bytes]:
        """Every whole message waiting, without blocking."""
        if self._sock is None and not self._connect():
            return []
        self._read()
        return self._take()

    def recv(self, wait: float) -> list[bytes]:
        """The messages waiting, waiting up to *wait* seconds for the first."""
        got = self.poll()
        if got or wait <= 0:
            return got
        end = time.monotonic() + wait
        while not got:
            left = end - time.monotonic()
            if left <= 0:
                return got
            if self._sock is None:
                time.sleep(min(left, 0.01))
            else:
                select.select([self._sock], [], [], left)
            got = self.poll()
        return got

    def close(self) -> None:
        self._drop()


class SpSubscriber(SpSocket):
    """A SUB socket on a nanomsg PUB (BMv2's ``--nanolog``); what the publisher sent
    before the handshake is lost, as with any SUB."""


class SpPair(SpSocket):
    """The peer of a nanomsg PAIR socket (BMv2's ``--packet-in``): :meth:`send` writes a
    message whole, blocking while the switch does not read (back-pressure), at most
    *timeout* seconds."""

    PROTOCOL = PEER = NN_PAIR
    WHAT = "a nanomsg PAIR socket"

    def send(self, msg: bytes, timeout: float = 5.0) -> None:
        if self._sock is None and not self._connect():
            raise TargetError(f"nothing listens at {self.address}",
                              hint="is the switch running, started with --packet-in?")
        frame = sp_frame(self.transport, msg)
        self._sock.settimeout(timeout)
        try:
            self._sock.sendall(frame)
        except TimeoutError:
            raise TargetError(f"the switch did not take a packet on {self.address} within "
                              f"{timeout:g} s", hint="is it running, started with "
                              "--packet-in?") from None
        except OSError as e:
            self._drop()
            raise TargetError(f"sending to {self.address}: {e.strerror or e}") from None
        finally:
            if self._sock is not None:
                self._sock.setblocking(False)

