"""The switch processes of a Mininet network: one per switch, on the switch's interfaces.

A *switch kind* says how to start a switch's process, how to push to it and
how to read what it did with each packet (:class:`~sfclab.targets.model.process.SwitchRecord`):

* :class:`ModelSwitches` — ``sfclab model-switch --iface 1@s1-eth1 …
  --trace-log FILE``: the embedded model as a process, its records read from
  its trace log;
* :class:`Bmv2Switches` — ``simple_switch_grpc -i 1@s1-eth1 … --nanolog …``
  (:func:`~sfclab.targets.bmv2.target.switch_command`), the program compiled with
  ``p4c-bm2-ss``; its records are assembled from what crossed its interfaces
  (:mod:`.wire`) and its event logger.

The model's processes serve P4Runtime on 127.0.0.1 at a port chosen when they
start.  Each BMv2 runs in a network namespace of its own that holds its interfaces
(:attr:`SwitchProcesses.namespace`): BMv2's Thrift server binds 0.0.0.0:9090 (or
``--thrift-port``) with no way to say 127.0.0.1, so two switches in one namespace clash
there and every one is open to the machine's outside addresses; in its own namespace
each has port 9090 to itself, on no address but its loopback.  Its P4Runtime server is
on a Unix socket in the working directory (``--grpc-server-addr unix:…``; a file, seen
from every namespace); its event logger listens on TCP at 127.0.0.1:9091 of its
namespace (``--nanolog tcp://…``), reached from a socket made there.  sfclab reads and
writes its registers over that Thrift server (BMv2's P4Runtime server does not do registers), from a socket
opened inside the namespace (:meth:`Bmv2Switches.register_io`), and reads there the entries
its tables hit, so that its traces show each action's arguments and each entry as the
model's traces do (:mod:`~sfclab.targets.bmv2.entries`).  Each BMv2 runs under a
keeper (:mod:`~sfclab.targets.process.keeper`) that stops it when the Python that started it
ends, however it ends.

>>> kind = ModelSwitches("/tmp/w")
>>> kind.command("s1", {1: "s1-eth1", 2: "s1-eth2"}, 50001)[3:]
... # doctest: +NORMALIZE_WHITESPACE
['model-switch', '--grpc', '127.0.0.1:50001', '--device-id', '1', '--cpu-port', '255',
 '--iface', '1@s1-eth1', '--iface', '2@s1-eth2', '--trace-log', '/tmp/w/s1.trace.jsonl']
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from ...codegen import Generated
from ...errors import TargetError, did_you_mean
from ..model.process import RecordReader
from ..process.tools import ManagedProcess, free_port, wait_for_port

#: Each BMv2's Thrift port, in its own namespace (BMv2's default).
THRIFT_PORT = 9090

__all__ = ["SwitchProcesses", "ModelSwitches", "Bmv2Switches", "SWITCH_KINDS", "switch_kind"]


class SwitchProcesses:
    """What every kind shares: one process per switch, P4Runtime on 127.0.0.1 at a free
    port, logs in *workdir*.  A kind gives :meth:`command`, :meth:`device_config` and
    :meth:`records`."""

    kind = ""
    program = ""
    device_id = 0
    cpu_port = 255
    #: Whether each switch runs in a network namespace of its own (its node's, holding
    #: its interfaces): :class:`~.emulator.MininetEmulation` starts it there.
    namespace = False

    def __init__(self, workdir: str | os.PathLike) -> None:
        self.workdir = Path(workdir)
        self.grpc_ports: dict[str, int] = {}

    def command(self, switch: str, interfaces: dict[int, str], grpc_port: int) -> list[str]:
        raise NotImplementedError

    def launch(self, switch: str, interfaces: dict[int, str]) -> ManagedProcess:
        """Start *switch*'s process on *interfaces* (``{port: interface}``)."""
        from ..process.keeper import kept_command

        self.grpc_ports[switch] = port = free_port()
        # under a keeper: it stops with this Python, however that ends
        return ManagedProcess.start(kept_command(self.command(switch, interfaces, port)),
                                    log_path=self.workdir / f"{switch}.log", cwd=self.workdir,
                                    name=f"{self.program} {switch}")

    def address(self, switch: str) -> str:
        return f"127.0.0.1:{self.grpc_ports[switch]}"

    def wait(self, switch: str, process: ManagedProcess, timeout: float) -> None:
        """Wait until the switch serves P4Runtime (:class:`TargetError` with its log if not)."""
        wait_for_port("127.0.0.1", self.grpc_ports[switch], timeout=timeout, process=process,
                      what=f"{self.program} {switch}")

    def register_io(self, switch: str, client, netns_pid: int | None):
        """How the session of *switch* (P4Runtime *client*) reads and writes registers
        (None: over P4Runtime)."""
        return None

    def close(self) -> None:
        pass


