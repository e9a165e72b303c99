"""The teaching labs that show pictures, in a real JupyterLab, as a student runs them.

Each lab runs top to bottom without an error, and its pictures are there, show what the
lab is about and are readable (drawn at their size, text 10 px or more, no sideways
scrolling): nbval runs the labs too, but compares no outputs, so only these tests notice a
picture gone.  Lab 02 (merging): the chains and the merged IR with a replica, the bar plot
of tables vs chains, the exercise's share plot with P4SC's figure and the student's mean
marked.  Lab 03 (pipelines): the naive, MA-FSA and optimal pipelines with each path's
passes, the MA-FSA, the FSM passes (reverse recirculates once, a red arrow), the packets'
table with the two-pass packet's timeline and path, and the MA-FSA's passes (one each).
Lab 05 (run-time changes): the chains, the packets of ``%sfc send web 2``, the timeline
of packets during ten updates (none in the "mix, or lost" row), the offload split.

Lab 04 (placement): the throughput model (Dejavu §4) is a plot of three curves drawn at
its natural size, its labels 10 px or more, with no sideways scrolling in a 1,400 px
window; Dejavu's Fig. 6 shows
the naive placement and Dejavu's side by side or one above the other, with the route's
recirculations in red (two and one); the placement view of the demo's chains draws the
pipes, the route of the path picked in its menu (picking another redraws it) and the
throughput plot with the service paths marked.  Screenshots go to ``test-artifacts/``;
``SFCLAB_DOCS_SCREENSHOTS=1`` also copies the placement view to ``docs/lab-placement.png`` and
the labs' figures to ``docs/labs/figures/`` (the manual's lab pages show them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from test_views_browser import KERNEL, UI, _to_docs, cell, click_tab, current_panel, \
    no_widget_errors, open_notebook, output, see_tabs

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
LAB = "04_placement.ipynb"

# The pictures (inline <svg>) in an output element: size drawn, size meant, text sizes.
PICTURES_JS = """(out) => [...out.querySelectorAll('svg.sfc-plot-svg, svg.sfc-diagram')]
    .filter(s => !s.parentElement.closest('svg')).map(s => {
      const r = s.getBoundingClientRect(), box = s.closest('.sfc-picture');
      return {width: r.width, height: r.height, meant: s.viewBox.baseVal.width,
              fonts: [...s.querySelectorAll('text')].map(t =>
                  parseFloat(getComputedStyle(t).fontSize) * r.width / s.viewBox.baseVal.width),
              scrolls: box ? box.scrollWidth > box.clientWidth + 1 : false,
              text: [...s.querySelectorAll('text')].map(t => t.textContent).join(' | '),
              lines: s.querySelectorAll('polyline').length,
              marks: s.querySelectorAll('.sfc-mark').length,
              bars: s.querySelectorAll('.sfc-bar').length,
              events: [...s.querySelectorAll('.sfc-event')].map(e => e.getAttribute('fill')),
              spans: s.querySelectorAll('.sfc-span').length,
              passes: s.querySelectorAll('.sfc-pass').length,
              rows: s.querySelectorAll('.sfc-path-row').length,
              recirculations: [...s.querySelectorAll('.sfc-recirculate')].length};
    })"""


# The graphs (chains, merged IR, MA-FSA, a packet's path) shown in an output element.
GRAPHS_JS = """(out) => [...out.querySelectorAll('.sfc-graph')]
    .filter(g => g.checkVisibility() && g.querySelector('svg')).map(g => {
      const s = g.querySelector('svg'), r = s.getBoundingClientRect(), w = s.viewBox.baseVal.width;
      return {head: (g.querySelector('.sfc-graph-head') || {}).textContent || '',
              nodes: [...s.querySelectorAll('[data-node]')].map(n => n.dataset.node).sort(),
              visited: [...s.querySelectorAll('[data-node].sfc-visited')].map(n => n.dataset.node)
                  .sort(),
              width: r.width, meant: w, scrolls: g.scrollWidth > g.clientWidth + 1,
              fonts: [...s.querySelectorAll('text')].map(t =>
                  parseFloat(getComputedStyle(t).fontSize) * r.width / w)};
    })"""


# the labels of marks drawn over a mark's ring (its stroke and the label's halo included)
MARK_LABELS_ON_RINGS_JS = """(out) => { const svg = out.querySelector('svg.sfc-plot-svg');
    const rings = [...svg.querySelectorAll('.sfc-mark')].map(c => c.getBBox());
    return [...svg.querySelectorAll('text[font-weight=bold]')].flatMap(t => { const r = t.getBBox();
        return rings.filter(b => r.x < b.x + b.width + 3 && b.x - 3 < r.x + r.width
            && r.y < b.y + b.height && b.y < r.y + r.height).map(() => t.textContent); }); }"""


# the part of an output holding something (pictures, tables, tabs, text), in page pixels
CONTENT_JS = """(el) => { const o = el.getBoundingClientRect();
    let x1 = Infinity, y1 = Infinity, x2 = -Infinity, y2 = -Infinity;
    const add = (r) => { if (!r.width || !r.height) return;
        x1 = Math.min(x1, r.left); y1 = Math.min(y1, r.top);
        x2 = Math.max(x2, r.right); y2 = Math.max(y2, r.bottom); };
    const shown = (e) => e.checkVisibility() && !e.closest('.jp-OutputPrompt, .jp-OutputArea-prompt');
    for (const e of el.querySelectorAll('svg, table, select, [role=tab]'))
        if (!e.parentElement.closest('svg') && shown(e)) add(e.getBoundingClientRect());
    const texts = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = texts.nextNode(); t; t = texts.nextNode()) {
        if (!t.textContent.trim() || t.parentElement.closest('svg') || !shown(t.parentElement)) continue;
        const range = document.createRange(); range.selectNodeContents(t);
        add(range.getBoundingClientRect()); }
    const x = Math.max(o.left, x1 - 8), y = Math.max(o.top, y1 - 8);
    return {x, y, width: Math.min(o.right, x2 + 8) - x, height: Math.min(o.bottom, y2 + 8) - y}; }"""


def _lab_figure(page, out, name: str) -> None:
    """``SFCLAB_DOCS_SCREENSHOTS=1``: what *out* shows, cropped to its content, as a figure of
    its lab's page in the manual (docs/labs/figures/, placed by docs/_ext/lab_figures.py)."""
    if os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        prompts = "(el, v) => el.querySelectorAll('.jp-OutputPrompt').forEach(p => p.style.visibility = v)"
        out.evaluate(prompts, "hidden")          # "[7]:" is drawn over a plot's left margin
        page.screenshot(path=str(ROOT / "docs" / "labs" / "figures" / name),
                        clip=out.evaluate(CONTENT_JS))
        out.evaluate(prompts, "")


