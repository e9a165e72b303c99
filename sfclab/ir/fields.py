"""Packet header fields a chain classifier (``match``) may test.

Each field has the name a user writes (``ipv4.dst``), its width in bits, the P4
expression that holds it in the composed program (``hdr.ipv4.dst_addr``), the
header that must be valid for it, and the kind of literal it takes.

>>> FIELDS["ipv4.dst"].width, FIELDS["ipv4.dst"].p4
(32, 'hdr.ipv4.dst_addr')
>>> resolve_field("ip.dst").name
'ipv4.dst'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["HeaderField", "FIELDS", "ALIASES", "resolve_field"]


@dataclass(frozen=True, slots=True)
class HeaderField:
    name: str
    width: int
    p4: str
    header: str
    #: "int", "ipv4", "ipv6" or "mac": how values are written and printed.
    literal: str = "int"


def _f(name: str, width: int, p4: str, literal: str = "int") -> HeaderField:
    header = p4.split(".")[1] if p4.startswith("hdr.") else ""
    return HeaderField(name, width, p4, header, literal)


FIELDS: Mapping[str, HeaderField] = MappingProxyType({f.name: f for f in [
    _f("eth.dst", 48, "hdr.ethernet.dst_addr", "mac"),
    _f("eth.src", 48, "hdr.ethernet.src_addr", "mac"),
    _f("eth.type", 16, "hdr.ethernet.ether_type"),
    _f("vlan.vid", 12, "hdr.vlan.vid"),
    _f("vlan.pcp", 3, "hdr.vlan.pcp"),
    _f("ipv4.src", 32, "hdr.ipv4.src_addr", "ipv4"),
    _f("ipv4.dst", 32, "hdr.ipv4.dst_addr", "ipv4"),
    _f("ipv4.proto", 8, "hdr.ipv4.protocol"),
    _f("ipv4.dscp", 6, "hdr.ipv4.dscp"),
    _f("ipv4.ttl", 8, "hdr.ipv4.ttl"),
    _f("ipv6.src", 128, "hdr.ipv6.src_addr", "ipv6"),
    _f("ipv6.dst", 128, "hdr.ipv6.dst_addr", "ipv6"),
    _f("ipv6.next_hdr", 8, "hdr.ipv6.next_hdr"),
    _f("tcp.sport", 16, "hdr.tcp.src_port"),
    _f("tcp.dport", 16, "hdr.tcp.dst_port"),
    _f("tcp.flags", 8, "hdr.tcp.flags"),
    _f("udp.sport", 16, "hdr.udp.src_port"),
    _f("udp.dport", 16, "hdr.udp.dst_port"),
    _f("vxlan.vni", 24, "hdr.vxlan.vni"),
    _f("std.ingress_port", 9, "standard_metadata.ingress_port"),
]})

ALIASES: Mapping[str, str] = MappingProxyType({
    "ethernet.dst": "eth.dst", "ethernet.src": "eth.src", "ethernet.type": "eth.type",
    "eth.ether_type": "eth.type", "eth.ethertype": "eth.type",
    "ip.src": "ipv4.src", "ip.dst": "ipv4.dst", "ip.proto": "ipv4.proto",
    "ipv4.protocol": "ipv4.proto", "ip.dscp": "ipv4.dscp", "ipv4.ttl": "ipv4.ttl",
    "tcp.src_port": "tcp.sport", "tcp.dst_port": "tcp.dport",
    "udp.src_port": "udp.sport", "udp.dst_port": "udp.dport",
    "ingress_port": "std.ingress_port", "input_port": "std.ingress_port",
    "in_port": "std.ingress_port", "standard_metadata.ingress_port": "std.ingress_port",
})


def resolve_field(name: str) -> HeaderField | None:
    """The header field called *name* (or one of its aliases), or None."""
    key = name.lower()
    return FIELDS.get(ALIASES.get(key, key))
