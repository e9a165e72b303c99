"""A TNA parser's runs remembered by the bytes they read (``model/tna/parse_cache.py``).

A remembered run must be exactly the run it stands for: the same outputs, passes, drops
and trace events as a switch that runs every parser, on every example and on programs
that read the intrinsic metadata's timestamps (different in every packet).  Parsers whose
runs depend on more than their bytes are not cached, and say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import generate
from sfclab.lang import parse_file
from sfclab.runtime.traffic import packets_for
from sfclab.targets.connect import open_target
from sfclab.targets.model.tna import TnaSwitch

PROGRAMS = Path(__file__).parent / "programs"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ETH = bytes.fromhex("000000000005" "aaaaaaaaaa00" "9000") + b"payload"


def uncached(sw: TnaSwitch) -> TnaSwitch:
    for cp in sw.pipelines.values():
        cp.ingress.cache = cp.egress.cache = None
    return sw


def caches(sw: TnaSwitch) -> list:
    return [g.cache for cp in sw.pipelines.values() for g in (cp.ingress, cp.egress)
            if g.cache is not None]


def seen(res) -> tuple:
    return (res.outputs, res.passes, res.drop_reason, res.trace.to_dict())


@pytest.mark.parametrize("name", ["web.sfc", "p4sc_table3.sfc", "every_nf.sfc"])
def test_remembered_parser_runs_give_every_packet_what_running_the_parsers_gives(name):
    """Each class's packets, four rounds (the first two fill the caches, the others hit
    them), at a new time each: outputs, passes, drop reasons and whole traces as on a
    switch whose parsers run every time."""
    chains = parse_file(EXAMPLES / name)
    prog = generate(sfclab.compile(chains, arch="tna", pipes=2))
    with open_target("model?arch=tna&pipes=2") as a, open_target("model?arch=tna&pipes=2") as b:
        a.push(prog)
        b.push(prog)
        sa, sb = a.switch, uncached(b.switch)
        assert caches(sa) and not caches(sb)
        now = 1_000
        for chain in prog.compiled.chains:
            pkts = [bytes(p.packet) for p in packets_for(chain, 6, chains=prog.compiled.chains)]
            for _ in range(4):
                for pkt in pkts:
                    now += 7_919
                    assert seen(sa.process(1, pkt, now_us=now)) == \
                        seen(sb.process(1, pkt, now_us=now)), chain.name
        hits = sum(c.hits for c in caches(sa))
        assert hits >= sum(c.lookups for c in caches(sa)) // 3     # not all: dns never repeats


def stamped(tmp_path, parser_line: str = "") -> Path:
    """forward.p4 with the ingress control writing the MAC timestamp into the destination
    MAC (after the table matched it) and the egress control the enqueue timestamp into
    the source MAC (plus
    *parser_line* in the ingress parser's start state)."""
    text = (PROGRAMS / "forward.p4").read_text()
    text = text.replace("        fwd.apply();\n",
                        "        fwd.apply();\n"
                        "        hdr.ethernet.dst = ig_intr_md.ingress_mac_tstamp;\n", 1)
    text = text.replace("        hdr.bridge.setInvalid();\n",
                        "        hdr.bridge.setInvalid();\n"
                        "        hdr.ethernet.src = 30w0 ++ eg_intr_md.enq_tstamp;\n", 1)
    text = text.replace("struct ig_meta_t { }", "struct ig_meta_t { bit<48> ts; }")
    if parser_line:
        text = text.replace("        pkt.advance(PORT_METADATA_SIZE);\n",
                            "        pkt.advance(PORT_METADATA_SIZE);\n" + parser_line, 1)
    f = tmp_path / "forward.p4"
    f.write_text(text)
    return f


def test_a_remembered_run_carries_this_packets_timestamps(tmp_path):
    sw = TnaSwitch(stamped(tmp_path))
    assert sw.by_pipe[0].ingress.cache is not None and sw.by_pipe[0].egress.cache is not None
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 1})
    for now in (0, 3, 3, 1_000_000, 12):
        [(port, out)] = sw.process(3, ETH, now_us=now).outputs
        ns = now * 1000
        assert int.from_bytes(out[0:6], "big") == ns & (2**48 - 1)       # MAC timestamp
        assert int.from_bytes(out[6:12], "big") == ns & (2**18 - 1)      # enqueue timestamp
    assert sw.by_pipe[0].ingress.cache.hits == 3         # the first two parse


