"""Network topologies: switches, hosts, servers and the links between them.

A :class:`Topology` is a ``networkx.Graph`` with a documented schema, plus the
objects that describe its nodes and links.  It is what the ``%%topology``
language (:mod:`sfclab.lang.topology`), the generators below and
:meth:`Topology.from_networkx` all produce, and what network placement, the
per-switch code generator and the network targets read.

Graph schema
============

**Nodes** are named (``"s1"``, ``"h1"``, ``"srv1"``); node attributes:

========= ===================================================================
``kind``  ``"switch"``, ``"host"`` or ``"server"``
``obj``   the :class:`Switch`, :class:`Host` or :class:`Server`
========= ===================================================================

**Edges** are links; edge attribute ``link`` is the :class:`Link`, whose
``ports`` give the port on each end (``link.port_of(node)``).  Switch ports are
numbered from 1 (the architecture's CPU and recirculation ports are not
front-panel ports); a host or server has one interface per link, numbered from
0 in the order its links were added.

>>> t = line(3)
>>> list(t.switches), list(t.hosts)
(['s1', 's2', 's3'], ['h1', 'h2'])
>>> t.port("s1", "s2"), t.peer("s2", t.port("s2", "s1"))
(2, ('s1', 2))
>>> t.switch_route("h1", "h2")
['s1', 's2', 's3']
>>> t.endpoint("h2"), t.endpoint("s2:5")
(('s3', 1), ('s2', 5))
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from ..errors import TopologyError, did_you_mean

__all__ = [
    "Switch", "Host", "Server", "Link", "Topology", "NODE_KINDS",
    "line", "ring", "leaf_spine", "fat_tree", "GENERATORS", "MAX_PORTS", "MAX_NODES",
    "split_endpoint",
]

#: Kinds of node a topology has.
NODE_KINDS = ("switch", "host", "server")
#: Architectures a switch may have.
SWITCH_ARCHS = ("v1model", "tna")
#: Front-panel ports a switch may have: a port number is 9 bits, and 511 is the
#: drop port on v1model.
MAX_PORTS = 510


def _valid_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and \
        all(ch.isalnum() or ch in "_-." for ch in name)


def split_endpoint(spec: str) -> tuple[str, int | None]:
    """A chain's ingress or egress as written: ``(node, None)`` for a host or server,
    ``(switch, port)`` for ``SWITCH:PORT``.  Raises :class:`ValueError` saying what
    is wrong with the syntax (the names are checked against a topology elsewhere).

    >>> split_endpoint("h1"), split_endpoint("s4:7")
    (('h1', None), ('s4', 7))
    >>> split_endpoint("s4:0")
    Traceback (most recent call last):
    ValueError: port 0 is outside 1..510
    """
    name, colon, port = spec.partition(":")
    if not _valid_name(name):
        raise ValueError("names start with a letter and use letters, digits, _ - .")
    if not colon:
        return name, None
    if not port.isdigit():
        raise ValueError(f"the port {port!r} is not a number")
    if not 1 <= int(port) <= MAX_PORTS:
        raise ValueError(f"port {int(port)} is outside 1..{MAX_PORTS}")
    return name, int(port)


@dataclass(frozen=True, slots=True, kw_only=True)
class Switch:
    """A programmable switch: its architecture and the budgets NFs must fit in.

    ``stages`` is the number of match-action stages per pipelet, ``tables`` the
    number of logical tables the composed program may use, ``ports`` the number
    of front-panel ports (1 … ports)."""

    name: str
    arch: str = "v1model"
    pipes: int = 1
    stages: int = 12
    tables: int = 64
    ports: int = 64
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Host:
    """An end host: traffic starts and ends here.  ``ipv4`` and ``mac`` are ints."""

    name: str
    ipv4: int
    mac: int
    line: int = 0
    column: int = 0

    @property
    def ip(self) -> str:
        return str(ipaddress.IPv4Address(self.ipv4))

    @property
    def mac_text(self) -> str:
        return ":".join(f"{b:02x}" for b in self.mac.to_bytes(6, "big"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Server:
    """A server that runs NFs a switch cannot (P4SFC's non-offloadable NFs).

    ``nfs``: the NF types it runs (empty: any NF)."""

    name: str
    nfs: tuple[str, ...] = ()
    line: int = 0
    column: int = 0

    def runs(self, nf: str) -> bool:
        return not self.nfs or nf in self.nfs


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """A link between two nodes, with the port it uses on each end."""

    a: str
    a_port: int
    b: str
    b_port: int
    latency_ms: float = 0.0
    bandwidth_gbps: float | None = None
    line: int = 0
    column: int = 0

    def port_of(self, node: str) -> int:
        """The port this link uses on *node*."""
        if node == self.a:
            return self.a_port
        if node == self.b:
            return self.b_port
        raise KeyError(node)

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a

    def __str__(self) -> str:
        extra = "".join([f" latency {self.latency_ms:g}ms" if self.latency_ms else "",
                         f" bandwidth {self.bandwidth_gbps:g}Gbps" if self.bandwidth_gbps else ""])
        return f"{self.a}:{self.a_port} -- {self.b}:{self.b_port}{extra}"


Node = Switch | Host | Server
#: Where each argument of an ``add_*`` call was written: name -> (line, column, width).
Where = Mapping[str, tuple[int, int, int]]


def _kind(obj: Node) -> str:
    return {Switch: "switch", Host: "host", Server: "server"}[type(obj)]


@dataclass
class Topology:
    """Switches, hosts and servers, linked.  Build one with the ``add_*`` methods,
    a generator (:func:`line`, :func:`ring`, :func:`leaf_spine`, :func:`fat_tree`),
    :meth:`from_networkx`, or the topology language.

    Every ``add_*`` checks its arguments and raises :class:`TopologyError`
    (with the position given as ``line``/``column``, if any) without changing
    the topology."""

    name: str = "net"
    graph: nx.Graph = field(default_factory=nx.Graph)
    source: str = ""
    text: str = ""

    # -- building ------------------------------------------------------------------------------
    def _error(self, message: str, *, line: int = 0, column: int = 0, hint: str = "",
               width: int = 1) -> TopologyError:
        return TopologyError(message, line=line, column=column, source=self.source or "<topology>",
                             text=self.text, hint=hint, width=width)

    @staticmethod
    def _where(at: Where | None, key: str, line: int, column: int, width: int = 1
               ) -> dict[str, int]:
        """The position of argument *key* (from *at*), else the node's or link's."""
        if at and key in at:
            ln, col, w = at[key]
            return {"line": ln, "column": col, "width": w}
        return {"line": line, "column": column, "width": width}

    def _new_name(self, name: str, line: int, column: int, at: Where | None) -> None:
        where = self._where(at, "name", line, column, len(name))
        if not _valid_name(name):
            raise self._error(f"bad node name {name!r}", **where,
                              hint="names start with a letter and use letters, digits, _ - .")
        if name in self.graph:
            raise self._error(f"{name!r} is defined twice", **where,
                              hint="give each switch, host and server its own name")

    def add_switch(self, name: str, *, arch: str = "v1model", pipes: int = 1, stages: int = 12,
                   tables: int = 64, ports: int = 64, line: int = 0, column: int = 0,
                   at: Where | None = None) -> Switch:
        """Add a switch (see :class:`Switch` for the budgets).

        *line*, *column* say where the switch's name is written; *at* maps an
        argument's name (``"arch"``, ``"ports"`` …) to ``(line, column, width)`` of
        its value, so that an error points at it."""
        self._new_name(name, line, column, at)
        if not isinstance(arch, str) or arch not in SWITCH_ARCHS:
            raise self._error(f"switch {name!r}: unknown architecture {arch!r}",
                              hint=did_you_mean(str(arch), SWITCH_ARCHS)
                              or f"use one of {', '.join(SWITCH_ARCHS)}",
                              **self._where(at, "arch", line, column, len(name)))
        for what, v in (("pipes", pipes), ("stages", stages), ("tables", tables),
                        ("ports", ports)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise self._error(f"switch {name!r}: {what} must be a whole number ≥ 1, "
                                  f"not {v!r}", hint=f"e.g. `{what} 4`",
                                  **self._where(at, what, line, column, len(name)))
        if ports > MAX_PORTS:
            raise self._error(f"switch {name!r}: {ports} ports do not fit a 9-bit port number "
                              f"(at most {MAX_PORTS} front-panel ports)",
                              hint=f"use ports {MAX_PORTS} or fewer",
                              **self._where(at, "ports", line, column, len(name)))
        sw = Switch(name=name, arch=arch, pipes=pipes, stages=stages, tables=tables, ports=ports,
                    line=line, column=column)
        self.graph.add_node(name, kind="switch", obj=sw)
        return sw

    def add_host(self, name: str, *, ipv4: int | str | None = None, mac: int | str | None = None,
                 line: int = 0, column: int = 0, at: Where | None = None) -> Host:
        """Add a host; without an address it gets the lowest free ``10.0.0.N`` and
        MAC ``00:00:00:00:00:NN`` (N ≥ 1).  *at* as in :meth:`add_switch`
        (``"ipv4"``, ``"mac"``)."""
        self._new_name(name, line, column, at)
        hosts = self.hosts.values()
        try:
            ip = int(ipaddress.IPv4Address(ipv4)) if ipv4 is not None else \
                _lowest_free(0x0A000000, {h.ipv4 for h in hosts})
        except (ipaddress.AddressValueError, ValueError):
            raise self._error(f"host {name!r}: {ipv4!r} is not an IPv4 address",
                              hint="write it like 10.0.0.1",
                              **self._where(at, "ipv4", line, column, len(name))) from None
        try:
            m = _mac(mac) if mac is not None else _lowest_free(0, {h.mac for h in hosts})
        except ValueError:
            raise self._error(f"host {name!r}: {mac!r} is not a MAC address",
                              hint="write it like 00:00:00:00:00:01",
                              **self._where(at, "mac", line, column, len(name))) from None
        for h in hosts:
            if h.ipv4 == ip:
                raise self._error(f"host {name!r}: address {ipaddress.IPv4Address(ip)} is "
                                  f"already {h.name!r}'s", hint="give each host its own address",
                                  **self._where(at, "ipv4", line, column, len(name)))
            if h.mac == m:
                raise self._error(f"host {name!r}: MAC {_mac_text(m)} is already {h.name!r}'s",
                                  hint="give each host its own MAC address",
                                  **self._where(at, "mac", line, column, len(name)))
        host = Host(name=name, ipv4=ip, mac=m, line=line, column=column)
        self.graph.add_node(name, kind="host", obj=host)
        return host

    def add_server(self, name: str, *, nfs: Iterable[str] = (), line: int = 0,
                   column: int = 0, at: Where | None = None) -> Server:
        """Add a server that runs *nfs* (NF types; empty: any NF)."""
        self._new_name(name, line, column, at)
        srv = Server(name=name, nfs=tuple(nfs), line=line, column=column)
        self.graph.add_node(name, kind="server", obj=srv)
        return srv

    def add_link(self, a: str, b: str, *, a_port: int | None = None, b_port: int | None = None,
                 latency_ms: float = 0.0, bandwidth_gbps: float | None = None, line: int = 0,
                 column: int = 0, at: Where | None = None) -> Link:
        """Link *a* and *b*; a port left out is the node's lowest free one.

        *at* as in :meth:`add_switch`: ``"a"``, ``"b"``, ``"a_port"``, ``"b_port"``,
        ``"latency_ms"``, ``"bandwidth_gbps"``."""
        def where(key: str) -> dict[str, int]:
            return self._where(at, key, line, column)

        for end, n in (("a", a), ("b", b)):
            if n not in self.graph:
                raise self._error(f"unknown node {n!r} in a link", **where(end),
                                  hint=did_you_mean(n, self.graph) or
                                  "define the switch, host or server before linking it")
        if a == b:
            raise self._error(f"a link from {a!r} to itself", **where("b"),
                              hint="a link joins two different nodes")
        if self.graph.has_edge(a, b):
            raise self._error(f"{a!r} and {b!r} are already linked ({self.graph[a][b]['link']})",
                              **where("b"), hint="one link per pair of nodes")
        if self.kind(a) != "switch" and self.kind(b) != "switch":
            raise self._error(f"link {a} -- {b}: hosts and servers attach to switches",
                              **where("b"), hint=f"link {a} to a switch: `link {a} -- s1`")
        if latency_ms < 0:
            raise self._error(f"link {a} -- {b}: latency must be ≥ 0, not {latency_ms}",
                              **where("latency_ms"), hint="e.g. `latency 0.5ms`")
        if bandwidth_gbps is not None and bandwidth_gbps <= 0:
            raise self._error(f"link {a} -- {b}: bandwidth must be > 0, not {bandwidth_gbps}",
                              **where("bandwidth_gbps"), hint="e.g. `bandwidth 10Gbps`")
        ports = []
        for end, n, p in (("a", a, a_port), ("b", b, b_port)):
            used = self.ports_used(n)
            given = p is not None
            if p is None:
                p = next(i for i in range(self._first_port(n), 10_000) if i not in used)
            obj = self.node(n)
            pos = where(f"{end}_port" if given else end)
            if isinstance(obj, Switch) and not 1 <= p <= obj.ports:
                raise self._error(f"switch {n!r} has ports 1..{obj.ports}, not {p}"
                                  + ("" if given else " (all its ports are linked)"), **pos,
                                  hint=f"raise its ports (ports {max(p, obj.ports + 1)}) or "
                                       f"pick a free port")
            if p in used:
                raise self._error(f"port {p} of {n!r} is already linked to {used[p]!r}", **pos,
                                  hint=_free_ports_hint(obj, used))
            ports.append(p)
        link = Link(a=a, a_port=ports[0], b=b, b_port=ports[1], latency_ms=float(latency_ms),
                    bandwidth_gbps=bandwidth_gbps, line=line, column=column)
        self.graph.add_edge(a, b, link=link)
        return link

    def _first_port(self, node: str) -> int:
        return 1 if self.kind(node) == "switch" else 0

    # -- reading -------------------------------------------------------------------------------
    def _of(self, kind: str) -> dict[str, Any]:
        return {n: d["obj"] for n, d in self.graph.nodes(data=True) if d["kind"] == kind}

    @property
    def switches(self) -> dict[str, Switch]:
        return self._of("switch")

    @property
    def hosts(self) -> dict[str, Host]:
        return self._of("host")

    @property
    def servers(self) -> dict[str, Server]:
        return self._of("server")

    @property
    def links(self) -> list[Link]:
        return [d["link"] for _, _, d in self.graph.edges(data=True)]

    def node(self, name: str) -> Node:
        try:
            return self.graph.nodes[name]["obj"]
        except KeyError:
            raise self._error(f"no node {name!r} in topology {self.name!r}",
                              hint=did_you_mean(name, self.graph) or
                              f"nodes: {', '.join(list(self.graph)[:12])}") from None

    def kind(self, name: str) -> str:
        return _kind(self.node(name))

    def __contains__(self, name: object) -> bool:
        return name in self.graph

    def __iter__(self) -> Iterator[str]:
        return iter(self.graph)

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def ports_used(self, node: str) -> dict[int, str]:
        """Port -> neighbour, for every linked port of *node*."""
        return {d["link"].port_of(node): nb for nb, d in self.graph[node].items()}

    def port(self, node: str, neighbour: str) -> int:
        """The port of *node* whose link goes to *neighbour*."""
        try:
            return self.graph[node][neighbour]["link"].port_of(node)
        except KeyError:
            raise self._error(f"{node!r} and {neighbour!r} are not linked") from None

    def peer(self, node: str, port: int) -> tuple[str, int] | None:
        """``(neighbour, its port)`` at the other end of *node*'s *port*, or ``None``."""
        for nb, d in self.graph[node].items():
            link: Link = d["link"]
            if link.port_of(node) == port:
                return nb, link.port_of(nb)
        return None

    def link(self, a: str, b: str) -> Link:
        return self.graph[a][b]["link"]

    def attachment(self, name: str) -> tuple[str, int]:
        """``(switch, port)`` a host or server hangs off (its first switch link)."""
        for nb, d in self.graph[name].items():
            if self.kind(nb) == "switch":
                return nb, d["link"].port_of(nb)
        raise self._error(f"{self.kind(name)} {name!r} is not linked to any switch",
                          hint=f"add a link such as `link {name} -- SWITCH`")

    def endpoint(self, spec: str) -> tuple[str, int]:
        """Where traffic enters or leaves: a host or server name, or ``SWITCH:PORT`` (a
        port of the switch that nothing is linked to: :meth:`port_endpoint_problem`)."""
        if ":" in spec:
            sw, _, p = spec.partition(":")
            if sw not in self.switches:
                raise self._error(f"no switch {sw!r}", hint=did_you_mean(sw, self.switches))
            if not p.isdigit() or not 1 <= int(p) <= self.switches[sw].ports:
                raise self._error(f"{spec!r}: switch {sw!r} has ports 1..{self.switches[sw].ports}")
            problem = self.port_endpoint_problem(sw, int(p))
            if problem:
                raise self._error(problem[0], hint=problem[1])
            return sw, int(p)
        if spec in self.switches:
            raise self._error(f"{spec!r} is a switch: name a host, or a port as {spec}:PORT")
        return self.attachment(spec)

    def port_endpoint_problem(self, switch: str, port: int) -> tuple[str, str] | None:
        """Why port *port* of *switch* cannot be where traffic enters or leaves the
        network (message, hint), or None: a switch-port endpoint is a port nothing is
        linked to (a linked one leads to a node of the topology: name that node).

        >>> t = line(2)
        >>> t.port_endpoint_problem("s1", 7) is None
        True
        >>> t.port_endpoint_problem("s1", 1)
        ("port 1 of 's1' is linked to host 'h1': a switch port where traffic enters or leaves the network must be free", "name 'h1' instead, or a free port of 's1' (s1:3)")
        """
        nb = self.ports_used(switch).get(port)
        if nb is None:
            return None
        free = self.free_port(switch)
        other = f"a free port of {switch!r} ({switch}:{free})" if free else \
            f"raise the ports of {switch!r}"
        return (f"port {port} of {switch!r} is linked to {self.kind(nb)} {nb!r}: a switch port "
                f"where traffic enters or leaves the network must be free",
                f"name {nb!r} instead, or {other}" if self.kind(nb) != "switch" else
                f"use {other}")

    def free_port(self, switch: str) -> int | None:
        """The lowest port of *switch* nothing is linked to (None: all are)."""
        used = self.ports_used(switch)
        return next((p for p in range(1, self.switches[switch].ports + 1) if p not in used), None)

    def switch_graph(self) -> nx.Graph:
        """The switches and the links between them (what packets are routed over), in
        the topology's order: a subgraph's copy would list them in the order of a set
        (its hash order, another in every process), and the shortest routes picked
        among equal ones, so the network placement, would differ from run to run."""
        g = nx.Graph()
        g.add_nodes_from((n, self.graph.nodes[n]) for n in self.switches)
        g.add_edges_from((a, b, d) for a, b, d in self.graph.edges(data=True)
                         if a in g and b in g)
        return g

    def switch_route(self, a: str, b: str) -> list[str]:
        """Switches on a shortest route from endpoint *a* to endpoint *b*
        (fewest hops, then least latency; ties by name)."""
        sa, sb = self.endpoint(a)[0], self.endpoint(b)[0]
        g = self.switch_graph()
        try:
            return nx.shortest_path(g, sa, sb,
                                    weight=lambda u, v, d: 1 + d["link"].latency_ms * 1e-6)
        except nx.NetworkXNoPath:
            raise self._error(f"no route from {a!r} to {b!r}: the switches {sa!r} and {sb!r} "
                              f"are not connected") from None

    def signature(self) -> tuple:
        """A hashable value equal for equal topologies (positions ignored)."""
        def strip(o):
            return replace(o, line=0, column=0)

        nodes = tuple(sorted((n, strip(d["obj"])) for n, d in self.graph.nodes(data=True)))
        links = tuple(sorted((*sorted(((k.a, k.a_port), (k.b, k.b_port))), k.latency_ms,
                              k.bandwidth_gbps or 0.0) for k in self.links))
        return (self.name, nodes, links)

    def summary(self) -> str:
        return (f"topology {self.name}: {len(self.switches)} switches, {len(self.hosts)} hosts, "
                f"{len(self.servers)} servers, {self.graph.number_of_edges()} links")

    def __repr__(self) -> str:
        return f"<Topology {self.summary().removeprefix('topology ')}>"

    # -- networkx ------------------------------------------------------------------------------
    def to_networkx(self) -> nx.Graph:
        """A copy of the graph (node attribute ``kind``, ``obj``; edge attribute ``link``)."""
        return self.graph.copy()

    @classmethod
    def from_networkx(cls, g: nx.Graph, *, name: str = "net", **switch_defaults: Any) -> Topology:
        """A topology from any networkx graph.

        A node's ``kind`` attribute (``"switch"``, ``"host"``, ``"server"``;
        default ``"switch"``) says what it is; other node attributes are the
        keyword arguments of :meth:`add_switch` / :meth:`add_host` /
        :meth:`add_server` (*switch_defaults* fill in what a switch leaves out);
        edge attributes ``a_port``, ``b_port``, ``latency_ms``, ``bandwidth_gbps``
        are the link's.  Node names become strings.

        >>> t = Topology.from_networkx(nx.path_graph(3), stages=8)
        >>> list(t.switches), t.switches["s0"].stages
        (['s0', 's1', 's2'], 8)
        """
        t = cls(name=name)
        names = {n: (str(n) if not isinstance(n, int) else f"s{n}") for n in g}
        switch_keys = {"arch", "pipes", "stages", "tables", "ports"}
        for n, d in g.nodes(data=True):
            kind = d.get("kind", "switch")
            attrs = {k: v for k, v in d.items() if k != "kind"}
            if kind == "switch":
                kw = {**switch_defaults, **{k: v for k, v in attrs.items() if k in switch_keys}}
                t.add_switch(names[n], **kw)
            elif kind == "host":
                if isinstance(n, int):
                    names[n] = f"h{n}"
                t.add_host(names[n], ipv4=attrs.get("ipv4"), mac=attrs.get("mac"))
            elif kind == "server":
                if isinstance(n, int):
                    names[n] = f"srv{n}"
                t.add_server(names[n], nfs=attrs.get("nfs", ()))
            else:
                raise t._error(f"node {n!r}: unknown kind {kind!r}",
                               hint=f"use one of {', '.join(NODE_KINDS)}")
        for u, v, d in g.edges(data=True):
            t.add_link(names[u], names[v], a_port=d.get("a_port"), b_port=d.get("b_port"),
                       latency_ms=d.get("latency_ms", 0.0), bandwidth_gbps=d.get("bandwidth_gbps"))
        return t


def _lowest_free(base: int, used: set[int]) -> int:
    return next(base + n for n in range(1, len(used) + 2) if base + n not in used)


def _free_ports_hint(obj: Node, used: Mapping[int, str]) -> str:
    if not isinstance(obj, Switch):
        return "each port takes one link; leave the port out to take a free one"
    free = [p for p in range(1, obj.ports + 1) if p not in used][:3]
    return ("each port takes one link; free ports: " + ", ".join(map(str, free)) + " …"
            if free else f"all {obj.ports} ports of {obj.name!r} are linked")


def _mac(v: int | str) -> int:
    if isinstance(v, int):
        if not 0 <= v < 1 << 48:
            raise ValueError(v)
        return v
    parts = v.split(":")
    if len(parts) != 6 or not all(len(p) == 2 for p in parts):
        raise ValueError(v)
    return int("".join(parts), 16)


def _mac_text(v: int) -> str:
    return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))


