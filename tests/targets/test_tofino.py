"""The Tofino target: device-config packing, bf-p4c builds, URLs, SDE command lines."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from targets_support import write_exe
from tofino_programs import (CI_NF_PROGRAMS, EXAMPLES, FULL, FULL_COMMAND, NFS, P4C_BAREFOOT,
                             PIPELINES, needs_tofino_compiler, network_programs,
                             swept_example_programs, swept_examples, swept_networks,
                             swept_nf_programs)

import sfclab
from sfclab.codegen import generate
from sfclab.errors import CompileError, TargetError
from sfclab.targets.tofino import target as T
from sfclab.targets.tofino.target import (
    SlotStages,
    bfa_tables,
    slot_stages,
    stage_table,
    TnaBuild,
    TofinoTarget,
    bf_switchd_command,
    compile_tna,
    pack_bf_pipeline_config,
    pack_pi_device_config,
    parse_tofino_url,
    sde_env,
    tofino_model_command,
    unpack_pi_device_config,
)

# -- packing ---------------------------------------------------------------------------------------


def test_pi_packing_matches_p4runtime_shell_test_vector():
    # p4runtime-shell config_builders/test_tofino.py: prog "myprog", bin b"\xab", ctx "{}".
    expected = (b"\x06\x00\x00\x00" + b"myprog" + b"\x01\x00\x00\x00" + b"\xab"
                + b"\x02\x00\x00\x00" + b"{}")
    assert pack_pi_device_config("myprog", b"\xab", b"{}") == expected
    assert unpack_pi_device_config(expected) == ("myprog", b"\xab", b"{}")


def test_pi_packing_lengths_are_little_endian_int32():
    blob = bytes(300)
    packed = pack_pi_device_config("p", blob, b"")
    assert packed[5:9] == (300).to_bytes(4, "little")
    assert len(packed) == 4 + 1 + 4 + 300 + 4


@pytest.mark.parametrize("data,match", [
    (b"\x01\x00", "ends before the length of its program name"),
    (b"\x09\x00\x00\x00abc", "program name length 9 runs past its end"),
    (pack_pi_device_config("p", b"b", b"c") + b"x", "1 trailing bytes"),
    (b"\x01\x00\x00\x00p", "ends before the length of its tofino.bin"),
])
def test_pi_unpacking_errors(data, match):
    with pytest.raises(TargetError, match=match):
        unpack_pi_device_config(data)


def _bf_pipeline_config_class():
    """BfPipelineConfig from Stratum's bf.proto, built at run time."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FileDescriptorProto(name="sfclab_test_bf.proto",
                                           package="stratum.hal.barefoot", syntax="proto3")
    msg = f.message_type.add(name="BfPipelineConfig")
    prof = msg.nested_type.add(name="Profile")
    FD = descriptor_pb2.FieldDescriptorProto
    for name, num, typ, label in (("profile_name", 1, FD.TYPE_STRING, FD.LABEL_OPTIONAL),
                                  ("context", 2, FD.TYPE_BYTES, FD.LABEL_OPTIONAL),
                                  ("binary", 3, FD.TYPE_BYTES, FD.LABEL_OPTIONAL),
                                  ("pipe_scope", 4, FD.TYPE_UINT32, FD.LABEL_REPEATED)):
        prof.field.add(name=name, number=num, type=typ, label=label)
    msg.field.add(name="p4_name", number=1, type=FD.TYPE_STRING, label=FD.LABEL_OPTIONAL)
    msg.field.add(name="bfruntime_info", number=2, type=FD.TYPE_BYTES, label=FD.LABEL_OPTIONAL)
    msg.field.add(name="profiles", number=3, type=FD.TYPE_MESSAGE, label=FD.LABEL_REPEATED,
                  type_name=".stratum.hal.barefoot.BfPipelineConfig.Profile")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    desc = pool.FindMessageTypeByName("stratum.hal.barefoot.BfPipelineConfig")
    return message_factory.GetMessageClass(desc)


