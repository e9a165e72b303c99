"""The embedded model as a target: a P4Runtime server, a session on it, packets in-process.

:class:`ModelTarget` is sfclab's default target.  The program and its entries
go over P4Runtime exactly as they would to BMv2 (so the same client code is
tested), while packets are handed to the model in-process and come back with
their traces.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> t = ModelTarget()
>>> n = t.push(generate(sfclab.compile("chain a: l2fwd")))
>>> from scapy.all import Ether
>>> r = t.send(1, Ether(dst="00:00:00:00:00:02", type=0x9000) / b"hello")
>>> r.ports
[2]
>>> t.close()

Where grpcio is missing (Pyodide: JupyterLite's kernel) the client talks to the
server in-process (:class:`~sfclab.runtime.inprocess.InProcessClient`): the same
P4Runtime messages, no socket (``transport="inprocess"`` asks for it anywhere).

A program whose paths detour through a server (:mod:`sfclab.codegen.detour`)
gets its server played by the target: what the switch sends out of the server
port runs the server's NFs and comes back in on it, and :meth:`ModelTarget.send`
returns one result for the whole packet (:mod:`sfclab.targets.network.detour`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from ...codegen import Generated
from ...errors import TargetError
from ...runtime.client import Client
from ...runtime.inprocess import InProcessClient
from ...runtime.replication import DEFAULT_PORTS, port_set
from ...runtime.session import Session
from ...runtime.status import grpc_available
from .p4rt import P4RuntimeModelServer

__all__ = ["ModelTarget", "RESULTS_KEPT", "TRANSPORTS"]

#: How many results a target keeps (a Lab keeps its own: :mod:`sfclab.targets.traces.store`).
RESULTS_KEPT = 1000
#: How a ModelTarget's client reaches its server: over gRPC on 127.0.0.1, or in-process.
TRANSPORTS = ("grpc", "inprocess")


class ModelTarget:
    """An embedded model switch with its P4Runtime server on 127.0.0.1 (or in-process)."""

    kind = "model"

    def __init__(self, *, address: str = "127.0.0.1:0", device_id: int = 1,
                 cpu_port: int | None = None, ports: Iterable[int] = DEFAULT_PORTS,
                 server_port: int | None = None, arch: str = "v1model",
                 pipes: int | None = None, loopback: Iterable[int] = (),
                 transport: str | None = None) -> None:
        """*ports*: the data-plane ports a ``flood`` floods out of (1..8 by default; the
        model takes packets on any port); *server_port*: the port the target plays a
        program's server behind (None: the program's, whichever it is); *arch*: the
        programs it runs, ``v1model`` or ``tna`` (a Tofino 1 of *pipes* pipes, 2 by
        default, whose *loopback* ports turn packets round: :mod:`.tna`).  *cpu_port*
        defaults to the architecture's (255 for v1model, 192 for TNA).  *transport*:
        ``"grpc"`` or ``"inprocess"`` (None: gRPC where grpcio is installed)."""
        from .tna.target_options import tna_options

        transport = transport or ("grpc" if grpc_available() else "inprocess")
        if transport not in TRANSPORTS:
            raise TargetError(f"unknown transport {transport!r}",
                              hint=f"one of {', '.join(TRANSPORTS)}")
        self.arch = arch
        tna = tna_options(arch, pipes, loopback, cpu_port)
        cpu_port = tna["cpu_port"] if tna else (255 if cpu_port is None else cpu_port)
        self.pipes = tna["pipes"] if tna else None
        #: Where packet-ins leave and packet-outs enter.
        self.cpu_port = cpu_port
        self._ports = port_set(ports, cpu_port)
        self.server_port = server_port
        self._loop = None
        self.transport = transport
        self.server = P4RuntimeModelServer(device_id=device_id, cpu_port=cpu_port, tna=tna)
        if transport == "grpc":
            self.server.start(address)
            self.client: Client = Client(self.server.address, device_id=device_id).connect()
        else:
            self.client = InProcessClient(self.server, device_id=device_id).connect()
        self.session = Session(self.client, lambda g: g.program.text.encode(),
                               ports=self.switch_ports)
        #: The results of the last packets sent (at most :data:`RESULTS_KEPT`).
        self.results: deque = deque(maxlen=RESULTS_KEPT)

    def switch_ports(self) -> tuple[int, ...]:
        """The switch's data-plane ports (what a flood floods out of)."""
        return self._ports

    @property
    def address(self) -> str:
        """``host:port`` of the P4Runtime server (``in-process``: it has none)."""
        return self.server.address or self.client.address

    def __repr__(self) -> str:
        if self.arch == "tna":
            pipes = f"{self.pipes} pipe" + ("s" if self.pipes != 1 else "")
            return f"<ModelTarget model://{self.address} tna, {pipes}>"
        return f"<ModelTarget model://{self.address}>"

    def push(self, gen: Generated) -> int:
        """Push the program and its entries; returns the number of entries."""
        if gen.arch != self.arch:
            url = "model?arch=tna" if gen.arch == "tna" else "model"
            raise TargetError(f"this embedded model runs {self.arch} programs, not {gen.arch}",
                              hint=f"compile with arch={self.arch!r}, or use the target "
                                   f"{url!r}")
        self._check_server(gen)
        self._hand_over(gen)
        return self.session.push(gen)

    def _hand_over(self, gen: Generated) -> None:
        """Give the in-process server *gen*'s parsed program (it gets the text over
        P4Runtime, and need not parse it again)."""
        if gen.program.program is not None:
            self.server.know(gen.program.text, gen.program.program)

    def update(self, gen: Generated, *, allow_reload: bool = False):
        self._check_server(gen)
        self._hand_over(gen)
        return self.session.update(gen, allow_reload=allow_reload)

    def _check_server(self, gen: Generated) -> None:
        if gen.detour is not None:
            from ..network.detour import check_server_port

            check_server_port(gen, declared=self.server_port)

    def _server_loop(self):
        """The server the pushed program's detours need (None: it has none)."""
        from ..network.detour import server_loop

        self._loop = server_loop(self.session.generated, self._loop)
        return self._loop

    @property
    def switch(self):
        if self.server.switch is None:
            raise TargetError("nothing is pushed yet", hint="push a compiled chain set first")
        return self.server.switch

    def send(self, port: int, packet, *, now_us: int | None = None):
        """Run one packet (bytes or scapy) arriving on *port*; returns the model's result
        (outputs, passes, trace); packet-ins and digests also reach P4Runtime clients.
        *now_us*: the packet's arrival time in µs since the switch started (default: the
        clock), for timestamps and meters.  A packet that goes to the program's server
        comes back in after it; the result is the whole packet's."""
        loop = self._server_loop()
        if loop is None:
            result = self._process(port, packet, now_us)
        else:
            [result] = loop.run(lambda items: [self._process(p, d, now_us) for p, d in items],
                                [(port, bytes(packet))])
        self.results.append(result)
        return result

    def run(self, items: Iterable[tuple[int, bytes]]) -> Iterator:
        """Run ``(port, bytes)`` packets one after the other; yields each result as it
        is made (what :func:`~sfclab.targets.traffic.sending.stream` sends through): the
        same as :meth:`send` per packet, without its per-call work."""
        if self._server_loop() is not None:      # a detour through the server: per packet
            for port, data in items:
                yield self.send(port, data)
            return
        switch, server, keep = self.switch, self.server, self.results.append
        process, deliver, lock = switch.process, server.deliver, server._lock
        for port, data in items:
            with lock:
                result = process(port, data)
                deliver(result)
            keep(result)
            yield result

    def _process(self, port: int, packet, now_us: int | None):
        with self.server._lock:
            result = self.switch.process(port, packet, now_us=now_us)
            self.server.deliver(result)
        return result

    def occupancy(self):
        return self.session.occupancy()

    def close(self) -> None:
        self.client.close()
        self.server.stop()

    def __enter__(self) -> ModelTarget:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
