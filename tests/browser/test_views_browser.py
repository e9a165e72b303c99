"""The live view and the runtime views in a real JupyterLab, as a user sees them.

1. ``%%chain`` with the README's design shows the live view: nine tabs, the chains drawn
   as SVG, the P4 program, the pipeline, the offload split and the entries with addresses
   as people write them; editing and re-running the cell updates the same view.
2. ``%sfc push`` prints a summary (no links), ``%sfc send web 5`` a packet table whose
   rows open a per-pass timeline and highlight the path on the chain's graph, ``%sfc
   tables`` occupancy on a log scale with hits and misses, ``%sfc help`` code, not links;
   an error in a ``%%chain`` cell names the line as the editor numbers it.
3. Editing a 20-chain cell so a new NF enters the set shows it in the same live view
   (how fast: ``benchmarks/bench_live_browser.py``; docs/benchmarks.md: "Live view speed").

Each test opens a notebook of its own (so a kernel of its own) in the module's folder
of the session's JupyterLab.  Screenshots go to ``test-artifacts/``; ``SFCLAB_DOCS_SCREENSHOTS=1`` also
copies the best two to ``docs/live-view.png`` and ``docs/traces.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_live import NEW_NFS, chain_set  # noqa: E402  (the benchmark's chain set)

TABS = ["chains", "ir", "pipeline", "fsm", "placement", "offload", "topology", "p4", "entries"]
DESIGN = """\
%%chain
chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);     # if-else: then : else ? condition
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }"""
EDITED = "%%chain\nchain web match tcp.dport == 80: ids -> firewall -> l3fwd"
WEB_PATH = ["input", "firewall", "nat", "lb", "l3fwd", "output"]
KERNEL = 60_000   # ms: kernel start, first import of sfclab, compiling
UI = 20_000       # ms: a widget (re)rendering after a kernel reply

# The graphs shown in the element `out` (not in a hidden tab): for each, its node ids.
GRAPHS_JS = """(out) => [...out.querySelectorAll('.sfc-graph')]
    .filter(g => g.checkVisibility() && g.querySelector('svg'))"""


def graphs_js(body: str) -> str:
    """A function of an output element whose *body* sees ``gs``, the visible graphs."""
    return f"(out) => {{ const gs = ({GRAPHS_JS})(out); {body} }}"


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


def no_widget_errors(page, errors: int = 0) -> None:
    """No widget failed to show, no JavaScript error, and *errors* outputs on stderr (the
    cells that fail on purpose)."""
    assert page.get_by_text("Error displaying widget").count() == 0
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                        ).count() == errors, page.locator(".jp-OutputArea").all_inner_texts()
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


def wait_graphs(page, el, nodes: list[list[str]]) -> None:
    """Until the graphs visible in *el* show exactly these nodes (each list sorted)."""
    want = [sorted(x) for x in nodes]
    try:
        page.wait_for_function(
            "([out, want]) => { const gs = (" + GRAPHS_JS + ")(out); return JSON.stringify("
            "gs.map(g => [...g.querySelectorAll('[data-node]')].map(n => n.dataset.node).sort()))"
            " === JSON.stringify(want); }", arg=[el.element_handle(), want], timeout=UI)
    except Exception as e:  # noqa: BLE001 - say what the graphs showed instead
        raise AssertionError(f"the graphs show {graph_nodes(el)}, not {nodes}") from e


def graph_nodes(el) -> list[list[str]]:
    return el.evaluate(graphs_js(
        "return gs.map(g => [...g.querySelectorAll('[data-node]')].map(n => n.dataset.node));"))


def node_point(el, k: int, node: str) -> tuple[float, float]:
    """Page coordinates of *node* in the *k*-th graph visible in *el*."""
    return el.evaluate(graphs_js(f"""const r = gs[{k}].querySelector(
        '[data-node={json.dumps(node)}]').getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2];"""))


def graph_scale(el, k: int = 0) -> tuple[float, float]:
    """How the *k*-th visible graph is drawn: (scale of its SVG, its width in pixels)."""
    return tuple(el.evaluate(graphs_js(f"""const s = gs[{k}].querySelector('svg');
        const w = s.getBoundingClientRect().width;
        return [w / s.viewBox.baseVal.width, w];""")))


def edge_labels(el, k: int = 0) -> list[str]:
    return el.evaluate(graphs_js(
        f"return [...gs[{k}].querySelectorAll('svg > text')].map(t => t.textContent);"))


# -- the tests ----------------------------------------------------------------------------------

def test_live_view_tabs_graphs_code_and_update(lab, page, artifacts: Path) -> None:
    name = "live-view.ipynb"
    open_notebook(page, lab.notebook(name, ["%load_ext sfclab", DESIGN]))
    run_all(page, 2)
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    assert output(page, 1).count() == 1 and view.count() == 1

    # the tab bar: one tab per compiler stage, chains first and selected
    see_tabs(view, TABS)
    assert tab_bar(view).get_by_role("tab", selected=True).inner_text() == "chains"

    # chains: a header and a graph per chain, with the chains' NFs and end points, readable
    wait_graphs(page, view, [["input", "firewall", "nat", "drop", "lb", "l3fwd", "output"],
                             ["input", "l2fwd", "output"]])
    panel = current_panel(view)
    text = panel.inner_text()
    assert "web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 · share 0.6 · 2 service path(s)" \
        in text
    assert "mgmt match vlan.vid == 100 · share 0.4 · 1 service path(s)" in text
    assert {"verdict == 0", "else"} <= set(edge_labels(view))
    scale, _ = graph_scale(view)
    assert scale > 0.99                                    # drawn at its size: 12 px labels
    no_widget_errors(page)
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(artifacts / "views-1-live-view.png"))

    # a click on an NF shows its details below the graphs
    page.mouse.click(*node_point(view, 0, "firewall"))
    details = panel.locator(".widget-html", has_text="layer").last
    details.wait_for()
    assert details.inner_text().startswith("firewall: firewall, layer"), details.inner_text()
    models = widget_models(saved_outputs(page, lab, name, 1))
    assert len(models) == 1

    # p4: the v1model program (generated now), highlighted, with copy and download
    click_tab(view, "p4")
    p4 = current_panel(view)
    inner = p4.locator(".widget-tab").first
    inner.wait_for()                                       # a tab's widgets come when shown
    assert tab_bar(inner).get_by_role("tab").all_inner_texts()[:2] == ["v1model", "tna"]
    assert tab_bar(inner).get_by_role("tab", selected=True).inner_text() == "v1model"
    code = p4.locator(".sfc-code:visible")
    code.wait_for()
    page.wait_for_function("c => c.textContent.includes('V1Switch(')", arg=code.element_handle())
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
    tab_bar(inner).get_by_role("tab", name="tna", exact=True).click()   # generated when shown
    page.wait_for_function("p => [...p.querySelectorAll('.sfc-code')].some(c => "
                           "c.checkVisibility() && c.textContent.includes('Pipeline('))",
                           arg=p4.element_handle())
    view.screenshot(path=str(artifacts / "views-2-p4.png"))

    # pipeline: the MA-FSA drawn, naive, MA-FSA and optimal side by side
    click_tab(view, "pipeline")
    pipe = current_panel(view)
    table = pipe.locator("table").first
    table.wait_for()
    page.wait_for_function(graphs_js("return gs.length === 1;"), arg=pipe.element_handle())
    head = [h.strip(" ★") for h in table.locator("th").all_inner_texts()]
    assert head == ["", "naive", "MA-FSA", "optimal"]
    assert table.locator("th", has_text="★").count() == 1
    rows = [r.split("\t")[0] for r in table.locator("tr").all_inner_texts()[1:]]
    assert rows[:4] == ["order", "slots", "duplicated slots", "weighted recirculations"]
    assert "default function pipeline" in pipe.inner_text()
    view.screenshot(path=str(artifacts / "views-3-pipeline.png"))

    # offload: one split per path, each NF once; partially offloaded ones marked
    click_tab(view, "offload")
    off = current_panel(view).locator("table").first
    off.wait_for()
    assert off.locator("th").all_inner_texts() == ["service path", "pre-server (switch)",
                                                   "server", "post-server (switch)"]
    web0 = off.locator("tr", has_text="web/0").locator("td")
    assert web0.nth(1).locator("span").all_inner_texts() == ["firewall", "nat ◐", "lb ◐",
                                                            "l3fwd"]
    assert web0.nth(2).inner_text() == web0.nth(3).inner_text() == "–"
    view.screenshot(path=str(artifacts / "views-4-offload.png"))

    # entries: addresses, prefixes, MACs and ports as people write them
    click_tab(view, "entries")
    entries = current_panel(view)
    entries.locator("details").first.wait_for()
    shown = entries.inner_text()
    assert "hdr.ipv4.dst_addr = 10.0.1.0/24" in shown and "hdr.tcp.dst_port = 80" in shown
    assert "dmac=00:00:00:00:01:01" in shown and "&&&" not in shown and "167772" not in shown
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
    see_tabs(view, TABS)
    assert "ids" in current_panel(view).inner_text()       # the entries tab, still on show
    click_tab(view, "chains")
    wait_graphs(page, view, [["input", "ids", "firewall", "l3fwd", "output"],
                             ["input", "l2fwd", "output"]])
    text = current_panel(view).inner_text()
    assert re.search(r"web match tcp\.dport == 80 · share 0\.5 · 1 service path\(s\)", text), text
    assert "mgmt match vlan.vid == 100 · share 0.5" in text
    click_tab(view, "p4")
    page.wait_for_function("p => [...p.querySelectorAll('.sfc-code')].some(c => "
                           "c.checkVisibility() && c.textContent.includes('slot0_ids'))",
                           arg=current_panel(view).element_handle())
    click_tab(view, "chains")
    no_widget_errors(page)
    view.screenshot(path=str(artifacts / "views-5-updated.png"))
    _to_docs(artifacts / "views-1-live-view.png", "live-view.png")


def test_push_send_traces_tables_help(lab, page, artifacts: Path) -> None:
    error_cell = "%%chain\nchain c {\n    input => firewal => output;\n}"
    cells = ["%load_ext sfclab", DESIGN, "%sfc push", "%sfc send web 5", "%sfc tables",
             "%sfc help", error_cell]
    open_notebook(page, lab.notebook("traces.ipynb", cells))
    run_all(page, len(cells))

    # %sfc push: a summary, no links
    push = output(page, 2)
    text = push.inner_text()
    assert text.startswith("pushed the program and its entries over P4Runtime"), text
    assert re.search(r"target\s+the embedded switch model, P4Runtime at 127\.0\.0\.1:\d+", text)
    assert re.search(r"table entries\s+\d+", text) and "per chain" in text
    assert push.locator("a").count() == 0 and "ModelTarget" not in text

    # %sfc send: the packets as a table, the last one selected, its timeline below
    out = output(page, 3)
    table = out.locator(".sfc-packets table")
    table.wait_for(timeout=UI)
    assert table.locator("th").all_inner_texts() == ["#", "class", "service path", "passes",
                                                     "egress / drop", "NFs"]
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    assert {r[1] for r in rows} == {"web"} and {r[2] for r in rows} <= {"web/0", "web/1"}
    assert table.locator("tbody tr[aria-selected='true']").inner_text().startswith("5")
    assert re.search(r"service paths covered: .*web/0", out.inner_text())
    details = out.locator(".sfc-timeline")
    details.filter(has_text="packet 5").wait_for()

    # select a packet of web/0: its timeline, its path on the graph (large enough to read)
    k = next(i for i, r in enumerate(rows) if r[2] == "web/0")
    table.locator("tbody tr").nth(k).click()
    details.filter(has_text=f"packet {k + 1}").wait_for()
    text = details.inner_text()
    assert f"packet {k + 1} [web] on web/0: in on port 1, 1 pass, " \
           "NFs firewall → nat → lb → l3fwd, out on port 1" in text, text
    for line in ("pass 0", "classifier", "initializer hit", "hdr.ipv4.dst_addr=10.0.1.0/24",
                 "route(dmac=00:00:00:00:01:01, smac=00:00:00:00:00:fe, port=1)",
                 "rewinder", "→ out on port 1"):
        assert line in text, line
    assert "dmac=257" not in text and "0x0a000100" not in text
    page.wait_for_function(graphs_js("""return gs.length === 1 && gs[0].querySelector(
        '[data-node="drop"].sfc-idle') !== null;"""), arg=out.element_handle(), timeout=UI)
    classes = out.evaluate(graphs_js("""return Object.fromEntries([...gs[0].querySelectorAll(
        '[data-node]')].map(n => [n.dataset.node, [n.getAttribute('class') || '',
        getComputedStyle(n.querySelector('rect,ellipse')).stroke,
        getComputedStyle(n).opacity]]));"""))
    visited = sorted(n for n, (cls, _, _) in classes.items() if cls == "sfc-visited")
    assert visited == sorted(WEB_PATH), classes
    assert classes["firewall"][1] == "rgb(25, 118, 210)" and classes["drop"][2] == "0.35"
    edges = out.evaluate(graphs_js("""return [...gs[0].querySelectorAll('path.sfc-visited')]
        .map(e => e.dataset.edge);"""))
    assert sorted(edges) == sorted(f"{a}->{b}" for a, b in zip(WEB_PATH, WEB_PATH[1:]))
    scale, width = graph_scale(out)
    assert scale > 0.99 and width > 500                    # at its size: readable labels
    page.keyboard.press("ArrowDown")                       # the next packet, by keyboard
    details.filter(has_text=f"packet {k + 2}").wait_for()
    assert table.locator("tbody tr[aria-selected='true']").inner_text().startswith(str(k + 2))
    table.locator("tbody tr").nth(k).click()
    details.filter(has_text=f"packet {k + 1}").wait_for()
    no_widget_errors(page, errors=1)
    out.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    out.screenshot(path=str(artifacts / "views-6-traces.png"))

    # %sfc tables: occupancy on a log scale, hits and misses
    tables = output(page, 4).locator("table.sfc-tables")
    tables.wait_for()
    assert tables.locator("th").all_inner_texts()[:3] == ["table", "entries / size",
                                                          "occupancy (log scale)"]
    trs = {r[0]: r[1:] for r in (x.split("\t") for x in
                                 tables.locator("tr").all_inner_texts()[1:])}
    assert "5 hit · 0 miss" in trs["SfcIngress.rewinder"][-1], trs
    acl = trs["SfcIngress.slot0_firewall.acl"]
    hits, misses = map(int, re.search(r"(\d+) hit · (\d+) miss", acl[-1]).groups())
    assert acl[0].strip() == "2 / 1,024" and hits + misses == 5, acl
    cells = tables.locator("tr", has_text="slot0_firewall.acl").locator("td")
    fill = cells.nth(2).locator("div > div").first.bounding_box()["width"]
    assert fill > 10                                       # 2 of 1,024: still a visible bar
    looked = sum(b["width"] for b in (d.bounding_box() for d in
                                      cells.nth(3).locator("div > div").all()))
    assert looked > 130                                    # 5 lookups, hit or missed: a full bar
    output(page, 4).screenshot(path=str(artifacts / "views-7-tables.png"))

    # %sfc help: URLs as code, not links
    help_out = output(page, 5)
    assert help_out.locator("a").count() == 0
    assert help_out.locator("code", has_text="%sfc target [URL]").count() == 1
    assert "bmv2://H:P?device_id=N" in help_out.inner_text()

    # an error in a %%chain cell: the line as the editor numbers it (%%chain is line 1)
    err = output(page, 6).inner_text()
    assert "ChainValidationError: <cell>:3:14: unknown NF 'firewal'" in err, err
    assert "input => firewal => output;" in err
    _to_docs(artifacts / "views-6-traces.png", "traces.png")


def test_live_edit_shows_each_new_nf(lab, page) -> None:
    """A %%chain edit of a 20-chain set that brings in an NF no chain used before shows
    the new NF in the same live view, edit after edit, each run as soon as the last one
    is done (the kernel parses the NFs' P4 between cells meanwhile: ``Lab.parse_nfs``).
    How fast is measured by ``benchmarks/bench_live_browser.py``, not here."""
    open_notebook(page, lab.notebook("live-edit.ipynb",
                                     ["%load_ext sfclab", "%%chain\n" + chain_set(20)]))
    run_all(page, 2)
    view = live_view(page, 1)
    view.wait_for(timeout=KERNEL)
    for k, nf in enumerate(NEW_NFS[:3]):
        assert cell(page, 1).locator(f".sfc-graph svg [data-node='{nf}']").count() == 0
        editor = cell(page, 1).locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text("%%chain\n" + chain_set(20, nf))
        page.keyboard.press("Control+Enter")
        wait_prompt(page, 1, 3 + k)
        cell(page, 1).locator(f".sfc-graph svg [data-node='{nf}']").first.wait_for(timeout=UI)
        assert output(page, 1).count() == 1 and view.count() == 1    # the same view, updated
        assert "c0 match tcp.dport == 1000" in current_panel(view).inner_text()
    assert "Error displaying widget" not in view.inner_text() and page.js_errors == []


def see_tabs(view, tabs: list[str]) -> None:
    """The view's tab titles are *tabs* (the tab bar is drawn before its titles are set:
    wait for them)."""
    from playwright.sync_api import expect

    expect(tab_bar(view).get_by_role("tab")).to_have_text(tabs, timeout=UI)


def _to_docs(png: Path, name: str) -> None:
    """Copy a screenshot into docs/ when asked to (pictures for the README)."""
    if os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        shutil.copyfile(png, ROOT / "docs" / name)
