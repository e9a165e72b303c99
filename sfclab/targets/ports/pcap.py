"""Classic pcap files (Ethernet link type): how BMv2's ports are fed and read without root
(``--use-files``); below :mod:`sfclab.targets.bmv2.target` and :mod:`sfclab.targets.ports.packet_io`,
which both read them."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_pcap", "read_pcap"]

_PCAP_HEADER = struct.Struct("<IHHiIII")
_PCAP_RECORD = struct.Struct("<IIII")


def write_pcap(path: str | os.PathLike, frames: Iterable[bytes]) -> Path:
    """A classic pcap file (Ethernet link type) holding *frames*.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     read_pcap(write_pcap(Path(d) / "x.pcap", [b"\\x01" * 60])) == [b"\\x01" * 60]
    True
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = bytearray(_PCAP_HEADER.pack(0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, frame in enumerate(frames):
        data += _PCAP_RECORD.pack(i, 0, len(frame), len(frame)) + bytes(frame)
    out.write_bytes(bytes(data))
    return out


def read_pcap(path: str | os.PathLike) -> list[bytes]:
    """The frames of a classic pcap file ([] if it does not exist yet)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    if len(data) < _PCAP_HEADER.size:
        return []
    magic = struct.unpack_from("<I", data)[0]
    order = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    rec = struct.Struct(order + "IIII")
    frames, off = [], _PCAP_HEADER.size
    while off + rec.size <= len(data):
        _, _, incl, _ = rec.unpack_from(data, off)
        off += rec.size
        if off + incl > len(data):
            break
        frames.append(data[off:off + incl])
        off += incl
    return frames
