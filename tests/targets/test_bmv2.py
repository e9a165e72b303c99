"""The BMv2 target with fake executables: command lines, lifecycle, URLs, compile."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from targets_support import fake_switch, recorded_argv, write_exe

from sfclab.errors import TargetError
from sfclab.targets.bmv2 import target as B
from sfclab.targets.bmv2.target import (
    Bmv2Build,
    Bmv2Target,
    PortMap,
    compile_v1model,
    parse_bmv2_url,
    read_pcap,
    switch_command,
    write_pcap,
)

# -- command lines ---------------------------------------------------------------------------------


def test_command_veth_ports_event_logger():
    cmd = switch_command("/usr/bin/simple_switch_grpc", grpc_addr="127.0.0.1:50051",
                         ports=PortMap.veth({2: "veth2", 1: "veth0"}), device_id=3,
                         nanolog="ipc:///tmp/sfclab-x/events.ipc")
    assert cmd == ["/usr/bin/simple_switch_grpc", "--device-id", "3",
                   "-i", "1@veth0", "-i", "2@veth2", "--log-console",
                   "--nanolog", "ipc:///tmp/sfclab-x/events.ipc", "--no-p4", "--",
                   "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "255"]


def test_command_pcap_files_log_file_and_build_options(tmp_path):
    ports = PortMap.pcap(tmp_path, [2, 1, 2], wait=7)
    cmd = switch_command("ssg", grpc_addr="127.0.0.1:1", ports=ports,
                         log_file=tmp_path / "bmv2.log", log_level="info", thrift_port=9091,
                         notifications_addr="ipc:///tmp/n.ipc", cpu_port=None)
    assert cmd == ["ssg", "--device-id", "0", "--use-files", "7",
                   "-i", f"1@{tmp_path}/port1", "-i", f"2@{tmp_path}/port2",
                   "--log-file", f"{tmp_path}/bmv2.log", "--log-flush", "--log-level", "info",
                   "--notifications-addr", "ipc:///tmp/n.ipc", "--thrift-port", "9091",
                   "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:1"]
    assert ports.in_pcap(1) == tmp_path / "port1_in.pcap"
    assert ports.out_pcap(2) == tmp_path / "port2_out.pcap"


def test_command_minimal():
    assert switch_command("ssg", grpc_addr="127.0.0.1:9559") == [
        "ssg", "--device-id", "0", "--log-console", "--no-p4", "--",
        "--grpc-server-addr", "127.0.0.1:9559", "--cpu-port", "255"]


@pytest.mark.parametrize("kwargs,match", [
    ({"cpu_port": 0}, "CPU port 0 does not fit"),
    ({"cpu_port": 511}, "CPU port 511 does not fit"),
    ({"cpu_port": 1, "ports": PortMap.veth({1: "veth0"})}, "CPU port 1 is also a data port"),
    ({"log_level": "verbose"}, "unknown BMv2 log level 'verbose'"),
])
def test_command_errors(kwargs, match):
    with pytest.raises(TargetError, match=match):
        switch_command("ssg", grpc_addr="127.0.0.1:1", **kwargs)


def test_port_map_auto(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    pm = PortMap.auto({1: "veth0", 2: "veth2"}, tmp_path)
    assert pm.mode == "pcap" and pm.ports == [1, 2]
    assert pm.reason.startswith("not root")
    assert "pcap files in" in pm.describe() and "not root" in pm.describe()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    pm = PortMap.auto({1: "sfclab-no-such-if0"}, tmp_path)
    assert pm.mode == "pcap" and "sfclab-no-such-if0 do not exist" in pm.reason
    pm = PortMap.auto({1: "lo"}, tmp_path)
    assert pm.mode == "veth" and pm.args() == ["-i", "1@lo"]
    assert pm.describe().startswith("veth: 1@lo")
    with pytest.raises(TargetError, match="ports are veth, not pcap files"):
        pm.in_pcap(1)
    with pytest.raises(TargetError, match=r"port 9 is not one of the switch's ports \[1\]"):
        PortMap.pcap(tmp_path, [1]).out_pcap(9)
    assert PortMap.none().describe() == "no data-plane ports" and PortMap.none().args() == []


def test_pcap_files_read_back_with_scapy(tmp_path):
    from scapy.utils import rdpcap

    frames = [bytes(range(60)), b"\xff" * 64]
    path = write_pcap(tmp_path / "p" / "port1_in.pcap", frames)
    assert [bytes(p) for p in rdpcap(str(path))] == frames
    assert read_pcap(path) == frames
    assert read_pcap(tmp_path / "none.pcap") == []


# -- URLs ------------------------------------------------------------------------------------------


def test_parse_url():
    assert parse_bmv2_url("bmv2://127.0.0.1:9559?device_id=0") == {
        "host": "127.0.0.1", "port": 9559, "device_id": 0, "cpu_port": 255, "nanolog": None,
        "json": None, "p4info": None, "packet_in": None, "veth": None, "log_level": None,
        "server_port": None, "thrift": None}
    assert parse_bmv2_url("bmv2?server_port=4")["server_port"] == 4
    u = parse_bmv2_url("bmv2://unix:/w/grpc.ipc?device_id=1&thrift=9090")
    assert (u["host"], u["port"], u["device_id"], u["thrift"]) == (
        "unix:/w/grpc.ipc", None, 1, "9090")
    u = parse_bmv2_url("bmv2://switch?cpu_port=64&json=/o/program.json&p4info=/o/p4info.txt")
    assert (u["host"], u["port"], u["cpu_port"], u["json"], u["p4info"]) == (
        "switch", 9559, 64, "/o/program.json", "/o/p4info.txt")
    u = parse_bmv2_url("bmv2://h:1?packet_in=ipc%3A%2F%2F%2Ftmp%2Fp.ipc&veth=1@veth0,%202@veth2")
    assert (u["packet_in"], u["veth"]) == ("ipc:///tmp/p.ipc", {1: "veth0", 2: "veth2"})


@pytest.mark.parametrize("url", ["bmv2", "bmv2:", "bmv2?device_id=3", "bmv2:?log_level=info"])
def test_parse_url_of_a_switch_sfclab_starts(url):
    u = parse_bmv2_url(url)
    assert u["host"] is None and u["port"] is None
    assert u["device_id"] == (3 if "device_id" in url else 0)


@pytest.mark.parametrize("url,match", [
    ("tofino://127.0.0.1:9559", "not a BMv2 URL"),
    ("bmv2://127.0.0.1:9559?devid=1", "unknown parameter 'devid'"),
    ("bmv2://127.0.0.1:9559?device_id=x", "device_id must be an integer"),
    ("bmv2://127.0.0.1:99999", "bad port"),
    ("bmv2x", "not a BMv2 URL"),
    ("bmv2?veth=veth0", "cannot read the port 'veth0'"),
    ("bmv2?veth=1@", "cannot read the port '1@'"),
])
def test_parse_url_errors(url, match):
    with pytest.raises(TargetError, match=match):
        parse_bmv2_url(url)


def test_unknown_parameter_hint():
    with pytest.raises(TargetError) as e:
        parse_bmv2_url("bmv2://h:1?device=1")
    assert e.value.hint == "did you mean 'device_id'?"


def test_attach(listening, bmv2_json):
    t = Bmv2Target.attach(f"bmv2://127.0.0.1:{listening}?device_id=2&json={bmv2_json}"
                          "&nanolog=ipc%3A%2F%2F%2Ftmp%2Fe.ipc")
    assert (t.grpc_address, t.device_id, t.owned, t.nanolog) == (
        f"127.0.0.1:{listening}", 2, False, "ipc:///tmp/e.ipc")
    assert t.device_config() == bmv2_json.read_bytes()
    assert t.names().name("table", 1) == "SfcIngress.slot0_firewall.acl"
    assert t.url == f"bmv2://127.0.0.1:{listening}?device_id=2"
    assert t.stop() is None and "attached" in repr(t)


def test_attach_to_nothing():
    from sfclab.targets.process.tools import free_port

    port = free_port()
    with pytest.raises(TargetError, match=rf"the BMv2 switch at bmv2://127.0.0.1:{port} did not "
                                          rf"open its gRPC port 127.0.0.1:{port}"):
        Bmv2Target.attach(f"bmv2://127.0.0.1:{port}", timeout=0.2)


def test_ipv6_address():
    t = Bmv2Target.attach("bmv2://[::1]:50001", check=False)
    assert t.grpc_address == "[::1]:50001"


def test_device_config_and_events_need_what_they_need():
    t = Bmv2Target.attach("bmv2://127.0.0.1:1", check=False)
    with pytest.raises(TargetError, match="no BMv2 JSON for the switch at bmv2://127.0.0.1:1"):
        t.device_config()
    with pytest.raises(TargetError, match=r"logger of bmv2://127.0.0.1:1\?device_id=0 is off"):
        t.subscribe()


# -- the process -----------------------------------------------------------------------------------


def test_missing_switch(no_tools):
    with pytest.raises(TargetError) as e:
        Bmv2Target.start()
    assert e.value.message == ("simple_switch_grpc is not installed (not on PATH, and "
                               "SFCLAB_BMV2 is not set)")
    assert "behavioral-model" in e.value.hint
    assert B.missing_tools() == ["p4c-bm2-ss", "simple_switch_grpc"]


def test_start_waits_for_the_port_and_stops(tmp_path, monkeypatch, bmv2_json):
    exe = fake_switch(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(exe))
    assert B.find_switch() == str(exe)
    work = tmp_path / "work"
    with Bmv2Target.start(bmv2_json, device_id=1, workdir=work, timeout=10) as t:
        assert t.owned and t.process.running
        argv = recorded_argv(exe)
        assert [str(exe), *argv] == switch_command(
            str(exe), grpc_addr=t.grpc_address, device_id=1, nanolog=t.nanolog)
        # on TCP, whose buffers hold a window of packets' events (IPC's ~340 do not), in
        # the switch's own namespace; P4Runtime on a socket file in its working directory
        assert t.nanolog == "tcp://127.0.0.1:9091"
        assert t.grpc_address == f"unix:{work}/grpc.ipc" and t.port is None
        assert t.device_config() == bmv2_json.read_bytes() and t.json_path == bmv2_json
        assert "fake switch: listening on" in t.log()
        proc = t.process
    assert not proc.running and proc.returncode == 0


def test_a_working_directory_sfclab_made_is_removed_at_exit_once_it_stopped_the_switch(
        tmp_path, monkeypatch, bmv2_json):
    """A switch started without a workdir gets one of its own: still there (its log
    readable) after stop, removed when Python exits; a named one is never removed, nor the
    one of a switch that died on its own."""
    import signal
    import tempfile

    from sfclab.targets.process import workdirs

    monkeypatch.setenv("SFCLAB_BMV2", str(fake_switch(tmp_path / "bin")))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    named = tmp_path / "named"
    with Bmv2Target.start(bmv2_json, workdir=named, timeout=10) as n, \
            Bmv2Target.start(bmv2_json, timeout=10) as made:
        assert made.made_workdir and not n.made_workdir
        assert made.workdir.parent == tmp_path / "tmp"
    died = Bmv2Target.start(bmv2_json, timeout=10)
    os.kill(died.process.pid, signal.SIGKILL)
    for _ in range(100):
        if not died.process.running:
            break
        time.sleep(0.05)
    died.stop()
    assert made.workdir.exists() and "fake switch" in made.log()
    workdirs.remove_spent()                  # what Python's exit does
    assert not made.workdir.exists()
    assert named.exists() and died.workdir.exists()


def test_start_with_build_pcap_ports_and_probed_options(tmp_path, bmv2_json):
    exe = fake_switch(tmp_path / "bin", help_text=(
        "Options:\n  --thrift-port arg   TCP port on which to run the Thrift runtime server\n"
        "  --notifications-addr arg  Specify the nanomsg address\n"))
    build = Bmv2Build(bmv2_json, tmp_path / "p4info.txt")
    ports = PortMap.pcap(tmp_path / "pcap", [1, 2], wait=3)
    write_pcap(ports.in_pcap(1), [b"\x00" * 60])
    t = Bmv2Target.start(build, ports=ports, workdir=tmp_path / "w", exe=str(exe),
                         event_logger=False, log_to_file=True, log_level="warn")
    try:
        argv = recorded_argv(exe)
        assert argv[argv.index("--use-files") + 1] == "3"
        assert "--thrift-port" in argv and "--notifications-addr" in argv
        assert argv[argv.index("--thrift-port") + 1] == "9090"    # in its own namespace
        assert argv[argv.index("--notifications-addr") + 1] == f"ipc://{tmp_path}/w/notifications.ipc"
        assert argv[argv.index("--log-file") + 1] == f"{tmp_path}/w/bmv2.log"
        assert "--nanolog" not in argv and t.nanolog is None
        assert read_pcap(ports.in_pcap(1)) == [b"\x00" * 60]       # kept
        assert ports.in_pcap(2).exists() and read_pcap(ports.in_pcap(2)) == []  # made empty
        assert t.p4info_path == tmp_path / "p4info.txt"
    finally:
        t.stop()


def test_readiness_timeout_shows_the_log_and_kills(tmp_path):
    exe = fake_switch(tmp_path / "bin", mode="silent")
    t0 = time.monotonic()
    with pytest.raises(TargetError) as e:
        Bmv2Target.start(exe=str(exe), workdir=tmp_path / "w", timeout=0.8)
    assert time.monotonic() - t0 < 8
    msg = str(e.value)
    assert f"simple_switch_grpc (device 0) did not open its gRPC port {tmp_path}/w/grpc.ipc" in msg
    assert "within 0.8 s" in msg and "fake switch: starting" in msg
    assert "command: " in msg and "--no-p4" in msg
    # The process was stopped (and reaped): its pid is gone.
    pid = int((exe.parent / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_switch_that_exits_at_once(tmp_path):
    exe = fake_switch(tmp_path / "bin", mode="fail")
    with pytest.raises(TargetError) as e:
        Bmv2Target.start(exe=str(exe), workdir=tmp_path / "w", timeout=10)
    msg = str(e.value)
    assert "exited with status 1 before its gRPC port" in msg
    assert "Error while parsing command line arguments" in msg


def test_switch_ignoring_sigterm_is_killed(tmp_path):
    exe = fake_switch(tmp_path / "bin", mode="stubborn")
    t = Bmv2Target.start(exe=str(exe), workdir=tmp_path / "w", timeout=10)
    assert t.stop(timeout=0.3) == -9


def test_bmv2_without_event_logger_is_noted(tmp_path, bmv2_json):
    exe = fake_switch(tmp_path / "bin", mode="nobmelog")
    with Bmv2Target.start(bmv2_json, exe=str(exe), workdir=tmp_path / "w", timeout=10) as t:
        assert t.nanolog is None
        assert any("-DBMELOG" in n for n in t.notes)


def test_long_workdir_gets_a_short_ipc_path(tmp_path):
    exe = fake_switch(tmp_path / "bin")
    deep = tmp_path / ("d" * 60) / ("e" * 40)
    with Bmv2Target.start(exe=str(exe), workdir=deep, timeout=10, ports="packet-in") as t:
        token = t.grpc_address.removeprefix("unix:/tmp/sfclab-bmv2-").removesuffix("-grpc.ipc")
        assert t.ports.address == f"ipc:///tmp/sfclab-bmv2-{token}-packets.ipc"
        assert len(token) == 12 and t.broker == f"/tmp/sfclab-bmv2-{token}-keeper.ipc"


# -- compiling -------------------------------------------------------------------------------------

_FAKE_P4C = """\
import sys, pathlib
args = sys.argv[1:]
out = pathlib.Path(args[args.index("-o") + 1])
info = pathlib.Path(args[args.index("--p4runtime-files") + 1])
src = pathlib.Path(args[-1]).read_text()
(out.parent / "p4c-argv.txt").write_text("\\n".join(args))
if "BROKEN" in src:
    print("p4c-bm2-ss: something unparsable went wrong: BROKEN input")
    sys.exit(2)
