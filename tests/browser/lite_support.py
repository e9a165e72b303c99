"""The JupyterLite site of the labs, built once and served on 127.0.0.1, and a chromium page
that may reach nothing else: what ``test_lite_browser.py`` and ``bench_lite_browser.py`` use.

:func:`site` builds the site (``sfclab lite build``) into *where*, or uses the one
``SFCLAB_LITE_SITE`` names (a site built before: ``sfclab lite build DIR``).
:func:`serve` serves a folder with the standard library's HTTP server on a free loopback
port.  :func:`offline` makes a Playwright context abort every request that does not go
to 127.0.0.1, and keeps their URLs (a page of the site should make none).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: A lab's page in the site (JupyterLab's app of JupyterLite).
PAGE = "lab/index.html?path={notebook}"
#: The notebook on show (a restored workspace may have others open, hidden).
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
LOCAL = re.compile(r"^(https?|wss?)://127\.0\.0\.1[:/]")
KERNEL_START = 600_000   # ms: Pyodide, the wheels, ipykernel's and sfclab's imports
CHROMIUM = os.environ.get("SFCLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def missing() -> str:
    """Why the site cannot be built here ('' when it can)."""
    if os.environ.get("SFCLAB_LITE_SITE"):
        return ""
    if shutil.which("npm") is None:
        return "building the JupyterLite site needs npm (npm's pyodide package)"
    try:
        import jupyterlite_core  # noqa: F401
        import jupyterlite_pyodide_kernel  # noqa: F401
    except ImportError as e:
        return f"building the JupyterLite site needs {e.name}: pip install -e '.[test]'"
    return ""


def site(where: Path, cache: Path | None = None) -> Path:
    """The built site: ``SFCLAB_LITE_SITE``'s, or built into *where* now (*cache*: where
    the downloads are kept, for ``tests/test_without_grpc.py`` too)."""
    given = os.environ.get("SFCLAB_LITE_SITE")
    if given:
        return Path(given)
    from sfclab.cli.lite import build

    return build(where, cache=cache, log=lambda line: None)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT/`` serving *folder* while the block runs."""
    handler = functools.partial(_Quiet, directory=str(folder))
    handler.extensions_map = {**SimpleHTTPRequestHandler.extensions_map,
                              ".wasm": "application/wasm", ".mjs": "text/javascript"}
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def offline(context) -> list[str]:
    """Abort every request of *context* that is not for 127.0.0.1; returns the list their
    URLs are added to."""
    refused: list[str] = []

    def route(r) -> None:
        if LOCAL.match(r.request.url):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    return refused


def run_all_timed(page, url: str, ncells: int, timeout: int = KERNEL_START) -> dict[str, float]:
    """Open *url* (a notebook of *ncells* code cells), choose Run All once its kernel is
    idle, and wait for its last cell (a cell that fails is an AssertionError with its
    error); seconds from opening to the notebook shown, the kernel idle, the first output
    and the last cell done."""
    times = start_run_all(page, url, timeout)
    return finish_run_all(page, ncells, times, timeout)


def start_run_all(page, url: str, timeout: int = KERNEL_START) -> dict[str, float]:
    """The first half of :func:`run_all_timed`: open, wait for the kernel, Run All."""
    t0 = time.perf_counter()
    page.goto(url)
    page.locator(SHOWN).first.wait_for(timeout=timeout)
    times = {"t0": t0, "shown": time.perf_counter() - t0}
    page.get_by_text(re.compile(r"\| Idle$")).first.wait_for(timeout=timeout)
    times["kernel idle"] = time.perf_counter() - t0
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    return times


def finish_run_all(page, ncells: int, times: dict[str, float],
                   timeout: int = KERNEL_START) -> dict[str, float]:
    """The second half of :func:`run_all_timed`: the first output, then the last cell."""
    t0 = times.pop("t0")
    page.locator(f"{SHOWN} .jp-OutputArea-output").first.wait_for(state="attached",
                                                                  timeout=timeout)
    times["first output"] = time.perf_counter() - t0
    page.wait_for_function(
        """([shown, n]) => { const ps = [...document.querySelectorAll(shown + ' .jp-CodeCell')]
            .map(c => c.querySelector('.jp-InputArea-prompt').textContent.trim());
            return (ps.length === n && ps[n - 1] === `[${n}]:`) || document.querySelector(
                shown + " [data-mime-type='application/vnd.jupyter.stderr']") !== null; }""",
        arg=[SHOWN, ncells], timeout=timeout, polling=500)
    failed = page.locator(f"{SHOWN} [data-mime-type='application/vnd.jupyter.stderr']")
    assert failed.count() == 0, f"a cell failed: {failed.first.text_content()[-3000:]}"
    times["run all"] = time.perf_counter() - t0
    return times


def prompts(page) -> list[str]:
    return page.evaluate("""(shown) => [...document.querySelectorAll(shown + ' .jp-CodeCell')]
        .map(c => c.querySelector('.jp-InputArea-prompt').textContent.trim())""", SHOWN)


def code_cell(page, k: int):
    return page.locator(f"{SHOWN} .jp-CodeCell").nth(k)


@contextmanager
def browser() -> Iterator:
    """Debian's chromium, headless, as tests/browser's conftest launches it; each lab gets
    a context of its own from it (a first visit: nothing stored, no workspace restored)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
