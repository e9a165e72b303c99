"""The chain editor in a real JupyterLab (and Notebook 7), driven as a person would.

* render, drop NFs from the palette, connect nodes with the handle and in connect
  mode, branch an edge, edit the text, undo;
* after the notebook scrolled (either way, by the mouse wheel), a press on a node
  grabs that node: the node moves, the canvas does not pan; in JupyterLab and
  Notebook 7;
* dragging a node's body onto another node moves it; dragging its + handle onto
  another node connects them;
* the palette shows every entry without scrolling, and clicking entries adds
  nodes inside the visible canvas, apart from each other.

Screenshots go to ``test-artifacts/``; ``SFCLAB_DOCS_SCREENSHOTS=1`` also writes the
README's ``docs/editor-branch.png`` (``docs/editor.png``, the editor bound to a Lab, comes
from ``test_lab_editor_browser.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
KERNEL = 60_000  # ms: kernel start, first import of sfclab
SETUP = """\
from pathlib import Path
from sfclab.notebook import ChainEditor

editor = ChainEditor.from_text("chain web: firewall -> nat", debounce=0.1, height="360px")
out = Path("editor-state.txt")
out.write_text(editor.text)
editor.on_change(lambda change: out.write_text(change.text + ("\\n#ERRORS " + "; ".join(
    e["message"] for e in change.errors) if change.errors else "")))
editor"""
FILL = "print('\\n'.join(f'line {i}' for i in range(60)))"  # something to scroll past

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
    """Run every cell (JupyterLab or Notebook 7) and wait until all have run.

    Notebook 7 sometimes asks for a kernel (a "Select Kernel" dialog) after the
    cells were sent, and drops them: then the kernel is selected and the cells
    are sent again."""
    page.locator(".jp-Notebook").first.wait_for(timeout=KERNEL)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=KERNEL)
    if "/lab/" in page.url:
        page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=KERNEL)
    select = page.get_by_role("button", name="Select", exact=True)
    prompts = "[...document.querySelectorAll('.jp-InputArea-prompt')].map(p => p.textContent)"
    deadline = time.monotonic() + 2 * KERNEL / 1000
    sent = 0.0
    while True:
        shown = page.evaluate(f"() => {prompts}")
        if shown and all(re.search(r"\[\d+\]", p) for p in shown):
            break
        assert time.monotonic() < deadline, f"the cells did not all run: {shown}"
        if select.is_visible():
            select.click()
            sent = 0.0
        if not sent or (time.monotonic() - sent > 15 and not any("[*]" in p for p in shown)
                        and not any(re.search(r"\[\d+\]", p) for p in shown)):
            try:
                page.get_by_role("menuitem", name="Run", exact=True).click(timeout=2_000)
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click(timeout=2_000)
                sent = time.monotonic()
            except Exception as e:  # a dialog came first (Playwright's TimeoutError)
                if "Timeout" not in type(e).__name__:
                    raise
                page.keyboard.press("Escape") if not select.is_visible() else None
        page.wait_for_timeout(250)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=KERNEL)


def open_editor(page, url: str) -> None:
    page.goto(url)
    run_all(page)
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 4", timeout=30_000)
    assert page.get_by_text("Error displaying widget").count() == 0


def node_point(page, node_id: str) -> tuple[float, float]:
    """Page coordinates of a node's centre, from the cytoscape instance."""
    return page.evaluate(f"""(id) => {{
        const cy = {CY}; const r = cy.container().getBoundingClientRect();
        const p = cy.getElementById(id).renderedPosition();
        return [r.left + p.x, r.top + p.y]; }}""", node_id)


def from_palette(page, nf: str, to: tuple[float, float]) -> None:
    """Drag a palette item to a point of the page."""
    item = page.locator(f".sfc-item[data-nf='{nf}']")
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
    page.wait_for_timeout(100)
    page.mouse.up()


