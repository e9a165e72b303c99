"""The BMv2 target: sfclab's v1model program on a real ``simple_switch_grpc``.

Tools: ``p4c-bm2-ss`` (``PATH`` or ``SFCLAB_P4C``; run through
:func:`sfclab.codegen.p4c.run_p4c`) compiles the composed program to BMv2 JSON
and P4Info; ``simple_switch_grpc`` (``PATH`` or ``SFCLAB_BMV2``) runs it.  A
switch sfclab owns is started the way BMv2's README recommends, in a network
namespace of its own (:meth:`Bmv2Target.start`, :mod:`sfclab.targets.process.keeper`)::

    simple_switch_grpc --device-id 0 --packet-in ipc:///tmp/…/packets.ipc --log-console \\
        --nanolog tcp://127.0.0.1:9091 --thrift-port 9090 --no-p4 \\
        -- --grpc-server-addr unix:/tmp/…/grpc.ipc --cpu-port 255

``--no-p4``: the program (the BMv2 JSON, :meth:`Bmv2Target.device_config`, plus
the P4Info) is pushed with P4Runtime's ``SetForwardingPipelineConfig`` by
sfclab's runtime client.  Ports are veth interfaces (``-i N@vethX``, needs root
and existing veth pairs) or, without root, pcap files (``--use-files WAIT``:
port N reads ``portN_in.pcap`` and writes ``portN_out.pcap`` in a directory,
after WAIT seconds, so the pipeline and entries must be written within WAIT).
``--nanolog`` publishes the event logger (:mod:`sfclab.targets.bmv2.events`); the Thrift runtime
reads and writes registers (:mod:`sfclab.targets.bmv2.thrift`).  The switch is ready when its gRPC
socket accepts connections; it is stopped with SIGTERM, then SIGKILL, and it stops with
the Python that started it.  A running switch is attached to by URL::

>>> t = Bmv2Target.attach("bmv2://127.0.0.1:9559?device_id=1", check=False)
>>> t.grpc_address, t.device_id, t.owned
('127.0.0.1:9559', 1, False)
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import TargetError
from .events import EventSubscriber, NameMap
from .thrift import Bmv2Thrift
from ..process.keeper import SETUP_FAILED, broker_connect, kept_command
from ..ports.pcap import read_pcap, write_pcap
from ..url_query import INTEGER, TEXT, VETH, parse_veth, read_query
from ..process.tools import ManagedProcess, find_executable, require_executable, wait_for_port
from ..process.workdirs import remove_at_exit

__all__ = [
    "SWITCH", "BMV2_ENV", "INSTALL_BMV2", "CPU_PORT", "DEFAULT_GRPC_PORT",
    "find_switch", "missing_tools", "Bmv2Build", "compile_v1model", "PortMap",
    "switch_command", "switch_options", "parse_bmv2_url", "parse_veth", "Bmv2Target",
    "THRIFT_PORT", "NANOLOG_INSIDE",
    "write_pcap", "read_pcap",
]

SWITCH = "simple_switch_grpc"
BMV2_ENV = "SFCLAB_BMV2"
INSTALL_BMV2 = ("install BMv2 built with P4Runtime support (https://github.com/p4lang/"
                "behavioral-model, target simple_switch_grpc; Ubuntu: the 'p4lang-bmv2' "
                "package), or set SFCLAB_BMV2 to the executable")
#: The CPU port of sfclab's v1model programs (:data:`sfclab.codegen.v1model.CPU_PORT`).
CPU_PORT = 255
#: simple_switch_grpc's default P4Runtime port (IANA's P4Runtime port).
DEFAULT_GRPC_PORT = 9559
#: The Thrift port and event logger of a switch sfclab starts, in its own namespace.
THRIFT_PORT = 9090
NANOLOG_INSIDE = "tcp://127.0.0.1:9091"


def find_switch() -> str | None:
    """``simple_switch_grpc``: ``SFCLAB_BMV2``, else ``PATH``; None if absent."""
    return find_executable(SWITCH, env=BMV2_ENV)


def missing_tools() -> list[str]:
    """Which of ``p4c-bm2-ss`` and ``simple_switch_grpc`` are not installed."""
    from ...codegen.p4c import find_compiler

    out = []
    if find_compiler("v1model") is None:
        out.append("p4c-bm2-ss")
    if find_switch() is None:
        out.append(SWITCH)
    return out


@dataclass(frozen=True, slots=True)
class Bmv2Build:
    """p4c-bm2-ss's output for one program: BMv2 JSON and P4Info."""

    json_path: Path
    p4info_path: Path
    command: tuple[str, ...] = ()

    def device_config(self) -> bytes:
        """The P4Runtime ``p4_device_config`` for BMv2: the JSON's bytes."""
        try:
            return self.json_path.read_bytes()
        except OSError as e:
            raise TargetError(f"cannot read the BMv2 JSON {self.json_path}: {e.strerror}") from None

    def names(self) -> NameMap:
        """Ids -> names for the event logger."""
        return NameMap.from_json(self.device_config())


