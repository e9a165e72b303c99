"""The embedded model as a switch process on network interfaces.

``sfclab model-switch --iface 1@s1-eth1 --iface 2@s1-eth2`` runs one model
switch the way ``simple_switch_grpc -i 1@s1-eth1 …`` runs BMv2: P4Runtime on
``--grpc`` (any client pushes the program and entries), and each port an
interface, read and written with ``AF_PACKET`` sockets
(:class:`~sfclab.targets.ports.packet_io.InterfacePorts`; root or ``CAP_NET_RAW``).
Every frame that arrives on a port runs through the model; its outputs leave
on their ports' interfaces, the ones for the CPU port go to the P4Runtime
client as packet-ins (packet-outs from the client run and leave the same way).

``--trace-log FILE`` is the switch's side channel, like BMv2's event logger:
one JSON line per packet it ran (:class:`SwitchRecord`: the port it came in
on, its bytes, every ``(port, bytes)`` it sent, and the model's
:class:`~sfclab.targets.traces.trace.PacketTrace`), which a network target reads with
:class:`RecordReader` to rebuild network-wide traces.

>>> parse_iface("3@s1-eth3")
(3, 's1-eth3')
>>> r = SwitchRecord(seq=1, port=1, data=b"ab", outputs=[(2, b"ab")])
>>> SwitchRecord.from_json(r.to_json()) == r
True
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ...errors import TargetError
from ..ports.interfaces import InterfacePorts
from ..traces.trace import Event, PacketTrace
from .p4rt import P4RuntimeModelServer

__all__ = ["parse_iface", "SwitchRecord", "trace_from_dict", "InterfaceSwitch", "RecordReader",
           "serve", "add_arguments", "run", "main"]


def parse_iface(text: str) -> tuple[int, str]:
    """``PORT@INTERFACE`` (BMv2's ``-i`` syntax) -> ``(port, interface)``."""
    port, sep, name = text.partition("@")
    if not sep or not port.strip().isdigit() or not name.strip():
        raise TargetError(f"cannot read the port {text!r}",
                          hint="give PORT@INTERFACE, e.g. --iface 1@s1-eth1")
    p = int(port)
    if not 0 < p < 511:
        raise TargetError(f"port {p} in {text!r} is not a v1model front-panel port (1..510)")
    return p, name.strip()


def trace_from_dict(d: Mapping[str, Any]) -> PacketTrace:
    """The :class:`PacketTrace` that :meth:`PacketTrace.to_dict` wrote (the inverse, up
    to tuples read back as lists).

    >>> t = PacketTrace(packet_id=4, ingress_port=1)
    >>> t.add(Event(kind="action", name="a.enter", args=(("path_id", 3),)))
    >>> t.finish(egress_port=2, output=b"x")
    >>> u = trace_from_dict(t.to_dict())
    >>> u.events == t.events, u.egress_port, u.output
    (True, 2, b'x')
    """
    t = PacketTrace(packet_id=d["packet_id"], ingress_port=d["ingress_port"],
                    label=d.get("label", ""))
    for e in d.get("events", ()):
        t.add(Event(kind=e["kind"], name=e.get("name", ""), pass_no=e.get("pass", 0),
                    entry=e.get("entry"), args=tuple((e.get("args") or {}).items()),
                    value=e.get("value")))
    out = d.get("output")
    t.finish(egress_port=None if d.get("dropped") else d.get("egress_port"),
             drop_reason=d.get("drop_reason", ""),
             output=bytes.fromhex(out) if out else None)
    return t


@dataclass(slots=True)
class SwitchRecord:
    """One packet a switch process ran: in on ``port`` with ``data`` (None for a
    packet-out, which enters on the CPU port), out as ``outputs``."""

    seq: int
    port: int
    data: bytes | None
    outputs: list[tuple[int, bytes]] = field(default_factory=list)
    trace: PacketTrace | None = None
    #: Why the switch did not run it (no program pushed yet), if it did not.
    note: str = ""

    def to_json(self) -> str:
        return json.dumps({
            "seq": self.seq, "port": self.port,
            "in": self.data.hex() if self.data is not None else None,
            "out": [[p, b.hex()] for p, b in self.outputs], "note": self.note,
            "trace": self.trace.to_dict() if self.trace is not None else None},
            default=_jsonable)

    @classmethod
    def from_json(cls, line: str) -> SwitchRecord:
        d = json.loads(line)
        return cls(seq=d["seq"], port=d["port"],
                   data=bytes.fromhex(d["in"]) if d["in"] is not None else None,
                   outputs=[(p, bytes.fromhex(b)) for p, b in d["out"]],
                   trace=trace_from_dict(d["trace"]) if d.get("trace") else None,
                   note=d.get("note", ""))


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, Mapping):
        return dict(v)
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    return str(v)


