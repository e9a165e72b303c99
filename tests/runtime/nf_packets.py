"""Packet helpers of the NF tests: checksums recomputed by scapy, the 5-tuple as the NFs
hash it, and the reference hashes (BMv2's crc16 and crc32)."""

from __future__ import annotations

import zlib
from socket import inet_aton

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether


def with_checksums_recomputed(frame: bytes) -> bytes:
    """*frame* with its (outer) IPv4 and TCP/UDP checksums recomputed by scapy; a UDP
    checksum of 0 ("none") stays 0."""
    p = Ether(frame)
    if IP in p:
        del p[IP].chksum
    if TCP in p:
        del p[TCP].chksum
    if UDP in p and p[UDP].chksum != 0:
        del p[UDP].chksum
    return bytes(p)


def assert_checksums_valid(frame: bytes) -> None:
    assert with_checksums_recomputed(frame) == frame


def flow_key(p) -> bytes:
    """The 5-tuple as the NFs hash it: src, dst, proto, sport, dport (13 bytes)."""
    ip, l4 = p[IP], p[IP].payload
    return (inet_aton(ip.src) + inet_aton(ip.dst) + bytes([ip.proto])
            + l4.sport.to_bytes(2, "big") + l4.dport.to_bytes(2, "big"))


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def crc16(data: bytes) -> int:
    """CRC-16/ARC (BMv2's crc16): reflected polynomial 0x8005, initial value 0."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc
