"""A real JupyterLab and a headless Debian chromium, driven by Playwright for Python.

Nothing is downloaded: the browser is ``/usr/bin/chromium`` (``apt-get install -y
chromium``; ``SFCLAB_CHROMIUM`` points elsewhere).  JupyterLab runs on 127.0.0.1
with a random token and its config/data/runtime dirs in a temp dir.  Without the
browser, Playwright or the editor bundle the tests skip and say which is missing.
Screenshots go to ``test-artifacts/``.

One JupyterLab (and one Notebook 7) serves the whole session: each test module gets a
folder of its own in its root, and when the module is done its kernels are shut down
(and waited for), so a module starts as on a new server: an empty folder, no kernel
running.  A server that died is started again for the next module.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("SFCLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = _missing()
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


def pytest_collection_finish(session: pytest.Session) -> None:
    """When the JupyterLite test is to run, begin building its site now, on a thread: the
    build mostly waits (npm, PyPI, subprocesses) and the tests before it run meanwhile."""
    wanted = [item for item in session.items if item.path.name == "test_lite_browser.py"
              and not item.get_closest_marker("skip")]
    if session.config.option.collectonly or not wanted:
        return
    from lite_support import build_early, missing

    if missing():
        return                       # the test skips, saying why
    factory = session.config._tmp_path_factory  # what the tmp_path_factory fixture is
    build_early(factory.mktemp("lite-early") / "site", factory.getbasetemp() / "lite-cache")


def _missing() -> str:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return (f"Debian's chromium is not installed ({CHROMIUM} is missing): "
                "apt-get install -y chromium")
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright Python package is missing: pip install -e '.[test]'"
    if not (ROOT / "sfclab" / "static" / "editor.js").is_file():
        return "the editor bundle sfclab/static/editor.js is missing: npm ci && npm run build in js/"
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        return "jupyterlab is not installed in this environment"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    app: str = "lab"  # "lab": JupyterLab; "notebook": Notebook 7
    folder: str = ""  # root's path in the server's root ("": the server's root)

    def notebook(self, name: str, cells: list[str]) -> str:
        """Write a notebook (no widget state saved) and return its URL."""
        nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
                       "execution_count": None, "source": src} for i, src in enumerate(cells)]}
        (self.root / name).write_text(json.dumps(nb, indent=1))
        return self.url_of(name)

    def url_of(self, name: str) -> str:
        """The URL that opens notebook *name* of :attr:`root` (JupyterLab: its workspace
        reset)."""
        path = f"{self.folder}/{name}" if self.folder else name
        if self.app == "notebook":
            return f"{self.url}notebooks/{path}?token={self.token}"
        return f"{self.url}lab/tree/{path}?reset&token={self.token}"

    def api(self, method: str, path: str) -> object:
        """The Jupyter server's REST API: *method* on ``api/PATH``; the reply's JSON."""
        req = urllib.request.Request(f"{self.url}api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None


class _Server:
    """A Jupyter server (``jupyterlab`` or ``notebook``) kept for the session, started when
    a module first needs it and again when it died; each module gets a :class:`Lab` on a
    folder of its own, and its kernels are shut down when the module is done."""

    def __init__(self, base: Path, module: str) -> None:
        self.base, self.module, self.runs = base, module, 0
        self.serving: Iterator[Lab] | None = None
        self.lab: Lab | None = None

    def alive(self) -> bool:
        try:
            self.lab.api("GET", "status")           # type: ignore[union-attr]
            return True
        except (OSError, AttributeError):
            return False

    def for_module(self, name: str) -> Lab:
        if self.serving is None or not self.alive():
            self.stop()
            self.runs += 1
            self.serving = _serve(self.base / f"run{self.runs}", self.module)
            self.lab = next(self.serving)
        folder = Path(name).stem                    # test_views_browser.py: test_views_browser
        (self.lab.root / folder).mkdir()
        return Lab(self.lab.url, self.lab.token, self.lab.root / folder, self.lab.app, folder)

    def done_with(self, lab: Lab) -> None:
        """Shut down every session and kernel; wait until none is left (else stop: the
        next module gets a new server)."""
        try:
            sessions = lab.api("GET", "sessions")
            with concurrent.futures.ThreadPoolExecutor(8) as pool:   # each waits for its kernel
                list(pool.map(lambda s: lab.api("DELETE", f"sessions/{s['id']}"), sessions))
            deadline = time.monotonic() + 30
            while kernels := lab.api("GET", "kernels"):
                for k in kernels:                                    # type: ignore[union-attr]
                    lab.api("DELETE", f"kernels/{k['id']}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"kernels still running: {kernels}")
                time.sleep(0.3)
        except (OSError, RuntimeError, ValueError):
            self.stop()

    def stop(self) -> None:
        if self.serving is not None:
            self.serving.close()       # _serve's finally: the server and its kernels end
        self.serving = self.lab = None


def _later_browser_items(request: pytest.FixtureRequest) -> bool:
    """Whether a test of tests/browser/ runs after this module's tests."""
    items, here = request.session.items, request.node.path
    last = max((k for k, item in enumerate(items) if item.path == here), default=len(items))
    return any("tests/browser/" in str(item.path).replace(os.sep, "/")
               for item in items[last + 1:])


