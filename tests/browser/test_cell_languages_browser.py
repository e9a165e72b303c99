"""%%chain, %%nf and %%topology cells get their own highlighting (sfclab's JupyterLab
extension, ``labextension/``), in JupyterLab and in Notebook 7.

The extension gives every token a class naming its language and kind
(``sfc-chain-keyword``, ``sfc-p4-type``, ``sfc-topo-generator``...); Python's
highlighting has none, so the classes say which language the cell was read in.
A cell becomes a chain cell when ``%%chain`` is typed on its first line, and stops
being one when the line goes.  ``SFCLAB_DOCS_SCREENSHOTS=1`` writes
``docs/cell-languages.png``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHAIN = """%%chain
chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);     # if-else: then : else ? condition
    nat => lb => l3fwd => output;
}
chain mgmt: l2fwd -> output   // from and to are keywords too"""
NF = """%%nf tagger --layer 4 --field score:8
// marks heavy flows
control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
    register<bit<32>>(1024) seen;
    apply { if (hdr.ipv4.isValid()) { sfc.score = 8w1; } }
}"""
TOPO = """%%topology
topology campus
switch s1, s2 arch v1model stages 12   # two switches
host h1 10.0.0.1 at s1:1
link s1:2 -- s2:1 latency 0.5ms
use fat_tree(4)"""
PYTHON = "x = 1  # chain match: keywords in a Python comment stay a comment"

# [text, classes] of every token span of cell k (CodeMirror 6 renders one span a token)
TOKENS = """(k) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')[k]
    .querySelectorAll('.cm-line span')].map(s => [s.textContent, s.className])"""


def tokens(page, k: int) -> list[tuple[str, str]]:
    return [tuple(t) for t in page.evaluate(TOKENS, k)]


def classes(page, k: int, text: str) -> list[str]:
    """The classes of the spans of cell *k* whose text is exactly *text*."""
    found = [c for t, c in tokens(page, k) if t.strip() == text]
    assert found, f"no token {text!r} in cell {k}: {tokens(page, k)}"
    return found


def has(page, k: int, text: str, cls: str) -> bool:
    return all(cls in c.split() for c in classes(page, k, text))


@pytest.mark.parametrize("server", ["lab", "notebook7"])
def test_magic_cells_are_highlighted_in_their_own_language(server, request, page,
                                                           artifacts: Path) -> None:
    app = request.getfixturevalue(server)
    page.goto(app.notebook(f"languages-{server}.ipynb", [CHAIN, NF, TOPO, PYTHON]))
    page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".cm-line").first.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.jp-Cell .sfc-tok').length > 40",
                           timeout=20_000)
    # the chain cell
    assert has(page, 0, "%%chain", "sfc-chain-magic")
    for word in ("chain", "match", "weight"):
        assert has(page, 0, word, "sfc-chain-keyword"), word
    for nf in ("firewall", "nat", "lb", "l3fwd", "l2fwd"):
        assert has(page, 0, nf, "sfc-chain-nf"), nf
    for end in ("input", "output", "drop"):
        assert has(page, 0, end, "sfc-chain-endpoint"), end
    assert has(page, 0, "=>", "sfc-chain-arrow") and has(page, 0, "->", "sfc-chain-arrow")
    assert has(page, 0, "ipv4.dst", "sfc-chain-field") and has(page, 0, "firewall.verdict", "sfc-chain-field")
    assert has(page, 0, "10.0.1.0", "sfc-chain-number") and has(page, 0, "==", "sfc-chain-operator")
    assert has(page, 0, "# if-else: then : else ? condition", "sfc-chain-comment")
    assert has(page, 0, "// from and to are keywords too", "sfc-chain-comment")
    unclassed = [t for t, c in tokens(page, 0) if t.strip() and "sfc-chain-" not in c]
    assert unclassed == [], f"tokens of the chain cell not read as the chain language: {unclassed}"
    # the %%nf cell: P4
    assert has(page, 1, "control", "sfc-p4-keyword") and has(page, 1, "apply", "sfc-p4-keyword")
    assert has(page, 1, "headers_t", "sfc-p4-type") and has(page, 1, "8w1", "sfc-p4-number")
    assert has(page, 1, "// marks heavy flows", "sfc-p4-comment")
    # the %%topology cell
    for word in ("topology", "switch", "host", "link", "use"):
        assert has(page, 2, word, "sfc-topo-keyword"), word
    assert has(page, 2, "fat_tree", "sfc-topo-generator") and has(page, 2, "s1:2", "sfc-topo-port")
    assert has(page, 2, "stages", "sfc-topo-property") and has(page, 2, "# two switches", "sfc-topo-comment")
    # a Python cell stays Python
    assert not any("sfc-" in c for _, c in tokens(page, 3))
    first = page.locator(".jp-Notebook .jp-Cell").nth(0).bounding_box()
    last = page.locator(".jp-Notebook .jp-Cell").nth(3).bounding_box()
    page.screenshot(path=str(artifacts / f"cell-languages-{server}.png"), clip={
        "x": first["x"], "y": first["y"], "width": first["width"],
        "height": last["y"] + last["height"] - first["y"]})
    if server == "lab" and os.environ.get("SFCLAB_DOCS_SCREENSHOTS"):
        shutil.copy(artifacts / f"cell-languages-{server}.png", ROOT / "docs" / "cell-languages.png")

    # typing %%chain on the Python cell's first line makes it a chain cell; undo, Python again
    editor = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("%%chain\n")
    page.wait_for_function(f"(k) => ({TOKENS})(k).some(([t, c]) => c.includes('sfc-chain-magic'))", arg=3)
    assert has(page, 3, "# chain match: keywords in a Python comment stay a comment", "sfc-chain-comment")
    page.keyboard.press("Control+a")
    page.keyboard.type("y = 2  # chain")
    page.wait_for_function(f"(k) => !({TOKENS})(k).some(([t, c]) => c.includes('sfc-'))", arg=3)
