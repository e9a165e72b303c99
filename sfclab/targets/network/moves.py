"""An NF that a network update moves to another switch takes its register state with it
(P4NFV's state migration), where the state keeps its meaning there.

:func:`judge_moves` decides, for each :class:`~.update.MovedNF` of a stateful NF, whether
its cells carry: the NF's slot on the old switch (the one serving the chain's NF) and
its slot on the new switch must run the same NF code with registers of the same names,
widths and sizes (:mod:`sfclab.runtime.carry`), and the new slot must serve nothing
else (its cells would be another chain's).  Otherwise the state stays behind and
starts from zero on the new switch, and ``why`` says why.

:class:`Mover` does it during :func:`~.update.update_network`: the cells are read from
the old switch — before the update when the old switch is reloaded, else just before
the flip (the latest state before the chain's packets go to the new switch) — and
written to the new switch after its new entries, before the flip; when the update
fails, the new switch's cells are put back as they were.  A switch that does not read or
write registers over P4Runtime (BMv2's server answers UNIMPLEMENTED) leaves the state
behind, and the move says so; the update goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import SfclabError
from ...runtime.carry import (NO_REGISTER_IO, changed_definitions, served, slot_registers,
                              unsupported)
from ...runtime.migrate import read_registers, write_registers

__all__ = ["judge_moves", "Mover"]


def _slot(gen: Any, chain: str, instance: str):
    """The slot of *gen* that serves *chain*'s NF *instance* (a segment ``web@1`` of the
    chain too), or None."""
    for k, pairs in served(gen).items():
        if any(c.split("@")[0] == chain and n == instance for c, n in pairs):
            return gen.composition.slots[k]
    return None


def _index(session: Any, gen: Any):
    """The P4Info *gen* runs with on *session*'s switch (the pushed one when unchanged)."""
    if session.generated is not None and session.generated.program.program == gen.program.program:
        return session.index
    from ...codegen.p4info import build_p4info
    from ...runtime.encode import P4InfoIndex

    return P4InfoIndex(build_p4info(gen.program.program, arch=gen.arch))


def judge_moves(sessions: Mapping[str, Any], gens: Mapping[str, Any], moved: list) -> list:
    """*moved* with each stateful NF's carry decided (module docstring): ``names`` (old
    register -> new register) when its cells carry, else ``why`` not."""
    out = []
    for m in moved:
        if not m.stateful:
            out.append(m)
            continue
        src, dst, gen = sessions.get(m.old), sessions.get(m.new), gens.get(m.new)
        old = _slot(src.generated, m.chain, m.instance) if src and src.generated else None
        new = _slot(gen, m.chain, m.instance) if gen is not None else None
        if old is None or new is None or dst is None:
            out.append(replace(m, why=f"{m.new} is not a switch sfclab drives"
                               if dst is None else "sfclab cannot tell which slot runs it"))
            continue
        if changed_definitions({old.nf}, src.generated.compiled.catalog, gen.compiled.catalog):
            out.append(replace(m, why="its P4 code changed"))
            continue
        before = slot_registers(src.index, old.instance)
        after = slot_registers(_index(dst, gen), new.instance)
        shape = {k: (r.size, r.type_spec.SerializeToString(deterministic=True))
                 for k, r in before.items()}
        if shape != {k: (r.size, r.type_spec.SerializeToString(deterministic=True))
                     for k, r in after.items()}:
            out.append(replace(m, why="its registers' names, widths or sizes differ there"))
            continue
        others = sorted({c.split("@")[0] for c, n in served(gen).get(new.index, ())
                         if (c.split("@")[0], n) != (m.chain, m.instance)})
        if others:
            out.append(replace(m, why=f"its slot on {m.new} also serves {', '.join(others)}, "
                                      f"whose state it holds"))
            continue
        out.append(replace(m, names=tuple((r.preamble.name, after[k].preamble.name)
                                          for k, r in before.items()),
                           cells=sum(r.size for r in before.values())))
    return out


class Mover:
    """Carries the cells of the moves whose ``names`` are set, in the update's order
    (module docstring)."""

    def __init__(self, sessions: Mapping[str, Any], moves: list, reloaded: list[str]) -> None:
        self.sessions, self.reloaded = sessions, reloaded
        self.moves = [m for m in moves if m.names]
        self.early: dict[int, dict[str, list[int]]] = {}
        self.saved: list[tuple[str, dict[str, list[int]]]] = []
        self.skipped: set[int] = set()

    def read_early(self) -> None:
        """Read, before the update, the cells of the moves whose old switch is reloaded."""
        for i, m in enumerate(self.moves):
            if m.old in self.reloaded:
                cells = self._io(i, read_registers, self.sessions[m.old], [a for a, _ in m.names])
                if cells is not None:
                    self.early[i] = cells

    def carry(self) -> None:
        """Write each move's cells into its new switch (the old switch read now, unless
        read before the update)."""
        for i, m in enumerate(self.moves):
            if i in self.skipped:
                continue
            cells = self.early.get(i)
            if cells is None:
                cells = self._io(i, read_registers, self.sessions[m.old],
                                 [a for a, _ in m.names])
            dst = self.sessions[m.new]
            to = dict(m.names)
            if cells is not None and m.new not in self.reloaded:
                old = self._io(i, read_registers, dst, list(to.values()))
                if old is not None:
                    self.saved.append((m.new, old))
            if i not in self.skipped:
                self._io(i, write_registers, dst, {to[a]: v for a, v in cells.items()})

    def _io(self, i: int, fn, *args):
        """*fn(*args)*; None, and move *i* skipped, when the switch does not read or write
        registers over P4Runtime (BMv2: UNIMPLEMENTED): its state stays behind."""
        try:
            return fn(*args)
        except SfclabError as err:
            if not unsupported(err):
                raise
            self.skipped.add(i)
            return None

    def undo(self) -> str:
        """Put back the new switches' cells written (those not reloaded: a reload's undo
        puts its own back); '' when done, else why not."""
        try:
            for s, cells in reversed(self.saved):
                write_registers(self.sessions[s], cells)
        except SfclabError as e:
            return e.message
        return ""

    def done(self, moves: list) -> list:
        """*moves* as the update left them: carried, or (a switch without register reads
        or writes) left behind, saying so."""
        carried = {(m.chain, m.instance) for i, m in enumerate(self.moves)
                   if i not in self.skipped}
        return [replace(m, done=True) if (m.chain, m.instance) in carried else
                replace(m, names=(), cells=0, why=NO_REGISTER_IO) if m.names else m
                for m in moves]

