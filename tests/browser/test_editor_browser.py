"""The chain editor in a real JupyterLab: render, drag an NF, draw edges, edit text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SETUP = """\
from pathlib import Path
from sfclab.notebook import ChainEditor

editor = ChainEditor.from_text("chain web: firewall -> nat", debounce=0.1, height="360px")
out = Path("editor-state.txt")
out.write_text(editor.text)
editor.on_change(lambda change: out.write_text(change.text + ("\\n#ERRORS " + "; ".join(
    e["message"] for e in change.errors) if change.errors else "")))
editor"""

CY = "document.querySelector('.sfc-canvas').__cy"


def wait_for_file(path: Path, predicate, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if predicate(text):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{path.name} never matched; last content:\n{text}")


def run_all(page) -> None:
    page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-InputArea-prompt').length > 0 && "
        "[...document.querySelectorAll('.jp-InputArea-prompt')].every(p => /\\[\\d+\\]/.test(p.textContent))",
        timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)


def node_point(page, node_id: str) -> tuple[float, float]:
    """Page coordinates of a node's centre, from the cytoscape instance."""
    return page.evaluate(f"""(id) => {{
        const cy = {CY}; const r = cy.container().getBoundingClientRect();
        const p = cy.getElementById(id).renderedPosition();
        return [r.left + p.x, r.top + p.y]; }}""", node_id)


def from_palette(page, nf: str, to: tuple[float, float]) -> None:
    """Drag a palette item to a point of the page."""
    item = page.locator(f".sfc-item[data-nf='{nf}']")
    item.scroll_into_view_if_needed()
    b = item.bounding_box()
    drag(page, (b["x"] + b["width"] / 2, b["y"] + b["height"] / 2), to)


def open_edge_menu(page, edge_id: str):
    """Click an edge's midpoint (from the cytoscape instance) and return the open menu."""
    menu = page.locator(".sfc-menu")
    for _ in range(3):
        page.wait_for_timeout(200)  # let JupyterLab finish scrolling the output
        mid = page.evaluate(f"""(id) => {{ const cy = {CY}; const r = cy.container().getBoundingClientRect();
            const m = cy.getElementById(id).renderedMidpoint(); return [r.left + m.x, r.top + m.y]; }}""", edge_id)
        page.mouse.click(*mid)
        if menu.is_visible() and edge_id.replace("->", " → ") in menu.inner_text():
            return menu
    raise AssertionError(f"clicking {edge_id} did not open its menu")


def drag(page, start: tuple[float, float], end: tuple[float, float], steps: int = 12) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    for i in range(1, steps + 1):
        page.mouse.move(start[0] + (end[0] - start[0]) * i / steps,
                        start[1] + (end[1] - start[1]) * i / steps)
        page.wait_for_timeout(15)
    page.wait_for_timeout(150)  # edgehandles' hover delay before the target counts
    page.mouse.up()


def test_editor_renders_drags_connects_and_syncs_text(lab, page, artifacts: Path) -> None:
    state = lab.root / "editor-state.txt"
    page.goto(lab.notebook("editor.ipynb", [SETUP]))
    run_all(page)
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 4", timeout=30_000)
    assert page.get_by_text("Error displaying widget").count() == 0
    assert page.js_errors == []
    canvas = page.locator(".sfc-canvas")
    canvas.scroll_into_view_if_needed()
    assert page.locator(".sfc-status").inner_text() == "valid chain ✓"
    assert "chain web: firewall -> nat" in wait_for_file(state, bool)
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-1-rendered.png"))

    # drag lb from the palette onto an empty spot of the canvas
    box = canvas.bounding_box()
    drop_at = (box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.8)
    from_palette(page, "lb", drop_at)
    page.wait_for_function(f"() => {CY}.getElementById('lb').nonempty()", timeout=10_000)
    text = wait_for_file(state, lambda s: "nothing leads into 'lb'" in s)
    assert "#ERRORS" in text
    assert page.locator(".sfc-errors li").first.inner_text().startswith("nothing leads into 'lb'")
    assert page.evaluate(f"() => {CY}.getElementById('lb').hasClass('sfc-error')")
    lb = node_point(page, "lb")
    assert abs(lb[0] - drop_at[0]) < 3 and abs(lb[1] - drop_at[1]) < 3

    # delete nat -> output through the edge menu
    menu = open_edge_menu(page, "nat->output")
    menu.get_by_role("button", name="Delete").click()
    page.wait_for_function(f"() => {CY}.getElementById('nat->output').empty()", timeout=10_000)

    # connect nat -> lb -> output with edgehandles (Connect mode)
    page.get_by_role("button", name="Connect").click()
    drag(page, node_point(page, "nat"), node_point(page, "lb"))
    page.wait_for_function(f"() => {CY}.getElementById('nat->lb').nonempty()", timeout=10_000)
    drag(page, node_point(page, "lb"), node_point(page, "output"))
    page.wait_for_function(f"() => {CY}.getElementById('lb->output').nonempty()", timeout=10_000)
    text = wait_for_file(state, lambda s: "lb => output;" in s and "#ERRORS" not in s)
    assert "nat => lb;" in text and "nat => output;" not in text
    page.wait_for_function("() => document.querySelector('.sfc-status').textContent === 'valid chain ✓'")
    page.get_by_role("button", name="Connect").click()
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-2-edited.png"))

    # make firewall -> nat a branch: then nat, else drop
    fw = node_point(page, "firewall")
    from_palette(page, "drop", (fw[0], fw[1] + 90))
    page.wait_for_function(f"() => {CY}.getElementById('drop').nonempty()", timeout=10_000)
    page.get_by_role("button", name="Connect").click()
    drag(page, node_point(page, "firewall"), node_point(page, "drop"))
    page.wait_for_function(f"() => {CY}.getElementById('firewall->drop').nonempty()", timeout=10_000)
    page.get_by_role("button", name="Connect").click()
    open_edge_menu(page, "firewall->nat")
    menu.locator("select[name=kind]").select_option("then")
    menu.locator("input[name=field]").fill("firewall.verdict")
    menu.locator("input[name=value]").fill("0")
    menu.get_by_role("button", name="Apply").click()
    text = wait_for_file(state, lambda s: "(nat : drop ? firewall.verdict == 0)" in s)
    assert "#ERRORS" not in text
    page.wait_for_function(f"() => {CY}.getElementById('firewall->drop').data('kind') === 'else'")
    page.locator(".sfc-palette").evaluate("p => { p.scrollTop = 0; }")  # whole first group in view
    page.wait_for_timeout(300)
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-3-branch.png"))

    # text -> drawing: type chain text into the editor's text box
    box = page.locator(".sfc-text")
    box.fill("chain web: firewall -> ids -> l3fwd")
    page.locator(".sfc-name").click()  # leave the box: the text is applied
    page.wait_for_function(f"() => {CY}.getElementById('ids').nonempty() && "
                           f"{CY}.getElementById('lb').empty()", timeout=10_000)
    wait_for_file(state, lambda s: s.startswith("chain web: firewall -> ids -> l3fwd"))

    # undo brings the drawn chain back
    page.get_by_role("button", name="Undo").click()
    page.wait_for_function(f"() => {CY}.getElementById('lb').nonempty()", timeout=10_000)
    wait_for_file(state, lambda s: "(nat : drop ? firewall.verdict == 0)" in s)
    assert page.js_errors == []
