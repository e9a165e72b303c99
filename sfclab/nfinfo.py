"""What the chain compiler needs to know about each network function (NF).

An :class:`NFInfo` is the compiler's view of one NF type: its canonical name, the
names the papers use for it, its protocol layer (for ordering pipelines), its
offloadability (P4SFC), the metadata fields it sets (usable in chain
conditions), and a resource estimate.  An :class:`NFCatalog` holds them and
resolves names case-insensitively, with a "did you mean" for typos.

The P4 NF library (``sfclab.p4.catalog``) builds its catalogue from the ``.p4``
files and their manifests; :data:`BUILTIN` is a hand-written table of the same
NFs that the chain language can use on its own (for example before any P4 is
loaded).

>>> BUILTIN.resolve("FW").name
'firewall'
>>> BUILTIN.resolve("Heavy Hitter").fields["hitter_value"]
32
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import CatalogError, did_you_mean

__all__ = [
    "NFInfo",
    "NFCatalog",
    "BUILTIN",
    "ENDPOINTS",
    "GLOBAL_FIELDS",
    "OFFLOAD_CLASSES",
    "normalize_name",
]

#: Built-in chain end points.  They are not NFs and are never in a catalogue.
ENDPOINTS = ("input", "output", "drop", "cpu")

#: FlexMesh's per-packet parameters, available on every NF: the NF's metadata
#: value (for if-else / multibranch) and its loop counter.  Name -> bit width.
GLOBAL_FIELDS: Mapping[str, int] = MappingProxyType(
    {"global_metadata": 32, "global_counter": 8}
)
#: Other spellings of the global fields (the FlexMesh paper writes ``global_md``).
GLOBAL_FIELD_ALIASES: Mapping[str, str] = MappingProxyType(
    {"global_md": "global_metadata", "metadata": "global_metadata", "counter": "global_counter"}
)

#: P4SFC's offloadability classes.
OFFLOAD_CLASSES = ("fully", "partially", "non")

_SEP = re.compile(r"[\s\-]+")


@lru_cache(maxsize=4096)
def normalize_name(name: str) -> str:
    """Case- and spacing-insensitive form of an NF name.

    >>> normalize_name("Heavy Hitter"), normalize_name("L3-SW"), normalize_name("IP_SG")
    ('heavy_hitter', 'l3_sw', 'ip_sg')
    """
    return _SEP.sub("_", name.strip()).lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class NFInfo:
    """The compiler's view of one NF type."""

    name: str
    layer: int
    offload: str = "fully"
    aliases: tuple[str, ...] = ()
    fields: Mapping[str, int] = field(default_factory=dict)
    tables: int = 1
    stages: int = 1
    description: str = ""
    source: str | None = None

    def __post_init__(self) -> None:
        if self.offload not in OFFLOAD_CLASSES:
            raise CatalogError(
                f"NF {self.name!r}: offload must be one of {', '.join(OFFLOAD_CLASSES)}, "
                f"not {self.offload!r}"
            )
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def field_width(self, name: str) -> int | None:
        """Width of a metadata field this NF sets (global fields included), or None."""
        name = GLOBAL_FIELD_ALIASES.get(name, name)
        if name in GLOBAL_FIELDS:
            return GLOBAL_FIELDS[name]
        return self.fields.get(name)

    def field_names(self) -> list[str]:
        return [*GLOBAL_FIELDS, *self.fields]


class NFCatalog:
    """NF types by name, resolving the papers' aliases case-insensitively."""

    def __init__(self, infos: Iterable[NFInfo] = ()) -> None:
        self._by_name: dict[str, NFInfo] = {}
        self._index: dict[str, str] = {}
        for info in infos:
            self.add(info)

    def add(self, info: NFInfo, *, replace: bool = False) -> None:
        """Add *info*; a name or alias that is already taken is an error unless *replace*."""
        keys = {normalize_name(k) for k in (info.name, *info.aliases)}
        for key in keys:
            if key in ENDPOINTS:
                raise CatalogError(f"NF name {key!r} is reserved for a chain end point")
            owner = self._index.get(key)
            if owner is not None and owner != info.name and not replace:
                raise CatalogError(
                    f"NF name {key!r} of {info.name!r} is already used by {owner!r}",
                    hint="rename the NF or drop the alias",
                )
        if info.name in self._by_name:
            if not replace:
                raise CatalogError(f"NF {info.name!r} is already in the catalogue",
                                   hint="pass replace=True to redefine it")
            self.remove(info.name)
        self._by_name[info.name] = info
        for key in keys:
            self._index[key] = info.name

    def remove(self, name: str) -> None:
        info = self.resolve(name)
        del self._by_name[info.name]
        self._index = {k: v for k, v in self._index.items() if v != info.name}

    def get(self, name: str) -> NFInfo | None:
        key = self._index.get(normalize_name(name))
        return self._by_name[key] if key else None

    def resolve(self, name: str) -> NFInfo:
        """The NF called *name* (any alias, any case); :class:`CatalogError` if unknown."""
        info = self.get(name)
        if info is None:
            raise CatalogError(f"unknown NF {name!r}", hint=self.suggest(name))
        return info

    def suggest(self, name: str) -> str:
        hint = did_you_mean(normalize_name(name), self._index)
        if hint:
            return hint
        return "known NFs: " + ", ".join(sorted(self._by_name))

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def copy(self) -> NFCatalog:
        return NFCatalog(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name) in self._index

    def __iter__(self) -> Iterator[NFInfo]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)


