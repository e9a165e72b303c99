"""The BMv2 / p4c stand-ins (standin_bmv2.py) themselves: compile, start, push over
P4Runtime, packets through the packet-in socket, traces from the event logger.

The stand-ins run sfclab's own model behind BMv2's interfaces, so these tests hold
them to the model: the traces decoded from their event logger must equal the
model's own traces of the same packets.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import time
from pathlib import Path

import pynng
import pytest
from standin_bmv2 import (
    COMPILER_NAME,
    INFO_REP,
    INFO_REQ,
    PACKET_HEADER,
    PACKET_IN,
    PACKET_OUT,
    STANDIN_KEY,
    install_standins,
)

import sfclab
from sfclab.codegen import generate
from sfclab.codegen import Generated
from sfclab.codegen.p4c import compiler_p4info, run_p4c
from sfclab.codegen.p4info import build_p4info, p4info_from_text
from sfclab.errors import TargetError
from sfclab.p4 import parse_p4
from sfclab.runtime.client import Client
from sfclab.runtime.session import Session
from sfclab.runtime.traffic import packets_for
from sfclab.targets.bmv2 import events as E
from sfclab.targets.bmv2.target import compile_v1model, switch_command, switch_options
from sfclab.targets.bmv2.events import NameMap, decode_events
from sfclab.targets.model import ModelTarget
from sfclab.targets.process.tools import ManagedProcess, free_port, wait_for_port

WEB = "chain web match tcp.dport == 80: firewall -> l3fwd"
#: FlexMesh Fig. 1 on the naive pipeline: chain r needs two passes (a recirculation).
RECIRC = ("chain p match tcp.dport == 80: l3fwd -> firewall -> nat\n"
          "chain r match tcp.dport == 8080: l3fwd -> nat -> firewall")

#: A small v1model program with an egress table, for the pipelines of the JSON.
EGRESS_PROGRAM = """\
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t_in { key = { hdr.eth.dst: exact; } actions = { fwd; NoAction; }
                 default_action = fwd(2); }
    apply { t_in.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_src(bit<48> s) { hdr.eth.src = s; }
    table t_out { actions = { set_src; NoAction; } default_action = set_src(5); }
    apply { t_out.apply(); }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
"""


# -- helpers -------------------------------------------------------------------------------------

@pytest.fixture
def standins(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """The stand-ins installed in tmp_path/bin and named by SFCLAB_BMV2 / SFCLAB_P4C."""
    switch, p4c = install_standins(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(switch))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    return switch, p4c


def _bmv2_config(gen: Generated) -> tuple[bytes, object]:
    """What sfclab pushes to a BMv2 switch: p4c-bm2-ss's JSON and its P4Info."""
    with tempfile.TemporaryDirectory(prefix="sfclab-standin-") as out:
        build = compile_v1model(gen, out)
        return build.device_config(), p4info_from_text(build.p4info_path.read_text())


def _ipc_dir(tmp_path: Path) -> Path:
    """A directory for IPC sockets whose paths fit ``sun_path``."""
    if len(str(tmp_path)) < 80:
        return tmp_path
    return Path(tempfile.mkdtemp(prefix="sfc-"))


class _Switch:
    """A stand-in switch process with its addresses; always stopped by the test."""

    def __init__(self, exe: Path, tmp_path: Path, device_id: int = 0,
                 packet_in: bool = True, nanolog: bool = True) -> None:
        d = _ipc_dir(tmp_path)
        self.device_id = device_id
        self.grpc = f"127.0.0.1:{free_port()}"
        self.packet_in = f"ipc://{d}/pin.ipc" if packet_in else None
        self.nanolog = f"ipc://{d}/ev.ipc" if nanolog else None
        cmd = switch_command(str(exe), grpc_addr=self.grpc, device_id=device_id,
                             nanolog=self.nanolog)
        if self.packet_in:
            cmd[1:1] = ["--packet-in", self.packet_in]
        self.proc = ManagedProcess.start(cmd, log_path=tmp_path / "switch.out")
        try:
            host, port = self.grpc.rsplit(":", 1)
            wait_for_port(host, int(port), timeout=10, process=self.proc, what="the stand-in")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> int | None:
        return self.proc.stop(timeout=5)


def _recv_until_quiet(sock, quiet: float = 0.3, timeout: float = 5.0) -> list[bytes]:
    out: list[bytes] = []
    start = last = time.monotonic()
    while time.monotonic() - last < quiet and time.monotonic() - start < timeout:
        try:
            out.append(bytes(sock.recv()))
            last = time.monotonic()
        except pynng.Timeout:
            pass
    return out


def _wait_config_change(sub) -> None:
    """Wait for the CONFIG_CHANGE of the push: the subscription is live from then on."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if E.decode_message(bytes(sub.recv())).type == E.CONFIG_CHANGE:
                return
        except pynng.Timeout:
            pass
    raise AssertionError("no CONFIG_CHANGE from the stand-in's event logger")


# -- p4c-bm2-ss ----------------------------------------------------------------------------------

def test_p4c_writes_bmv2_json_and_sfclabs_p4info(standins, tmp_path):
    gen = generate(sfclab.compile(WEB))
    build = compile_v1model(gen, tmp_path / "out")       # run_p4c's exact command line
    doc = json.loads(build.device_config())
    assert doc["__meta__"] == {"version": [2, 23], "compiler": COMPILER_NAME}
    assert doc[STANDIN_KEY] == gen.program.text
    assert doc["parsers"] == [{"name": "parser", "id": 0}]
    names = build.names()
    tables = {n for (k, _), n in names.names.items() if k == "table"}
    assert tables == {"SfcIngress.initializer", "SfcIngress.rewinder",
                      "SfcIngress.slot0_firewall.acl", "SfcIngress.slot1_l3fwd.ipv4_lpm",
                      "tbl_standin_drop", "tbl_standin_forward"}
    # as p4c does for the statements outside actions (here the ingress's last if-chain:
    # mark_to_drop, egress_spec = …), keyless tables of their own, hidden from traces
    assert {names.names[("table", t)] for t in names.synthetic_tables} == \
        {"tbl_standin_drop", "tbl_standin_forward"}
    assert ("action", 0) in names.names and "SfcIngress.slot1_l3fwd.route" in names.names.values()
    # the primitives deciding a packet's fate, which sfclab reads to tell a drop
    verdicts = {names.names[("action", a)]: v for a, v in names.verdicts.items()}
    assert verdicts == {"standin_drop": "drop", "standin_forward": "forward"}
    assert "ethernet" in names.names.values() and "mpls[0]" in names.names.values()
    # as p4c 1.2.5 writes it: the protobuf text-format header comments, then the message
    text = build.p4info_path.read_text()
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n"
                           "# proto-message: p4.config.v1.P4Info\n\npkg_info {")
    info = p4info_from_text(text)
    assert info == build_p4info(gen.program.program) == compiler_p4info(build.p4info_path)
    # the ids depend on the program only ("program" is the file's path, as in p4c's JSON)
    again = json.loads(compile_v1model(gen, tmp_path / "again").device_config())
    assert again.pop("program") != doc.pop("program") and again == doc


def test_p4c_puts_egress_tables_in_the_egress_pipeline(standins, tmp_path):
    src = tmp_path / "eg.p4"
    src.write_text(EGRESS_PROGRAM)
    res = run_p4c(src, "v1model", tmp_path)
    assert res.ok, res.output
    doc = json.loads((tmp_path / "program.json").read_text())
    pipes = {p["name"]: [t["name"] for t in p["tables"]] for p in doc["pipelines"]}
    assert pipes == {"ingress": ["I.t_in"], "egress": ["Eg.t_out"]}
    ids = [t["id"] for p in doc["pipelines"] for t in p["tables"]]
    assert sorted(ids) == [0, 1]
    assert NameMap.from_json(doc).name("table", ids[1]) == "Eg.t_out"


def test_p4c_reports_a_broken_program_as_p4c_does(standins, tmp_path):
    gen = generate(sfclab.compile(WEB))
    text = gen.program.text.replace("hdr.ipv4.ttl", "hdr.ipv4.ttlx", 1)
    src = tmp_path / "broken.p4"
    src.write_text(text)
    res = run_p4c(src, "v1model", tmp_path, parse_p4(gen.program.text))
    assert res.returncode == 1 and not (tmp_path / "program.json").exists()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "ttlx" in s)
    assert res.messages, res.output
    assert res.messages[0].startswith(f"{src}({line}): error: hdr.ipv4 has no field 'ttlx'")
    assert "(in control " in res.messages[0]            # sfclab located the line
    with pytest.raises(TargetError, match=r"p4c-bm2-ss failed on .*\(exit 1\)"):
        compile_v1model(tmp_path / "broken.p4", tmp_path / "o2")


# -- simple_switch_grpc --------------------------------------------------------------------------

@pytest.mark.parametrize("chains,pipeline", [(WEB, None), (RECIRC, "naive")],
                         ids=["web", "recirculation"])
def test_round_trip_matches_the_model(standins, tmp_path, chains, pipeline):
    """Compile, start, push, send packets on the packet-in socket, decode the event
    logger: each trace equals the model's own trace of the same packet."""
    from scapy.all import ICMP, IP, Ether

    compiled = sfclab.compile(chains, pipeline=pipeline) if pipeline else sfclab.compile(chains)
    gen = generate(compiled)
    packets = [(cp.port, bytes(cp.packet)) for ch in compiled.chains
               for cp in packets_for(ch, 2, chains=compiled.chains)]
    packets.append((1, bytes(Ether() / IP(dst="10.9.9.9") / ICMP())))   # no chain: dropped
    with ModelTarget() as model:
        model.push(gen)
        want = [model.send(port, data) for port, data in packets]
    assert any(r.dropped for r in want) and any(not r.dropped for r in want)
    if pipeline:
        assert any(r.passes == 2 for r in want)

    switch_exe, _ = standins
    sw = _Switch(switch_exe, tmp_path, device_id=2)
    client = None
    pair = pynng.Pair0(recv_timeout=3000, send_timeout=3000)
    sub = pynng.Sub0(recv_timeout=100, recv_buffer_size=8192)
    try:
        sub.subscribe(b"")
        sub.dial(sw.nanolog, block=True)
        pair.dial(sw.packet_in, block=True)
        # BMv2 reads its packet-in socket only once a config is loaded (start_and_return
        # waits for it): the INFO_REQ is answered after the push, not before
        pair.send(PACKET_HEADER.pack(INFO_REQ, 7, 1))
        pair.recv_timeout = 500
        with pytest.raises(pynng.Timeout):
            pair.recv()
        pair.recv_timeout = 3000

        client = Client(sw.grpc, device_id=2).connect()
        session = Session(client, _bmv2_config)       # what bmv2:// targets push
        assert session.push(gen) == len(gen.entries)
        _wait_config_change(sub)
        assert bytes(pair.recv()) == PACKET_HEADER.pack(INFO_REP, 7, 1) + struct.pack("<i", 1)
        assert json.loads(client.get_pipeline().p4_device_config)[STANDIN_KEY] \
            == gen.program.text

        for port, data in packets:
            pair.send(PACKET_HEADER.pack(PACKET_IN, port, len(data)) + data)
        expected_out = [(p, b) for r in want for p, b in r.outputs if p != 255]
        outs = []
        for _ in expected_out:
            msg = bytes(pair.recv())
            kind, port, more = PACKET_HEADER.unpack_from(msg)
            assert kind == PACKET_OUT and more == len(msg) - PACKET_HEADER.size
            outs.append((port, msg[PACKET_HEADER.size:]))
        assert outs == expected_out
        msgs = _recv_until_quiet(sub)
    finally:
        if client is not None:
            client.close()
        pair.close()
        sub.close()
        rc = sw.stop()
    assert rc == 0, sw.proc.tail()

    names = NameMap.from_json(_bmv2_config(gen)[0])
    got = decode_events(msgs, names, device_id=2)
    assert [t.packet_id for t in got] == list(range(len(packets)))
    for t, r in zip(got, want):
        m = r.trace
        assert (t.ingress_port, t.egress_port, t.dropped) == \
            (m.ingress_port, m.egress_port, m.dropped)
        assert t.nfs() == m.nfs() and t.tables() == m.tables() and t.passes == m.passes
        assert [e.name for e in t.events if e.kind == "action"] == \
            [e.name for e in m.events if e.kind == "action"]
        # each ingress ends with p4c's action for its last if-chain, as on a real BMv2:
        # one p4c made of plain statements, which the trace shows as what it runs
        deciders = [e.name for e in t.events if e.kind == "statements"]
        assert len(deciders) == t.passes
        assert deciders[-1] == ("standin_drop" if m.dropped else "standin_forward")
    log = sw.proc.tail(200)
    assert "serving P4Runtime on " in log and "out on port" in log


def test_switch_refuses_a_json_that_is_not_the_standins(standins, tmp_path, bmv2_json):
    gen = generate(sfclab.compile(WEB))
    switch_exe, _ = standins
    sw = _Switch(switch_exe, tmp_path, packet_in=False, nanolog=False)
    try:
        with Client(sw.grpc, device_id=0) as client:
            info = build_p4info(gen.program.program)
            with pytest.raises(TargetError, match="INVALID_ARGUMENT.*only BMv2 JSON written by "
                                                  "the stand-in p4c-bm2-ss"):
                client.set_pipeline(info, bmv2_json.read_bytes())     # p4c's real JSON
            with pytest.raises(TargetError, match="INVALID_ARGUMENT.*not a BMv2 JSON"):
                client.set_pipeline(info, gen.program.text.encode())  # the model's config
            assert not client.get_pipeline().p4_device_config
    finally:
        rc = sw.stop()
    assert rc == 0, sw.proc.tail()


def test_switch_command_line(standins, tmp_path):
    switch_exe, _ = standins
    opts = switch_options(str(switch_exe))
    assert {"--device-id", "--packet-in", "--nanolog", "--thrift-port", "--notifications-addr",
            "--use-files", "--no-p4", "--grpc-server-addr", "--cpu-port"} <= opts
    # pcap ports: the input file is opened at start, and a missing one is fatal
    pm = ManagedProcess.start([str(switch_exe), "--use-files", "5", "-i", f"1@{tmp_path}/x",
                               "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:1"],
                              log_path=tmp_path / "u.out")
    try:
        assert pm.wait(10) == 1
    finally:
        pm.stop()
    assert f"Adding interface {tmp_path}/x as port 1 (files)" in pm.tail()
    assert f"[critical] {tmp_path}/x_in.pcap: No such file or directory" in pm.tail()
    assert os.access(switch_exe, os.X_OK) and switch_exe.read_text().startswith("#!")


def test_p4c_refuses_an_extern_specialisation_v1model_p4_does_not_declare(standins, tmp_path):
    """p4c 1.2.5.16 refused register<T, I> without V1MODEL_VERSION >= 20200408 (issue 13)."""
    text = generate(sfclab.compile("chain c: heavy_hitter")).program.text
    src = tmp_path / "old.p4"
    src.write_text(text.replace("#define V1MODEL_VERSION 20200408\n", ""))
    res = run_p4c(src, "v1model", tmp_path)
    assert res.returncode == 1 and not (tmp_path / "program.json").exists()
    assert ": error: register<bit<32>, bit<10>>: Type register has 1 type parameter(s), but it " \
           "is specialized with 2" in res.output
    src.write_text(text)
    assert run_p4c(src, "v1model", tmp_path).ok
