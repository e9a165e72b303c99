"""Network-wide updates that no packet sees half-applied.

Each switch is driven by its own :class:`~sfclab.runtime.session.Session`.  A
change of the network's chains is written in three steps, each on **every**
switch before the next begins (the one-switch update's steps, stretched over the
network):

1. ``first`` — the new entries: a changed chain has new service path ids (spi)
   everywhere, and new local path ids on each switch, so nothing reaches them yet;
2. ``flip`` — the ingress switches' classifier entries move the chain's new
   packets to the new spis;
3. *drain* (the packets already in flight leave the network), then ``last`` — the
   entries only old packets could reach are removed.

A packet classified before the flip runs the old configuration on every switch
it crosses; one classified after it, the new one.  If a step fails on a switch
(a refusal, a transport error, a timeout), everything written so far, on every
switch, is taken back (:func:`sfclab.runtime.transaction.apply_staged`, which a
one-switch update uses too); a switch reloaded for the update gets its old
program pushed again.  A reloaded switch carries its NFs' register cells into its new
program where they keep their meaning (:mod:`sfclab.runtime.carry`); an NF the update
moves to another switch takes its cells along, written there between ``first`` and
``flip`` (:mod:`.moves`).  A switch whose NF
slots change needs a program reload (``allow_reload``), which is not hitless for
the packets crossing that switch at that moment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ...codegen import Generated
from ...errors import SfclabError, TargetError
from ...runtime.session import Session, UpdatePlan
from ...runtime.transaction import apply_staged, reworded, snapshot, undo_push
from .moves import Mover

__all__ = ["NetworkUpdatePlan", "MovedNF", "plan_update", "update_network"]


@dataclass(frozen=True)
class MovedNF:
    """An NF of a chain that the new placement runs on another node: *stateful* when the
    old node's program keeps state for it in registers, which do not move with it."""

    chain: str
    instance: str
    old: str
    new: str
    stateful: bool = False
    #: Its registers' cells carry (:mod:`.moves`): old register name -> new, and the cells.
    names: tuple[tuple[str, str], ...] = ()
    cells: int = 0
    #: A stateful NF whose cells do not carry: why not.
    why: str = ""
    #: The update carried them.
    done: bool = False

    def __str__(self) -> str:
        """``web's nat moves s2 -> s3 (its register state stays behind: it starts
        from zero on s3)``, or ``… (carried its registers: 3 registers, 3072 cells)``."""
        n = len(self.names)
        if self.names:
            why = (f" ({'carried its' if self.done else 'its'} registers"
                   f"{'' if self.done else ' move with it'}: {n} register{'s' if n != 1 else ''}"
                   f", {self.cells} cells)")
        elif self.stateful:
            why = (f" (its register state stays behind: it starts from zero on {self.new}"
                   f"{': ' + self.why if self.why else ''})")
        else:
            why = ""
        return f"{self.chain}'s {self.instance} moves {self.old} -> {self.new}{why}"


@dataclass
class NetworkUpdatePlan:
    """What an update does on each switch (``entries``, ``reload`` or ``none``), and the
    NFs it moves between switches (``moved``)."""

    switches: dict[str, UpdatePlan] = field(default_factory=dict)
    moved: list[MovedNF] = field(default_factory=list)

    @property
    def kind(self) -> str:
        kinds = {p.kind for p in self.switches.values()}
        return "reload" if "reload" in kinds else "entries" if "entries" in kinds else "none"

    @property
    def writes(self) -> int:
        return sum(p.writes for p in self.switches.values())

    def reloads(self) -> list[str]:
        return [s for s, p in self.switches.items() if p.kind == "reload"]

    def __str__(self) -> str:
        if self.kind == "none":
            return "nothing to change"
        lines = [f"network update: {self.kind} ({self.writes} writes)"]
        lines += [f"  {s}: {p}" for s, p in self.switches.items() if p.kind != "none"]
        lines += [f"  {m}" for m in self.moved]
        return "\n".join(lines)


def plan_update(sessions: Mapping[str, Session], gens: Mapping[str, Generated]
                ) -> NetworkUpdatePlan:
    """What :func:`update_network` would do (nothing is written)."""
    return NetworkUpdatePlan({s: sessions[s].plan(g) for s, g in gens.items()})


def update_network(sessions: Mapping[str, Session], gens: Mapping[str, Generated], *,
                   allow_reload: bool = False, drain: Callable[[], None] = lambda: None,
                   moves: list | None = None) -> NetworkUpdatePlan:
    """Move every switch to its program in *gens* consistently (module docstring); the
    NFs that *moves* (:func:`.moves.judge_moves`) carries take their register cells to
    their new switch before the flip."""
    plan = plan_update(sessions, gens)
    reload = plan.reloads()
    if reload and not allow_reload:
        why = "; ".join(f"{s}: {plan.switches[s].reason}" for s in reload)
        raise TargetError(f"this change needs a program reload on {', '.join(reload)} ({why})",
                          hint="update(allow_reload=True), or push the network again")
    snaps = {s: snapshot(sessions[s]) for s in reload}     # program, entries, registers
    mover = Mover(sessions, moves or [], reload)
    pushed = []
    try:
        mover.read_early()
        for s in reload:                   # each carries its NFs' register cells
            sessions[s].push(gens[s], carry=True)
            pushed.append(s)
        staged = {s: sessions[s].stage(gens[s], p) for s, p in plan.switches.items()
                  if p.kind != "reload"}
        apply_staged(sessions, staged, drain=drain, before_flip=mover.carry)
    except SfclabError as err:
        undone = mover.undo()
        if undone:
            err = reworded(err, f"{err.message}; putting back the registers written on the "
                                f"new switches failed ({undone})")
        # the reloaded switches run their old programs again, with entries and registers
        left = {s: why for s in reversed(pushed) if (why := undo_push(sessions[s], snaps[s]))}
        if not pushed:
            raise err from None
        back = (f"reloaded {', '.join(pushed)} and put back" if not left else
                "putting back the reloaded switches failed (" +
                "; ".join(f"{s}: {why}" for s, why in left.items()) + "): push again")
        raise reworded(err, f"{err.message}; {back}") from None
    for s in reload:
        plan.switches[s].done, plan.switches[s].carried = True, list(sessions[s].carried)
        plan.switches[s].kept = sessions[s].kept
    plan.moved = mover.done(moves or [])
    return plan

