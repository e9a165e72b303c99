"""A network of real switch processes in Mininet, run like the embedded network.

:class:`MininetNetwork` builds the topology in Mininet (:mod:`.emulator`),
starts one switch process per switch (:mod:`.switches`: the embedded model or
BMv2), pushes every switch's program and entries over P4Runtime, and sends
packets from hosts.  A packet sent with :meth:`MininetNetwork.send` leaves the
host's interface as a real frame and crosses real veth links and switch
processes; the network-wide trace
(:class:`~sfclab.targets.network.NetworkTrace`) is rebuilt from what each
switch process reported about it (its record: the port and bytes it came in
with, what it sent where, its own trace) and from what reached the hosts'
interfaces.  The walk over those reports is the embedded network's own
(:class:`~sfclab.targets.network.EmbeddedNetwork`, with each switch's result
read from its process instead of computed in this one), so both networks give
the same kind of trace, hop by hop, and share the consistent update.

Servers (NFs a switch cannot run) are Mininet hosts whose interfaces a stand-in
in this process serves (:class:`~sfclab.targets.network.ServerStandIn`, as in
the embedded network).  Traffic the hosts make themselves (``ping`` with
:meth:`MininetNetwork.host`'s ``cmd``) crosses the same switches.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from typing import Any

from ...errors import SfclabError, TargetError, did_you_mean
from ...ir.topology import Topology
from ...runtime.client import Client
from ...runtime.session import Session
from ..model.result import ProcessResult
from ..traces.trace import PacketTrace
from .emulator import MininetEmulation
from .switches import switch_kind

__all__ = ["MininetNetwork", "port_ends"]


def port_ends(program) -> list[tuple[str, int]]:
    """The free switch ports (``(switch, port)``) the chains of *program* enter or
    leave by (``from s1:7``, ``to s3:7``)."""
    out = []
    for c in program.placement.problem.chains:
        for spec in (c.ingress, c.egress):
            if ":" in spec:
                sw, _, p = spec.partition(":")
                out.append((sw, int(p)))
    return sorted(set(out))


class _SwitchView:
    """One switch process as the embedded network's walk sees a switch: ``push`` /
    ``update`` / ``occupancy`` over its P4Runtime session, and ``send(port, data)``
    which returns what the process reported doing with that frame."""

    def __init__(self, name: str, session: Session, client: Client, source,
                 timeout: float) -> None:
        self.name = name
        self.session = session
        self.client = client
        self.source = source
        self.timeout = timeout
        self.pending: list = []
        #: What the switch reported lately, every packet (ours or the hosts' own traffic).
        self.history: deque = deque(maxlen=10_000)

    def push(self, gen) -> int:
        return self.session.push(gen)

    def update(self, gen, *, allow_reload: bool = False):
        return self.session.update(gen, allow_reload=allow_reload)

    def occupancy(self):
        return self.session.occupancy()

    def read(self) -> list:
        new = self.source.read()
        self.history.extend(new)
        return new

    def discard(self) -> None:
        """Forget what the switch reported so far (earlier packets, stray frames)."""
        self.read()
        self.pending.clear()

    def send(self, port: int, data: bytes) -> ProcessResult:
        """What the process did with *data*, which arrived on *port*: a result like the
        embedded model's (outputs, trace, why it dropped the packet)."""
        rec = self._record(port, data)
        if rec is None:
            trace = PacketTrace(packet_id=0, ingress_port=port)
            trace.finish(drop_reason=f"the switch process reported no such packet on port "
                                     f"{port} within {self.timeout:g} s")
            outputs = []
        else:
            outputs, trace = list(rec.outputs), rec.trace
            if trace is None:
                trace = PacketTrace(packet_id=rec.seq, ingress_port=port)
                trace.finish(drop_reason=rec.note or "the switch gave no trace")
        return ProcessResult(outputs, passes=trace.passes, drop_reason=trace.drop_reason,
                             packet_id=trace.packet_id, ingress_port=port, _trace=trace)

    def _record(self, port: int, data: bytes):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, rec in enumerate(self.pending):
                if rec.port == port and rec.data == data:
                    return self.pending.pop(i)
            new = self.read()
            if new:
                self.pending += new
                continue
            if time.monotonic() > deadline:
                return None
            time.sleep(0.001)

    def close(self) -> None:
        self.client.close()


class _ServerLoop(threading.Thread):
    """A server's NFs on its Mininet host's interfaces: each frame runs through the
    stand-in (:class:`~sfclab.targets.network.ServerStandIn`) and goes back out."""

    def __init__(self, ports, standin) -> None:
        super().__init__(daemon=True, name=f"sfclab-server-{standin.name}")
        self.ports = ports
        self.standin = standin
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                got = self.ports.recv(0.1)
            except OSError:
                return
            for port, data in got:
                _, out = self.standin.process(port, data)
                if out is not None:
                    with contextlib.suppress(OSError):
                        self.ports.send(*out)

    def stop(self) -> None:
        self.stopped.set()
        self.join(2)
        self.ports.close()


