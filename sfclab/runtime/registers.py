"""Reading and writing a switch's register cells, over P4Runtime or another way in.

Register cells travel as P4Runtime entities everywhere in sfclab (a snapshot before a
push, a reload's carried cells, a moved NF's state): ``RegisterEntry`` with the
register's P4Info id, the cell's index and its value as a bitstring.  A
:class:`RegisterIO` reads and writes them on one switch:

* :class:`P4RuntimeRegisters` -- P4Runtime's ``Read`` and ``Write`` (the embedded
  model, a Tofino);
* a target's own way in, where its P4Runtime server does not do registers (BMv2
  1.15.5 answers ``UNIMPLEMENTED``: :class:`~sfclab.targets.bmv2.registers.ThriftRegisters`
  reads and writes them over BMv2's Thrift runtime);
* :class:`FirstThatWorks` -- P4Runtime first, and the other way from the first time
  P4Runtime answers that it does not do registers (:func:`.carry.unsupported`).

A switch with no way at all answers like BMv2's P4Runtime server (an error whose
``status`` is ``UNIMPLEMENTED``), and a reload or a move then says its registers start
from zero (:data:`.carry.NO_REGISTER_IO`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SfclabError

__all__ = ["RegisterIO", "P4RuntimeRegisters", "FirstThatWorks", "BATCH"]

#: Register writes per P4Runtime ``Write``.
BATCH = 512


class RegisterIO:
    """Reads and writes register cells of one switch (module docstring)."""

    #: How, in words (``over P4Runtime``).
    how = ""

    def read(self, index: Any, register_ids: Sequence[int] = ()) -> list:
        """Every cell of the registers *register_ids* (P4Info ids of *index*; none: of
        every register), as P4Runtime entities."""
        raise NotImplementedError

    def write(self, index: Any, updates: Sequence) -> None:
        """Write the register cells of *updates* (P4Runtime ``Update`` s of register
        entries, ids of *index*)."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class P4RuntimeRegisters(RegisterIO):
    """Over the switch's P4Runtime server (*client*: a :class:`~.client.Client`)."""

    how = "over P4Runtime"

    def __init__(self, client: Any) -> None:
        self.client = client

    def read(self, index: Any, register_ids: Sequence[int] = ()) -> list:
        from finsy.proto import p4r

        out = []
        for rid in register_ids or (0,):
            ent = p4r.Entity()
            ent.register_entry.register_id = rid
            out += self.client.read([ent])
        return out

    def write(self, index: Any, updates: Sequence) -> None:
        updates = list(updates)
        for k in range(0, len(updates), BATCH):
            self.client.write(updates[k:k + BATCH])


class FirstThatWorks(RegisterIO):
    """*first* (P4Runtime) until it answers that it does not do registers, then *then*
    (a target's own way in) from that call on.

    >>> class No(RegisterIO):
    ...     def read(self, index, ids=()):
    ...         err = SfclabError("no"); err.status = "UNIMPLEMENTED"; raise err
    >>> class Yes(RegisterIO):
    ...     how = "another way"
    ...     def read(self, index, ids=()): return ["cell"]
    >>> io = FirstThatWorks(No(), Yes())
    >>> io.read(None), io.how
    (['cell'], 'another way')
    """

    def __init__(self, first: RegisterIO, then: RegisterIO) -> None:
        self.first, self.then = first, then
        self.using = first

    @property
    def how(self) -> str:
        return self.using.how

    def _call(self, name: str, *args: Any) -> Any:
        from .carry import unsupported

        if self.using is self.first:
            try:
                return getattr(self.first, name)(*args)
            except SfclabError as err:
                if not unsupported(err):
                    raise
                self.using = self.then
        return getattr(self.then, name)(*args)

    def read(self, index: Any, register_ids: Sequence[int] = ()) -> list:
        return self._call("read", index, register_ids)

    def write(self, index: Any, updates: Sequence) -> None:
        self._call("write", index, updates)

    def close(self) -> None:
        self.then.close()
