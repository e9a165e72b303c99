"""A :class:`~sfclab.ir.topology.Topology` back to topology-language text.

``parse_topology(format_topology(t))`` gives a topology equal to ``t``
(:meth:`~sfclab.ir.topology.Topology.signature`): every host's address and MAC
and every switch port are written out; a host's or server's interface 0 is
left implicit, and its one plain link is written ``at SWITCH:PORT``.

>>> from sfclab.ir.topology import ring
>>> print(format_topology(ring(3, hosts=0, stages=8)))
topology ring3
switch s1, s2, s3 stages 8
link s1:1 -- s2:1
link s3:2 -- s1:2
link s2:2 -- s3:1
"""

from __future__ import annotations

import re
from decimal import Decimal

from ..ir.topology import Host, Link, Server, Switch, Topology

__all__ = ["format_topology", "quote_name", "plain_number", "amount"]

_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STATEMENTS = frozenset({"topology", "switch", "host", "server", "link", "use"})
_SWITCH_DEFAULTS = {"arch": "v1model", "pipes": 1, "stages": 12, "tables": 64, "ports": 64}


def quote_name(name: str) -> str:
    """*name* as written in topology text: bare if it can be, else in quotes.

    >>> quote_name("s1"), quote_name("leaf-1"), quote_name("host")
    ('s1', '"leaf-1"', '"host"')
    """
    return name if _BARE.match(name) and name not in _STATEMENTS else f'"{name}"'


def plain_number(x: float) -> str:
    """*x* in the shortest decimal that reads back exactly, without an exponent.

    >>> plain_number(0.5), plain_number(10.0), plain_number(1e-05)
    ('0.5', '10', '0.00001')
    """
    text = format(Decimal(repr(float(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _switch_props(sw: Switch) -> str:
    return "".join(f" {k} {getattr(sw, k)}" for k, v in _SWITCH_DEFAULTS.items()
                   if getattr(sw, k) != v)


def _end(topo: Topology, node: str, port: int) -> str:
    if port == 0 and topo.kind(node) != "switch":
        return quote_name(node)
    return f"{quote_name(node)}:{port}"


#: Units to print amounts in, largest first, with their factor to the stored unit.
_PRINT_UNITS = {
    "latency": (("s", 1e3), ("ms", 1.0), ("us", 1e-3), ("ns", 1e-6)),
    "bandwidth": (("Tbps", 1e3), ("Gbps", 1.0), ("Mbps", 1e-3), ("Kbps", 1e-6), ("bps", 1e-9)),
}


def amount(what: str, x: float) -> str:
    """*x* (ms or Gbps) in the largest unit that shows it as ≥ 1 and reads back exactly.

    >>> amount("latency", 0.5), amount("latency", 0.002), amount("bandwidth", 0.1)
    ('500us', '2us', '100Mbps')
    """
    for unit, factor in _PRINT_UNITS[what]:
        text = plain_number(x / factor)
        if x / factor >= 1 and float(text) * factor == x:
            return text + unit
    base = "ms" if what == "latency" else "Gbps"
    return plain_number(x) + base


def _link(topo: Topology, k: Link) -> str:
    text = f"link {_end(topo, k.a, k.a_port)} -- {_end(topo, k.b, k.b_port)}"
    return text + _link_props(k)


def _link_props(k: Link) -> str:
    text = f" latency {amount('latency', k.latency_ms)}" if k.latency_ms else ""
    if k.bandwidth_gbps is not None:
        text += f" bandwidth {amount('bandwidth', k.bandwidth_gbps)}"
    return text


def _attached(topo: Topology, node: str) -> Link | None:
    """The one plain link of a host or server on its interface 0, written as ``at``."""
    links = [d["link"] for d in topo.graph[node].values()]
    if len(links) == 1 and links[0].port_of(node) == 0 and not _link_props(links[0]):
        return links[0]
    return None


def format_lines(topo: Topology) -> list[str]:
    """The statements, one a line: switches (grouped while their properties agree),
    hosts, servers, links (in the order written, else by node and port)."""
    out = [f"topology {quote_name(topo.name)}"]
    group: list[str] = []
    props = None
    for sw in topo.switches.values():
        mine = _switch_props(sw)
        if group and mine != props:
            out.append(f"switch {', '.join(group)}{props}")
            group = []
        group.append(quote_name(sw.name))
        props = mine
    if group:
        out.append(f"switch {', '.join(group)}{props}")
    written: set[Link] = set()
    for obj in (d["obj"] for _, d in topo.graph.nodes(data=True)):
        if isinstance(obj, Switch):
            continue
        if isinstance(obj, Host):
            text = f"host {quote_name(obj.name)} {obj.ip} mac {obj.mac_text}"
        else:
            runs = f" runs {', '.join(quote_name(n) for n in obj.nfs)}" if obj.nfs else ""
            text = f"server {quote_name(obj.name)}{runs}"
        k = _attached(topo, obj.name)
        if k is not None:
            sw = k.other(obj.name)
            text += f" at {quote_name(sw)}:{k.port_of(sw)}"
            written.add(k)
        out.append(text)
    index = {n: i for i, n in enumerate(topo.graph)}

    def order(k: Link) -> tuple[int, int, int, int]:
        first = min((k.a, k.b), key=index.__getitem__)
        return (k.line, k.column, index[first], k.port_of(first))

    out += [_link(topo, k) for k in sorted(topo.links, key=order) if k not in written]
    return out


def format_topology(topo: Topology) -> str:
    """The topology as text that parses back to an equal one.

    >>> from sfclab.ir.topology import line
    >>> print(format_topology(line(2)))
    topology line2
    switch s1, s2
    host h1 10.0.0.1 mac 00:00:00:00:00:01 at s1:1
    host h2 10.0.0.2 mac 00:00:00:00:00:02 at s2:1
    link s1:2 -- s2:2
    """
    return "\n".join(format_lines(topo))