class InterfaceSwitch(P4RuntimeModelServer):
    """A model switch's P4Runtime server whose ports are network interfaces.

    :meth:`open` binds the interfaces, :meth:`run` moves packets until
    :meth:`close`; *trace_log*, if given, gets one :class:`SwitchRecord` line per
    packet."""

    def __init__(self, interfaces: Mapping[int, str], *, device_id: int = 1,
                 cpu_port: int = 255, trace_log: str | os.PathLike | None = None) -> None:
        super().__init__(device_id=device_id, cpu_port=cpu_port)
        if cpu_port in interfaces:
            raise TargetError(f"CPU port {cpu_port} is also a data port ({interfaces[cpu_port]})",
                              hint="give the interfaces other port numbers, or move --cpu-port")
        self.interfaces = dict(interfaces)
        self.ports: InterfacePorts | None = None
        self._log: TextIO | None = None
        self._log_path = Path(trace_log) if trace_log else None
        self._seq = 0
        self._input: tuple[int, bytes | None] | None = None
        self._stopped = threading.Event()

    def open(self) -> None:
        """Bind the interfaces and open the trace log; :class:`TargetError` if an
        interface is missing or the process may not use it."""
        if self._log_path is not None:
            try:
                self._log = open(self._log_path, "a", buffering=1)
            except OSError as e:
                raise TargetError(f"cannot write the trace log {self._log_path}: "
                                  f"{e.strerror}") from None
        missing = [n for n in self.interfaces.values() if not Path("/sys/class/net", n).exists()]
        if missing:
            raise TargetError(f"there is no network interface {missing[0]!r}",
                              hint="create the interfaces first (ip link add … type veth …, "
                                   "or a Mininet topology)")
        self.ports = InterfacePorts(self.interfaces)

    def run(self) -> None:
        """Move packets until :meth:`close` (call :meth:`open` first)."""
        if self.ports is None:
            raise TargetError("the switch's interfaces are not open", hint="call open() first")
        while not self._stopped.is_set():
            try:
                got = self.ports.recv(0.2)
            except OSError as e:            # an interface went away (its link was deleted)
                raise TargetError(f"the switch lost its ports: {e.strerror}",
                                  hint="its interfaces were deleted; start it again on "
                                       "existing ones") from None
            for port, frame in got:
                self.run_packet(port, frame)

    def run_packet(self, port: int, frame: bytes) -> None:
        """Run one frame that arrived on *port*: outputs to their interfaces, packet-ins
        and digests to the controller, a record to the trace log."""
        with self._lock:
            switch = self.switch
            if switch is None:
                self._record(port, frame, [], None, "no program pushed yet: dropped")
                return
            self._input = (port, frame)
            try:
                result = switch.process(port, frame)
                self.deliver(result)
            except Exception as e:              # the model's bug: keep the switch running
                self._record(port, frame, [], None, f"the model failed on this packet: {e!r}")
            finally:
                self._input = None

    def deliver(self, result) -> None:
        """Send a processed packet's packet-ins and digests to the controller and its
        other outputs out of their interfaces (packet-outs come here too)."""
        super().deliver(result)
        sent = []
        for port, data in result.outputs:
            if port != self.cpu_port and self.ports is not None and port in self.interfaces:
                try:
                    self.ports.send(port, data)
                except OSError:
                    continue                    # the interface went away: the frame is lost
            sent.append((port, data))
        port, frame = self._input or (self.cpu_port, None)
        self._record(port, frame, sent, result, "")

    def _record(self, port: int, frame: bytes | None, outputs: list, result, note: str) -> None:
        if self._log is None:
            return
        self._seq += 1
        rec = SwitchRecord(seq=self._seq, port=port, data=frame, outputs=outputs,
                           trace=result.trace if result is not None else None, note=note)
        self._log.write(rec.to_json() + "\n")

    def close(self) -> None:
        self._stopped.set()
        self.stop(grace=0)
        if self.ports is not None:
            self.ports.close()
        if self._log is not None:
            self._log.close()
            self._log = None


