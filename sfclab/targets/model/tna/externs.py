"""TNA's externs as the model keeps them: state per pipe, the hash algorithms of
``HashAlgorithm_t``, ones'-complement checksums and TNA's meter colours.

State lives per pipe, as on the chip: a ``Register``, ``Counter`` or ``Meter``
of a ``Pipeline`` that runs on several pipes (``Switch(pipe)`` on a 2-pipe
model) has one array per pipe, and a packet reaches the one of the pipe it runs
in.  The arrays are the v1model model's classes
(:class:`~sfclab.targets.model.externs.RegisterArray` …), so the control-plane
API reads them the same way; it reads pipe 0's unless told another pipe
(:meth:`PerPipe.of`).

Hashes follow what ``p4c-barefoot`` 9.13.4 configures (its ``*.dynhash.json``):
``CRC16`` is ``crc_16`` (polynomial 0x18005, reflected, init 0, no final xor: the
CRC-16/ARC BMv2 calls ``crc16``), ``CRC32`` the standard CRC-32, and a
``Hash<bit<W>>`` keeps the hash's low *W* bits (``slice(…, 0..W-1)`` in the
``.bfa``).  ``IDENTITY`` is the field list's bits, ``XOR8/16/32`` the XOR of its
8-, 16- or 32-bit words, ``RANDOM`` a random number.

>>> ones_sum([0x4500, 0x0073, 0x0000, 0x4000, 0x4011, 0x0000, 0xc0a8, 0x0001, 0xc0a8, 0x00c7])
18334
>>> hex(~ones_sum([0x4500, 0x0073, 0x0000, 0x4000, 0x4011, 0x0000, 0xc0a8, 0x0001,
...                0xc0a8, 0x00c7]) & 0xFFFF)
'0xb861'
>>> tna_color(2), tna_color(1)
(3, 1)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ..errors import ModelCompileError
from ..externs import CounterArray, MeterArray, RegisterArray, crc16, crc32

__all__ = ["PerPipe", "ones_sum", "sum16", "words16", "tna_hash", "tna_color", "HASH_ALGORITHMS",
           "TNA_RED"]

#: TNA's ``MeterColor_t.RED`` (BMv2's RED is 2).
TNA_RED = 3
_LITTLE = sys.byteorder == "little"


class PerPipe:
    """One array (register, counter or meter) per pipe of the model, made on demand."""

    __slots__ = ("make", "pipes", "name", "colors")

    def __init__(self, make: Callable[[], RegisterArray | CounterArray | MeterArray],
                 npipes: int) -> None:
        self.make = make
        self.pipes = [make() for _ in range(npipes)]
        self.name = self.pipes[0].name
        self.colors = (0, 1, 3)          # a meter's (green, yellow, red)

    def of(self, pipe: int):
        """The array of *pipe*."""
        return self.pipes[pipe]


def ones_sum(words: Sequence[int]) -> int:
    """The 16-bit ones'-complement sum of *words* (end-around carry)."""
    s = sum(words)
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def sum16(value: int, nbits: int) -> int:
    """:func:`ones_sum` of the 16-bit words of a bit string (padded to whole words), summed
    as native words and byte-swapped after folding (RFC 1071, section 2(B)): the same as
    ``ones_sum(words16(value, nbits))``, without a loop per word.

    >>> v = 0x4500_0073_0000_4000_4011_0000_c0a8_0001_c0a8_00c7
    >>> sum16(v, 160) == ones_sum(words16(v, 160))
    True
    """
    pad = (-nbits) % 16
    s = sum(memoryview((value << pad).to_bytes((nbits + pad) >> 3, "big")).cast("H"))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ((s & 0xFF) << 8 | s >> 8) if _LITTLE else s


def words16(value: int, nbits: int) -> list[int]:
    """A bit string of *nbits* (padded with zero bits to a multiple of 16) as 16-bit words."""
    pad = (-nbits) % 16
    n = value << pad
    k = (nbits + pad) // 16
    return [(n >> (16 * (k - 1 - i))) & 0xFFFF for i in range(k)]


def _xor(width: int) -> Callable[[int, int], int]:
    m = (1 << width) - 1

    def xor(value: int, nbits: int) -> int:
        pad = (-nbits) % width
        n, out = value << pad, 0
        while n:
            out ^= n & m
            n >>= width
        return out
    return xor


def _bytes(value: int, nbits: int) -> bytes:
    pad = (-nbits) % 8
    return (value << pad).to_bytes((nbits + pad) // 8, "big")


#: ``HashAlgorithm_t`` member -> ``f(bits, nbits)`` (RANDOM is drawn by the caller).
HASH_ALGORITHMS: dict[str, Callable[[int, int], int]] = {
    "CRC16": lambda v, n: crc16(_bytes(v, n)),
    "CRC32": lambda v, n: crc32(_bytes(v, n)),
    "IDENTITY": lambda v, n: v,
    "XOR8": _xor(8),
    "XOR16": _xor(16),
    "XOR32": _xor(32),
}


def tna_hash(algo: str) -> Callable[[int, int], int]:
    """The function of ``HashAlgorithm_t.<algo>``; ModelCompileError for one the model
    does not compute."""
    f = HASH_ALGORITHMS.get(algo)
    if f is None:
        raise ModelCompileError(f"HashAlgorithm_t.{algo} is not modelled",
                                hint="the model computes CRC16, CRC32, IDENTITY, XOR8, XOR16, "
                                     "XOR32 and RANDOM")
    return f


def tna_color(bmv2_color: int) -> int:
    """A BMv2 meter colour (0 green, 1 yellow, 2 red) as TNA's ``MeterColor_t`` (red is 3)."""
    return TNA_RED if bmv2_color == 2 else bmv2_color
