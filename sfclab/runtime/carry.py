"""Carry an NF's register state across a program reload (P4NFV's state migration on one
switch), or decide that it starts from zero, and say why.

A reload swaps the program, and with it every register: the new program's start at
zero.  The cells of an NF's registers keep their meaning in the new program when it
is **the same NF** — same type, P4 code unchanged (:func:`changed_definitions`) — and
its registers have the same names (the slot aside), widths and sizes.  Register names
hold the slot (``SfcIngress.slot4_stateful_firewall.window_count``) and a reload can
renumber slots, so :func:`plan_carry` maps each old slot to its new one:

* an NF type in one slot before and after: that slot to that slot;
* an NF type in several slots: by the chains' NFs each slot serves (``(chain, NF)``
  pairs of the paths placed on it): an old slot goes to the one new slot that serves
  some of the same, when no other slot of the type shares them;
* otherwise (the slots split or merge the chains another way) it does not guess: the
  NF's registers start from zero and :class:`Carried` says so.

The cells are those the push's :func:`~.transaction.snapshot` read before the swap
(non-zero ones: the new program's start at zero); :func:`carry_updates` turns them
into writes to the new program's registers, which the push makes after its entries
(a failed write takes the push back, old program and cells included).  Cells are read
and written the way the switch takes them (:mod:`.registers`): over P4Runtime, or, on a
real BMv2 whose P4Runtime server answers UNIMPLEMENTED, over its Thrift runtime.  A
switch with no way in at all (BMv2 whose Thrift runtime cannot be reached) reloads all
the same, its registers from zero, and :class:`Carried` says so and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import SfclabError

__all__ = ["Carried", "CarryPlan", "plan_carry", "carry_updates", "slot_registers",
           "slot_instances",
           "served", "changed_definitions", "unsupported", "unsupported_why", "NO_REGISTER_IO"]


@dataclass(frozen=True)
class Carried:
    """What a reload did with one NF's registers: carried (*registers* of *cells* cells in
    all, from slot *old* to slot *new*), or started from zero (*why*).

    >>> print(Carried("stateful_firewall", 4, 1, registers=2, cells=8192))
    carried the registers of stateful_firewall (slot 4 -> 1: 2 registers, 8192 cells)
    >>> print(Carried("heavy_hitter", 0, None, why="its P4 code changed"))
    heavy_hitter's registers start from zero (its P4 code changed)
    """

    nf: str
    old: int
    new: int | None
    registers: int = 0
    cells: int = 0
    why: str = ""

    @property
    def carried(self) -> bool:
        return not self.why

    def __str__(self) -> str:
        return self.text()

    def text(self, *, done: bool = True) -> str:
        """What the reload did (*done*) or will do with the NF's registers."""
        if self.why:
            return f"{self.nf}'s registers start from zero ({self.why})"
        slots = f"slot {self.old} -> {self.new}: " if self.old != self.new else ""
        return (f"{'carried' if done else 'carries'} the registers of {self.nf} ({slots}"
                f"{self.registers} register{'s' if self.registers != 1 else ''}, "
                f"{self.cells} cells)")


@dataclass
class CarryPlan:
    """Old register name -> new register name for every register carried, and what each
    stateful NF slot gets (:class:`Carried`)."""

    names: dict[str, str]
    nfs: list[Carried]


def slot_registers(index: Any, instance: str) -> dict[str, Any]:
    """The P4Info registers of slot *instance* (``slot4_stateful_firewall``), by their
    name within the NF (``window_count``)."""
    out = {}
    for r in index.info.registers:
        head, sep, rest = r.preamble.name.partition(f"{instance}.")
        if sep and (not head or head.endswith(".")):
            out[rest] = r
    return out


def served(gen: Any) -> dict[int, frozenset]:
    """Slot index -> the ``(chain, NF instance)`` pairs of the paths placed on it."""
    out: dict[int, set] = {}
    for p in gen.composition.compiled.fsm.paths:
        for node, (_, slot) in zip(p.path.nodes, p.placement):
            out.setdefault(slot, set()).add((p.path.chain, node))
    return {k: frozenset(v) for k, v in out.items()}


def _shape(r: Any) -> tuple:
    return (r.size, r.type_spec.SerializeToString(deterministic=True))


