"""sfclab.targets.process.tools: executables, ports, readiness and process lifecycle."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from targets_support import write_exe

from sfclab.errors import TargetError
from sfclab.targets.process.tools import (
    ManagedProcess,
    find_executable,
    free_port,
    port_open,
    require_executable,
    tail_file,
    wait_for_port,
)


def test_find_executable_env_path_dirs_and_path(tmp_path, monkeypatch, no_tools):
    tool = write_exe(tmp_path / "a" / "mytool", "print('a')\n")
    other = write_exe(tmp_path / "b" / "mytool", "print('b')\n")
    assert find_executable("mytool") is None
    assert find_executable("mytool", dirs=[tool.parent, other.parent]) == str(tool)
    monkeypatch.setenv("PATH", str(other.parent))
    assert find_executable("mytool") == str(other)
    # The environment variable wins, as a path …
    monkeypatch.setenv("SFCLAB_X", str(tool))
    assert find_executable("mytool", env="SFCLAB_X", dirs=[other.parent]) == str(tool)
    # … or as a bare name looked up on PATH.
    monkeypatch.setenv("SFCLAB_X", "mytool")
    assert find_executable("whatever", env="SFCLAB_X") == str(other)
    # A path that is not an executable file is not found.
    plain = tmp_path / "plain"
    plain.write_text("")
    monkeypatch.setenv("SFCLAB_X", str(plain))
    assert find_executable("mytool", env="SFCLAB_X") is None


def test_require_executable_names_what_is_missing_and_what_to_install(no_tools, monkeypatch):
    with pytest.raises(TargetError) as e:
        require_executable("simple_switch_grpc", env="SFCLAB_BMV2", install="install BMv2")
    assert e.value.message == ("simple_switch_grpc is not installed (not on PATH, and "
                               "SFCLAB_BMV2 is not set)")
    assert e.value.hint == "install BMv2"
    monkeypatch.setenv("SFCLAB_BMV2", "/nonexistent/ssg")
    with pytest.raises(TargetError, match=r"SFCLAB_BMV2='/nonexistent/ssg' is not an executable"):
        require_executable("simple_switch_grpc", env="SFCLAB_BMV2", install="x")
    with pytest.raises(TargetError, match=r"not on PATH, not in /sde/bin\)"):
        require_executable("bf-p4c", install="x", dirs=["/sde/bin"])


def test_free_port_and_port_open(listening):
    assert port_open("127.0.0.1", listening)
    port = free_port()
    assert not port_open("127.0.0.1", port)


def test_wait_for_port_returns_once_something_listens():
    port = free_port()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def later():
        time.sleep(0.3)
        srv.bind(("127.0.0.1", port))
        srv.listen()

    th = threading.Thread(target=later)
    th.start()
    try:
        t0 = time.monotonic()
        wait_for_port("127.0.0.1", port, timeout=5)
        assert 0.2 < time.monotonic() - t0 < 5
    finally:
        th.join()
        srv.close()


def test_wait_for_port_timeout_message():
    port = free_port()
    with pytest.raises(TargetError) as e:
        wait_for_port("127.0.0.1", port, timeout=0.2, what="the thing")
    assert e.value.message == f"the thing did not open its gRPC port 127.0.0.1:{port} within 0.2 s"


def test_tail_file(tmp_path):
    f = tmp_path / "log"
    f.write_text("".join(f"line {i}\n" for i in range(100)))
    assert tail_file(f, 3) == "line 97\nline 98\nline 99"
    assert tail_file(tmp_path / "missing") == ""
    assert tail_file(None) == ""


def test_managed_process_captures_output_and_stops(tmp_path):
    exe = write_exe(tmp_path / "svc", """\
        import signal, sys, time
        signal.signal(signal.SIGTERM, lambda *a: (print("got TERM", flush=True), sys.exit(3)))
        print("up", flush=True)
        sys.stderr.write("to stderr\\n"); sys.stderr.flush()
        while True:
            time.sleep(0.05)
        """)
    p = ManagedProcess.start([str(exe)], log_path=tmp_path / "logs" / "svc.log")
    deadline = time.monotonic() + 5
    while "to stderr" not in p.tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.running and p.pid > 0
    assert p.tail() == "up\nto stderr"
    assert p.stop() == 3
    assert not p.running and p.returncode == 3
    assert "got TERM" in p.tail()
    assert p.stop() == 3              # stopping twice is harmless
    assert "exited 3" in repr(p)


def test_managed_process_sigkill_when_sigterm_is_ignored(tmp_path):
    exe = write_exe(tmp_path / "stubborn", """\
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
        """)
    with ManagedProcess.start([str(exe)], log_path=tmp_path / "s.log") as p:
        deadline = time.monotonic() + 5
        while "ready" not in p.tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        t0 = time.monotonic()
        assert p.stop(timeout=0.3) == -9
        assert time.monotonic() - t0 < 3


def test_managed_process_cannot_run(tmp_path):
    with pytest.raises(TargetError, match="cannot run /nonexistent/tool"):
        ManagedProcess.start(["/nonexistent/tool"], log_path=tmp_path / "x.log")


def test_wait_for_port_reports_an_exited_process_with_its_log(tmp_path):
    code = "print('boom: bad option'); raise SystemExit(2)"
    p = ManagedProcess.start([sys.executable, "-c", code], log_path=tmp_path / "x.log", name="tool")
    with pytest.raises(TargetError) as e:
        wait_for_port("127.0.0.1", free_port(), timeout=5, process=p, what="tool")
    msg = str(e.value)
    assert "tool exited with status 2 before its gRPC port" in msg
    assert "boom: bad option" in msg
    assert f"--- last lines of {tmp_path / 'x.log'} ---" in msg


def test_extra_logs_appear_in_excerpt(tmp_path):
    extra = tmp_path / "bmv2.log"
    extra.write_text("[info] pipeline ready\n")
    p = ManagedProcess.start([sys.executable, "-c", "pass"], log_path=tmp_path / "o.log",
                             extra_logs=[extra, Path(tmp_path / "missing.log")])
    p.wait(10)
    assert "pipeline ready" in p.log_excerpt()
    assert "missing.log" not in p.log_excerpt()
