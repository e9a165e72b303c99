"""Network-wide chains in a real JupyterLab, as a student sees them.

A ``%%topology`` cell (a fat tree, k=4: 20 switches, 16 hosts) and a ``%%chain`` cell: the
topology tab draws the tree in tiers (core, aggregation, edge, hosts), every switch box apart
and readable, the NFs on the switches the placement chose; picking a chain highlights its
route; the placement table shows both solvers.  ``%sfc push`` pushes every switch, ``%sfc send
web 3`` shows the packets host to host with the hops numbered on the drawing and a row per
hop; a hop's per-pass timeline opens with a click.  Screenshots go to ``test-artifacts/``;
``SFCLAB_DOCS_SCREENSHOTS=1`` also copies one to ``docs/network.png``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_views_browser import (KERNEL, UI, _to_docs, live_view, no_widget_errors,
                                open_notebook, output, run_all)

pytestmark = pytest.mark.browser

TOPOLOGY = "%%topology\ntopology datacenter\nuse fat_tree(4, stages=8)"
CHAINS = """%%chain
chain web match udp.dport == 443 from h1 to h16: firewall -> nat -> lb -> l3fwd
chain dns match udp.dport == 53 from h3 to h9: monitor -> qos -> stateful_firewall"""
CELLS = ["%load_ext sfclab", TOPOLOGY, CHAINS, "%sfc push", "%sfc send web 3"]

# the boxes of the drawn nodes in an element: id -> [x, y, width, height] (page pixels)
BOXES_JS = """(el) => Object.fromEntries([...el.querySelectorAll('svg.sfc-topo [data-node]')]
    .map(g => { const r = g.querySelector('rect').getBoundingClientRect();
                return [g.dataset.node, [r.left, r.top, r.width, r.height]]; }))"""


def overlaps(boxes: dict[str, list[float]]) -> list[tuple[str, str]]:
    items = list(boxes.items())
    return [(a, b) for i, (a, (x, y, w, h)) in enumerate(items)
            for b, (u, v, p, q) in items[i + 1:]
            if x < u + p and u < x + w and y < v + q and v < y + h]


def test_topology_tab_and_host_to_host_trace(lab, page, artifacts: Path) -> None:
    open_notebook(page, lab.notebook("network.ipynb", CELLS))
    run_all(page, len(CELLS))

    # the %%topology cell: a view with the topology tab alone, updated by the chain cell
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    tabs = view.locator(":scope > .widget-tab-bar").get_by_role("tab").all_inner_texts()
    assert tabs == ["topology"]
    svg = view.locator("svg.sfc-topo")
    svg.wait_for(timeout=UI)
    boxes = view.evaluate(BOXES_JS)
    switches = [f"c{i}" for i in range(1, 5)] + [f"{t}{p}_{i}" for p in range(1, 5)
                                                 for t in "ae" for i in (1, 2)]
    assert set(boxes) == set(switches) | {f"h{i}" for i in range(1, 17)}
    assert overlaps(boxes) == []
    # tiers, top to bottom: core, aggregation, edge, hosts; pods side by side
    top = {n: b[1] for n, b in boxes.items()}
    assert max(top[f"c{i}"] for i in range(1, 5)) < min(top[s] for s in switches if s[0] == "a")
    assert max(top[s] for s in switches if s[0] == "a") < min(top[s] for s in switches
                                                               if s[0] == "e")
    assert max(top[s] for s in switches if s[0] == "e") < min(top[f"h{i}"] for i in range(1, 17))
    assert boxes["e1_1"][0] < boxes["e2_1"][0] < boxes["e3_1"][0] < boxes["e4_1"][0]
    # readable: drawn at its size (12 px names), inside the output area
    scale = svg.evaluate("s => s.getBoundingClientRect().width / s.viewBox.baseVal.width")
    assert scale > 0.95, scale
    area = output(page, 1).bounding_box()
    assert all(x >= area["x"] - 1 and x + w <= area["x"] + area["width"] + 1
               for x, _, w, _ in boxes.values())

    # the NFs on the switches the placement chose, the table with both solvers
    text = view.inner_text()
    assert "exact (ILP, HiGHS)" in text and "heuristic" in text and "h1 → h16" in text
    for nf, where in (("firewall", "e1_1"), ("monitor", "e1_2")):
        chips = view.locator(f"svg.sfc-topo [data-node='{where}'] text").all_text_contents()
        assert nf in chips, (where, chips)
    assert view.locator("svg.sfc-topo .sfc-link title").first.text_content().count(":") == 2
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(artifacts / "network-1-topology.png"))

    # pick a chain: its route in blue, its hosts and switches numbered, the rest faded
    view.locator("select").select_option(label="web")
    page.wait_for_function("v => v.querySelectorAll('svg.sfc-topo .sfc-link.sfc-visited')"
                           ".length === 6", arg=view.element_handle(), timeout=UI)
    visited = view.evaluate("""v => [...v.querySelectorAll('svg.sfc-topo [data-node].sfc-visited')]
        .map(g => g.dataset.node)""")
    assert visited[0] == "e1_1" or "h1" in visited
    assert set(visited) >= {"h1", "e1_1", "h16"} and len(visited) == 7
    assert view.locator("svg.sfc-topo [data-node='c2']").get_attribute("class") in \
        ("sfc-idle", None) or "c2" in visited
    view.screenshot(path=str(artifacts / "network-2-route.png"))

    # %sfc push: every switch
    push = output(page, 3).inner_text()
    assert "pushed 20 switches of datacenter over P4Runtime" in push, push
    assert output(page, 3).locator("a").count() == 0

    # %sfc send web 3: host to host, the hops numbered on the drawing, a row per hop
    out = output(page, 4)
    table = out.locator(".sfc-packets table")
    table.wait_for(timeout=UI)
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert [r[1] for r in rows] == ["web"] * 3 and all(r[4] == "h1 → h16" for r in rows), rows
    assert rows[0][3] == "5 (5 switches)"                    # one pass on each, no recirculation
    drawing = out.locator("svg.sfc-topo")
    drawing.wait_for(timeout=UI)
    badges = out.evaluate("""o => [...o.querySelectorAll('svg.sfc-topo [data-node].sfc-visited')]
        .map(g => [g.dataset.node, g.querySelector('.sfc-step')?.textContent ?? ""])""")
    # numbered as the hops below: h1 sends (drawn, no number), e1_1 is hop 1, h16 hop 6
    assert ["h1", ""] in badges and ["e1_1", "1"] in badges and ["h16", "6"] in badges, badges
    assert "packet from h1 [web] on web/0:" in out.inner_text()
    hops = out.locator("table", has_text="SFC header").locator("tr").all_inner_texts()
    assert len(hops) == 1 + 6 and hops[1].split("\t")[1].startswith("e1_1")
    assert "firewall → nat" in hops[1] and "hit" in hops[1]
    assert "web/0 (spi 1), next NF 2" in hops[1]
    summary = out.locator("details summary").first
    summary.click()
    out.locator(".sfc-timeline").first.wait_for(timeout=UI)
    assert "pass 0" in out.locator(".sfc-timeline").first.inner_text()
    table.locator("tbody tr").first.click()                  # another packet: same hops
    page.wait_for_function("t => t.querySelector('tbody tr[aria-selected=\"true\"]')"
                           ".dataset.index === '0'", arg=table.element_handle())
    no_widget_errors(page)
    page.set_viewport_size({"width": 1400, "height": 1500})  # the whole output in the picture
    out.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    out.screenshot(path=str(artifacts / "network-3-trace.png"))
    _to_docs(artifacts / "network-3-trace.png", "network.png")
