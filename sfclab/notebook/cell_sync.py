"""``%%chain`` cells and the Lab's chains: a re-run cell never silently discards a change.

A ``%%chain`` cell is where its chains came from, but not the only way they change
afterwards: the chain editor (``lab.editor``, ``%sfc edit``) makes every drawn edit the
Lab's chains, and ``lab.add``, ``lab.set_chains`` and ``lab.remove`` do the same from
Python.  The cell keeps its old text.  Re-running it would replace the newer chains
with that old text, so :class:`CellSync` remembers, per chain name, what ``%%chain``
cells last put in the Lab and who changed each chain since, and :meth:`CellSync.check`
refuses a cell that would replace a chain changed since by anything other than a
``%%chain`` cell, or bring back one removed since, or replace a chain drawn in the
editor that no cell wrote (:class:`StaleCellError`: which chains, who changed them,
and a line diff of the cell's text against the Lab's).  The Lab is then unchanged.
The live check of a cell as it is typed (:mod:`.live_check`) applies the same rule.

The way on is one option of the same cell: ``%%chain --from-lab`` replaces the
cell's text with the Lab's text of its chains (the drawing's edits are kept; nothing
changes in the Lab); ``%%chain --force`` runs the cell's text anyway (the edits are
discarded).  ``%sfc chains`` prints the Lab's chains as cell text.

One cell replacing what another cell put there is not a conflict: that is how a
``%%chain`` cell has always worked (a chain with a known name replaces it).

>>> from sfclab import Lab
>>> lab = Lab(); sync = CellSync(lab)
>>> sync.apply("chain web: firewall -> nat")
('web',)
>>> lab.set_chains("chain web: firewall -> nat -> l3fwd", source="<editor>")
('web',)
>>> sync.check("chain web: firewall -> nat")
Traceback (most recent call last):
...
sfclab.notebook.cell_sync.StaleCellError: <cell>:1:7: running this cell would discard ...
>>> print(sync.check("chain web: firewall -> nat -> l3fwd"))  # what the Lab has: fine
None
"""

from __future__ import annotations

import difflib
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import ChainError, SfclabError
from ..ir.model import ChainSet
from ..lang import format as format_chains
from ..lang import parse

if TYPE_CHECKING:
    from ..api.lab import Lab, LabChange

__all__ = ["CellSync", "StaleCellError", "Stale", "sync_of"]

#: Who made a change of the Lab's chains, by :attr:`LabChange.reason`.
WHO = {"edit": "the chain editor (or lab.set_chains)", "add": "lab.add",
       "remove": "lab.remove"}
OUTSIDE = "something other than a %%chain cell"


class Stale:
    """One chain of a cell that the Lab has changed (or removed) since a cell put it there."""

    def __init__(self, name: str, who: str, cell: str, lab: str | None, line: int,
                 column: int) -> None:
        self.name, self.who, self.cell, self.lab = name, who, cell, lab
        self.line, self.column = line, column

    def diff(self) -> list[str]:
        """The cell's text of the chain against the Lab's, as ``-``/``+`` lines."""
        if self.lab is None:
            return [f"    {self.name} is no longer in the Lab: running this cell brings it back"]
        lines = difflib.unified_diff(self.cell.splitlines(), self.lab.splitlines(),
                                     lineterm="", n=1)
        return [f"    {x}" for x in lines if not x.startswith(("---", "+++", "@@"))]

    def __repr__(self) -> str:
        return f"Stale({self.name!r}, by {self.who})"


class StaleCellError(ChainError):
    """A ``%%chain`` cell would discard changes made since it ran: ``stale`` lists the
    chains (:class:`Stale`); the message names them and who changed them, the
    rendering shows what differs, ``-`` the cell's text, ``+`` the Lab's."""

    def __init__(self, stale: list[Stale], *, text: str) -> None:
        first = stale[0]
        what = "; ".join(f"{s.name!r} was {'removed' if s.lab is None else 'changed'} by "
                         f"{s.who}" for s in stale)
        super().__init__(
            f"running this cell would discard changes made since it ran: {what}",
            line=first.line, column=first.column, width=len(first.name), source="<cell>",
            text=text,
            hint="keep the Lab's chains: %%chain --from-lab (this cell gets the Lab's text); "
                 "discard the changes: %%chain --force; %sfc chains prints the Lab's chains")
        self.stale = stale

    def _render(self, kind: str) -> str:
        head, _, hint = super()._render(kind).rpartition("\nhint: ")
        body = []
        for s in self.stale:
            body.append(f"  {s.name} (- this cell, + the Lab):" if s.lab is not None
                        else f"  {s.name}:")
            body.extend(s.diff())
        return "\n".join([head, *body, f"hint: {hint}"])


_SYNCS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def sync_of(lab: Lab) -> CellSync:
    """The :class:`CellSync` of *lab* (one per Lab, made on first use: the magics make
    it with the Lab, so it sees every change)."""
    sync = _SYNCS.get(lab)
    if sync is None:
        sync = _SYNCS[lab] = CellSync(lab)
    return sync


