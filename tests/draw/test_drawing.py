"""Graphs drawn in Python (sfclab.draw.layered, sfclab.draw.chains): readable, whole, no overlaps."""

from __future__ import annotations

import itertools
import re

import pytest

import sfclab
from sfclab.draw.chains import automaton_elements, chain_elements, merged_elements, svg
from sfclab.draw.layered import layered

CHAINS = """chain web { input => firewall; firewall => (nat : drop ? firewall.verdict == 0);
                        nat => lb => l3fwd => output; }
chain mb { input => firewall => (1@nat : 2@lb : 3@drop # firewall.global_metadata);
           nat => l3fwd; lb => l3fwd; l3fwd => output; }
chain sr { input => sr_encap => (self : l3fwd ? sr_encap.global_counter < 4); l3fwd => output; }
chain back { input => firewall => nat => (firewall : l3fwd ? nat.global_counter < 3);
             l3fwd => output; }
chain one: l2fwd
"""


def boxes_overlap(a, b) -> bool:
    return abs(a.x - b.x) < (a.w + b.w) / 2 and abs(a.y - b.y) < (a.h + b.h) / 2


def layout_of(nodes, edges):
    return layered([(n["data"]["id"], n["data"]["width"], n["data"]["height"]) for n in nodes],
                   [(e["data"]["source"], e["data"]["target"], e["data"]["label"])
                    for e in edges],
                   back={i for i, e in enumerate(edges) if e["data"]["kind"] == "loop"})


@pytest.mark.parametrize("name", ["web", "mb", "sr", "back", "one"])
def test_chain_drawings_are_whole_and_do_not_overlap(name):
    chain = sfclab.parse(CHAINS)[name]
    nodes, edges = chain_elements(chain)
    lay = layout_of(nodes, edges)
    assert set(lay.nodes) == set(chain.graph.nodes)
    for a, b in itertools.combinations(lay.nodes.values(), 2):
        assert not boxes_overlap(a, b)
    for b in lay.nodes.values():                       # inside the picture
        assert b.x - b.w / 2 >= 0 and b.x + b.w / 2 <= lay.width
        assert b.y - b.h / 2 >= 0 and b.y + b.h / 2 <= lay.height
    for u, v, d in chain.graph.edges(data=True):      # left to right, loops aside
        if d.get("kind") != "loop" and u != v:
            assert lay.nodes[u].x < lay.nodes[v].x, (u, v)
    picture = svg(nodes, edges)
    assert picture.count("data-node=") == len(nodes) and picture.count("data-edge=") == len(edges)
    w, h = map(float, re.search(r'viewBox="0 0 (\S+) (\S+)"', picture).groups())
    assert (w, h) == (round(lay.width), round(lay.height))


def test_the_main_line_is_straight_and_branches_hang_below():
    nodes, edges = chain_elements(sfclab.parse(CHAINS)["web"])
    lay = layout_of(nodes, edges)
    line = [lay.nodes[n].y for n in ("input", "firewall", "nat", "lb", "l3fwd", "output")]
    assert max(line) - min(line) < 1 and lay.nodes["drop"].y > line[0]


def test_loops_run_above_their_nodes():
    nodes, edges = chain_elements(sfclab.parse(CHAINS)["back"])
    lay = layout_of(nodes, edges)
    back = lay.edges[next(i for i, e in enumerate(edges) if e["data"]["kind"] == "loop")]
    assert back.back and back.label_y < min(b.top for b in lay.nodes.values())
    nodes, edges = chain_elements(sfclab.parse(CHAINS)["sr"])
    lay = layout_of(nodes, edges)
    self_loop = lay.edges[next(i for i, e in enumerate(edges) if e["data"]["kind"] == "loop")]
    assert self_loop.self_loop and self_loop.label_y > 0


def test_ir_and_automaton_drawings():
    compiled = sfclab.compile(CHAINS)
    for nodes, edges in (merged_elements(compiled.merge, compiled.catalog),
                         automaton_elements(compiled.pipeline, compiled.catalog)):
        lay = layout_of(nodes, edges)
        for a, b in itertools.combinations(lay.nodes.values(), 2):
            assert not boxes_overlap(a, b)
        assert svg(nodes, edges).count("<g data-node=") == len(nodes)


def test_classes_mark_a_path_and_css_can_be_left_out():
    nodes, edges = chain_elements(sfclab.parse(CHAINS)["web"])
    nodes[1]["classes"] = "sfc-visited"
    picture = svg(nodes, edges)
    assert '<g data-node="firewall" class="sfc-visited">' in picture and "<style>" in picture
    assert "<style>" not in svg(nodes, edges, css=False)
    assert svg([], []).startswith("<svg")
