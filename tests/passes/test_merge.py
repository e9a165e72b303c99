"""Merge pass: P4SC Algorithm 1 against the parallelism method."""

from __future__ import annotations

import networkx as nx
import pytest

from sfclab.ir.model import ChainSet, linear_chain
from sfclab.passes.generate import random_chains
from sfclab.passes.merge import lcs_pairs, merge_chains

from passes_support import FIXTURES, check_golden, fixtures, load


def render(ir) -> str:
    out = [str(ir.lcs), str(ir.parallel)]
    for n in ir.nodes:
        out.append(f"{n.name} [{n.nf} x{n.tables}] chains {sorted(n.chains)} paths {sorted(n.paths)}")
    out.append("links " + " ".join(f"{u}->{v}" for u, v in ir.edges))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("path", fixtures("merge"), ids=lambda p: p.stem)
def test_fixture(path):
    chains, cat = load(path)
    check_golden(path, render(merge_chains(chains, cat)))


def test_p4sc_fig3_first_main_segment_and_replicas():
    chains, cat = load(FIXTURES / "merge" / "p4sc_fig3.nfs")
    ir = merge_chains(chains, cat)
    # first = [nf4] before NF1; NF2 of the main segment right after NF1; NF1 and
    # NF3 shared (the LCS weighted by tables prefers NF3's two tables over NF2)
    # (replicas are named in merged order: the first node of a type keeps its name)
    assert [n.name for n in ir.nodes] == ["nf4", "nf1", "nf2", "nf3", "nf2_copy1",
                                          "nf4_copy1", "nf5"]
    assert ir.node("nf1").chains == ir.node("nf3").chains == {"DAG1", "DAG2"}
    assert ir.node("nf2").chains == ir.node("nf4").chains == {"DAG2"}
    assert ir.node("nf2_copy1").chains == ir.node("nf4_copy1").chains == {"DAG1"}
    assert (ir.lcs.nodes, ir.lcs.tables, ir.lcs.duplicated_tables) == (7, 8, 2)
    assert (ir.parallel.nodes, ir.parallel.tables) == (10, 11)


def test_p4sc_table3_keeps_each_chain_and_path():
    chains, _ = load(FIXTURES / "merge" / "p4sc_table3.sfc")
    ir = merge_chains(chains)
    _check_ir(ir, chains)
    assert ir.lcs.tables < ir.parallel.tables
    assert ir.node("firewall").paths >= {"SFC1_DC/0", "SFC2_HTTP/0", "SFC2_HTTP/1"}


def _check_ir(ir, chains: ChainSet) -> None:
    g = ir.graph()
    assert nx.is_directed_acyclic_graph(g)
    pos = {n.name: i for i, n in enumerate(ir.nodes)}
    for c in chains:
        order = [ir.instances[c.name, n] for n in c.nf_nodes()]
        assert len(set(order)) == len(order)                    # one IR node per instance
        assert all(c.name in g.nodes[n]["chains"] for n in order)
        for u, v, k in c.graph.edges(data="kind"):
            if k != "loop" and (c.name, u) in ir.instances and (c.name, v) in ir.instances:
                a, b = ir.instances[c.name, u], ir.instances[c.name, v]
                assert g.has_edge(a, b) and pos[a] < pos[b]
        for p in c.paths():
            for n in p.nodes:
                assert p.id in ir.node(ir.instances[c.name, n]).paths


@pytest.mark.parametrize("seed", range(5))
def test_random_chains_merge_correctly(seed):
    chains = random_chains(30, seed=seed)
    ir = merge_chains(chains)
    _check_ir(ir, chains)
    assert ir.lcs.tables <= ir.parallel.tables


def test_lcs_weighs_tables():
    assert lcs_pairs(["a", "b", "c"], ["b", "a", "c"], {"a": 1, "b": 1, "c": 1}) in (
        [(0, 1), (2, 2)], [(1, 0), (2, 2)])
    assert lcs_pairs(["a", "b"], ["b", "a"], {"a": 5, "b": 1}) == [(0, 1)]
    assert lcs_pairs([], ["a"], {"a": 1}) == []


def test_nothing_shared_goes_side_by_side_and_loops_are_serial_nodes():
    chains = ChainSet.of([linear_chain("a", ["nat"]), linear_chain("b", ["vgw", "vgw#2"])])
    ir = merge_chains(chains)
    assert [n.name for n in ir.nodes] == ["nat", "vgw", "vgw_copy1"]
    assert ir.lcs.duplicated_tables == 2          # vgw has two tables, in two nodes
    assert ir.parallel.nodes == 4                 # 3 NFs + 1 pre-visiting node


def test_empty():
    ir = merge_chains(ChainSet())
    assert ir.nodes == () and ir.lcs.tables == 0