def test_bf_pipeline_config_is_stratums_protobuf():
    cls = _bf_pipeline_config_class()
    big = bytes(range(256)) * 3
    ours = pack_bf_pipeline_config("sfc", b'{"tables": []}',
                                   [("pipe", b'{"ctx": 1}', big, [0, 1, 2, 3]),
                                    ("pipe1", b"{}", b"\x01", [300])])
    msg = cls.FromString(ours)
    assert msg.p4_name == "sfc" and msg.bfruntime_info == b'{"tables": []}'
    assert [(p.profile_name, p.context, p.binary, list(p.pipe_scope)) for p in msg.profiles] == [
        ("pipe", b'{"ctx": 1}', big, [0, 1, 2, 3]), ("pipe1", b"{}", b"\x01", [300])]
    assert msg.SerializeToString(deterministic=True) == ours


# -- bf-p4c builds ---------------------------------------------------------------------------------


def _write_build(root: Path, *, absolute=True, pipes=("pipe",), name="program") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bfrt.json").write_text('{"schema_version": "1.0.0"}')
    pipelines = []
    for p in pipes:
        (root / p).mkdir(exist_ok=True)
        (root / p / "context.json").write_text(f'{{"pipe": "{p}"}}')
        (root / p / "tofino.bin").write_bytes(b"\x00BIN" + p.encode())
        base = f"{root}/" if absolute else ""
        pipelines.append({"p4_pipeline_name": p, "context": f"{base}{p}/context.json",
                          "config": f"{base}{p}/tofino.bin", "pipe_scope": [0, 1, 2, 3],
                          "path": str(root)})
    conf = {"chip_list": [{"chip_family": "tofino", "instance": 0}], "instance": 0,
            "p4_devices": [{"device-id": 0, "p4_programs": [
                {"program-name": name, "bfrt-config": f"{root}/bfrt.json" if absolute
                 else "bfrt.json", "p4_pipelines": pipelines}]}]}
    path = root / f"{name}.conf"
    path.write_text(json.dumps(conf))
    return path


def test_build_from_conf_and_device_configs(tmp_path):
    conf = _write_build(tmp_path / "tofino")
    b = TnaBuild.from_dir(tmp_path / "tofino", tmp_path / "p4info.txt")
    assert (b.program_name, b.conf_path) == ("program", conf)
    assert b.p4info_path == tmp_path / "p4info.txt"
    [p] = b.pipelines
    assert (p.name, p.scope) == ("pipe", (0, 1, 2, 3))
    assert p.context_path == tmp_path / "tofino" / "pipe" / "context.json"
    assert b.device_config("pi") == pack_pi_device_config("program", b"\x00BINpipe",
                                                          b'{"pipe": "pipe"}')
    msg = _bf_pipeline_config_class().FromString(b.device_config("bfrt"))
    assert msg.p4_name == "program" and msg.bfruntime_info == b'{"schema_version": "1.0.0"}'
    assert msg.profiles[0].binary == b"\x00BINpipe"
    with pytest.raises(TargetError, match="unknown Tofino device config format 'json'"):
        b.device_config("json")


def test_build_relative_and_moved_paths(tmp_path):
    _write_build(tmp_path / "rel", absolute=False)
    b = TnaBuild.from_dir(tmp_path / "rel")
    assert b.pipelines[0].binary_path == tmp_path / "rel" / "pipe" / "tofino.bin"
    assert b.bfrt_path == tmp_path / "rel" / "bfrt.json"
    # Built elsewhere (absolute paths that no longer exist), then copied here.
    conf = _write_build(tmp_path / "orig")
    moved = tmp_path / "moved"
    os.rename(tmp_path / "orig", moved)
    b = TnaBuild.from_conf(moved / conf.name)
    assert b.pipelines[0].context_path == moved / "pipe" / "context.json"
    assert b.pi_device_config().endswith(b'{"pipe": "pipe"}')


