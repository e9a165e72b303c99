"""Network-wide traces: one packet's hops across switches, servers and hosts.

A :class:`NetworkTrace` is a list of :class:`Hop` objects, one per node the
packet (or a copy of it) went through, in the order they happened: for a switch,
its own :class:`~sfclab.targets.traces.trace.PacketTrace` (NFs, tables, passes — from
the embedded model, or from BMv2's event logger on a real network), and for
every node the links the packet left on.  Any network target builds them with
:func:`switch_hop`, so the views do not care which one ran.

>>> from sfclab.targets.traces.trace import PacketTrace, Event
>>> from sfclab.ir.topology import line
>>> t = PacketTrace(packet_id=1, ingress_port=1)
>>> t.add(Event(kind="nf", name="firewall"))
>>> t.finish(egress_port=2)
>>> hop = switch_hop(line(2), "s1", 1, [(2, bytes(14))], t)
>>> hop.out, hop.nfs
(((2, 's2', 2),), ('firewall',))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..traces.trace import PacketTrace

__all__ = ["Hop", "NetworkTrace", "switch_hop", "sfc_header", "set_si", "SFC_ETHERTYPE"]

#: How a target names a drop of sfclab's composed program (an NF's or the chain's
#: request, carried out at the end of its control): a one-switch trace says
#: ``dropped after firewall`` (:func:`~sfclab.targets.traces.timeline.outcome_text`).  The
#: embedded model names the control that dropped it; BMv2's event logger tells no
#: drop apart from another, only that the program sent no packet out
#: (:mod:`sfclab.targets.bmv2.events`) — in a composed program, the same drop.
_PROGRAM_DROPS = ("control SfcIngress", "control SfcEgress", "no packet out: dropped by the program")

#: The SFC header's EtherType (``ETHERTYPE_SFC`` in ``p4/include/sfc_headers.p4``).
SFC_ETHERTYPE = 0x88B5


def sfc_header(data: bytes) -> dict[str, int] | None:
    """``{"spi": …, "si": …, "flags": …}`` of a frame that carries the SFC header
    right after Ethernet, else None (offsets from ``sfc_t`` in ``sfc_headers.p4``)."""
    if len(data) < 14 or int.from_bytes(data[12:14], "big") != SFC_ETHERTYPE:
        return None
    lay = _layout()
    bits = int.from_bytes(data[14:14 + lay["_bytes"]], "big")
    total = lay["_bytes"] * 8

    def get(name: str) -> int:
        off, width = lay[name]
        return bits >> (total - off - width) & ((1 << width) - 1)

    return {"spi": get("path_id"), "si": get("state"), "flags": get("flags")}


_LAYOUT: dict[str, Any] = {}


def _layout() -> dict[str, Any]:
    """Bit offset and width of each ``sfc_t`` field, read once from the P4 library."""
    if not _LAYOUT:
        from ...p4 import ast as A
        from ...p4.parser import library_dir, parse_p4_file

        prog = parse_p4_file(library_dir() / "include" / "sfc_headers.p4")
        (decl,) = prog.find(A.HeaderDecl, "sfc_t")
        off = 0
        for f in decl.fields:
            _LAYOUT[f.name] = (off, f.type.width)
            off += f.type.width
        _LAYOUT["_bytes"] = off // 8
    return _LAYOUT


def set_si(data: bytes, si: int) -> bytes:
    """*data* with the SFC header's next-NF index (its ``state`` field) set to *si*."""
    lay = _layout()
    off, width = lay["state"]
    assert off % 8 == 0 and width == 8, "sfc_t.state is a whole byte"
    k = 14 + off // 8
    return data[:k] + bytes([si]) + data[k + 1:]


@dataclass(slots=True, kw_only=True)
class Hop:
    """One node a packet went through.

    ``kind`` is ``switch``, ``server``, ``host`` or ``port`` (a free switch port
    ``SWITCH:PORT`` by which the packet left the network); ``source`` the switch's
    :class:`~sfclab.targets.traces.trace.PacketTrace`, or a target's result that makes
    one when asked (``result.trace``: traces cost more than the packet); ``ran``
    the NFs a server ran; ``out`` the links it left on: ``(port, neighbour,
    neighbour's port)``; ``exits`` the free ports it left the network by;
    ``dropped`` why it went no further (empty if it did); ``header`` the SFC header it
    left with (spi, si), if any."""

    node: str
    kind: str
    in_port: int | None
    source: Any = None
    ran: tuple[str, ...] = ()
    out: tuple[tuple[int, str, int], ...] = ()
    exits: tuple[int, ...] = ()
    dropped: str = ""
    header: tuple[int, int] | None = None

    @property
    def trace(self) -> PacketTrace | None:
        src = self.source
        return src if src is None or isinstance(src, PacketTrace) else src.trace

    @property
    def nfs(self) -> tuple[str, ...]:
        """The NF types the packet ran here."""
        t = self.trace
        return tuple(t.nfs()) if t is not None else self.ran

    @property
    def passes(self) -> int:
        t = self.trace
        return t.passes if t is not None else 0

    def tables(self) -> list[tuple[str, bool]]:
        return self.trace.tables() if self.trace is not None else []

    def drop_words(self, before: Iterable[str] = ()) -> str:
        """Why it went no further, in the words of a one-switch trace: the composed
        program's own drop is ``after firewall`` (the last NF the packet ran, here or on
        an earlier node: *before*), or ``before any NF``; other reasons as they are.
        Empty if it went further."""
        if not self.dropped:
            return ""
        if self.dropped.endswith(_PROGRAM_DROPS):
            nfs = [*before, *self.nfs]
            return f"after {nfs[-1]}" if nfs else "before any NF"
        return self.dropped

    def text(self, before: Iterable[str] = ()) -> str:
        """The hop on one line; *before*: the NFs the packet ran on earlier nodes."""
        if self.kind == "port":
            return f"port {self.node}: left the network"
        what = f"{self.kind} {self.node}" + (f" in on port {self.in_port}"
                                              if self.in_port is not None else "")
        if self.kind == "switch":
            what += f", {self.passes} pass(es)"
        if self.nfs:
            what += f", NFs {' -> '.join(self.nfs)}"
        for port, nb, nbp in self.out:
            what += f", out on port {port} to {nb}:{nbp}"
        for port in self.exits:
            what += f", out on port {port} (free: leaves the network)"
        if self.header:
            what += f" (service path {self.header[0]}, next NF {self.header[1]})"
        if self.dropped:
            words = self.drop_words(before)
            what += f", dropped {words}" if words.startswith(("after ", "before ")) else \
                f", dropped: {words}"
        return what

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "kind": self.kind, "in_port": self.in_port,
                "nfs": list(self.nfs), "passes": self.passes,
                "out": [list(o) for o in self.out], "exits": list(self.exits),
                "dropped": self.dropped,
                "header": list(self.header) if self.header else None,
                "trace": self.trace.to_dict() if self.trace is not None else None}


