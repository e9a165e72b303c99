"""``sfclab lite build OUT``: the labs as a JupyterLite site: Python in the browser, no server.

The site is static files: JupyterLite (``jupyterlite-core``) with its Pyodide kernel
(``jupyterlite-pyodide-kernel``), the Pyodide runtime from npm's ``pyodide`` package
(``pyodide.asm.wasm`` and the standard library; the version the kernel is made for),
sfclab's wheel and the pure-Python wheels it needs from PyPI (:mod:`.lite_wheels`), all
listed in the site's own ``pyodide-lock.json``, and the labs.  When a page opens, the
kernel loads every one of those wheels from the site: no install cell, nothing from a CDN,
nothing from PyPI (``disablePyPIFallback``), and it keeps working offline once loaded.

Building needs the network (npm's and PyPI's registries), ``npm``, and ``pip install
'sfclab[lite]'``; serving needs only a static file server::

    sfclab lite build site/
    python -m http.server --directory site/ 8000      # then http://127.0.0.1:8000/lab/

From a checkout, sfclab's wheel is built from it and the labs are ``notebooks/``;
otherwise give ``--wheel`` and ``--notebooks``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..errors import SfclabError

__all__ = ["build", "add_arguments", "run", "KERNEL_PACKAGES", "PAGE"]

#: What the kernel loads before it runs (jupyterlite-pyodide-kernel's worker installs
#: these unless they are preloaded), then sfclab.
KERNEL_PACKAGES = ("micropip", "piplite", "ipykernel", "comm", "pyodide-kernel", "jedi",
                   "ipython")
#: Of those, what comes from PyPI (the rest ship with the kernel's JupyterLab extension).
FROM_PYPI = ("micropip", "comm", "jedi", "ipython")
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
#: The Pyodide files a page loads (npm's package has typings, consoles and maps besides).
RUNTIME = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
           "pyodide-lock.json", "package.json")
#: A lab's page in the built site, relative to its root.
PAGE = "lab/index.html?path={notebook}"
CHECKOUT = Path(__file__).resolve().parents[2]


def build(out: str | Path, *, notebooks: str | Path | None = None,
          wheel: str | Path | None = None, cache: str | Path | None = None,
          log: Callable[[str], None] = print) -> Path:
    """Build the site into *out* (replaced); returns *out*.  *cache* keeps the
    downloads (npm's pyodide, the wheels) for the next build; default: none kept."""
    out = Path(out).resolve()
    version = _kernel_pyodide()
    notebooks = _notebooks(notebooks)
    with tempfile.TemporaryDirectory(prefix="sfclab-lite-") as tmp:
        keep = Path(cache).resolve() if cache else Path(tmp) / "cache"
        (keep / "wheels").mkdir(parents=True, exist_ok=True)
        runtime = _npm_pyodide(version, keep, log)
        base = json.loads((runtime / "pyodide-lock.json").read_text())
        python = base["info"]["python"]
        own = Path(wheel).resolve() if wheel else _sfclab_wheel(keep, log)
        log(f"sfclab lite: the wheels for Pyodide {version} (Python {python}), pure Python only")
        from .lite_wheels import collect, lockfile, write_lockfile

        wheels = collect([own, *_kernel_wheels()], FROM_PYPI, keep / "wheels", python)
        lite = Path(tmp) / "lite"
        static = lite / "static" / "pyodide"
        static.mkdir(parents=True)
        for name in RUNTIME:
            shutil.copy2(runtime / name, static / name)
        for w in wheels.values():
            shutil.copy2(w.path, static / w.path.name)
        write_lockfile(static / "pyodide-lock.json", lockfile(base, wheels, python))
        _config(lite, [*KERNEL_PACKAGES, "sfclab"])
        if out.exists():
            shutil.rmtree(out)
        log(f"sfclab lite: jupyter lite build ({len(wheels)} wheels, the labs of {notebooks})")
        _jupyter_lite(lite, out, notebooks)
    _check(out)
    log(f"sfclab lite: built {out}; serve it with `python -m http.server --directory {out}` "
        f"and open http://127.0.0.1:8000/{PAGE.format(notebook='01_first_chain.ipynb')}")
    return out


def _kernel_pyodide() -> str:
    """The Pyodide version the installed jupyterlite-pyodide-kernel is made for."""
    try:
        import jupyterlite_core  # noqa: F401
        from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION
    except ImportError as e:
        raise SfclabError(f"building the JupyterLite site needs {e.name}",
                          hint="pip install 'sfclab[lite]' (jupyterlite-core and "
                               "jupyterlite-pyodide-kernel)") from None
    return PYODIDE_VERSION


def _notebooks(given: str | Path | None) -> Path:
    folder = Path(given) if given else CHECKOUT / "notebooks"
    if not sorted(folder.glob("*.ipynb")):
        raise SfclabError(f"no notebooks in {folder}",
                          hint="run from a checkout of sfclab (its notebooks/), or give "
                               "--notebooks DIR")
    return folder.resolve()


def _npm_pyodide(version: str, cache: Path, log) -> Path:
    """npm's ``pyodide`` package of *version*, unpacked (kept in *cache*)."""
    where = cache / f"pyodide-{version}"
    if (where / "package" / "pyodide.asm.wasm").exists():
        return where / "package"
    npm = shutil.which("npm")
    if npm is None:
        raise SfclabError("building the JupyterLite site needs npm (for npm's pyodide "
                          "package)", hint="install Node.js and npm")
    log(f"sfclab lite: npm pack pyodide@{version}")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "pack", f"pyodide@{version}", "--pack-destination",
                           str(where)], capture_output=True, text=True, check=False)
    tgz = where / f"pyodide-{version}.tgz"
    if done.returncode != 0 or not tgz.exists():
        raise SfclabError(f"npm pack pyodide@{version} failed: {done.stderr.strip()[-300:]}",
                          hint="is the npm registry reachable?")
    with tarfile.open(tgz) as t:
        t.extractall(where, filter="data")
    return where / "package"


