"""Whether the target runs the Lab's chains, and if not, what differs and what applies it.

After a push, editing a chain (re-running its ``%%chain`` cell) changes the Lab,
not the switch: until ``%sfc update`` (or a push) the switch runs the old program
and entries. :func:`drift` says so: which chains were added, changed or removed
since, and whether table entries can apply the change (``%sfc update``) or the
NF slots change and it takes a program reload (``%sfc update --reload`` or
``%sfc push``), decided as :meth:`sfclab.Lab.update` decides it. Nothing is
written to the target.

An NF of the pushed program redefined since (``%%nf``, ``lab.add_nf``) is drift
too: the switch runs the NF's old code.  :func:`redefined_nfs` compares each NF's
definition then and now (its compiler view and its parsed P4: comments and layout
aside), and the change takes a program reload.

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
from ..runtime.carry import changed_definitions

__all__ = ["Drift", "drift", "network_drift", "chain_changes", "redefined_nfs",
           "changed_definitions"]


@dataclass(frozen=True)
class Drift:
    """The Lab's chains against those the target runs."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: "entries" (``%sfc update`` applies it), "reload" (the NF slots or code change; on a
    #: network: on some switch, :attr:`switches`) or "push" (nothing is pushed, but a failed
    #: first push left its program on the switch: :attr:`holds`).
    needs: str = "entries"
    reason: str = ""
    #: NFs of the running program redefined since (``%%nf``): the switch runs their old code.
    nfs: tuple[str, ...] = ()
    #: Nothing is pushed, but the switch holds a program (``needs == "push"``): what it holds
    #: (:class:`sfclab.runtime.transaction.Stranded`: a failed first push's, no entries).
    holds: str = ""
    #: A network: ``(switch, "entries" | "reload", why)`` for each switch the change
    #: touches (empty on one switch, or when the change cannot be placed: :attr:`reason`).
    switches: tuple[tuple[str, str, str], ...] = ()
    #: A network: the NFs the new placement moves to other switches (their register state
    #: does not move with them), as :class:`sfclab.targets.network.update.MovedNF` says.
    moved: tuple[str, ...] = ()
    #: ``(switch, what)`` for each switch to reload whose program keeps state in registers
    #: (one switch: ``("", what)``): what the reload carries of it and what starts from
    #: zero (:class:`sfclab.runtime.carry.Carried`).
    state: tuple[tuple[str, str], ...] = ()
    network: bool = False

    @property
    def command(self) -> str:
        """The magic that applies the change."""
        if self.needs == "push":
            return "%sfc push"
        if self.needs == "entries":
            return "%sfc update"
        return "%sfc update --reload (or %sfc push)"

    @property
    def python(self) -> str:
        """The same in Python."""
        if self.needs == "push":
            return "lab.push()"
        return "lab.update()" if self.needs != "reload" else \
            "lab.update(allow_reload=True) (or lab.push())"

    def what(self) -> str:
        """``web changed; ssh added; NF tagger redefined (the switch runs its old code)``."""
        if self.needs == "push":
            return self.holds
        parts = [f"{', '.join(names)} {word}" for word, names in
                 (("changed", self.changed), ("added", self.added), ("removed", self.removed))
                 if names]
        if self.nfs:
            one = len(self.nfs) == 1
            where = "the switches run" if self.network else "the switch runs"
            parts.append(f"NF{'' if one else 's'} {', '.join(self.nfs)} redefined since "
                         f"(%%nf): {where} {'its' if one else 'their'} old code")
        if self.switches:
            state = dict(self.state)
            parts.append("switches that differ: " + ", ".join(
                f"{s} ({'entries' if k != 'reload' else 'a program reload'}"
                f"{': ' + state[s] if s in state else ''})"
                for s, k, _ in self.switches))
        parts += list(self.moved)
        if not self.network:
            parts += [what for _, what in self.state]
        return "; ".join(parts)

    def headline(self) -> str:
        """What runs, in a few words (the chains, or only the NF code, differ)."""
        if self.needs == "push":
            return "nothing is pushed"
        who = "the network" if self.network else "the target"
        if self.changed or self.added or self.removed:
            return f"{who} still runs the chains of the last push or update, not the Lab's"
        return f"{who} still runs the NF code of the last push or update, not the Lab's"

    def message(self, *, python: bool = False) -> str:
        if self.needs == "push":
            return (f"{self.headline()}: {self.what()}. Push again once the cause of the "
                    f"failure is fixed: {self.python if python else self.command}")
        how = {"entries": "table entries can apply it",
               "reload": f"it needs a program reload ({self.reason})" if self.reason
               else "it needs a program reload"}[self.needs]
        return (f"{self.headline()}: {self.what()}. What follows is the old program; {how}: "
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
        return network_drift(net, lab.chains)
    gen = lab.pushed
    if gen is None:
        stranded = getattr(getattr(lab.started_target, "session", None), "stranded", None)
        return None if stranded is None else \
            Drift(added=tuple(lab.chains.names()), needs="push", holds=stranded.text())
    changes = chain_changes(gen.compiled.chains, lab.chains)
    key = (id(gen), id(lab.catalog), tuple(c.signature() for c in lab.chains))
    memo = _MEMO.get(lab)
    if memo is not None and memo[0] == key:
        return memo[1]
    nfs = redefined_nfs(gen.compiled, lab.catalog)
    out = None
    if any(changes) or nfs:
        needs, reason, carried = _needs(lab, gen)
        state = (("", "; ".join(c.text(done=False) for c in carried)),) if carried else ()
        out = Drift(*changes, needs=needs, reason=reason, nfs=nfs, state=state)
    _MEMO[lab] = (key, out)
    return out


def network_drift(side: Any, chains: ChainSet) -> Drift | None:
    """How *chains* differ from those the network of *side* (a
    :class:`~sfclab.api.labnet.LabNetwork`) runs, with its catalogue's NFs: the chains
    and NFs that differ, each switch the update would touch and whether it takes table
    entries or a program reload there (:meth:`sfclab.network.Network.plan_update`: the
    update's own plan, nothing written), and the NFs it would move between switches.
    Nothing pushed, but a failed push left programs on switches: what each holds."""
    running = side.running
    if running is None:
        held = side.holding()
        return None if not held else Drift(added=tuple(chains.names()), needs="push",
                                           holds=f"{held}: no chain runs", network=True)
    changes = chain_changes(running.chains, chains)
    nfs = side.redefined()
    if not any(changes) and not nfs:
        return None
    key = (id(running.program), id(side.catalog), tuple(c.signature() for c in chains))
    memo = _MEMO.get(side)
    if memo is not None and memo[0] == key:
        return memo[1]
    try:
        plan = running.plan_update(chains, catalog=side.catalog)
    except SfclabError as e:             # cannot be placed or generated: update says why
        out = Drift(*changes, needs="reload", reason=e.message, nfs=nfs, network=True)
    else:
        touched = tuple((s, p.kind, p.reason) for s, p in plan.switches.items()
                        if p.kind != "none")
        reloads = "; ".join(f"{s}: {why}" for s, k, why in touched if k == "reload")
        state = tuple((s, "; ".join(c.text(done=False) for c in p.carried))
                      for s, p in plan.switches.items() if p.kind == "reload" and p.carried)
        out = Drift(*changes, needs="reload" if reloads else "entries", reason=reloads,
                    nfs=nfs, switches=touched, moved=tuple(str(m) for m in plan.moved),
                    state=state, network=True)
    _MEMO[side] = (key, out)
    return out


def redefined_nfs(compiled: Any, catalog: Any) -> tuple[str, ...]:
    """The NFs *compiled* (a :class:`~sfclab.compiler.CompiledChains`) uses whose
    definition in *catalog* differs from the one it was compiled with: another
    compiler view (layer, field, tables …) or other P4 (comments and layout aside).

    >>> from sfclab import Lab
    >>> lab = Lab()
    >>> tagger = ("control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {\\n"
    ...           "    apply { sfc.metadata = 1; }\\n}")
    >>> _ = lab.add_nf(tagger); _ = lab.add("chain t: tagger -> l3fwd")
    >>> before = lab.compiled
    >>> _ = lab.add_nf("// the same, commented\\n" + tagger)
    >>> redefined_nfs(before, lab.catalog)
    ()
    >>> _ = lab.add_nf(tagger.replace("= 1", "= 2"))
    >>> redefined_nfs(before, lab.catalog)
    ('tagger',)
    """
    old_catalog = compiled.catalog
    if old_catalog is catalog:
        return ()
    return changed_definitions({t for c in compiled.chains for t in c.nf_types()},
                               old_catalog, catalog)


def _needs(lab: Any, gen: Any) -> tuple[str, str, tuple]:
    """("entries" | "reload", why, what a reload carries of the registers: Carried ...):
    whether the chains compile to the installed program (the NF slots kept), as
    :meth:`sfclab.Lab.update` tries."""
    from ..codegen import generate
    from ..compiler import compile

    session = getattr(lab.target, "session", None)
    if session is None or not hasattr(session, "options_for_update"):
        return "reload", "", ()
    options, slots = session.options_for_update()
    options = dataclasses.replace(options, bindings=dict(lab.bindings))
    try:
        compiled = compile(lab.chains, arch=gen.arch, catalog=lab.catalog,
                           **{**lab.options, "pipeline": slots})
        new = generate(compiled, options=options)
    except SfclabError as e:
        return "reload", e.message, _would_carry(lab, session, gen.arch)
    plan = session.plan(new)
    return (("reload", plan.reason, tuple(plan.carried)) if plan.kind == "reload"
            else ("entries", "", ()))


def _would_carry(lab: Any, session: Any, arch: str) -> tuple:
    """What a reload to the Lab's program (as :meth:`sfclab.Lab.update` makes it when the
    installed slots cannot run the chains) would carry of the registers."""
    try:
        return tuple(session.would_carry(lab.generated(arch)))
    except SfclabError:                     # the chains do not compile: the update says why
        return ()
