"""Packets of a chain's class: what ``%sfc send web 20`` sends.

A chain's class is every packet the switch's initializer gives to the chain: it
matches the chain's classifier and no classifier of a chain written before it.
:func:`class_regions` solves that exactly (:mod:`sfclab.ir.solve`: header
presence, prefixes, masks, ranges, ``!=``) into regions — the headers a packet
carries and the values each field may take — simplest header stack first.

:func:`packets_for` builds *n* packets of the simplest region, reproducibly (a
seed), with the values the NF library's example entries use where the class
leaves a field free (destination MAC ``00:00:00:00:00:02``, destination
10.0.1.0/24), so a class sent through the examples is forwarded.
:func:`candidates` goes further for coverage (:mod:`sfclab.targets.traffic.coverage`):
an endless stream over every region, drawing free fields from a dictionary of
interesting values (the keys of installed entries) and at random.

>>> import sfclab
>>> c = sfclab.parse("chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80: firewall")
>>> [(p.port, p.packet["TCP"].dport) for p in packets_for(c["web"], 2)]
[(1, 80), (1, 80)]
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..errors import SfclabError
from ..ir.model import Chain
from ..ir.solve import Region, ValueSet, header_of, parse_closure, regions
from ..ir.validate import shadowed

__all__ = ["ClassPacket", "packets_for", "candidates", "class_regions", "build_packet",
           "field_values", "DEFAULT_PORT", "ClassUnreachable", "HOST_FIELDS", "host_fields",
           "contradicted"]

#: The port class packets arrive on unless the classifier (or a branch) needs another.
DEFAULT_PORT = 1
#: Ports a class packet never arrives on when it can avoid them: the CPU port
#: (packets from it are packet-outs) and v1model's drop port.
AVOID_PORTS = (255, 511)
#: EtherType / IP protocol for a packet with nothing the parser knows after it.
_OPAQUE_ETHERTYPE, _OPAQUE_PROTO, _NO_NEXT_HEADER = 0x9000, 253, 59


class ClassUnreachable(SfclabError):
    """No packet reaches the chain: chains written before it take its whole class."""


@dataclass(frozen=True, slots=True)
class ClassPacket:
    """A packet of a chain's class, the port it arrives on, and the region of the
    class it was drawn from (0: the simplest header stack)."""

    chain: str
    port: int
    packet: object          # a scapy packet
    region: int = 0

    def __bytes__(self) -> bytes:
        return bytes(self.packet)


def _earlier(chain: Chain, chains: Iterable[Chain] | None) -> list[Chain]:
    out = []
    for c in chains or ():
        if c.name == chain.name:
            break
        out.append(c)
    return out


def class_regions(chain: Chain, chains: Iterable[Chain] | None = None, *,
                  parsed: Iterable[str] | None = None, limit: int = 64) -> list[Region]:
    """The regions of *chain*'s class (at most *limit*), simplest first.

    *chains*: the chain set *chain* is installed with (earlier chains take their
    packets first); *parsed*: the headers the program parses (``Composition.headers``;
    by default those the classifiers test, IPv4, TCP and UDP).  Raises
    :class:`ClassUnreachable` when the class is empty."""
    before = _earlier(chain, chains)
    if parsed is None:
        named = {header_of(t.field) for c in (*before, chain)
                 for t in (c.match.terms if c.match else ())}
        parsed = parse_closure(named | {"ipv4", "tcp", "udp"})
    found = []
    for r in regions(chain.match, [c.match for c in before], parsed=parsed):
        found.append(r)
        if len(found) >= limit:
            break
    if not found:
        ws = shadowed([*before, chain], parsed=parsed)
        w = ws[-1] if ws and f"chain {chain.name!r}" in ws[-1].message else None
        raise ClassUnreachable(
            w.message if w else f"chain {chain.name!r} gets no packets: its classifier "
            f"({chain.match}) matches no packet the program parses",
            hint=w.hint if w else "check the classifier's fields and values")
    return found


#: Values of free fields: what the NF library's example entries expect (the addresses
#: and transport source ports get a random low part, see :func:`_default`).
_DEFAULTS = {"eth.dst": 2, "eth.src": 0x0A0000000001, "eth.type": _OPAQUE_ETHERTYPE,
             "vlan.vid": 1, "vlan.pcp": 0, "ipv4.proto": _OPAQUE_PROTO, "ipv4.dscp": 0,
             "ipv4.ttl": 64, "ipv6.src": 0x20010DB8 << 96 | 1, "ipv6.dst": 0x20010DB8 << 96 | 2,
             "ipv6.next_hdr": _NO_NEXT_HEADER, "tcp.flags": 0x02, "udp.dport": 53,
             "vxlan.vni": 1, "std.ingress_port": DEFAULT_PORT}


def _default(field: str, rng: random.Random) -> int:
    """The value a free field takes when nothing else asks for one."""
    if field in _DEFAULTS:
        return _DEFAULTS[field]
    if field == "ipv4.src":
        return 0xC0A80100 | rng.randint(2, 250)
    if field == "ipv4.dst":
        return 0x0A000100 | rng.randint(2, 250)
    return rng.randint(1024, 65535)               # transport ports


def _domain(region: Region, field: str) -> ValueSet:
    dom = region.domain(field)
    if field == "std.ingress_port":
        kept = dom - ValueSet.of_values(dom.width, AVOID_PORTS)
        return kept or dom
    return dom


def _values(region: Region, rng: random.Random, dictionary: Mapping[str, Sequence[int]] | None,
            explore: bool, own: Mapping[str, int] | None = None) -> dict[str, int]:
    vals = {}
    for f in region.fields():
        dom = _domain(region, f)
        if own and f in own and own[f] in dom:      # the sender's own address: kept
            vals[f] = own[f]
            continue
        want = _default(f, rng)
        if explore:
            roll, opts = rng.random(), (dictionary or {}).get(f)
            if opts and roll < 0.5:
                want = rng.choice(list(opts))
            elif roll < 0.75 and f != "std.ingress_port":    # ports: those that matter only
                want = dom.sample(rng)
        vals[f] = dom.nearest(want)
    return vals


def candidates(chain: Chain, chains: Iterable[Chain] | None = None, *, seed: int = 0,
               parsed: Iterable[str] | None = None,
               dictionary: Mapping[str, Sequence[int]] | None = None,
               payload: bytes = b"sfclab", own: Mapping[str, int] | None = None
               ) -> Iterator[ClassPacket]:
    """An endless stream of packets of *chain*'s class, going round every region; the
    first of each region has the default values, the others draw free fields from
    *dictionary* (field -> interesting values), at random or keep the defaults (the
    ingress port changes only to a value of the dictionary or of the class).

    *own*: field -> the value every packet keeps wherever its region allows it (the
    sending host's addresses: :func:`host_fields`); where the class excludes it, the
    field is free as any other (:func:`contradicted` says which)."""
    rs = class_regions(chain, chains, parsed=parsed)
    rng = random.Random(f"{chain.name}/{seed}/explore")
    k = 0
    while True:
        i = k % len(rs)
        vals = _values(rs[i], rng, dictionary, explore=k >= len(rs), own=own)
        yield _packet(chain, rs[i], vals, payload, i)
        k += 1


def packets_for(chain: Chain, n: int = 1, *, seed: int = 0, chains: Iterable[Chain] | None = None,
                payload: bytes = b"sfclab", parsed: Iterable[str] | None = None,
                own: Mapping[str, int] | None = None) -> list[ClassPacket]:
    """*n* packets of *chain*'s class (scapy), each with the port it arrives on: the
    simplest header stack the class has, free fields as the NF examples expect (and
    as *own* says where the class allows: see :func:`candidates`).

    With *chains* (the chain set *chain* is installed with), packets are in the
    class as the switch sees it: no chain written earlier takes them
    (:class:`ClassUnreachable` when every packet is taken)."""
    region = class_regions(chain, chains, parsed=parsed, limit=1)[0]
    rng = random.Random(f"{chain.name}/{seed}")
    return [_packet(chain, region, _values(region, rng, None, explore=False, own=own),
                    payload, 0) for _ in range(n)]


#: The fields a host's traffic carries its own addresses in: ``(field, "src" or "dst",
#: the host's attribute)``.
HOST_FIELDS = (("eth.src", "src", "mac"), ("ipv4.src", "src", "ipv4"),
               ("eth.dst", "dst", "mac"), ("ipv4.dst", "dst", "ipv4"))


def host_fields(src=None, dst=None) -> dict[str, int]:
    """The addresses of traffic from host *src* to host *dst* (objects with ``ipv4``
    and ``mac``, as :class:`~sfclab.ir.topology.Host`; None: a server or a switch
    port, which has none) as classifier fields.

    >>> from sfclab.ir.topology import line
    >>> t = line(2)
    >>> {f: hex(v) for f, v in host_fields(t.hosts["h1"], t.hosts["h2"]).items()}
    {'eth.src': '0x1', 'ipv4.src': '0xa000001', 'eth.dst': '0x2', 'ipv4.dst': '0xa000002'}
    """
    ends = {"src": src, "dst": dst}
    return {f: getattr(ends[end], attr) for f, end, attr in HOST_FIELDS
            if ends[end] is not None}


def contradicted(packet, port: int, own: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """The fields of *own* a packet (scapy) carries with another value: field ->
    ``(wanted, carried)`` (the class's match left it no choice)."""
    got = field_values(packet, port)
    return {f: (v, got[f]) for f, v in own.items() if f in got and got[f] != v}


def _packet(chain: Chain, region: Region, vals: dict[str, int], payload: bytes,
            index: int) -> ClassPacket:
    port = vals.pop("std.ingress_port", DEFAULT_PORT)
    return ClassPacket(chain.name, port, build_packet(region.headers, vals, payload), index)


def _mac(v: int) -> str:
    return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))


