"""The labs in the browser with no server: the JupyterLite site, as a student opens it.

The site is built once (``sfclab lite build``: npm's pyodide, PyPI's pure-Python wheels)
and served on 127.0.0.1; Debian's chromium may reach nothing else (every other request is
aborted, and none is made).  Labs 01 and 06 run as they are (Run All, no install cell) on
the Pyodide kernel, each in its own tab and at the same time (two kernels, two cores),
every cell to its end with no error, and show what a student reads:
lab 01 the live view, the packet table of ``%sfc send``, a packet's timeline (``%sfc
trace``), the table occupancy and the chain editor; lab 06 the topology view, the
network's packet table and a packet's hops.  Screenshots go to ``test-artifacts/``.
How long it takes is measured beside JupyterLab by ``benchmarks/bench_lite_browser.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lite_support import PAGE, browser, code_cell, finish_run_all, missing, offline, prompts, \
    serve, site, start_run_all

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
NOTEBOOKS = ROOT / "notebooks"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


def code_cells(notebook: str) -> list[str]:
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def index(cells: list[str], start: str) -> int:
    """The code cell whose source starts with *start*."""
    return next(i for i, c in enumerate(cells) if c.startswith(start))


LABS = ("01_first_chain.ipynb", "06_network_wide_chains.ipynb")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Labs 01 and 06, each run all in a browser context of its own on the built site:
    notebook -> (page, its code cells, page errors, refused requests)."""
    why = missing()
    if why:
        pytest.skip(why)
    built = site(tmp_path_factory.mktemp("lite") / "site",
                 cache=tmp_path_factory.getbasetemp() / "lite-cache")
    pages = {}
    with serve(built) as url, browser() as chromium:
        started = {}
        for nb in LABS:                    # both run at once: a kernel per tab
            ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
            refused = offline(ctx)
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            pages[nb] = (page, code_cells(nb), errors, refused)
            started[nb] = start_run_all(page, url + PAGE.format(notebook=nb))
        for nb in LABS:
            try:
                finish_run_all(pages[nb][0], len(pages[nb][1]), started[nb])
            except BaseException:
                ARTIFACTS.mkdir(exist_ok=True)
                pages[nb][0].screenshot(path=str(ARTIFACTS / f"lite-{nb}-failed.png"))
                raise
        yield pages


def _ran_clean(page, cells: list[str], errors: list[str], refused: list[str]) -> None:
    assert prompts(page) == [f"[{k + 1}]:" for k in range(len(cells))]
    stderr = page.locator(STDERR)
    assert stderr.count() == 0, stderr.all_text_contents()
    assert page.get_by_text("Error displaying widget").count() == 0
    assert errors == [] and refused == [], (errors, refused)


def _text(page, k: int) -> str:
    return code_cell(page, k).locator(".jp-OutputArea").text_content()


def _shot(page, k: int, selector: str, path: Path) -> None:
    el = code_cell(page, k).locator(selector).first
    el.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    el.screenshot(path=str(path))


def test_lab_01_runs_in_the_browser(ran, artifacts):
    page, cells, errors, refused = ran["01_first_chain.ipynb"]
    _ran_clean(page, cells, errors, refused)

    view = code_cell(page, index(cells, "%%chain")).locator(".widget-tab").first
    titles = view.locator(".lm-TabBar-tabLabel").all_text_contents()
    assert titles[:6] == ["chains", "ir", "pipeline", "fsm", "placement", "offload"], titles
    assert view.locator(".sfc-graph svg").count() >= 1          # the chains, drawn
    assert "P4Runtime in-process" in _text(page, index(cells, "%sfc push"))
    send = index(cells, "%sfc send web 5")
    rows = code_cell(page, send).locator(".sfc-packets table tbody tr")
    assert rows.count() == 5
    assert "service paths covered" in _text(page, send)
    trace = index(cells, "from scapy.all import")
    assert "dropped" in _text(page, trace) and code_cell(page, trace).locator(
        ".sfc-timeline").count() == 1
    assert code_cell(page, index(cells, "%sfc tables")).locator("table.sfc-tables").count() == 1
    editor = code_cell(page, index(cells, "%sfc edit mgmt")).locator(".sfc-editor")
    assert editor.count() == 1 and "monitor" in editor.text_content()
    assert "mgmt/0 [0.4]: input -> l2fwd -> monitor -> output" in _text(page, len(cells) - 1)
    _shot(page, index(cells, "%%chain"), ".widget-tab", artifacts / "lite-01-live-view.png")
    _shot(page, send, ".jp-OutputArea", artifacts / "lite-01-send.png")
    _shot(page, index(cells, "%sfc edit mgmt"), ".sfc-editor", artifacts / "lite-01-editor.png")


def test_lab_06_runs_in_the_browser(ran, artifacts):
    page, cells, errors, refused = ran["06_network_wide_chains.ipynb"]
    _ran_clean(page, cells, errors, refused)

    topo = code_cell(page, index(cells, "%%topology")).locator(".sfc-topology")
    assert topo.count() >= 1 and "e1_1" in topo.first.text_content()
    exact = _text(page, index(cells, "pl = many.placement"))
    assert "the exact solver did not run here: the exact network placement needs highspy" \
        in exact, exact
    web = index(cells, "%sfc send web 3")
    assert code_cell(page, web).locator(".sfc-packets table tbody tr").count() == 3
    hops = _text(page, index(cells, "traces = lab.network.traces"))
    assert "e1_1 -> a1_1 -> c1 -> c1" in hops and "delivered to h12" in hops, hops
    assert "none was lost" in _text(page, index(cells, "runs = {tuple"))
    assert "well done" in _text(page, len(cells) - 1)
    _shot(page, index(cells, "%%topology"), ".sfc-topology", artifacts / "lite-06-topology.png")
    _shot(page, web, ".jp-OutputArea", artifacts / "lite-06-send.png")
