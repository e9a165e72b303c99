"""A teaching lab in a real JupyterLab, as a student runs it: lab 04 (placement).

The lab runs top to bottom without an error, and its pictures are there and readable:
the throughput model (Dejavu §4) is a plot of three curves drawn at its natural size, its
labels 10 px or more, with no sideways scrolling in a 1,400 px window; Dejavu's Fig. 6 shows
the naive placement and Dejavu's side by side or one above the other, with the route's
recirculations in red (two and one); the placement view of the demo's chains draws the
pipes, the route of the path picked in its menu (picking another redraws it) and the
throughput plot with the service paths marked.  Screenshots go to ``test-artifacts/``;
``SFCLAB_DOCS_SCREENSHOTS=1`` also copies the placement view to ``docs/lab-placement.png``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_views_browser import KERNEL, UI, _to_docs, cell, no_widget_errors, open_notebook, \
    output

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
              recirculations: [...s.querySelectorAll('.sfc-recirculate')].length};
    })"""


def pictures(out) -> list[dict]:
    return out.evaluate(PICTURES_JS)


def readable(pic: dict) -> None:
    """Drawn at the size it was meant (not shrunk), text 10 px or more, no scrolling."""
    assert abs(pic["width"] - pic["meant"]) < 1, pic["width"]
    assert pic["fonts"] and min(pic["fonts"]) >= 10, min(pic["fonts"])
    assert not pic["scrolls"], "the picture needs sideways scrolling"


def test_lab_04_shows_its_plots_and_placement_views(lab, page, artifacts: Path) -> None:
    shutil.copy(ROOT / "notebooks" / LAB, lab.root / LAB)
    cells = json.loads((ROOT / "notebooks" / LAB).read_text())["cells"]
    code = [k for k, c in enumerate(cells) if c["cell_type"] == "code"]
    open_notebook(page, f"{lab.url}lab/tree/{LAB}?reset&token={lab.token}")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    cell(page, code[-1]).locator(".jp-InputArea-prompt", has_text=f"[{len(code)}]").wait_for(
        timeout=KERNEL)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=KERNEL)
    assert "well done" in output(page, code[-1]).inner_text()
    no_widget_errors(page)

    # the throughput model: three curves, readable at its size
    first = output(page, code[0])
    (plot,) = pictures(first)
    assert plot["lines"] == 3 and "recirculations k" in plot["text"]
    assert "1 loopback port per external" in plot["text"] and plot["width"] >= 500
    readable(plot)
    first.screenshot(path=str(artifacts / "labs-04-throughput.png"))

    # Dejavu Fig. 6: naive (2 recirculations) and Dejavu's placement (1), routes in red
    fig6 = output(page, code[2])
    naive, dejavu = _inner(fig6)
    assert "naive: 2 recirculations" in naive["text"] and naive["recirculations"] == 1
    assert "Dejavu: 1 recirculation" in dejavu["text"] and dejavu["recirculations"] == 1
    assert "↻ 2" in naive["text"] and "↻ 1" in dejavu["text"]
    readable(pictures(fig6)[0])
    fig6.screenshot(path=str(artifacts / "labs-04-fig6.png"))

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
