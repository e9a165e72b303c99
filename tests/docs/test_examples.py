"""Every ```python block of the manual (docs/*.md) runs: the blocks of a page in order, in one
namespace, in a scratch directory that sees the repository's examples/ and p4/. A block that
cannot run here says why in an HTML comment on the line before it (``<!-- not run: ... -->``),
and is reported as skipped with that reason."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


def blocks(page: Path) -> list[tuple[int, str, str | None]]:
    text = page.read_text()
    return [(text.count("\n", 0, m.start("code")) + 1, m.group("code"), m.group("why"))
            for m in BLOCK.finditer(text)]


PAGES = sorted(p for p in DOCS.glob("*.md") if blocks(p))


def test_the_manual_has_python_examples():
    assert len(PAGES) >= 5


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_run(page: Path, tmp_path, monkeypatch):
    for name in ("examples", "p4"):
        os.symlink(ROOT / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs.{page.stem}"}
    skipped = []
    for line, code, why in blocks(page):
        if why:
            skipped.append(f"{page.name}:{line}: {why}")
            continue
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
        except Exception as e:                   # say which block, then fail
            raise AssertionError(f"the example at docs/{page.name}:{line} fails: {e!r}") from e
    if skipped:
        pytest.skip("ran the others; not run: " + "; ".join(skipped))