def _nf(name: str, layer: int, offload: str, aliases: str = "", fields: dict | None = None,
        tables: int = 1, stages: int = 1, description: str = "") -> NFInfo:
    return NFInfo(name=name, layer=layer, offload=offload,
                  aliases=tuple(a for a in aliases.split(",") if a),
                  fields=fields or {}, tables=tables, stages=stages, description=description)


#: The NF library as a plain table (names, layers, offloadability, metadata).
BUILTIN = NFCatalog([
    _nf("classifier", 2, "fully", "CLF,IPClassifier", {"class_id": 16}, 1, 1,
        "Dejavu's classifier end point: picks the service path"),
    _nf("mac_learning", 2, "fully", "MAC Learning,MAC_LEARN,L2_LEARN", {"learned": 1}, 1, 1,
        "sends unknown source MACs to the controller as digests"),
    _nf("l2fwd", 2, "fully", "L2_SW,L2fwd,L2 switch,l2_switch,switch", {"flood_flag": 1}, 1, 1,
        "exact match on the destination MAC; sets flood_flag on a miss"),
    _nf("flood", 2, "fully", "Flood,broadcast", {}, 1, 1, "sends to a multicast group"),
    _nf("vgw", 2, "fully", "VGW,vxlan_gateway,vxlan", {"decap": 1}, 2, 2,
        "VXLAN gateway: encapsulates and decapsulates"),
    _nf("sr_encap", 3, "fully", "SEGMENT_ROUTING_ENCAP,SR_ENCAP,SR,segment_routing", {}, 1, 1,
        "pushes one segment-routing label per run"),
    _nf("l3fwd", 3, "fully", "L3_SW,L3fwd,L3 switch,l3_switch,ipv4_lpm,IPRouteTable", {}, 1, 1,
        "longest-prefix-match IPv4 forwarding"),
    _nf("router", 3, "fully", "Router,RT", {}, 1, 1,
        "Dejavu's router end point: next hop and egress port"),
    _nf("ipsg", 3, "fully", "IP_SG,IPSG,IP source guard,ip_source_guard", {"verdict": 1}, 1, 1,
        "drops packets whose source IP does not belong to the ingress port"),
    _nf("firewall", 4, "fully", "FW,ACL,Firewall", {"verdict": 1}, 1, 1,
        "ternary 5-tuple access control list"),
    _nf("stateful_firewall", 4, "fully", "SFW,stateful_fw", {"verdict": 1, "rate": 32}, 2, 2,
        "per-flow packet rate in registers; over the limit sets the verdict"),
    _nf("nat", 4, "partially", "NAT,IPRewriter,TCPRewriter", {"translated": 1}, 1, 1,
        "stateless source NAT"),
    _nf("lb", 4, "partially", "LB,load_balancer,loadbalancer", {"backend": 16}, 2, 2,
        "hashes the 5-tuple onto a backend pool"),
    _nf("qos", 4, "fully", "QoS,dscp", {"color": 2}, 1, 1, "DSCP marking and metering"),
    _nf("heavy_hitter", 4, "fully", "HITTER,Heavy Hitter,HH,heavy_hitter_detector",
        {"hitter_value": 32}, 1, 3, "count-min sketch of per-flow packet counts"),
    _nf("monitor", 4, "fully", "MN,Counter,Flow Monitor,flow_monitor", {}, 1, 1,
        "per-flow packet and byte counters"),
    _nf("reporter", 4, "fully", "REPORTER,report", {}, 1, 1,
        "sends a copy of the packet to the controller"),
    _nf("ids", 7, "fully", "IDS", {"verdict": 1}, 1, 1,
        "header-signature matching; sets the verdict"),
    _nf("ips", 7, "non", "IPS,payload_ips", {"verdict": 1}, 0, 0,
        "payload inspection: runs on a server only"),
    _nf("dpi", 7, "non", "DPI,deep_packet_inspection", {"verdict": 1}, 0, 0,
        "deep packet inspection: runs on a server only"),
    _nf("ipsec", 7, "non", "IPSec,VPN,IPSecDES", {}, 0, 0,
        "encryption: runs on a server only"),
])
