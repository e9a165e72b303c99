"""Pipelet plan: how each service path's packets cross the pipelets of a Tofino (Dejavu §3.3–3.4).

The placement pass puts every NF type on a *pipelet* (the ingress or the egress of a
pipe), in order, some side by side (:mod:`.placement`).  Each placed NF is a *slot*
of the program, numbered across the whole switch (``I0``'s first, then ``E0``'s,
``I1``'s …): slot ``i`` runs when bit ``i`` of the token's bitmap is set, whichever
pipelet holds it, so a token meant for one pipelet runs nothing on another.

A packet's path is a walk of *visits*, one pipelet each, starting at the ingress of
the entry pipe.  Between two NFs it goes the cheapest way Tofino allows (the
placement pass's costs, :func:`~.placement.step_costs`):

* ingress ``p`` → egress ``q``: the traffic manager (the ingress picks the egress port
  of pipe ``q``: the exit port when the path then ends, else pipe ``q``'s
  recirculation port);
* egress ``q`` → ingress ``q``: one recirculation (through that recirculation port);
* ingress ``p`` → ingress ``p`` goes through egress ``p`` and its recirculation port
  (one recirculation, as the plan counts a resubmission; a resubmit would replay the
  packet as it came in and lose the NFs' rewrites);
* egress ``p`` → ingress ``q`` (``q ≠ p``): ``I_p``, ``E_q``, then ``I_q`` (two).

A path ends where it must: ``output`` through the exit pipe's egress, ``drop`` in the
visit that ran its last NF, ``cpu`` from an ingress visit.  Each visit is a state of
the path's FSM (:func:`~.fsm.build_fsm` with this walk): its bitmap holds the path's
slots that visit runs, so the rewinder entries, branch, save and loop entries and the
initializer come out as on one pipeline, a state per visit.

>>> import sfclab          # l3fwd picks the port: an ingress pipelet's; 5 + 6 stages free
>>> c = sfclab.compile("chain c: firewall -> nat -> l3fwd", arch="tna", pipes=1, stages=7)
>>> plan = plan_pipelets(layout_of(c.placement), c.paths)
>>> [str(s) for s in plan.layout.slots]
['slot0_firewall@I0', 'slot1_l3fwd@I0', 'slot2_nat@E0']
>>> [str(v) for v in plan.visits["c/0"]], plan.recirculations("c/0")
(['I0', 'E0', 'I0', 'E0'], 1)
>>> [(s.state, bin(s.bitmap)) for s in plan.fsm.path("c/0").states]
[(0, '0b1'), (1, '0b100'), (2, '0b10'), (3, '0b0')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import CompileError
from ..ir.model import ServicePath
from .fsm import FSMPlan, TokenWidths, build_fsm, saved_nfs
from .placement import Pipelet, PlacementResult, cheapest_route

__all__ = ["PipeletSlot", "PipeletLayout", "PipeletPlan", "layout_of", "walk", "route",
           "plan_pipelets", "recirculation_port", "TOFINO_RECIRC_PORT"]

#: A Tofino 1 pipe's recirculation port is 68 in the pipe (``68 + 128 * pipe``).
TOFINO_RECIRC_PORT = 68


def recirculation_port(pipe: int) -> int:
    """Pipe *pipe*'s recirculation port on a Tofino 1 (a packet sent there goes through
    that pipe's egress and comes back into its ingress).

    >>> recirculation_port(0), recirculation_port(1), recirculation_port(3)
    (68, 196, 452)
    """
    return TOFINO_RECIRC_PORT + 128 * pipe


@dataclass(frozen=True, slots=True)
class PipeletSlot:
    """NF type ``nf`` on ``pipelet``: bit ``index`` of the token's bitmap; slots with the
    same ``group`` of a pipelet run side by side (no path runs two of them)."""

    index: int
    nf: str
    pipelet: Pipelet
    group: int

    @property
    def instance(self) -> str:
        return f"slot{self.index}_{self.nf}"

    def __str__(self) -> str:
        return f"{self.instance}@{self.pipelet}"


@dataclass(frozen=True, slots=True)
class PipeletLayout:
    """The switch's slots on its pipelets, and where packets enter and leave."""

    pipes: int
    slots: tuple[PipeletSlot, ...]
    entry_pipe: int = 0
    exit_pipe: int = 0

    def pipelets(self) -> tuple[Pipelet, ...]:
        return tuple(Pipelet(p, g) for p in range(self.pipes) for g in ("ingress", "egress"))

    def of(self, pipelet: Pipelet) -> tuple[PipeletSlot, ...]:
        """*pipelet*'s slots, in run order."""
        return tuple(s for s in self.slots if s.pipelet == pipelet)

    def groups(self, pipelet: Pipelet) -> tuple[tuple[PipeletSlot, ...], ...]:
        """*pipelet*'s slots, a tuple per group (side by side), the groups in run order."""
        out: dict[int, list[PipeletSlot]] = {}
        for s in self.of(pipelet):
            out.setdefault(s.group, []).append(s)
        return tuple(tuple(g) for _, g in sorted(out.items()))

    def slot_of(self, nf: str) -> PipeletSlot:
        for s in self.slots:
            if s.nf == nf:
                return s
        raise CompileError(f"NF {nf!r} has no slot on the switch's pipelets",
                           hint="place the same chains the program is built for")