def pictures(out) -> list[dict]:
    return out.evaluate(PICTURES_JS)


def graphs(out) -> list[dict]:
    return out.evaluate(GRAPHS_JS)


def readable_graph(g: dict) -> None:
    """A graph drawn at its size or nearly (an output narrower than it shrinks it a
    little), its text 10 px or more, no sideways scrolling."""
    assert g["width"] > 0.95 * g["meant"], (g["width"], g["meant"])
    assert g["fonts"] and min(g["fonts"]) >= 10, min(g["fonts"])
    assert not g["scrolls"], "the graph needs sideways scrolling"


def readable(pic: dict) -> None:
    """Drawn at the size it was meant (not shrunk), text 10 px or more, no scrolling."""
    assert abs(pic["width"] - pic["meant"]) < 1, pic["width"]
    assert pic["fonts"] and min(pic["fonts"]) >= 10, min(pic["fonts"])
    assert not pic["scrolls"], "the picture needs sideways scrolling"


def run_lab(lab, page, name: str) -> tuple[list[dict], list[int]]:
    """Open lab *name* from notebooks/, run all its cells, check it ends well with no error
    shown; its cells and the indices of its code cells (for :func:`output`)."""
    shutil.copy(ROOT / "notebooks" / name, lab.root / name)
    cells = json.loads((ROOT / "notebooks" / name).read_text())["cells"]
    code = [k for k, c in enumerate(cells) if c["cell_type"] == "code"]
    open_notebook(page, lab.url_of(name))
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    cell(page, code[-1]).locator(".jp-InputArea-prompt", has_text=f"[{len(code)}]").wait_for(
        timeout=KERNEL)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=KERNEL)
    assert "well done" in output(page, code[-1]).inner_text()
    no_widget_errors(page)
    return cells, code


def code_cell(cells: list[dict], code: list[int], text: str) -> int:
    """The first code cell whose source holds *text*."""
    return next(k for k in code if text in "".join(cells[k]["source"]))


