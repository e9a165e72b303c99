"""Whether the target runs the Lab's chains, and if not, what differs and what applies it.

After a push, editing a chain (re-running its ``%%chain`` cell) changes the Lab,
not the switch: until ``%sfc update`` (or a push) the switch runs the old program
and entries. :func:`drift` says so: which chains were added, changed or removed
since, and whether table entries can apply the change (``%sfc update``) or the
NF slots change and it takes a program reload (``%sfc update --reload`` or
``%sfc push``), decided as :meth:`sfclab.Lab.update` decides it. Nothing is
written to the target.

>>> from sfclab import Lab
>>> drift(Lab()) is None          # nothing pushed: nothing runs, nothing differs
True
"""

from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import SfclabError
from ..ir.model import ChainSet

__all__ = ["Drift", "drift", "chain_changes"]


@dataclass(frozen=True)
class Drift:
    """The Lab's chains against those the target runs."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: "entries" (``%sfc update`` applies it), "reload" (the NF slots change) or
    #: "unknown" (a network: ``%sfc update`` finds out).
    needs: str = "entries"
    reason: str = ""

    @property
    def command(self) -> str:
        """The magic that applies the change."""
        if self.needs == "entries":
            return "%sfc update"
        if self.needs == "reload":
            return "%sfc update --reload (or %sfc push)"
        return "%sfc update (with --reload if NF slots must change)"

    @property
    def python(self) -> str:
        """The same in Python."""
        return "lab.update()" if self.needs != "reload" else \
            "lab.update(allow_reload=True) (or lab.push())"

    def what(self) -> str:
        """``web changed, ssh added``."""
        parts = [f"{', '.join(names)} {word}" for word, names in
                 (("changed", self.changed), ("added", self.added), ("removed", self.removed))
                 if names]
        return "; ".join(parts)

    def message(self, *, python: bool = False) -> str:
        how = {"entries": "table entries can apply it",
               "reload": f"it needs a program reload ({self.reason})" if self.reason
               else "it needs a program reload",
               "unknown": "the network still runs the old placement"}[self.needs]
        return (f"the target still runs the chains of the last push or update, not the Lab's: "
                f"{self.what()}. What follows is the old program; {how}: "
                f"{self.python if python else self.command}")

    def __str__(self) -> str:
        return self.message()


def chain_changes(running: ChainSet, chains: ChainSet) -> tuple[tuple[str, ...], ...]:
    """``(added, changed, removed)`` chain names from *running* to *chains*."""
    old, new = running.chains, chains.chains
    return (tuple(n for n in new if n not in old),
            tuple(n for n in new if n in old and old[n] != new[n]),
            tuple(n for n in old if n not in new))


_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def drift(lab: Any) -> Drift | None:
    """How *lab*'s chains differ from those its target runs (None: they do not, or
    nothing was pushed)."""
    net = getattr(lab, "_net", None)
    if net is not None:
        running = net.running
        if running is None:
            return None
        changes = chain_changes(running.chains, lab.chains)
        return Drift(*changes, needs="unknown") if any(changes) else None
    gen = lab.pushed
    if gen is None:
        return None
    changes = chain_changes(gen.compiled.chains, lab.chains)
    if not any(changes):
        return None
    key = (id(gen), tuple(c.signature() for c in lab.chains))
    memo = _MEMO.get(lab)
    if memo is not None and memo[0] == key:
        return memo[1]
    needs, reason = _needs(lab, gen)
    out = Drift(*changes, needs=needs, reason=reason)
    _MEMO[lab] = (key, out)
    return out


def _needs(lab: Any, gen: Any) -> tuple[str, str]:
    """("entries" | "reload", why): whether the chains compile to the installed program
    (the NF slots kept), as :meth:`sfclab.Lab.update` tries."""
    from ..codegen import generate
    from ..compiler import compile

    session = getattr(lab.target, "session", None)
    if session is None or not hasattr(session, "options_for_update"):
        return "reload", ""
    options, slots = session.options_for_update()
    options = dataclasses.replace(options, bindings=dict(lab.bindings))
    try:
        compiled = compile(lab.chains, arch=gen.arch, catalog=lab.catalog,
                           **{**lab.options, "pipeline": slots})
        new = generate(compiled, options=options)
    except SfclabError as e:
        return "reload", e.message
    plan = session.plan(new)
    return ("reload", plan.reason) if plan.kind == "reload" else ("entries", "")
