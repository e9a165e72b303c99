"""Third-party P4Runtime clients drive the model switch as they drive BMv2.

* finsy's own asyncio client (``finsy.Switch``) pushes the pipeline from a P4Info
  file and the program, inserts and reads back a table entry, changes a default
  entry and programs a multicast group.
* p4runtime-shell (in its own virtualenv, ``.venv-p4rt-shell``, which ``.ci/run``
  creates: it pins IPython 7 and protobuf 3.20) connects to a switch that sfclab's
  client programmed, reads the P4Info from the device, inserts an entry with
  ``table_entry[...]`` / ``te.insert()`` and reads it back.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from p4rt_rig import PROGRAM

from sfclab.codegen.p4info import p4info_text
from sfclab.runtime.client import Client
from sfclab.targets.model.p4rt import P4RuntimeModelServer

ROOT = Path(__file__).resolve().parents[2]
SHELL_PYTHON = ROOT / ".venv-p4rt-shell" / "bin" / "python"
SHELL_CHECK = Path(__file__).with_name("p4rt_shell_check.py")


@pytest.fixture()
def server():
    s = P4RuntimeModelServer()
    s.start("127.0.0.1:0")
    yield s
    s.stop(0)


def test_finsy_switch_pushes_writes_and_reads(server, program_p4info, tmp_path):
    fy = pytest.importorskip("finsy")
    (tmp_path / "program.p4info.txtpb").write_text(p4info_text(program_p4info))
    (tmp_path / "program.p4").write_text(PROGRAM)
    opts = fy.SwitchOptions(p4info=tmp_path / "program.p4info.txtpb",
                            p4blob=tmp_path / "program.p4")
    result: dict = {}

    async def run():
        sw = fy.Switch("model", server.address, opts)
        async with sw:
            result["primary"] = sw.is_primary
            await sw.insert([fy.P4TableEntry(
                "I.l2", match=fy.P4TableMatch({"hdr.ethernet.dst": 0x0c}),
                action=fy.P4TableAction("I.fwd", port=3))])
            await sw.modify([fy.P4TableEntry("I.routes", is_default_action=True,
                                             action=fy.P4TableAction("I.fwd", port=9))])
            await sw.insert([fy.P4MulticastGroupEntry(
                7, replicas=[(1, 0), (2, 0)])])
            result["entries"] = [e async for e in sw.read(fy.P4TableEntry("I.l2"))]
            result["default"] = [e async for e in sw.read(
                fy.P4TableEntry("I.routes", is_default_action=True))]
            result["groups"] = [e async for e in sw.read(fy.P4MulticastGroupEntry())]
            try:
                await sw.insert([fy.P4TableEntry(
                    "I.l2", match=fy.P4TableMatch({"hdr.ethernet.dst": 0x0c}),
                    action=fy.P4TableAction("I.fwd", port=3))])
            except fy.P4ClientError as e:
                result["duplicate"] = [err.canonical_code for err in e.details.values()]

    asyncio.run(asyncio.wait_for(run(), 60))
    assert result["primary"]
    # the pipeline finsy pushed is the one running, with finsy's cookie
    assert server.config.p4info == program_p4info
    assert server.config.p4_device_config == PROGRAM.encode()
    assert server.config.HasField("cookie")
    (entry,) = result["entries"]
    assert entry.table_id == "l2"                       # finsy names objects by alias
    assert dict(entry.match) == {"dst": 0x0c}
    assert entry.action.name == "fwd" and entry.action.args == {"port": 3}
    (default,) = result["default"]
    assert default.is_default_action and default.action.args == {"port": 9}
    (group,) = result["groups"]
    assert group.multicast_group_id == 7
    assert sorted(getattr(r, "port", r) for r in group.replicas) == [1, 2]
    assert result["duplicate"] == [6]                       # ALREADY_EXISTS
    # and the model forwards with what finsy wrote
    from scapy.all import Ether
    with server._lock:
        r = server.switch.process(1, bytes(Ether(dst="00:00:00:00:00:0c", type=0x9000) / b"x"))
    assert r.ports == [3]


def test_p4runtime_shell_reads_the_p4info_from_the_device_and_writes(server, program_p4info):
    if not SHELL_PYTHON.exists():
        pytest.skip("p4runtime-shell's virtualenv is missing; create it with "
                    "`python3 -m venv .venv-p4rt-shell && .venv-p4rt-shell/bin/pip install "
                    "p4runtime-shell==0.0.6` (.ci/run does)")
    with Client(server.address, election_id=1) as c:        # sfclab programs the switch
        c.set_pipeline(program_p4info, PROGRAM.encode())
        proc = subprocess.run([str(SHELL_PYTHON), str(SHELL_CHECK), "--grpc-addr",
                               server.address, "--device-id", "1"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not c.is_primary                             # the shell (election id 2) took over
    assert out["tables"] == sorted(t.preamble.name for t in program_p4info.tables)
    assert out["read"] == [{"dst": "0c", "action": "I.fwd", "port": "03"}]
    assert out["duplicate"] == ["ALREADY_EXISTS"]
    assert out["default"] == {"action": "I.fwd", "port": "09"}
    assert out["groups"] == [[[1, 0], [2, 0]]]
    with server._lock:
        from scapy.all import Ether
        r = server.switch.process(1, bytes(Ether(dst="00:00:00:00:00:0c", type=0x9000) / b"x"))
    assert r.ports == [3]
