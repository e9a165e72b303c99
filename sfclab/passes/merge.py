"""Merge pass: P4SC Algorithm 1, the LCS merge of the chains' DAGs into one IR.

A chain's DAG is its graph without end points and loop edges (P4SC renames a
repeated NF with a serial number, so ``nat#2`` is a node of its own).  The
chains are merged one at a time into the IR (Algorithm 1, iterated):

1. topological orders of the IR and of the chain (``Chain.nf_nodes``);
2. ``sharedOrder``: their longest common subsequence of NF types, weighted by
   the NF's table count (the shared nodes that save the most tables);
3. if nothing is shared, the chain hangs in parallel off the pre-visiting node;
4. else the shorter sequence (*Attach*) goes into the longer (*Base*): its
   ``first`` part (before the first shared node) right before the first shared
   node of Base, its ``follow`` part right after the last one, and the unshared
   nodes of its main segment right after the shared node before them.  Shared
   nodes add the chain to their chain-id set; every other node of the chain is a
   new IR node, a *replica* (duplicate tables) when its NF type is already there;
5. the links of both DAGs are rebuilt on the merged order, which keeps both
   orders, so the IR stays a DAG.

The baseline is *the parallelism method*: every chain its own copy of its NFs
behind a pre-visiting node.

>>> from sfclab.ir.model import linear_chain, ChainSet
>>> ir = merge_chains(ChainSet.of([linear_chain("a", ["ids", "firewall", "nat"]),
...                                linear_chain("b", ["firewall", "lb", "nat"])]))
>>> [n.name for n in ir.nodes]
['ids', 'firewall', 'lb', 'nat']
>>> ir.lcs.tables, ir.parallel.tables
(4, 6)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import networkx as nx

from ..ir.model import Chain, ChainSet
from ..nfinfo import NFCatalog
from .common import nf_info

__all__ = ["MergedNode", "MergeReport", "MergedIR", "lcs_pairs", "merge_chains", "merge_pass"]


@dataclass(frozen=True, slots=True)
class MergedNode:
    """One node of the merged IR: an NF block (one P4 table set)."""

    name: str
    nf: str
    tables: int
    chains: frozenset[str]
    paths: frozenset[str]
    replica: int = 0          # 0 for the first node of its NF type, then 1, 2, …


@dataclass(frozen=True, slots=True)
class MergeReport:
    """Size of a merged program."""

    method: str
    nodes: int
    tables: int
    duplicated_tables: int

    def __str__(self) -> str:
        return (f"{self.method}: {self.nodes} nodes, {self.tables} tables "
                f"({self.duplicated_tables} duplicated)")


@dataclass(frozen=True, slots=True)
class MergedIR:
    """The merged IR: nodes in merged (topological) order, links, and both reports."""

    nodes: tuple[MergedNode, ...]
    edges: tuple[tuple[str, str], ...]
    instances: Mapping[tuple[str, str], str]   # (chain, NF instance) -> IR node
    lcs: MergeReport
    parallel: MergeReport

    def node(self, name: str) -> MergedNode:
        return next(n for n in self.nodes if n.name == name)

    def graph(self) -> nx.DiGraph:
        """The IR as a DiGraph (node attributes: the :class:`MergedNode` fields)."""
        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n.name, **{f.name: getattr(n, f.name) for f in dataclasses.fields(n)})
        g.add_edges_from(self.edges)
        return g


def lcs_pairs(a: list[str], b: list[str], weight: Mapping[str, int]) -> list[tuple[int, int]]:
    """Aligned index pairs of the heaviest common subsequence of *a* and *b*.

    >>> lcs_pairs(["x", "y", "z"], ["y", "x", "z"], {"x": 1, "y": 2, "z": 1})
    [(1, 0), (2, 2)]
    """
    bset = set(b)
    keep = [i for i, x in enumerate(a) if x in bset]     # other nodes cannot match
    aa = [a[i] for i in keep]
    n, m = len(aa), len(b)
    # weights: tables first, then more nodes
    w = {x: weight[x] * 1024 + 1 for x in bset}
    nxt = [0] * (m + 1)
    rows = [nxt]
    for i in range(n - 1, -1, -1):
        cur = [0] * (m + 1)
        x = aa[i]
        wx = w[x]
        for j in range(m - 1, -1, -1):
            best = nxt[j] if nxt[j] >= cur[j + 1] else cur[j + 1]
            if b[j] == x and nxt[j + 1] + wx > best:
                best = nxt[j + 1] + wx
            cur[j] = best
        rows.append(cur)
        nxt = cur
    rows.reverse()        # rows[i] is the row of aa[i:]
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if aa[i] == b[j] and rows[i][j] == rows[i + 1][j + 1] + w[aa[i]]:
            out.append((keep[i], j))
            i, j = i + 1, j + 1
        elif rows[i + 1][j] >= rows[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _interleave(base: list, attach: list, pairs: list[tuple[int, int]]) -> list:
    """Algorithm 1 lines 7-20 on positions: Base with Attach's first, main segment
    and follow inserted; shared Attach nodes are dropped (their Base partner stays)."""
    out = list(base[: pairs[0][0]])
    out += attach[: pairs[0][1]]                                   # first
    for (i, j), (i2, j2) in zip(pairs, pairs[1:]):
        out.append(base[i])
        out += attach[j + 1: j2]                                   # unshared main nodes
        out += base[i + 1: i2]
    i, j = pairs[-1]
    out.append(base[i])
    out += attach[j + 1:]                                          # follow
    out += base[i + 1:]
    return out


def _dag(chain: Chain) -> tuple[list[str], list[tuple[str, str]]]:
    g = chain.graph
    order = chain.nf_nodes()
    nfs = set(order)
    edges = [(u, v) for u, v, k in g.edges(data="kind") if k != "loop" and u in nfs and v in nfs]
    return order, edges


def merge_chains(chains: ChainSet | Iterable[Chain], catalog: NFCatalog | None = None,
                 ) -> MergedIR:
    """Merge every chain into one IR with Algorithm 1; report it beside the parallelism method."""
    chain_list = list(chains)
    seq: list[int] = []                 # IR node ids in merged order
    nf_of: list[str] = []
    chains_of: list[set[str]] = []
    edges: set[tuple[int, int]] = set()
    where: dict[tuple[str, str], int] = {}
    tables: dict[str, int] = {}
    par_nodes = par_tables = 0
    for chain in chain_list:
        order, cedges = _dag(chain)
        types = [chain.graph.nodes[n]["nf"] for n in order]
        for t in types:
            if t not in tables:
                tables[t] = nf_info(catalog, t).tables
        par_nodes += len(order)
        par_tables += sum(tables[t] for t in types)
        labels = [nf_of[k] for k in seq]
        ir_is_base = len(seq) >= len(order)
        pairs = (lcs_pairs(labels, types, tables) if ir_is_base else
                 [(i, j) for j, i in lcs_pairs(types, labels, tables)])
        ids: list[int] = []
        shared = {j: i for i, j in pairs}
        for j, t in enumerate(types):
            if j in shared:
                ids.append(seq[shared[j]])
            else:
                ids.append(len(nf_of))
                nf_of.append(t)
                chains_of.append(set())
        for k in ids:
            chains_of[k].add(chain.name)
        if not pairs:                   # AND(DAG1, DAG2): side by side
            seq = seq + ids
        elif ir_is_base:
            seq = _interleave(seq, ids, pairs)
        else:
            seq = _interleave(ids, seq, [(j, i) for i, j in pairs])
        for inst, k in zip(order, ids):
            where[chain.name, inst] = k
        edges.update((where[chain.name, u], where[chain.name, v]) for u, v in cedges)

    names: dict[int, str] = {}
    replica: dict[int, int] = {}
    count: dict[str, int] = {}
    for k in seq:
        t = nf_of[k]
        r = replica[k] = count.get(t, 0)
        count[t] = r + 1
        names[k] = t if r == 0 else f"{t}_copy{r}"
    paths_of: dict[int, set[str]] = {k: set() for k in seq}
    for chain in chain_list:
        for p in chain.paths():
            for inst in p.nodes:
                paths_of[where[chain.name, inst]].add(p.id)
    nodes = tuple(MergedNode(names[k], nf_of[k], tables[nf_of[k]], frozenset(chains_of[k]),
                             frozenset(paths_of[k]), replica[k]) for k in seq)
    distinct = sum(tables[t] for t in count)
    total = sum(n.tables for n in nodes)
    lcs = MergeReport("lcs", len(nodes), total, total - distinct)
    par = MergeReport("parallel", par_nodes + max(0, len(chain_list) - 1), par_tables,
                      par_tables - distinct)
    order_pos = {k: i for i, k in enumerate(seq)}
    out_edges = tuple((names[u], names[v]) for u, v in
                      sorted(edges, key=lambda e: (order_pos[e[0]], order_pos[e[1]])))
    inst = MappingProxyType({key: names[k] for key, k in where.items()})
    return MergedIR(nodes, out_edges, inst, lcs, par)


def merge_pass(state, *, options):
    """Driver entry: adds ``merge`` (:class:`MergedIR`) to the compile state."""
    return dataclasses.replace(state, merge=merge_chains(state.chains, state.catalog))
