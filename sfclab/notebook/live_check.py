"""``%%chain`` cells checked as the student types (the JupyterLab extension calls this).

The extension (``labextension/src/live.js``) sends a ``%%chain`` cell's text to the
kernel a moment after each edit (debounced), as a silent request that neither
counts as a run nor enters the history, and evaluates :func:`check` in it.  If the
text is valid, its chains go into the notebook's Lab as running the cell would
(:meth:`~sfclab.lab.Lab.add`: the live views and a bound chain editor follow); if
not, the errors come back located as the cell shows them (the ``%%chain`` line is
line 1) for the extension to mark.  The Lab is unchanged by an invalid text.

Typing a chain's name makes names that are not meant (``w``, ``we``, ``web``): the
chains a cell gave the Lab at its last check (or, at the first, the chains of its
text before the edit) that its text no longer has are taken out again.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import SfclabError, SourceError
from ..ir.model import ChainSet

__all__ = ["check", "LiveResult"]

#: cell id -> the chain names its last valid check gave the Lab
_GIVEN: dict[str, tuple[str, ...]] = {}


class LiveResult(dict):
    """What :func:`check` found; its repr is JSON (what the extension reads)."""

    def __repr__(self) -> str:
        return json.dumps(self)


def check(cell_id: str, text: str, before: str = "", shell: Any = None) -> LiveResult:
    """Check a ``%%chain`` cell's *text*; apply it to the Lab when valid.

    Returns ``{"status": "ok", "chains": [...]}``, ``{"status": "error", "errors":
    [{line, column, width, message, hint}]}`` (lines and columns 1-based, as the cell
    shows them; line 0: the error has no place in the text), or ``{"status": "off",
    "reason": …}`` when there is nothing to check (not a ``%%chain`` cell, the sfclab
    magics not loaded).
    """
    from IPython.core.error import UsageError
    from IPython.core.magic_arguments import parse_argstring

    from .magics import in_cell

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("SfcMagics") if shell is not None else None
    first, _, body = text.partition("\n")
    if magics is None:
        return LiveResult(status="off", reason="the sfclab magics are not loaded")
    if not first.startswith("%%chain"):
        return LiveResult(status="off", reason="not a %%chain cell")
    line = first[len("%%chain"):]
    try:
        args = parse_argstring(magics.chain, line)
    except (UsageError, SystemExit) as e:
        return _errors([dict(line=1, column=1, width=len(first), message=str(e), hint="")])
    if not body.strip():
        return LiveResult(status="off", reason="the cell is empty")
    lab = magics.lab
    try:
        given = tuple(lab.add(body, name=args.name, arch=args.arch, source="<cell>"))
        stale = [n for n in _GIVEN.get(cell_id) or _names(before, lab)
                 if n not in given and n in lab.chains]
        if stale:                           # names typed on the way (w, we, web)
            lab.set_chains(ChainSet({k: c for k, c in lab.chains.chains.items()
                                     if k not in stale}), source="<cell>")
    except SfclabError as e:
        in_cell(e, f"%%chain{line}".rstrip(), body)
        where = e if isinstance(e, SourceError) and e.line else None
        return _errors([dict(line=where.line if where else 0,
                             column=where.column if where else 0,
                             width=max(1, getattr(where, "width", 1) or 1) if where else 0,
                             message=e.message, hint=e.hint)])
    _GIVEN[cell_id] = given
    return LiveResult(status="ok", chains=list(given))


def _names(text: str, lab: Any) -> tuple[str, ...]:
    """The chain names of a ``%%chain`` cell's earlier *text* (none if it does not parse)."""
    from ..lang import parse

    body = text.partition("\n")[2]
    try:
        return tuple(parse(body, source="<cell>", catalog=lab.catalog).names()) \
            if body.strip() else ()
    except SfclabError:
        return ()


def _errors(errors: list[dict]) -> LiveResult:
    return LiveResult(status="error", errors=errors)
