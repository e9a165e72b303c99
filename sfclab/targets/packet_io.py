"""Putting packets on a real switch's ports and reading what comes out.

Two ways, both documented by BMv2:

* :class:`NanomsgPorts` — BMv2's packet-in device manager
  (``simple_switch_grpc --packet-in ipc://…``, the way BMv2's own PTF tests
  drive it).  The switch binds a nanomsg PAIR socket; a peer sends
  ``PACKET_IN`` messages and receives ``PACKET_OUT`` ones, each a packed
  little-endian ``int type, int port, int length`` header and the frame.  No
  root and no interfaces are needed; the ``-i`` ports are ignored.  Needs
  ``pynng`` (``pip install sfclab[bmv2]``).
* :class:`VethPorts` — veth pairs: the switch owns one end of each pair
  (``-i 1@veth0``), sfclab sends and receives on the other end with
  ``AF_PACKET`` sockets (root or ``CAP_NET_RAW``).  The peer of an interface is
  found in sysfs (``/sys/class/net/IF/iflink``).

Both are :class:`PacketPorts`: ``send(port, frame)`` and ``collect(quiet,
timeout)``, which returns every ``(port, frame)`` that came out until none came
for *quiet* seconds.

>>> frame = b"\\x00" * 14
>>> pack_packet_in(3, frame)[:12] == struct.pack("<iii", PACKET_IN, 3, 14)
True
>>> unpack_packet_out(struct.pack("<iii", PACKET_OUT, 2, 3) + b"abc")
(2, b'abc')
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import TargetError
from .trace import Event, Outputs, PacketTrace

__all__ = [
    "drain", "PORT_ADD", "PACKET_IN", "PACKET_OUT", "pack_packet_in", "unpack_packet_out",
    "PacketPorts", "NanomsgPorts", "VethPorts", "veth_peer", "open_ports", "PacketResult",
    "outputs_trace", "with_output",
]

# The message types of BMv2's packet-in device manager (dev_mgr_packet_in.cpp).
PORT_ADD, PORT_REMOVE, PORT_SET_STATUS, PACKET_IN, PACKET_OUT, INFO_REQ, INFO_REP = range(7)
_HDR = struct.Struct("<iii")


def pack_packet_in(port: int, frame: bytes) -> bytes:
    """A ``PACKET_IN`` message: *frame* arrives on the switch's *port*."""
    return _HDR.pack(PACKET_IN, port, len(frame)) + bytes(frame)


def unpack_packet_out(msg: bytes) -> tuple[int, bytes] | None:
    """``(port, frame)`` of a ``PACKET_OUT`` message; None for any other message.
    :class:`TargetError` if the message is malformed."""
    if len(msg) < _HDR.size:
        raise TargetError(f"a {len(msg)}-byte message on BMv2's packet socket is shorter than "
                          f"its {_HDR.size}-byte header")
    kind, port, length = _HDR.unpack_from(msg)
    if kind != PACKET_OUT:
        return None
    frame = bytes(msg[_HDR.size:])
    if len(frame) != length:
        raise TargetError(f"BMv2 said a packet of {length} bytes left port {port}, but "
                          f"{len(frame)} came")
    return port, frame


class PacketPorts(Protocol):
    """What a target needs to reach a switch's data-plane ports."""

    def send(self, port: int, frame: bytes) -> None: ...

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


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


class NanomsgPorts:
    """The peer of BMv2's ``--packet-in`` PAIR socket (dialled; it reconnects if the
    switch starts later)."""

    def __init__(self, address: str) -> None:
        try:
            import pynng
        except ImportError:
            raise TargetError("cannot reach BMv2's packet socket: pynng is not installed",
                              hint="pip install 'sfclab[bmv2]' (or pynng)") from None
        self.address = address
        self._pynng = pynng
        self._sock = pynng.Pair0(recv_timeout=50, send_timeout=2000)
        self._sock.dial(address, block=False)

    def describe(self) -> str:
        return f"packets over BMv2's packet-in socket {self.address}"

    def send(self, port: int, frame: bytes) -> None:
        try:
            self._sock.send(pack_packet_in(port, frame))
        except self._pynng.exceptions.Timeout:
            raise TargetError(f"the switch did not take a packet on {self.address} within 2 s",
                              hint="is it running, started with --packet-in?") from None

    def _recv(self, wait: float) -> list[tuple[int, bytes]]:
        self._sock.recv_timeout = max(1, int(wait * 1000))
        try:
            msg = self._sock.recv()
        except self._pynng.exceptions.Timeout:
            return []
        got = unpack_packet_out(msg)
        return [got] if got else []

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        return drain(self._recv, quiet, timeout)

    def close(self) -> None:
        self._sock.close()


