"""Network targets by name: what ``Network.connect(URL)`` and ``sfclab diff-targets
--topology`` open.

``net`` (or ``model``) is the embedded network (:class:`~.embedded.EmbeddedNetwork`);
``mininet`` a Mininet network of switch processes (``mininet?switch=bmv2`` for real
BMv2, ``mininet?switch=model`` for the embedded model as a process), where sfclab
has its Mininet target.  Options follow ``?`` as ``key=value`` pairs, read as every
target's URL is (:mod:`sfclab.targets.url_query`: the same words for the same mistake).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TargetError, did_you_mean
from ...ir.topology import Topology
from ..url_query import NUMBER, TEXT, Param, choice, read_query

__all__ = ["NETWORK_TARGETS", "NETWORK_PARAMS", "MININET_OPTIONS", "open_network_target",
           "target_name"]


def _embedded(topology: Topology, options: Mapping[str, Any]):
    from .embedded import EmbeddedNetwork

    return EmbeddedNetwork(topology)


#: The Mininet network's parameters in a URL (``mininet?switch=bmv2&timeout=10``): its
#: keywords, read as every target's URL is (:mod:`sfclab.targets.url_query`).
MININET_OPTIONS: dict[str, Param] = {
    "switch": choice("model", "bmv2"), "prefix": TEXT, "workdir": TEXT, "timeout": NUMBER,
    "start_timeout": NUMBER}


def _mininet(topology: Topology, options: Mapping[str, Any]):
    try:
        from ..mininet import MininetNetwork  # type: ignore[import-not-found]
    except ImportError:
        raise TargetError("this sfclab has no Mininet network target",
                          hint="use the embedded network (`model`), or an sfclab with "
                               "sfclab.targets.mininet") from None
    return MininetNetwork(topology, **options)


#: Network target names -> ``opener(topology, options)``: what
#: :meth:`~sfclab.network.Network.connect` accepts as ``NAME`` or ``NAME?key=value&…``
#: (the options, read as :data:`NETWORK_PARAMS` says, are the opener's keywords).  ``net``
#: and ``model`` are the embedded network.
NETWORK_TARGETS: dict[str, Any] = {"net": _embedded, "model": _embedded, "mininet": _mininet}
#: Each network target's URL parameters (the embedded network takes none).
NETWORK_PARAMS: dict[str, Mapping[str, Param]] = {"net": {}, "model": {},
                                                  "mininet": MININET_OPTIONS}


def open_network_target(url: str | None, topology: Topology):
    """The network target *url* names, for *topology* (None: the embedded network).  Its
    parameters are read before anything is made, in the words every target's URL uses.

    >>> from sfclab.ir.topology import line
    >>> open_network_target("model", line(2))
    <EmbeddedNetwork line2: 2 switches, 2 hosts, 0 servers, 3 links>
    >>> open_network_target("modle", line(2))
    Traceback (most recent call last):
    sfclab.errors.TargetError: unknown network target 'modle'
    hint: did you mean 'model'?
    >>> open_network_target("mininet?timeuot=8", line(2))
    Traceback (most recent call last):
    sfclab.errors.TargetError: unknown parameter 'timeuot' in 'mininet?timeuot=8'
    hint: did you mean 'timeout' or 'start_timeout'?
    """
    url = url or "model"
    name = url.partition("?")[0].removesuffix("://")
    opener = NETWORK_TARGETS.get(name)
    if opener is None:
        raise TargetError(f"unknown network target {name!r}",
                          hint=did_you_mean(name, NETWORK_TARGETS)
                          or f"network targets: {', '.join(NETWORK_TARGETS)}")
    options = read_query(url, NETWORK_PARAMS[name])
    return opener(topology, {k: v for k, v in options.items() if v is not None})


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
