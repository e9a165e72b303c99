"""Move an NF's state between switches (P4NFV's state migration): over P4Runtime, or the
switch's own way in where its P4Runtime server does not do registers (each session's
:attr:`~.session.Session.register_io`: BMv2's Thrift runtime).

A stateful NF keeps its state in registers; both switches run the same program,
so every register has the same P4Info name on both.  :func:`migrate_registers`
reads the cells from one switch and writes them into the other, in batches, and
returns how many cells it moved (cells that are zero on the source are written
too, so the destination ends up equal, not merged)::

    migrate_registers(old.session, new.session, nf="stateful_firewall")
"""

from __future__ import annotations

from finsy.proto import p4r

from ..errors import TargetError
from .session import Session

__all__ = ["register_names", "read_registers", "write_registers", "migrate_registers"]


def register_names(session: Session, nf: str | None = None) -> list[str]:
    """The program's registers (those of the slots running NF type *nf*)."""
    names = [r.preamble.name for r in session.index.info.registers]
    if nf is not None:
        names = [n for n in names if f"_{nf}." in n]
    return names


def read_registers(session: Session, names: list[str]) -> dict[str, list[int]]:
    """Every cell of the registers *names*, read the way the switch gives them."""
    regs = {r.preamble.name: r for r in session.index.info.registers}
    out: dict[str, list[int]] = {}
    for name in names:
        r = regs.get(name)
        if r is None:
            raise TargetError(f"the pipeline has no register {name!r}")
        cells = sorted((e.register_entry.index.index, e.register_entry.data.bitstring)
                       for e in session.read_registers([r.preamble.id]))
        out[name] = [int.from_bytes(v, "big") for _, v in cells]
    return out


def migrate_registers(src: Session, dst: Session, *, nf: str | None = None,
                      names: list[str] | None = None) -> int:
    """Copy registers (all, those of NF type *nf*, or *names*) from *src* to *dst*."""
    if src.index is None or dst.index is None:
        raise TargetError("both switches need the program pushed before state can move")
    names = names if names is not None else register_names(src, nf)
    dst_regs = {r.preamble.name: r for r in dst.index.info.registers}
    missing = [n for n in names if n not in dst_regs]
    if missing:
        raise TargetError(f"the destination's program has no register {missing[0]!r}",
                          hint="push the same program to both switches first")
    cells = read_registers(src, names)
    write_registers(dst, cells)
    return sum(len(v) for v in cells.values())


def write_registers(session: Session, cells: dict[str, list[int]]) -> None:
    """Write every cell of *cells* (register name -> its cells, as :func:`read_registers`
    gives them) into *session*'s switch, in batches."""
    ids = {r.preamble.name: r.preamble.id for r in session.index.info.registers}
    updates = []
    for name, values in cells.items():
        for i, v in enumerate(values):
            u = p4r.Update(type=p4r.Update.MODIFY)
            u.entity.register_entry.register_id = ids[name]
            u.entity.register_entry.index.index = i
            u.entity.register_entry.data.bitstring = v.to_bytes(max(1, (v.bit_length() + 7) // 8),
                                                                "big")
            updates.append(u)
    session.write_registers(updates)
