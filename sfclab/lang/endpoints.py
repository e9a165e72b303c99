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

An NF that runs on a server only (P4SFC's non-offloadable class: ``dpi``,
``ips``, ``ipsec``) needs a server of the network that runs it, as placement
does; the caret is on the NF:

    >>> check_endpoints("chain a from h1 to h2: firewall -> dpi", line(2))
    Traceback (most recent call last):
    sfclab.errors.ChainValidationError: <string>:1:36: chain 'a': dpi runs on a server only (P4SFC: not offloadable), and no server of topology 'line2' runs it
        chain a from h1 to h2: firewall -> dpi
                                           ^^^
    hint: add one to the topology, linked to a switch of the chain's route: `server srv1 runs dpi at s1`
"""

from __future__ import annotations

from ..errors import CatalogError, ChainValidationError, did_you_mean
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


def check_endpoints(text: str | bytes, topology: Topology, *, source: str = "<string>",
                    catalog=None) -> None:
    """Raise :class:`ChainValidationError` at the first ``from`` / ``to`` of the chain
    *text* that *topology* has no place for (see :func:`endpoint_problem`), or at
    the first NF that runs on a server only when no server of *topology* runs it
    (*catalog*: the NFs; default: the library)."""
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
    for d in decls:
        for ref in _nf_refs(d):
            nf = _server_only(ref.name, catalog)
            if nf is None or any(s.runs(nf) for s in topology.servers.values()):
                continue
            p = ref.pos if ref.pos.line else d.pos
            at = next(iter(topology.switches), "SWITCH")
            raise ChainValidationError(
                f"chain {d.name!r}: {nf} runs on a server only (P4SFC: not offloadable), and "
                f"no server of topology {topology.name!r} runs it", line=p.line,
                column=p.column, width=p.width, source=source, text=text,
                hint=f"add one to the topology, linked to a switch of the chain's route: "
                     f"`server srv1 runs {nf} at {at}`")


def _nf_refs(node) -> list:
    """Every :class:`~.ast.NFRef` in a declaration, in the order written."""
    from dataclasses import fields, is_dataclass

    from .ast import NFRef

    if isinstance(node, NFRef):
        return [node]
    if isinstance(node, (list, tuple)):
        return [r for x in node for r in _nf_refs(x)]
    if is_dataclass(node) and not isinstance(node, type):
        return [r for f in fields(node) for r in _nf_refs(getattr(node, f.name))]
    return []


def _server_only(name: str, catalog) -> str | None:
    """The NF type *name* (``dpi``, ``DPI#2``) names when it runs on a server only,
    else None (not an NF: an end point, ``self``; or an NF a switch runs)."""
    if catalog is None:
        from . import default_catalog

        catalog = default_catalog()
    try:
        info = catalog.resolve(name.partition("#")[0])
    except CatalogError:                             # not an NF's name
        return None
    p4 = getattr(catalog, "definition", None)
    if info.offload == "non" or (p4 is not None and not p4(info.name).has_p4):
        return info.name
    return None


def _known(topology) -> str:
    """``hosts: h1, h2; servers: srv1`` (the first dozen of each)."""
    parts = [f"{what}: {', '.join(list(names)[:12])}" for what, names in
             (("hosts", topology.hosts), ("servers", topology.servers)) if names]
    return "; ".join(parts) or "the topology has no hosts or servers"
