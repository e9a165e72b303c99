"""The chain IR: one ``networkx.DiGraph`` per chain, and the set of chains.

Graph schema
============

**Nodes** are NF *instances*, named by the canonical NF type plus an optional
serial number (``"firewall"``, ``"nat#2"``), and the end points ``"input"``,
``"output"``, ``"drop"`` and ``"cpu"``.  Node attributes:

========== ==================================================================
``kind``   ``"nf"`` or ``"endpoint"``
``nf``     canonical NF type (``"firewall"``); ``None`` for end points
``label``  the name as the user wrote it (``"FW"``, ``"Heavy Hitter"``)
``line``   source line (1-based; 0 when the chain was built in code)
``column`` source column (1-based; 0 when unknown)
========== ==================================================================

**Edges** ``u -> v`` mean "after ``u``, run ``v``".  Edge attributes:

========= ===================================================================
``kind``  ``"seq"`` (always), ``"then"`` (condition holds), ``"else"``
          (condition does not hold), ``"case"`` (``u``'s field equals one of
          ``cases``), ``"loop"`` (go back to ``v`` while the condition holds,
          ``v`` is ``u`` itself or one of its ancestors), ``"exit"`` (leave a
          loop when its condition fails)
``cond``  :class:`Condition` for then/else/loop/exit (the *written*
          condition: an else or exit edge carries the same condition as its
          then or loop edge and is taken when it is false); for case edges the
          tested field as a Condition with ``op == "=="`` and ``value None``
``cases`` tuple of case values (``int`` or a symbolic ``str`` bound at run time)
``bound`` for loop edges: how many times the loop body runs in all
``share`` the share of ``u``'s traffic this edge carries (branch weights);
          1.0 for seq edges
``line``, ``column``: where the edge was written
========= ===================================================================

Chains are compared by :meth:`Chain.signature`, which ignores positions: two
chains are equal when they have the same name, classifier, weight, nodes and
edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..nfinfo import ENDPOINTS
from .classifier import Classifier
from .elements import EDGE_KINDS, TERMINALS, Condition, Decision, ServicePath

__all__ = [
    "Condition",
    "Decision",
    "ServicePath",
    "Chain",
    "ChainSet",
    "EDGE_KINDS",
    "TERMINALS",
    "linear_chain",
]

@dataclass(eq=False)
class Chain:
    """One service function chain: a name, a classifier, a weight and a graph.

    ``ingress`` and ``egress`` say where the chain's traffic enters and leaves a
    network of switches (a host or server name, or ``SWITCH:PORT``; see
    :meth:`sfclab.ir.topology.Topology.endpoint`); ``None`` means "not said"
    (on one switch they do not matter; network placement picks defaults)."""

    name: str
    graph: nx.DiGraph
    match: Classifier | None = None
    weight: float | None = None
    line: int = 0
    column: int = 0
    source: str = ""
    ingress: str | None = None
    egress: str | None = None

    def nf_nodes(self) -> list[str]:
        """NF instances in a topological order (loop edges ignored), ties by name."""
        g = self.graph
        dag = nx.DiGraph((u, v) for u, v, k in g.edges(data="kind") if k != "loop")
        dag.add_nodes_from(g)
        order = nx.lexicographical_topological_sort(dag, key=_node_rank(g))
        return [n for n in order if g.nodes[n]["kind"] == "nf"]

    def nf_types(self) -> list[str]:
        return sorted({self.graph.nodes[n]["nf"] for n in self.nf_nodes()})

    def paths(self, weight: float | None = None, *, limit: int = 10_000) -> list[ServicePath]:
        """Expand into service paths (see :func:`sfclab.ir.paths.service_paths`)."""
        from .paths import service_paths

        w = weight if weight is not None else (self.weight if self.weight is not None else 1.0)
        return service_paths(self, w, limit=limit)

    def signature(self) -> tuple[Any, ...]:
        """A hashable value equal for equal chains (positions ignored)."""
        g = self.graph
        nodes = tuple(sorted((n, g.nodes[n]["kind"], g.nodes[n]["nf"]) for n in g))
        edges = tuple(sorted(
            (u, v, d["kind"], d.get("cond"), tuple(sorted(d.get("cases", ()), key=str)),
             d.get("bound"),
             round(d.get("share", 1.0), 9))
            for u, v, d in g.edges(data=True)
        ))
        return (self.name, self.match, self.weight, nodes, edges, self.ingress, self.egress)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Chain) and self.signature() == other.signature()

    def __repr__(self) -> str:
        nfs = ", ".join(self.nf_nodes())
        return f"<Chain {self.name!r}: {nfs}>"


def _node_rank(g: nx.DiGraph):
    order = {n: i for i, n in enumerate(g)}
    return lambda n: (n not in ENDPOINTS or n == "input", order.get(n, 0))


@dataclass
class ChainSet:
    """Chains by name, in the order they were added."""

    chains: dict[str, Chain] = field(default_factory=dict)

    @classmethod
    def of(cls, chains: Iterable[Chain]) -> ChainSet:
        cs = cls()
        for c in chains:
            cs.add(c)
        return cs

    def add(self, chain: Chain, *, replace: bool = False) -> None:
        if chain.name in self.chains and not replace:
            from ..errors import ChainValidationError

            raise ChainValidationError(
                f"duplicate chain name {chain.name!r}", line=chain.line,
                column=chain.column, source=chain.source,
                hint="give each chain its own name",
            )
        self.chains[chain.name] = chain

    def remove(self, name: str) -> Chain:
        return self.chains.pop(name)

    def weights(self) -> dict[str, float]:
        """Each chain's share of traffic: its own ``weight``, or an equal split of
        what the weighted chains leave (all equal when none has a weight)."""
        fixed = {n: c.weight for n, c in self.chains.items() if c.weight is not None}
        free = [n for n in self.chains if n not in fixed]
        rest = max(0.0, 1.0 - sum(fixed.values()))
        each = rest / len(free) if free else 0.0
        return {n: fixed.get(n, each) for n in self.chains}

    def paths(self) -> list[ServicePath]:
        """Every chain's service paths, weighted by the chains' shares of traffic."""
        w = self.weights()
        return [p for n, c in self.chains.items() for p in c.paths(w[n])]

    def __iter__(self) -> Iterator[Chain]:
        return iter(self.chains.values())

    def __len__(self) -> int:
        return len(self.chains)

    def __getitem__(self, name: str) -> Chain:
        return self.chains[name]

    def __contains__(self, name: object) -> bool:
        return name in self.chains

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChainSet) and list(self.chains.values()) == list(other.chains.values())

    def names(self) -> list[str]:
        return list(self.chains)


def linear_chain(name: str, nfs: Iterable[str], *, weight: float | None = None,
                 match: Classifier | None = None, types: Mapping[str, str] | None = None) -> Chain:
    """A chain ``input -> nfs... -> output`` built in code (no parsing, no catalogue).

    Instance names are used as given; the NF type is the name before ``#``
    unless *types* says otherwise.

    >>> c = linear_chain("c", ["l3fwd", "firewall", "nat"])
    >>> [str(p) for p in c.paths()]
    ['c/0 [1]: input -> l3fwd -> firewall -> nat -> output']
    """
    g = nx.DiGraph()
    g.add_node("input", kind="endpoint", nf=None, label="input", line=0, column=0)
    prev = "input"
    for inst in nfs:
        nf = (types or {}).get(inst, inst.split("#")[0])
        g.add_node(inst, kind="nf", nf=nf, label=inst, line=0, column=0)
        g.add_edge(prev, inst, kind="seq", share=1.0, line=0, column=0)
        prev = inst
    g.add_node("output", kind="endpoint", nf=None, label="output", line=0, column=0)
    g.add_edge(prev, "output", kind="seq", share=1.0, line=0, column=0)
    return Chain(name, g, match=match, weight=weight)