class RecordReader:
    """Reads a switch process's trace log as it grows (:class:`SwitchRecord` lines).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "s1.jsonl"
    ...     reader = RecordReader(path)
    ...     before = reader.read()
    ...     _ = path.write_text(SwitchRecord(seq=1, port=2, data=b"x").to_json() + "\\n")
    ...     [(r.seq, r.port) for r in reader.read()], before
    ([(1, 2)], [])
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._offset = 0
        self._partial = b""

    def read(self) -> list[SwitchRecord]:
        """The records written since the last call (a line still being written waits)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except FileNotFoundError:
            return []
        self._offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        return [SwitchRecord.from_json(line.decode()) for line in lines if line.strip()]


def serve(grpc: str, *, interfaces: Mapping[int, str], device_id: int = 1, cpu_port: int = 255,
          trace_log: str | os.PathLike | None = None, ready=print) -> None:
    """Run a model switch on *interfaces* with P4Runtime on *grpc* until SIGTERM or
    Ctrl-C (what ``sfclab model-switch --iface …`` does); *ready* gets one line once
    it serves."""
    sw = InterfaceSwitch(interfaces, device_id=device_id, cpu_port=cpu_port,
                         trace_log=trace_log)
    try:
        sw.open()
        sw.start(grpc)
        ports = ", ".join(f"{p}@{n}" for p, n in sorted(interfaces.items()))
        ready(f"sfclab model switch: P4Runtime on {sw.address}, device id {device_id}, "
              f"CPU port {cpu_port}, ports {ports}"
              + (f", trace log {trace_log}" if trace_log else "") + " (Ctrl-C stops it)")
        previous = signal.signal(signal.SIGTERM, lambda *_: sw._stopped.set())
        try:
            sw.run()
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
    finally:
        sw.close()


# -- the `sfclab model-switch` command ---------------------------------------------------------
def add_arguments(m: argparse.ArgumentParser) -> None:
    """The options of ``sfclab model-switch`` (the CLI and forked switches share them)."""
    m.add_argument("--grpc", default="127.0.0.1:9559", metavar="HOST:PORT",
                   help="where to listen (default 127.0.0.1:9559; port 0 picks a free one)")
    m.add_argument("--device-id", type=int, default=1)
    m.add_argument("--cpu-port", type=int, default=255)
    m.add_argument("--iface", action="append", metavar="PORT@INTERFACE",
                   help="a port on a network interface, as simple_switch_grpc's -i (repeat it; "
                        "needs root): frames that arrive run through the model and its outputs "
                        "leave on their ports' interfaces")
    m.add_argument("--trace-log", metavar="FILE",
                   help="with --iface: append one JSON line per packet (in port and bytes, "
                        "outputs, the model's trace), as BMv2's event logger")


def run(args: argparse.Namespace) -> int:
    """Serve a model switch as *args* say, until SIGTERM or Ctrl-C; the exit status."""
    import sys
    import time

    from ...errors import SfclabError

    def interrupt(*_) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)           # SIGTERM stops it as Ctrl-C does
    try:
        if args.iface:
            ports = dict(parse_iface(i) for i in args.iface)
            if len(ports) != len(args.iface):
                raise SfclabError("--iface: a port is given twice",
                                  hint="one --iface PORT@INTERFACE per port")
            serve(args.grpc, interfaces=ports, device_id=args.device_id,
                  cpu_port=args.cpu_port, trace_log=args.trace_log,
                  ready=lambda line: print(line, flush=True))
            return 0
        if args.trace_log:
            raise SfclabError("--trace-log records the packets of a switch on interfaces",
                              hint="add its ports: --iface 1@IFACE …")
        from . import start

        server = start(args.grpc, device_id=args.device_id, cpu_port=args.cpu_port)
    except SfclabError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"sfclab model switch: P4Runtime on {server.address}, device id {args.device_id}, "
          f"CPU port {args.cpu_port} (Ctrl-C stops it)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


def main(argv: list[str]) -> int:
    """``sfclab model-switch ARGV…`` (argv without the command's name)."""
    parser = argparse.ArgumentParser(prog="sfclab model-switch")
    add_arguments(parser)
    return run(parser.parse_args(argv))
