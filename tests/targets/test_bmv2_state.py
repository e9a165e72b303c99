"""A real BMv2 keeps an NF's state and a user's entries over a reload, is reachable from
this machine only, and never outlives the Python that started it.

* Registers: BMv2 1.15.5's P4Runtime server answers register reads and writes
  UNIMPLEMENTED; sfclab reads and writes them over its Thrift runtime, so a reload
  carries a heavy_hitter's counts (and the sketch counts on from them).
* Every BMv2 sfclab starts runs in a network namespace of its own: nothing it listens on
  is reached beyond loopback (its Thrift server binds 0.0.0.0:9090, in a namespace whose
  one address is 127.0.0.1); without root, in an unprivileged user namespace.
* Its keeper stops it when the Python that started it ends: killed (SIGKILL, a kernel
  restart) or ending without ``close()``.

Against the real tools; each test skips, naming what is missing, without them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether
from targets_support import live_skip

from sfclab.targets.bmv2 import target as B

FLOW = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5") / \
    UDP(sport=1234, dport=53)


def _needs_bmv2(compiler: bool = True) -> None:
    live_skip(B.missing_tools() if compiler else [] if B.find_switch() else [B.SWITCH])


def _counts(lab) -> dict[str, list[int]]:
    """heavy_hitter's non-zero sketch cells, by the register's name within the NF."""
    from sfclab.runtime.migrate import read_registers, register_names

    s = lab.target.session
    return {n.rsplit(".", 1)[1]: sorted(v for v in cells if v)
            for n, cells in read_registers(s, register_names(s, "heavy_hitter")).items()}


def test_a_reload_on_bmv2_carries_a_heavy_hitters_counts_and_keeps_your_entries():
    _needs_bmv2()
    from sfclab.lab import Lab

    lab = Lab()
    lab.add("chain h match udp.dport == 53: heavy_hitter -> l3fwd")
    try:
        lab.connect("bmv2")
        lab.push()
        s = lab.target.session
        for _ in range(5):
            assert lab.send_packet(FLOW).outputs
        assert _counts(lab) == {f"sketch_row{i}": [5] for i in range(3)}
        assert s.register_io.how == "over BMv2's Thrift runtime"    # P4Runtime said no
        mine = s.entry("SfcIngress.slot1_l3fwd.ipv4_lpm", {"hdr.ipv4.dst_addr": "10.9.0.0/16"},
                       "SfcIngress.slot1_l3fwd.drop")
        s.insert(mine)
        # nothing of the switch is reached from beyond this machine
        for sock in lab.target.bmv2.listening():
            assert not sock.beyond_loopback(), sock
        lab.add("chain w match tcp.dport == 80: firewall -> l3fwd")     # a slot more
        plan = lab.update(allow_reload=True)
        assert plan.done and ("carried the registers of heavy_hitter (slot 0 -> 1: 3 "
                              "registers, 3072 cells)") in str(plan), str(plan)
        assert "kept 1 entry of your own (SfcIngress.slot2_l3fwd.ipv4_lpm)" in str(plan)
        assert _counts(lab) == {f"sketch_row{i}": [5] for i in range(3)}
        for _ in range(2):
            assert lab.send_packet(FLOW).outputs
        assert _counts(lab) == {f"sketch_row{i}": [7] for i in range(3)}   # counts on
        assert [e.table for e in s.own.values()] == ["SfcIngress.slot2_l3fwd.ipv4_lpm"]
    finally:
        lab.close()


_STARTER = """
import os, sys, time
from sfclab.targets.bmv2.target import Bmv2Target
t = Bmv2Target.start(workdir=sys.argv[1])
print(t.process.pid, flush=True)
if sys.argv[2] == "wait":
    time.sleep(600)
"""


def _switch_of(keeper: int) -> int:
    children = Path(f"/proc/{keeper}/task/{keeper}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def _gone(pid: int, within: float = 20.0) -> bool:
    """Whether *pid* is gone (or a zombie) within *within* seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["killed", "ended without close()"])