_ETHERTYPES = {"vlan": 0x8100, "mpls": 0x8847, "ipv4": 0x0800, "ipv6": 0x86DD}


def build_packet(headers: Sequence[str], vals: Mapping[str, int], payload: bytes = b"sfclab"):
    """A scapy packet with Ethernet and *headers* (in parse order, as a
    :class:`~sfclab.ir.solve.Region` lists them), fields from *vals*.

    >>> p = build_packet(("vlan", "ipv4", "udp"), {"vlan.vid": 4000, "ipv4.dst": 0x0A000001,
    ...                  "udp.dport": 53})
    >>> p["Dot1Q"].vlan, p["IP"].dst, p["UDP"].dport, p["Ether"].type
    (4000, '10.0.0.1', 53, 33024)
    """
    from scapy.contrib.mpls import MPLS
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.layers.vxlan import VXLAN

    rng = random.Random(0)

    def v(field: str) -> int:
        return vals[field] if field in vals else _default(field, rng)

    after = list(headers[1:]) + [None]

    def next_type(i: int) -> int:
        return _ETHERTYPES.get(after[i], _OPAQUE_ETHERTYPE)

    first = headers[0] if headers else None
    pkt = Ether(dst=_mac(v("eth.dst")), src=_mac(v("eth.src")),
                type=_ETHERTYPES[first] if first in _ETHERTYPES else v("eth.type"))
    for i, h in enumerate(headers):
        if h == "vlan":
            pkt = pkt / Dot1Q(vlan=v("vlan.vid"), prio=v("vlan.pcp"), type=next_type(i))
        elif h == "mpls":
            pkt = pkt / MPLS(label=16, s=1, ttl=64)
        elif h == "ipv4":
            pkt = pkt / IP(src=str(ipaddress.IPv4Address(v("ipv4.src"))),
                           dst=str(ipaddress.IPv4Address(v("ipv4.dst"))), ttl=v("ipv4.ttl"),
                           tos=v("ipv4.dscp") << 2, proto=_proto(after[i], v("ipv4.proto")))
        elif h == "ipv6":
            pkt = pkt / IPv6(src=str(ipaddress.IPv6Address(v("ipv6.src"))),
                             dst=str(ipaddress.IPv6Address(v("ipv6.dst"))),
                             nh=_proto(after[i], v("ipv6.next_hdr")))
        elif h == "tcp":
            pkt = pkt / TCP(sport=v("tcp.sport"), dport=v("tcp.dport"), flags=v("tcp.flags"))
        elif h == "udp":
            pkt = pkt / UDP(sport=v("udp.sport"),
                            dport=4789 if after[i] == "vxlan" else v("udp.dport"))
        elif h == "icmp":
            pkt = pkt / ICMP()
        elif h == "vxlan":
            pkt = pkt / VXLAN(vni=v("vxlan.vni")) / Ether(dst=_mac(2)) / IP(dst="10.0.1.9")
    return pkt / payload


