"""Register cells of a real BMv2 over its Thrift runtime, where its P4Runtime server
answers ``UNIMPLEMENTED`` (BMv2 1.15.5).

:class:`ThriftRegisters` is a :class:`~sfclab.runtime.registers.RegisterIO`: it reads
and writes the cells sfclab's runtime passes around as P4Runtime entities, by the
registers' names (p4c-bm2-ss gives a register the same name in the BMv2 JSON as in
the P4Info: ``SfcIngress.slot0_heavy_hitter.sketch_row0``), with BMv2's
``bm_register_read_all`` and ``bm_register_write`` (:mod:`sfclab.targets.bmv2.thrift`).
:func:`bmv2_register_io` is what a BMv2 switch's session uses: P4Runtime first, its
Thrift runtime once P4Runtime says it does not do registers.

When the Thrift runtime cannot be reached (a BMv2 built without it, an attached switch
whose ``thrift=`` port is not given), or a register is wider than the 64 bits Thrift
carries, the error says so and counts as the switch not doing registers
(``status`` ``UNIMPLEMENTED``, :func:`sfclab.runtime.carry.unsupported`): a reload or a
move goes on, and says why the NF's registers start from zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...errors import TargetError
from ...runtime.registers import FirstThatWorks, P4RuntimeRegisters, RegisterIO
from .thrift import Bmv2Thrift

__all__ = ["ThriftRegisters", "bmv2_register_io", "MAX_WIDTH"]

#: BMv2's Thrift ``BmRegisterValue`` is a 64-bit integer.
MAX_WIDTH = 64


def _unsupported(message: str, hint: str | None = None) -> TargetError:
    err = TargetError(message, hint=hint)
    err.status = "UNIMPLEMENTED"
    err.why = message
    return err


def _width(register: Any) -> int:
    spec = register.type_spec
    return spec.bitstring.bit.bitwidth if spec.HasField("bitstring") else 0


class ThriftRegisters(RegisterIO):
    """A BMv2's registers over its Thrift runtime (*thrift*: a client, or None when the
    switch's Thrift port is unknown)."""

    how = "over BMv2's Thrift runtime"

    def __init__(self, thrift: Bmv2Thrift | None, *, unknown: str = "") -> None:
        self.thrift = thrift
        self.unknown = unknown or "its Thrift runtime's port is unknown (thrift=PORT in its URL)"

    def _client(self) -> Bmv2Thrift:
        if self.thrift is None:
            raise _unsupported("the switch does not read or write registers over P4Runtime, "
                               f"and {self.unknown}")
        return self.thrift

    def _registers(self, index: Any, ids: Sequence[int]) -> list:
        regs = [r for r in index.info.registers if not ids or r.preamble.id in ids]
        wide = [r.preamble.name for r in regs if _width(r) > MAX_WIDTH or not _width(r)]
        if wide:
            raise _unsupported(f"register {wide[0]} is not a bit<N> of at most {MAX_WIDTH} "
                               "bits: BMv2's Thrift runtime cannot carry it")
        return regs

    def read(self, index: Any, register_ids: Sequence[int] = ()) -> list:
        from finsy.proto import p4r

        thrift = self._client()
        out = []
        for r in self._registers(index, register_ids):
            mask = (1 << _width(r)) - 1
            for i, v in enumerate(self._io(thrift.register_read_all, r.preamble.name)):
                v &= mask
                e = p4r.Entity()
                e.register_entry.register_id = r.preamble.id
                e.register_entry.index.index = i
                e.register_entry.data.bitstring = v.to_bytes(max(1, (v.bit_length() + 7) // 8),
                                                             "big")
                out.append(e)
        return out

    def write(self, index: Any, updates: Sequence) -> None:
        """Write each cell of *updates* that differs from what the switch holds (a
        register's cells read once, then one ``bm_register_write`` per changed cell)."""
        thrift = self._client()
        ids = {u.entity.register_entry.register_id for u in updates}
        regs = {r.preamble.id: r for r in self._registers(index, sorted(ids))}
        held: dict[int, list[int]] = {}
        for u in updates:
            e = u.entity.register_entry
            r = regs.get(e.register_id)
            if r is None:
                raise TargetError(f"the program has no register of id {e.register_id}")
            if not e.HasField("index"):
                raise TargetError("sfclab writes BMv2's registers one cell at a time: "
                                  "every register update needs its index")
            if r.preamble.id not in held:
                mask = (1 << _width(r)) - 1
                held[r.preamble.id] = [v & mask for v in self._io(thrift.register_read_all,
                                                                  r.preamble.name)]
            cells, i = held[r.preamble.id], e.index.index
            value = int.from_bytes(e.data.bitstring, "big")
            if i < len(cells) and cells[i] == value:
                continue
            self._io(thrift.register_write, r.preamble.name, i, value)
            if i < len(cells):
                cells[i] = value

    def _io(self, fn: Callable, *args: Any) -> Any:
        """*fn(*args)*; a switch whose Thrift runtime cannot be reached does not do
        registers (module docstring)."""
        from .thrift import ThriftError

        try:
            return fn(*args)
        except ThriftError:
            raise
        except TargetError as e:
            raise _unsupported("the switch does not read or write registers over P4Runtime, "
                               f"and its Thrift runtime cannot be reached ({e.message})",
                               hint=e.hint) from None

    def close(self) -> None:
        if self.thrift is not None:
            self.thrift.close()


def bmv2_register_io(client: Any, thrift: Bmv2Thrift | None, *, unknown: str = "") -> RegisterIO:
    """P4Runtime over *client* first; BMv2's Thrift runtime (*thrift*) once P4Runtime
    says it does not do registers."""
    return FirstThatWorks(P4RuntimeRegisters(client), ThriftRegisters(thrift, unknown=unknown))