def test_build_errors(tmp_path):
    with pytest.raises(TargetError, match="expected one bf-p4c .conf in .*, found none"):
        TnaBuild.from_dir(tmp_path)
    bad = tmp_path / "bad.conf"
    bad.write_text('{"p4_devices": []}')
    with pytest.raises(TargetError, match="is not a bf-p4c program config"):
        TnaBuild.from_conf(bad)
    with pytest.raises(TargetError, match="cannot read bf-p4c's config"):
        TnaBuild.from_conf(tmp_path / "none.conf")
    two = TnaBuild.from_conf(_write_build(tmp_path / "two", pipes=("pipe0", "pipe1")))
    with pytest.raises(TargetError, match="has 2 pipelines; the PI device config holds one"):
        two.pi_device_config()
    assert len(_bf_pipeline_config_class().FromString(two.bf_pipeline_config()).profiles) == 2
    (tmp_path / "two" / "pipe1" / "tofino.bin").unlink()
    with pytest.raises(TargetError, match="cannot read tofino.bin"):
        two.bf_pipeline_config()


_FAKE_BF_P4C = """\
import json, os, sys, pathlib
args = sys.argv[1:]
out = pathlib.Path(args[args.index("-o") + 1])
info = pathlib.Path(args[args.index("--p4runtime-files") + 1])
bfrt = pathlib.Path(args[args.index("--bf-rt-schema") + 1])
name = pathlib.Path(args[-1]).stem
(out / "pipe").mkdir(parents=True, exist_ok=True)
(out / "pipe" / "context.json").write_text("{}")
(out / "pipe" / "tofino.bin").write_bytes(b"TOFINO")
bfrt.write_text("{}")
info.write_text("pkg_info {}")
(out / "argv.json").write_text(json.dumps(args))
(out / "exe.txt").write_text(sys.argv[0])
conf = {"p4_devices": [{"device-id": 0, "p4_programs": [{"program-name": name,
        "bfrt-config": str(bfrt), "p4_pipelines": [{"p4_pipeline_name": "pipe",
        "context": str(out / "pipe" / "context.json"), "config": str(out / "pipe" / "tofino.bin"),
        "pipe_scope": [0, 1, 2, 3]}]}]}]}
(out / f"{name}.conf").write_text(json.dumps(conf))
"""


def _generated(arch="tna"):
    import sfclab
    from sfclab.codegen import generate

    return generate(sfclab.compile("chain web match tcp.dport == 80: firewall -> l3fwd"),
                    arch=arch)


def test_compile_tna_with_bf_p4c_from_sde_install(tmp_path, monkeypatch, no_tools):
    sde = tmp_path / "sde" / "install"
    write_exe(sde / "bin" / "bf-p4c", _FAKE_BF_P4C)
    monkeypatch.setenv("SDE_INSTALL", str(sde))
    assert T.find_sde_install() == sde and T.find_bf_p4c() == str(sde / "bin" / "bf-p4c")
    build = compile_tna(_generated(), tmp_path / "out")
    assert build.program_name == "program"
    assert build.p4info_path == tmp_path / "out" / "p4info.p4c.txt"
    assert build.pi_device_config() == pack_pi_device_config("program", b"TOFINO", b"{}")
    args = json.loads((tmp_path / "out" / "tofino" / "argv.json").read_text())
    assert args[:6] == ["--arch", "tna", "--target", "tofino", "--std", "p4-16"]
    # the bf-p4c that ran is the SDE's, and nothing was left in the environment
    assert (tmp_path / "out" / "tofino" / "exe.txt").read_text() == str(sde / "bin" / "bf-p4c")
    assert "SFCLAB_BF_P4C" not in os.environ


def test_compile_tna_missing_and_wrong_arch(tmp_path, monkeypatch, no_tools):
    with pytest.raises(TargetError) as e:
        compile_tna(_generated(), tmp_path / "out")
    assert e.value.message.startswith("bf-p4c is not installed")
    assert "SDE" in e.value.hint
    assert T.missing_tools() == ["bf-p4c", "tofino-model", "bf_switchd"]
    with pytest.raises(TargetError, match="Tofino runs TNA programs; this one is for v1model"):
        compile_tna(_generated("v1model"), tmp_path / "out")
    monkeypatch.setenv("SDE", str(tmp_path / "sde"))
    write_exe(tmp_path / "sde" / "install" / "bin" / "bf-p4c", "import sys\n"
              "print('program.p4(3): error: nope'); sys.exit(1)\n")
    write_exe(tmp_path / "sde" / "install" / "bin" / "tofino-model", "pass\n")
    assert T.missing_tools() == ["bf_switchd"]
    with pytest.raises(TargetError, match=r"bf-p4c failed on .*\(exit 1\):\n.*error: nope"):
        compile_tna(_generated(), tmp_path / "out")


