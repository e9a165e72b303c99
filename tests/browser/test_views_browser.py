"""The live view and the runtime views in a real JupyterLab, as a user sees them.

1. ``%%chain`` with the README's design shows the live view: eight tabs, the chains as
   cytoscape graphs, the P4 program and the pipeline table; editing and re-running the
   cell updates the same view.
2. ``%sfc push``, ``%sfc send web 5``: the trace view lists the packets; selecting one
   shows its trace and highlights its path on the graph; ``%sfc tables`` shows the hits.

Each test opens a notebook of its own (so a kernel of its own) on the module's
JupyterLab.  Screenshots go to ``test-artifacts/``; ``SFCLAB_DOCS_SCREENSHOTS=1`` also
copies the best two to ``docs/live-view.png`` and ``docs/traces.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TABS = ["chains", "ir", "pipeline", "fsm", "placement", "offload", "p4", "entries"]
DESIGN = """\
%%chain
chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);     # if-else: then : else ? condition
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }"""
EDITED = "%%chain\nchain web: ids -> firewall -> l3fwd"
WEB_PATH = ["input", "firewall", "nat", "lb", "l3fwd", "output"]
KERNEL = 60_000   # ms: kernel start, first import of sfclab, compiling
UI = 20_000       # ms: a widget (re)rendering after a kernel reply

# The cytoscape instances (ipycytoscape keeps its container's instance in _cyreg) of the
# graphs shown in the element `out` (shown: not in a hidden tab).
GRAPHS_JS = """(out) => [...out.querySelectorAll('.custom-widget')]
    .filter(el => el._cyreg && el._cyreg.cy && el.checkVisibility())
    .map(el => el._cyreg.cy)"""


def graphs_js(body: str) -> str:
    """A function of an output element whose *body* sees ``cys``, the visible graphs."""
    return f"(out) => {{ const cys = ({GRAPHS_JS})(out); {body} }}"


# -- notebook helpers -------------------------------------------------------------------------

def open_notebook(page, url: str) -> None:
    page.set_default_timeout(UI)
    page.goto(url)
    page.locator(".jp-Notebook").first.wait_for(timeout=KERNEL)
    wait_idle(page)


def wait_idle(page) -> None:
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=KERNEL)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=KERNEL)


def cell(page, k: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(k)


def prompt(page, k: int) -> str:
    return cell(page, k).locator(".jp-InputArea-prompt").inner_text().strip()


def wait_prompt(page, k: int, count: int) -> None:
    """Until cell *k* shows execution count *count*, then the kernel is idle."""
    cell(page, k).locator(".jp-InputArea-prompt", has_text=f"[{count}]").wait_for(
        timeout=KERNEL)
    wait_idle(page)


def run_all(page, ncells: int) -> None:
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    wait_prompt(page, ncells - 1, ncells)
    assert [prompt(page, k) for k in range(ncells)] == [f"[{k + 1}]:" for k in range(ncells)]


def output(page, k: int):
    return cell(page, k).locator(".jp-OutputArea-output")


def no_widget_errors(page) -> None:
    assert page.get_by_text("Error displaying widget").count() == 0
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                        ).count() == 0, page.locator(".jp-OutputArea").all_inner_texts()
    assert page.js_errors == []


def saved_outputs(page, lab, name: str, k: int) -> list[dict]:
    """Cell *k*'s outputs as JupyterLab saves them (Ctrl+S)."""
    path = lab.root / name
    before = path.stat().st_mtime_ns
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    for _ in range(100):
        if path.stat().st_mtime_ns != before:
            try:
                return json.loads(path.read_text())["cells"][k]["outputs"]
            except (json.JSONDecodeError, KeyError):
                pass                                        # written half-way: read again
        page.wait_for_timeout(100)
    raise AssertionError(f"{name} was not saved")


def widget_models(outputs: list[dict]) -> list[str]:
    return [o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]


# -- live view helpers --------------------------------------------------------------------------

def live_view(page, k: int):
    """The live view in cell *k*'s output (the outer Tab: the p4 tab nests another)."""
    return output(page, k).locator(":scope > .widget-tab")


def tab_bar(view):
    return view.locator(":scope > .widget-tab-bar")