def test_lab_04_shows_its_plots_and_placement_views(lab, page, artifacts: Path) -> None:
    cells, code = run_lab(lab, page, LAB)

    # the throughput model: three curves, readable at its size
    first = output(page, code[0])
    (plot,) = pictures(first)
    assert plot["lines"] == 3 and "recirculations k" in plot["text"]
    assert "1 loopback port per external" in plot["text"] and plot["width"] >= 500
    readable(plot)
    first.screenshot(path=str(artifacts / "labs-04-throughput.png"))
    _lab_figure(page, first, "04-throughput.png")

    # Dejavu Fig. 6: naive (2 recirculations) and Dejavu's placement (1), routes in red
    fig6 = output(page, code[2])
    naive, dejavu = _inner(fig6)
    assert "naive: 2 recirculations" in naive["text"] and naive["recirculations"] == 1
    assert "Dejavu: 1 recirculation" in dejavu["text"] and dejavu["recirculations"] == 1
    assert "↻ 2" in naive["text"] and "↻ 1" in dejavu["text"]
    readable(pictures(fig6)[0])
    fig6.screenshot(path=str(artifacts / "labs-04-fig6.png"))
    _lab_figure(page, fig6, "04-fig6.png")

    # the demo's placement view: the pipes and a route, the plot with the paths marked
    k = next(i for i in code if "live_view" in "".join(cells[i]["source"]))
    view = output(page, k)
    view.locator(".sfc-picture svg").first.wait_for(timeout=UI)
    placed, plot = pictures(view)
    for pipelet in ("I0", "E0", "I1", "E1"):
        assert f"{pipelet} · " in placed["text"]
    menu = view.locator("select")
    first_route = menu.input_value()
    assert f"route of {first_route}:" in placed["text"]
    assert plot["lines"] == 3 and plot["marks"] >= 2 and "Dejavu:" in plot["text"]
    for pic in (placed, plot):
        readable(pic)
    shot = view.locator(".widget-tab-contents")
    page.set_viewport_size({"width": 1400, "height": 1500})     # the whole tab in one picture
    shot.scroll_into_view_if_needed()
    shot.screenshot(path=str(artifacts / "labs-04-placement-view.png"))
    page.set_viewport_size({"width": 1400, "height": 1000})
    _to_docs(artifacts / "labs-04-placement-view.png", "lab-placement.png")
    other = next(o for o in menu.locator("option").all_inner_texts() if o != first_route)
    menu.select_option(other)
    page.wait_for_function(
        "([out, want]) => [...out.querySelectorAll('svg.sfc-diagram text')].some(t => "
        "t.textContent.startsWith(want))", arg=[view.element_handle(), f"route of {other}:"],
        timeout=UI)
    no_widget_errors(page)


def _inner(out) -> list[dict]:
    """The pictures nested in a side-by-side figure (each an <svg> inside the outer one)."""
    return out.evaluate("""(out) => [...out.querySelectorAll('svg.sfc-diagram svg')].map(s => ({
        text: [...s.querySelectorAll('text')].map(t => t.textContent).join(' | '),
        recirculations: s.querySelectorAll('.sfc-recirculate').length}))""")


# -- labs 02, 03 and 05: their pictures are there and readable ----------------------------------

def shown(page, cells: list[dict], code: list[int], text: str):
    """The outputs of the first code cell whose source holds *text*, scrolled into view (a
    cell far off screen is not drawn)."""
    k = code_cell(cells, code, text)
    out = cell(page, k).locator(".jp-OutputArea")
    out.scroll_into_view_if_needed()
    return out


def view_in(out, tabs: list[str]):
    """The live view in an output area, with these tabs."""
    view = out.locator(".jp-OutputArea-output > .widget-tab")
    view.wait_for(timeout=UI)
    see_tabs(view, tabs)
    return view


def wait_pictures(page, out, n: int, graphs_too: int = 0) -> None:
    """Until *out* shows *n* pictures and *graphs_too* graphs (a tab fills when shown)."""
    page.wait_for_function(
        f"([out, n, m]) => ({PICTURES_JS})(out).length === n && ({GRAPHS_JS})(out).length === m",
        arg=[out.element_handle(), n, graphs_too], timeout=UI)


