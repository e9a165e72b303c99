"""Helpers shared by the passes: NF facts, path embedding on a pipeline, pair weights.

A *pipeline* is a tuple of NF types, one per slot.  A service path runs on it
in passes: each pass walks the slots once, in order, and runs the slots the
token selects.  :func:`embed` places a path's NFs on slots greedily (the
earliest usable slot), which gives the fewest passes.

>>> embed(("l3fwd", "firewall", "nat"), ("l3fwd", "nat", "firewall"))
[(0, 0), (0, 2), (1, 1)]
>>> passes_on(("l3fwd", "nat", "firewall"), ("l3fwd", "firewall", "nat", "firewall"))
1
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..errors import CompileError
from ..ir.model import ServicePath
from ..nfinfo import NFCatalog, NFInfo
from ..p4.catalog import load_default

__all__ = [
    "nf_info",
    "embed",
    "passes_on",
    "weighted_recirculations",
    "pair_weights",
    "first_seen",
]


def nf_info(catalog: NFCatalog | None, nf: str) -> NFInfo:
    """The catalogue entry of NF type *nf*; :class:`CompileError` when it is unknown."""
    cat = catalog if catalog is not None else load_default()
    info = cat.get(nf)
    if info is None:
        raise CompileError(f"NF {nf!r} is not in the NF catalogue",
                           hint=cat.suggest(nf) + " (or pass catalog=… with the NF)")
    return info


def embed(slots: Sequence[str], nfs: Sequence[str]) -> list[tuple[int, int]]:
    """``(pass, slot)`` for each NF of *nfs* on the pipeline *slots* (greedy, fewest passes)."""
    where: dict[str, list[int]] = defaultdict(list)
    for i, nf in enumerate(slots):
        where[nf].append(i)
    out: list[tuple[int, int]] = []
    pas, pos = 0, -1
    for nf in nfs:
        cands = where.get(nf)
        if not cands:
            raise CompileError(f"NF {nf!r} has no slot in the pipeline {list(slots)}",
                               hint="build the pipeline from the same chains")
        nxt = next((s for s in cands if s > pos), None)
        if nxt is None:
            pas, nxt = pas + 1, cands[0]
        pos = nxt
        out.append((pas, pos))
    return out


def passes_on(nfs: Sequence[str], slots: Sequence[str]) -> int:
    """How many passes the NF sequence *nfs* needs on *slots* (1 for an empty path)."""
    placed = embed(slots, nfs)
    return placed[-1][0] + 1 if placed else 1


def weighted_recirculations(slots: Sequence[str], paths: Iterable[ServicePath]) -> float:
    """Sum over paths of ``weight × (passes − 1)``."""
    return sum(p.weight * (passes_on(p.nfs, slots) - 1) for p in paths)


def pair_weights(paths: Iterable[ServicePath]) -> dict[tuple[str, str], float]:
    """Total weight of each consecutive NF pair ``(a, b)`` over all paths."""
    w: dict[tuple[str, str], float] = defaultdict(float)
    for p in paths:
        for a, b in zip(p.nfs, p.nfs[1:]):
            w[a, b] += p.weight
    return dict(w)


def first_seen(paths: Iterable[ServicePath]) -> list[str]:
    """Distinct NF types in the order they first appear on the paths."""
    return list(dict.fromkeys(nf for p in paths for nf in p.nfs))
