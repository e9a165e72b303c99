"""Tofino 1's port numbering, as the model's traffic manager uses it.

A port is 9 bits: the pipe in the upper two (``DEVPORT_PIPE(port)`` is
``port[8:7]``, so ``pipe = port >> 7``) and the pipe's local port in the lower
seven.  Each pipe has a recirculation port, local port 68 (``68 + 128 * pipe``:
68, 196, 324, 452): a packet leaving egress there comes back into that pipe's
ingress.  A port set to loopback does the same (on the chip its MAC turns the
packet round; the model is told which ports are looped).  The CPU's PCIe port
is the one sfclab's TNA programs use (192, ``TNA_CPU_PORT``); its egress runs
in the pipe the port belongs to, or in pipe 0 on a model with fewer pipes.

>>> ports = TofinoPorts(pipes=2)
>>> ports.pipe_of(1), ports.pipe_of(196), recirc_port(1)
(0, 1, 196)
>>> ports.reenters(68), ports.reenters(5)
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import InvalidValueError

__all__ = ["TofinoPorts", "recirc_port", "pipe_of", "PIPE_COUNTS", "RECIRC_LOCAL",
           "LOCAL_PORTS", "DEFAULT_PIPES", "TNA_CPU_PORT"]

#: How many pipes a Tofino 1 has (a 2-pipe and a 4-pipe part; 1 for a small model).
PIPE_COUNTS = (1, 2, 4)
#: The model's pipes unless told otherwise (a 2-pipe Tofino 1: its PCIe CPU port is 192).
DEFAULT_PIPES = 2
#: The local port of each pipe's recirculation port.
RECIRC_LOCAL = 68
#: Local ports per pipe (a 9-bit port: 2 pipe bits, 7 local bits).
LOCAL_PORTS = 128
#: The CPU (PCIe) port sfclab's TNA programs use (:data:`sfclab.codegen.tna.TNA_CPU_PORT`).
TNA_CPU_PORT = 192


def pipe_of(port: int) -> int:
    """The pipe a port belongs to (``port[8:7]``)."""
    return (port >> 7) & 3


def recirc_port(pipe: int) -> int:
    """The recirculation port of *pipe* (``68 + 128 * pipe``)."""
    return RECIRC_LOCAL + LOCAL_PORTS * pipe


@dataclass(frozen=True)
class TofinoPorts:
    """The ports of a model Tofino 1 with *pipes* pipes; *loopback* ports turn
    packets round into their pipe's ingress, as each pipe's recirculation port does."""

    pipes: int = DEFAULT_PIPES
    cpu_port: int = TNA_CPU_PORT
    loopback: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.pipes not in PIPE_COUNTS:
            raise InvalidValueError(f"a Tofino 1 has 1, 2 or 4 pipes, not {self.pipes!r}",
                                    hint="model?arch=tna&pipes=2 (or 1, 4)")
        object.__setattr__(self, "loopback", frozenset(self.loopback))
        for p in self.loopback:
            if not isinstance(p, int) or not 0 <= p < 512 or self.pipe_of(p) >= self.pipes:
                raise InvalidValueError(f"loopback port {p!r} is not a port of a {self.pipes}-pipe "
                                        f"Tofino (0..{self.pipes * LOCAL_PORTS - 1})")

    @classmethod
    def of(cls, pipes: int = DEFAULT_PIPES, cpu_port: int = TNA_CPU_PORT,
           loopback: Iterable[int] = ()) -> TofinoPorts:
        return cls(pipes, cpu_port, frozenset(loopback))

    def pipe_of(self, port: int) -> int:
        """The pipe whose egress (and ingress) *port* belongs to; the CPU port's is its
        own pipe when the model has it, else pipe 0."""
        pipe = pipe_of(port)
        if port == self.cpu_port and pipe >= self.pipes:
            return 0
        return pipe

    def exists(self, port: int) -> bool:
        """Whether *port* is in one of the model's pipes (the CPU port always is)."""
        return port == self.cpu_port or pipe_of(port) < self.pipes

    def reenters(self, port: int) -> bool:
        """Whether a packet leaving egress on *port* comes back into ingress (its pipe's
        recirculation port, or a port set to loopback)."""
        return (port & (LOCAL_PORTS - 1)) == RECIRC_LOCAL and pipe_of(port) < self.pipes \
            or port in self.loopback

    def how(self, port: int) -> str:
        """``recirculated`` or ``looped back``: how a packet on *port* comes back in."""
        return "looped back" if port in self.loopback else "recirculated"