class MininetNetwork:
    """A :class:`Topology` in Mininet whose switches are processes (``switch``:
    ``"model"`` or ``"bmv2"``).  Needs root and Mininet; see the module docstring.

    *prefix* starts the names of the switches' interfaces (they live in the root
    namespace: give concurrent networks different prefixes); *timeout* is how long
    a switch's report of a packet is waited for; *start_timeout* how long its
    process may take to serve P4Runtime."""

    kind = "mininet"

    def __init__(self, topology: Topology, *, switch: str = "model", prefix: str = "",
                 workdir: str | os.PathLike | None = None, timeout: float = 5.0,
                 start_timeout: float = 60.0) -> None:
        self.topology = topology
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.emulation = MininetEmulation(topology, self._launch, prefix=prefix,
                                          workdir=workdir)
        try:
            self.switch_kind = switch_kind(switch, self.emulation.workdir)
        except SfclabError:
            self.emulation.stop()                   # its working directory
            raise
        self.emulation.switch_namespaces = self.switch_kind.namespace
        self._walker = None
        self.views: dict[str, _SwitchView] = {}
        self._hosts: dict[str, Any] = {}
        self._servers: dict[str, _ServerLoop] = {}
        self._lock = threading.RLock()
        self._started = False

    def __repr__(self) -> str:
        return (f"<MininetNetwork {self.switch_kind.kind} switches, "
                f"{self.topology.summary().removeprefix('topology ')}>")

    @property
    def notes(self) -> list[str]:
        """What the emulation could not do as the topology says (link shaping …)."""
        return self.emulation.notes

    # -- life cycle ----------------------------------------------------------------------------
    def _launch(self, switch: str, interfaces: dict[int, str]):
        return self.switch_kind.launch(switch, interfaces)

    def start(self) -> MininetNetwork:
        """Build the network, start every switch process and connect to each."""
        if self._started:
            return self
        try:
            self.emulation.start()
            kind = self.switch_kind
            for sw, proc in self.emulation.processes.items():
                kind.wait(sw, proc, self.start_timeout)
            for sw in self.topology.switches:
                ifaces = self.emulation.interfaces(sw)
                client = Client(kind.address(sw), device_id=kind.device_id).connect()
                ports = tuple(sorted(ifaces))
                pid = self.emulation.netns_pid(sw)
                session = Session(client, kind.device_config(sw), grace=0.05,
                                  ports=lambda ports=ports: ports,
                                  registers=kind.register_io(sw, client, pid))
                records = kind.records(sw, ifaces, netns_pid=pid)
                view = _SwitchView(sw, session, client, records, self.timeout)
                self.views[sw] = view
            for name in [*self.topology.hosts, *self.topology.servers,
                         *self.emulation.port_names()]:
                self._hosts[name] = self.emulation.host_ports(name)
        except BaseException:
            self.close()
            raise
        self._started = True
        return self

    def close(self) -> None:
        """Stop everything this network started and remove what it made."""
        for loop in self._servers.values():
            loop.stop()
        self._servers.clear()
        for ports in self._hosts.values():
            ports.close()
        self._hosts.clear()
        for view in self.views.values():
            with contextlib.suppress(Exception):
                view.close()
        self.views.clear()
        self._walker = None
        self.switch_kind.close()
        self.emulation.stop()
        self._started = False

    def __enter__(self) -> MininetNetwork:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- programs ------------------------------------------------------------------------------
    @property
    def walker(self):
        """The embedded network's walk over this network's switch processes (it pushes,
        updates and rebuilds traces through :class:`_SwitchView` s)."""
        if self._walker is None:
            from ..network import EmbeddedNetwork

            self.start()
            self._walker = EmbeddedNetwork(self.topology)
            self._walker.switches.update(self.views)
        return self._walker

    def push_switch(self, switch: str, gen) -> int:
        """Push one switch's program and entries (a one-switch
        :class:`~sfclab.codegen.Generated`, for a topology of a single switch, say);
        returns the number of entries.  Starts the network first if needed."""
        if switch not in self.topology.switches:
            raise TargetError(f"no switch {switch!r} in topology {self.topology.name!r}",
                              hint=did_you_mean(switch, self.topology.switches)
                              or f"switches: {', '.join(list(self.topology.switches)[:12])}")
        self.start()
        return self.views[switch].push(gen)

    def push(self, program) -> dict[str, int]:
        """Push every switch's program and entries over P4Runtime (a
        :class:`~sfclab.codegen.network.NetworkProgram`); returns the entry count per
        switch.  Starts the network first if needed."""
        from ..network.push import push_network

        ends = port_ends(program)
        if not set(ends) <= set(self.emulation.port_ends):
            if self._started:          # a push replaces every program: start again, with them
                self.close()
            self.emulation.set_port_ends({*ends, *self.emulation.port_ends})
        self.start()
        self.walker._check_archs(program)
        # every switch compiles its program at once; one that fails has the others taken back
        counts = push_network(self.views, {s: sp.generated for s, sp in program.switches.items()},
                              parallel=True)
        self.walker.adopt(program)
        self._serve(program)
        return counts

    def update(self, program, *, allow_reload: bool = False, moves: list | None = None):
        """Move the network to *program* consistently (as the embedded network does)."""
        missing = sorted(set(port_ends(program)) - set(self.emulation.port_ends))
        if missing:
            shown = ", ".join(f"{sw}:{p}" for sw, p in missing)
            raise TargetError(f"{shown}: a chain enters or leaves there, but the running Mininet "
                              f"network has no interface on that port (its switches were "
                              f"started without it)", hint="push the network again (a push "
                                                           "starts it with every such port)")
        plan = self.walker.update(program, allow_reload=allow_reload, moves=moves)
        self._serve(program)
        return plan

    def plan(self, program):
        return self.walker.plan(program)

    def sessions(self) -> dict:
        """Each switch's P4Runtime session."""
        return {s: v.session for s, v in self.views.items()}

    @property
    def program(self):
        """The network program pushed (None before :meth:`push`)."""
        return self._walker.program if self._walker is not None else None

    def _serve(self, program) -> None:
        for name, standin in self.walker.servers.items():
            loop = self._servers.get(name)
            if loop is None:
                loop = self._servers[name] = _ServerLoop(self._hosts[name], standin)
                loop.start()
            else:
                loop.standin = standin

    # -- packets -------------------------------------------------------------------------------
    def host(self, name: str):
        """The Mininet host of *name* (``.cmd("ping -c1 10.0.0.2")`` …)."""
        if name not in self.topology.hosts and name not in self.topology.servers:
            raise TargetError(f"no host {name!r} in topology {self.topology.name!r}",
                              hint=did_you_mean(name, self.topology.hosts)
                              or f"hosts: {', '.join(list(self.topology.hosts)[:12])}")
        if not self._started:
            raise TargetError("the network is not started", hint="push a program first")
        return self.emulation.node(name)

    def send(self, host: str, packet, *, label: str = ""):
        """Send *packet* (bytes or scapy) out of *host*'s interface; returns the
        network-wide trace, rebuilt from the switches' reports and checked against
        what reached the hosts."""
        if self._walker is None or self._walker.program is None:
            raise TargetError("no network program is pushed yet",
                              hint="push a network program (Network(...).program) first")
        if ":" in host:
            self._walker.entry(host)               # a free switch port, or why not
            if host not in self._hosts:
                raise TargetError(f"cannot send from {host} in Mininet: no chain enters or "
                                  f"leaves there, so the port has no interface",
                                  hint="send from a host, or from a port a chain names "
                                       "(`from s1:7`)")
        else:
            self.host(host)
        data = bytes(packet)
        with self._lock:
            for view in self.views.values():
                view.discard()
            for ports in self._hosts.values():
                ports.collect(quiet=0.0, timeout=0.0)
            if ":" in host:                         # a port end: its one interface
                self._hosts[host].send(0, data)
            else:
                sw, _ = self.topology.attachment(host)
                self._hosts[host].send(self.topology.port(host, sw), data)
            nt = self.walker.send(host, data, label=label)
            self._confirm(nt)
        return nt

    def _confirm(self, nt) -> None:
        """Keep only the deliveries that really reached the host's interface (or, for a
        copy that left by a free switch port a chain names, ``s3:7``, the interface
        there; by another free port, the switch's report is kept)."""
        arrivals = [h for h in nt.hops if h.kind in ("host", "port")]
        delivered = []
        for hop, (host, data) in zip(arrivals, nt.delivered):
            there = host in self._hosts
            if (hop.kind == "port" and not there) or self._arrived(
                    host, 0 if hop.kind == "port" else hop.in_port, data):
                delivered.append((host, data))
            else:
                where = f"the interface at {host}" if hop.kind == "port" else \
                    f"{host}'s interface"
                hop.dropped = (f"its switch sent it, but it did not reach {where} "
                               f"within {self.timeout:g} s")
        nt.delivered = delivered

    def _arrived(self, host: str, port: int, data: bytes) -> bool:
        ports = self._hosts[host]
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for p, frame in ports.recv(0.05):
                if frame == data and p == port:
                    return True
        return False

    def reports(self, switch: str) -> list:
        """What *switch*'s process reported lately, oldest first: a
        :class:`~sfclab.targets.model.process.SwitchRecord` per packet it ran (the
        hosts' own traffic too, such as a ``ping``)."""
        view = self.views.get(switch)
        if view is None:
            raise TargetError(f"no switch {switch!r} in the running network",
                              hint=did_you_mean(switch, self.views)
                              or "start the network (push) first")
        view.read()
        return list(view.history)

    def drain(self, timeout: float = 10.0) -> None:
        self.walker.drain(timeout)

    def occupancy(self, switch: str):
        return self.views[switch].occupancy()