@pytest.mark.parametrize("line, why", [
    ("        md.ts = ig_intr_md.ingress_mac_tstamp;\n", "reads ig_intr_md.ingress_mac_tstamp"),
    ("        md.ts = (bit<48>) pkt.lookahead<bit<16>>();\n", "calls pkt.lookahead"),
], ids=["timestamp", "lookahead"])
def test_a_parser_that_reads_more_than_its_bytes_is_not_cached(tmp_path, line, why):
    sw = TnaSwitch(stamped(tmp_path, line))
    g = sw.by_pipe[0].ingress
    assert g.cache is None and why in g.uncached
    assert sw.by_pipe[0].egress.cache is not None                  # the other parser is
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 1})
    for now in (1, 2):
        [(_, out)] = sw.process(3, ETH, now_us=now).outputs
        assert int.from_bytes(out[0:6], "big") == now * 1000


def test_a_parser_error_is_never_remembered(tmp_path):
    """A packet too short for its headers: the parser's error each time, and no run kept."""
    sw = TnaSwitch(PROGRAMS / "forward.p4")
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 1})
    for _ in range(2):
        r = sw.process(3, ETH[:10])
        assert r.outputs == [] and "PacketTooShort" in r.drop_reason
    assert sw.by_pipe[0].ingress.cache.runs == {}


def test_packets_that_differ_in_their_last_header_byte_or_their_port_are_told_apart():
    """A run is remembered under every byte it consumed and the intrinsic metadata in
    front: a packet differing from a remembered one in the last byte its parsers read
    (the EtherType's low byte), or entering on another port, is parsed as itself."""
    sw = TnaSwitch(PROGRAMS / "forward.p4")
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 1})
    for port in (3, 3, 4, 3):
        for last in (0x00, 0x01, 0x00):
            pkt = ETH[:13] + bytes([last]) + b"payload %d" % last
            [(_, out)] = sw.process(port, pkt).outputs
            assert out[12:] == pkt[12:]                          # its EtherType, its payload
            assert (int.from_bytes(out[6:12], "big") >> 32) & 0x1FF == port   # bridged port
    assert sw.by_pipe[0].ingress.cache.hits == 5          # each one's third and later


def test_a_run_is_remembered_the_second_time_its_bytes_are_parsed(monkeypatch):
    """Every packet different (a new source MAC each): nothing is remembered (the notes of
    bytes seen once start again when full), and every packet runs as before; a flow's
    second packet is remembered and its third hits."""
    from sfclab.targets.model.tna import parse_cache

    monkeypatch.setattr(parse_cache, "SEEN", 16)
    sw = TnaSwitch(PROGRAMS / "forward.p4")
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 1})
    cache = sw.by_pipe[0].ingress.cache

    def send(i: int) -> None:
        pkt = ETH[:6] + i.to_bytes(6, "big") + ETH[12:]
        [(_, out)] = sw.process(3, pkt).outputs
        assert out[12:] == pkt[12:]

    for i in range(40):
        send(i)
        assert len(cache.seen) == i % 16 + 1
    assert cache.runs == {} and cache.hits == 0 and cache.lookups == 40
    send(39)                                       # seen once before: remembered
    assert len(cache.runs) == 1 and cache.hits == 0
    send(39)
    assert cache.hits == 1
    send(3)                                        # noted before the notes started again
    assert len(cache.runs) == 1