class ModelSwitches(SwitchProcesses):
    """The embedded model, one ``sfclab model-switch`` process per switch."""

    kind = "model"
    program = "sfclab model-switch"
    device_id = 1

    def __init__(self, workdir: str | os.PathLike, *, python: str = sys.executable,
                 fork: bool = True) -> None:
        super().__init__(workdir)
        self.python = python
        #: Fork each process from a server that imported sfclab once (fast), rather than
        #: run the command line (:mod:`sfclab.targets.model.forked`).
        self.fork = fork

    def launch(self, switch: str, interfaces: dict[int, str]) -> ManagedProcess:
        if not self.fork:
            return super().launch(switch, interfaces)
        from ..model.forked import start_forked

        self.grpc_ports[switch] = port = free_port()
        return start_forked(self.command(switch, interfaces, port)[3:],
                            log_path=self.workdir / f"{switch}.log",
                            name=f"{self.program} {switch}")

    def command(self, switch: str, interfaces: dict[int, str], grpc_port: int) -> list[str]:
        """The process's command line."""
        cmd = [self.python, "-m", "sfclab", "model-switch", "--grpc", f"127.0.0.1:{grpc_port}",
               "--device-id", str(self.device_id), "--cpu-port", str(self.cpu_port)]
        for port, name in sorted(interfaces.items()):
            cmd += ["--iface", f"{port}@{name}"]
        return cmd + ["--trace-log", str(self.trace_log(switch))]

    def trace_log(self, switch: str) -> Path:
        return self.workdir / f"{switch}.trace.jsonl"

    def device_config(self, switch: str) -> Callable[[Generated], object]:
        """What the session pushes as ``p4_device_config``: the program's text."""
        return lambda gen: gen.program.text.encode()

    def records(self, switch: str, interfaces: dict[int, str], *, netns_pid: int | None = None):
        """The source of *switch*'s :class:`SwitchRecord` s (``read()``)."""
        return RecordReader(self.trace_log(switch))