def compile_v1model(source: Any, out_dir: str | os.PathLike, *,
                    timeout: float = 600) -> Bmv2Build:
    """Compile with p4c-bm2-ss into *out_dir* (``program.json``, ``p4info.p4c.txt``).

    *source* is a :class:`sfclab.codegen.Generated` for v1model (its outputs are
    written first, and p4c's messages name the NF each line belongs to) or the
    path of a P4 file.  :class:`TargetError` if p4c-bm2-ss is missing or fails."""
    from ...codegen.p4c import compile_program

    out = Path(out_dir)
    res = compile_program(source, "v1model", out, what="BMv2", timeout=timeout)
    return Bmv2Build(out / "program.json", out / "p4info.p4c.txt", res.command)


@dataclass(frozen=True, slots=True)
class PortMap:
    """How data-plane ports reach the switch: veth interfaces, pcap files, or none.

    >>> PortMap.veth({1: "veth1", 2: "veth3"}).args()
    ['-i', '1@veth1', '-i', '2@veth3']
    >>> PortMap.pcap("/tmp/p", [1, 2], wait=5).args()
    ['--use-files', '5', '-i', '1@/tmp/p/port1', '-i', '2@/tmp/p/port2']
    >>> PortMap.packet_in("ipc:///tmp/p.ipc").args()
    ['--packet-in', 'ipc:///tmp/p.ipc']
    """

    mode: str = "none"
    interfaces: tuple[tuple[int, str], ...] = ()
    directory: Path | None = None
    wait: int = 0
    #: Why this mode was chosen (``auto``), for the user.
    reason: str = ""
    #: packet-in mode: the switch's nanomsg PAIR address.
    address: str = ""
    #: veth mode: the other end of each port's pair (``(port, interface)``), where sfclab
    #: sends and listens; found before the switch's ends go into its namespace.
    peers: tuple[tuple[int, str], ...] = ()

    @classmethod
    def veth(cls, interfaces: Mapping[int, str], reason: str = "") -> PortMap:
        return cls("veth", tuple(sorted(interfaces.items())), reason=reason)

    @classmethod
    def pcap(cls, directory: str | os.PathLike, ports: Iterable[int], *, wait: int = 5,
             reason: str = "") -> PortMap:
        d = Path(directory).absolute()
        return cls("pcap", tuple((p, str(d / f"port{p}")) for p in sorted(set(ports))), d,
                   wait, reason)

    @classmethod
    def auto(cls, interfaces: Mapping[int, str], directory: str | os.PathLike, *,
             wait: int = 5) -> PortMap:
        """veth when running as root and every interface exists, else pcap files
        (``reason`` says why)."""
        if os.geteuid() != 0:
            why = "not root: BMv2 needs root to attach to interfaces, so ports are pcap files"
        else:
            absent = [i for i in interfaces.values() if not Path("/sys/class/net", i).exists()]
            if not absent:
                return cls.veth(interfaces, reason="root, and every veth interface exists")
            why = f"interface(s) {', '.join(absent)} do not exist, so ports are pcap files"
        return cls.pcap(directory, interfaces, wait=wait, reason=why)

    @classmethod
    def packet_in(cls, address: str, reason: str = "") -> PortMap:
        """BMv2's packet-in socket (``--packet-in ADDR``, nanomsg PAIR): packets go in and
        out as messages, on any port number, without root (:mod:`sfclab.targets.ports.packet_io`)."""
        return cls("packet-in", (), None, 0, reason, address)

    @classmethod
    def none(cls) -> PortMap:
        return cls()

    @property
    def ports(self) -> list[int]:
        return [p for p, _ in self.interfaces]

    def args(self) -> list[str]:
        if self.mode == "packet-in":
            return ["--packet-in", self.address]
        out = ["--use-files", str(self.wait)] if self.mode == "pcap" else []
        for port, name in self.interfaces:
            out += ["-i", f"{port}@{name}"]
        return out

    def in_pcap(self, port: int) -> Path:
        """pcap mode: the file the switch reads port *port*'s packets from."""
        return self._file(port, "_in.pcap")

    def out_pcap(self, port: int) -> Path:
        """pcap mode: the file the switch writes port *port*'s packets to."""
        return self._file(port, "_out.pcap")

    def _file(self, port: int, suffix: str) -> Path:
        if self.mode != "pcap":
            raise TargetError(f"ports are {self.mode}, not pcap files")
        for p, prefix in self.interfaces:
            if p == port:
                return Path(prefix + suffix)
        raise TargetError(f"port {port} is not one of the switch's ports {self.ports}")

    def describe(self) -> str:
        if self.mode == "none":
            return "no data-plane ports"
        if self.mode == "packet-in":
            text = f"packets over BMv2's packet-in socket {self.address}"
        elif self.mode == "veth":
            text = "veth: " + ", ".join(f"{p}@{n}" for p, n in self.interfaces)
        else:
            text = (f"pcap files in {self.directory} (portN_in.pcap / portN_out.pcap, read "
                    f"after {self.wait} s)")
        return text + (f" ({self.reason})" if self.reason else "")