def handle_drag(page, source: str, target: str) -> None:
    """Hover *source*, then drag its + handle onto *target*."""
    page.mouse.move(*node_point(page, source))
    handle = page.locator(".sfc-handle")
    handle.wait_for(state="visible", timeout=5_000)
    b = handle.bounding_box()
    start = (b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    page.mouse.move(*start)  # onto the handle, as a hand would
    drag(page, start, node_point(page, target))


def docs_screenshot(locator, name: str, artifacts: Path, docs: str = "editor-branch.png") -> None:
    locator.screenshot(path=str(artifacts / name))
    if os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        shutil.copy(artifacts / name, ROOT / "docs" / docs)


# -- the whole round: palette, handle, connect mode, branch, text, undo ---------------------------

def test_editor_renders_drags_connects_and_syncs_text(lab, page, artifacts: Path) -> None:
    state = lab.root / "editor-state.txt"
    open_editor(page, lab.notebook("editor.ipynb", [SETUP]))
    assert_no_js_errors(page)
    canvas = page.locator(".sfc-canvas")
    canvas.scroll_into_view_if_needed()
    assert page.locator(".sfc-status").inner_text() == "valid chain ✓"
    assert "chain web: firewall -> nat" in wait_for_file(state, bool)
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-1-rendered.png"))
    # labels in JupyterLab's UI font, resolved to names (Cytoscape takes no CSS variable)
    drawn, lab_font = page.evaluate(f"""() => [{CY}.nodes()[0].style('font-family'),
        getComputedStyle(document.querySelector('.sfc-editor')).getPropertyValue('--jp-ui-font-family')]""")
    assert lab_font.strip() and "var(" not in drawn
    assert drawn.split(",")[0].strip(' "') == lab_font.split(",")[0].strip(" '\""), (drawn, lab_font)

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

    # connect nat -> lb with the handle, lb -> output in connect mode
    handle_drag(page, "nat", "lb")
    page.wait_for_function(f"() => {CY}.getElementById('nat->lb').nonempty()", timeout=10_000)
    page.get_by_role("button", name="Connect").click()
    drag(page, node_point(page, "lb"), node_point(page, "output"))
    page.wait_for_function(f"() => {CY}.getElementById('lb->output').nonempty()", timeout=10_000)
    page.get_by_role("button", name="Connect").click()
    text = wait_for_file(state, lambda s: "lb => output;" in s and "#ERRORS" not in s)
    assert "nat => lb;" in text and "nat => output;" not in text
    page.wait_for_function("() => document.querySelector('.sfc-status').textContent === 'valid chain ✓'")
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-2-edited.png"))

    # make firewall -> nat a branch: then nat, else drop
    fw = node_point(page, "firewall")
    from_palette(page, "drop", (fw[0], fw[1] + 90))
    page.wait_for_function(f"() => {CY}.getElementById('drop').nonempty()", timeout=10_000)
    handle_drag(page, "firewall", "drop")
    page.wait_for_function(f"() => {CY}.getElementById('firewall->drop').nonempty()", timeout=10_000)
    open_edge_menu(page, "firewall->nat")
    menu.locator("select[name=kind]").select_option("then")
    menu.locator("input[name=field]").fill("firewall.verdict")
    menu.locator("input[name=value]").fill("0")
    menu.get_by_role("button", name="Apply").click()
    text = wait_for_file(state, lambda s: "(nat : drop ? firewall.verdict == 0)" in s)
    assert "#ERRORS" not in text
    page.wait_for_function(f"() => {CY}.getElementById('firewall->drop').data('kind') === 'else'")
    page.mouse.move(*node_point(page, "lb"))  # show the handle in the picture
    page.locator(".sfc-handle").wait_for(state="visible")
    page.wait_for_timeout(300)
    docs_screenshot(page.locator(".sfc-editor"), "editor-3-branch.png", artifacts)

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
    assert_no_js_errors(page)


# -- pointer events land where they are, after any scroll ----------------------------------------

def press_and_drag_node(page, node: str, by: tuple[float, float]) -> None:
    """Drag *node* by *by* screen pixels; assert that the node moved and the canvas did not."""
    pan = page.evaluate(f"() => {CY}.pan()")
    start = node_point(page, node)
    drag(page, start, (start[0] + by[0], start[1] + by[1]))
    end = node_point(page, node)
    assert page.evaluate(f"() => {CY}.pan()") == pan, "the press was taken as one on the " \
        "background: the canvas panned instead of the node moving"
    assert abs(end[0] - start[0] - by[0]) < 3 and abs(end[1] - start[1] - by[1]) < 3, \
        f"{node} did not follow the pointer: {start} -> {end}"


@pytest.mark.parametrize("server", ["lab", "notebook7"])
def test_press_on_a_node_grabs_it_wherever_the_notebook_scrolled(server, request, page,
                                                                 artifacts: Path) -> None:
    app = request.getfixturevalue(server)
    open_editor(page, app.notebook(f"scroll-{server}.ipynb", [FILL, SETUP, FILL]))
    toolbar = page.locator(".sfc-toolbar")
    toolbar.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    top = lambda: page.locator(".sfc-canvas").bounding_box()["y"]  # noqa: E731
    # bring the canvas to the upper part of the window: room to scroll both ways
    page.mouse.move(*_centre(toolbar.bounding_box()))
    page.mouse.wheel(0, top() - 260)
    page.wait_for_timeout(500)
    for k, wheel in enumerate([120, -240, 90, -60]):
        page.mouse.move(*node_point(page, "firewall"))  # cytoscape reads the offset here
        page.wait_for_timeout(100)
        before = top()
        page.mouse.move(*_centre(toolbar.bounding_box()))
        page.mouse.wheel(0, wheel)
        page.wait_for_timeout(500)
        assert abs(top() - before) > 30, "the notebook did not scroll"
        press_and_drag_node(page, "nat", (40, 30) if k % 2 == 0 else (-40, -30))
    # a press on the background still pans
    box = page.locator(".sfc-canvas").bounding_box()
    pan = page.evaluate(f"() => {CY}.pan()")
    spot = (box["x"] + 30, box["y"] + box["height"] - 30)
    drag(page, spot, (spot[0] + 50, spot[1] - 20))
    assert page.evaluate(f"() => {CY}.pan()") != pan
    page.screenshot(path=str(artifacts / f"editor-scrolled-{server}.png"))
    assert_no_js_errors(page)


def assert_no_js_errors(page) -> None:
    """No uncaught error in the page, but for one of Notebook 7's own (7.6: its
    shortcuts plugin reads the schema of a plugin it has not loaded; it happens
    with no sfclab extension installed at all), and no console warning of sfclab's
    front end (conftest.front_end_warning)."""
    ours = [e for e in page.js_errors if not ("reading 'schema'" in e and "notebook_core" in e)]
    assert ours == [], "\n".join(ours)
    # nor a warning of the editor's code or Cytoscape's (a font or a mapping it refused)
    assert page.front_end_warnings == [], "\n".join(page.front_end_warnings)


def _centre(b: dict) -> tuple[float, float]:
    return (b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)


# -- connecting vs moving ---------------------------------------------------------------------------

def test_dragging_a_node_moves_it_and_dragging_its_handle_connects(lab, page) -> None:
    state = lab.root / "editor-state.txt"
    open_editor(page, lab.notebook("connect.ipynb", [SETUP]))
    page.locator(".sfc-canvas").scroll_into_view_if_needed()
    page.locator(".sfc-item[data-nf='lb']").click()
    page.wait_for_function(f"() => {CY}.getElementById('lb').nonempty()", timeout=10_000)
    # the body: nat dragged onto lb moves nat, and draws nothing
    edges = page.evaluate(f"() => {CY}.edges().map(e => e.id()).sort()")
    nat_x = page.evaluate(f"() => {CY}.getElementById('nat').position('x')")
    lb = node_point(page, "lb")
    drag(page, node_point(page, "nat"), (lb[0], lb[1] + 5))
    assert abs(node_point(page, "nat")[1] - lb[1] - 5) < 3
    assert page.evaluate(f"() => {CY}.edges().map(e => e.id()).sort()") == edges
    page.get_by_role("button", name="Undo").click()  # the move, not the add
    page.wait_for_function(f"() => Math.abs({CY}.getElementById('nat').position('x') - {nat_x}) "
                           f"< 1 && {CY}.getElementById('lb').nonempty()", timeout=10_000)
    # the handle: dragged from firewall onto lb, it connects them
    handle_drag(page, "firewall", "lb")
    page.wait_for_function(f"() => {CY}.getElementById('firewall->lb').nonempty()", timeout=10_000)
    wait_for_file(state, lambda s: "firewall => lb;" in s or "firewall -> lb" in s)
    assert page.evaluate(f"() => {CY}.nodes('.sfc-tmp').length + {CY}.edges('.sfc-tmp').length") == 0
    # released on the background, it draws nothing
    page.mouse.move(*node_point(page, "lb"))
    handle = page.locator(".sfc-handle")
    handle.wait_for(state="visible")
    b = handle.bounding_box()
    box = page.locator(".sfc-canvas").bounding_box()
    n = page.evaluate(f"() => {CY}.edges().length")
    drag(page, _centre(b), (box["x"] + 40, box["y"] + box["height"] - 40))
    page.wait_for_timeout(500)
    assert page.evaluate(f"() => {CY}.edges().length") == n
    assert_no_js_errors(page)


# -- the palette ------------------------------------------------------------------------------------

def test_palette_shows_everything_and_clicks_add_inside_the_view(lab, page, artifacts) -> None:
    open_editor(page, lab.notebook("palette.ipynb", [SETUP]))
    page.locator(".sfc-editor").scroll_into_view_if_needed()
    palette = page.locator(".sfc-palette")
    assert palette.evaluate("p => p.scrollHeight <= p.clientHeight + 1"), "the palette scrolls"
    pbox = palette.bounding_box()
    names = page.locator(".sfc-item").evaluate_all("els => els.map(e => e.dataset.nf)")
    assert {"ids", "ipsec", "dpi", "input", "output", "drop", "cpu"} <= set(names)
    for item in page.locator(".sfc-item").all():
        b = item.bounding_box()
        assert pbox["y"] <= b["y"] and b["y"] + b["height"] <= pbox["y"] + pbox["height"] + 0.5, \
            f"{item.get_attribute('data-nf')} is clipped"
    for nf in ["ids", "lb", "l3fwd", "dpi", "qos", "ipsec", "monitor"]:
        count = page.evaluate(f"() => {CY}.nodes().length")
        page.locator(f".sfc-item[data-nf='{nf}']").click()
        page.wait_for_function(f"() => {CY}.nodes().length === {count + 1}", timeout=10_000)
    page.wait_for_timeout(300)
    outside = page.evaluate(f"""() => {{ const cy = {CY}; const w = cy.width(), h = cy.height();
        return cy.nodes().filter(n => {{ const b = n.renderedBoundingBox({{includeLabels: false}});
            return b.x1 < 0 || b.y1 < 0 || b.x2 > w || b.y2 > h; }}).map(n => n.id()); }}""")
    assert outside == [], f"placed outside the visible canvas: {outside}"
    overlapping = page.evaluate(f"""() => {{ const ns = {CY}.nodes().toArray(); const out = [];
        for (let i = 0; i < ns.length; i++) for (let j = i + 1; j < ns.length; j++) {{
            const a = ns[i].boundingBox({{includeLabels: false}}), b = ns[j].boundingBox({{includeLabels: false}});
            if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) out.push(ns[i].id() + '/' + ns[j].id()); }}
        return out; }}""")
    assert overlapping == []
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-palette.png"))
    assert_no_js_errors(page)


# -- the canvas follows every change (issue 19.4) ------------------------------------------------

def console_errors(page) -> list[str]:
    """What the page logs as errors from now on (ipywidgets logs a failed state update,
    "Error setting state", there, not as an uncaught error)."""
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if m.type == "error" else None)
    return found