def plan_carry(old_gen: Any, old_index: Any, new_gen: Any, new_index: Any) -> CarryPlan:
    """Which registers of *old_gen*'s program (P4Info *old_index*) carry into
    *new_gen*'s (*new_index*), slot by slot (module docstring)."""
    names: dict[str, str] = {}
    nfs: list[Carried] = []
    old_slots = [s for s in old_gen.composition.slots if slot_registers(old_index, s.instance)]
    if not old_slots:
        return CarryPlan(names, nfs)
    redefined = set(changed_definitions({s.nf for s in old_slots}, old_gen.compiled.catalog,
                                        new_gen.compiled.catalog))
    old_serves, new_serves = served(old_gen), served(new_gen)
    for nf in dict.fromkeys(s.nf for s in old_slots):
        olds = [s for s in old_slots if s.nf == nf]
        news = [s for s in new_gen.composition.slots if s.nf == nf]
        if not news:
            continue                       # the NF is gone: nothing keeps its state
        if nf in redefined:
            nfs += [Carried(nf, o.index, None, why="its P4 code changed") for o in olds]
            continue
        pairs = _pairs(olds, news, old_serves, new_serves)
        for o in olds:
            n = pairs.get(o.index)
            if n is None:
                why = ("the slots of the old and the new program serve its chains in "
                       "another split: sfclab does not guess which cells go where")
                nfs.append(Carried(nf, o.index, None, why=why))
                continue
            before = slot_registers(old_index, o.instance)
            after = slot_registers(new_index, n.instance)
            if {k: _shape(r) for k, r in before.items()} != \
                    {k: _shape(r) for k, r in after.items()}:
                nfs.append(Carried(nf, o.index, n.index,
                                   why="its registers' names, widths or sizes differ"))
                continue
            for k, r in before.items():
                names[r.preamble.name] = after[k].preamble.name
            nfs.append(Carried(nf, o.index, n.index, registers=len(before),
                               cells=sum(r.size for r in before.values())))
    return CarryPlan(names, nfs)


def slot_instances(old_gen: Any, new_gen: Any) -> dict[str, str]:
    """Old slot instance -> new slot instance, for every NF slot of *old_gen* that maps
    to one of *new_gen* (module docstring: one slot of the type on each side, or by the
    chains' NFs each serves); a slot that maps to none is left out."""
    out = {}
    old_serves, new_serves = served(old_gen), served(new_gen)
    old_slots = list(old_gen.composition.slots)
    for nf in dict.fromkeys(s.nf for s in old_slots):
        olds = [s for s in old_slots if s.nf == nf]
        news = [s for s in new_gen.composition.slots if s.nf == nf]
        if news:
            by_index = {o.index: o for o in olds}
            for i, n in _pairs(olds, news, old_serves, new_serves).items():
                out[by_index[i].instance] = n.instance
    return out


def _pairs(olds: list, news: list, old_serves: dict, new_serves: dict) -> dict[int, Any]:
    """Old slot index -> new slot, for the slots of one NF type (module docstring)."""
    if len(olds) == 1 and len(news) == 1:
        return {olds[0].index: news[0]}
    out = {}
    for o in olds:
        mine = old_serves.get(o.index, frozenset())
        hits = [n for n in news if mine & new_serves.get(n.index, frozenset())]
        if len(hits) != 1:
            continue
        theirs = new_serves.get(hits[0].index, frozenset())
        others = [x for x in olds if x is not o and theirs & old_serves.get(x.index, frozenset())]
        if not others:
            out[o.index] = hits[0]
    return out


def carry_updates(cells: Iterable[Any], old_index: Any, new_index: Any,
                  names: dict[str, str]) -> list:
    """MODIFY updates writing *cells* (register entities read from the old program) into
    the new program's registers that *names* maps them to."""
    from finsy.proto import p4r

    old_names = {r.preamble.id: r.preamble.name for r in old_index.info.registers}
    new_ids = {r.preamble.name: r.preamble.id for r in new_index.info.registers}
    out = []
    for e in cells:
        to = names.get(old_names.get(e.register_entry.register_id, ""))
        if to is None:
            continue
        u = p4r.Update(type=p4r.Update.MODIFY)
        u.entity.register_entry.CopyFrom(e.register_entry)
        u.entity.register_entry.register_id = new_ids[to]
        out.append(u)
    return out


def unsupported(err: SfclabError) -> bool:
    """*err* says the switch does not do register reads or writes over P4Runtime (BMv2's
    answer: UNIMPLEMENTED), rather than that this one failed."""
    failures = getattr(err, "failures", None)
    if failures:
        return all(f.code == "UNIMPLEMENTED" for f in failures)
    return getattr(err, "status", None) == "UNIMPLEMENTED"


#: Why registers start from zero on a switch that does not read or write them.
NO_REGISTER_IO = "the switch does not read or write registers over P4Runtime"


def unsupported_why(err: SfclabError) -> str:
    """Why a switch that does not do registers (:func:`unsupported`) does not: its way in
    says (``why``: BMv2's Thrift runtime cannot be reached …), else P4Runtime's answer.

    >>> unsupported_why(SfclabError("UNIMPLEMENTED"))
    'the switch does not read or write registers over P4Runtime'
    """
    return getattr(err, "why", "") or NO_REGISTER_IO


def changed_definitions(names: Any, old_catalog: Any, catalog: Any) -> tuple[str, ...]:
    """The NFs of *names* whose definition differs between *old_catalog* and *catalog*
    (NFs gone from either are left out: the chains say so)."""
    if old_catalog is catalog:
        return ()
    out = []
    for name in sorted(names):
        try:
            old, new = _definition(old_catalog, name), _definition(catalog, name)
        except SfclabError:                 # gone from the catalogue: the chains say so
            continue
        if old != new:
            out.append(name)
    return tuple(out)


def _definition(catalog: Any, name: str) -> tuple[Any, Any]:
    """(compiler view, parsed P4 or None) of NF *name* in *catalog*."""
    info = catalog.resolve(name)
    definition = getattr(catalog, "definition", None)
    if definition is None:
        return info, None
    try:
        d = definition(name)
    except SfclabError:                     # an NF without P4 (a server's)
        return info, None
    return info, d.program
