"""Notebook front ends: the chain editor widget, the live views and the magics.

``%load_ext sfclab`` registers the magics (:mod:`.magics`).  Importing this
package is cheap: the widget modules (anywidget, ipywidgets) are imported on
first use of what they define; ``import sfclab`` alone reaches this package as
``sfclab.notebook`` (imported on first use too).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .editor import ChainEditor, EditorChange
    from .magics import SfcMagics, current_lab, load_ipython_extension
    from .send_view import SendView
    from .views import TABS, LiveView

__all__ = ["ChainEditor", "EditorChange", "LiveView", "TABS", "SendView", "SfcMagics",
           "current_lab", "load_ipython_extension"]

_WHERE = {"ChainEditor": "editor", "EditorChange": "editor", "LiveView": "views",
          "TABS": "views", "SendView": "send_view", "SfcMagics": "magics",
          "current_lab": "magics", "load_ipython_extension": "magics"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
