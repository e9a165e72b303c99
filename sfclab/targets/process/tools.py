"""Shared helpers for the external targets: finding executables, free ports,
waiting for a server's port, and running / stopping a switch process.

Every external target (BMv2's ``simple_switch_grpc``, Tofino's ``bf_switchd`` or
``tofino-model``) is a process sfclab may own: it is started with its output in
a log file (never a pipe, which would block the switch once full), waited on
until its gRPC port accepts connections, and stopped with SIGTERM, then SIGKILL.

>>> port = free_port()
>>> 1024 <= port < 65536 and not port_open("127.0.0.1", port)
True
>>> find_executable("no-such-tool-sfclab", env="SFCLAB_NO_SUCH_VAR") is None
True
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...errors import TargetError

__all__ = [
    "find_executable",
    "require_executable",
    "free_port",
    "port_open",
    "unix_socket_open",
    "wait_for_port",
    "tail_file",
    "ManagedProcess",
]


def find_executable(name: str, *, env: str | None = None,
                    dirs: Sequence[str | os.PathLike] = ()) -> str | None:
    """Where *name* is: the environment variable *env* (a path, or a bare name
    looked up on ``PATH``), else *dirs* in order, else ``PATH``; None if absent.

    >>> import sys
    >>> find_executable("python3", dirs=[Path(sys.executable).parent]) is not None
    True
    """
    if env and os.environ.get(env):
        given = os.environ[env]
        if os.sep in given:
            return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
        return shutil.which(given)
    for d in dirs:
        cand = Path(d) / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which(name)


def require_executable(name: str, *, env: str | None = None, install: str,
                       dirs: Sequence[str | os.PathLike] = ()) -> str:
    """:func:`find_executable`, or :class:`TargetError` naming what is missing and
    (``hint``) what to install."""
    exe = find_executable(name, env=env, dirs=dirs)
    if exe is not None:
        return exe
    where = "not on PATH"
    if dirs:
        where += ", not in " + ", ".join(str(d) for d in dirs)
    if env:
        where += (f", and {env}={os.environ[env]!r} is not an executable" if os.environ.get(env)
                  else f", and {env} is not set")
    raise TargetError(f"{name} is not installed ({where})", hint=install)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on now (the kernel's choice; another process
    could still take it before the switch binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """Whether a TCP connection to *host*:*port* succeeds now."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail_file(path: str | os.PathLike | None, lines: int = 20) -> str:
    """The last *lines* lines of a text file ('' if it is missing).

    >>> tail_file("/nonexistent/sfclab.log")
    ''
    """
    if path is None:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def unix_socket_open(path: str | os.PathLike, timeout: float = 0.2) -> bool:
    """Whether a connection to the Unix socket *path* succeeds now."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        try:
            s.connect(os.fspath(path))
            return True
        except OSError:
            return False


def wait_for_port(host: str, port: int | None, *, timeout: float,
                  process: ManagedProcess | None = None, what: str = "the switch",
                  interval: float = 0.05) -> None:
    """Wait until *host*:*port* accepts TCP connections (*host* ``unix:PATH`` and
    *port* None: until the Unix socket PATH does).

    :class:`TargetError` when *timeout* seconds pass, or when *process* exits
    first; the message ends with the process's last log lines."""
    deadline = time.monotonic() + timeout
    unix = host.removeprefix("unix:") if port is None else None
    where = unix or f"{host}:{port}"
    while True:
        if (unix_socket_open(unix) if unix is not None
                else port_open(host, port, timeout=min(0.5, max(interval, 0.05)))):
            return
        if process is not None and not process.running:
            raise TargetError(
                f"{what} exited with status {process.returncode} before its gRPC port "
                f"{where} accepted connections" + process.log_excerpt(),
                hint=f"command: {process.command_line}")
        if time.monotonic() >= deadline:
            excerpt = process.log_excerpt() if process is not None else ""
            raise TargetError(
                f"{what} did not open its gRPC port {where} within "
                f"{timeout:g} s"
                + excerpt,
                hint="see the switch's log; raise the timeout on a slow machine"
                + (f"; command: {process.command_line}" if process is not None else ""))
        time.sleep(interval)


class ManagedProcess:
    """A process sfclab started, with stdout and stderr in one log file.

    >>> import sys, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = ManagedProcess.start([sys.executable, "-c", "print('hello')"],
    ...                              log_path=Path(d) / "x.log")
    ...     p.wait(10), p.tail()
    (0, 'hello')
    """

    def __init__(self, command: Sequence[str], popen: subprocess.Popen, log_path: Path,
                 extra_logs: Sequence[Path] = (), name: str | None = None) -> None:
        self.command = tuple(command)
        self.popen = popen
        self.log_path = log_path
        #: Other files the process logs to (BMv2's ``--log-file``), shown on errors.
        self.extra_logs = tuple(extra_logs)
        self.name = name or Path(command[0]).name

    @classmethod
    def start(cls, command: Sequence[str], *, log_path: str | os.PathLike,
              cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None,
              extra_logs: Sequence[str | os.PathLike] = (), name: str | None = None
              ) -> ManagedProcess:
        """Start *command* with its output appended to *log_path*; :class:`TargetError`
        if it cannot be executed."""
        log = Path(log_path)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            try:
                popen = subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=cwd,
                                         env=None if env is None else dict(env),
                                         start_new_session=True)
            except OSError as e:
                raise TargetError(f"cannot run {command[0]}: {e.strerror}",
                                  hint="check the path and that it is executable") from None
        return cls(command, popen, log, [Path(p) for p in extra_logs], name)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    @property
    def command_line(self) -> str:
        import shlex

        return shlex.join(self.command)

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def tail(self, lines: int = 20) -> str:
        """The last lines of the process's output."""
        return tail_file(self.log_path, lines)

    def log_excerpt(self, lines: int = 20) -> str:
        """The last log lines, formatted for an error message ('' if none)."""
        parts = []
        for path in (self.log_path, *self.extra_logs):
            text = tail_file(path, lines)
            if text.strip():
                parts.append(f"\n--- last lines of {path} ---\n{text}")
        return "".join(parts)

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGTERM, then SIGKILL after *timeout* seconds; returns the exit status.
        Only this process (by its pid) is signalled."""
        if self.popen.poll() is not None:
            return self.popen.returncode
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
            return self.popen.wait(timeout)

    def __enter__(self) -> ManagedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.returncode}"
        return f"<ManagedProcess {self.name} pid={self.pid} {state}>"