def layout_of(result: PlacementResult, *, entry_pipe: int = 0, exit_pipe: int | None = 0
              ) -> PipeletLayout:
    """The slots of a placement's best plan, numbered pipelet by pipelet (I0, E0, I1 …)."""
    best = result.best
    slots: list[PipeletSlot] = []
    for pl, _ in best.pipelets:
        for g, group in enumerate(best.groups_of(pl)):
            for nf in group:
                slots.append(PipeletSlot(len(slots), nf, pl, g))
    return PipeletLayout(result.pipes, tuple(slots), entry_pipe,
                         0 if exit_pipe is None else exit_pipe)


def route(a: Pipelet, b: Pipelet) -> list[Pipelet]:
    """The visits after *a* up to *b*, the cheapest way (see the module docstring).

    >>> [str(p) for p in route(Pipelet(1, "egress"), Pipelet(0, "ingress"))]
    ['I1', 'E0', 'I0']
    """
    if a.gress == "ingress":
        return [b] if b.gress == "egress" else [Pipelet(b.pipe, "egress"), b]
    if b.gress == "ingress":
        return [b] if b.pipe == a.pipe else [Pipelet(a.pipe, "ingress"),
                                              Pipelet(b.pipe, "egress"), b]
    return [Pipelet(a.pipe, "ingress"), b]


def walk(nfs: Sequence[str], terminal: str, layout: PipeletLayout
         ) -> tuple[list[tuple[int, int]], tuple[Pipelet, ...]]:
    """``(visit, slot)`` for each NF of *nfs* and the pipelet of each visit, for a path
    leaving by *terminal*.  An NF placed on several pipelets (a replica) runs in the
    slot the placement's cheapest route takes (:func:`~.placement.route_of`)."""
    chosen = _chosen_slots(nfs, terminal, layout)
    visits = [Pipelet(layout.entry_pipe, "ingress")]
    placed: list[tuple[int, int]] = []
    pos = -1
    for s in chosen:
        if not (s.pipelet == visits[-1] and s.group > pos):
            visits += route(visits[-1], s.pipelet)
        placed.append((len(visits) - 1, s.index))
        pos = s.group
    last = visits[-1]
    if terminal == "cpu":
        if last.gress == "egress":
            visits.append(Pipelet(last.pipe, "ingress"))
    elif terminal != "drop":
        out = Pipelet(layout.exit_pipe, "egress")
        if last.gress == "ingress":
            visits.append(out)
        elif last != out:
            visits += [Pipelet(last.pipe, "ingress"), out]
    return placed, tuple(visits)


