"""The chain editor bound to the notebook's Lab (``%sfc edit``), in a real JupyterLab.

A chain drawn in the editor goes into the Lab as a ``%%chain`` re-run does: the live
view of the ``%%chain`` cell follows, **Push** pushes it, and ``%sfc send`` sends its
packets through the drawn NFs; re-running the ``%%chain`` cell with other text is
refused (it would discard the drawing), ``--force`` runs it and redraws the editor,
``--from-lab`` puts the drawing's text in the cell, ``%sfc chains --cell`` in a new one.  Typing in the ``%%chain`` cell, without running it, marks errors in the cell
and, once valid, the live view and the editor follow (JupyterLab and Notebook 7).
``SFCLAB_DOCS_SCREENSHOTS=1`` also writes the README's
``docs/editor.png`` (the bound editor and the live view it drives).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from test_editor_browser import (CY, assert_no_js_errors, console_errors, handle_drag,
                                 node_point, run_cell_text, wait_canvas)
from test_views_browser import (KERNEL, UI, live_view, open_notebook, output, run_all,
                                wait_graphs)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHAIN = "%%chain\nchain web match tcp.dport == 80: firewall -> nat -> l3fwd"
CELLS = ["%load_ext sfclab", CHAIN, "%sfc edit web", "%sfc push", "%sfc send web 3"]


def test_a_chain_drawn_in_the_bound_editor_goes_into_the_lab(lab, page, artifacts: Path):
    errors = console_errors(page)
    open_notebook(page, lab.notebook("bound.ipynb", CELLS))
    run_all(page, len(CELLS))
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    wait_graphs(page, view, [["input", "firewall", "nat", "l3fwd", "output"]])
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 5", timeout=UI)
    status = page.locator(".sfc-lab")
    assert status.inner_text() == "in the Lab: web"
    push = page.locator(".sfc-lab-group button")
    assert push.inner_text().strip().endswith("Push")

    # draw: monitor between nat and l3fwd (the old edge deleted with the keyboard)
    editor = page.locator(".sfc-editor")
    editor.scroll_into_view_if_needed()
    page.locator(".sfc-item[data-nf='monitor']").click()
    page.wait_for_function(f"() => {CY}.getElementById('monitor').nonempty()", timeout=UI)
    mid = page.evaluate(f"""() => {{ const cy = {CY}; const r = cy.container().getBoundingClientRect();
        const m = cy.getElementById('nat->l3fwd').renderedMidpoint(); return [r.left + m.x, r.top + m.y]; }}""")
    page.mouse.click(*mid)
    page.wait_for_function(f"() => {CY}.getElementById('nat->l3fwd').selected()", timeout=UI)
    page.keyboard.press("Delete")
    page.wait_for_function(f"() => {CY}.getElementById('nat->l3fwd').empty()", timeout=UI)
    handle_drag(page, "nat", "monitor")
    page.wait_for_function(f"() => {CY}.getElementById('nat->monitor').nonempty()", timeout=UI)
    handle_drag(page, "monitor", "l3fwd")
    # the live view of the %%chain cell follows, without running anything
    wait_graphs(page, view, [["input", "firewall", "nat", "monitor", "l3fwd", "output"]])
    # the toolbar says the drawing is newer than the %%chain cell that wrote web
    page.wait_for_function("s => s.textContent === 'in the Lab: web · web: newer than its "
                           "%%chain cell (run it with --from-lab)' && "
                           "s.title.includes('run it with --from-lab to copy the drawing')",
                           arg=status.element_handle())
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-newer-than-cell.png"))
    _status_reads_whole(page, status, artifacts)
    assert page.locator(".sfc-status").inner_text() == "valid chain ✓"

    # Push: the switch runs the drawn chain (the cell's push ran the old one: an update)
    assert push.inner_text().strip().endswith("Update")
    push.click()
    page.wait_for_function("s => s.textContent.startsWith('updated: reloaded the program')", arg=status.element_handle(),
                           timeout=KERNEL)
    # %sfc send: the packets go through monitor
    run_cell_text(page, 4, "%sfc send web 3")
    table = output(page, 4).locator(".sfc-packets table")
    table.wait_for(timeout=UI)
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert len(rows) == 3 and all("monitor" in r[-1] for r in rows), rows
    page.set_viewport_size({"width": 1400, "height": 1500})   # the view and the editor in one
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    assert not page.locator(".sfc-menu").is_visible()     # its edge was deleted
    page.get_by_role("button", name="Tidy").click()
    page.wait_for_function(f"() => Math.abs({CY}.getElementById('monitor').position('y') - "
                           f"{CY}.getElementById('nat').position('y')) < 1", timeout=UI)
    page.wait_for_timeout(300)
    shot = artifacts / "editor-bound.png"
    page.screenshot(path=str(shot), clip=_around(page, [page.locator(".jp-Cell").nth(1), editor]))
    if os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        shutil.copy(shot, ROOT / "docs" / "editor.png")

    # the %%chain cell, stale since the drawing, run with other text: refused, saying what
    # differs; the drawing stays in the Lab
    drawn = ["input", "firewall", "nat", "monitor", "l3fwd", "output", "input->firewall",
             "firewall->nat", "nat->monitor", "monitor->l3fwd", "l3fwd->output"]
    typed = "chain web match tcp.dport == 80: ids -> nat -> l3fwd"
    run_cell_text(page, 1, f"%%chain\n{typed}")
    refused = output(page, 1).filter(has_text="StaleCellError")
    refused.wait_for(timeout=UI)
    text = refused.inner_text()
    assert "StaleCellError: <cell>:2:7: running this cell would discard changes made since " \
           "it ran: 'web' was changed by the chain editor" in text, text
    assert "+    nat => monitor;" in text and "%%chain --from-lab" in text
    wait_canvas(page, drawn)
    refused.screenshot(path=str(artifacts / "editor-stale-cell.png"))
    # --force: the cell's text wins and the drawing follows
    run_cell_text(page, 1, f"%%chain --force\n{typed}")
    wait_canvas(page, ["input", "ids", "nat", "l3fwd", "output", "input->ids", "ids->nat",
                       "nat->l3fwd", "l3fwd->output"])
    wait_graphs(page, live_view(page, 1), [["input", "ids", "nat", "l3fwd", "output"]])
    # and undo in the editor puts the drawn chain back into the Lab
    page.get_by_role("button", name="Undo").click()
    page.wait_for_function(f"() => {CY}.getElementById('monitor').nonempty()", timeout=UI)
    wait_graphs(page, live_view(page, 1), [["input", "firewall", "nat", "monitor", "l3fwd", "output"]])
    # --from-lab: JupyterLab puts the Lab's text (the drawing) in the cell; run again as is
    run_cell_text(page, 1, f"%%chain --from-lab\n{typed}")
    source = page.locator(".jp-Cell").nth(1).locator(".cm-content")
    page.wait_for_function("c => c.innerText.includes('nat => monitor;')",
                           arg=source.element_handle(), timeout=UI)
    lines = source.inner_text().splitlines()
    assert lines[:2] == ["%%chain", "chain web match tcp.dport == 80 {"], lines
    assert "--from-lab" not in source.inner_text()
    run_cell_text(page, 1, source.inner_text())
    wait_graphs(page, live_view(page, 1), [["input", "firewall", "nat", "monitor", "l3fwd", "output"]])
    assert output(page, 1).filter(has_text="StaleCellError").count() == 0
    wait_canvas(page, drawn)
    page.wait_for_function("s => s.textContent === 'in the Lab: web'",    # the cell caught up
                           arg=status.element_handle())
    page.locator(".jp-Cell").nth(1).screenshot(path=str(artifacts / "editor-from-lab.png"))
    # %sfc chains --cell: a new cell below with the Lab's chains
    cells = page.locator(".jp-Notebook .jp-Cell")
    count = cells.count()
    run_cell_text(page, 4, "%sfc chains --cell")
    page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-Cell').length "
                           "=== n", arg=count + 1, timeout=UI)
    new = cells.nth(5).locator(".cm-content").inner_text()
    assert new.startswith("%%chain\nchain web match") and "nat => monitor;" in new, new
    assert not [e for e in errors if "Error setting state" in e], errors
    assert_no_js_errors(page)


STATUS_FIT_JS = """s => {
    const r = s.getBoundingClientRect(), e = s.closest('.sfc-editor').getBoundingClientRect();
    const v = s.closest('.sfc-toolbar').querySelector('.sfc-status').getBoundingClientRect();
    const apart = r.right <= v.left || v.right <= r.left || r.bottom <= v.top || v.bottom <= r.top;
    return {cut: s.scrollWidth > s.clientWidth + 1 || s.scrollHeight > s.clientHeight + 1,
            inside: r.left >= e.left - 1 && r.right <= e.right + 1, apart,
            lines: Math.round(r.height / parseFloat(getComputedStyle(s).lineHeight))}; }"""


def _status_reads_whole(page, status, artifacts: Path) -> None:
    """Issue 33.2: in a narrow notebook the Lab's status wraps between words and reads
    whole, its advice (--from-lab) too; it was cut mid-word ("… its %%chain ce")."""
    page.set_viewport_size({"width": 760, "height": 1000})
    try:
        page.locator(".sfc-editor").scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        fit = page.evaluate(STATUS_FIT_JS, status.element_handle())
        page.locator(".sfc-toolbar").screenshot(path=str(artifacts / "editor-status-narrow.png"))
        assert fit["lines"] >= 2 and {**fit, "lines": 2} == {
            "cut": False, "inside": True, "apart": True, "lines": 2}, fit
        assert status.inner_text().replace("\n", " ").endswith("(run it with --from-lab)")
        _drawing_whole_when_narrow(page, artifacts)
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


NARROW_JS = f"""() => {{ const cy = {CY}, body = cy.container().closest('.sfc-body');
    const e = cy.extent(), nodes = cy.nodes().filter(n => !n.hasClass('sfc-tmp'));
    return {{canvas: cy.width(), body: body.clientWidth, height: cy.height(),
             outside: nodes.filter(n => {{ const b = n.boundingBox({{includeLabels: false}});
                 return b.x1 < e.x1 || b.x2 > e.x2 || b.y1 < e.y1 || b.y2 > e.y2; }}).map(n => n.id())}}; }}"""


def _drawing_whole_when_narrow(page, artifacts: Path) -> None:
    """A newcomer's narrow window: the palette goes above the canvas, which keeps the
    editor's whole width (it was squeezed to a sliver beside the palette) and shows the
    drawing whole after the resize (it showed the first two NFs)."""
    page.wait_for_function(f"() => {{ const r = ({NARROW_JS})(); return !r.outside.length; }}",
                           timeout=UI)
    got = page.evaluate(NARROW_JS)
    cut = page.evaluate("() => [...document.querySelectorAll('.sfc-palette .sfc-item')].filter(i => "
                        "i.scrollWidth > i.clientWidth + 1 || i.getBoundingClientRect().right > "
                        "i.closest('.sfc-palette').getBoundingClientRect().right + 1).map(i => i.dataset.nf)")
    assert cut == [], f"palette entries cut at the editor's right: {cut}"
    page.locator(".sfc-editor").screenshot(path=str(artifacts / "editor-narrow.png"))
    assert got["canvas"] >= 0.95 * got["body"] and got["height"] >= 250 and not got["outside"], got


def _around(page, locators) -> dict:
    """The page area holding every locator (for one screenshot of several outputs)."""
    boxes = [loc.bounding_box() for loc in locators]
    x1 = min(b["x"] for b in boxes) - 4
    y1 = min(b["y"] for b in boxes) - 4
    x2 = max(b["x"] + b["width"] for b in boxes) + 4
    y2 = max(b["y"] + b["height"] for b in boxes) + 4
    return {"x": max(0, x1), "y": max(0, y1), "width": x2 - max(0, x1), "height": y2 - max(0, y1)}


def test_a_chain_cell_is_checked_as_the_student_types(lab, page, artifacts: Path):
    """Issue 22.3: no run needed: errors are marked in the cell while typing, and once
    the text is valid the live view and the bound editor follow."""
    cells = ["%load_ext sfclab", CHAIN, "%sfc edit web"]
    open_notebook(page, lab.notebook("typing.ipynb", cells))
    run_all(page, len(cells))
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 5", timeout=UI)
    source = page.locator(".jp-Cell").nth(1)
    prompt = source.locator(".jp-InputArea-prompt").inner_text()

    # a typo: marked in the cell where it is, with the message and hint below the line
    source.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.type("chain web match tcp.dport == 80: firewall -> nta -> l3fwd", delay=20)
    mark = source.locator(".sfc-live-error")
    mark.wait_for(timeout=UI)
    assert mark.inner_text() == "nta"
    message = source.locator(".sfc-live-message").inner_text()
    assert "nta" in message and "hint: " in message and "nat" in message, message
    wait_graphs(page, view, [["input", "firewall", "nat", "l3fwd", "output"]])  # unchanged
    source.screenshot(path=str(artifacts / "live-typing-error.png"))

    # fixed: the marks go, the live view and the editor follow, and nothing ran
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.type("chain web match tcp.dport == 80: ids -> nat -> l3fwd", delay=20)
    wait_graphs(page, view, [["input", "ids", "nat", "l3fwd", "output"]])
    wait_canvas(page, ["input", "ids", "nat", "l3fwd", "output", "input->ids", "ids->nat",
                       "nat->l3fwd", "l3fwd->output"])
    # (the views come with the kernel's widget messages, the marks go with its reply)
    source.locator(".sfc-live-error, .sfc-live-message").first.wait_for(state="detached")
    assert page.evaluate("c => c.querySelector('.cm-editor').dataset.sfcLive",
                         source.element_handle()) == "ok"
    assert source.locator(".jp-InputArea-prompt").inner_text() == prompt
    # the names typed on the way (ids, i, …) left nothing behind: one chain
    page.wait_for_function("() => document.querySelector('.sfc-lab').textContent === 'in the Lab: web'")
    assert_no_js_errors(page)


def test_typing_checks_the_cell_in_notebook7_too(notebook7, page):
    """The same extension in Notebook 7: a typo is marked, a fix redraws the bound editor."""
    from test_editor_browser import run_all as run_every_cell

    page.goto(notebook7.notebook("typing-nb7.ipynb", ["%load_ext sfclab", CHAIN, "%sfc edit web"]))
    run_every_cell(page)
    page.wait_for_function(f"() => document.querySelector('.sfc-canvas') && {CY} && "
                           f"{CY}.nodes().length === 5", timeout=UI)
    source = page.locator(".jp-Cell").nth(1)
    source.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.type("chain web match tcp.dport == 80: firewall -> nta -> l3fwd", delay=20)
    source.locator(".sfc-live-error").wait_for(timeout=UI)
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.type("chain web match tcp.dport == 80: ids -> nat -> l3fwd", delay=20)
    wait_canvas(page, ["input", "ids", "nat", "l3fwd", "output", "input->ids", "ids->nat",
                       "nat->l3fwd", "l3fwd->output"])
    source.locator(".sfc-live-error, .sfc-live-message").first.wait_for(state="detached")
    assert_no_js_errors(page)