def click_tab(view, name: str) -> None:
    tab = tab_bar(view).get_by_role("tab", name=name, exact=True)
    tab.click()
    tab.page.wait_for_function("t => t.getAttribute('aria-selected') === 'true'",
                               arg=tab.element_handle())


def current_panel(view):
    """The content of the selected tab."""
    return view.locator(":scope > .widget-tab-contents > :not(.lm-mod-hidden)")


def wait_graphs(page, el, labels: list[list[str]] | None = None) -> None:
    """Until the graphs visible in *el* show exactly these node labels (each list sorted;
    None: any), laid out to fit their containers, centred.  A graph laid out while its
    tab was hidden sits in a corner until the view lays it out again when it is shown."""
    if labels is not None:
        want = [sorted(x) for x in labels]
        try:
            page.wait_for_function(
                "([out, want]) => { const cys = (" + GRAPHS_JS + ")(out); return "
                "JSON.stringify(cys.map(cy => cy.nodes().map(n => n.data('label')).sort()))"
                " === JSON.stringify(want); }", arg=[el.element_handle(), want], timeout=UI)
        except Exception as e:  # noqa: BLE001 - say what the graphs showed instead
            shown = el.evaluate(graphs_js(
                "return cys.map(cy => cy.nodes().map(n => n.data('label')));"))
            raise AssertionError(f"the graphs show {shown}, not {labels}") from e
    try:
        page.wait_for_function(graphs_js(LAID_OUT), arg=el.element_handle(), timeout=UI)
    except Exception as e:  # noqa: BLE001
        shown = el.evaluate(graphs_js("""return cys.map(cy => ({size: [cy.width(), cy.height()],
            bb: cy.elements().renderedBoundingBox(), nodes: cy.nodes().length}));"""))
        raise AssertionError(f"graphs not laid out in their containers: {shown}") from e


def node_point(el, k: int, node: str) -> tuple[float, float]:
    """Page coordinates of *node* in the *k*-th graph visible in *el*."""
    return el.evaluate(graphs_js(f"""const cy = cys[{k}], r = cy.container().getBoundingClientRect();
        const p = cy.getElementById({json.dumps(node)}).renderedPosition();
        return [r.left + p.x, r.top + p.y];"""))


LAID_OUT = """return cys.length > 0 && cys.every(cy => {
  const w = cy.width(), h = cy.height(), bb = cy.elements().renderedBoundingBox();
  const xs = new Set(cy.nodes().map(n => Math.round(n.renderedPosition('x'))));
  return cy.nodes().length > 0 && w > 200 && h > 100 && xs.size > 1
    && bb.x1 >= -2 && bb.y1 >= -2 && bb.x2 <= w + 2 && bb.y2 <= h + 2
    && Math.abs((bb.x1 + bb.x2) / 2 - w / 2) < 0.05 * w
    && Math.abs((bb.y1 + bb.y2) / 2 - h / 2) < 0.05 * h; });"""


# -- the tests ----------------------------------------------------------------------------------

