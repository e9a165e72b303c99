"""Topologies laid out and drawn as people read them: a fat tree in tiers with its pods side by
side, a leaf-spine, a line and a ring in a row; nothing overlaps; a highlight shows a route or
a packet's hops, with only the NFs that ran there in full colour."""

from __future__ import annotations

import re

import pytest

import sfclab
from sfclab.ir.topology import fat_tree, leaf_spine, line, ring
from sfclab.lang import parse_topology, parse_topology_file
from sfclab.draw.topology import Highlight, chain_highlight, topology_svg, trace_highlight
from sfclab.draw.topology_layout import place, satellites, tiers

EXAMPLES = __import__("pathlib").Path(__file__).parents[2] / "examples"


def boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """Each drawn node's rectangle (x, y, width, height), from the SVG."""
    out = {}
    for m in re.finditer(r'<g data-node="([^"]+)"[^>]*><title>[^<]*</title><rect x="([\d.-]+)" '
                         r'y="([\d.-]+)" width="([\d.]+)" height="([\d.]+)"', svg):
        out[m.group(1)] = tuple(float(v) for v in m.groups()[1:])
    return out


def overlapping(bs: dict) -> list:
    items = list(bs.items())
    return [(a, b) for i, (a, (x, y, w, h)) in enumerate(items) for b, (u, v, p, q) in items[i + 1:]
            if x < u + p and u < x + w and y < v + q and v < y + h]


@pytest.mark.parametrize("topo, shape, rows", [
    (fat_tree(4), "fat tree", [["c1", "c2", "c3", "c4"],
                               ["a1_1", "a1_2", "a2_1", "a2_2", "a3_1", "a3_2", "a4_1", "a4_2"],
                               ["e1_1", "e1_2", "e2_1", "e2_2", "e3_1", "e3_2", "e4_1", "e4_2"]]),
    (leaf_spine(2, 3), "leaf-spine", [["spine1", "spine2"], ["leaf1", "leaf2", "leaf3"]]),
    (line(4), "line", [["s1", "s2", "s3", "s4"]]),
    (ring(5), "ring", [["s1", "s2", "s3", "s4", "s5"]]),
])
def test_shapes_keep_their_tiers(topo, shape, rows):
    got_shape, got = tiers(topo)
    assert got_shape == shape and [list(r) for r in got] == rows


def test_any_other_network_is_tiered_from_its_hosts_switches():
    shape, rows = tiers(parse_topology_file(EXAMPLES / "campus.topo"))
    assert shape == "tiers" and [sorted(r) for r in rows] == [["core1", "core2"],
                                                              ["edge1", "edge2"]]


def test_hosts_hang_under_their_switch_and_rows_go_down():
    t = fat_tree(4)
    _, rows = tiers(t)
    lay = place(rows, satellites(t, rows), {n: (50, 22) for n in t})
    assert [len(r) for r in lay.rows] == [4, 8, 8, 16]
    for pod in range(1, 5):                                  # pods side by side, left to right
        xs = [lay.nodes[f"e{pod}_{i}"].x for i in (1, 2)]
        assert all(lay.nodes[f"e{pod - 1}_2"].x < x for x in xs) if pod > 1 else True
    for e in ("e1_1", "e3_2"):                               # an edge switch over its hosts
        hosts = [h for h in t.graph[e] if t.kind(h) == "host"]
        mid = sum(lay.nodes[h].x for h in hosts) / len(hosts)
        assert abs(lay.nodes[e].x - mid) < 1
        assert all(lay.nodes[h].y > lay.nodes[e].y for h in hosts)


@pytest.mark.parametrize("topo", [fat_tree(4), leaf_spine(4, 6), line(5), ring(6),
                                  parse_topology_file(EXAMPLES / "datacenter.topo"),
                                  parse_topology_file(EXAMPLES / "campus.topo")])
def test_no_two_nodes_overlap_and_all_fit_the_picture(topo):
    svg = topology_svg(topo)
    bs = boxes(svg)
    assert set(bs) == set(topo) and overlapping(bs) == []
    view = [float(v) for v in re.search(r'viewBox="([^"]+)"', svg).group(1).split()]
    for x, y, w, h in bs.values():
        assert view[0] <= x and x + w <= view[0] + view[2] and view[1] <= y <= view[1] + view[3]


def test_a_ring_closes_with_an_arc_inside_the_picture():
    svg = topology_svg(ring(5))
    top = float(re.search(r'viewBox="0 (-?[\d.]+)', svg).group(1))
    arc = re.search(r'data-link="s5--s1">.*?<path class="sfc-wire" d="M [\d.]+ [\d.]+ C [\d.]+ '
                    r'([\d.-]+)', svg)
    assert arc is not None and float(arc.group(1)) >= top    # the arc's peak is drawn


def test_large_networks_group_each_switchs_hosts():
    svg = topology_svg(fat_tree(8))                         # 128 hosts
    nodes = re.findall(r'data-node="([^"]+)"', svg)
    assert "h1…h4" in nodes and "h1" not in nodes and len(nodes) == 80 + 32
    assert overlapping(boxes(svg)) == []


def test_a_chain_route_with_a_server_detour():
    t = parse_topology("use fat_tree(4, stages=8)\nserver srv1 runs ips at c1\n")
    net = sfclab.Network(t, "chain sec match udp.dport == 8443 from h2 to h12: firewall -> ips "
                            "-> l3fwd")
    h = chain_highlight(net.placement, "sec")
    route = net.placement.chains["sec"].route
    k = route.index("c1")
    assert h.walk == ("h2", *route[:k + 1], "srv1", *route[k:], "h12")
    assert h.ran["srv1"] == ("ips",)
    svg = topology_svg(t, net.placement, highlight=h)
    assert 'class="sfc-link sfc-visited" data-link="srv1--c1"' in svg
    assert re.search(r'data-node="c1" class="sfc-visited">.*?<text class="sfc-step"[^>]*>'
                     rf'{k + 1},{k + 3}</text>', svg, re.S)  # crossed twice: both steps


def test_a_packet_shows_only_what_ran_where_it_went():
    net = sfclab.Network(line(3, stages=8), """chain web match tcp.dport == 80: heavy_hitter -> nat
chain dns match udp.dport == 53: qos""")
    trace = net.send("h1", "h2", "dns")
    svg = topology_svg(net.topology, net.placement, highlight=trace_highlight(trace))
    net.close()
    faded = re.findall(r'<g opacity="0.35"><title>([a-z_]+) runs here', svg)
    on = re.findall(r'<g><title>([a-z_]+) runs here', svg)
    assert on == ["qos"] and sorted(faded) == ["heavy_hitter", "nat"]


def test_no_highlight_draws_every_chip_in_full():
    net = sfclab.Network(line(3, stages=8), "chain web match tcp.dport == 80: heavy_hitter -> nat")
    svg = topology_svg(net.topology, net.placement, highlight=None)
    assert 'opacity="0.35"' not in svg and 'class="sfc-idle"' not in svg
    svg = topology_svg(net.topology, net.placement, highlight=Highlight(walk=("h1", "s1")))
    assert svg.count('class="sfc-idle"') >= 3                # s2, s3, h2 faded