# -- URLs and the target ---------------------------------------------------------------------------


def test_parse_url():
    assert parse_tofino_url("tofino://127.0.0.1") == {
        "host": "127.0.0.1", "port": 9559, "device_id": 0, "format": "pi", "veth": None}
    assert parse_tofino_url("tofino://sw:9339?device_id=1&format=bfrt")["format"] == "bfrt"


@pytest.mark.parametrize("url,match", [
    ("bmv2://127.0.0.1:9559", "not a Tofino URL"),
    ("tofino://h:1?format=json", "format must be pi or bfrt"),
    ("tofino://h:1?device_id=one", "device_id must be an integer"),
    ("tofino://h:1?fmt=pi", "unknown parameter 'fmt'"),
    ("tofino://h:123456", "bad port"),
])
def test_parse_url_errors(url, match):
    with pytest.raises(TargetError, match=match):
        parse_tofino_url(url)


def test_target(tmp_path, listening):
    build = TnaBuild.from_conf(_write_build(tmp_path / "tofino"), tmp_path / "p4info.txt")
    t = TofinoTarget.attach(f"tofino://127.0.0.1:{listening}?device_id=1&format=bfrt",
                            build=build)
    assert (t.grpc_address, t.device_id, t.config_format) == (f"127.0.0.1:{listening}", 1, "bfrt")
    assert t.device_config() == build.bf_pipeline_config()
    assert t.p4info_path == tmp_path / "p4info.txt"
    assert t.url == f"tofino://127.0.0.1:{listening}?device_id=1&format=bfrt"
    with pytest.raises(TargetError, match="no bf-p4c build for the Tofino"):
        TofinoTarget("10.0.0.1", 9559).device_config()
    assert TofinoTarget("::1", 9339).grpc_address == "[::1]:9339"


def test_attach_to_nothing():
    from sfclab.targets.process.tools import free_port

    with pytest.raises(TargetError, match="the Tofino P4Runtime server at tofino://"):
        TofinoTarget.attach(f"tofino://127.0.0.1:{free_port()}", timeout=0.2)


# -- SDE command lines -----------------------------------------------------------------------------


def test_tofino_model_command():
    assert tofino_model_command("/o/program.conf", sde_install="/sde/install",
                                ports_json="/o/ports.json", chip="tofino2", log_dir="/o/logs",
                                exe="/sde/install/bin/tofino-model") == [
        "/sde/install/bin/tofino-model", "-d", "1", "-f", "/o/ports.json",
        "--p4-target-config", "/o/program.conf", "--install-dir", "/sde/install",
        "--chip-type", "5", "--log-dir", "/o/logs"]
    with pytest.raises(TargetError, match="unknown Tofino chip 'tofino3'"):
        tofino_model_command("c", sde_install="/s", chip="tofino3")


def test_bf_switchd_command():
    assert bf_switchd_command("/o/program.conf", sde_install="/sde/install",
                              p4rt_addr="0.0.0.0:50051", status_port=7777,
                              background=False) == [
        "bf_switchd", "--install-dir", "/sde/install", "--conf-file", "/o/program.conf",
        "--skip-p4", "--p4rt-server", "0.0.0.0:50051", "--status-port", "7777"]
    assert "--skip-p4" not in bf_switchd_command("c", sde_install="/s", skip_p4=False)


def test_sde_env():
    env = sde_env("/sde/install", {"PATH": "/usr/bin"})
    assert env == {"PATH": "/sde/install/bin:/usr/bin", "SDE_INSTALL": "/sde/install",
                   "LD_LIBRARY_PATH": "/sde/install/lib:/usr/local/lib"}


