"""sfclab's widgets as the front end of a Lab (:mod:`sfclab.frontends`).

``import sfclab`` registers :data:`WIDGETS`; :meth:`sfclab.api.lab.Lab.live_view`
(:attr:`~sfclab.api.lab.Lab.view`) and :meth:`~sfclab.api.lab.Lab.editor` ask it for
a :class:`~.views.LiveView` and a chain editor bound to the Lab (:mod:`.lab_editor`).

>>> WIDGETS.view_key("p4, chains"), WIDGETS.view_key(None)
(('chains', 'p4'), None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .lab_editor import lab_editor
from .views import TABS, LiveView, normalize_show

__all__ = ["Widgets", "WIDGETS"]


class Widgets:
    """The live view and the bound chain editor, as ipywidgets and anywidgets."""

    def view_key(self, show: str | Iterable[str] | None) -> tuple[str, ...] | None:
        key = normalize_show(show) if show is not None else None
        return None if key == TABS else key

    def live_view(self, show: tuple[str, ...] | None,
                  installed: Callable[[], Any]) -> LiveView:
        return LiveView(show=show, installed=installed)

    def editor(self, lab: Any, chain: str | None, **kwargs: Any):
        return lab_editor(lab, chain, **kwargs)


#: The front end ``import sfclab`` registers.
WIDGETS = Widgets()
