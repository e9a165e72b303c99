"""Error boxes of the views wrap between words in JupyterLab (issue 22.4: "h ave").

JupyterLab styles every ``pre`` of an output with ``word-break: break-all``; the code
tab's listing and its error box are ``pre`` elements, so without a more specific rule a
long message broke lines inside words. Checked in a real JupyterLab and chromium: every
word of a wrapped error lies on one line.
"""

from __future__ import annotations

import pytest

from test_views_browser import KERNEL, no_widget_errors, open_notebook, output, run_all

pytestmark = pytest.mark.browser

MESSAGE = ("CompileError: the chains have no program for tna: " + " ".join(
    ["heavy_hitter's register arrays have more cells than the stage's memory can hold"] * 8))
CELL = f"""from sfclab.notebook.codeview import CodeView
view = CodeView()
view.set_error({MESSAGE!r})
view"""

# For each word of the error box's text: on how many lines it is drawn.
WORD_LINES_JS = """(pre) => {
  const node = pre.firstChild, text = node.textContent, words = [];
  const tops = (start, end) => {
    const r = document.createRange();
    r.setStart(node, start); r.setEnd(node, end);
    return new Set([...r.getClientRects()].map(x => Math.round(x.top)));
  };
  for (const m of text.matchAll(/\\S+/g)) {
    words.push([m[0], tops(m.index, m.index + m[0].length).size]);
  }
  return {words: words, lines: tops(0, text.length).size};
}"""


def test_a_long_error_in_the_code_view_wraps_between_words(lab, page) -> None:
    open_notebook(page, lab.notebook("error-wrap.ipynb", [CELL]))
    run_all(page, 1)
    pre = output(page, 0).locator("pre.sfc-code.sfc-error")
    pre.wait_for(timeout=KERNEL)
    got = pre.evaluate(WORD_LINES_JS)
    assert got["lines"] > 3, "the message must wrap for the test to mean anything"
    split = [w for w, lines in got["words"] if lines > 1]
    assert split == [], f"words broken across lines: {split[:5]}"
    style = pre.evaluate("p => [getComputedStyle(p).wordBreak, getComputedStyle(p).whiteSpace]")
    assert style == ["normal", "pre-wrap"]
    no_widget_errors(page)