# -- the real Tofino compiler on every program sfclab writes for TNA -----------------------------
# p4c-barefoot (p4c's open Tofino back end) enforces Tofino's hardware rules (PHV, table
# placement, stateful ALUs, one-stage actions, gateways).  Each distinct program is compiled
# once per session (keyed by its text's hash), two at a time, the longest first
# (tofino_programs.py); the tests skip without the compiler.  By default they compile CI's
# sweep (every example in the auto mode, the NFs of the risky kinds); with
# SFCLAB_TOFINO_SWEEP=full every program (benchmarks/bench_tofino.py times the full sweep).
# The CLI's tests come first and ask for the queue (tofino_builds), so that its compiles run
# beside theirs: the CLI compiles one program at a time and would leave a core idle.


def _assert_compiles(builds, programs: dict[str, object]) -> None:
    """Each program compiles, fits a Tofino 1 (no table of any pipe's .bfa in stage 12 or
    later: the compiler does not refuse those, the SDE's assembler does) and sfclab's P4Info
    agrees with the compiler's."""
    from sfclab.codegen.p4info import build_p4info, compare_p4info, p4info_from_text
    from tofino_measure import measure

    futures = {what: builds.submit(g) for what, g in programs.items()}
    refused = {w: f.result().result for w, f in futures.items() if not f.result().result.ok}
    assert not refused, "\n\n".join(f"{w}: refused by the Tofino compiler:\n"
                                    + "\n".join(r.messages[:6] or (r.output[-2000:],))
                                    for w, r in refused.items())
    over, differ = {}, {}
    for w, f in futures.items():
        b, gen = f.result(), programs[w]
        m = measure(b.out, gen)
        assert m is not None, f"{w}: the compiler wrote no .bfa"
        if m.over:
            over[w] = m.over[:4]
        diffs = compare_p4info(build_p4info(gen.program.program, arch="tna"),
                               p4info_from_text((b.out / "p4info.p4c.txt").read_text()))
        if diffs:
            differ[w] = diffs[:4]
    assert not over, f"tables past a Tofino 1's stage 11 (pipe, gress, stage, table): {over}"
    assert not differ, f"sfclab's P4Info differs from the compiler's: {differ}"


@needs_tofino_compiler
@pytest.mark.usefixtures("tofino_builds")   # first: the session's compiles run beside its own
@pytest.mark.skipif(shutil.which("p4c-bm2-ss") is None,
                    reason="p4c-bm2-ss (for the network's BMv2 switches) is not installed")