def switch_command(exe: str, *, grpc_addr: str, ports: PortMap | None = None,
                   device_id: int = 0, cpu_port: int | None = CPU_PORT,
                   nanolog: str | None = None, log_file: str | os.PathLike | None = None,
                   log_level: str | None = None, thrift_port: int | None = None,
                   notifications_addr: str | None = None) -> list[str]:
    """The ``simple_switch_grpc`` command line for a switch sfclab owns.

    >>> switch_command("simple_switch_grpc", grpc_addr="127.0.0.1:50001",
    ...                ports=PortMap.veth({1: "veth1"}), nanolog="ipc:///tmp/e.ipc")
    ... # doctest: +NORMALIZE_WHITESPACE
    ['simple_switch_grpc', '--device-id', '0', '-i', '1@veth1', '--log-console',
     '--nanolog', 'ipc:///tmp/e.ipc', '--no-p4', '--',
     '--grpc-server-addr', '127.0.0.1:50001', '--cpu-port', '255']
    """
    ports = ports or PortMap.none()
    if cpu_port is not None:
        if not 0 < cpu_port < 512 or cpu_port == 511:
            raise TargetError(f"CPU port {cpu_port} does not fit v1model's 9-bit ports "
                              "(1..510; 0 is invalid and 511 is the drop port)")
        if cpu_port in ports.ports:
            raise TargetError(f"CPU port {cpu_port} is also a data port",
                              hint="BMv2 refuses to start when --cpu-port is one of the -i ports")
    cmd = [exe, "--device-id", str(device_id), *ports.args()]
    if log_file is not None:
        cmd += ["--log-file", str(log_file), "--log-flush"]
    else:
        cmd.append("--log-console")
    if log_level is not None:
        if log_level not in ("trace", "debug", "info", "warn", "error", "off"):
            raise TargetError(f"unknown BMv2 log level {log_level!r}",
                              hint="trace, debug, info, warn, error or off")
        cmd += ["--log-level", log_level]
    if nanolog is not None:
        cmd += ["--nanolog", nanolog]
    if notifications_addr is not None:
        cmd += ["--notifications-addr", notifications_addr]
    if thrift_port is not None:
        cmd += ["--thrift-port", str(thrift_port)]
    cmd += ["--no-p4", "--", "--grpc-server-addr", grpc_addr]
    if cpu_port is not None:
        cmd += ["--cpu-port", str(cpu_port)]
    return cmd


