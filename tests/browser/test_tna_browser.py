"""A lab on the embedded TNA model in a real JupyterLab, as a user sees it.

``Lab(arch="tna", pipeline="naive")`` given to the magics: ``%%chain`` shows the live view,
``%sfc push`` pushes the TNA program to the embedded Tofino model, ``%sfc send`` shows
packets whose timelines say where each step ran ("pipe 0 egress", "recirculated on port
68"), ``%sfc tables`` groups the tables by pipe, and the live view's placement tab shows
the plan beside what the packets did.  Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_views_browser import (UI, click_tab, current_panel, live_view, no_widget_errors,
                                open_notebook, output, run_all)

pytestmark = pytest.mark.browser

SETUP = """import sfclab
lab = sfclab.Lab(arch="tna", pipeline="naive")
get_ipython().magics_manager.registry["SfcMagics"].lab = lab"""
CHAINS = """%%chain
chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain p match udp.dport == 53 { input => l3fwd => firewall => nat => output; }
chain r match udp.dport == 123 { input => l3fwd => nat => firewall => output; }"""


def test_a_tna_lab_pushes_sends_traces_and_shows_tables_by_pipe(lab, page, artifacts: Path
                                                                 ) -> None:
    cells = ["%load_ext sfclab", SETUP, CHAINS, "%sfc push", "%sfc send web 2",
             "%sfc send r 1", "%sfc tables"]
    open_notebook(page, lab.notebook("tna.ipynb", cells))
    run_all(page, len(cells))

    push = output(page, 3).inner_text()
    assert push.startswith("pushed the program and its entries over P4Runtime"), push
    assert "the embedded Tofino model (TNA, 2 pipes)" in push and "tna, " in push

    # a recirculated packet: its timeline says which pipe and gress ran each pass
    out = output(page, 5)
    out.locator(".sfc-packets table").wait_for(timeout=UI)
    details = out.locator(".sfc-timeline")
    details.filter(has_text="packet 3").wait_for()      # the lab's third packet
    text = details.inner_text()
    out.scroll_into_view_if_needed()
    out.screenshot(path=str(artifacts / "tna-1-trace.png"))
    assert "pipe 0 ingress" in text and "pipe 0 egress" in text, text
    assert "recirculated on port 68" in text, text

    # %sfc tables: a table per pipe, each pipe's pipeline named
    tables = output(page, 6)
    tables.locator("table.sfc-tables").first.wait_for()
    shown = tables.inner_text()
    tables.screenshot(path=str(artifacts / "tna-2-tables.png"))
    assert re.search(r"pipe 0 \(pipeline pipe0\)", shown) and "pipe 1 (pipeline pipe1)" in shown
    assert "pipe0.SfcIngress0.initializer" in shown

    # the placement tab: the plan beside what the packets did
    view = live_view(page, 2)
    click_tab(view, "placement")
    panel = current_panel(view)
    panel.get_by_text("ran on the TNA model").first.wait_for(timeout=UI)
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(artifacts / "tna-3-placement.png"))
    no_widget_errors(page)