def packets(page, out, nfs: list[str]) -> tuple[list[list[str]], str]:
    """A packet table's rows (cells as text) and the timeline shown: the last packet's,
    whose path through *nfs* is drawn, readable, on its chain's graph."""
    rows = [r.split("\t") for r in out.locator(".sfc-packets tbody tr").all_inner_texts()]
    timeline = out.locator(".sfc-timeline").filter(has_text=f"packet {rows[-1][0]} ")
    timeline.wait_for(timeout=UI)
    wait_pictures(page, out, 0, 1)
    (path,) = graphs(out)
    assert path["visited"] == sorted(["input", *nfs, "output"]), path
    readable_graph(path)
    return rows, timeline.inner_text()


def test_lab_02_shows_the_chains_the_merged_ir_and_its_plots(lab, page, artifacts: Path) -> None:
    cells, code = run_lab(lab, page, "02_merging_chains.ipynb")

    # the chains tab: one graph per request, its NFs and end points, readable
    out = shown(page, cells, code, "%%chain --show chains,ir")
    view = view_in(out, ["chains", "ir"])
    wait_pictures(page, out, 0, 3)
    gs = graphs(out)
    ends = ["input", "output"]
    assert [(g["head"].split(" ")[0], g["nodes"]) for g in gs] == [
        ("SFC1_DC", sorted(["ids", "firewall", "nat", "l3fwd", *ends])),
        ("SFC2_HTTP", sorted(["lb", "l3fwd", "firewall", "nat", *ends])),
        ("SFC3_GiLAN", sorted(["nat", "l2fwd", "lb", "l3fwd", "firewall", *ends]))], gs
    for g in gs:
        readable_graph(g)
    out.screenshot(path=str(artifacts / "labs-02-chains.png"))

    # the ir tab: the merged IR, one node per NF instance the lab's next cell counts
    click_tab(view, "ir")
    wait_pictures(page, out, 0, 1)
    (ir,) = graphs(out)
    counted = shown(page, cells, code, "print(merge.lcs").inner_text()
    n = int(re.search(r"lcs: (\d+) nodes", counted)[1])
    assert len(ir["nodes"]) == n and {"ids", "l2fwd", "lb", "firewall"} <= set(ir["nodes"]), ir
    assert any(x.endswith("_copy1") for x in ir["nodes"])     # a duplicated NF's replica
    assert "P4SC merged IR" in current_panel(view).inner_text()
    out.scroll_into_view_if_needed()
    readable_graph(ir)
    out.screenshot(path=str(artifacts / "labs-02-ir.png"))
    _lab_figure(page, out, "02-ir.png")

    # the bar plot: LCS merge vs the parallelism method, 8 chain counts, log scale
    out = shown(page, cells, code, "bar_plot(")
    (bars,) = pictures(out)
    assert bars["bars"] == 16 and bars["width"] >= 500, bars
    for label in ("LCS merge", "parallelism method", "tables (log scale)", "chains", "128"):
        assert label in bars["text"], label
    readable(bars)
    out.screenshot(path=str(artifacts / "labs-02-bars.png"))
    _lab_figure(page, out, "02-bars.png")

    # the exercise's plot: the share, P4SC's figure and the student's mean marked
    out = shown(page, cells, code, "line_plot(")
    (share,) = pictures(out)
    assert share["lines"] == 1 and share["marks"] == 2, share
    assert "P4SC: 13.15 %" in share["text"] and "your mean: " in share["text"]
    readable(share)
    assert out.evaluate(MARK_LABELS_ON_RINGS_JS) == []      # the "%" was under the ring
    out.screenshot(path=str(artifacts / "labs-02-share.png"))
    _lab_figure(page, out, "02-share.png")
    no_widget_errors(page)