if {fail!r}:
    line = next(i for i, l in enumerate(src.splitlines(), 1) if "table acl" in l)
    print(f"{{args[-1]}}({{line}}): [--Werror=type-error] error: acl: bad key")
    sys.exit(1)
out.write_text('{{"pipelines": []}}')
info.write_text("pkg_info {{}}")
"""


def _generated(arch="v1model"):
    import sfclab
    from sfclab.codegen import generate

    return generate(sfclab.compile("chain web match tcp.dport == 80: firewall -> l3fwd"),
                    arch=arch)


def test_compile_v1model_with_a_fake_p4c(tmp_path, monkeypatch):
    p4c = write_exe(tmp_path / "bin" / "p4c-bm2-ss", _FAKE_P4C.format(fail=False))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    build = compile_v1model(_generated(), tmp_path / "out")
    assert build.json_path == tmp_path / "out" / "program.json"
    assert build.p4info_path == tmp_path / "out" / "p4info.p4c.txt"
    assert build.device_config() == b'{"pipelines": []}'
    assert (tmp_path / "out" / "program.p4").exists()       # written by write_outputs
    args = (tmp_path / "out" / "p4c-argv.txt").read_text().splitlines()
    assert args[:4] == ["--arch", "v1model", "--std", "p4-16"]
    assert build.names().names == {}


def test_compile_v1model_failure_names_the_nf(tmp_path, monkeypatch):
    p4c = write_exe(tmp_path / "bin" / "p4c-bm2-ss", _FAKE_P4C.format(fail=True))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    with pytest.raises(TargetError) as e:
        compile_v1model(_generated(), tmp_path / "out")
    msg = str(e.value)
    assert "p4c-bm2-ss failed on" in msg and "(exit 1)" in msg
    assert "error: acl: bad key" in msg and "control 'firewall'" in msg


def test_compile_v1model_from_a_file_and_errors(tmp_path, monkeypatch, no_tools):
    src = tmp_path / "x.p4"
    src.write_text("BROKEN\n")
    with pytest.raises(TargetError, match=r"p4c-bm2-ss is not installed"):
        compile_v1model(src, tmp_path / "out")
    with pytest.raises(TargetError, match="BMv2 runs v1model programs; this one is for tna"):
        compile_v1model(_generated("tna"), tmp_path / "out")
    p4c = write_exe(tmp_path / "bin" / "p4c-bm2-ss", _FAKE_P4C.format(fail=False))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    with pytest.raises(TargetError, match=r"\(exit 2\):\np4c-bm2-ss: something unparsable "
                                          "went wrong: BROKEN input"):
        compile_v1model(src, tmp_path / "out")   # no file(line) message: the output's tail


def test_build_reads_fail_clearly(tmp_path):
    with pytest.raises(TargetError, match="cannot read the BMv2 JSON"):
        Bmv2Build(tmp_path / "none.json", tmp_path / "p4info.txt").device_config()
    with pytest.raises(TargetError, match="cannot read the BMv2 JSON"):
        Bmv2Target.attach("bmv2://127.0.0.1:1", build=tmp_path / "none.json", check=False)


def test_fixture_is_a_bmv2_json(bmv2_json):
    cfg = json.loads(bmv2_json.read_text())
    assert cfg["__meta__"]["version"][0] == 2
    assert [p["name"] for p in cfg["pipelines"]] == ["ingress", "egress"]
    assert Path(bmv2_json).stat().st_size > 0


def test_a_switch_whose_namespace_cannot_be_made_does_not_start_and_says_why(tmp_path):
    """The keeper sets the switch's namespace up before it starts the switch; when it
    cannot (here: an interface to move in is not there), the switch never runs and the
    error says what the keeper said and what to do."""
    exe = fake_switch(tmp_path / "bin")
    ports = PortMap("veth", ((1, "sfclabnosuch0"),), peers=((1, "sfclabnosuch1"),))
    with pytest.raises(TargetError) as e:
        Bmv2Target.start(exe=str(exe), ports=ports, workdir=tmp_path / "w", timeout=10)
    assert "exited with status 125 before its gRPC port" in e.value.message
    assert "sfclab keeper: cannot start the switch" in e.value.message
    assert "network namespace of its own" in e.value.hint
    assert not (exe.parent / "pid").exists()                  # the switch never ran
