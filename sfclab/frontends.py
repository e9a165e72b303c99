"""The front end that draws a Lab: how :meth:`Lab.live_view` and :meth:`Lab.editor` get made.

The Lab (``sfclab/api``) sits below the notebook layer (the widgets), so it does not
import it: a front end registers here how to make a live view and a bound chain
editor, and the Lab asks for them when a user does.  ``import sfclab`` registers
sfclab's widgets (:mod:`sfclab.notebook.front_end`), imported on first use, so a Lab
that is never shown imports no widget library, and works where there is none::

    >>> from sfclab import frontends
    >>> frontends.registered()
    True

A front end is any object with the three methods of :class:`FrontEnd`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .errors import SfclabError

__all__ = ["FrontEnd", "register", "registered", "front_end"]


class FrontEnd(Protocol):
    """What a front end offers a Lab."""

    def view_key(self, show: str | Iterable[str] | None) -> tuple[str, ...] | None:
        """The tabs of *show*, checked and in order; None: every tab (the full view)."""

    def live_view(self, show: tuple[str, ...] | None, installed: Callable[[], Any]) -> Any:
        """A new live view of the tabs *show* (None: all); *installed* says what the
        switch holds beyond the generated entries.  It has ``update(compiled, code,
        network=…)``, ``pushed()`` and ``comm`` (None once closed)."""

    def editor(self, lab: Any, chain: str | None, **kwargs: Any) -> Any:
        """A chain editor drawing *chain* of *lab*, bound to it."""


_provider: Callable[[], FrontEnd] | None = None
_front_end: FrontEnd | None = None


def register(provider: Callable[[], FrontEnd] | None) -> None:
    """Make *provider* (called once, on first use: it may import its widget library
    then) the front end Labs are drawn with; None: no front end."""
    global _provider, _front_end
    _provider, _front_end = provider, None


def registered() -> bool:
    """Whether a front end is registered (it is imported on first use only)."""
    return _provider is not None


def front_end() -> FrontEnd:
    """The registered front end; :class:`~sfclab.errors.SfclabError` says why there is
    none to be had (nothing registered, or its widget library is missing)."""
    global _front_end
    if _front_end is not None:
        return _front_end
    if _provider is None:
        raise SfclabError("no front end draws Labs here",
                          hint="import sfclab (it registers the notebook's widgets), or "
                               "sfclab.frontends.register(…) your own")
    try:
        _front_end = _provider()
    except ImportError as e:
        missing = e.name or "a widget library"
        raise SfclabError(f"the live view and the chain editor need {missing}, which is "
                          "not installed",
                          hint="pip install ipywidgets anywidget (a Lab without views "
                               "compiles, pushes and sends all the same)") from None
    return _front_end
