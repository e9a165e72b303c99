"""Hand-written TNA programs on the embedded Tofino model, packet by packet.

The programs (``programs/*.p4``) are p4c-barefoot's to accept
(``test_tna_programs_tofino.py`` compiles them): bridged metadata and the egress
intrinsic metadata, two different pipelines, recirculation and loopback ports,
resubmit, ingress and egress mirrors, and each TNA extern sfclab's NFs use.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from scapy.all import IP, TCP, Ether, Raw

from sfclab.targets.model import ModelCompileError
from sfclab.targets.model.errors import InvalidValueError
from sfclab.targets.model.externs import crc16
from sfclab.targets.model.tna import TnaSwitch

PROGRAMS = Path(__file__).parent / "programs"


def switch(name: str, **kw) -> TnaSwitch:
    return TnaSwitch(PROGRAMS / name, **kw)


def where(result) -> list[str]:
    """The pipelets a packet ran in, in order (``pipe 0 ingress`` …)."""
    return [e.name for e in result.trace.events if e.kind == "pipeline_start"]


def mac(b: bytes, at: int) -> int:
    return int.from_bytes(b[at:at + 6], "big")


ETH = bytes.fromhex("000000000005" "aaaaaaaaaa00" "9000") + b"payload"


# -- forward.p4: bridged metadata, the egress intrinsic metadata, the traffic manager --------

@pytest.fixture(scope="module")
def fwd():
    return switch("forward.p4")


def test_bridged_metadata_reaches_egress_and_is_not_sent(fwd):
    fwd.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 6, "tag": 0x42})
    r = fwd.process(3, ETH)
    [(port, out)] = r.outputs
    assert port == 6 and len(out) == len(ETH)            # the bridge header stays inside
    # egress wrote: ingress port 3 (bridged), egress port 6 (eg_intr_md), tag 0x42 (bridged)
    assert mac(out, 6) == 3 << 32 | 6 << 16 | 0x42 << 8
    assert out[12:] == ETH[12:]
    assert where(r) == ["pipe 0 ingress", "pipe 0 egress"]


def test_a_packet_with_no_destination_is_dropped(fwd):
    r = fwd.process(3, bytes.fromhex("0000000000ff") + ETH[6:])
    assert r.outputs == [] and "no destination" in r.drop_reason
    assert where(r) == ["pipe 0 ingress"]


def test_drop_ctl_drops(fwd):
    fwd.insert("fwd", {"hdr.ethernet.dst": 9}, "Ig.drop")
    r = fwd.process(1, bytes.fromhex("000000000009") + ETH[6:])
    assert r.outputs == [] and "drop_ctl is 1" in r.drop_reason


def test_multicast_replicas_carry_their_rid(fwd):
    fwd.set_multicast_group(7, [(2, 10), (130, 11)])
    fwd.insert("fwd", {"hdr.ethernet.dst": 7}, "Ig.flood", {"grp": 7})
    r = fwd.process(1, bytes.fromhex("000000000007") + ETH[6:])
    assert sorted((p, mac(o, 6) & 0xFF) for p, o in r.outputs) == [(2, 10), (130, 11)]
    assert where(r) == ["pipe 0 ingress", "pipe 0 egress", "pipe 1 egress"]


def test_copy_to_cpu_goes_through_the_cpu_ports_pipe(fwd):
    fwd.insert("fwd", {"hdr.ethernet.dst": 8}, "Ig.to_cpu")
    r = fwd.process(1, bytes.fromhex("000000000008") + ETH[6:])
    assert sorted(p for p, _ in r.outputs) == [2, 192]
    assert "pipe 1 egress" in where(r)                  # 192 >> 7 == 1
    assert len(r.packet_ins) == 1


def test_ports_follow_tofino_numbering(fwd):
    fwd.insert("fwd", {"hdr.ethernet.dst": 0x86}, "Ig.send", {"port": 0x86, "tag": 0})
    r = fwd.process(129, bytes.fromhex("000000000086") + ETH[6:])
    assert r.ports == [0x86] and where(r) == ["pipe 1 ingress", "pipe 1 egress"]
    with pytest.raises(InvalidValueError, match="2-pipe"):
        fwd.process(300, ETH)                            # pipe 2 of a 2-pipe Tofino


def test_one_pipe_model_has_no_port_in_pipe_1():
    sw = switch("forward.p4", pipes=1)
    sw.insert("fwd", {"hdr.ethernet.dst": 5}, "Ig.send", {"port": 133, "tag": 0})
    r = sw.process(1, ETH)
    assert r.outputs == [] and "not a port" in r.drop_reason


# -- multipipe.p4: a Pipeline per pipe, crossing through the traffic manager ------------------

def test_each_pipe_runs_its_own_pipeline():
    sw = switch("multipipe.p4")
    r = sw.process(1, bytes.fromhex("000000000082") + ETH[6:])       # to port 130
    [(port, out)] = r.outputs
    assert port == 130 and where(r) == ["pipe 0 ingress", "pipe 1 egress"]
    assert mac(out, 6) & 0xFFFF == 0xB100                            # pipe_b's egress
    r = sw.process(129, bytes.fromhex("000000000002") + ETH[6:])     # pipe_b in, port 2 out
    [(port, out)] = r.outputs
    assert port == 2 and mac(out, 6) & 0xFF == 0xA0
    assert where(r) == ["pipe 1 ingress", "pipe 0 egress"]


def test_each_pipeline_has_its_own_tables():
    sw = switch("multipipe.p4")
    sw.insert("pipe_b.IngressB.types", {"hdr.ethernet.ether_type": 0x9000},
              "IngressB.set_type", {"t": 0x1234})
    assert sw.process(129, bytes.fromhex("000000000002") + ETH[6:]).outputs[0][1][12:14] \
        == b"\x12\x34"                                               # pipe 1: its entry
    assert sw.process(1, bytes.fromhex("000000000002") + ETH[6:]).outputs[0][1][12:14] \
        == b"\x90\x00"                                               # pipe 0: none


def test_recirculation_port_of_another_pipe():
    sw = switch("multipipe.p4")
    r = sw.process(1, bytes.fromhex("000000010003") + ETH[6:])       # via 196, then port 3
    [(port, out)] = r.outputs
    assert port == 3 and r.passes == 2
    assert out[12:14] == b"\x0b\x0b"                                 # pipe_b saw port 196
    assert where(r) == ["pipe 0 ingress", "pipe 1 egress", "pipe 1 ingress", "pipe 0 egress"]
    assert "recirculated on port 196 -> pass 1" in r.trace.text()


def test_a_switch_of_more_pipelines_than_pipes_is_refused():
    with pytest.raises(ModelCompileError, match="2 pipelines; this model has 1") as e:
        switch("multipipe.p4", pipes=1)
    assert "pipes=2" in e.value.hint


def test_a_pipe_without_a_pipeline_drops():
    sw = switch("multipipe.p4", pipes=4)
    r = sw.process(260, ETH)
    assert r.outputs == [] and "pipe 2 runs no program" in r.drop_reason


# -- loops.p4: recirculation and loopback ports ----------------------------------------------

def counted(left: int, via: int) -> bytes:
    return bytes.fromhex("000000000001" "000000000002" "88b5") + bytes([left, 0]) + \
        via.to_bytes(2, "big") + b"data"


def test_recirculation_port_of_the_packets_pipe():
    r = switch("loops.p4").process(1, counted(3, 68))
    [(port, out)] = r.outputs
    assert port == 2 and out[14:16] == b"\x00\x03" and r.passes == 4
    assert r.trace.text().count("recirculated on port 68") == 3


def test_a_loopback_port_turns_packets_round():
    r = switch("loops.p4", loopback=[5]).process(1, counted(2, 5))
    assert r.ports == [2] and r.passes == 3
    assert "looped back on port 5 -> pass 1" in r.trace.text()
    r = switch("loops.p4").process(1, counted(2, 5))                 # not looped: out of 5
    assert r.ports == [5] and r.passes == 1


def test_passes_are_bounded():
    r = switch("loops.p4").process(1, counted(200, 68))
    assert r.outputs == [] and "after 16 passes" in r.drop_reason


# -- resubmit.p4 --------------------------------------------------------------------------------

def test_resubmit_carries_its_header_in_place_of_the_port_metadata():
    r = switch("resubmit.p4").process(4, bytes.fromhex("00000000005a") + ETH[6:])
    [(port, out)] = r.outputs
    assert port == 2 and out[11] == 0x5A and r.passes == 2
    assert "resubmitted on port 4" in r.trace.text()


# -- mirror.p4 ----------------------------------------------------------------------------------

def test_ingress_mirror_copies_the_packet_as_it_came_in():
    sw = switch("mirror.p4")
    sw.set_clone_session(5, [3])
    r = sw.process(1, bytes.fromhex("000000000001") + ETH[6:])
    outs = dict(r.outputs)
    assert sorted(outs) == [2, 3]
    assert outs[2][11] == 0x11 and outs[2][12:14] == b"\x90\x00"      # forwarded, modified
    assert outs[3][6:12] == ETH[6:12] and outs[3][12:14] == b"\x0a\x05"  # the original, marked


def test_mirror_to_a_session_not_configured_is_not_made():
    r = switch("mirror.p4").process(1, bytes.fromhex("000000000001") + ETH[6:])
    assert r.ports == [2] and "session 5 not made" in r.trace.text()


def test_egress_mirror_copies_the_deparsed_packet():
    sw = switch("mirror.p4")
    sw.set_clone_session(6, [4])
    r = sw.process(1, bytes.fromhex("000000000002") + ETH[6:12] + b"\x0e\x0e" + b"x")
    outs = dict(r.outputs)
    assert sorted(outs) == [2, 4]
    assert outs[4][11] == 0x11 and outs[4][12:14] == b"\x0a\x06"


# -- externs.p4, checksum.p4 ------------------------------------------------------------------

def ipv4(src_byte: int = 7, ttl: int = 64, bad_checksum: bool = False) -> bytes:
    pkt = Ether(dst="00:00:00:00:00:01", src=f"00:00:00:00:00:{src_byte:02x}") / \
        IP(src="10.0.0.1", dst="10.0.0.2", ttl=ttl) / TCP(sport=1000, dport=80) / Raw(b"x" * 10)
    data = bytearray(bytes(pkt))
    if bad_checksum:
        data[24] ^= 0xFF
    return bytes(data)


def info(out: bytes) -> dict:
    b = out[34:34 + 13]
    return {"reg": int.from_bytes(b[0:4], "big"), "h16": int.from_bytes(b[4:6], "big"),
            "h32": int.from_bytes(b[6:10], "big"), "color": b[10], "dcolor": b[11]}


@pytest.fixture
def ext():
    return switch("externs.p4")


def test_register_action_runs_its_apply_on_the_cell(ext):
    regs = [info(ext.process(1, ipv4(7)).outputs[0][1])["reg"] for _ in range(3)]
    assert regs == [1, 2, 3]
    assert ext.read_register("seen", 7) == 3 and ext.read_register("seen", 8) == 0


def test_register_cells_are_per_pipe(ext):
    ext.process(1, ipv4(7))
    r = ext.process(129, ipv4(7))                    # pipe 1: its own cells
    assert info(r.outputs[0][1])["reg"] == 1
    ext.control_pipe = 1
    assert ext.read_register("seen", 7) == 1


def test_counters(ext):
    ext.insert("route", {"hdr.ipv4.dst": "10.0.0.2"}, "Ig.fwd", {"port": 3})
    for _ in range(2):
        assert ext.process(1, ipv4(7)).ports == [3]
    assert ext.read_counter("by_src", 7) == (2, 2 * len(ipv4(7)))
    assert ext.read_direct_counter("route", {"hdr.ipv4.dst": "10.0.0.2"}) == (2, 0)


def test_meters_report_tna_colours(ext):
    ext.set_meter("policer", 7, cir=1, cburst=1, pir=1, pburst=2)
    colors = [info(ext.process(1, ipv4(7), now_us=10).outputs[0][1])["color"]
              for _ in range(3)]
    assert colors == [0, 1, 3]                      # GREEN, YELLOW, RED (TNA's 3)
    ext.insert("classes", {"hdr.ipv4.src": "10.0.0.1"}, "Ig.meter_it")
    ext.set_direct_meter("classes", {"hdr.ipv4.src": "10.0.0.1"}, cir=1, cburst=1, pir=1,
                         pburst=1)
    assert info(ext.process(1, ipv4(7), now_us=10).outputs[0][1])["dcolor"] == 3
    assert info(switch("externs.p4").process(1, ipv4(7)).outputs[0][1])["dcolor"] == 0xFF


def test_hashes_are_bf_p4cs_crcs(ext):
    data = ipv4(7)
    got = info(ext.process(1, data).outputs[0][1])
    addrs = bytes(data[26:34])
    assert got["h16"] == crc16(addrs) and got["h32"] == zlib.crc32(addrs)


def test_digest_is_packed_by_the_ingress_deparser(ext):
    r = ext.process(4, ipv4(9, ttl=1))
    [d] = r.digests
    assert d.name == "learn_t" and d.data == {"src": 9, "port": 4}
    assert ext.read_digests() == [d]


def test_checksums_verify_recompute_and_update_incrementally():
    sw = switch("checksum.p4")
    r = sw.process(1, ipv4(7))
    [(port, out)] = r.outputs
    got = Ether(out)
    assert port == 2 and got[IP].src == "10.10.10.10" and got[TCP].sport == 0x1234
    assert got[IP].ttl == 63
    fresh = Ether(bytes(got))
    del fresh[IP].chksum, fresh[TCP].chksum
    fresh = Ether(bytes(fresh))                      # scapy recomputes both
    assert (got[IP].chksum, got[TCP].chksum) == (fresh[IP].chksum, fresh[TCP].chksum)
    assert sw.process(1, ipv4(7, bad_checksum=True)).ports == [3]


def test_updated_checksums_are_each_packets_own():
    """A generated TNA program (its deparsers update the IPv4 checksum in every gress):
    packets of one class that differ only in a field the checksum covers (the TTL, the
    identification), each sent twice, leave with the checksum their own bytes give (the
    deparser remembers checksums by the fields' values)."""
    import sfclab
    from sfclab.codegen import generate
    from sfclab.lang import parse_file
    from sfclab.runtime.traffic import packets_for
    from sfclab.targets.connect import open_target

    chains = parse_file(Path(__file__).resolve().parents[3] / "examples" / "web.sfc")
    prog = generate(sfclab.compile(chains, arch="tna", pipes=2))
    chain = prog.compiled.chains["web"]
    base = Ether(bytes(packets_for(chain, 1, chains=prog.compiled.chains)[0].packet))
    variants = []
    for field, value in [("ttl", 64), ("ttl", 65), ("ttl", 9), ("id", 77), ("id", 78)]:
        pkt = base.copy()
        setattr(pkt[IP], field, value)
        del pkt[IP].chksum
        variants.append(bytes(pkt))
    with open_target("model?arch=tna&pipes=2") as t:
        t.push(prog)
        for pkt in variants:
            for _ in range(2):
                [(_, out)] = t.switch.process(1, pkt).outputs
                got = Ether(out)
                fresh = got.copy()
                del fresh[IP].chksum
                assert got[IP].chksum == Ether(bytes(fresh))[IP].chksum
                assert got[IP].id == Ether(pkt)[IP].id


def test_random_draws_the_width_asked():
    sw = switch("checksum.p4", seed=3)
    ids = {Ether(sw.process(1, ipv4(7)).outputs[0][1])[IP].id & 0xFF for _ in range(40)}
    assert len(ids) > 20 and all(0 <= i < 256 for i in ids)


# -- what the model refuses, at load, with the line ------------------------------------------

def program(ingress_locals: str, ingress_apply: str = "") -> str:
    text = (PROGRAMS / "forward.p4").read_text()
    return text.replace("    action send(PortId_t port, bit<8> tag) {",
                        ingress_locals + "\n    action send(PortId_t port, bit<8> tag) {", 1) \
        .replace("        fwd.apply();\n", "        fwd.apply();\n" + ingress_apply, 1)


@pytest.mark.parametrize("locals_, apply_, match", [
    ("    Lpf<bit<16>, bit<8>>(16) lpf;", "", r"forward\.p4:\d+:\d+: extern Lpf .* not modelled"),
    ("    Hash<bit<16>>(HashAlgorithm_t.CRC64) h;", "",
     r"forward\.p4:\d+:\d+: Hash pipe\.Ig\.h: HashAlgorithm_t\.CRC64 is not modelled"),
    ("", "        mark_to_drop();\n", r"forward\.p4:\d+:\d+: mark_to_drop\(\) is v1model's"),
])
def test_what_the_model_does_not_run_is_refused_with_the_line(tmp_path, locals_, apply_, match):
    f = tmp_path / "forward.p4"
    f.write_text(program(locals_, apply_))
    with pytest.raises(ModelCompileError, match=match):
        TnaSwitch(f)


def test_the_egress_prefix_remembers_what_its_bytes_unpack_to(fwd):
    """The egress parser takes the values the prefix's bytes unpack to from the packet's
    memo: they must be exactly what unpacking the bytes gives."""
    from sfclab.targets.model.parser_rt import _field_codec

    t = fwd.env.named("egress_intrinsic_metadata_t")
    unpack, _ = _field_codec(t)
    for port, rid, length, ns in ((6, 0, 64, 0), (511, 0xFFFF, 70000, 2**40 + 12345), (68, 3, 0, 7)):
        memo: dict = {}
        raw = fwd.by_pipe[0].eg_prefix(port, rid, length, ns, memo)
        assert len(raw) == 27
        assert memo == {(t.name, raw): unpack(int.from_bytes(raw, "big"))}


def test_the_ingress_prefix_remembers_what_its_bytes_unpack_to(fwd):
    """As the egress prefix: the ingress intrinsic metadata's values in the memo are what
    its 8 bytes unpack to (resubmit flag, port, MAC timestamp)."""
    from sfclab.targets.model.parser_rt import _field_codec

    t = fwd.env.named("ingress_intrinsic_metadata_t")
    unpack, _ = _field_codec(t)
    for resubmitted, port, ns in ((False, 3, 0), (True, 511, 2**48 + 99), (False, 196, 12345)):
        memo: dict = {}
        raw = fwd.by_pipe[0].ig_prefix(resubmitted, port, ns, memo)
        assert len(raw) == 8 and raw[0] >> 7 == resubmitted
        assert memo == {(t.name, raw): unpack(int.from_bytes(raw, "big"))}


@pytest.mark.parametrize("name, port, packet", [
    ("loops.p4", 1, counted(3, 68)),              # recirculated three times
    ("checksum.p4", 1, ipv4(7)),                  # headers rewritten, checksums updated
    ("mirror.p4", 1, bytes.fromhex("000000000001") + ETH[6:]),
], ids=["recirculated", "rewritten", "mirrored"])
def test_every_header_the_memo_remembers_unpacks_from_its_bytes(name, port, packet):
    """A deparser that packs changed values tells the packet's memo what the bytes unpack
    to, so that the next gress's parser takes them from there: after a packet ran, every
    header the memo holds is exactly what unpacking its bytes gives (values and types)."""
    from sfclab.targets.model.parser_rt import _field_codec

    sw = switch(name)
    if name == "mirror.p4":
        sw.set_clone_session(5, [3])
    assert sw.process(port, packet).outputs
    seen = 0
    for key, vals in sw._memo.items():
        if not (isinstance(key, tuple) and isinstance(key[0], str) and isinstance(key[1], bytes)):
            continue                                  # a checksum's field list sum
        want = _field_codec(sw.env.named(key[0]))[0](int.from_bytes(key[1], "big"))
        assert vals == want and [type(x) for x in vals] == [type(x) for x in want], key[0]
        seen += 1
    assert seen >= 3