_OPTIONS_CACHE: dict[str, frozenset[str]] = {}


def switch_options(exe: str) -> frozenset[str]:
    """The long options a BMv2 binary's ``--help`` lists (build-dependent ones:
    ``--thrift-port``, ``--notifications-addr``); empty if it cannot say."""
    if exe not in _OPTIONS_CACHE:
        try:
            done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10,
                                  stdin=subprocess.DEVNULL, check=False)
            text = done.stdout + done.stderr
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        _OPTIONS_CACHE[exe] = frozenset(re.findall(r"--[a-z][a-z0-9-]+", text))
    return _OPTIONS_CACHE[exe]


#: The parameters of a BMv2 URL (see :func:`parse_bmv2_url`).
_URL_PARAMS = {"device_id": INTEGER, "cpu_port": INTEGER, "nanolog": TEXT, "json": TEXT,
              "p4info": TEXT, "packet_in": TEXT, "veth": VETH, "log_level": TEXT,
              "server_port": INTEGER, "thrift": TEXT}
_HINT_URL = ("bmv2 (a switch sfclab starts), bmv2?veth=1@veth0,2@veth2, or "
             "bmv2://127.0.0.1:9559?device_id=0 (a running one)")


def parse_bmv2_url(url: str) -> dict[str, Any]:
    """A BMv2 target: ``bmv2[?…]`` is a switch sfclab starts and owns (``host`` is
    None); ``bmv2://HOST:PORT?…`` or ``bmv2://unix:/PATH?…`` a running one (P4Runtime
    on a TCP port, or on the socket file PATH).  Parameters: ``device_id``,
    ``cpu_port``, ``nanolog`` (its event logger), ``packet_in`` (its packet socket),
    ``veth`` (``1@veth0,…``: ports on veth pairs), ``json`` / ``p4info`` (the program
    it runs), ``log_level``, ``server_port`` (where sfclab plays the server of a
    program whose paths detour through one: :mod:`sfclab.codegen.detour`), ``thrift``
    (its Thrift runtime, ``PORT`` or ``HOST:PORT``: registers are read and written there).

    >>> parse_bmv2_url("bmv2://[::1]:50001?device_id=2&nanolog=ipc%3A%2F%2F%2Ftmp%2Fe.ipc")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'host': '::1', 'port': 50001, 'device_id': 2, 'cpu_port': 255,
     'nanolog': 'ipc:///tmp/e.ipc', 'json': None, 'p4info': None, 'packet_in': None,
     'veth': None, 'log_level': None, 'server_port': None, 'thrift': None}
    >>> u = parse_bmv2_url("bmv2?veth=1@veth0,2@veth2")
    >>> u["host"], u["veth"]
    (None, {1: 'veth0', 2: 'veth2'})
    >>> u = parse_bmv2_url("bmv2://unix:/tmp/w/grpc.ipc?thrift=9090")
    >>> u["host"], u["port"], u["thrift"]
    ('unix:/tmp/w/grpc.ipc', None, '9090')
    """
    parts = urlsplit(url)
    owned = (parts.scheme, parts.netloc, parts.path) in (("", "", "bmv2"), ("bmv2", "", ""))
    if parts.scheme != "bmv2" and not owned:
        raise TargetError(f"not a BMv2 URL: {url!r}", hint=_HINT_URL)
    unix = parts.netloc == "unix:"              # bmv2://unix:/PATH: P4Runtime on a socket file
    if unix and not parts.path:
        raise TargetError(f"no socket path in {url!r}", hint="bmv2://unix:/PATH?device_id=0")
    try:
        port = None if unix else parts.port or DEFAULT_GRPC_PORT
    except ValueError:
        raise TargetError(f"bad port in {url!r}") from None
    host = f"unix:{parts.path}" if unix else parts.hostname or "127.0.0.1"
    out: dict[str, Any] = {"host": None if owned else host,
                           "port": None if owned else port, "device_id": 0,
                           "cpu_port": CPU_PORT}
    out |= {k: None for k in _URL_PARAMS if k not in out}
    out |= read_query(url, _URL_PARAMS)
    return out