def test_live_view_tabs_graphs_code_and_update(lab, page, artifacts: Path) -> None:
    name = "live-view.ipynb"
    open_notebook(page, lab.notebook(name, ["%load_ext sfclab", DESIGN]))
    run_all(page, 2)
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    assert output(page, 1).count() == 1 and view.count() == 1

    # the tab bar: one tab per compiler stage, chains first and selected
    assert tab_bar(view).get_by_role("tab").all_inner_texts() == TABS
    assert tab_bar(view).get_by_role("tab", selected=True).inner_text() == "chains"

    # chains: a header and a graph per chain, with the chains' NFs and end points
    wait_graphs(page, view, [["input", "firewall", "nat", "drop", "lb", "l3fwd", "output"],
                             ["input", "l2fwd", "output"]])
    panel = current_panel(view)
    text = panel.inner_text()
    assert "web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 · share 0.6 · 2 service path(s)" \
        in text
    assert "mgmt match vlan.vid == 100 · share 0.4 · 1 service path(s)" in text
    edges = view.evaluate(graphs_js(
        "return cys[0].edges().map(e => [e.id(), e.data('kind'), e.data('label')]);"))
    assert ["firewall->nat", "then", "verdict == 0"] in edges
    assert ["firewall->drop", "else", "else"] in edges
    no_widget_errors(page)
    view.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # the last layout's animation, if any
    view.screenshot(path=str(artifacts / "views-1-live-view.png"))

    # a click on an NF shows its details below the graphs
    page.mouse.click(*node_point(view, 0, "firewall"))
    details = panel.locator(".widget-html", has_text="layer").last
    details.wait_for()
    assert details.inner_text().startswith("firewall: firewall, layer"), details.inner_text()
    models = widget_models(saved_outputs(page, lab, name, 1))
    assert len(models) == 1

    # p4: the v1model program, highlighted, with copy and download
    click_tab(view, "p4")
    p4 = current_panel(view)
    inner = p4.locator(".widget-tab").first
    assert tab_bar(inner).get_by_role("tab").all_inner_texts()[:2] == ["v1model", "tna"]
    assert tab_bar(inner).get_by_role("tab", selected=True).inner_text() == "v1model"
    code = p4.locator(".sfc-code:visible")
    code.wait_for()
    program = code.inner_text()
    assert "V1Switch(" in program and "#include <v1model.p4>" in program
    assert code.locator(".p4-keyword", has_text="control").count() > 0
    title = re.fullmatch(r"v1model: (\d+) lines, \d+ table entries",
                         p4.locator(".sfc-code-bar:visible span").inner_text())
    assert title, p4.locator(".sfc-code-bar:visible span").inner_text()
    with page.expect_download() as download:
        p4.locator(".sfc-code-bar:visible").get_by_role("button", name="Download").click()
    assert download.value.suggested_filename == "sfclab_v1model.p4"
    saved = Path(download.value.path()).read_text()
    assert "V1Switch(" in saved and saved.count("\n") + 1 == int(title[1])
    view.screenshot(path=str(artifacts / "views-2-p4.png"))

    # pipeline: naive, MA-FSA and optimal side by side
    click_tab(view, "pipeline")
    pipe = current_panel(view)
    table = pipe.locator("table").first
    table.wait_for()
    wait_graphs(page, pipe)                                # the MA-FSA
    assert pipe.locator(".custom-widget").count() == 1
    head = [h.strip(" ★") for h in table.locator("th").all_inner_texts()]
    assert head == ["", "naive", "MA-FSA", "optimal"]
    assert table.locator("th", has_text="★").count() == 1
    rows = [r.split("\t")[0] for r in table.locator("tr").all_inner_texts()[1:]]
    assert rows[:4] == ["order", "slots", "duplicated slots", "weighted recirculations"]
    assert "default function pipeline" in pipe.inner_text()
    view.screenshot(path=str(artifacts / "views-3-pipeline.png"))
    no_widget_errors(page)

    # edit the cell (another web chain) and run it again: the same view, new content
    editor = cell(page, 1).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(EDITED)
    assert editor.inner_text() == EDITED
    page.keyboard.press("Control+Enter")
    wait_prompt(page, 1, 3)
    view.wait_for(timeout=UI)
    assert output(page, 1).count() == 1 and view.count() == 1
    assert widget_models(saved_outputs(page, lab, name, 1)) == models
    assert tab_bar(view).get_by_role("tab").all_inner_texts() == TABS
    click_tab(view, "chains")
    wait_graphs(page, view, [["input", "ids", "firewall", "l3fwd", "output"],
                             ["input", "l2fwd", "output"]])
    text = current_panel(view).inner_text()
    assert re.search(r"web · share 0\.5 · 1 service path\(s\)", text), text
    assert "mgmt match vlan.vid == 100 · share 0.5" in text
    click_tab(view, "p4")
    assert "ids" in current_panel(view).locator(".sfc-code:visible").inner_text()
    click_tab(view, "chains")
    wait_graphs(page, view, [["input", "ids", "firewall", "l3fwd", "output"],
                             ["input", "l2fwd", "output"]])
    no_widget_errors(page)
    page.wait_for_timeout(300)
    view.screenshot(path=str(artifacts / "views-4-updated.png"))
    _to_docs(artifacts / "views-1-live-view.png", "live-view.png")


