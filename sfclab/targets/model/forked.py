"""Model switch processes started fast: forked from a server that imported sfclab once.

Starting ``python -m sfclab model-switch …`` costs each process the interpreter
start and sfclab's imports (about 0.7 s of CPU); a network of 20 switches pays
that 20 times.  A :class:`ForkServer` is one helper process that imports the
model switch's modules (:data:`PRELOAD`) and then, for each request, forks a
child that runs ``sfclab model-switch ARGV`` (:func:`sfclab.targets.model.process.main`,
the code the command runs) with its output in a log file.  The server has no thread and no gRPC
channel, so forking is safe; it reaps its children and reports each exit, and
stops them all when its parent goes away (SIGTERM, then SIGKILL; a child also dies
with the server, PR_SET_PDEATHSIG).  It runs in ``/`` with the caller's
``sys.path``: give absolute paths in the command lines.  A child is returned as a
:class:`~sfclab.targets.process.tools.ManagedProcess` (:func:`start_forked`), waited
for, stopped (SIGTERM, then SIGKILL) and its log read like any other process.

The protocol is JSON lines: the parent writes ``{"argv": […], "log": PATH}``,
the server answers ``{"pid": N}`` (or ``{"error": …}``) and, later,
``{"exit": N, "status": S}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from ...errors import TargetError
from ..process.tools import ManagedProcess

__all__ = ["PRELOAD", "ForkServer", "start_forked", "serve"]

#: What the fork server imports before it forks any switch.
PRELOAD = ("sfclab.targets.model.process",)


# -- the server (its own process) -----------------------------------------------------------------

def serve(inp=None, out=None) -> None:
    """The fork server's loop: requests on *inp* (stdin), answers on *out* (stdout)."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    inp = inp or sys.stdin.buffer
    out = out or sys.stdout
    children: set[int] = set()
    buf = b""

    def say(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    while True:
        ready, _, _ = select.select([inp], [], [], 0.1)
        for pid, status in _reap(children):
            say({"exit": pid, "status": status})
        if not ready:
            continue
        chunk = os.read(inp.fileno(), 65536)
        if not chunk:                         # the parent went away: so do the switches
            _stop_all(children)
            return
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in filter(None, lines):
            req = json.loads(line)
            try:
                pid = os.fork()
            except OSError as e:
                say({"error": f"cannot fork: {e.strerror}"})
                continue
            if pid == 0:
                _child(req["argv"], req["log"], inp.fileno(), out.fileno())
            children.add(pid)
            say({"pid": pid})


def _stop_all(children: set[int], grace: float = 3.0) -> None:
    """SIGTERM every child; SIGKILL those still running after *grace* seconds."""
    import time

    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace
    while children and time.monotonic() < end:
        _reap(children)
        time.sleep(0.05)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _reap(children: set[int]) -> list[tuple[int, int]]:
    done = []
    for pid in list(children):
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            children.discard(pid)
            done.append((pid, os.waitstatus_to_exitcode(status)))
    return done


def _child(argv: list[str], log: str, *close: int) -> None:
    """In the forked child: output to *log*, then ``sfclab ARGV``; never returns."""
    code = 1
    try:
        for fd in close:
            os.close(fd)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = open(1, "w", buffering=1, closefd=False)   # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)   # noqa: SIM115
        os.setsid()
        # the server has no thread: the switch dies with it, even if it is killed
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)      # PR_SET_PDEATHSIG
        if argv[:1] != ["model-switch"]:
            raise ValueError(f"a forked switch runs `sfclab model-switch …`, not {argv!r}")
        from .process import main

        code = main(list(argv[1:]))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:                     # noqa: BLE001 - report, then leave
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


# -- the parent's side ----------------------------------------------------------------------------

class ForkServer:
    """The parent's handle on a fork server (:meth:`shared`: one per process)."""

    _shared: ForkServer | None = None
    _shared_lock = threading.Lock()

    def __init__(self) -> None:
        # the modules this process imports, whatever its working directory (the server's
        # is /, so that no directory of the caller's shadows them)
        path = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from sfclab.targets.model.forked import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, start_new_session=True,
            cwd="/", env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
        self.exits: dict[int, int] = {}
        self._answers: list[dict] = []
        self._cond = threading.Condition()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True, name="sfclab-fork-server").start()

    @classmethod
    def shared(cls) -> ForkServer:
        with cls._shared_lock:
            if cls._shared is None or cls._shared.proc.poll() is not None:
                cls._shared = cls()
            return cls._shared

    def _read(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self._cond:
                if "exit" in msg:
                    self.exits[msg["exit"]] = msg["status"]
                else:
                    self._answers.append(msg)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def fork(self, argv: Sequence[str], log: str | os.PathLike, timeout: float = 60.0) -> int:
        """Fork a child running ``sfclab ARGV``; its pid."""
        with self._lock:
            with self._cond:
                self._answers.clear()
            try:
                self.proc.stdin.write(json.dumps({"argv": list(argv),
                                                  "log": str(log)}).encode() + b"\n")
                self.proc.stdin.flush()
            except OSError:
                raise TargetError("the model switches' fork server is gone") from None
            with self._cond:
                if not self._cond.wait_for(lambda: self._answers or self.proc.poll() is not None,
                                           timeout) or not self._answers:
                    raise TargetError("the model switches' fork server did not answer",
                                      hint="run the switches as commands: fork=False")
                answer = self._answers.pop(0)
        if "error" in answer:
            raise TargetError(f"the model switches' fork server: {answer['error']}")
        return answer["pid"]

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self._cond:
            self._cond.wait_for(lambda: pid in self.exits or self.proc.poll() is not None,
                                timeout)
            return self.exits.get(pid)


class _ForkedPopen:
    """What :class:`ManagedProcess` uses of a ``Popen``, for a child of the fork server."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid

    @property
    def returncode(self) -> int | None:
        return self.server.exits.get(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        status = self.server.wait(self.pid, timeout)
        if status is None:
            raise subprocess.TimeoutExpired(f"sfclab (pid {self.pid})", timeout)
        return status

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_forked(argv: Sequence[str], *, log_path: str | os.PathLike,
                 name: str = "") -> ManagedProcess:
    """``sfclab model-switch ARGV…`` forked from the shared :class:`ForkServer`; its
    output appended to *log_path*.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = start_forked(["model-switch", "--trace-log", "t.log"], log_path=Path(d) / "s.log")
    ...     p.wait(30), p.tail()
    (1, '--trace-log records the packets of a switch on interfaces...')
    """
    log = Path(log_path).absolute()
    log.parent.mkdir(parents=True, exist_ok=True)
    server = ForkServer.shared()
    pid = server.fork(argv, log)
    return ManagedProcess(["sfclab", *argv], _ForkedPopen(server, pid), log,
                          name=name or "sfclab")
