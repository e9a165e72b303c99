"""Hatchling build hook: build sfclab's two front ends before packaging.

* ``js/`` holds the chain editor's ES module sources; ``npm ci && npm run build``
  bundles them with esbuild into ``sfclab/static/editor.js``.
* ``labextension/`` holds the JupyterLab 4 extension that highlights ``%%chain``,
  ``%%nf`` and ``%%topology`` cells; ``npm ci && npm run build`` builds it with
  ``@jupyterlab/builder`` into ``sfclab/labextension/``, which the wheel installs
  as ``share/jupyter/labextensions/sfclab-languages`` (so ``pip install .`` and
  ``pip install -e .`` both make it active, no ``jupyter labextension`` step).

Both outputs are git-ignored and shipped in the wheel as artifacts.  A front end
is rebuilt only when its output is missing or older than one of its sources, so
building from an sdist that already carries the outputs needs no npm.
``SFCLAB_SKIP_JS=1`` skips both (the editor then shows a "front end not built"
message instead of the canvas, and magic cells are highlighted as Python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

__all__ = ["FrontEndHook", "FrontEnd", "FRONT_ENDS", "LABEXTENSION_NAME"]

LABEXTENSION_NAME = "sfclab-languages"


class FrontEnd(NamedTuple):
    """An npm project whose ``npm run build`` writes ``output`` (a file).

    (A NamedTuple: hatchling loads this file without registering it as a module,
    which a dataclass needs.)
    """

    what: str
    folder: str
    output: str
    sources: tuple[str, ...]

    def newest_source(self, root: Path) -> float:
        stamps = []
        for rel in self.sources:
            p = root / self.folder / rel
            files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p] if p.exists() else []
            stamps += [f.stat().st_mtime for f in files]
        return max(stamps, default=0.0)

    def is_stale(self, root: Path) -> bool:
        """True when the output is missing or older than one of the sources."""
        out = root / self.output
        return not out.is_file() or out.stat().st_mtime < self.newest_source(root)


FRONT_ENDS = (
    FrontEnd("the chain editor's front end", "js", "sfclab/static/editor.js",
             ("src", "package.json", "package-lock.json")),
    FrontEnd("the JupyterLab extension", "labextension", "sfclab/labextension/package.json",
             ("src", "build.mjs", "package.json", "package-lock.json")),
)


class FrontEndHook(BuildHookInterface):
    """Run ``npm ci && npm run build`` in each front end's folder when it is stale."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if not os.environ.get("SFCLAB_SKIP_JS"):
            for fe in FRONT_ENDS:
                if (root / fe.folder / "package.json").is_file() and fe.is_stale(root):
                    self._build(root, fe)
        lab = root / "sfclab" / "labextension"
        if self.target_name == "wheel" and (lab / "package.json").is_file():
            build_data["shared_data"][str(lab)] = f"share/jupyter/labextensions/{LABEXTENSION_NAME}"

    def _build(self, root: Path, fe: FrontEnd) -> None:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                f"sfclab: building {fe.what} needs npm (Node.js 18 or newer), and npm is not "
                "on PATH.  Install it (Debian/Ubuntu: `apt-get install -y nodejs npm`) and "
                "build again, or set SFCLAB_SKIP_JS=1 to build without the front ends."
            )
        folder = root / fe.folder
        lock_marker = folder / "node_modules" / ".package-lock.json"
        lock = folder / "package-lock.json"
        steps = [["run", "build"]]
        if not lock_marker.is_file() or lock_marker.stat().st_mtime < lock.stat().st_mtime:
            steps.insert(0, ["ci", "--no-audit", "--no-fund"])
        for step in steps:
            self.app.display_info(f"sfclab: npm {' '.join(step)} (in {fe.folder}/, {fe.what})")
            done = subprocess.run([npm, *step], cwd=folder, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"sfclab: `npm {' '.join(step)}` in {folder} failed "
                                   f"(exit {done.returncode}); see the output above")
        if not (root / fe.output).is_file():
            raise RuntimeError(f"sfclab: npm run build in {fe.folder}/ did not write {fe.output}")
        os.utime(root / fe.output)  # newer than every source, even if the build kept it