def _grpc_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(eq=False)
class Bmv2Target:
    """A BMv2 switch: its P4Runtime address and device id, the process when
    sfclab started it, and the device config to push."""

    #: Its P4Runtime server: a host and port, or ``unix:PATH`` (*port* None).
    host: str
    port: int | None
    device_id: int = 0
    cpu_port: int | None = CPU_PORT
    #: The BMv2 JSON bytes (P4Runtime ``p4_device_config``), when known.
    config: bytes | None = None
    json_path: Path | None = None
    p4info_path: Path | None = None
    #: The event logger's address (``--nanolog``), when it is on.
    nanolog: str | None = None
    process: ManagedProcess | None = None
    ports: PortMap = field(default_factory=PortMap.none)
    workdir: Path | None = None
    #: What sfclab noticed while starting the switch (a missing feature …).
    notes: list[str] = field(default_factory=list)
    #: The keeper's broker (:mod:`sfclab.targets.process.keeper`) of a switch in a namespace of its own: TCP
    #: connections to it are made there (:meth:`tcp`); None: made from here.
    broker: str | None = None
    #: Its Thrift runtime's port (inside its namespace for a switch sfclab started;
    #: ``thrift=`` in the URL of one attached to); None: unknown.
    thrift_port: int | None = None
    thrift_host: str = "127.0.0.1"
    #: sfclab made :attr:`workdir` (none was given): removed when Python exits, once
    #: :meth:`stop` stopped the switch (:mod:`sfclab.targets.process.workdirs`).
    made_workdir: bool = False

    # -- addresses and config -----------------------------------------------------------------
    @property
    def grpc_address(self) -> str:
        return self.host if self.port is None else _grpc_address(self.host, self.port)

    def tcp(self, host: str, port: int, *, timeout: float = 5.0,
            rcvbuf: int = 0) -> socket.socket:
        """A TCP connection to *host*:*port* as the switch sees it: from inside its
        namespace (through its keeper) for a switch sfclab started, else from here
        (*rcvbuf*: a receive buffer to ask for, on the keeper's side)."""
        where = f"{host}:{port} of {self.url}"
        try:
            if self.broker is None:
                return socket.create_connection((host, port), timeout=timeout)
            return broker_connect(self.broker, host, port, timeout=timeout, rcvbuf=rcvbuf)
        except OSError as e:
            raise TargetError(f"cannot connect to {where}: {e.strerror or e}",
                              hint="is the switch running?") from None

    def thrift(self) -> Bmv2Thrift | None:
        """A client of the switch's Thrift runtime (registers), None when its port is
        unknown (attach with ``thrift=PORT`` in the URL)."""
        if self.thrift_port is None:
            return None
        host, port = self.thrift_host, self.thrift_port
        return Bmv2Thrift(lambda: self.tcp(host, port),
                          where=f"the Thrift runtime of {self.url} ({host}:{port})")

    @property
    def url(self) -> str:
        return f"bmv2://{self.grpc_address}?device_id={self.device_id}"

    @property
    def owned(self) -> bool:
        """Whether sfclab started this switch (and stops it)."""
        return self.process is not None

    def device_config(self) -> bytes:
        """The ``p4_device_config`` for ``SetForwardingPipelineConfig``: BMv2 JSON."""
        if self.config is None:
            raise TargetError(f"no BMv2 JSON for the switch at {self.url}",
                              hint="compile with compile_v1model(), or pass json=… "
                                   "(Bmv2Target.start/attach or the URL's json= parameter)")
        return self.config

    def names(self) -> NameMap:
        return NameMap.from_json(self.device_config())

    def subscribe(self, *, backend: str | None = None) -> EventSubscriber:
        """A subscriber to this switch's event logger (open it before sending packets)."""
        if self.nanolog is None:
            raise TargetError(f"the event logger of {self.url} is off",
                              hint="start the switch with event_logger=True, or give "
                                   "nanolog=… in the URL of a switch run with --nanolog")
        return EventSubscriber(self.nanolog, self.names(), backend=backend,
                               device_id=self.device_id, connect=self.event_connect())

    def event_connect(self):
        """How to connect to a ``tcp://`` event logger (in the switch's namespace), for
        :class:`~sfclab.targets.bmv2.events.EventSubscriber`; None: directly."""
        return None if self.broker is None else self.tcp

    # -- lifecycle -----------------------------------------------------------------------------
    @classmethod
    def start(cls, build: Bmv2Build | str | os.PathLike | None = None, *,
              ports: PortMap | str | None = None, device_id: int = 0,
              cpu_port: int | None = CPU_PORT, workdir: str | os.PathLike | None = None,
              event_logger: bool | str = True, log_level: str | None = None,
              log_to_file: bool = False, timeout: float = 15.0,
              exe: str | None = None) -> Bmv2Target:
        """Start a ``simple_switch_grpc`` sfclab owns, in a network namespace of its own,
        and wait for its P4Runtime socket.

        The switch runs under a keeper (:mod:`sfclab.targets.process.keeper`): in its own network namespace
        (as root a network namespace, else an unprivileged user namespace with one),
        so that what it listens on over TCP -- its Thrift runtime (``0.0.0.0:9090``,
        BMv2 cannot bind it to 127.0.0.1) and its event logger -- is reachable from that
        namespace's loopback only; P4Runtime is on a Unix socket in the working
        directory (``--grpc-server-addr unix:…``), the packet and notification sockets
        are ``ipc://`` files there.  sfclab reaches the TCP ones through the keeper
        (:meth:`tcp`).  The switch stops when the Python that started it ends, however
        it ends.  veth ports (root) are moved into the namespace while it runs.

        *build* is a :class:`Bmv2Build` or a BMv2 JSON path (kept for
        :meth:`device_config`; the switch starts with ``--no-p4`` either way).
        *ports* is a :class:`PortMap`, or ``"packet-in"`` for BMv2's packet socket at
        an address in the working directory.  *event_logger*: on (``--nanolog
        tcp://127.0.0.1:9091`` in the switch's namespace), off, or the address to give it
        (a ``tcp://`` one is in the switch's namespace)."""
        exe = exe or require_executable(SWITCH, env=BMV2_ENV, install=INSTALL_BMV2)
        wd = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="sfclab-bmv2-"))
        wd.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        supported = switch_options(exe)
        ports = _ports(ports, supported, exe, wd, token)
        if ports.mode == "pcap":
            for p in ports.ports:
                if not ports.in_pcap(p).exists():
                    write_pcap(ports.in_pcap(p), [])
        # TCP, not IPC: nanomsg drops what the socket cannot take at once, and IPC holds
        # ~340 event messages, TCP tens of thousands (:mod:`sfclab.targets.bmv2.sp`)
        nanolog = (event_logger if isinstance(event_logger, str) else
                   NANOLOG_INSIDE if event_logger else None)
        log_file = wd / "bmv2.log" if log_to_file else None
        grpc = f"unix:{_ipc_path(wd, 'grpc', token)}"
        broker = _ipc_path(wd, "keeper", token)
        cmd = switch_command(
            exe, grpc_addr=grpc, ports=ports, device_id=device_id,
            cpu_port=cpu_port, nanolog=nanolog, log_file=log_file, log_level=log_level,
            thrift_port=THRIFT_PORT if "--thrift-port" in supported else None,
            notifications_addr=(f"ipc://{_ipc_path(wd, 'notifications', token)}"
                                if "--notifications-addr" in supported else None))
        json_path, p4info, config = _build_files(build)
        for stale in (grpc.removeprefix("unix:"), broker):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(stale)
        moved = tuple(name for _, name in ports.interfaces) if ports.mode == "veth" else ()
        proc = ManagedProcess.start(
            kept_command(cmd, netns=True, broker=broker, move=moved), log_path=wd /
            "simple_switch_grpc.out", cwd=wd, extra_logs=[log_file, Path(f"{log_file}.txt")]
            if log_file else (), name=SWITCH)
        target = cls(grpc, None, device_id, cpu_port, config, json_path, p4info,
                     nanolog, proc, ports, wd, broker=broker, thrift_port=THRIFT_PORT,
                     made_workdir=not workdir)
        try:
            wait_for_port(grpc, None, timeout=timeout, process=proc,
                          what=f"{SWITCH} (device {device_id})")
        except TargetError as e:
            proc.stop()
            raise _keeper_failed(e, proc) from None
        if nanolog and "compiled without -DBMELOG" in proc.tail(200):
            target.nanolog = None
            target.notes.append("this BMv2 was built without the event logger (-DBMELOG): "
                                "no packet traces from the switch")
        if ports.reason:
            target.notes.append(ports.describe())
        return target

    @classmethod
    def attach(cls, url: str, *, build: Bmv2Build | str | os.PathLike | None = None,
               check: bool = True, timeout: float = 2.0) -> Bmv2Target:
        """A switch sfclab did not start, from ``bmv2://HOST:PORT?device_id=N`` (or
        ``bmv2://unix:/PATH?…``); with *check*, :class:`TargetError` unless its port
        accepts connections.  Its registers are read over ``thrift=PORT`` when given."""
        u = parse_bmv2_url(url)
        if u["host"] is None:
            raise TargetError(f"{url!r} names a switch sfclab starts, not one to attach to",
                              hint="bmv2://HOST:PORT?device_id=N")
        json_path, p4info, config = _build_files(build if build is not None else u["json"])
        if u["p4info"]:
            p4info = Path(u["p4info"])
        if check:
            wait_for_port(u["host"], u["port"], timeout=timeout,
                          what=f"the BMv2 switch at {url}")
        ports = (PortMap.packet_in(u["packet_in"]) if u["packet_in"] else
                 PortMap.veth(u["veth"]) if u["veth"] else PortMap.none())
        here = "127.0.0.1" if u["host"].startswith("unix:") else u["host"]
        thrift_host, thrift_port = _thrift_address(u["thrift"], here, url)
        return cls(u["host"], u["port"], u["device_id"], u["cpu_port"], config, json_path,
                   p4info, u["nanolog"], ports=ports, thrift_port=thrift_port,
                   thrift_host=thrift_host)

    def stop(self, timeout: float = 5.0) -> int | None:
        """Stop the switch if sfclab started it (SIGTERM, then SIGKILL); attached
        switches are left running."""
        if self.process is None:
            return None
        alive = self.process.running
        code = self.process.stop(timeout)
        if self.made_workdir and alive and self.workdir is not None:
            remove_at_exit(self.workdir)     # a switch that died keeps its log
        return code

    def listening(self) -> list:
        """What an owned switch (and its keeper) listens on, and from where each socket
        is reached (:func:`sfclab.targets.process.exposure.listening`); empty for one attached to."""
        from ..process.exposure import listening

        return listening(self.process.pid) if self.process is not None else []

    def log(self, lines: int = 40) -> str:
        """The last lines of an owned switch's output."""
        return self.process.tail(lines) if self.process else ""

    def __enter__(self) -> Bmv2Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = repr(self.process) if self.process else "attached"
        return f"<Bmv2Target {self.url} {state}>"


