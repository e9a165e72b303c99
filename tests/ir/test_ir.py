"""The chain IR on its own: graphs built in code, paths, checks."""

from __future__ import annotations

import networkx as nx
import pytest

import sfclab
from sfclab.errors import ChainValidationError
from sfclab.ir import Chain, ChainSet, Condition, linear_chain, validate
from sfclab.ir.graphs import ancestors, descendants, find_cycle


def graph(*edges, **kinds) -> nx.DiGraph:
    g = nx.DiGraph()
    for u, v, *rest in edges:
        for n in (u, v):
            if n not in g:
                end = n in ("input", "output", "drop", "cpu")
                g.add_node(n, kind="endpoint" if end else "nf", nf=None if end else n.split("#")[0],
                           label=n, line=0, column=0)
        attrs = rest[0] if rest else {}
        g.add_edge(u, v, kind=attrs.pop("kind", "seq"), share=attrs.pop("share", 1.0), **attrs)
    return g


def test_empty_chainset():
    cs = ChainSet()
    assert cs.paths() == [] and cs.weights() == {} and len(cs) == 0


def test_linear_chain_and_nf_order():
    c = linear_chain("c", ["l3fwd", "firewall", "nat#2"])
    assert c.nf_nodes() == ["l3fwd", "firewall", "nat#2"]
    assert c.paths()[0].nfs == ("l3fwd", "firewall", "nat")


def test_nested_loops_reset_the_inner_counter():
    cond = Condition("b.global_counter", "<", 2)
    outer = Condition("c.global_counter", "<", 2)
    g = graph(("input", "a"), ("a", "b"),
              ("b", "b", {"kind": "loop", "cond": cond, "bound": 2}),
              ("b", "c", {"kind": "exit", "cond": cond}),
              ("c", "a", {"kind": "loop", "cond": outer, "bound": 2}),
              ("c", "output", {"kind": "exit", "cond": outer}))
    (p,) = Chain("n", g).paths()
    assert p.nodes == ("a", "b", "b", "c", "a", "b", "b", "c")


def test_validate_rejects_a_cycle_without_a_loop():
    g = graph(("input", "a"), ("a", "b"), ("b", "a"), ("b", "output"))
    with pytest.raises(ChainValidationError, match="cycle that is not a declared loop"):
        validate(Chain("x", g))


def test_validate_rejects_two_unconditional_successors():
    g = graph(("input", "a"), ("a", "b"), ("a", "c"), ("b", "output"), ("c", "output"))
    with pytest.raises(ChainValidationError, match="nothing to choose between them"):
        validate(Chain("x", g))


def test_validate_rejects_a_chain_without_an_exit():
    g = graph(("input", "a"))
    with pytest.raises(ChainValidationError, match="leads nowhere"):
        validate(Chain("x", g))


def test_too_many_paths_is_an_error():
    text = "chain wide {\n    input => n0;\n" + "".join(
        f"    n{i} => (n{i + 1} : n{i + 1}b ? n{i}.global_metadata == 1);\n"
        f"    n{i + 1}b => n{i + 1};\n" for i in range(12)) + "    n12 => output;\n}"
    from sfclab.nfinfo import NFCatalog, NFInfo

    cat = NFCatalog([NFInfo(name=f"n{i}{s}", layer=2) for i in range(14) for s in ("", "b")])
    chain = sfclab.parse(text, catalog=cat)["wide"]
    assert len(chain.paths()) == 2 ** 12
    with pytest.raises(ChainValidationError, match="more than 1000 service paths"):
        chain.paths(limit=1000)


def test_graph_walks():
    g = graph(("a", "b"), ("b", "c"), ("c", "b", {"kind": "loop"}))
    assert ancestors(g, "b") == {"a", "c", "b"} - {"b"} | {"c"}
    assert ancestors(g, "b", skip_loops=True) == {"a"}
    assert descendants(g, "a") == {"b", "c"}
    assert find_cycle(g) is None
    assert find_cycle(g, skip_loops=False) == [("b", "c"), ("c", "b")]


def test_chain_equality_ignores_positions_and_labels():
    a = sfclab.parse("chain x: FW -> NAT")["x"]
    b = sfclab.parse("\n\nchain x {\n input => firewall => nat => output; }")["x"]
    assert a == b
    c = sfclab.parse("chain x: FW -> LB")["x"]
    assert a != c
