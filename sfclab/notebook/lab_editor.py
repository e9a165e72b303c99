"""A chain editor bound to a :class:`~sfclab.lab.Lab`: drawing as a way in.

:func:`lab_editor` (``lab.editor(CHAIN)``, ``%sfc edit [CHAIN]``) returns a
:class:`~sfclab.notebook.editor.ChainEditor` whose text is the Lab's chains, one of
them drawn.  The text of ``%%chain`` cells and the drawing stay one source of truth:

* every valid edit of the drawing (or of the editor's text box) becomes the Lab's
  chains (:meth:`~sfclab.lab.Lab.set_chains`), as re-running a ``%%chain`` cell
  does: the live views follow; what the Lab refuses (a placement that does not fit,
  weights past 1 …) is shown in the editor, and the Lab stays as it was;
* every change of the Lab's chains from elsewhere (a ``%%chain`` cell re-run,
  ``%sfc remove``, another editor) redraws the editor (one undo step);
* a drawing newer than the ``%%chain`` cell that wrote the chain is said in the
  toolbar's status: that cell's re-run is refused until ``--from-lab`` copies the
  drawing into it or ``--force`` discards it (:mod:`.cell_sync`);
* the **Push** button pushes the Lab to its target (``%sfc push``), or updates
  it when it runs chains already (``%sfc update --reload``).

>>> from sfclab.lab import Lab
>>> lab = Lab()
>>> lab.add("chain web: firewall -> nat")
('web',)
>>> ed = lab.editor("web")
>>> ed.add_nf("l3fwd")            # an NF not connected yet: the Lab keeps its chains
'l3fwd'
>>> [str(p) for p in lab.compiled.paths]
['web/0 [1]: input -> firewall -> nat -> output']
>>> ed.text = "chain web: firewall -> nat -> l3fwd"      # the text box (or a drawing)
>>> [str(p) for p in lab.compiled.paths]
['web/0 [1]: input -> firewall -> nat -> l3fwd -> output']
>>> lab.add("chain web: ids -> l3fwd")
('web',)
>>> sorted(n["id"] for n in ed.nodes)
['ids', 'input', 'l3fwd', 'output']
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from ..errors import SfclabError
from ..lang import format as format_chains
from .editor import ChainEditor, EditorChange
from .cell_sync import sync_of
from .editor_text import err

if TYPE_CHECKING:
    from ..api.lab import Lab, LabChange

__all__ = ["lab_editor", "LabBinding"]


def lab_editor(lab: Lab, chain: str | None = None, **kwargs: Any) -> ChainEditor:
    """An editor drawing *chain* of *lab* (default: its first chain; a name the Lab
    does not have starts a new chain of that name), bound to the Lab."""
    names = lab.chains.names()
    name = chain or (names[0] if names else _fresh(names))
    kwargs.setdefault("debounce", 0.3)
    ed = ChainEditor(catalog=lab.catalog, chain_name=name,
                     text=format_chains(lab.chains) if names else "", **kwargs)
    if name not in lab.chains:      # a new chain: drawn beside the Lab's chains
        ed.new_chain(name)
    LabBinding(lab, ed)
    return ed


def _fresh(names: list[str]) -> str:
    k = 1
    while f"chain{k}" in names:
        k += 1
    return f"chain{k}"


class LabBinding:
    """Keeps one editor and one Lab in step (both ways); the editor holds it (as
    ``editor.binding``), the Lab only a weak reference (a closed editor is dropped)."""

    def __init__(self, lab: Lab, editor: ChainEditor) -> None:
        self.lab = lab
        self._editor = weakref.ref(editor)
        self._busy = False            # applying a change from one side to the other
        editor.binding = self
        editor.push_action = self.push
        editor.on_change(self._from_editor)
        self._hook = self._make_hook()
        lab.on_change(self._hook)
        self._cells = sync_of(lab)
        self._cells.listen(self._cells_changed)
        self._state(**self._summary())

    # -- editor -> Lab -------------------------------------------------------------------------
    def _from_editor(self, change: EditorChange) -> None:
        ed = self._editor()
        if ed is None or self._busy:
            return
        if change.chains is None:
            self._state(status="not in the Lab: the drawing has problems (below)", error=True)
            return
        if _same(change.chains, self.lab.chains):
            self._state(**self._summary())
            return
        self._busy = True
        try:
            self.lab.set_chains(change.text, source="<editor>")
        except SfclabError as e:
            ed.errors = [*ed.errors, err("chain", _ids_named(ed, str(e)), f"the Lab refused "
                                     f"this: {e.message}", getattr(e, "hint", "") or "")]
            self._state(status=f"not in the Lab: {e.message}", error=True,
                        detail=str(e))
            return
        finally:
            self._busy = False
        self._state(**self._summary())

    # -- Lab -> editor -------------------------------------------------------------------------
    def _make_hook(self):
        me = weakref.ref(self)

        def hook(change: LabChange) -> None:
            binding = me()
            if binding is None or binding._editor() is None or \
                    getattr(binding._editor(), "comm", True) is None:
                binding.lab.on_change(hook, remove=True) if binding is not None else None
                return
            binding._from_lab(change)
        return hook

    def _from_lab(self, change: LabChange) -> None:
        ed = self._editor()
        if ed is None or self._busy:
            return
        if change.reason == "nf":               # a new NF: the palette has it too
            ed.catalog = self.lab.catalog
            ed.palette = ed._palette()
        ed.flush()
        if ed._chains is not None and _same(ed._chains, self.lab.chains):
            self._state(**self._summary())
            return
        self._busy = True
        try:
            ed.text = format_chains(self.lab.chains)
        finally:
            self._busy = False
        self._state(**self._summary())

    # -- push ----------------------------------------------------------------------------------
    def push(self) -> str:
        """The Push button: push the Lab to its target (every switch of its network),
        or update the target when it runs chains already; returns what was done."""
        self._state(busy=True, status="pushing…")
        try:
            if self._network() or self.lab.pushed is None:
                n = self.lab.push()
                said = f"pushed: {n} entries" + (" on every switch" if self._network() else "")
                detail = said
            else:
                said, detail = _said(self.lab.update(allow_reload=True))
        except SfclabError as e:
            self._state(status=f"push failed: {e.message}", error=True, detail=str(e))
            return str(e)
        self._state(status=said, detail=detail)
        return detail

    # -- internals -----------------------------------------------------------------------------
    def _network(self) -> bool:
        try:
            return self.lab.topology is not None
        except SfclabError:           # no topology: one switch
            return False

    def _summary(self) -> dict[str, str]:
        """The status (and its tooltip) when the Lab has the drawing: its chains, and
        which of them are newer than the ``%%chain`` cell that wrote them."""
        names = self.lab.chains.names()
        said = f"in the Lab: {', '.join(names)}" if names else "the Lab has no chains"
        behind = self._cells.behind()
        if not behind:
            return {"status": said}
        one, which = len(behind) == 1, ", ".join(behind)
        return {"status": f"{said} · {which}: newer than {'its' if one else 'their'} "
                          f"%%chain cell (run {'it' if one else 'them'} with --from-lab)",
                "detail": f"{said}. The drawing of {which} is newer than the %%chain cell "
                          f"that wrote {'it' if one else 'them'}: re-running that cell as it "
                          f"is would be refused; run it with --from-lab to copy the drawing "
                          f"there (or --force to discard the drawing)"}

    def _cells_changed(self) -> None:
        """A %%chain cell took the Lab's text (or was run): say what is newer now."""
        status = self._editor().lab_state.get("status", "") if self._editor() else ""
        if status.startswith(("in the Lab", "the Lab has")):
            self._state(**self._summary())

    def _state(self, *, status: str, error: bool = False, busy: bool = False,
               detail: str = "") -> None:
        ed = self._editor()
        if ed is None:
            return
        pushed = self.lab.pushed is not None and not self._network()
        ed.lab_state = {"bound": True, "status": status, "error": error, "busy": busy,
                        "detail": detail or status,
                        "push_label": "Update" if pushed else "Push"}


def _said(plan: Any) -> tuple[str, str]:
    """What an update with reloads allowed did, in a few words, and the details."""
    kind = getattr(plan, "kind", "")
    if kind == "reload":
        return "updated: reloaded the program", f"reloaded the program: {plan.reason}"
    if kind == "none":
        return "updated: nothing to change", "the switch runs these chains already"
    return "updated: by table entries", str(plan)


def _same(a, b) -> bool:
    """Whether two chain sets have the same chains (names, order aside, and contents)."""
    return {c.name: c.signature() for c in a} == {c.name: c.signature() for c in b}


def _ids_named(ed: ChainEditor, message: str) -> list[str]:
    """The drawn nodes a Lab's error message names (quoted), to mark them."""
    return [n["id"] for n in ed.nodes if n["kind"] == "nf" and f"'{n['id']}'" in message]
