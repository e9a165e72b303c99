"""The labs in the browser with no server: the JupyterLite site, as a student opens it.

The site is built once (``sfclab lite build``: npm's pyodide, PyPI's pure-Python wheels)
and served on 127.0.0.1; Debian's chromium may reach nothing else (every other request is
aborted, and none is made).  Labs 01 and 06 run as they are (Run All, no install cell) on
the Pyodide kernel, every cell to its end with no error, and show what a student reads:
lab 01 the live view, the packet table of ``%sfc send``, a packet's timeline (``%sfc
trace``), the table occupancy and the chain editor; lab 06 the topology view, the
network's packet table and a packet's hops.  Screenshots go to ``test-artifacts/``.
How long it takes is measured beside JupyterLab by ``benchmarks/bench_lite_browser.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lite_support import PAGE, code_cell, missing, offline, prompts, run_all_timed, serve, \
    site

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


def code_cells(notebook: str) -> list[str]:
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def index(cells: list[str], start: str) -> int:
    """The code cell whose source starts with *start*."""
    return next(i for i, c in enumerate(cells) if c.startswith(start))


@pytest.fixture(scope="module")
def lite_url(tmp_path_factory):
    why = missing()
    if why:
        pytest.skip(why)
    built = site(tmp_path_factory.mktemp("lite") / "site",
                 cache=tmp_path_factory.getbasetemp() / "lite-cache")
    with serve(built) as url:
        yield url


@pytest.fixture
def offline_page(browser_context):
    refused = offline(browser_context)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page, refused, errors
    page.close()
    browser_context.unroute("**/*")


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


def test_lab_01_runs_in_the_browser(lite_url, offline_page, artifacts):
    page, refused, errors = offline_page
    cells = code_cells("01_first_chain.ipynb")
    run_all_timed(page, lite_url + PAGE.format(notebook="01_first_chain.ipynb"), len(cells))
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


def test_lab_06_runs_in_the_browser(lite_url, offline_page, artifacts):
    page, refused, errors = offline_page
    cells = code_cells("06_network_wide_chains.ipynb")
    run_all_timed(page, lite_url + PAGE.format(notebook="06_network_wide_chains.ipynb"),
                  len(cells))
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