def canvas_ids(page) -> list[str]:
    return sorted(page.evaluate(f"() => {CY}.elements().not('.sfc-tmp').map(e => e.id())"))


def wait_canvas(page, ids: list[str]) -> None:
    """Until the canvas shows exactly these nodes and edges."""
    want = sorted(ids)
    try:
        page.wait_for_function(f"(want) => JSON.stringify({CY}.elements().not('.sfc-tmp')"
                               f".map(e => e.id()).sort()) === JSON.stringify(want)",
                               arg=want, timeout=10_000)
    except Exception as e:  # noqa: BLE001 - say what the canvas showed instead
        raise AssertionError(f"the canvas shows {canvas_ids(page)}, not {want}") from e


def chain_ids(*nodes: str) -> list[str]:
    """The ids of a straight chain input -> nodes -> output."""
    path = ["input", *nodes, "output"]
    return path + [f"{u}->{v}" for u, v in zip(path, path[1:])]


def run_cell_text(page, k: int, code: str) -> None:
    """Type *code* into cell *k* and run it (Ctrl+Enter), as a person would."""
    prompt = page.locator(".jp-Cell").nth(k).locator(".jp-InputArea-prompt")
    before = prompt.inner_text()
    page.locator(".jp-Cell").nth(k).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)
    page.keyboard.press("Control+Enter")
    page.wait_for_function("([p, b]) => /\\[\\d+\\]/.test(p.textContent) && p.textContent !== b",
                           arg=[prompt.element_handle(), before], timeout=KERNEL)