def test_lab_03_shows_pipelines_passes_and_a_packets_timeline(lab, page, artifacts: Path) -> None:
    cells, code = run_lab(lab, page, "03_pipelines_and_recirculation.ipynb")

    # the pipeline tab: naive, MA-FSA and optimal drawn with each path's passes; the MA-FSA
    out = shown(page, cells, code, 'naive.live_view(show="pipeline,fsm")')
    view = view_in(out, ["pipeline", "fsm"])
    wait_pictures(page, out, 1, 1)
    (pipes,) = pictures(out)
    for head in ("naive ★ chosen", "MA-FSA: 4 slots", "optimal: "):
        assert head in pipes["text"], head
    assert pipes["rows"] == 6                               # 2 paths under each of 3 candidates
    readable(pipes)
    (fsa,) = graphs(out)
    assert fsa["nodes"] and all(x.startswith("s") for x in fsa["nodes"]), fsa
    readable_graph(fsa)
    out.screenshot(path=str(artifacts / "labs-03-pipeline.png"))
    _lab_figure(page, out, "03-pipeline.png")

    # the fsm tab: forward in one pass, reverse in two with a recirculation (red arrow)
    click_tab(view, "fsm")
    wait_pictures(page, out, 2)
    fwd, rev = pictures(out)
    assert (fwd["passes"], fwd["recirculations"]) == (1, 0), fwd
    assert (rev["passes"], rev["recirculations"]) == (2, 1), rev
    assert "recirculate" in rev["text"] and "pass 1" in rev["text"]
    panel = current_panel(view).inner_text()
    assert "forward/0 #1" in panel and "reverse/0 #2" in panel and "2 passes" in panel
    for pic in (fwd, rev):
        readable(pic)
    out.screenshot(path=str(artifacts / "labs-03-fsm.png"))

    # the packets: a table, the reverse packet's two passes and its path on the graph
    out = shown(page, cells, code, "SendView(naive")
    rows, text = packets(page, out, ["l3fwd", "nat", "firewall"])
    assert [(r[2], r[3]) for r in rows] == [("forward/0", "1"), ("reverse/0", "2")], rows
    assert "on reverse/0" in text and "2 passes" in text and "pass 1" in text, text
    out.screenshot(path=str(artifacts / "labs-03-packets.png"))
    _lab_figure(page, out, "03-packets.png")

    # the exercise: the MA-FSA pipeline runs both in one pass, no recirculation drawn
    out = shown(page, cells, code, 'mafsa.live_view(show="fsm")')
    view_in(out, ["fsm"])
    wait_pictures(page, out, 2)
    for pic in pictures(out):
        assert (pic["passes"], pic["recirculations"]) == (1, 0), pic
        assert "3: firewall" in pic["text"]                 # the MA-FSA's fourth slot
        readable(pic)
    no_widget_errors(page)


def test_lab_05_shows_the_chains_packets_update_timeline_and_offload(lab, page,
                                                                     artifacts: Path) -> None:
    cells, code = run_lab(lab, page, "05_runtime_changes.ipynb")

    # the chains (the same view, updated when the lab adds ssh further down)
    out = shown(page, cells, code, "%%chain --show chains")
    view_in(out, ["chains"])
    wait_pictures(page, out, 0, 3)
    gs = graphs(out)
    assert [g["head"].split(" ")[0] for g in gs] == ["web", "dns", "ssh"], gs
    assert gs[0]["nodes"] == sorted(["input", "firewall", "nat", "l3fwd", "output"])
    for g in gs:
        readable_graph(g)

    # %sfc send web 2: the packets, the path covered, the last one's path on the graph
    out = shown(page, cells, code, "%sfc send web 2")
    rows, _ = packets(page, out, ["firewall", "nat", "l3fwd"])
    assert [r[2] for r in rows] == ["web/0", "web/0"], rows
    assert "service paths covered: web/0" in out.inner_text()
    out.screenshot(path=str(artifacts / "labs-05-send.png"))
    _lab_figure(page, out, "05-send.png")

    # the updates under traffic: a tick per packet, a span per update, none in the red row
    out = shown(page, cells, code, "timeline_plot(")
    (tl,) = pictures(out)
    sent = int(re.match(r"(\d+) web packets during 10 updates", tl["text"])[1])
    assert len(tl["events"]) == sent > 0 and tl["spans"] == 10, tl
    assert "a mix, or lost" in tl["text"] and "#d62728" not in tl["events"]
    readable(tl)
    out.screenshot(path=str(artifacts / "labs-05-updates.png"))
    _lab_figure(page, out, "05-updates.png")

    # the offload split: ips on the server, each NF once
    out = shown(page, cells, code, 'LiveView(compiled, show="offload")')
    view_in(out, ["offload"])
    row = out.locator("tr", has_text="secure/0").locator("td")
    row.first.wait_for(timeout=UI)
    assert row.nth(2).inner_text().strip() == "ips" and "firewall" in row.nth(1).inner_text()
    out.screenshot(path=str(artifacts / "labs-05-offload.png"))
    _lab_figure(page, out, "05-offload.png")
    no_widget_errors(page)
