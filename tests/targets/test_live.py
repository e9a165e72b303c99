"""Live tests on the real tools; each skips naming the executable that is missing.

Run with ``pytest -m bmv2`` / ``-m tofino`` on a machine with p4c and BMv2
(``simple_switch_grpc`` built with P4Runtime and, for traces, the event logger)
or an Intel SDE.  The pipeline is pushed here with raw P4Runtime messages
(finsy's protobuf modules) so these tests do not depend on sfclab's runtime client.
"""

from __future__ import annotations

import queue

import pytest
from targets_support import live_skip

from sfclab.targets.bmv2 import target as B
from sfclab.targets.tofino import target as T
from sfclab.targets.process.tools import find_executable, unix_socket_open

CHAIN = "chain web match tcp.dport == 80: firewall -> l3fwd"


def _generated(arch: str):
    import sfclab
    from sfclab.codegen import generate

    return generate(sfclab.compile(CHAIN), arch=arch)


def _push_pipeline(target: B.Bmv2Target, p4info_path) -> tuple:
    """Arbitration, then SetForwardingPipelineConfig(VERIFY_AND_COMMIT)."""
    import grpc
    from finsy.proto import p4i, p4r, p4r_grpc
    from google.protobuf import text_format

    channel = grpc.insecure_channel(target.grpc_address)
    stub = p4r_grpc.P4RuntimeStub(channel)
    requests: queue.Queue = queue.Queue()
    election = p4r.Uint128(high=0, low=1)
    requests.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=target.device_id, election_id=election)))
    stream = stub.StreamChannel(iter(requests.get, None))
    first = next(stream)
    assert first.HasField("arbitration"), first
    info = text_format.Parse(p4info_path.read_text(), p4i.P4Info())
    stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
        device_id=target.device_id, election_id=election,
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        config=p4r.ForwardingPipelineConfig(p4info=info,
                                            p4_device_config=target.device_config())),
        timeout=30)
    return channel, requests, stream     # keep the stream (and mastership) open


@pytest.mark.bmv2
def test_live_p4c_bm2_ss_compiles_the_composed_program(tmp_path):
    from sfclab.codegen.p4c import compiler_p4info, find_compiler

    live_skip([] if find_compiler("v1model") else ["p4c-bm2-ss"])
    build = B.compile_v1model(_generated("v1model"), tmp_path / "out")
    names = build.names()
    tables = {n for (kind, _), n in names.names.items() if kind == "table"}
    assert {"SfcIngress.slot0_firewall.acl", "SfcIngress.slot1_l3fwd.ipv4_lpm"} <= tables
    assert {names.name("pipeline", i) for i in (0, 1)} == {"ingress", "egress"}
    # p4c 1.2.5 heads its text P4Info with the protobuf text-format comment lines
    text = build.p4info_path.read_text()
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n"
                           "# proto-message: p4.config.v1.P4Info\n"), text[:200]
    info = compiler_p4info(build.p4info_path)
    assert info.pkg_info.arch == "v1model"
    assert {t.preamble.name for t in info.tables} >= {"SfcIngress.slot0_firewall.acl"}


@pytest.mark.bmv2
def test_live_simple_switch_grpc_starts_and_stops(tmp_path):
    live_skip([] if B.find_switch() else [B.SWITCH])
    t = B.Bmv2Target.start(workdir=tmp_path / "w", timeout=30)
    try:
        assert t.owned and unix_socket_open(t.grpc_address.removeprefix("unix:"))
    finally:
        assert t.stop() is not None
    assert not t.process.running


@pytest.mark.bmv2
def test_live_pipeline_push_and_packet_trace(tmp_path):
    """Pcap-file ports: BMv2 reads them once, --use-files seconds after the first config
    is committed; the trace comes from the event logger (run_pcap waits for it)."""
    live_skip(B.missing_tools())
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether

    from sfclab.targets.bmv2.pcap_ports import run_pcap

    frame = bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01")
                  / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1234, dport=80))
    [r] = run_pcap(_generated("v1model"), [(1, frame)], wait=3, workdir=tmp_path / "w")
    tr = r.trace
    assert tr.ingress_port == 1 and not [e for e in tr.events if e.kind == "note"], tr.text()
    assert any(name == "SfcIngress.initializer" for name, _ in tr.tables()), tr.text()
    assert not [e for e in tr.events if "#" in e.name], tr.text()