def test_compile_topology_p4c_compiles_each_tna_switch_with_the_tofino_compiler(tmp_path, capsys):
    """``sfclab compile --topology campus.topo p4sfc_intent.json --p4c``: the two Tofino core
    switches' programs go through the Tofino compiler, the BMv2 edge switches' through
    p4c-bm2-ss (the examples' Tofino switches: the network test below)."""
    from sfclab.cli import main

    rc = main(["compile", "--topology", str(EXAMPLES / "campus.topo"),
               str(EXAMPLES / "p4sfc_intent.json"), "-o", str(tmp_path / "o"), "--p4c"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    for s in ("core1", "core2"):
        for pipe in ("pipe0", "pipe1"):
            assert (tmp_path / "o" / s / "tofino" / pipe / "program.bfa").is_file()
    assert out.out.count(f"{P4C_BAREFOOT}: OK") + out.out.count(f"{T.BF_P4C}: OK") == 2
    assert out.out.count("p4c-bm2-ss: OK") == 2
    assert out.out.count("stages per pipe and gress") == 2


@needs_tofino_compiler
@pytest.mark.usefixtures("tofino_builds")   # as above
def test_compile_tna_p4c_prints_per_pipe_and_gress_the_slots_stages_and_core(tmp_path, capsys):
    from sfclab.cli import main

    src = tmp_path / "lb.sfc"
    src.write_text("chain c match ipv4.dst == 10.0.1.0/24 { input => lb => output; }\n")
    assert main(["compile", "--arch", "tna", "--p4c", "-o", str(tmp_path / "o"), str(src)]) == 0
    out = capsys.readouterr().out
    assert "stages per pipe and gress (tofino/pipe0/program.bfa, tofino/pipe1/program.bfa)" in out
    heads = [line for line in out.splitlines() if line.startswith("pipe ")]
    assert [h.split(":")[0] for h in heads] == ["pipe 0 ingress", "pipe 0 egress",
                                                "pipe 1 ingress", "pipe 1 egress"]
    for h in heads:      # the lean core: 2 stages of an ingress at most, 1 of an egress
        n = int(h.split("sfclab's core: ")[1].split()[0])
        assert n <= (2 if "ingress" in h else 1), h
    row = next(line for line in out.splitlines() if line.split()[1:2] == ["lb"])
    used, span, estimate = row.split()[2:5]
    first, last = (int(x) for x in used.split("-"))
    assert int(span) == last - first + 1 <= int(estimate) == 3 + 1    # and its checksum condition


@needs_tofino_compiler
def test_every_library_nf_alone_and_mid_chain_compiles_for_tofino(tofino_builds):
    """The library NFs, alone and between a firewall and l3fwd, on one pipe (``--pipes 1``:
    the tighter plan; the examples run the default 2), fit a Tofino 1 (before issue 24 lb,
    nat, qos, monitor, heavy_hitter and stateful_firewall were refused).  The full sweep
    (``SFCLAB_TOFINO_SWEEP=full``) compiles all 18 both ways; CI the risky kinds."""
    programs = swept_nf_programs()
    assert len(programs) == (2 * len(NFS) if FULL else len(CI_NF_PROGRAMS)) >= 3
    _assert_compiles(tofino_builds, programs)


@needs_tofino_compiler
@pytest.mark.parametrize("path", swept_examples(), ids=lambda p: p.name)
def test_every_example_compiles_for_tofino(path, tofino_builds):
    """Each example's TNA program (CI: three, in the auto mode on 2 pipes); with
    ``SFCLAB_TOFINO_SWEEP=full`` in every pipeline mode (auto, mafsa, optimal, naive; modes
    that give the same text are compiled once) and on 1 and 4 pipes where placement takes
    it.  Before issue 24's range keys were fixed,
    flexmesh_fig9, p4sc_table3, p4sfc_mixed and web were refused (their branch tables
    range-matched the 32-bit NF value; Tofino's range keys are at most 20 bits; now that
    key is ternary on TNA); every_nf.sfc --pipeline naive crashed p4c-barefoot 9.13.4
    ("Compiler Bug: Metadata initialization analysis incorrect") until the packet-out
    branch's field was kept out of shared PHV containers."""
    programs = swept_example_programs(path)
    assert {w.rsplit(" ", 1)[1] for w in programs if "--pipeline" in w} == (
        set(PIPELINES) if FULL else {"auto"}), f"the full sweep: {FULL_COMMAND}"
    _assert_compiles(tofino_builds, programs)


@needs_tofino_compiler
@pytest.mark.parametrize("network", [pytest.param(n, id=f"{n[1]} on {n[0]}") for n in swept_networks()]
                         or [pytest.param(None, id="full sweep only", marks=pytest.mark.skip(
                             reason=f"the full sweep compiles the networks ({FULL_COMMAND}); CI "
                                    "compiles campus.topo's through the CLI's --topology --p4c"))])
def test_every_network_tofino_switch_compiles_for_tofino(network, tofino_builds):
    """The Tofino switches' programs of the examples placed on campus.topo, as
    ``sfclab compile --topology`` writes them: p4sc_table3.sfc's, p4sfc_mixed.sfc's and
    web.sfc's (the full sweep only; CI compiles campus.topo's switches with
    p4sfc_intent.json through the CLI, above).  (every_nf.sfc on campus.topo crashed
    p4c-barefoot 9.13.4 before the packet-out field's @pa_no_overlay; with the measured
    stage estimates its NFs no longer fit campus's switches, and placement refuses it:
    the same crash is covered by every_nf.sfc --pipeline naive above.)"""
    programs = network_programs(*network)
    assert programs, f"{network[0]} has no Tofino switch"
    _assert_compiles(tofino_builds, programs)


_BFA = """version: 1.0.1
phv ingress:
  slot0_lb_bucket: H1(0..7)
stage 2 ingress:
  dependency: match
  hash_action tbl_program30 0:
    p4: { name: tbl_program30, hidden: true }
    action_bus: { 32..33 : hash_dist(0, lo) }
      - set slot0_lb_bucket, hash_dist(0, 0..7)
  ternary_indirect tbl_program30$tind:
    row: 1
stage 3 ingress:
  ternary_match slot0_lb_backends 0:
    p4: { name: SfcIngress0.slot0_lb.backends, size: 1024 }
  gateway cond-7 1:
    expression: "(hdr.ipv4.$valid == 1)"
  ternary_match slot0_branch 2:
    p4: { name: SfcIngress0.slot0_branch }
stage 4 ingress:
  ternary_match tbl_program31 0:
    p4: { name: tbl_program31, hidden: true }
      - set hdr.tcp.checksum, 0
  ternary_match tbl_program90 1:
      - set meta.slot0_lb_dg.d_valid, 1
stage 5 ingress:
  ternary_match pass_end_0 0:
    p4: { name: SfcIngress0.pass_end }
stage 0 egress:
  ternary_match tbl_program33 0:
      - set slot0_lb_bucket, 0
stage 12 egress:
  ternary_match rewinder_1 0:
"""


def test_pipelet_stages_read_the_bfa():
    """Tables named after the slot, tables the compiler made of the NF's statements (by the
    slot's fields, else by the line's control), not sfclab's branch table or the digest
    buffer's flag; the core's own stages; a table past stage 11 is found."""
    from sfclab.targets.tofino.target import check_stages, over_the_chip, pipelet_stages, stage_report

    gen = generate(sfclab.compile("chain c { input => lb => output; }", arch="tna"))
    lb_line = next(d.pos.line for d in gen.program.program.decls
                   if getattr(d, "name", "") == "lb")
    bfa = _BFA.replace("tbl_program31", f"tbl_program{lb_line + 5}")
    assert [t[:3] for t in bfa_tables(bfa)][:2] == [("ingress", 2, "tbl_program30"),
                                                     ("ingress", 3, "slot0_lb_backends")]
    (row,) = slot_stages(bfa, gen)
    assert row == SlotStages(0, "lb", (2, 3, 4), 3 + 1) and row.span == 3   # + its condition
    i0, e0 = pipelet_stages({0: bfa}, gen)
    assert (i0.name, i0.stages, i0.core, e0.core) == ("I0", 6, (5,), (0, 12))   # lb: on I0
    assert i0.plan == 2 + 3 + 1 and e0.plan == 1       # lb's checksum condition: +1
    table = stage_table([row, SlotStages(1, "qos", (5, 6, 7, 8), 3)], 9)
    assert "0     lb                  2-4                 3         4" in table
    assert "(more than the estimate)" in table.splitlines()[2]
    assert "the pipelet uses 9 of 12 stages; the slots' estimates add up to 7" in table
    report = stage_report([i0, e0])
    assert report.startswith("pipe 0 ingress: slot0_lb; stages used 6 of 12 (plan 6); "
                             "sfclab's core: 1 stage(s) of its own (5)")
    assert "pipe 0 egress: no NF slots; stages used 13 of 12 (plan 1)" in report
    assert over_the_chip({0: bfa}) == [(0, "egress", 12, "rewinder_1")]
    with pytest.raises(CompileError) as e:
        check_stages({0: bfa}, gen, where="o/program.p4")
    assert e.value.message.startswith("o/program.p4: the Tofino compiler placed tables past a "
                                      "Tofino 1's last stage (11): pipe 0 egress: stages 12-12 "
                                      "(rewinder_1)")
    assert "--pipes 4" in e.value.hint