def _proto(nxt: str | None, value: int) -> int:
    return {"tcp": 6, "udp": 17, "icmp": 1}.get(nxt or "", value)


def field_values(pkt, port: int) -> dict[str, int]:
    """The classifier fields (``ipv4.dst`` …) a scapy packet has, as ints."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.layers.vxlan import VXLAN

    out = {"std.ingress_port": port}
    if Ether in pkt:
        e = pkt[Ether]
        out |= {"eth.dst": int(e.dst.replace(":", ""), 16),
                "eth.src": int(e.src.replace(":", ""), 16), "eth.type": e.type}
    if Dot1Q in pkt:
        out |= {"vlan.vid": pkt[Dot1Q].vlan, "vlan.pcp": pkt[Dot1Q].prio}
    if IP in pkt:
        ip = pkt[IP]
        out |= {"ipv4.src": int(ipaddress.IPv4Address(ip.src)),
                "ipv4.dst": int(ipaddress.IPv4Address(ip.dst)), "ipv4.proto": ip.proto,
                "ipv4.dscp": ip.tos >> 2, "ipv4.ttl": ip.ttl}
    if IPv6 in pkt:
        ip6 = pkt[IPv6]
        out |= {"ipv6.src": int(ipaddress.IPv6Address(ip6.src)),
                "ipv6.dst": int(ipaddress.IPv6Address(ip6.dst)), "ipv6.next_hdr": ip6.nh}
    if TCP in pkt:
        out |= {"tcp.sport": pkt[TCP].sport, "tcp.dport": pkt[TCP].dport,
                "tcp.flags": int(pkt[TCP].flags)}
    if UDP in pkt:
        out |= {"udp.sport": pkt[UDP].sport, "udp.dport": pkt[UDP].dport}
    if VXLAN in pkt:
        out["vxlan.vni"] = pkt[VXLAN].vni
    return out

