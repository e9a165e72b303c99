"""Network targets by name: what ``Network.connect(URL)`` and ``sfclab diff-targets
--topology`` open.

``net`` (or ``model``) is the embedded network (:class:`~.embedded.EmbeddedNetwork`);
``mininet`` a Mininet network of switch processes (``mininet?switch=bmv2`` for real
BMv2, ``mininet?switch=model`` for the embedded model as a process), where sfclab
has its Mininet target.  Options follow ``?`` as ``key=value`` pairs, typed and
checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TargetError, did_you_mean
from ...ir.topology import Topology

__all__ = ["NETWORK_TARGETS", "MININET_OPTIONS", "open_network_target", "target_name"]


def _embedded(topology: Topology, options: Mapping[str, str]):
    from .embedded import EmbeddedNetwork

    if options:
        raise TargetError(f"the embedded network takes no options, not {', '.join(options)}",
                          hint="use `model`")
    return EmbeddedNetwork(topology)


#: The Mininet network's options in a URL (``mininet?switch=bmv2&timeout=10``) and their types.
MININET_OPTIONS = {"switch": str, "prefix": str, "workdir": str, "timeout": float,
                   "start_timeout": float}


def _mininet(topology: Topology, options: Mapping[str, str]):
    try:
        from ..mininet import MininetNetwork  # type: ignore[import-not-found]
    except ImportError:
        raise TargetError("this sfclab has no Mininet network target",
                          hint="use the embedded network (`model`), or an sfclab with "
                               "sfclab.targets.mininet") from None
    return MininetNetwork(topology, **_typed(options, MININET_OPTIONS, "the Mininet network"))


def _typed(options: Mapping[str, str], types: Mapping[str, type], what: str) -> dict[str, Any]:
    """A URL's options as keywords of the types *types* gives, or a TargetError.

    >>> _typed({"timeout": "8"}, MININET_OPTIONS, "the Mininet network")
    {'timeout': 8.0}
    >>> _typed({"timeuot": "8"}, MININET_OPTIONS, "the Mininet network")
    Traceback (most recent call last):
    sfclab.errors.TargetError: the Mininet network has no option 'timeuot'
    hint: did you mean 'timeout' or 'start_timeout'?
    """
    out: dict[str, Any] = {}
    for key, value in options.items():
        kind = types.get(key)
        if kind is None:
            raise TargetError(f"{what} has no option {key!r}",
                              hint=did_you_mean(key, types) or f"options: {', '.join(types)}")
        try:
            out[key] = kind(value)
        except ValueError:
            raise TargetError(f"{what}'s option {key}={value!r} is not a {kind.__name__}",
                              hint=f"e.g. {key}=10") from None
    return out


#: Network target names -> ``opener(topology, options)``: what
#: :meth:`~sfclab.network.Network.connect` accepts as ``NAME`` or ``NAME?key=value&…``
#: (the options are the opener's keywords).  ``net`` and ``model`` are the embedded
#: network.
NETWORK_TARGETS: dict[str, Any] = {"net": _embedded, "model": _embedded, "mininet": _mininet}


def open_network_target(url: str | None, topology: Topology):
    """The network target *url* names, for *topology* (None: the embedded network).

    >>> from sfclab.ir.topology import line
    >>> open_network_target("model", line(2))
    <EmbeddedNetwork line2: 2 switches, 2 hosts, 0 servers, 3 links>
    >>> open_network_target("modle", line(2))
    Traceback (most recent call last):
    sfclab.errors.TargetError: unknown network target 'modle'
    hint: did you mean 'model'?
    """
    from urllib.parse import parse_qsl

    name, _, query = (url or "model").partition("?")
    name = name.removesuffix("://")
    opener = NETWORK_TARGETS.get(name)
    if opener is None:
        raise TargetError(f"unknown network target {name!r}",
                          hint=did_you_mean(name, NETWORK_TARGETS)
                          or f"network targets: {', '.join(NETWORK_TARGETS)}")
    return opener(topology, dict(parse_qsl(query)))


def target_name(url: str | None) -> str:
    """A network target's URL as a person reads it: ``net``, ``mininet (bmv2)``.

    >>> target_name("mininet?switch=bmv2&timeout=9"), target_name(None)
    ('mininet (bmv2)', 'net')
    """
    from urllib.parse import parse_qsl

    name, _, query = (url or "net").partition("?")
    name = {"model": "net"}.get(name.removesuffix("://"), name.removesuffix("://"))
    switch = dict(parse_qsl(query)).get("switch", "model")
    return f"{name} ({switch})" if name == "mininet" else name
