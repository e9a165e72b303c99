"""How long a lab takes to open and to run in the browser (JupyterLite) and in JupyterLab.

    python benchmarks/bench_lite_browser.py [--labs 01,06] [--runs 1] [--site DIR]

Side by side in one run, on Debian's chromium (headless, Playwright), as a student meets
them: the JupyterLite site of the labs (``sfclab lite build``; ``--site`` takes one built
before) served on 127.0.0.1 with every other address blocked, and a real JupyterLab
(``tests/browser``'s set-up) with the same notebook.  Each lab is opened in a fresh browser
context (nothing cached: a first visit), and timed from opening the page to the notebook
shown, to the kernel idle, to the first output of Run All (chosen once the kernel is
idle) and to its last cell done.  ``--runs`` repeats each pair, alternating.  The script
prints the load average: two shared cores move these figures a lot, so compare the two
columns of one run.  The test suite checks only that the labs run in the browser
(``tests/browser/test_lite_browser.py``), never how fast.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "browser")]

STEPS = ("shown", "kernel idle", "first output", "run all")


def _ncells(notebook: str) -> int:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text())
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code")


def _notebook(lab: str) -> str:
    return next(p.name for p in (ROOT / "notebooks").glob(f"{lab}_*.ipynb"))


def _lite(pw, site: Path, notebook: str, tmp: Path) -> dict[str, float]:
    import conftest
    from lite_support import PAGE, offline, run_all_timed, serve

    with serve(site) as url:
        ctx = pw.chromium.launch_persistent_context(
            str(tempfile.mkdtemp(dir=tmp)), executable_path=conftest.CHROMIUM, headless=True,
            args=conftest.CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            refused = offline(ctx)
            page = ctx.new_page()
            out = run_all_timed(page, url + PAGE.format(notebook=notebook), _ncells(notebook))
            assert not refused, refused
            return out
        finally:
            ctx.close()


def _jupyterlab(pw, lab, notebook: str, tmp: Path) -> dict[str, float]:
    import conftest
    from lite_support import run_all_timed

    shutil.copy(ROOT / "notebooks" / notebook, lab.root / notebook)
    ctx = pw.chromium.launch_persistent_context(
        str(tempfile.mkdtemp(dir=tmp)), executable_path=conftest.CHROMIUM, headless=True,
        args=conftest.CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        return run_all_timed(page, f"{lab.url}lab/tree/{notebook}?reset&token={lab.token}",
                             _ncells(notebook))
    finally:
        ctx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labs", default="01,06", help="the labs, by number (default: 01,06)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--site", metavar="DIR", help="a site built before (sfclab lite build DIR)")
    args = ap.parse_args()
    import conftest
    from lite_support import missing, site

    why = conftest._missing() or missing()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory(prefix="sfclab-bench-lite-") as tmp:
        tmp = Path(tmp)
        built = Path(args.site) if args.site else site(tmp / "site")
        server = conftest._serve(tmp / "jl", "jupyterlab")
        lab = next(server)
        try:
            with sync_playwright() as pw:
                for run in range(args.runs):
                    for number in args.labs.split(","):
                        notebook = _notebook(number.strip())
                        load = os.getloadavg()[0]
                        lite = _lite(pw, built, notebook, tmp)
                        jl = _jupyterlab(pw, lab, notebook, tmp)
                        rows.append((notebook, run + 1, load, lite, jl))
                        print(f"{notebook} run {run + 1} (load {load:.1f}):")
                        for step in STEPS:
                            print(f"  {step:<13} JupyterLite {lite[step]:7.1f} s   "
                                  f"JupyterLab {jl[step]:7.1f} s")
        finally:
            server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
