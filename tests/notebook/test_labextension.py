"""sfclab's JupyterLab extension (cell languages) is installed with the package.

``pip install .`` and ``pip install -e .`` put the prebuilt extension in
``share/jupyter/labextensions/sfclab-languages`` of the environment, where
JupyterLab and Notebook 7 load it from (``jupyter labextension list`` shows it).  (The browser tests check what it does: tests/browser/test_cell_languages_browser.py.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "sfclab-languages"


def installed() -> Path:
    return Path(sys.prefix) / "share" / "jupyter" / "labextensions" / NAME


def test_the_prebuilt_extension_is_installed_in_the_environment():
    ext = installed()
    meta = json.loads((ext / "package.json").read_text())
    assert meta["name"] == NAME and meta["jupyterlab"]["extension"] is True
    entry = ext / meta["jupyterlab"]["_build"]["load"]
    assert entry.is_file() and "remoteEntry" in entry.name
    shared = meta["jupyterlab"]["sharedPackages"]
    assert shared["@jupyterlab/codemirror"]["singleton"]  # JupyterLab's own registries


def test_jupyter_looks_for_extensions_there():
    from jupyter_core.paths import jupyter_path

    where = [Path(p).resolve() for p in jupyter_path("labextensions")]
    assert installed().parent.resolve() in where
