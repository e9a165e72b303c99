"""Offload pass: P4SFC's pre-server / server / post-server split.

P4SFC (§III-D/E) classes NFs as *fully*, *partially* or *non* offloadable
(``NFInfo.offload``).  Per service path, the NFs before the first
non-offloadable NF are ``pre_server`` (run on the switch), those after the last
one are ``post_server`` (switch again), and all others are ``server``: the
three are one split of the path, each NF instance in exactly one of them.  A
partially offloadable NF in ``pre_server`` or ``post_server`` (``partial``)
processes packets on the switch while a process on a server keeps its state
(P4SFC's state library), so the server processes a path needs (``on_server``)
are its ``server`` NFs and its ``partial`` ones.  A path without
non-offloadable NFs is all ``pre_server``.

>>> from sfclab.ir.model import linear_chain
>>> s = split_path(linear_chain("c", ["firewall", "nat", "ips", "lb", "l3fwd"]).paths()[0])
>>> s.pre_server, s.server, s.post_server, s.partial
(('firewall', 'nat'), ('ips',), ('lb', 'l3fwd'), ('nat', 'lb'))
>>> print(s)
c/0: switch [firewall, nat (partial)] -> server [ips] -> switch [lb (partial), l3fwd]
>>> s.where("nat"), s.where("ips"), s.where("l3fwd")
('switch, state on a server', 'server', 'switch')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..ir.model import ServicePath
from ..nfinfo import NFCatalog
from .common import nf_info

__all__ = ["OffloadSplit", "OffloadResult", "split_path", "split_paths", "offload_pass"]


@dataclass(frozen=True, slots=True)
class OffloadSplit:
    """Where one service path's NF instances run."""

    path: str
    pre_server: tuple[str, ...]
    server: tuple[str, ...]
    post_server: tuple[str, ...]
    on_server: tuple[str, ...]       # every instance started on the server

    @property
    def switch_only(self) -> bool:
        """True when no NF of the path needs a server."""
        return not self.on_server

    @property
    def partial(self) -> tuple[str, ...]:
        """The switch's NFs whose state a server keeps (partially offloaded ones)."""
        return tuple(n for n in self.on_server if n not in self.server)

    def where(self, nf: str) -> str:
        """Where the NF instance *nf* of this path runs, in words."""
        if nf in self.server:
            return "server"
        return "switch, state on a server" if nf in self.partial else "switch"

    def __str__(self) -> str:
        def show(xs: tuple[str, ...]) -> str:
            return ", ".join(x + (" (partial)" if x in self.partial else "") for x in xs) or "-"
        return (f"{self.path}: switch [{show(self.pre_server)}] -> server [{show(self.server)}]"
                f" -> switch [{show(self.post_server)}]")


@dataclass(frozen=True, slots=True)
class OffloadResult:
    """Splits per path, and per chain the NF instances that ever run on the server."""

    paths: tuple[OffloadSplit, ...]
    chain_server: tuple[tuple[str, tuple[str, ...]], ...]

    def split(self, path_id: str) -> OffloadSplit:
        return next(s for s in self.paths if s.path == path_id)


def split_path(path: ServicePath, catalog: NFCatalog | None = None) -> OffloadSplit:
    """P4SFC's split of one service path."""
    kinds = [nf_info(catalog, nf).offload for nf in path.nfs]
    non = [i for i, k in enumerate(kinds) if k == "non"]
    nodes = path.nodes
    if not non:
        part = tuple(dict.fromkeys(n for n, k in zip(nodes, kinds) if k == "partially"))
        return OffloadSplit(path.id, nodes, (), (), part)
    lo, hi = non[0], non[-1]
    pre, mid, post = nodes[:lo], nodes[lo:hi + 1], nodes[hi + 1:]
    on = [n for i, n in enumerate(nodes)
          if lo <= i <= hi or kinds[i] == "partially"]
    return OffloadSplit(path.id, pre, mid, post, tuple(dict.fromkeys(on)))


def split_paths(paths: Sequence[ServicePath], catalog: NFCatalog | None = None) -> OffloadResult:
    """Split every path; collect per chain what runs on a server."""
    splits = tuple(split_path(p, catalog) for p in paths)
    per_chain: dict[str, dict[str, None]] = {}
    for p, s in zip(paths, splits):
        per_chain.setdefault(p.chain, {}).update(dict.fromkeys(s.on_server))
    return OffloadResult(splits, tuple((c, tuple(v)) for c, v in per_chain.items()))


def offload_pass(state, *, options):
    """Driver entry: adds ``offload`` (:class:`OffloadResult`) to the state."""
    return dataclasses.replace(state, offload=split_paths(state.paths, state.catalog))
