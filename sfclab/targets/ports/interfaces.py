"""Network interfaces as switch ports: raw ``AF_PACKET`` sockets, as a switch uses them.

:class:`InterfacePorts` binds one socket to each interface it is given (of the
network namespace it is made in; root or ``CAP_NET_RAW``): ``send(port,
frame)`` transmits on port *port*'s interface, ``recv`` / ``collect`` return the
frames that arrived, ``sniff`` every frame both ways in the kernel's order.  It
is what a switch process reads and writes its ports with
(:mod:`sfclab.targets.model.process`), what a Mininet host sends and captures
with, and what sees a BMv2 switch's wires (:mod:`sfclab.targets.mininet.wire`).

Two things a raw socket gets wrong unless told: it hears every interface until it
is bound (so it is made with protocol 0 and hears nothing before its bind), and
Linux takes a received frame's VLAN tag off (VLAN offload) and reports it beside
the frame; :func:`with_vlan_tag` puts it back, as libpcap does.

>>> aux = _AUXDATA.pack(_TP_STATUS_VLAN_VALID, 0, 0, 0, 0, 100, 0)
>>> with_vlan_tag(bytes(12) + b"\\x08\\x00", [(_SOL_PACKET, _PACKET_AUXDATA, aux)]).hex()
'000000000000000000000000810000640800'
"""

from __future__ import annotations

import select
import socket
import struct
import time
from collections.abc import Mapping

from ...errors import TargetError

__all__ = ["InterfacePorts", "with_vlan_tag", "drain"]

_ETH_P_ALL = 0x0003                       # every protocol (bind() puts it in network order)
_PACKET_OUTGOING = 4
_SOL_PACKET, _PACKET_AUXDATA = 263, 8
#: struct tpacket_auxdata: status, len, snaplen, mac, net, vlan_tci, vlan_tpid
_AUXDATA = struct.Struct("=IIIHHHH")
_TP_STATUS_VLAN_VALID, _TP_STATUS_VLAN_TPID_VALID = 0x10, 0x40
_SO_TIMESTAMPNS = 35                      # also SCM_TIMESTAMPNS: a struct timespec
_TIMESPEC = struct.Struct("=qq")
_ANCILLARY = socket.CMSG_SPACE(_AUXDATA.size) + socket.CMSG_SPACE(_TIMESPEC.size)


def drain(recv, quiet: float, timeout: float) -> list[tuple[int, bytes]]:
    """Call *recv(wait)* until nothing came for *quiet* seconds or *timeout* passed
    (what is queued already is read even with both zero)."""
    out: list = []
    start = last = time.monotonic()
    while True:
        now = time.monotonic()
        left = min(quiet - (now - last), timeout - (now - start))
        got = recv(max(left, 0.0))
        if got:
            out.extend(got)
            last = time.monotonic()
        elif left <= 0:
            return out


def with_vlan_tag(frame: bytes, ancillary: list) -> bytes:
    """*frame* as it was on the wire: its VLAN tag, which Linux reported in
    ``PACKET_AUXDATA``, put back after the MACs."""
    for level, kind, data in ancillary:
        if level == _SOL_PACKET and kind == _PACKET_AUXDATA and len(data) >= _AUXDATA.size:
            status, _, _, _, _, tci, tpid = _AUXDATA.unpack_from(data)
            if status & _TP_STATUS_VLAN_VALID:
                if not status & _TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


def _stamp(ancillary: list) -> float:
    """The kernel's receive time of a frame (``SO_TIMESTAMPNS``), 0 if absent."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= 16:
            sec, ns = _TIMESPEC.unpack_from(data)
            return sec + ns / 1e9
    return 0.0


class InterfacePorts:
    """*interfaces* (``{port: interface}``) as ports, one raw socket each, bound to
    the interface itself: it hears only that interface and keeps VLAN tags.
    Frames this namespace sends on an interface are not received (``sniff``
    reports them as outgoing).  A :class:`~sfclab.targets.ports.packet_io.PacketPorts`."""

    #: What the ports are, in messages.
    what = "interface"

    def __init__(self, interfaces: Mapping[int, str]) -> None:
        self.peers = dict(interfaces)           # the interfaces the sockets are bound to
        self._socks: dict[int, socket.socket] = {}
        try:
            for port, name in self.peers.items():
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
                self._socks[port] = s
                s.setsockopt(_SOL_PACKET, _PACKET_AUXDATA, 1)
                s.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                s.bind((name, _ETH_P_ALL))
        except PermissionError:
            self.close()
            raise TargetError(f"raw sockets on {self.what}s need root (or CAP_NET_RAW)",
                              hint="run as root, or use BMv2's packet-in socket (no root)"
                              ) from None
        except OSError as e:
            self.close()
            raise TargetError(f"cannot open the {self.what}s {self.peers}: {e.strerror}"
                              ) from None
        self._port_of = {s.fileno(): p for p, s in self._socks.items()}

    def reaches(self, port: int) -> bool:
        return port in self._socks

    def fileno(self) -> int | None:
        return None                  # several sockets: poll() them

    def poll(self) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        while got := self.recv(0.0):
            out += got
        return out

    def send(self, port: int, frame: bytes) -> None:
        s = self._socks.get(port)
        if s is None:
            raise TargetError(f"port {port} is not attached to a {self.what}",
                              hint=f"ports: {sorted(self._socks)}")
        s.send(bytes(frame))

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        return drain(self.recv, quiet, timeout)

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()

    def describe(self) -> str:
        return "interfaces: " + ", ".join(f"{p}@{n}" for p, n in self.peers.items())

    def recv(self, wait: float) -> list[tuple[int, bytes]]:
        """``(port, frame)`` for what arrived within *wait* seconds (at most one frame
        per port)."""
        ready, _, _ = select.select(list(self._socks.values()), [], [], wait)
        out = []
        for s in ready:
            port, data, outgoing, _ = self._read(s)
            if not outgoing:
                out.append((port, data))
        return out

    def sniff(self, wait: float = 0.0) -> list[tuple[int, bytes, bool, float]]:
        """Every frame queued on the interfaces, both ways, oldest first (waiting up to
        *wait* seconds for the first): ``(port, frame, outgoing, kernel time)``.
        *outgoing*: sent by this namespace on the interface (a switch process's
        outputs, when the interfaces are a switch's), not received on it."""
        out, timeout = [], wait
        while True:
            ready, _, _ = select.select(list(self._socks.values()), [], [], timeout)
            if not ready:
                return sorted(out, key=lambda f: f[3])
            out += [self._read(s) for s in ready]
            timeout = 0.0

    def _read(self, s: socket.socket) -> tuple[int, bytes, bool, float]:
        data, anc, _, addr = s.recvmsg(65535, _ANCILLARY)
        return (self._port_of[s.fileno()], with_vlan_tag(data, anc),
                addr[2] == _PACKET_OUTGOING, _stamp(anc))
