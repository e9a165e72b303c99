"""Class traffic at the model's speed: a few packets per service path, planned once, varied.

:func:`~sfclab.targets.traffic.coverage.class_traffic` builds candidates with scapy and runs
each on the oracle (the embedded model) to learn its path: right for a few
packets, far too slow for thousands.  A :class:`TrafficPlan` runs that search once,
for a few packets per service path (:data:`PER_PATH`), keeps their bytes, and
then makes as many packets as asked by going round them in the same round-robin
order over the paths, each packet after the first round patched where no NF
looks: the packet's number added to the outer IPv4 header's identification (its
header checksum updated) and to the last four bytes of the payload (the TCP or UDP
checksum over them updated).  No scapy packet is built and the oracle does not run per packet, so
planning costs the same for 1,000 packets as for 100,000, and the packets of
every round differ from those of the last.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> from sfclab.targets.traffic.coverage import Oracle
>>> gen = generate(sfclab.compile(open("examples/web.sfc").read()))
>>> with Oracle(gen) as oracle:
...     plan = TrafficPlan.make(gen, "web", oracle=oracle)
>>> [path for _, _, path in plan.packets(6)]
['web/0', 'web/1', 'web/0', 'web/1', 'web/0', 'web/1']
>>> base, later = plan.packet(0)[1], plan.packet(len(plan.bases))[1]
>>> base != later and len(base) == len(later)
True
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ...codegen import Generated
from .coverage import ClassTraffic, Oracle, class_traffic

__all__ = ["TrafficPlan", "Base", "PER_PATH", "patched", "find_offsets"]

#: Packets searched for per service path when a plan is made.
PER_PATH = 8

_ETH_VLAN, _ETH_IPV4, _ETH_IPV6 = 0x8100, 0x0800, 0x86DD
_MPLS = (0x8847, 0x8848)
#: IP protocols with a checksum over the payload (TCP and UDP are updated, ICMP not: not varied).
_L4 = (6, 17, 1, 58)


@dataclass(frozen=True, slots=True)
class Base:
    """One planned packet: its port, bytes, the path the oracle ran it on, and where
    its variable bytes are (``ip``: the outer IPv4 header; ``l4``: the TCP or UDP
    header whose checksum covers the payload; ``tail``: the payload's last 4 bytes)."""

    port: int
    data: bytes
    path: str
    ip: int | None = None
    l4: tuple[int, int] | None = None       # (header offset, checksum offset)
    tail: int | None = None


def find_offsets(data: bytes, payload: int) -> tuple[int | None, tuple[int, int] | None,
                                                     int | None]:
    """``(ip, l4, tail)`` of :class:`Base` for a frame whose last *payload* bytes are
    its payload: Ethernet, VLAN tags, IPv4 or IPv6, then TCP or UDP.  A header this
    does not know stops the walk; the tail is varied only when every checksum over it
    is known (a frame with no IP header, IPv4 or IPv6 with no L4 header above it,
    or a TCP / UDP header; under MPLS labels, IPv4 or IPv6 by their version)."""
    ip = l4 = None
    off, end = 14, len(data) - payload
    if len(data) < 14 or payload < 4:
        return None, None, None
    etype = struct.unpack_from("!H", data, 12)[0]
    while etype == _ETH_VLAN and off + 4 <= end:
        etype = struct.unpack_from("!H", data, off + 2)[0]
        off += 4
    if etype in _MPLS:                           # labels to the bottom of the stack
        while off + 4 <= end and not data[off + 2] & 1:
            off += 4
        off += 4
        first = data[off] >> 4 if off < end else 0
        etype = {4: _ETH_IPV4, 6: _ETH_IPV6}.get(first, etype)
    known = etype not in _MPLS                   # no checksum over a frame's payload
    if etype == _ETH_IPV4 and off + 20 <= end:
        ip, proto, ihl = off, data[off + 9], (data[off] & 0xF) * 4
        off += ihl
        known = proto not in _L4
    elif etype == _ETH_IPV6 and off + 40 <= end:
        proto = data[off + 6]
        off += 40
        known = proto not in _L4
    else:
        proto = None
    if proto == 6 and off + 20 <= end:
        l4, known = (off, off + 16), True
    elif proto == 17 and off + 8 <= end:
        cs = struct.unpack_from("!H", data, off + 6)[0]
        l4, known = ((off, off + 6) if cs else None), True
    return ip, l4, (len(data) - 4 if known else None)


def _fold(s: int) -> int:
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _sum16(b: bytes | bytearray) -> int:
    if len(b) % 2:
        b = bytes(b) + b"\0"
    return _fold(sum(struct.unpack(f"!{len(b) // 2}H", b)))


def _fix(buf: bytearray, at: int, old: int, new: int, *, udp: bool = False) -> None:
    """Update the checksum at *at* for words summing to *old* now summing to *new*
    (RFC 1624: HC' = ~(~HC + ~m + m'))."""
    hc = struct.unpack_from("!H", buf, at)[0]
    out = ~_fold((~hc & 0xFFFF) + (~old & 0xFFFF) + new) & 0xFFFF
    struct.pack_into("!H", buf, at, 0xFFFF if udp and out == 0 else out)


def _add(buf: bytearray, at: int, counter: int) -> None:
    struct.pack_into("!I", buf, at, (struct.unpack_from("!I", buf, at)[0] + counter) & 0xFFFFFFFF)


def patched(base: Base, counter: int) -> bytes:
    """*base*'s bytes varied by *counter* (0: as planned): *counter* added to the IPv4
    identification and to the payload's last 4 bytes, checksums updated to match.

    >>> from scapy.layers.inet import IP, TCP
    >>> from scapy.layers.l2 import Ether
    >>> raw = bytes(Ether() / IP(dst="10.0.1.2") / TCP(dport=80) / b"sfclab")
    >>> b = Base(1, raw, "web/0", *find_offsets(raw, 6))
    >>> p = Ether(patched(b, 7))
    >>> p[IP].id, bytes(p[TCP].payload)
    (8, b'sfclai')
    >>> del p[IP].chksum, p[TCP].chksum        # scapy computes them again: the same
    >>> bytes(p) == patched(b, 7)
    True
    """
    if not counter:
        return base.data
    buf = bytearray(base.data)
    if base.ip is not None:
        at = base.ip + 4
        old = buf[at] << 8 | buf[at + 1]
        new = (old + counter) & 0xFFFF
        struct.pack_into("!H", buf, at, new)
        _fix(buf, base.ip + 10, old, new)
    if base.tail is not None:
        t = base.tail
        if base.l4 is not None:
            start, cs = base.l4
            a = t - ((t - start) & 1)                  # whole 16-bit words of the segment
            b = t + 4 + ((t + 4 - start) & 1)
            old = _sum16(buf[a:b])
            _add(buf, t, counter)
            _fix(buf, cs, old, _sum16(buf[a:b]), udp=cs - start == 6)
        else:
            _add(buf, t, counter)
    return bytes(buf)


class TrafficPlan:
    """Packets of one class covering its service paths, made from planned bases.

    ``coverage`` is the search's :class:`~sfclab.targets.traffic.coverage.ClassTraffic`
    (paths covered, missed and why, candidates tried); ``bases`` the planned packets
    in round-robin order over the paths found, as many per path."""

    def __init__(self, coverage: ClassTraffic, payload: int = 6) -> None:
        self.coverage = coverage
        self.chain = coverage.chain
        found = list(dict.fromkeys(coverage.expected))
        # whole rounds over the paths found, so that going round keeps the order
        keep = len(coverage.packets) - len(coverage.packets) % max(1, len(found))
        self.bases: tuple[Base, ...] = tuple(
            _base(cp, path, payload)
            for cp, path in list(zip(coverage.packets, coverage.expected))[:keep])
        seen: set[bytes] = set()
        self._again = [b.data in seen or seen.add(b.data) for b in self.bases]

    @classmethod
    def make(cls, gen: Generated, chain: str, *, oracle: Oracle, seed: int = 0,
             per_path: int = PER_PATH, own: Mapping[str, int] | None = None,
             sender: str = "", receiver: str = "") -> TrafficPlan:
        """Search *per_path* packets per service path of *chain* (one oracle run each);
        *own*, *sender*, *receiver*: the addresses the packets carry, as
        :func:`~sfclab.targets.traffic.coverage.class_traffic`'s."""
        paths = sum(1 for p in gen.compiled.paths if p.chain == chain)
        return cls(class_traffic(gen, chain, per_path * max(1, paths), seed=seed,
                                 oracle=oracle, own=own, sender=sender, receiver=receiver))

    def packet(self, k: int) -> tuple[int, bytes, str]:
        """Packet *k* (from 0): ``(port, bytes, the path planned for it)``: the first
        round as planned (a base the search found twice patched the second time), the
        later ones patched with *k*."""
        i = k % len(self.bases)
        b = self.bases[i]
        if k < len(self.bases) and not self._again[i]:
            return b.port, b.data, b.path
        return b.port, patched(b, k), b.path

    def packets(self, n: int, start: int = 0) -> Iterator[tuple[int, bytes, str]]:
        """Packets *start* … *start* + *n* - 1 (none when no packet takes any path)."""
        if not self.bases:
            return
        for k in range(start, start + n):
            yield self.packet(k)


def _base(cp, path: str, payload: int) -> Base:
    data = bytes(cp.packet)
    return Base(cp.port, data, path, *find_offsets(data, payload))
