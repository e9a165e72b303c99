"""Bit-width arithmetic: wrap-around, casts, slices, concatenation, signed ints."""

from __future__ import annotations

import pytest
from scapy.layers.l2 import Ether

from sfclab.targets.model import ModelSwitch

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<16> e; bit<8> f; bit<8> g; bit<8> h;
             bit<8> i; bit<8> j; bit<8> k; }
"""


def run(stmts: str, src: int = 0x0102030405F0) -> bytes:
    sw = ModelSwitch(v1model(DECLS, "state start { pkt.extract(hdr.ethernet); transition accept; }",
                             "bit<8> x = 8w250; int<8> s = -8s3; bit<4> n = 4w9;\n"
                             "apply { hdr.r.setValid(); " + stmts + " sm.egress_spec = 1; }",
                             headers="ethernet_t ethernet; r_t r;"))
    p = Ether(src=src.to_bytes(6, "big"), dst=b"\x00" * 6, type=0x1234)
    return sw.process(1, p).outputs[0][1][14:]


@pytest.mark.parametrize("stmt,expected", [
    ("hdr.r.a = x + 10;", 4),                     # 250 + 10 wraps at 8 bits
    ("hdr.r.a = x - 251;", 255),
    ("hdr.r.a = x |+| 10;", 255),                 # saturating
    ("hdr.r.a = 8w3 |-| 8w5;", 0),
    ("hdr.r.a = x << 1;", 244),
    ("hdr.r.a = x >> 9;", 0),
    ("hdr.r.a = ~x;", 5),
    ("hdr.r.a = -x;", 6),
    ("hdr.r.a = (bit<8>) s;", 253),               # int<8> -3 reinterpreted
    ("hdr.r.a = (bit<8>) (s >> 1);", 254),        # arithmetic shift of -3 is -2
    ("hdr.r.a = (bit<8>) (s * 50);", (-150) & 0xFF),
    ("hdr.r.a = s < 0 ? 8w1 : 8w2;", 1),
    ("hdr.r.a = (bit<8>) ((int<8>) x);", 250),
    ("hdr.r.a = (bit<8>) n ++ 4w0 > 0 ? 8w7 : 8w8;", 7),
    ("hdr.r.a = hdr.ethernet.src[7:0];", 0xF0),
    ("hdr.r.a = (bit<8>) hdr.ethernet.src[11:4];", 0x5F),
    ("hdr.r.a = 4w0xA ++ n;", 0xA9),
    ("hdr.r.a = (bit<8>) (n + 9);", 2),           # bit<4> wraps before the cast
    ("hdr.r.a = x / 7 + x % 7;", 35 + 5),
    ("hdr.r.a = (bit<8>) (bit<1>) (x == 250);", 1),
    ("hdr.r.a = 8w0; hdr.r.a[3:0] = 4w0xF; hdr.r.a[7:6] = 2w2;", 0x8F),
    ("hdr.r.a = (x & 0x0F) | (8w1 << 7) ^ 8w1;", 0x8B),
])
def test_expression(stmt, expected):
    assert run(stmt)[0] == expected


def test_wide_fields_and_shifts():
    out = run("hdr.r.e = (bit<16>) hdr.ethernet.src[47:40] << 8 | 16w0xFF;")
    assert out[4:6] == b"\x01\xff"
