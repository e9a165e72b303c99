"""What a chain graph's edges and its service paths are made of: edge kinds, end points,
branch conditions, decisions and the service path itself (re-exported by
:mod:`sfclab.ir.model`; below it and :mod:`sfclab.ir.paths`, which both use them)."""

from __future__ import annotations

import operator
from dataclasses import dataclass

__all__ = ["Condition", "Decision", "ServicePath", "EDGE_KINDS", "TERMINALS"]

#: Edge kinds, see the module docstring.
EDGE_KINDS = ("seq", "then", "else", "case", "loop", "exit")
#: End points a packet can leave a chain through.
TERMINALS = ("output", "drop", "cpu")

_OPS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


@dataclass(frozen=True, slots=True)
class Condition:
    """``field op value``.  *field* is qualified: ``"<nf instance>.<field>"``
    (``"heavy_hitter.hitter_value"``) or a standard field (``"std.ingress_port"``).

    >>> c = Condition("heavy_hitter.hitter_value", "<=", 300)
    >>> c.holds(12), c.holds(301), str(c)
    (True, False, 'heavy_hitter.hitter_value <= 300')
    """

    field: str
    op: str
    value: int | str | None

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"unknown comparison {self.op!r}")

    def holds(self, x: int) -> bool:
        if not isinstance(self.value, int):
            raise ValueError(f"{self} compares with a run-time symbol, not a number")
        return _OPS[self.op](x, self.value)

    @property
    def nf(self) -> str:
        """The NF instance whose field is tested (``""`` for standard fields)."""
        head, _, _ = self.field.rpartition(".")
        return "" if head == "std" else head

    @property
    def name(self) -> str:
        """The field name without its NF."""
        return self.field.rpartition(".")[2]

    def __str__(self) -> str:
        return f"{self.field} {self.op} {self.value}"


@dataclass(frozen=True, slots=True)
class Decision:
    """One branch taken on a service path: at ``node``, edge ``kind`` to ``to``."""

    node: str
    kind: str
    to: str
    cond: Condition | None = None
    cases: tuple[int | str, ...] = ()

    def __str__(self) -> str:
        if self.kind == "case":
            vals = "|".join(str(c) for c in self.cases)
            return f"{self.cond.field if self.cond else self.node} in {{{vals}}} -> {self.to}"
        if self.kind in ("else", "exit"):
            return f"not ({self.cond}) -> {self.to}"
        return f"{self.cond} -> {self.to}"


@dataclass(frozen=True, slots=True)
class ServicePath:
    """One linear run through a chain: the NF instances a packet visits in order.

    ``nodes`` has loops unrolled and excludes ``input`` and the terminal;
    ``weight`` is the path's share of *all* traffic (chain weight times the
    shares of the branches taken).
    """

    chain: str
    index: int
    nodes: tuple[str, ...]
    nfs: tuple[str, ...]
    terminal: str
    weight: float
    decisions: tuple[Decision, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.chain}/{self.index}"

    def __str__(self) -> str:
        body = " -> ".join(("input", *self.nodes, self.terminal))
        return f"{self.id} [{self.weight:.4g}]: {body}"

    def describe(self) -> str:
        """The path with the branch decisions taken (loops once, with their runs)."""
        seen: list[str] = []
        for d in self.decisions:
            s = f"loop {d.node} ({self.nodes.count(d.node)} runs)" if d.kind == "loop" else str(d)
            if d.kind == "exit" or s in seen:
                continue
            seen.append(s)
        return str(self) + (f"  when {'; '.join(seen)}" if seen else "")