def _chosen_slots(nfs: Sequence[str], terminal: str, layout: PipeletLayout
                  ) -> list[PipeletSlot]:
    """The slot each NF of *nfs* runs in: those of the cheapest route over the layout's
    slots (an NF's only one, or one of its replicas), as the placement pass counts it."""
    at: dict[str, list[tuple[Pipelet, int]]] = {}
    slot_at: dict[tuple[Pipelet, int], PipeletSlot] = {}
    for pl in layout.pipelets():
        for k, s in enumerate(layout.of(pl)):
            at.setdefault(s.nf, []).append((pl, k))
            slot_at[pl, k] = s
    for nf in nfs:
        if nf not in at:
            layout.slot_of(nf)               # the error: an NF with no slot
    chosen = cheapest_route(nfs, at, pipes=layout.pipes, entry_pipe=layout.entry_pipe,
                            exit_pipe=layout.exit_pipe, terminal=terminal)[2]
    return [slot_at[b] for b in chosen]


def _recirculations(visits: Sequence[Pipelet]) -> int:
    return sum(1 for a, b in zip(visits, visits[1:]) if a.gress == "egress" and b.gress == "ingress")


@dataclass(frozen=True, slots=True)
class PipeletPlan:
    """The FSM of every service path over the pipelets (a state per visit) and the
    pipelet of each visit."""

    layout: PipeletLayout
    fsm: FSMPlan
    visits: Mapping[str, tuple[Pipelet, ...]]

    def recirculations(self, path: str) -> int:
        """How often the packets of *path* recirculate (egress → ingress)."""
        return _recirculations(self.visits[path])

    def weighted_recirculations(self) -> float:
        return round(sum(f.path.weight * self.recirculations(f.path.id)
                         for f in self.fsm.paths), 12)

    def pipelet(self, path: str, state: int) -> Pipelet:
        return self.visits[path][state]


def plan_pipelets(layout: PipeletLayout, paths: Sequence[ServicePath], *,
                  limits: TokenWidths = TokenWidths(),
                  saved: Mapping[str, tuple[str, ...]] | None = None) -> PipeletPlan:
    """The :class:`PipeletPlan` of *paths* on *layout*."""
    visits: dict[str, tuple[Pipelet, ...]] = {}

    def walker(p: ServicePath) -> tuple[list[tuple[int, int]], int]:
        placed, vs = walk(p.nfs, p.terminal, layout)
        visits[p.id] = vs
        return placed, len(vs)

    if saved is None:
        saved = {c: saved_nfs((d.node, d.kind, d.cond) for p in paths if p.chain == c
                              for d in p.decisions) for c in dict.fromkeys(p.chain for p in paths)}
    fsm = build_fsm(tuple(s.nf for s in layout.slots), paths, limits=limits, saved=saved,
                    walker=walker)
    plan = PipeletPlan(layout, fsm, visits)
    _check_egress_branches(plan)
    return plan


def _check_egress_branches(plan: PipeletPlan) -> None:
    """A branch taken in an egress pipelet cannot change where the packet goes after it
    (the ingress chose the port): the outcomes must leave that visit the same way."""
    by_id = {f.path.id: f for f in plan.fsm.paths}
    for b in plan.fsm.branches:
        src, dst = plan.visits[b.path], plan.visits[b.target]
        if src[b.state].gress != "egress":
            continue
        goes_on = (len(src) > b.state + 1, len(dst) > b.state + 1)
        ends = by_id[b.target].path.terminal == "drop" and not goes_on[1]
        if goes_on[0] != goes_on[1] and not ends:
            raise CompileError(f"{b.path}'s branch at {b.node!r} runs in egress pipelet "
                               f"{src[b.state]}, but its outcomes leave it differently",
                               hint="report this as a bug in sfclab: placement keeps "
                                    "branching NFs in an ingress pipelet")
