"""A MkDocs hook: the manual's lab pages show what their cells draw.

The labs are stored without outputs (nbval runs them; the site shows them as stored), so a
lab page was code without a single figure.  The browser tests run the labs in JupyterLab and
take a picture of each figure (``SFCLAB_DOCS_SCREENSHOTS=1`` copies them to
``docs/labs/figures/``, as the README's pictures go to ``docs/``); this hook puts each picture
after the cell that draws it, found by a piece of the cell's source (``FIGURES``), with a
caption saying what it shows.  A picture whose cell or file is gone is a warning, so
``mkdocs build --strict`` fails until the table or the picture is brought up to date.
"""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["Figure", "FIGURES", "on_page_content", "place"]

log = logging.getLogger("mkdocs.hooks.lab_figures")


class Figure(NamedTuple):
    """A picture (a path under docs/) shown after the first code cell whose source holds
    *cell*."""

    cell: str
    picture: str
    caption: str


FIGURES: dict[str, tuple[Figure, ...]] = {
    "01_first_chain": (
        Figure("%%chain\nchain web", "live-view.png",
               "The live view of the %%chain cell: a tab per compiler stage; the chains tab "
               "shows web's branch (then: nat, else: drop) and mgmt."),
        Figure("%sfc send web 5", "traces.png",
               "%sfc send web 5: the packets of both service paths, the chosen packet's path on "
               "the chain and its per-pass timeline, table by table."),
        Figure("%sfc edit", "editor.png",
               "A chain editor bound to the Lab, here on web with a monitor drawn in (the lab "
               "draws one into mgmt the same way): the live view above follows the drawing."),
    ),
    "02_merging_chains": (
        Figure("%%chain --show chains,ir", "labs/figures/02-ir.png",
               "The ir tab: P4SC's merged IR of the three requests, each NF coloured by how "
               "many chains share it, the duplicated NF's replica marked."),
        Figure("bar_plot(", "labs/figures/02-bars.png",
               "Tables needed by the LCS merge and by the parallelism method, 1 to 128 chains "
               "(log scale)."),
        Figure("line_plot(", "labs/figures/02-share.png",
               "The LCS merge's share of the parallelism method's tables, P4SC's 13.15 % and "
               "the student's mean marked at 128 chains."),
    ),
    "03_pipelines_and_recirculation": (
        Figure('naive.live_view(show="pipeline,fsm")', "labs/figures/03-pipeline.png",
               "The pipeline tab: the naive, MA-FSA and optimal pipelines one above the "
               "other, with the pass of every slot each path runs."),
        Figure("SendView(naive", "labs/figures/03-packets.png",
               "The packets of both classes on the naive pipeline; the reverse class "
               "recirculates once: its timeline has two passes."),
    ),
    "04_placement": (
        Figure("throughput_figure", "labs/figures/04-throughput.png",
               "Dejavu's recirculation throughput model (§4) for one, two and three loopback "
               "ports per external port."),
        Figure("placement_figure", "labs/figures/04-fig6.png",
               "Dejavu's Fig. 6: the naive placement and Dejavu's, the route's recirculations "
               "in red."),
        Figure("live_view", "lab-placement.png",
               "The placement tab of the demo's chains on four pipes: the chosen path's route, "
               "and every service path marked on the throughput curve."),
    ),
    "05_runtime_changes": (
        Figure("%sfc send web 2", "labs/figures/05-send.png",
               "%sfc send web 2: the packets, the chosen one's path and its timeline."),
        Figure("timeline_plot(", "labs/figures/05-updates.png",
               "The packets sent during ten updates, by the NFs they ran: none in the "
               "\"mix, or lost\" row."),
        Figure('LiveView(compiled, show="offload")', "labs/figures/05-offload.png",
               "The offload tab: P4SFC's split of each service path between the switch and "
               "a server (ips runs on the server)."),
    ),
    "06_network_wide_chains": (
        Figure("%sfc send web 3", "network.png",
               "%sfc send web 3 on the same fat tree (from the test suite's notebook, whose dns "
               "chain runs a stateful firewall too): the packets host to host, the hops "
               "numbered on the drawing, a row per hop."),
    ),
}


def on_page_content(html_text: str, page: Any, config: Any, files: Any) -> str:
    src = page.file.src_uri
    stem = Path(src).stem
    if not (src.startswith("labs/") and src.endswith(".ipynb")) or stem not in FIGURES:
        return html_text
    cells = json.loads(Path(page.file.abs_src_path).read_text())["cells"]
    docs = Path(config["docs_dir"])
    up = "../" * page.url.count("/")
    for fig in FIGURES[stem]:
        if not (docs / fig.picture).is_file():
            log.warning("lab page %s: the picture %s is missing (SFCLAB_DOCS_SCREENSHOTS=1 "
                        "pytest tests/browser makes it)", src, fig.picture)
            continue
        placed = place(html_text, cells, fig, up + fig.picture)
        if placed is None:
            log.warning("lab page %s: no cell holds %r any more: update FIGURES in %s",
                        src, fig.cell, Path(__file__).name)
            continue
        html_text = placed
    return html_text


def place(page_html: str, cells: list[dict], fig: Figure, url: str) -> str | None:
    """*page_html* with *fig* (its picture at *url*) after the first cell whose source holds
    ``fig.cell``, before the next cell; None when there is no such cell on the page."""
    cell = next((c for c in cells if c["cell_type"] == "code"
                 and fig.cell in "".join(c.get("source", ""))), None)
    at = page_html.find(f'id="cell-id={cell.get("id")}"') if cell else -1
    if at < 0:
        return None
    nxt = page_html.find('<div class="jp-Cell ', at)
    if nxt < 0:
        nxt = page_html.rfind("</div>", at)     # the last cell: the end of the notebook
    if nxt < 0:
        return None
    caption = html.escape(fig.caption)
    src = html.escape(url)
    figure = (f'<figure class="sfc-lab-figure" style="margin:.4em 0 1.6em 0;text-align:left">'
              f'<a href="{src}" title="the picture at its size"><img src="{src}" alt="{caption}" '
              f'loading="lazy" style="max-width:100%;border:1px solid #ddd;border-radius:3px"></a>'
              f'<figcaption style="font-size:.8em;color:#666;margin:.2em 0 0">{caption} '
              f'<i>(what the cell above shows when run)</i></figcaption></figure>')
    return page_html[:nxt] + figure + page_html[nxt:]