def test_push_send_traces_and_tables(lab, page, artifacts: Path) -> None:
    cells = ["%load_ext sfclab", DESIGN, "%sfc push", "%sfc send web 5", "%sfc tables"]
    open_notebook(page, lab.notebook("traces.ipynb", cells))
    run_all(page, len(cells))
    assert re.fullmatch(r"pushed the program and \d+ table entries to <ModelTarget "
                        r"model://127\.0\.0\.1:\d+>", output(page, 2).inner_text().strip())

    # the trace view: the five packets, the last one selected
    out = output(page, 3)
    select = out.locator(".widget-select select")
    select.wait_for(timeout=UI)
    options = [o.replace("\xa0", " ").strip()  # Select shows spaces as &nbsp;
               for o in select.locator("option").all_inner_texts()]
    # the class's packets cover both paths: allowed (web/0) and denied (web/1)
    assert options == [f"#{i} web web/0 → port 1" if i % 2 else f"#{i} web web/1 → drop"
                       for i in range(1, 6)]
    details = out.locator(".widget-html pre")
    details.filter(has_text="packet 5 [web]").wait_for()
    assert select.evaluate("s => s.selectedIndex") == 4

    # select another packet: its details, its path on the graph
    select.select_option(index=2)
    details.filter(has_text="packet 3 [web]").wait_for()
    assert select.evaluate("s => s.selectedIndex") == 2
    text = details.inner_text()
    assert text.startswith("packet 3 [web]: in on port 1, 1 pass(es), "
                           "NFs firewall -> nat -> lb -> l3fwd, port 1  [web/0]"), text
    for line in ("pass 0: NF firewall", "pass 0: NF nat", "pass 0: NF lb", "pass 0: NF l3fwd",
                 "table SfcIngress.rewinder: hit", "pass 0: out on port 1"):
        assert line in text, line
    graph = out.locator(".custom-widget")
    page.wait_for_function(graphs_js("""return cys.length === 1 &&
        cys[0].nodes().length === 7 && cys[0].getElementById('drop').hasClass('sfc-idle');"""),
        arg=out.element_handle(), timeout=UI)
    nodes = out.evaluate(graphs_js("""return Object.fromEntries(cys[0].nodes().map(n => [n.id(),
        [n.classes().filter(c => c.startsWith('sfc-')), n.style('border-color'),
         n.style('opacity')]]));"""))
    visited = sorted(n for n, (cls, _, _) in nodes.items() if cls == ["sfc-visited"])
    assert visited == sorted(WEB_PATH), nodes
    assert nodes["drop"][0] == ["sfc-idle"]
    assert nodes["firewall"][1] == "rgb(25,118,210)" and nodes["drop"][2] == "0.35", nodes
    edges = out.evaluate(graphs_js(
        "return cys[0].edges().filter(e => e.hasClass('sfc-visited')).map(e => e.id());"))
    assert sorted(edges) == sorted(f"{a}->{b}" for a, b in zip(WEB_PATH, WEB_PATH[1:]))
    wait_graphs(page, out, [["input", "firewall", "nat", "drop", "lb", "l3fwd", "output"]])
    assert graph.count() == 1
    no_widget_errors(page)
    out.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    out.screenshot(path=str(artifacts / "views-5-traces.png"))

    # %sfc tables: occupancy and hits
    table = output(page, 4).locator("table")
    table.wait_for()
    assert table.locator("th").all_inner_texts() == ["table", "occupancy", "entries / size",
                                                     "hits"]
    rows = {r[0]: r[1:] for r in (x.split("\t") for x in table.locator("tbody tr")
                                                         .all_inner_texts())}
    assert rows["SfcIngress.rewinder"][-1].strip() == "5", rows
    assert rows["SfcIngress.initializer"][-1].strip() == "5", rows
    # the two denied packets (web/1) hit the ACL's deny entry
    assert rows["SfcIngress.slot0_firewall.acl"][-1].strip() == "2", rows
    output(page, 4).screenshot(path=str(artifacts / "views-6-tables.png"))
    no_widget_errors(page)
    _to_docs(artifacts / "views-5-traces.png", "traces.png")


def _to_docs(png: Path, name: str) -> None:
    """Copy a screenshot into docs/ when asked to (pictures for the README)."""
    if os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        shutil.copyfile(png, ROOT / "docs" / name)
