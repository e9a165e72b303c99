"""The import paths users know from before the modules moved into packages, kept working.

``import sfclab.network`` (the README), ``from sfclab.plots import bar_plot`` and
``from sfclab.diagrams import placement_figure`` (the labs) and ``sfclab.lab`` / ``sfclab.demo``
name the moved module itself, imported on first use: the same module object, so classes and
state are shared, and a plain ``import sfclab`` stays light.

>>> import sfclab.network, sfclab.api.network
>>> sfclab.network is sfclab.api.network
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED"]

#: old public module path -> where the module lives now
MOVED = {
    "sfclab.lab": "sfclab.api.lab",
    "sfclab.network": "sfclab.api.network",
    "sfclab.demo": "sfclab.cli.demo",
    "sfclab.plots": "sfclab.draw.plots",
    "sfclab.diagrams": "sfclab.draw.switch",
}


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and loads it as the module at its new path."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module) -> None:
        pass  # already executed under its new name


if not any(isinstance(f, _OldPath) for f in sys.meta_path):
    sys.meta_path.append(_OldPath())
