"""``%%chain`` cells checked as the student types (the JupyterLab extension calls this).

The extension (``labextension/src/live.js``) sends a ``%%chain`` cell's text to the
kernel a moment after each edit (debounced), as a silent request that neither
counts as a run nor enters the history, and evaluates :func:`check` in it.  If the
text is valid, its chains go into the notebook's Lab as running the cell would
(:meth:`~sfclab.lab.Lab.add`: the live views and a bound chain editor follow); if
not, the errors come back located as the cell shows them (the ``%%chain`` line is
line 1) for the extension to mark.  The Lab is unchanged by an invalid text.

As running the cell does, a text valid at last keeps the Lab's other chains, and the
chains the cell named before (a re-run keeps them too: ``%sfc remove`` drops one); and
a text that would discard changes made since to its chains (a drawing in the chain
editor: :mod:`.cell_sync`) is marked, not applied, unless the line says ``--force``.  Only
the names typed on the way (``w``, ``we`` on the way to ``web``) that the check itself
brought into the Lab go again once the text no longer has them.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from ..errors import SfclabError, SourceError
from ..ir.model import ChainSet

__all__ = ["check", "LiveResult"]

#: Lab -> cell id -> the chain names the checks of that cell brought into it (typed ones)
_TYPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class LiveResult(dict):
    """What :func:`check` found; its repr is JSON (what the extension reads)."""

    def __repr__(self) -> str:
        return json.dumps(self)


def check(cell_id: str, text: str, shell: Any = None) -> LiveResult:
    """Check a ``%%chain`` cell's *text*; apply it to the Lab when valid.

    Returns ``{"status": "ok", "chains": [...]}``, ``{"status": "error", "errors":
    [{line, column, width, message, hint}]}`` (lines and columns 1-based, as the cell
    shows them; line 0: the error has no place in the text), or ``{"status": "off",
    "reason": …}`` when there is nothing to check (not a ``%%chain`` cell, the sfclab
    magics not loaded).
    """
    from IPython.core.error import UsageError
    from IPython.core.magic_arguments import parse_argstring

    from ..lang import parse
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
    if args.from_lab:
        return LiveResult(status="off", reason="--from-lab takes the Lab's text when run")
    lab, cell, sync = magics.lab, (f"%%chain{line}".rstrip(), body), magics.cell_sync
    prior = lab.chains
    typed = _TYPED.setdefault(lab, {}).setdefault(cell_id, set())
    try:
        new = parse(body, source="<cell>", catalog=lab.catalog)
        names = {args.name} if args.name else set(new.names())
        if not args.force:                  # as a run: never discard a drawing silently
            sync.check(body, args.name, parsed=None if args.name else new)
        gone = [n for n in prior.names() if n in typed and n not in names]
        try:
            if gone:                        # typed on the way (w, we, web): out first
                sync.ours(lab.set_chains, ChainSet({k: c for k, c in prior.chains.items()
                                                    if k not in gone}), source="<cell>")
            given = tuple(sync.ours(lab.add, body, name=args.name, arch=args.arch,
                                    source="<cell>"))
        except SfclabError:
            if lab.chains is not prior:     # as it was
                sync.ours(lab.set_chains, prior, source="<cell>")
            raise
    except SfclabError as e:
        return _errors([_located(in_cell(e, *cell))])
    sync.removed(tuple(gone))
    sync.took(given)
    typed.difference_update(gone)
    typed.update(n for n in given if n not in prior)
    return LiveResult(status="ok", chains=list(given))


def _located(e: SfclabError) -> dict:
    where = e if isinstance(e, SourceError) and e.line else None
    if where is None:
        return dict(line=0, column=0, width=0, message=e.message, hint=e.hint)
    return dict(line=where.line, column=where.column, width=max(1, where.width or 1),
                message=e.message, hint=e.hint)


def _errors(errors: list[dict]) -> LiveResult:
    return LiveResult(status="error", errors=errors)
