"""The keeper: a small process between sfclab and a switch process sfclab starts, so that
the switch listens on nothing beyond this machine and never outlives the Python that
started it.

``python -I -S keeper.py --parent PID [--netns] [--broker PATH] [--move IFACE]… -- CMD…``
(:func:`kept_command` writes it; the script imports nothing but the standard library,
so it starts in a few tens of milliseconds):

* **its own network namespace** (``--netns``): the keeper makes one (``unshare``:
  as root a network namespace, else an unprivileged user namespace with a network
  namespace in it, the uid and gid mapped to themselves, as ``unshare -rn`` does),
  brings its loopback up and turns IPv6 off in it, and starts the switch there.  What
  the switch listens on -- BMv2's Thrift server on ``0.0.0.0:9090``, its event logger
  on ``tcp://127.0.0.1:…`` -- is reachable from that namespace only, whose one address
  is its loopback; what it serves on files (P4Runtime on ``unix:PATH``, nanomsg on
  ``ipc://PATH``) is reachable from this machine, in a directory only its user can
  open.  Interfaces named by ``--move`` (a switch's veth ends; root only) are moved in
  before the switch starts and back out, up and with their IPv6 setting as before,
  when it stops.
* **sockets into the namespace** (``--broker PATH``): sfclab connects to the Unix
  socket PATH and writes ``connect HOST PORT``; the keeper connects to HOST:PORT from
  inside the namespace and hands the connected socket over (``SCM_RIGHTS``), which
  then works from anywhere (:func:`broker_connect`).  No ``setns`` is needed, so this
  works without root too.
* **the switch dies with its parent**: the keeper watches the process that started it
  (``--parent``: a ``pidfd``, which reports the whole process's exit, not a thread's;
  else it polls ``getppid``) and stops the switch when it is gone -- a killed Python
  (SIGKILL), a kernel restart, a script that ended without ``close()``; the switch
  itself gets ``PR_SET_PDEATHSIG`` (SIGKILL) towards the keeper, which has a single
  thread, so it dies with the keeper too.
* **stopping**: SIGTERM (or SIGINT, SIGHUP) to the keeper stops the switch (SIGTERM,
  SIGKILL after ``--grace`` seconds), then the keeper exits the way the switch did (its
  status, or the same signal), so the parent sees the switch's own exit.

Messages of the keeper's own go to its standard error (the switch's log), each line
starting with ``sfclab keeper:``; it exits with status 125 when it cannot set up
(no namespace can be made here: the message says why).

>>> kept_command(["simple_switch_grpc", "--no-p4"], netns=True, broker="/tmp/b.sock",
...              parent=42, python="python3")[4:]
['--parent', '42', '--grace', '3', '--netns', '--broker', '/tmp/b.sock', '--', 'simple_switch_grpc', '--no-p4']
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

__all__ = ["kept_command", "broker_connect", "main", "SETUP_FAILED", "KEEPER"]

#: The keeper's exit status when it cannot set up (before the switch starts).
SETUP_FAILED = 125
#: This file: what ``python -I -S`` runs.
KEEPER = os.path.abspath(__file__)

_CLONE_NEWNET, _CLONE_NEWUSER = 0x40000000, 0x10000000
_PR_SET_PDEATHSIG = 1
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_RTM_NEWLINK, _NLMSG_ERROR, _IFLA_NET_NS_FD = 16, 2, 28
_NLM_F_REQUEST, _NLM_F_ACK = 1, 4


# -- the parent's side -------------------------------------------------------------------------
def kept_command(command: list[str], *, netns: bool = False, broker: str | None = None,
                 move: tuple[str, ...] = (), grace: float = 3.0, parent: int | None = None,
                 loopback: bool = False, python: str | None = None) -> list[str]:
    """The command line running *command* under a keeper (module docstring); *parent*
    is the process it dies with (default: this one); *loopback*: bring the loopback of
    the namespace it starts in up (a Mininet switch node's is down)."""
    cmd = [python or sys.executable, "-I", "-S", KEEPER,
           "--parent", str(os.getpid() if parent is None else parent), "--grace", f"{grace:g}"]
    if netns:
        cmd.append("--netns")
    if loopback and not netns:
        cmd.append("--loopback")
    if broker:
        cmd += ["--broker", str(broker)]
    for iface in move:
        cmd += ["--move", iface]
    return [*cmd, "--", *command]


def broker_connect(path: str, host: str, port: int, *, timeout: float = 5.0,
                   rcvbuf: int = 0) -> socket.socket:
    """A TCP socket connected to *host*:*port* inside the namespace of the keeper whose
    broker listens on *path* (with a receive buffer of *rcvbuf* bytes, asked before it
    connects, where the kernel allows).  :class:`OSError` when it cannot be made (the
    message says why: nothing listens there, the keeper is gone …)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(timeout)
        c.connect(path)
        c.sendall(f"connect {host} {port} {rcvbuf}\n".encode())
        msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
    if not fds:
        text = msg.decode(errors="replace").strip().removeprefix("error ")
        raise ConnectionRefusedError(text or "the keeper closed the connection")
    sock = socket.socket(fileno=fds[0])
    sock.setblocking(True)          # the keeper's end had a timeout: non-blocking
    return sock


# -- the keeper's side -------------------------------------------------------------------------
def _say(text: str) -> None:
    print(f"sfclab keeper: {text}", file=sys.stderr, flush=True)


def _libc():
    import ctypes                  # here: the module is imported where no switch runs too

    return ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    import ctypes

    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _new_netns() -> str:
    """Put this process in a network namespace of its own; returns how."""
    uid, gid = os.getuid(), os.getgid()
    if os.geteuid() == 0:
        with contextlib.suppress(PermissionError):
            _unshare(_CLONE_NEWNET)
            return "a network namespace"
    try:
        _unshare(_CLONE_NEWUSER | _CLONE_NEWNET)
    except OSError as e:
        raise OSError(e.errno, f"{e.strerror}: unprivileged user namespaces are off here "
                      "(sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces"
                      " > 0, or AppArmor's kernel.apparmor_restrict_unprivileged_userns=0), "
                      "and this is not root") from None
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")
    return "a user namespace with a network namespace"


def _set_up(sock: socket.socket, name: str) -> None:
    import fcntl

    req = struct.pack("16sH22x", name.encode(), 0)
    flags = struct.unpack_from("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", name.encode(), flags | _IFF_UP))


def _move_link(nl: socket.socket, index: int, ns_fd: int) -> None:
    """Move interface *index* (of *nl*'s namespace) into the namespace *ns_fd*."""
    body = struct.pack("BxHiII", socket.AF_UNSPEC, 0, index, 0, 0)
    body += struct.pack("HHI", 8, _IFLA_NET_NS_FD, ns_fd)
    nl.send(struct.pack("IHHII", 16 + len(body), _RTM_NEWLINK, _NLM_F_REQUEST | _NLM_F_ACK,
                        1, 0) + body)
    answer = nl.recv(65536)
    kind = struct.unpack_from("IHHII", answer)[1]
    err = -struct.unpack_from("i", answer, 16)[0] if kind == _NLMSG_ERROR else 0
    if err:
        raise OSError(err, os.strerror(err))


def _sysctl(path: str, value: str | None = None) -> str | None:
    try:
        if value is None:
            with open(path) as f:
                return f.read().strip()
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        return None
    return value


class _Moved:
    """Interfaces moved into the namespace, and how to put them back as they were."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.index = {n: socket.if_nametoindex(n) for n in names}   # in the first namespace
        self.ipv6 = {n: _sysctl(f"/proc/sys/net/ipv6/conf/{n}/disable_ipv6") for n in names}
        self.home_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
        self.home_nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.home_nl.bind((0, 0))
        self.home_ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.inside: list[str] = []

    def move_in(self, ctl: socket.socket) -> None:
        own = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            for n in self.names:
                _move_link(self.home_nl, self.index[n], own)
                self.inside.append(n)
                _set_up(ctl, n)
        finally:
            os.close(own)

    def move_out(self) -> None:
        nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        nl.bind((0, 0))
        for n in self.inside:
            try:
                _move_link(nl, socket.if_nametoindex(n), self.home_fd)
                _set_up(self.home_ctl, n)
            except OSError as e:
                _say(f"could not put interface {n} back: {e.strerror}")
                continue
            if self.ipv6[n] is not None:
                # /proc/sys/net is the opener's namespace's: open it from the first one
                with _in_netns(self.home_fd):
                    _sysctl(f"/proc/sys/net/ipv6/conf/{n}/disable_ipv6", self.ipv6[n])
        self.inside.clear()


@contextlib.contextmanager
def _in_netns(fd: int):
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    libc = _libc()
    try:
        libc.setns(fd, _CLONE_NEWNET)
        yield
    finally:
        libc.setns(own, _CLONE_NEWNET)
        os.close(own)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _pdeathsig(keeper: int):
    def pre() -> None:
        _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != keeper:          # the keeper died before the line above
            os._exit(1)
    return pre


def _serve(listener: socket.socket) -> None:
    """Answer one broker request (module docstring)."""
    conn, _ = listener.accept()
    with conn:
        conn.settimeout(2.0)
        try:
            words = conn.recv(1024).decode().split()
            if len(words) != 4 or words[0] != "connect":
                raise OSError(f"cannot read the request {' '.join(words)!r}")
            host, port, rcvbuf = words[1], int(words[2]), int(words[3])
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as s:
                if rcvbuf:
                    _grow_rcvbuf(s, rcvbuf)
                s.settimeout(2.0)
                s.connect((host, port))
                socket.send_fds(conn, [b"ok\n"], [s.fileno()])
        except (OSError, ValueError) as e:
            with contextlib.suppress(OSError):
                conn.sendall(f"error {getattr(e, 'strerror', None) or e}\n".encode())


def _grow_rcvbuf(s: socket.socket, size: int) -> None:
    """Ask for *size* bytes of receive buffer (beyond ``rmem_max`` where allowed); leave
    TCP's own tuning alone where neither is (a smaller fixed buffer would end it)."""
    try:
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), size)
        return
    except OSError:
        pass
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/sys/net/core/rmem_max") as f:
            if int(f.read()) >= size:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)