class Bmv2Switches(SwitchProcesses):
    """BMv2, one ``simple_switch_grpc`` per switch (``SFCLAB_BMV2`` or ``PATH``)."""

    kind = "bmv2"
    program = "simple_switch_grpc"
    device_id = 0
    namespace = True

    def __init__(self, workdir: str | os.PathLike) -> None:
        from ..bmv2.target import BMV2_ENV, INSTALL_BMV2, SWITCH
        from ..process.tools import require_executable

        super().__init__(workdir)
        self.exe = require_executable(SWITCH, env=BMV2_ENV, install=INSTALL_BMV2)
        self.names: dict[str, object] = {}
        self._sources: dict[str, object] = {}
        self._register_io: list = []

    def _socket(self, switch: str, what: str) -> str:
        from ..bmv2.target import _ipc_path

        return _ipc_path(self.workdir, f"{switch}.{what}", f"{os.getpid()}-{id(self):x}")

    def nanolog(self, switch: str) -> str:
        """Its event logger: TCP on its namespace's loopback (each switch has a namespace of
        its own), read in bulk by sfclab's own reader (:mod:`~sfclab.targets.bmv2.sp`).  On
        IPC, nanomsg's PUB socket drops a subscriber's messages past some 340 in flight:
        a loaded machine lost a packet's events there; TCP holds about 3,000."""
        from ..bmv2.target import NANOLOG_INSIDE

        return NANOLOG_INSIDE

    def address(self, switch: str) -> str:
        """``unix:PATH``: the switch's P4Runtime socket (it is in a namespace of its own)."""
        return f"unix:{self._socket(switch, 'grpc')}"

    def launch(self, switch: str, interfaces: dict[int, str]) -> ManagedProcess:
        """Start *switch*'s BMv2 (in the caller's network namespace: its node's)."""
        path = self._socket(switch, "grpc")
        if os.path.exists(path):
            os.unlink(path)
        from ..process.keeper import kept_command

        # forked here, so in the node's namespace (whose loopback Mininet leaves down: the
        # Thrift server is reached there); it stops with this Python
        return ManagedProcess.start(kept_command(self.command(switch, interfaces, None),
                                                 loopback=True),
                                    log_path=self.workdir / f"{switch}.log", cwd=self.workdir,
                                    name=f"{self.program} {switch}")

    def wait(self, switch: str, process: ManagedProcess, timeout: float) -> None:
        wait_for_port(self.address(switch), None, timeout=timeout, process=process,
                      what=f"{self.program} {switch}")

    def command(self, switch: str, interfaces: dict[int, str], grpc_port: int | None
                ) -> list[str]:
        """The switch's command line (P4Runtime on its Unix socket; *grpc_port* is
        not used)."""
        from ..bmv2.target import PortMap, switch_command

        return switch_command(self.exe, grpc_addr=self.address(switch),
                              ports=PortMap.veth(interfaces), device_id=self.device_id,
                              cpu_port=self.cpu_port, nanolog=self.nanolog(switch),
                              thrift_port=THRIFT_PORT)

    def register_io(self, switch: str, client, netns_pid: int | None):
        """P4Runtime first, then (BMv2 answers UNIMPLEMENTED) the switch's Thrift runtime
        at 127.0.0.1:9090 of its namespace (process *netns_pid*'s)."""
        from ..bmv2.registers import bmv2_register_io

        io = bmv2_register_io(client, self.thrift(switch, netns_pid))
        self._register_io.append(io)
        return io

    def thrift(self, switch: str, netns_pid: int | None):
        """A client of *switch*'s Thrift runtime, at 127.0.0.1:9090 of its namespace
        (process *netns_pid*'s), connected there on first use."""
        from ..bmv2.thrift import Bmv2Thrift

        def dial():
            from .emulator import netns

            with netns(netns_pid) if netns_pid else contextlib.nullcontext():
                return socket.create_connection(("127.0.0.1", THRIFT_PORT), timeout=5)
        return Bmv2Thrift(dial, where=f"the Thrift runtime of {switch} (127.0.0.1:"
                                      f"{THRIFT_PORT} in its namespace)")

    def device_config(self, switch: str) -> Callable[[Generated], object]:
        """Compile with p4c-bm2-ss: BMv2 JSON and p4c's P4Info (whose ids win)."""
        from ...codegen.p4c import compiler_p4info
        from ..bmv2.target import compile_v1model

        builds = iter(range(1 << 30))

        def config(gen: Generated):
            build = compile_v1model(gen, self.workdir / f"{switch}.build{next(builds)}")
            self.names[switch] = build.names()
            source = self._sources.get(switch)
            if source is not None:
                source.names = self.names[switch]
            return build.device_config(), compiler_p4info(build.p4info_path)
        return config

    def records(self, switch: str, interfaces: dict[int, str], *, netns_pid: int | None = None):
        """Its wires (sniffed in the namespace of process *netns_pid*, the switch's node),
        its event logger, and the entries its tables hit (its Thrift runtime: the
        actions' arguments, the entries described as the model describes them)."""
        from ..bmv2.entries import HeldEntries
        from ..bmv2.events import NameMap
        from .wire import Bmv2Records

        names = self.names.get(switch) or NameMap()
        src = Bmv2Records(interfaces, self.nanolog(switch), names,
                          device_id=self.device_id, netns_pid=netns_pid,
                          held=HeldEntries(self.thrift(switch, netns_pid), names))
        self._sources[switch] = src
        return src

    def close(self) -> None:
        for src in self._sources.values():
            src.close()
        self._sources.clear()
        for io in self._register_io:
            io.close()
        self._register_io.clear()


#: Switch kinds by name.
SWITCH_KINDS = {"model": ModelSwitches, "bmv2": Bmv2Switches}


def switch_kind(name: str, workdir: str | os.PathLike):
    """The switch kind *name* (``model`` or ``bmv2``), working in *workdir*.

    >>> switch_kind("modle", "/tmp")
    Traceback (most recent call last):
    ...
    sfclab.errors.TargetError: unknown switch kind 'modle'
    hint: did you mean 'model'?
    """
    cls = SWITCH_KINDS.get(name)
    if cls is None:
        raise TargetError(f"unknown switch kind {name!r}",
                          hint=did_you_mean(name, SWITCH_KINDS) or
                          f"use one of {', '.join(SWITCH_KINDS)}")
    return cls(workdir)