def veth_peer(iface: str, *, sysfs: str | os.PathLike = "/sys/class/net") -> str:
    """The other end of veth *iface*: the interface whose ``ifindex`` is *iface*'s
    ``iflink``.  :class:`TargetError` if *iface* does not exist or is not a veth."""
    root = Path(sysfs)
    try:
        link = int((root / iface / "iflink").read_text())
        own = int((root / iface / "ifindex").read_text())
    except (OSError, ValueError):
        raise TargetError(f"there is no network interface {iface!r}",
                          hint="create veth pairs first, e.g. ip link add veth0 type veth "
                               "peer name veth1 (BMv2's tools/veth_setup.sh)") from None
    if link != own:
        for d in sorted(root.iterdir()):
            try:
                if int((d / "ifindex").read_text()) == link:
                    return d.name
            except (OSError, ValueError):
                continue
    raise TargetError(f"{iface!r} is not one end of a veth pair", hint="give the switch's end "
                      "of each veth pair (-i PORT@IFACE); sfclab uses the other end")


_ETH_P_ALL = 0x0003
_PACKET_OUTGOING = 4


class VethPorts:
    """The host ends of the switch's veth pairs, as ``AF_PACKET`` sockets.

    *interfaces* maps a switch port to the interface the switch is attached to
    (``-i 1@veth0``); sfclab sends on and listens to its peer.  Frames the host
    itself sends on a peer (the kernel's IPv6 neighbour discovery …) are ignored;
    the switch still sees what the kernel sends on its own end, so disable IPv6 on
    the veths as BMv2's ``veth_setup.sh`` does."""

    def __init__(self, interfaces: Mapping[int, str], *,
                 sysfs: str | os.PathLike = "/sys/class/net") -> None:
        self.peers = {port: veth_peer(name, sysfs=sysfs) for port, name in interfaces.items()}
        self._socks: dict[int, socket.socket] = {}
        try:
            for port, peer in self.peers.items():
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
                self._socks[port] = s
                s.bind((peer, 0))
        except PermissionError:
            self.close()
            raise TargetError("sending on veth interfaces needs root (or CAP_NET_RAW)",
                              hint="run as root, or use BMv2's packet-in socket (no root)"
                              ) from None
        except OSError as e:
            self.close()
            raise TargetError(f"cannot open the veth interfaces {self.peers}: {e.strerror}"
                              ) from None
        self._port_of = {s.fileno(): p for p, s in self._socks.items()}

    def describe(self) -> str:
        return "veth: " + ", ".join(f"port {p} via {peer}" for p, peer in self.peers.items())

    def send(self, port: int, frame: bytes) -> None:
        s = self._socks.get(port)
        if s is None:
            raise TargetError(f"port {port} is not attached to a veth",
                              hint=f"ports: {sorted(self._socks)}")
        s.send(bytes(frame))

    def _recv(self, wait: float) -> list[tuple[int, bytes]]:
        ready, _, _ = select.select(list(self._socks.values()), [], [], wait)
        out = []
        for s in ready:
            data, addr = s.recvfrom(65535)
            if addr[2] != _PACKET_OUTGOING:
                out.append((self._port_of[s.fileno()], data))
        return out

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        return drain(self._recv, quiet, timeout)

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()


def open_ports(ports) -> PacketPorts | None:
    """The :class:`PacketPorts` of a :class:`~.bmv2.PortMap` (None when it has none)."""
    if ports.mode == "packet-in":
        return NanomsgPorts(ports.address)
    if ports.mode == "veth":
        return VethPorts(dict(ports.interfaces))
    return None


# -- results -----------------------------------------------------------------------------------

@dataclass(eq=False)
class PacketResult(Outputs):
    """What one packet sent into a real switch did: its outputs (``(port, bytes)``
    in the order they came out; packets to the CPU port as P4Runtime delivered
    them) and its trace."""

    outputs: list[tuple[int, bytes]]
    trace: PacketTrace
    packet_ins: list = field(default_factory=list)
    digests: list = field(default_factory=list)

    @property
    def passes(self) -> int:
        return self.trace.passes


def outputs_trace(packet_id: int, port: int, outputs: list[tuple[int, bytes]],
                  why: str) -> PacketTrace:
    """The trace of a packet whose steps are unknown (*why*): in, then out of every
    port it came out of, or dropped.

    >>> print(outputs_trace(3, 1, [(2, b"x")], "no events").text())
    packet 3: in on port 1, 1 pass(es), NFs (none), port 2
      [0] in on port 1
      [0] note: no events
      [0] out on port 2
    """
    trace = PacketTrace(packet_id=packet_id, ingress_port=port)
    trace.add(Event(kind="packet_in", value=port))
    trace.add(Event(kind="note", value=why))
    for p, _ in outputs:
        trace.add(Event(kind="packet_out", value=p))
    if outputs:
        trace.finish(egress_port=outputs[0][0])
    else:
        trace.finish(drop_reason="nothing came out")
    return trace


def with_output(trace: PacketTrace, outputs: list[tuple[int, bytes]]) -> PacketTrace:
    """*trace* with the bytes that came out of its egress port."""
    if not trace.dropped:
        trace.output = next((b for p, b in outputs if p == trace.egress_port), None)
        if trace.output is None:
            trace.add(Event(kind="note", value=f"the switch sent the packet to port "
                            f"{trace.egress_port}, but nothing arrived there"))
    return trace
