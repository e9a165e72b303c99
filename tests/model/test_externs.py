"""Registers, counters, direct counters, meters, hashes, digests, random."""

from __future__ import annotations

import pytest
from scapy.layers.l2 import Ether

from sfclab.targets.model import InvalidValueError, ModelSwitch, UnknownNameError
from sfclab.targets.model.externs import crc16, crc32, csum16

from .conftest import v1model

DECLS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header data_t { bit<72> text; }
header out_t {
    bit<32> count; bit<16> h16; bit<32> h32; bit<64> ident; bit<16> mod; bit<16> cs;
    bit<8> nibbles; bit<8> color; bit<8> rnd;
}
struct learn_t { bit<48> src; bit<9> port; }
"""
PROGRAM = v1model(DECLS, """
    state start { pkt.extract(hdr.ethernet); pkt.extract(hdr.data); transition accept; }
""", """
    register<bit<32>>(4) per_port;
    counter(8, CounterType.packets_and_bytes) port_count;
    meter(4, MeterType.packets) m;
    direct_counter(CounterType.packets) hits;
    bit<32> c;
    action count_hit() { }
    table t {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { count_hit; NoAction; }
        counters = hits;
        default_action = NoAction();
    }
    apply {
        per_port.read(c, (bit<32>) sm.ingress_port);
        c = c + 1;
        per_port.write((bit<32>) sm.ingress_port, c);
        port_count.count((bit<32>) sm.ingress_port);
        t.apply();
        hdr.res.setValid();
        hdr.res.count = c;
        hash(hdr.res.h16, HashAlgorithm.crc16, 16w0, { hdr.data.text }, 32w65536);
        hash(hdr.res.h32, HashAlgorithm.crc32, 32w0, { hdr.data.text }, 64w4294967296);
        hash(hdr.res.ident, HashAlgorithm.identity, 64w0, { hdr.data.text }, 128w1 << 64);
        hash(hdr.res.mod, HashAlgorithm.crc16, 16w100, { hdr.data.text }, 32w1000);
        hash(hdr.res.cs, HashAlgorithm.csum16, 16w0, { hdr.data.text }, 32w65536);
        hash(hdr.res.nibbles, HashAlgorithm.identity, 8w0, { 4w0xA, 4w0xB }, 16w256);
        m.execute_meter((bit<32>) 1, hdr.res.color);
        random(hdr.res.rnd, 8w10, 8w20);
        digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });
        hdr.ethernet.src = 0xABCDEF;
        sm.egress_spec = 1;
    }""", headers="ethernet_t ethernet; data_t data; out_t res;")

PKT = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x1234)) + b"123456789"


def out_fields(data: bytes) -> dict:
    o = data[14 + 9:]
    return {"count": int.from_bytes(o[0:4], "big"), "h16": int.from_bytes(o[4:6], "big"),
            "h32": int.from_bytes(o[6:10], "big"), "ident": int.from_bytes(o[10:18], "big"),
            "mod": int.from_bytes(o[18:20], "big"), "cs": int.from_bytes(o[20:22], "big"),
            "nibbles": o[22], "color": o[23], "rnd": o[24]}


@pytest.fixture
def sw():
    return ModelSwitch(PROGRAM)


def test_hashes_are_bmv2s(sw):
    f = out_fields(sw.process(2, PKT).outputs[0][1])
    assert f["h16"] == 0xBB3D == crc16(b"123456789")          # CRC-16/ARC check value
    assert f["h32"] == 0xCBF43926 == crc32(b"123456789")      # CRC-32 check value
    assert f["ident"] == int.from_bytes(b"12345678", "big")   # the first 8 bytes
    assert f["mod"] == 100 + 0xBB3D % 1000                    # base + hash % max
    assert f["cs"] == csum16(b"123456789")
    assert f["nibbles"] == 0xAB                               # fields packed bit by bit
    assert 10 <= f["rnd"] <= 20


def test_register_counter_and_direct_counter(sw):
    for _ in range(3):
        sw.process(2, PKT)
    sw.process(3, PKT)
    assert sw.read_register("I.per_port") == [0, 0, 3, 1]
    assert out_fields(sw.process(2, PKT).outputs[0][1])["count"] == 4
    sw.write_register("per_port", 2, 41)
    assert out_fields(sw.process(2, PKT).outputs[0][1])["count"] == 42
    assert sw.read_counter("I.port_count", 2) == (5, 5 * len(PKT))
    sw.insert("I.t", [0x1234], "I.count_hit")
    sw.process(2, PKT)
    sw.process(2, PKT)
    assert sw.read_direct_counter("I.t", [0x1234]) == (2, 0)   # a packets-only counter
    [e] = sw.entries("I.t")
    assert e.packets == 2
    with pytest.raises(InvalidValueError, match="index 9"):
        sw.read_register("I.per_port", 9)
    with pytest.raises(InvalidValueError, match="does not fit in 32 bits"):
        sw.write_register("I.per_port", 0, 1 << 32)
    with pytest.raises(UnknownNameError, match="no register named 'nope'"):
        sw.read_register("nope")


def test_meter_is_green_until_configured_then_colours(sw):
    assert out_fields(sw.process(2, PKT, now_us=0).outputs[0][1])["color"] == 0
    # 1 packet/s committed, 2 packets/s peak, bursts of 1 and 2 packets
    sw.set_meter("I.m", 1, cir=1, cburst=1, pir=2, pburst=2)
    t0 = sw.now_us()
    colours = [out_fields(sw.process(2, PKT, now_us=t0).outputs[0][1])["color"] for _ in range(3)]
    assert colours == [0, 1, 2]                  # green, yellow, red


def test_digest_data_is_what_it_was_at_the_call(sw):
    r = sw.process(2, PKT)
    # src is rewritten to 0xABCDEF after digest(); p4c copies the digest's data into
    # temporaries at the call, so the program reports the packet's own source MAC
    [d] = r.digests
    assert (d.name, d.data) == ("learn_t", {"src": 0x000000000001, "port": 2})
    assert sw.read_digests() == [d] and sw.read_digests() == []