def _sfclab_wheel(cache: Path, log) -> Path:
    """sfclab's wheel, built from the checkout this sfclab runs from."""
    if not (CHECKOUT / "pyproject.toml").exists():
        raise SfclabError("sfclab is not running from a checkout, so its wheel cannot be "
                          "built here", hint="give --wheel sfclab-….whl (pip download "
                                             "sfclab --no-deps)")
    out = cache / "sfclab"
    shutil.rmtree(out, ignore_errors=True)
    log("sfclab lite: pip wheel . (sfclab's own wheel)")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--disable-pip-version-check", "-w", str(out), str(CHECKOUT)],
                          capture_output=True, text=True, check=False)
    found = sorted(out.glob("sfclab-*.whl"))
    if done.returncode != 0 or not found:
        raise SfclabError(f"building sfclab's wheel failed: {done.stderr.strip()[-400:]}")
    return found[-1]


def _kernel_wheels() -> list[Path]:
    """The wheels jupyterlite-pyodide-kernel ships (its kernel, piplite, ipykernel's
    stand-in, widgetsnbextension's stand-in for ipywidgets 8)."""
    from jupyter_core.paths import jupyter_path

    for root in jupyter_path("labextensions"):
        pypi = Path(root) / KERNEL_PLUGIN.split(":")[0] / "static" / "pypi"
        wheels = sorted(pypi.glob("*.whl"))
        if wheels:
            return [w for w in wheels if not w.name.startswith("widgetsnbextension-3.")]
    raise SfclabError("jupyterlite-pyodide-kernel's wheels were not found",
                      hint="pip install 'sfclab[lite]'")


def _config(lite: Path, packages: list[str]) -> None:
    """``jupyter-lite.json``: the kernel preloads *packages* and never asks PyPI."""
    settings = {"loadPyodideOptions": {"packages": packages}, "disablePyPIFallback": True}
    config = {"jupyter-lite-schema-version": 0,
              "jupyter-config-data": {"appName": "sfclab labs",
                                      "litePluginSettings": {KERNEL_PLUGIN: settings}}}
    (lite / "jupyter-lite.json").write_text(json.dumps(config, indent=2))


def _jupyter_lite(lite: Path, out: Path, notebooks: Path) -> None:
    cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite),
           "--output-dir", str(out), "--contents", str(notebooks), "--no-sourcemaps"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=lite)
    if done.returncode != 0:
        raise SfclabError(f"jupyter lite build failed: {(done.stdout + done.stderr)[-800:]}")


def _check(out: Path) -> None:
    """The site loads Pyodide and the wheels from itself."""
    config = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]
    url = config["litePluginSettings"][KERNEL_PLUGIN].get("pyodideUrl", "")
    if not url.startswith("./") or not (out / url).exists():
        raise SfclabError(f"the site's kernel loads Pyodide from {url or 'a CDN'}, not "
                          f"from the site")
    lock = json.loads((out / "static" / "pyodide" / "pyodide-lock.json").read_text())
    missing = [p["file_name"] for p in lock["packages"].values()
               if not (out / "static" / "pyodide" / p["file_name"]).exists()]
    if missing:
        raise SfclabError(f"the site's lockfile names wheels it lacks: {missing}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="lite_command", metavar="ACTION")
    b = sub.add_parser("build", help="build the JupyterLite site of the labs into OUT")
    b.add_argument("out", metavar="OUT", help="the site's folder (replaced)")
    b.add_argument("--notebooks", metavar="DIR", help="the labs (default: the checkout's "
                                                       "notebooks/)")
    b.add_argument("--wheel", metavar="FILE", help="sfclab's wheel (default: built from the "
                                                    "checkout)")
    b.add_argument("--cache", metavar="DIR", help="keep npm's pyodide and the wheels here "
                                                   "for the next build")


def run(args: argparse.Namespace) -> int:
    if args.lite_command != "build":
        print("usage: sfclab lite build OUT [--notebooks DIR] [--wheel FILE] [--cache DIR]",
              file=sys.stderr)
        return 2
    try:
        build(args.out, notebooks=args.notebooks, wheel=args.wheel, cache=args.cache)
    except SfclabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