def _thrift_address(text: str | None, host: str, url: str) -> tuple[str, int | None]:
    """``thrift=PORT`` (on the switch's host) or ``thrift=HOST:PORT``.

    >>> _thrift_address("9090", "10.0.0.1", "u"), _thrift_address("h:9091", "x", "u")
    (('10.0.0.1', 9090), ('h', 9091))
    """
    if not text:
        return "127.0.0.1", None
    where, _, port = text.rpartition(":")
    if not port.isdigit():
        raise TargetError(f"thrift= must be PORT or HOST:PORT in {url!r}, not {text!r}")
    return where.strip("[]") or host, int(port)


def _ports(ports: PortMap | str | None, supported: frozenset[str], exe: str, wd: Path,
           token: str) -> PortMap:
    """The :class:`PortMap` a switch starts with (veth peers found before the switch's ends
    go into its namespace)."""
    if ports == "packet-in":
        if supported and "--packet-in" not in supported:
            raise TargetError(f"{exe} has no --packet-in option (BMv2 built without "
                              "nanomsg), so sfclab cannot send it packets without root",
                              hint="attach its ports to veth pairs: bmv2?veth=1@veth0,…")
        return PortMap.packet_in(f"ipc://{_ipc_path(wd, 'packets', token)}")
    if isinstance(ports, str):
        raise TargetError(f"unknown ports {ports!r}", hint="a PortMap, or 'packet-in'")
    ports = ports or PortMap.none()
    if ports.mode == "veth" and not ports.peers:
        from ..ports.packet_io import veth_peer

        if os.geteuid() != 0:
            raise TargetError("BMv2 on veth pairs needs root (raw sockets, and its ends "
                              "go into the switch's network namespace)",
                              hint="run as root, or use its packet socket: bmv2 (no veth=)")
        ports = replace(ports, peers=tuple((p, veth_peer(n)) for p, n in ports.interfaces))
    return ports