def test_canvas_follows_a_deleted_nf_new_text_and_undo(lab, page, artifacts: Path) -> None:
    """Issue 19.4: deleting a connected NF froze the canvas for good ("Error setting
    state: Can not create edge `firewall->nat` with nonexistent target `nat`")."""
    errors = console_errors(page)
    open_editor(page, lab.notebook("follow.ipynb", [SETUP, "pass"]))
    page.locator(".sfc-canvas").scroll_into_view_if_needed()
    wait_canvas(page, chain_ids("firewall", "nat"))

    # delete nat, connected both ways, with its menu
    page.mouse.click(*node_point(page, "nat"))
    page.locator(".sfc-menu").get_by_role("button", name="Delete").click()
    deleted = ["input", "firewall", "output", "input->firewall"]
    wait_canvas(page, deleted)
    # a later add shows (the canvas is not frozen)
    page.locator(".sfc-item[data-nf='lb']").click()
    wait_canvas(page, [*deleted, "lb"])

    # another chain in the text box
    page.locator(".sfc-text").fill("chain vlan: l2fwd -> qos -> monitor")
    page.locator(".sfc-name").click()  # leave the box: the text is applied
    wait_canvas(page, chain_ids("l2fwd", "qos", "monitor"))
    # another chain set from Python
    run_cell_text(page, 1, 'editor.text = "chain web: firewall -> nat -> l3fwd"')
    wait_canvas(page, chain_ids("firewall", "nat", "l3fwd"))

    # undo, step by step, back to the start
    undo = page.get_by_role("button", name="Undo")
    for want in (chain_ids("l2fwd", "qos", "monitor"), [*deleted, "lb"], deleted,
                 chain_ids("firewall", "nat")):
        undo.click()
        wait_canvas(page, want)
    page.get_by_role("button", name="Redo").click()
    wait_canvas(page, deleted)
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-follows.png"))
    assert not [e for e in errors if "Error setting state" in e or "nonexistent" in e], errors
    assert_no_js_errors(page)