def test_no_bmv2_outlives_the_python_that_started_it(tmp_path, how):
    _needs_bmv2(compiler=False)
    script = tmp_path / "starter.py"
    script.write_text(textwrap.dedent(_STARTER))
    py = subprocess.Popen([sys.executable, str(script), str(tmp_path / "w"),
                           "wait" if how == "killed" else "end"],
                          stdout=subprocess.PIPE, text=True, start_new_session=True)
    keeper = int(py.stdout.readline())
    switch = _switch_of(keeper)
    assert Path(f"/proc/{switch}/exe").resolve().name == B.SWITCH
    if how == "killed":                      # as a kernel restart does
        os.kill(py.pid, signal.SIGKILL)
    py.wait(60)
    assert _gone(switch) and _gone(keeper)


def _nobody_python() -> str | None:
    """A Python that user nobody can run (this one may live under /root), or None."""
    setpriv = shutil.which("setpriv")
    for exe in (sys.executable, "/usr/bin/python3"):
        if setpriv and os.path.exists(exe) and subprocess.run(
                [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", exe, "-c", ""],
                capture_output=True, check=False).returncode == 0:
            return exe
    return None


def test_without_root_bmv2_runs_in_a_user_namespace_reachable_from_here_only(tmp_path):
    """The default for users: not root.  The keeper (standard library only) runs BMv2 as
    user nobody in an unprivileged user namespace with a network namespace of its own;
    P4Runtime answers on its socket file, its Thrift runtime through the keeper."""
    _needs_bmv2(compiler=False)
    if os.geteuid() != 0:
        pytest.skip("needs root to run the switch as another user (nobody)")
    python = _nobody_python()
    if python is None:
        pytest.skip("no setpriv, or no Python that user nobody can run")
    from sfclab.runtime.client import Client
    from sfclab.targets.bmv2.thrift import Bmv2Thrift
    from sfclab.targets.process.exposure import listening
    from sfclab.targets.process.keeper import KEEPER, broker_connect, kept_command
    from sfclab.targets.process.tools import ManagedProcess, wait_for_port

    # pytest's directories are root's alone: nobody's is under /tmp, with the keeper
    work = Path(tempfile.mkdtemp(prefix="sfclab-nobody-"))
    keeper = work / "keeper.py"
    shutil.copy(KEEPER, keeper)
    for path in (work, keeper):
        os.chown(path, 65534, 65534)
    grpc, broker = f"unix:{work}/grpc.ipc", str(work / "keeper.ipc")
    cmd = kept_command(B.switch_command(B.find_switch(), grpc_addr=grpc, thrift_port=9090),
                       netns=True, broker=broker, python=python)
    cmd[cmd.index(KEEPER)] = str(keeper)
    proc = ManagedProcess.start(["setpriv", "--reuid=65534", "--regid=65534",
                                 "--clear-groups", *cmd],
                                log_path=tmp_path / "switch.log", cwd=work)
    try:
        wait_for_port(grpc, None, timeout=30, process=proc)
        assert "a user namespace with a network namespace of its own" in proc.tail()
        assert Path(f"/proc/{proc.pid}/uid_map").read_text().split() == ["65534"] * 2 + ["1"]
        for sock in listening(proc.pid):
            assert not sock.beyond_loopback(), sock
        assert {s.port for s in listening(proc.pid)} >= {9090}
        thrift = Bmv2Thrift(lambda: broker_connect(broker, "127.0.0.1", 9090))
        with pytest.raises(B.TargetError, match="INVALID_REGISTER_NAME"):
            thrift.register_read_all("no_such_register")     # it answers: no program yet
        thrift.close()
        Client(grpc, device_id=0).connect().close()           # P4Runtime answers
    finally:
        proc.stop()
        shutil.rmtree(work, ignore_errors=True)
    assert _gone(proc.pid)