@dataclass(slots=True, kw_only=True)
class NetworkTrace:
    """Everything one packet sent from a host did in the network."""

    source: str
    hops: list[Hop] = field(default_factory=list)
    #: ``(host, bytes)`` for every copy that reached a host, or left the network by a
    #: free switch port (``("s3:7", bytes)``).
    delivered: list[tuple[str, bytes]] = field(default_factory=list)
    label: str = ""
    #: The service path (``web/0``) it took, when the target can tell.
    path: str | None = None

    @property
    def egress(self) -> str | None:
        """The host the packet reached, or the free switch port (``s3:7``) it left the
        network by (the first, if copies went several ways)."""
        return self.delivered[0][0] if self.delivered else None

    @property
    def output(self) -> bytes | None:
        return self.delivered[0][1] if self.delivered else None

    @property
    def dropped(self) -> bool:
        return not self.delivered

    @property
    def drop_reason(self) -> str:
        return next((f"{h.node}: {h.dropped}" for h in self.hops if h.dropped), "")

    def outcome(self) -> str:
        """``delivered to h3``, ``left the network at s3:7``, or why it was dropped in a
        one-switch trace's words, with the node: ``dropped after firewall (core_a)``,
        ``dropped at core_a: no output``."""
        if self.delivered:
            return (f"left the network at {self.egress}" if ":" in self.egress else
                    f"delivered to {self.egress}")
        before: list[str] = []
        for h in self.hops:
            if h.dropped:
                words = h.drop_words(before)
                return (f"dropped {words} ({h.node})" if words.startswith(("after ", "before "))
                        else f"dropped at {h.node}: {words}")
            before += h.nfs
        return "dropped (no reason given)"

    def switches(self) -> list[str]:
        """The switches crossed, in order (one switch twice around a server detour)."""
        return [h.node for h in self.hops if h.kind == "switch"]

    def nfs(self) -> list[str]:
        """The NF types the packet ran, in order, on every switch and server."""
        return [nf for h in self.hops for nf in h.nfs]

    def hop(self, node: str) -> Hop:
        return next(h for h in self.hops if h.node == node)

    def text(self) -> str:
        head = f"packet from {self.source}" + (f" [{self.label}]" if self.label else "")
        lines = [f"{head}: {' -> '.join(self.switches()) or '(no switch)'}; NFs "
                 f"{' -> '.join(self.nfs()) or '(none)'}; {self.outcome()}"]
        before: list[str] = []
        for k, h in enumerate(self.hops, 1):
            lines.append(f"  {k}. {h.text(before)}")
            before += h.nfs
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "label": self.label, "path": self.path,
                "egress": self.egress, "switches": self.switches(), "nfs": self.nfs(),
                "delivered": [[h, b.hex()] for h, b in self.delivered],
                "hops": [h.to_dict() for h in self.hops]}


def switch_hop(topology, switch: str, in_port: int, outputs: Iterable[tuple[int, bytes]],
               source, *, cpu_port: int = 255, drop_reason: str = "") -> Hop:
    """The hop of *switch*, from what its target reported: the links its outputs
    took (per the topology), the free ports by which they left the network, and why
    it dropped the packet; *source* is its :class:`PacketTrace` or a result that
    makes one (see :class:`Hop`)."""
    out, exits, lost = [], [], []
    header = None
    for port, data in outputs:
        if port == cpu_port:
            lost.append(f"sent to the controller (CPU port {port})")
            continue
        peer = topology.peer(switch, port)
        if peer is None:
            if 1 <= port <= topology.switches[switch].ports:
                exits.append(port)
            else:
                lost.append(f"port {port} is not one of {switch}'s ports "
                            f"(1..{topology.switches[switch].ports})")
            continue
        out.append((port, peer[0], peer[1]))
        h = sfc_header(data)
        if h is not None:
            header = (h["spi"], h["si"])
    dropped = "; ".join(lost) if lost and not out and not exits else ""
    if not out and not exits and not lost:
        dropped = drop_reason or getattr(source, "drop_reason", "") or "no output"
    return Hop(node=switch, kind="switch", in_port=in_port, source=source, out=tuple(out),
               exits=tuple(exits), dropped=dropped, header=header)
