"""Notebook front ends: the chain editor widget (and, later, magics and live views).

Importing this package is cheap: the widget module (anywidget, ipywidgets) is
imported on first use of :class:`ChainEditor`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .editor import ChainEditor, EditorChange

__all__ = ["ChainEditor", "EditorChange"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import editor

        return getattr(editor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