def _keeper_failed(err: TargetError, proc: ManagedProcess) -> TargetError:
    """*err* (the switch did not come up), with a hint when its keeper could not set up."""
    if proc.returncode != SETUP_FAILED:
        return err
    return TargetError(err.message, hint="sfclab runs BMv2 in a network namespace of its "
                       "own, so that nothing of it listens beyond this machine; it could not "
                       "make one (see the keeper's line above). Run as root, or allow "
                       "unprivileged user namespaces, or start BMv2 yourself and attach: "
                       "bmv2://HOST:PORT")


def _ipc_path(workdir: Path, what: str, token: int | str) -> str:
    """An IPC socket path short enough for ``sun_path`` (108 bytes); *token* (a port,
    …) makes the fallback under /tmp unique."""
    p = str(workdir.absolute() / f"{what}.ipc")
    return p if len(p) < 100 else f"/tmp/sfclab-bmv2-{token}-{what}.ipc"


def _build_files(build: Any) -> tuple[Path | None, Path | None, bytes | None]:
    if build is None:
        return None, None, None
    if isinstance(build, Bmv2Build):
        return build.json_path, build.p4info_path, build.device_config()
    path = Path(build)
    try:
        return path, None, path.read_bytes()
    except OSError as e:
        raise TargetError(f"cannot read the BMv2 JSON {path}: {e.strerror}") from None
