"""v1model's stateful externs and hash algorithms, as BMv2 computes them.

Hashes take the bit string BMv2 builds from a field list (fields packed most
significant bit first, the last byte padded with zero bits) and follow
``bm_sim/calculations.cpp``: ``crc16`` is CRC-16/ARC (poly 0x8005, reflected,
init 0), ``crc32`` the standard CRC-32, ``csum16`` the Internet checksum
(RFC 1071), ``identity`` the first 8 bytes as an integer, ``xor16`` the XOR
of 16-bit words.  Meters are BMv2's two-rate three-colour markers: rates in
units per microsecond, buckets starting full; an unconfigured meter says GREEN.

>>> hex(crc16(b"123456789")), hex(crc32(b"123456789")), hex(csum16(bytes(20)))
('0xbb3d', '0xcbf43926', '0xffff')
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Sequence

from .errors import ModelCompileError

__all__ = ["crc16", "crc32", "csum16", "identity", "xor16", "HASHES", "pack_bits",
           "RegisterArray", "CounterArray", "MeterArray", "Meter"]


def _crc16_table() -> list[int]:
    table = []
    for b in range(256):
        r = 0
        x = b
        for _ in range(8):       # reflected form of poly 0x8005 is 0xA001
            if (r ^ x) & 1:
                r = (r >> 1) ^ 0xA001
            else:
                r >>= 1
            x >>= 1
        table.append(r)
    return table


_T16 = _crc16_table()
_LITTLE = sys.byteorder == "little"


def crc16(data: bytes) -> int:
    """CRC-16/ARC, BMv2's ``crc16``."""
    r = 0
    for b in data:
        r = (r >> 8) ^ _T16[(r ^ b) & 0xFF]
    return r


def crc32(data: bytes) -> int:
    """The standard CRC-32 (BMv2's ``crc32``)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    """The ones'-complement Internet checksum of *data* (odd length: zero-padded)."""
    if len(data) & 1:
        data += b"\0"
    # summing native 16-bit words and byte-swapping the folded sum gives the
    # big-endian sum (RFC 1071, section 2(B))
    s = sum(memoryview(data).cast("H"))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    s = ~s & 0xFFFF
    return ((s & 0xFF) << 8 | s >> 8) if _LITTLE else s


def identity(data: bytes) -> int:
    """BMv2's ``identity``: the first (at most) 8 bytes, big-endian."""
    return int.from_bytes(data[:8], "big")


def xor16(data: bytes) -> int:
    if len(data) & 1:
        data += b"\0"
    r = 0
    for i in range(0, len(data), 2):
        r ^= int.from_bytes(data[i:i + 2], "big")
    return r


HASHES = {"crc16": crc16, "crc32": crc32, "csum16": csum16, "identity": identity,
          "xor16": xor16}


def pack_bits(values: Sequence[int], widths: Sequence[int]) -> bytes:
    """Fields packed MSB first into bytes, the tail padded with zero bits."""
    n = 0
    total = 0
    for v, w in zip(values, widths):
        n = (n << w) | (v & ((1 << w) - 1))
        total += w
    pad = (-total) % 8
    return (n << pad).to_bytes((total + pad) // 8, "big")


def hash_fn(algo: str):
    f = HASHES.get(algo)
    if f is None:
        raise ModelCompileError(f"hash algorithm {algo!r} is not supported by the model",
                                hint="use crc16, crc32, identity, csum16 or xor16")
    return f


class RegisterArray:
    """``register<T>(size)``: ``size`` cells of ``width`` bits."""

    __slots__ = ("name", "size", "width", "signed", "cells")

    def __init__(self, name: str, size: int, width: int, signed: bool = False) -> None:
        self.name, self.size, self.width, self.signed = name, size, width, signed
        self.cells = [0] * size


class CounterArray:
    """``counter(size, type)``: packets and bytes per index."""

    __slots__ = ("name", "size", "kind", "packets", "bytes")

    def __init__(self, name: str, size: int, kind: str) -> None:
        self.name, self.size, self.kind = name, size, kind
        self.packets = [0] * size
        self.bytes = [0] * size

    def count(self, i: int, length: int) -> None:
        if 0 <= i < self.size:
            self.packets[i] += 1
            self.bytes[i] += length


class Meter:
    """One two-rate three-colour meter (BMv2's ``Meter``).  ``rates`` are
    ``[(cir, cburst), (pir, pburst)]`` in units per microsecond."""

    __slots__ = ("kind", "configured", "buckets", "origin")

    def __init__(self, kind: str) -> None:
        self.kind = kind            # "packets" or "bytes"
        self.configured = False
        self.buckets: list[list] = []   # [rate, burst, tokens, tokens_last, color], PIR first
        self.origin = 0

    def configure(self, cir: float, cburst: int, pir: float, pburst: int, now_us: int) -> None:
        self.buckets = [[pir, pburst, pburst, 0, 2], [cir, cburst, cburst, 0, 1]]
        self.configured = True
        self.origin = now_us

    def reset(self) -> None:
        self.configured = False
        self.buckets = []

    def execute(self, length: int, now_us: int) -> int:
        if not self.configured:
            return 0
        micros = max(0, now_us - self.origin)
        amount = 1 if self.kind == "packets" else length
        for b in self.buckets:
            since = int(micros * b[0])
            new = since - b[3]
            b[3] = since
            b[2] = min(b[2] + new, b[1])
            if b[2] < amount:
                return b[4]
            b[2] -= amount
        return 0

    def config(self) -> tuple | None:
        if not self.configured:
            return None
        (pir, pburst, *_), (cir, cburst, *_) = self.buckets
        return cir, cburst, pir, pburst


class MeterArray:
    """``meter(size, type)``."""

    __slots__ = ("name", "size", "kind", "meters")

    def __init__(self, name: str, size: int, kind: str) -> None:
        self.name, self.size, self.kind = name, size, kind
        self.meters = [Meter(kind) for _ in range(size)]
