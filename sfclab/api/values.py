"""The values a :class:`~sfclab.Lab` and a :class:`~sfclab.Network` hand back alike, below both.

>>> TableUse("SfcIngress.acl", 3, 12).share
0.25
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TableUse"]


@dataclass(frozen=True, slots=True)
class TableUse:
    """One table of the target: entries installed, capacity, and the lookups of the
    packets a Lab sent (hits and misses); on a TNA model, the pipes whose pipeline holds
    it (``pipes``; a pipeline run on several pipes has the same entries in each)."""

    table: str
    entries: int
    size: int
    hits: int = 0
    misses: int = 0
    pipes: tuple[int, ...] = ()

    @property
    def share(self) -> float:
        """Entries / size."""
        return self.entries / self.size if self.size else 0.0