class CellSync:
    """What ``%%chain`` cells put in one Lab, and who changed those chains since."""

    def __init__(self, lab: Lab) -> None:
        self._lab = weakref.ref(lab)
        #: chain name -> signature of the chain a %%chain cell last put in the Lab
        self.from_cells: dict[str, tuple] = {}
        #: chain name -> who changed it since (not a %%chain cell)
        self.changed_by: dict[str, str] = {}
        self._ours = False
        self._listeners: list[weakref.WeakMethod] = []
        lab.on_change(self._seen)

    def listen(self, method: Any) -> None:
        """Call the bound *method* (held weakly) after the cells' record changes
        (:meth:`took`, :meth:`removed`): a bound editor's status follows."""
        self._listeners.append(weakref.WeakMethod(method))

    def _told(self) -> None:
        self._listeners = [m for m in self._listeners if m() is not None]
        for m in list(self._listeners):
            fn = m()
            if fn is not None:
                fn()

    def behind(self) -> list[str]:
        """The chains whose ``%%chain`` cell is older than the Lab's version: changed
        since by something else (the cell's text would not give what runs)."""
        have = self.lab.chains
        return [n for n, sig in self.from_cells.items()
                if n in have and have[n].signature() != sig]

    @property
    def lab(self) -> Lab:
        lab = self._lab()
        if lab is None:
            raise SfclabError("the Lab of these cells is gone")
        return lab

    # -- what changed the Lab ------------------------------------------------------------------
    def _seen(self, change: LabChange) -> None:
        if self._ours:
            return
        who = WHO.get(change.reason, OUTSIDE)
        for name in (*change.added, *change.replaced, *change.removed):
            self.changed_by[name] = who

    def ours(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Call *fn* (a change of the Lab made by a cell or a magic) without counting it
        as a change made outside the cells."""
        self._ours = True
        try:
            return fn(*args, **kwargs)
        finally:
            self._ours = False

    def removed(self, names: tuple[str, ...]) -> None:
        """A magic removed *names* (``%sfc remove``): a cell may bring them back."""
        for n in names:
            self.from_cells.pop(n, None)
            self.changed_by.pop(n, None)
        self._told()

    # -- the cell ------------------------------------------------------------------------------
    def parsed(self, cell: str, name: str | None = None) -> ChainSet | None:
        """The cell's chains as the Lab would add them (None: the cell does not parse;
        the Lab says why when it adds them)."""
        try:
            new = parse(cell, source="<cell>", catalog=self.lab.catalog)
        except SfclabError:
            return None
        if name is not None and len(new) == 1:
            import dataclasses

            new = ChainSet.of([dataclasses.replace(next(iter(new)), name=name)])
        return new

    def stale(self, new: ChainSet) -> list[Stale]:
        """The chains of *new* (a cell's) that the Lab changed or removed since a
        ``%%chain`` cell put them there, or that were drawn in the chain editor and
        differ (a chain added from Python that no cell wrote, a cell may take over)."""
        have = self.lab.chains
        out = []
        for c in new:
            sig, mine = c.signature(), self.from_cells.get(c.name)
            if c.name in have:
                now = have[c.name].signature()
                if now == sig or now == mine:
                    continue
                if mine is None and self.changed_by.get(c.name) != WHO["edit"]:
                    continue           # never a cell's, not drawn: this cell takes it over
                lab_text = format_chains(ChainSet.of([have[c.name]]))
            elif c.name in self.from_cells and c.name in self.changed_by:
                lab_text = None                    # removed since, not by %sfc remove
            else:
                continue
            out.append(Stale(c.name, self.changed_by.get(c.name, OUTSIDE),
                             format_chains(ChainSet.of([c])), lab_text, c.line, c.column))
        return out

    def check(self, cell: str, name: str | None = None, *,
              parsed: ChainSet | None = None) -> None:
        """Raise :class:`StaleCellError` when running *cell* would discard changes made
        since (module docstring); *parsed*: the cell's chains, parsed already."""
        new = parsed if parsed is not None else self.parsed(cell, name)
        found = self.stale(new) if new is not None else []
        if found:
            raise StaleCellError(found, text=cell)

    def apply(self, cell: str, *, name: str | None = None, force: bool = False,
              **kwargs: Any) -> tuple[str, ...]:
        """Add the cell's chains to the Lab (``lab.add``) after :meth:`check` (skipped
        with *force*); returns the names added and records them as the cells'."""
        if not force:
            self.check(cell, name)
        names = self.ours(self.lab.add, cell, name=name, source="<cell>", **kwargs)
        self.took(names)
        return names

    def took(self, names: tuple[str, ...] | list[str]) -> None:
        """Record that a cell now says what the Lab has for *names*."""
        have = self.lab.chains
        for n in names:
            if n in have:
                self.from_cells[n] = have[n].signature()
            self.changed_by.pop(n, None)
        self._told()

    def lab_text(self, cell: str, name: str | None = None) -> tuple[str, list[str], list[str]]:
        """The Lab's text of the cell's chains (in the cell's order): ``(text, names in
        it, names of the cell the Lab no longer has)``; a cell that does not parse
        raises the parser's error."""
        new = self.parsed(cell, name)
        if new is None:
            parse(cell, source="<cell>", catalog=self.lab.catalog)     # raises, located
        have = self.lab.chains
        kept = [n for n in new.names() if n in have]
        text = format_chains(ChainSet.of([have[n] for n in kept])) if kept else ""
        return text, kept, [n for n in new.names() if n not in have]