# -- generators ------------------------------------------------------------------------------
def _switches(t: Topology, names: Iterable[str], kw: Mapping[str, Any]) -> None:
    for n in names:
        t.add_switch(n, **kw)


def _hosts_on(t: Topology, switch: str, count: int) -> None:
    for _ in range(count):
        h = t.add_host(f"h{len(t.hosts) + 1}")
        t.add_link(h.name, switch)


#: The most nodes a generator makes: sfclab's embedded network, placement and views are
#: meant for lab-sized networks (fat_tree(16) has 1,344 nodes, fat_tree(18) 1,863), and a
#: typo such as ``fat_tree(88)`` (180,048 nodes) should be an error, not a hang.
MAX_NODES = 2000


def _check(name: str, *, hosts: Any = 1, nodes: int = 0, **values: Any) -> None:
    """Refuse a generator's arguments before building anything."""
    for k, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise TopologyError(f"{name}(): {k} must be a whole number ≥ 1, not {v!r}",
                                source=f"{name}()")
    if not isinstance(hosts, int) or isinstance(hosts, bool) or hosts < 0:
        raise TopologyError(f"{name}(): hosts must be a whole number ≥ 0, not {hosts!r}",
                            source=f"{name}()")
    if nodes > MAX_NODES:
        raise TopologyError(f"{name}(): {', '.join(f'{k}={v}' for k, v in values.items())} makes "
                            f"{nodes:,} nodes, more than sfclab's {MAX_NODES:,}",
                            source=f"{name}()", hint="use a smaller network")