@pytest.mark.bmv2
def test_live_batch_comes_back_whole(tmp_path):
    """2,000 packets through send_many: each one's outputs and trace as on the model, or,
    where BMv2's lossy event logger dropped some of its events (it does under load: a
    loaded machine made 66 window losses once), the packet's trace says so.  How often
    that happens is measured in benchmarks/bench_bmv2.py, not asserted here."""
    live_skip(B.missing_tools())
    from sfclab.runtime.traffic import packets_for
    from sfclab.targets.connect import open_target
    from sfclab.targets.model import ModelTarget
    from sfclab.targets.traces.trace import diff_traces

    gen = _generated("v1model")
    chains = gen.composition.compiled.chains
    some = [(cp.port, bytes(cp.packet)) for ch in chains
            for cp in packets_for(ch, 100, chains=chains)]
    packets = [some[k % len(some)] for k in range(2000)]
    with ModelTarget() as model:
        model.push(gen)
        want = [model.send(p, f) for p, f in packets]
    with open_target("bmv2") as sw:
        sw.push(gen)
        got = sw.send_many(packets)
        window = sw.window
    told = ("events were lost", "no events from the switch", "taken as lost",
            "PACKET_OUT event was lost", "did not arrive")
    wrong = [(k, diff_traces(a.trace, b.trace)) for k, (a, b) in enumerate(zip(want, got))
             if a.outputs != b.outputs or diff_traces(a.trace, b.trace)]
    untold = [(k, d) for k, d in wrong
              if not any(e.kind == "note" and any(t in str(e.value) for t in told)
                         for e in got[k].trace.events)]
    assert not untold, untold[:3]
    assert len(wrong) < len(packets), window          # not every packet lost its events
    assert len(got) == len(packets)


@pytest.mark.bmv2
def test_live_diff_targets_model_vs_bmv2():
    """The model and a real BMv2 run the same packets the same way (packets over BMv2's
    packet-in socket, traces from its event logger)."""
    from sfclab.targets.diff import diff_targets

    live_skip(B.missing_tools())
    report = diff_targets(_generated("v1model"), "model", "bmv2", packets=3)
    assert report.compared == 3
    assert report.same, report.text()


@pytest.mark.bmv2
def test_live_the_p4info_hint_comes_only_with_bmv2s_bare_invalid_id():
    """BMv2 answers a Read of an id its P4Info lacks with INVALID_ARGUMENT ``Invalid P4
    id``: sfclab's client adds that the request does not fit the P4Info; to a refusal
    that says what is wrong (``Table has no direct counters``) it adds nothing."""
    live_skip(B.missing_tools())
    from finsy.proto import p4r

    from sfclab.errors import TargetError
    from sfclab.targets.connect import open_target

    with open_target("bmv2") as sw:
        sw.push(_generated("v1model"))
        c = sw.session.client
        table = next(t.preamble.id for t in c.get_pipeline().p4info.tables
                     if not t.direct_resource_ids)
        for entity, said, hint in [
            (p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02ffffff)), "Invalid P4 id",
             "the request does not fit the program's P4Info"),
            (p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
                table_entry=p4r.TableEntry(table_id=table))), "Table has no direct counters",
             ""),
        ]:
            with pytest.raises(TargetError) as info:
                c.read([entity])
            e = info.value
            assert (e.status, e.message, e.hint) == (
                "INVALID_ARGUMENT", f"Read failed: INVALID_ARGUMENT: {said}", hint)


@pytest.mark.tofino
def test_live_bf_p4c_and_device_configs(tmp_path):
    live_skip([] if T.find_bf_p4c() else ["bf-p4c"])
    build = T.compile_tna(_generated("tna"), tmp_path / "out")
    name, binary, context = T.unpack_pi_device_config(build.pi_device_config())
    assert name == build.program_name and binary and context.lstrip().startswith(b"{")
    assert build.bf_pipeline_config()


@pytest.mark.tofino
def test_live_tofino_model_command_points_at_real_files(tmp_path):
    missing = [n for n in ("bf-p4c", "tofino-model") if
               (T.find_bf_p4c() if n == "bf-p4c" else find_executable(n, dirs=T._sde_bins()))
               is None]
    live_skip(missing)
    sde = T.find_sde_install()
    live_skip([] if sde else ["an SDE install directory (SDE_INSTALL)"])
    build = T.compile_tna(_generated("tna"), tmp_path / "out")
    cmd = T.tofino_model_command(build.conf_path, sde_install=sde)
    assert cmd[cmd.index("--p4-target-config") + 1] == str(build.conf_path)
    assert build.conf_path.exists()


def test_push_helper_against_a_fake_p4runtime_server(tmp_path, bmv2_json):
    """The live test's P4Runtime messages, checked against an in-process server."""
    from concurrent import futures

    import grpc
    from finsy.proto import p4r, p4r_grpc

    seen = {}

    class Server(p4r_grpc.P4RuntimeServicer):
        def StreamChannel(self, request_iterator, context):
            for req in request_iterator:
                seen["arbitration"] = req.arbitration
                yield p4r.StreamMessageResponse(arbitration=req.arbitration)

        def SetForwardingPipelineConfig(self, request, context):
            seen["set"] = request
            return p4r.SetForwardingPipelineConfigResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    p4r_grpc.add_P4RuntimeServicer_to_server(Server(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        info = tmp_path / "p4info.txt"
        info.write_text('pkg_info { arch: "v1model" }\ntables { preamble { id: 1 name: "t" } }\n')
        t = B.Bmv2Target.attach(f"bmv2://127.0.0.1:{port}?device_id=3", build=bmv2_json)
        channel, requests, _ = _push_pipeline(t, info)
        requests.put(None)
        channel.close()
    finally:
        server.stop(None)
    assert seen["arbitration"].device_id == 3 and seen["arbitration"].election_id.low == 1
    req = seen["set"]
    assert req.action == p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    assert req.config.p4_device_config == bmv2_json.read_bytes()
    assert req.config.p4info.pkg_info.arch == "v1model" and req.device_id == 3