def _setup(args) -> tuple[socket.socket | None, _Moved | None]:
    moved = _Moved(args.move) if args.move else None
    if args.netns:
        how = _new_netns()
        ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        _set_up(ctl, "lo")
        for scope in ("all", "default"):
            _sysctl(f"/proc/sys/net/ipv6/conf/{scope}/disable_ipv6", "1")
        if moved is not None:
            moved.move_in(ctl)
        ctl.close()
        _say(f"the switch runs in {how} of its own")
    elif args.loopback:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as ctl:
            _set_up(ctl, "lo")
    listener = None
    if args.broker:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(args.broker)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(args.broker)
        os.chmod(args.broker, 0o600)
        listener.listen(16)
    return listener, moved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="keeper.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--parent", type=int, required=True)
    ap.add_argument("--grace", type=float, default=3.0)
    ap.add_argument("--netns", action="store_true")
    ap.add_argument("--loopback", action="store_true")
    ap.add_argument("--broker")
    ap.add_argument("--move", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command to keep")
    parent_fd = _pidfd(args.parent)
    if os.getppid() != args.parent:
        return SETUP_FAILED                                  # the parent is gone already
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: stop.append(s))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    moved = None
    try:
        listener, moved = _setup(args)
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                 preexec_fn=_pdeathsig(os.getpid()))
    except OSError as e:
        _say(f"cannot start the switch: {e.strerror or e}")
        if moved is not None:
            moved.move_out()
        return SETUP_FAILED
    why = _watch(child, parent_fd, args.parent, listener, wake_r, stop)
    if why:
        _say(f"stopping the switch: {why}")
        _stop(child, args.grace)
    if moved is not None:
        moved.move_out()
    if args.broker:
        with contextlib.suppress(OSError):
            os.unlink(args.broker)
    return _exit_like(child.returncode)