# -- handling: the wheel, the keyboard, Tidy and Fit (issue 22.2) ------------------------------------

LONG = '''\
from sfclab.notebook import ChainEditor
editor = ChainEditor.from_text("""chain web {
    input => ids => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => monitor => qos => l3fwd => output;
}""", debounce=0.1, height="360px")
editor'''

IN_VIEW_JS = f"""() => {{ const cy = {CY}; const w = cy.width(), h = cy.height();
    return cy.nodes().filter(n => {{ const b = n.renderedBoundingBox({{includeLabels: false}});
        return b.x1 < -0.5 || b.y1 < -0.5 || b.x2 > w + 0.5 || b.y2 > h + 0.5; }}).map(n => n.id()); }}"""
def _wait_quietly(page, condition: str, timeout: int = 10_000) -> None:
    """Wait until *condition* holds in the page, or *timeout* ms; the asserts after it
    say what did not hold (a timeout here is no verdict of its own)."""
    try:
        page.wait_for_function(condition, timeout=timeout)
    except Exception:       # playwright's TimeoutError: the asserts that follow tell why
        pass


LABEL_PX_JS = f"""() => {{ const cy = {CY};
    return Math.min(...cy.edges().filter(e => e.data('label')).map(e =>
        parseFloat(e.style('font-size')) * cy.zoom())); }}"""


# labelled edges whose label comes within 10 px (an arrowhead) of a node, in model coordinates
LABELS_CLEAR_JS = f"""() => {{ const cy = {CY};
    const box = {{includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false}};
    return cy.edges().filter(e => e.data('label')).flatMap(e => {{
        const l = e.boundingBox(box);
        return cy.nodes().filter(n => {{ const b = n.boundingBox({{includeLabels: false, includeOverlays: false}});
            return l.x1 < b.x2 + 10 && b.x1 - 10 < l.x2 && l.y1 < b.y2 && b.y1 < l.y2; }})
            .map(n => `${{e.data('label')}} (${{e.id()}}) by ${{n.id()}}`); }}); }}"""


