"""Fake executables for the external targets' tests (helpers; fixtures in conftest.py).

Neither BMv2, p4c nor an SDE can be installed here, so the unit tests run small
Python scripts in their place: a ``simple_switch_grpc`` that records its argv
and listens on its ``--grpc-server-addr`` (or never does, exits at once, or
ignores SIGTERM), and compilers that write the files the real ones write.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from sfclab.targets.model import ModelTarget

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "targets"

_SWITCH = """\
import json, os, signal, socket, sys, time
MODE = {mode!r}
HELP = {help!r}
args = sys.argv[1:]
if "--help" in args:
    print(HELP)
    sys.exit(0)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "argv.json"), "w") as f:
    json.dump(args, f)
with open(os.path.join(here, "pid"), "w") as f:
    f.write(str(os.getpid()))
print("fake switch: starting", flush=True)
if MODE == "fail":
    print("Error while parsing command line arguments", flush=True)
    sys.exit(1)
if MODE == "nobmelog":
    print("Warning: you requested the nanomsg event logger, but bmv2 was compiled "
          "without -DBMELOG, and the event logger cannot be activated", flush=True)
if MODE == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
addr = args[args.index("--grpc-server-addr") + 1]
if MODE != "silent":
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX)
        s.bind(addr[len("unix:"):])
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))
    s.listen()
    print("fake switch: listening on", addr, flush=True)
while True:
    time.sleep(0.05)
"""


def write_exe(path: Path, body: str) -> Path:
    """An executable Python script at *path* running *body*."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def fake_switch(directory: Path, mode: str = "listen", help_text: str = "") -> Path:
    """A fake ``simple_switch_grpc`` in *directory*; its argv lands in ``argv.json``."""
    return write_exe(directory / "simple_switch_grpc", _SWITCH.format(mode=mode, help=help_text))


def recorded_argv(exe: Path) -> list[str]:
    return json.loads((exe.parent / "argv.json").read_text())


def live_skip(missing: list[str]) -> None:
    """Skip a live test, naming the executables that are missing."""
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (live test)")


class NoRoutes(ModelTarget):
    """A model switch that behaves differently: its routing table is emptied after the push."""

    def push(self, gen):
        n = super().push(gen)
        for name in self.switch.tables:
            if name.endswith("l3fwd.ipv4_lpm"):
                self.switch.clear(name)
        return n
