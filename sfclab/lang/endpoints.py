"""Chains' ``from`` / ``to`` checked against a topology, with the error on the word at fault.

The chain language only checks that an endpoint is written like one (a name, or
``SWITCH:PORT``); whether the name is a host of *this* network is known once a
topology is given.  :func:`check_endpoints` reads the chain text again for the
positions and raises a located :class:`~sfclab.errors.ChainValidationError`:

    >>> from sfclab.ir.topology import line
    >>> check_endpoints("chain web from h1 to h3: firewall", line(2))
    Traceback (most recent call last):
    sfclab.errors.ChainValidationError: <string>:1:22: chain 'web' goes to 'h3', which topology 'line2' does not have
        chain web from h1 to h3: firewall
                             ^^
    hint: hosts: h1, h2
    >>> check_endpoints("chain web from h1 to s2:7: firewall", line(2))   # a free switch port
    >>> check_endpoints("chain web from h1 to s2:1: firewall", line(2))
    Traceback (most recent call last):
    sfclab.errors.ChainValidationError: <string>:1:22: chain 'web': port 1 of 's2' is linked to host 'h2': a switch port where traffic enters or leaves the network must be free
        chain web from h1 to s2:1: firewall
                             ^^^^
    hint: name 'h2' instead, or a free port of 's2' (s2:3)
"""

from __future__ import annotations

from ..errors import ChainValidationError, did_you_mean
from ..ir.topology import Topology
from .ast import Pos
from .intent import looks_like_json, parse_intents
from .parser import parse_decls
from .text import source_text

__all__ = ["check_endpoints", "endpoint_problem"]


def endpoint_problem(spec: str, topology: Topology) -> tuple[str, str] | None:
    """What is wrong with endpoint *spec* on *topology* (message, hint), or None.

    >>> from sfclab.ir.topology import line
    >>> endpoint_problem("s1", line(2))[0]
    "'s1' is a switch: traffic enters and leaves at a host, a server or a switch port"
    >>> endpoint_problem("s1:9", line(2, ports=4))[0]
    "switch 's1' has ports 1..4, not 9"
    """
    name, colon, port = spec.partition(":")
    hosts = [*topology.hosts, *topology.servers]
    if colon:
        sw = topology.switches.get(name)
        if sw is None:
            return (f"topology {topology.name!r} has no switch {name!r}",
                    did_you_mean(name, topology.switches)
                    or f"switches: {', '.join(list(topology.switches)[:12]) or 'none'}")
        if not port.isdigit() or not 1 <= int(port) <= sw.ports:
            return f"switch {name!r} has ports 1..{sw.ports}, not {port}", "pick one of its ports"
        return topology.port_endpoint_problem(name, int(port))
    if name in topology.switches:
        free = topology.free_port(name)
        return (f"{name!r} is a switch: traffic enters and leaves at a host, a server or a "
                f"switch port", "name a host (`from h1`)" + (
                    f" or a free port of it (`from {name}:{free}`)" if free else ""))
    if name not in hosts:
        return (f"topology {topology.name!r} has no host or server {name!r}",
                did_you_mean(name, hosts) or _known(topology))
    if not any(topology.kind(nb) == "switch" for nb in topology.graph[name]):
        return (f"{topology.kind(name)} {name!r} is not linked to any switch",
                f"link it in the topology: `link {name} -- SWITCH`")
    return None


def check_endpoints(text: str | bytes, topology: Topology, *, source: str = "<string>") -> None:
    """Raise :class:`ChainValidationError` at the first ``from`` / ``to`` of the chain
    *text* that *topology* has no place for (see :func:`endpoint_problem`)."""
    text = source_text(text, source=source, error=ChainValidationError)
    decls = parse_intents(text, source=source) if looks_like_json(text) else \
        parse_decls(text, source=source)
    for d in decls:
        for what, spec, pos in (("comes from", d.ingress, d.ingress_pos),
                                ("goes to", d.egress, d.egress_pos)):
            if spec is None:
                continue
            problem = endpoint_problem(spec, topology)
            if problem is not None:
                message, hint = problem
                if message.startswith("topology") and "has no host" in message:
                    message = (f"chain {d.name!r} {what} {spec!r}, which topology "
                               f"{topology.name!r} does not have")
                else:
                    message = f"chain {d.name!r}: {message}"
                p = pos if pos.line else Pos(d.pos.line, d.pos.column, d.pos.width)
                raise ChainValidationError(message, line=p.line, column=p.column,
                                           width=p.width, source=source, text=text, hint=hint)


def _known(topology) -> str:
    """``hosts: h1, h2; servers: srv1`` (the first dozen of each)."""
    parts = [f"{what}: {', '.join(list(names)[:12])}" for what, names in
             (("hosts", topology.hosts), ("servers", topology.servers)) if names]
    return "; ".join(parts) or "the topology has no hosts or servers"
