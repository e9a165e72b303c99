"""Packets of a chain's class: what ``%sfc send web 20`` sends.

:func:`packets_for` builds packets that satisfy a chain's classifier (every
``match`` term: exact values, prefixes, value/masks, ranges, ``!=``) and vary
everything else, reproducibly (a seed).  Fields no term constrains get values
the NF library's example entries use (destination MAC ``00:00:00:00:00:02``,
destination 10.0.1.0/24), so a class sent through the examples is forwarded;
given the whole chain set, a packet that a chain written earlier (higher
priority in the initializer) would also match is drawn again.

>>> import sfclab
>>> c = sfclab.parse("chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80: firewall")
>>> [(p.port, p.packet["TCP"].dport) for p in packets_for(c["web"], 2)]
[(1, 80), (1, 80)]
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..errors import SfclabError
from ..ir.classifier import FieldMatch
from ..ir.fields import FIELDS
from ..ir.model import Chain

__all__ = ["ClassPacket", "packets_for", "field_values", "DEFAULT_PORT"]

#: The port class packets arrive on unless the classifier names one.
DEFAULT_PORT = 1


@dataclass(frozen=True, slots=True)
class ClassPacket:
    """A packet of a chain's class, and the port it arrives on."""

    chain: str
    port: int
    packet: object          # a scapy packet

    def __bytes__(self) -> bytes:
        return bytes(self.packet)


def _pick(t: FieldMatch, width: int, rng: random.Random) -> int:
    top = (1 << width) - 1
    for _ in range(256):
        if t.kind == "range":
            v = rng.randint(t.value, t.high or 0) if not t.negate else rng.randint(0, top)
        else:
            m = t.effective_mask
            v = (t.value & m) | (rng.randint(0, top) & ~m & top) if not t.negate \
                else rng.randint(0, top)
        if t.matches(v):
            return v
    raise SfclabError(f"cannot find a value for '{t}'")


def _values(chain: Chain, rng: random.Random) -> dict[str, int]:
    vals: dict[str, int] = {}
    for t in (chain.match.terms if chain.match else ()):
        width = FIELDS[t.field].width
        for _ in range(256):        # several terms on one field: all must hold
            v = _pick(t, width, rng)
            if all(o.matches(v) for o in chain.match.terms if o.field == t.field):
                vals[t.field] = v
                break
        else:
            raise SfclabError(f"chain {chain.name!r}: its classifier cannot match any packet "
                              f"({chain.match})")
    return vals


def _build(vals: dict[str, int], rng: random.Random, payload: bytes):
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.layers.vxlan import VXLAN

    def mac(v: int) -> str:
        return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))

    eth = Ether(dst=mac(vals.get("eth.dst", 2)), src=mac(vals.get("eth.src", 0x0A0000000001)))
    pkt = eth
    if "vlan.vid" in vals or "vlan.pcp" in vals:
        pkt = pkt / Dot1Q(vlan=vals.get("vlan.vid", 1), prio=vals.get("vlan.pcp", 0))
    if any(f.startswith("ipv6.") for f in vals):
        import ipaddress

        l3 = IPv6(src=str(ipaddress.IPv6Address(vals.get("ipv6.src", 0x20010DB8 << 96 | 1))),
                  dst=str(ipaddress.IPv6Address(vals.get("ipv6.dst", 0x20010DB8 << 96 | 2))))
        proto_field = "nh"
    else:
        import ipaddress

        l3 = IP(src=str(ipaddress.IPv4Address(vals.get("ipv4.src", 0xC0A80100 | rng.randint(2, 250)))),
                dst=str(ipaddress.IPv4Address(vals.get("ipv4.dst", 0x0A000100 | rng.randint(2, 250)))),
                ttl=vals.get("ipv4.ttl", 64), tos=vals.get("ipv4.dscp", 0) << 2)
        proto_field = "proto"
    if "eth.type" in vals and vals["eth.type"] not in (0x0800, 0x86DD, 0x8100):
        eth.type = vals["eth.type"]
        return pkt / payload
    proto = vals.get("ipv4.proto", vals.get("ipv6.next_hdr"))
    if proto is None:
        proto = 17 if any(f.startswith(("udp.", "vxlan.")) for f in vals) else 6
    if proto == 6:
        l4 = TCP(sport=vals.get("tcp.sport", rng.randint(1024, 65535)),
                 dport=vals.get("tcp.dport", rng.randint(1024, 65535)),
                 flags=vals.get("tcp.flags", 0x02))
    elif proto == 17:
        l4 = UDP(sport=vals.get("udp.sport", rng.randint(1024, 65535)),
                 dport=vals.get("udp.dport", 4789 if "vxlan.vni" in vals else 53))
        if "vxlan.vni" in vals:
            l4 = l4 / VXLAN(vni=vals["vxlan.vni"]) / Ether(dst=mac(2)) / IP(dst="10.0.1.9")
    elif proto == 1:
        l4 = ICMP()
    else:
        setattr(l3, proto_field, proto)
        return pkt / l3 / payload
    return pkt / l3 / l4 / payload


def field_values(pkt, port: int) -> dict[str, int]:
    """The classifier fields (``ipv4.dst`` …) a scapy packet has, as ints."""
    import ipaddress

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


def packets_for(chain: Chain, n: int = 1, *, seed: int = 0, chains=None,
                payload: bytes = b"sfclab") -> list[ClassPacket]:
    """*n* packets of *chain*'s class (scapy), each with the port it arrives on.

    With *chains* (the chain set *chain* is installed with), packets that an
    earlier chain's classifier also matches are drawn again: they would not
    reach *chain* on the switch."""
    rng = random.Random(f"{chain.name}/{seed}")
    ahead = []
    if chains is not None:
        for c in chains:
            if c.name == chain.name:
                break
            ahead.append(c)
    out = []
    for _ in range(n):
        for _attempt in range(200):
            vals = _values(chain, rng)
            port = vals.pop("std.ingress_port", DEFAULT_PORT)
            pkt = _build(vals, rng, payload)
            got = field_values(pkt, port)
            if not any(c.match is None or c.match.matches(got) for c in ahead):
                break
        else:
            raise SfclabError(f"chain {chain.name!r}: every packet of its class is taken by an "
                              f"earlier chain ({', '.join(c.name for c in ahead)})",
                              hint="reorder the chains, or narrow the earlier classifiers")
        out.append(ClassPacket(chain.name, port, pkt))
    return out