def _watch(child, parent_fd, parent: int, listener, wake_r: int, stop: list) -> str:
    """Serve the broker until the switch exits ('') or must stop (why)."""
    child_fd = _pidfd(child.pid)
    fds = [f for f in (parent_fd, child_fd, wake_r) if f is not None]
    if listener is not None:
        fds.append(listener.fileno())
    while True:
        if stop:
            return f"signal {signal.Signals(stop[0]).name}"
        if child.poll() is not None:
            return ""
        if os.getppid() != parent:
            return f"its parent (pid {parent}) is gone"
        ready, _, _ = select.select(fds, [], [], 0.5 if parent_fd is None else 5.0)
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 512)
        if parent_fd is not None and parent_fd in ready:
            return f"its parent (pid {parent}) is gone"
        if listener is not None and listener.fileno() in ready:
            _serve(listener)


def _stop(child: subprocess.Popen, grace: float) -> None:
    if child.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGTERM)
    end = time.monotonic() + grace
    while child.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        child.wait()


def _exit_like(code: int) -> int:
    """Exit the way the switch did: its status, or killed by the same signal."""
    if code >= 0:
        return code
    sig = -code
    with contextlib.suppress(OSError, ValueError):
        signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.kill(os.getpid(), sig)
    return 128 + sig


if __name__ == "__main__":
    sys.exit(main())
