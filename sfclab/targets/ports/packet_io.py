"""Putting packets on a real switch's ports and reading what comes out.

Two ways, both documented by BMv2:

* :class:`NanomsgPorts` — BMv2's packet-in device manager
  (``simple_switch_grpc --packet-in ipc://…``, the way BMv2's own PTF tests
  drive it).  The switch binds a nanomsg PAIR socket; a peer sends
  ``PACKET_IN`` messages and receives ``PACKET_OUT`` ones, each a packed
  little-endian ``int type, int port, int length`` header and the frame.  No
  root and no interfaces are needed; the ``-i`` ports are ignored.
* :class:`VethPorts` — veth pairs: the switch owns one end of each pair
  (``-i 1@veth0``), sfclab sends and receives on the other end with
  ``AF_PACKET`` sockets (root or ``CAP_NET_RAW``).  The peer of an interface is
  found in sysfs (``/sys/class/net/IF/iflink``).

Both are :class:`PacketPorts`: ``send(port, frame)``, ``poll()`` (every
``(port, frame)`` that came out and is waiting, without blocking) and
``collect(quiet, timeout)``, which returns every ``(port, frame)`` that came out
until none came for *quiet* seconds.  :class:`PcapPorts` reads what a switch
with pcap-file ports (``--use-files``) wrote.  :func:`send_many` sends many
packets through any target: in batches where it has ``send_many`` (BMv2), one at
a time otherwise.

>>> frame = b"\\x00" * 14
>>> pack_packet_in(3, frame)[:12] == struct.pack("<iii", PACKET_IN, 3, 14)
True
>>> unpack_packet_out(struct.pack("<iii", PACKET_OUT, 2, 3) + b"abc")
(2, b'abc')
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...errors import TargetError
from .interfaces import InterfacePorts, drain
from ..traces.trace import Event, Outputs, PacketTrace

__all__ = [
    "drain", "send_many", "PcapPorts", "PORT_ADD", "PACKET_IN", "PACKET_OUT", "pack_packet_in", "unpack_packet_out",
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

    def poll(self) -> list[tuple[int, bytes]]: ...

    def reaches(self, port: int) -> bool: ...

    def fileno(self) -> int | None: ...

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


class NanomsgPorts:
    """The peer of BMv2's ``--packet-in`` PAIR socket (:class:`~sfclab.targets.bmv2.sp.SpPair`:
    nanomsg's protocol by hand, no library; it connects again if the switch starts
    later).  A packet is one ``sendall`` and what came out one ``recv``, not a library
    call and a thread hand-off each (0.1-0.4 ms a packet with pynng on a busy machine)."""

    def __init__(self, address: str) -> None:
        from ..bmv2.sp import SpPair

        self.address = address
        self._sock = SpPair(address)

    def describe(self) -> str:
        return f"packets over BMv2's packet-in socket {self.address}"

    def reaches(self, port: int) -> bool:
        return True                  # BMv2 sends every port's packets on this socket

    def fileno(self) -> int | None:
        """Readable when a message waits."""
        return self._sock.fileno()

    def send(self, port: int, frame: bytes) -> None:
        """Send a packet; blocks while the switch's input buffer is full (back-pressure),
        :class:`TargetError` after 5 s."""
        self._sock.send(pack_packet_in(port, frame))

    @staticmethod
    def _packets(msgs: list[bytes]) -> list[tuple[int, bytes]]:
        return [got for m in msgs if (got := unpack_packet_out(m))]

    def poll(self) -> list[tuple[int, bytes]]:
        return self._packets(self._sock.poll())

    def _recv(self, wait: float) -> list[tuple[int, bytes]]:
        return self._packets(self._sock.recv(wait))

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


class VethPorts(InterfacePorts):
    """The host ends of the switch's veth pairs, as ``AF_PACKET`` sockets.

    *interfaces* maps a switch port to the interface the switch is attached to
    (``-i 1@veth0``); sfclab sends on and listens to its peer (VLAN tags kept, as
    :class:`~sfclab.targets.ports.interfaces.InterfacePorts` does).  Frames the host
    itself sends on a peer (the kernel's IPv6 neighbour discovery …) are ignored;
    the switch still sees what the kernel sends on its own end, so disable IPv6 on
    the veths as BMv2's ``veth_setup.sh`` does."""

    what = "veth"

    def __init__(self, interfaces: Mapping[int, str], *,
                 sysfs: str | os.PathLike = "/sys/class/net",
                 peers: Mapping[int, str] | None = None) -> None:
        """*peers*: the peers, found already (the switch's ends are in its namespace)."""
        super().__init__(dict(peers) if peers else {port: veth_peer(name, sysfs=sysfs)
                                                    for port, name in interfaces.items()})

    def describe(self) -> str:
        return "veth: " + ", ".join(f"port {p} via {peer}" for p, peer in self.peers.items())


class PcapPorts:
    """The output files of a switch whose ports are pcap files (``--use-files``: port N
    writes ``PREFIX_out.pcap``); ``poll`` returns the frames written since the last call.
    Packets cannot be sent: BMv2 reads the input files once, when it starts."""

    def __init__(self, files: Mapping[int, str | os.PathLike]) -> None:
        self.files = {p: Path(f) for p, f in files.items()}
        self._seen = dict.fromkeys(self.files, 0)
        self._size = dict.fromkeys(self.files, -1)

    def describe(self) -> str:
        return "pcap files: " + ", ".join(f"port {p} -> {f}" for p, f in self.files.items())

    def reaches(self, port: int) -> bool:
        return port in self.files

    def fileno(self) -> int | None:
        return None

    def send(self, port: int, frame: bytes) -> None:
        raise TargetError("a switch with pcap-file ports reads its input files once, when it "
                          "starts", hint="run_pcap(generated, packets) writes them, starts "
                                         "the switch and collects the results")

    def poll(self) -> list[tuple[int, bytes]]:
        from .pcap import read_pcap

        out = []
        for port, path in self.files.items():
            size = path.stat().st_size if path.exists() else -1
            if size == self._size[port]:
                continue
            self._size[port] = size
            frames = read_pcap(path)
            out += [(port, f) for f in frames[self._seen[port]:]]
            self._seen[port] = len(frames)
        return out

    def collect(self, *, quiet: float = 0.15, timeout: float = 3.0) -> list[tuple[int, bytes]]:
        return drain(lambda wait: self.poll() or (time.sleep(min(wait, 0.05)) or []),
                     quiet, timeout)

    def close(self) -> None:
        pass


def open_ports(ports) -> PacketPorts | None:
    """The :class:`PacketPorts` of a :class:`~sfclab.targets.bmv2.target.PortMap` (None when it has none)."""
    if ports.mode == "packet-in":
        return NanomsgPorts(ports.address)
    if ports.mode == "veth":
        return VethPorts(dict(ports.interfaces), peers=dict(ports.peers))
    if ports.mode == "pcap":
        return PcapPorts({p: ports.out_pcap(p) for p in ports.ports})
    return None


def send_many(target, packets) -> list:
    """Send ``(port, packet)`` pairs through *target*; one result each, in order.  A
    target with ``send_many`` (BMv2) gets them in batches with back-pressure; any
    other, one ``send`` at a time.

    >>> class One:
    ...     def send(self, port, packet): return (port, packet)
    >>> send_many(One(), [(1, b"a"), (2, b"b")])
    [(1, b'a'), (2, b'b')]
    """
    items = list(packets)
    batch = getattr(target, "send_many", None)
    if batch is not None:
        return batch(items)
    return [target.send(port, packet) for port, packet in items]


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
