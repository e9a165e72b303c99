"""The manual's lab pages show what their cells draw (issue 33.6): every figure of
docs/_ext/lab_figures.py is a picture in docs/ placed after a code cell its lab still has;
the built pages are checked in test_site.py."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lab_figures",
                                               ROOT / "docs" / "_ext" / "lab_figures.py")
figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figures)


@pytest.mark.parametrize("lab", sorted(figures.FIGURES))
def test_each_figure_has_its_picture_and_its_cell(lab: str) -> None:
    cells = json.loads((ROOT / "notebooks" / f"{lab}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    for fig in figures.FIGURES[lab]:
        assert (ROOT / "docs" / fig.picture).is_file(), fig.picture
        assert any(fig.cell in src for src in code), f"{lab}: no code cell holds {fig.cell!r}"


def test_the_pictures_are_small_and_all_in_use() -> None:
    """Committed screenshots stay small (docs/labs.md says how to take them again), and no
    picture in docs/labs/figures/ is left over from a figure the table no longer has."""
    named = {fig.picture for figs in figures.FIGURES.values() for fig in figs}
    folder = {f"labs/figures/{p.name}" for p in (ROOT / "docs" / "labs" / "figures").iterdir()}
    assert folder <= named, f"pictures no figure shows: {sorted(folder - named)}"
    sizes = {name: (ROOT / "docs" / name).stat().st_size for name in folder}
    assert max(sizes.values()) < 100_000, max(sizes.items(), key=lambda kv: kv[1])


def test_every_lab_page_has_a_figure() -> None:
    assert sorted(figures.FIGURES) == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


PAGE = ('<div class="jp-Cell jp-MarkdownCell" id="cell-id=m1"><p>plot it</p></div>'
        '<div class="jp-Cell jp-CodeCell"><div class="jp-Cell jp-CodeCell" id="cell-id=c1">'
        '<pre>line_plot(x)</pre></div></div>'
        '<div class="jp-Cell jp-CodeCell"><div class="jp-Cell jp-CodeCell" id="cell-id=c2">'
        '<pre>print(1)</pre></div></div></div>')
CELLS = [{"cell_type": "markdown", "id": "m1", "source": ["line_plot( in prose"]},
         {"cell_type": "code", "id": "c1", "source": ["line_plot(x)"]},
         {"cell_type": "code", "id": "c2", "source": ["print(1)"]}]


def test_a_figure_goes_after_its_code_cell_before_the_next() -> None:
    fig = figures.Figure("line_plot(", "labs/figures/x.png", "A <plot>")
    out = figures.place(PAGE, CELLS, fig, "../../labs/figures/x.png")
    before, after = out.split('<figure class="sfc-lab-figure"')
    assert before.endswith("<pre>line_plot(x)</pre></div></div>")   # not after the prose
    assert after.split("</figure>")[1].startswith('<div class="jp-Cell jp-CodeCell">')
    assert 'src="../../labs/figures/x.png"' in after and "A &lt;plot&gt;" in after
    last = figures.place(PAGE, CELLS, figures.Figure("print(1)", "p.png", "last"), "p.png")
    assert last.endswith("</figure></div>")                              # end of the notebook
    assert figures.place(PAGE, CELLS, figures.Figure("gone(", "p.png", ""), "p.png") is None