def test_wheel_scrolls_ctrl_wheel_zooms_keys_delete_tidy_and_fit(lab, page, artifacts) -> None:
    page.goto(lab.notebook("handling.ipynb", [FILL, LONG, FILL]))
    run_all(page)
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 10", timeout=30_000)
    canvas = page.locator(".sfc-canvas")
    canvas.scroll_into_view_if_needed()
    page.wait_for_timeout(300)

    # the wheel over the canvas scrolls the notebook, and does not zoom
    zoom = page.evaluate(f"() => {CY}.zoom()")
    top = canvas.bounding_box()["y"]
    page.mouse.move(*_centre(canvas.bounding_box()))
    page.mouse.wheel(0, 150)
    page.wait_for_timeout(500)
    assert canvas.bounding_box()["y"] < top - 50, "the notebook did not scroll"
    assert page.evaluate(f"() => {CY}.zoom()") == zoom, "the wheel zoomed the canvas"
    # Ctrl + wheel zooms (about the pointer), and the page stays
    top = canvas.bounding_box()["y"]
    page.mouse.move(*_centre(canvas.bounding_box()))
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_timeout(400)
    assert page.evaluate(f"() => {CY}.zoom()") > zoom * 1.3
    assert abs(canvas.bounding_box()["y"] - top) < 1
    assert page.evaluate(IN_VIEW_JS) != [], "zoomed in, some node is out of view"

    # Tidy: every node in view, output and drop too, labels readable
    page.get_by_role("button", name="Tidy").click()
    # (the label size follows the zoom in the frame after it: wait for both, then assert)
    settled = f"() => ({IN_VIEW_JS})().length === 0 && ({LABEL_PX_JS})() >= 11 - 0.05"
    _wait_quietly(page, settled)
    assert page.evaluate(IN_VIEW_JS) == []
    assert page.evaluate(LABEL_PX_JS) >= 11 - 0.05
    # Fit after zooming in: the same
    page.mouse.move(*_centre(canvas.bounding_box()))
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    page.wait_for_timeout(300)
    page.get_by_role("button", name="Fit").click()
    _wait_quietly(page, settled)
    assert page.evaluate(IN_VIEW_JS) == []
    assert page.evaluate(LABEL_PX_JS) >= 11 - 0.05, "edge labels shrank below 11 px"
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-tidy-fit.png"))
    # and the edge labels ("verdict == 0") clear of the nodes and the arrowheads (issue 33.6)
    assert page.evaluate(LABELS_CLEAR_JS) == []

    # Delete on a selected node deletes it; Backspace on a selected edge too
    page.mouse.click(*node_point(page, "monitor"))
    page.wait_for_function(f"() => {CY}.getElementById('monitor').selected()")
    page.keyboard.press("Delete")
    page.wait_for_function(f"() => {CY}.getElementById('monitor').empty()", timeout=10_000)
    assert page.evaluate(f"() => {CY}.getElementById('lb->monitor').empty()")
    # (in braces: the arrow returns nothing; Playwright would copy back the cytoscape
    # collection that select() returns, the whole graph, which took it ~18 s)
    page.evaluate(f"() => {{ {CY}.getElementById('qos->l3fwd').select(); }}")
    page.mouse.click(*node_point(page, "qos"))     # a press on the canvas focuses the editor
    page.evaluate(f"() => {{ {CY}.elements().unselect(); {CY}.getElementById('qos->l3fwd').select(); }}")
    page.keyboard.press("Backspace")
    page.wait_for_function(f"() => {CY}.getElementById('qos->l3fwd').empty()", timeout=10_000)
    assert page.evaluate(f"() => {CY}.getElementById('qos').nonempty()")
    # not while typing in the text box
    n = page.evaluate(f"() => {CY}.elements().length")
    page.mouse.click(*node_point(page, "qos"))
    page.locator(".sfc-text").click()
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    page.wait_for_timeout(500)
    assert page.evaluate(f"() => {CY}.getElementById('qos').nonempty()")
    assert page.evaluate(f"() => {CY}.elements().length") == n
    # and the notebook kept its cells (the keys went to the editor, not to JupyterLab)
    assert page.locator(".jp-Cell").count() == 3
    assert_no_js_errors(page)