def line(n: int, *, hosts: int = 1, **switch: Any) -> Topology:
    """*n* switches in a row ``s1 -- s2 -- … -- sn``; *hosts* hosts on each end switch.

    >>> line(2).summary()
    'topology line2: 2 switches, 2 hosts, 0 servers, 3 links'
    """
    _check("line", n=n, hosts=hosts)
    _check("line", n=n, nodes=n + 2 * hosts)
    t = Topology(name=f"line{n}")
    _switches(t, (f"s{i}" for i in range(1, n + 1)), switch)
    _hosts_on(t, "s1", hosts)
    _hosts_on(t, f"s{n}", hosts if n > 1 else 0)
    for i in range(1, n):
        t.add_link(f"s{i}", f"s{i + 1}")
    return t


def ring(n: int, *, hosts: int = 1, **switch: Any) -> Topology:
    """*n* ≥ 3 switches in a ring, *hosts* hosts on every switch.

    >>> ring(4).summary()
    'topology ring4: 4 switches, 4 hosts, 0 servers, 8 links'
    """
    _check("ring", n=n, hosts=hosts)
    _check("ring", n=n, nodes=n * (1 + hosts))
    if n < 3:
        raise TopologyError(f"ring(): a ring needs at least 3 switches, not {n}", source="ring()",
                            hint="use line(n) for 1 or 2 switches")
    t = Topology(name=f"ring{n}")
    _switches(t, (f"s{i}" for i in range(1, n + 1)), switch)
    for i in range(1, n + 1):
        _hosts_on(t, f"s{i}", hosts)
    for i in range(1, n + 1):
        t.add_link(f"s{i}", f"s{i % n + 1}")
    return t