@pytest.fixture(scope="session")
def _lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Server]:
    server = _Server(tmp_path_factory.mktemp("lab"), "jupyterlab")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Server]:
    server = _Server(tmp_path_factory.mktemp("nb7"), "notebook")
    yield server
    server.stop()


def _module_lab(server: _Server, request: pytest.FixtureRequest) -> Iterator[Lab]:
    lab = server.for_module(request.node.name)
    try:
        yield lab
    finally:
        server.done_with(lab)
        if not _later_browser_items(request):
            server.stop()                # the browser tests are over: free its memory


@pytest.fixture(scope="module")
def lab(_lab_server: _Server, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """JupyterLab: the session's server, a folder of this module's own, no kernel running."""
    yield from _module_lab(_lab_server, request)


@pytest.fixture(scope="module")
def notebook7(request: pytest.FixtureRequest) -> Iterator[Lab]:
    """Notebook 7 (``pip install notebook``; the test extra has it) on the same terms."""
    if shutil.which("jupyter-notebook", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("Notebook 7 is not installed in this environment: pip install notebook")
    yield from _module_lab(request.getfixturevalue("_notebook7_server"), request)


def _serve(base: Path, module: str) -> Iterator[Lab]:
    """Run ``python -m MODULE`` (jupyterlab or notebook) on 127.0.0.1 until the end."""
    root = base / "notebooks"
    root.mkdir(parents=True)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTER_DATA_DIR": str(base / "data"), "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
           "IPYTHONDIR": str(base / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    if module == "jupyterlab":  # Notebook 7 has no such plugin, and throws on its settings
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), secrets.token_hex(16)
    app = "LabApp" if module == "jupyterlab" else "JupyterNotebookApp"
    log = open(base / f"{module}.log", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.token={token}", "--no-browser", f"--ServerApp.root_dir={root}",
         f"--{app}.workspaces_dir={base / 'workspaces'}",
         f"--{app}.user_settings_dir={base / 'settings'}",
         # a module's kernels are shut down at its end: SIGTERM 0.5 s after the request
         # (the default waits 2.5 s for a kernel whose Lab's threads still run)
         "--KernelManager.shutdown_wait_time=1",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{module} did not start; see "
                                       f"{base / f'{module}.log'}") from None
                time.sleep(0.3)
        yield Lab(url, token, root, "lab" if module == "jupyterlab" else "notebook")
    finally:
        _stop(proc)
        log.close()


def _stop(proc: subprocess.Popen) -> None:
    """End the JupyterLab we started (and its kernels: same process group)."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def artifacts() -> Path:
    """Where screenshots go (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")  # Playwright must stop: its loop would stay running
def browser_context(tmp_path_factory: pytest.TempPathFactory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            yield ctx
        finally:
            ctx.close()


#: What Cytoscape says when it refuses a style or a mapping (issue 33.4).
CYTOSCAPE_WARNING = re.compile(r"The style property `|Do not assign mappings|The selector `|"
                               r"Skipping (?:parsing|property)|cytoscape", re.I)


def front_end_warning(msg) -> bool:
    """A console warning or error from sfclab's own front-end code: the editor's module
    (anywidget loads it from a blob: URL; cytoscape is bundled in it) or Cytoscape's words."""
    url = (msg.location or {}).get("url", "")
    return msg.type in ("warning", "error") and (
        url.startswith(("blob:", "data:")) or bool(CYTOSCAPE_WARNING.search(msg.text)))


@pytest.fixture
def page(browser_context, request: pytest.FixtureRequest):
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"{e}\n{e.stack}"))
    page.js_errors = errors  # type: ignore[attr-defined]
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if front_end_warning(m) else None)
    page.front_end_warnings = warnings  # type: ignore[attr-defined]
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failed.png"))
    page.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
