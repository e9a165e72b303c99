"""Random chains in the style of P4SC §IV-E, for benchmarks and property tests.

P4SC's generator: 15 NF types, at most 3 branches per chain, fewer than 15 NFs
per chain, an NF at most once per chain.  Here a chain is a random trunk of
distinct NFs; each branch forks off a trunk NF (an if-else on its metadata)
into an arm of other unused NFs that rejoins the trunk further down or leaves
through ``output``.

>>> cs = random_chains(3, seed=1)
>>> len(cs.names()), all(len(c.nf_nodes()) < 15 for c in cs)
(3, True)
"""

from __future__ import annotations

import random

import networkx as nx

from ..ir.model import Chain, ChainSet, Condition

__all__ = ["P4SC_TYPES", "random_chain", "random_chains"]

#: 15 NF types of the built-in catalogue (all with a metadata field to branch on).
P4SC_TYPES = ("l2fwd", "l3fwd", "firewall", "nat", "lb", "ids", "qos", "monitor", "ipsg",
              "heavy_hitter", "stateful_firewall", "vgw", "sr_encap", "mac_learning", "flood")


def _node(g: nx.DiGraph, n: str) -> None:
    kind = "endpoint" if n in ("input", "output") else "nf"
    g.add_node(n, kind=kind, nf=None if kind == "endpoint" else n, label=n, line=0, column=0)


def random_chain(name: str, rng: random.Random, *, types: tuple[str, ...] = P4SC_TYPES,
                 max_nfs: int = 14, max_branches: int = 3, weight: float | None = None) -> Chain:
    """One random chain (see the module docstring)."""
    k = rng.randint(1, min(max_nfs, len(types)))
    nfs = rng.sample(types, k)
    n_br = rng.randint(0, max_branches) if k >= 3 else 0
    n_trunk = max(1, k - sum(rng.randint(1, 2) for _ in range(n_br))) if n_br else k
    trunk, rest = nfs[:n_trunk], nfs[n_trunk:]
    g = nx.DiGraph()
    for n in ("input", *trunk, "output"):
        _node(g, n)
    walk = ["input", *trunk, "output"]
    for u, v in zip(walk, walk[1:]):
        g.add_edge(u, v, kind="seq", share=1.0, line=0, column=0)
    forks = [n for n in trunk if g.out_degree(n) == 1]
    while rest and forks:
        u = forks.pop(rng.randrange(len(forks)))
        arm, rest = rest[: rng.randint(1, 2)], rest[2:] if len(rest) > 1 else []
        i = walk.index(u)
        join = rng.choice(walk[i + 2:]) if i + 2 < len(walk) else "output"
        old = next(iter(g.succ[u]))
        cond = Condition(f"{u}.global_metadata", "==", 0)
        g.edges[u, old].update(kind="else", cond=cond, share=0.5)
        prev = u
        for n in arm:
            _node(g, n)
            if prev == u:
                g.add_edge(u, n, kind="then", cond=cond, share=0.5, line=0, column=0)
            else:
                g.add_edge(prev, n, kind="seq", share=1.0, line=0, column=0)
            prev = n
        g.add_edge(prev, join, kind="seq", share=1.0, line=0, column=0)
    return Chain(name, g, weight=weight)


def random_chains(n: int, *, seed: int = 0, **kw) -> ChainSet:
    """*n* random chains ``c0 … c{n-1}`` from a seeded generator."""
    rng = random.Random(seed)
    return ChainSet.of(random_chain(f"c{i}", rng, **kw) for i in range(n))