def leaf_spine(spines: int, leaves: int, *, hosts: int = 2, **switch: Any) -> Topology:
    """Every leaf ``leaf1…`` linked to every spine ``spine1…``; *hosts* hosts per leaf.

    >>> leaf_spine(2, 3).summary()
    'topology leaf_spine2x3: 5 switches, 6 hosts, 0 servers, 12 links'
    """
    _check("leaf_spine", spines=spines, leaves=leaves, hosts=hosts)
    _check("leaf_spine", spines=spines, leaves=leaves, nodes=spines + leaves * (1 + hosts))
    t = Topology(name=f"leaf_spine{spines}x{leaves}")
    _switches(t, (f"spine{i}" for i in range(1, spines + 1)), switch)
    _switches(t, (f"leaf{i}" for i in range(1, leaves + 1)), switch)
    for i in range(1, leaves + 1):
        _hosts_on(t, f"leaf{i}", hosts)
    for i in range(1, leaves + 1):
        for j in range(1, spines + 1):
            t.add_link(f"leaf{i}", f"spine{j}")
    return t


def fat_tree(k: int, **switch: Any) -> Topology:
    """The k-ary fat tree (k even): (k/2)² core switches ``c1…``, k pods of k/2
    aggregation (``a{pod}_{i}``) and k/2 edge switches (``e{pod}_{i}``), k/2 hosts
    per edge switch (k³/4 hosts in all).

    >>> t = fat_tree(4)
    >>> len(t.switches), len(t.hosts), t.graph.number_of_edges()
    (20, 16, 48)
    """
    _check("fat_tree", k=k)
    _check("fat_tree", k=k, nodes=5 * k * k // 4 + k ** 3 // 4)
    if k % 2:
        raise TopologyError(f"fat_tree(): k must be even, not {k}", source="fat_tree()",
                            hint="k = 2, 4, 6, 8 …")
    half = k // 2
    t = Topology(name=f"fat_tree{k}")
    switch = {"ports": max(k, 64), **switch}
    _switches(t, (f"c{i}" for i in range(1, half * half + 1)), switch)
    for pod in range(1, k + 1):
        _switches(t, (f"a{pod}_{i}" for i in range(1, half + 1)), switch)
        _switches(t, (f"e{pod}_{i}" for i in range(1, half + 1)), switch)
    for pod in range(1, k + 1):
        for e in range(1, half + 1):
            _hosts_on(t, f"e{pod}_{e}", half)
    for pod in range(1, k + 1):
        for e in range(1, half + 1):
            for a in range(1, half + 1):
                t.add_link(f"e{pod}_{e}", f"a{pod}_{a}")
        for a in range(1, half + 1):
            for c in range(1, half + 1):
                t.add_link(f"a{pod}_{a}", f"c{(a - 1) * half + c}")
    return t


#: Generator name -> function, for the topology language (``use fat_tree(4)``).
GENERATORS = {"line": line, "ring": ring, "leaf_spine": leaf_spine, "fat_tree": fat_tree}
