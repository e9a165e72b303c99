"""Hatchling build hook: bundle the chain editor's front end before packaging.

``js/`` holds the editor's ES module sources; ``npm ci && npm run build`` bundles
them with esbuild into ``sfclab/static/editor.js`` (git-ignored, shipped in the
wheel as an artifact).  The hook rebuilds only when the bundle is missing or
older than a source, so building from an sdist that already carries the bundle
needs no npm.  ``SFCLAB_SKIP_JS=1`` skips the bundle step (the editor then shows
a "front end not built" message instead of the canvas).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

__all__ = ["EditorBundleHook"]

BUNDLE = Path("sfclab/static/editor.js")
SOURCES = ("js/src", "js/package.json", "js/package-lock.json")


def _newest(root: Path) -> float:
    stamps = []
    for rel in SOURCES:
        p = root / rel
        files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p] if p.exists() else []
        stamps += [f.stat().st_mtime for f in files]
    return max(stamps, default=0.0)


def bundle_is_stale(root: Path) -> bool:
    """True when the bundle is missing or older than one of the js/ sources."""
    out = root / BUNDLE
    return not out.is_file() or out.stat().st_mtime < _newest(root)


class EditorBundleHook(BuildHookInterface):
    """Run ``npm ci && npm run build`` in ``js/`` when the bundle is stale."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if os.environ.get("SFCLAB_SKIP_JS") or not (root / "js" / "package.json").is_file():
            return  # an sdist without js/ sources ships the bundle itself
        if not bundle_is_stale(root):
            return
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                "sfclab: building the chain editor's front end needs npm (Node.js 18 or newer), "
                "and npm is not on PATH.  Install it (Debian/Ubuntu: `apt-get install -y nodejs "
                "npm`) and build again, or set SFCLAB_SKIP_JS=1 to build without the editor."
            )
        js = root / "js"
        lock_marker = js / "node_modules" / ".package-lock.json"
        lock = js / "package-lock.json"
        steps = [["run", "build"]]
        if not lock_marker.is_file() or lock_marker.stat().st_mtime < lock.stat().st_mtime:
            steps.insert(0, ["ci", "--no-audit", "--no-fund"])
        for step in steps:
            self.app.display_info(f"sfclab: npm {' '.join(step)} (in js/)")
            done = subprocess.run([npm, *step], cwd=js, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"sfclab: `npm {' '.join(step)}` in {js} failed "
                                   f"(exit {done.returncode}); see the output above")
        if not (root / BUNDLE).is_file():
            raise RuntimeError(f"sfclab: npm run build did not write {BUNDLE}")
