"""BMv2 as a target like the embedded model: push, update, send packets, read traces.

:class:`Bmv2Switch` joins the pieces of :mod:`sfclab.targets.bmv2.target`: a ``simple_switch_grpc``
(started by sfclab, or attached to), sfclab's P4Runtime session on it (the
program is compiled with ``p4c-bm2-ss`` when pushed, and p4c's P4Info is the
one pushed), the switch's ports (:mod:`sfclab.targets.ports.packet_io`: BMv2's packet-in socket, or
veth pairs) and its event logger (:mod:`sfclab.targets.bmv2.events`).  ``send`` returns a
:class:`~sfclab.targets.ports.packet_io.PacketResult` whose ``trace`` is the same kind of object the model
returns, so ``%sfc trace``, the live views and ``sfclab diff-targets`` work on
it unchanged.

>>> Bmv2Switch.open("bmv2?vet=1@veth0")
Traceback (most recent call last):
...
sfclab.errors.TargetError: unknown parameter 'vet' in 'bmv2?vet=1@veth0'
hint: did you mean 'veth'?
"""

from __future__ import annotations

import itertools
import queue
import select
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...codegen import Generated
from ...errors import TargetError
from ...runtime.client import Client
from ...runtime.replication import DEFAULT_PORTS, flood_group
from ...runtime.session import Session
from .target import Bmv2Build, Bmv2Target, PortMap, compile_v1model, parse_bmv2_url
from .batch import BatchTracker, Window
from .registers import bmv2_register_io
from .entries import HeldEntries
from .events import EventSubscriber, NameMap
from ..process.workdirs import remove_at_exit
from ..ports.packet_io import PacketResult, open_ports, outputs_trace, with_output

__all__ = ["Bmv2Switch"]


class Bmv2Switch:
    """A BMv2 switch sfclab drives: :meth:`open` it from a URL (see
    :func:`~sfclab.targets.connect.open_target`), :meth:`push` a generated v1model program,
    :meth:`send` packets, :meth:`close` it (an owned switch is stopped)."""

    kind = "bmv2"
    arch = "v1model"

    #: Without an event logger, ``send`` waits for a packet's outputs until none came for
    #: ``quiet`` seconds; a packet with no news for ``timeout`` seconds is given up.
    quiet = 0.15
    timeout = 3.0
    #: A packet whose last event ends a pipeline is taken as dropped after ``settle``
    #: seconds without news (BMv2 logs no drop).
    settle = 0.005
    #: The entries BMv2 holds, for the traces (None: its Thrift runtime is unknown).
    _held: HeldEntries | None = None

    def __init__(self, bmv2: Bmv2Target, *, workdir: str | Path | None = None) -> None:
        self.bmv2 = bmv2
        #: the programs p4c builds go here; one sfclab makes (an attached switch's) is
        #: removed when Python exits, after close()
        self._made_workdir = not (workdir or bmv2.workdir)
        self.workdir = Path(workdir or bmv2.workdir or tempfile.mkdtemp(prefix="sfclab-bmv2-"))
        self.notes: list[str] = list(bmv2.notes)
        self.results: list[PacketResult] = []
        #: How many packets may be inside the switch (see :mod:`sfclab.targets.bmv2.batch`).
        self.window = Window()
        self._first_pid = 0
        self.build: Bmv2Build | None = None
        self._pending: Bmv2Build | None = None
        self._builds = itertools.count()
        self._names = NameMap()
        self._events: EventSubscriber | None = None
        self._ports = None
        self.client = Client(bmv2.grpc_address, device_id=bmv2.device_id).connect()
        # registers: P4Runtime, else (BMv2 1.15.5 answers UNIMPLEMENTED) its Thrift runtime
        self.session = Session(self.client, self._device_config, grace=0.1,
                               ports=self.switch_ports,
                               registers=bmv2_register_io(self.client, bmv2.thrift()))
        # the traces' entries and action arguments: as BMv2 holds them (Thrift)
        thrift = bmv2.thrift()
        self._held = HeldEntries(thrift) if thrift is not None else None
        if bmv2.nanolog:
            # Subscribe now: PUB/SUB drops what is published before the connection is
            # up, and compiling the first program gives it time to come up.
            try:
                self._events = EventSubscriber(bmv2.nanolog, self._names,
                                               device_id=bmv2.device_id,
                                               connect=bmv2.event_connect())
            except TargetError as e:
                self.notes.append(f"no traces from the switch: {e.message}"
                                  + (f" ({e.hint})" if e.hint else ""))
        #: The port this switch's server is behind (``server_port=`` in its URL), if said.
        self.server_port: int | None = None
        self._loop = None
        self._ports_error: str | None = None
        try:
            self._ports = open_ports(bmv2.ports)
        except TargetError as e:
            self._ports_error = (f"packets cannot be sent: {e.message}"
                                 + (f" ({e.hint})" if e.hint else ""))
            self.notes.append(self._ports_error)

    @classmethod
    def open(cls, url: str = "bmv2", *, timeout: float = 15.0) -> Bmv2Switch:
        """``bmv2[?…]``: start a switch sfclab owns (ports on its packet-in socket, or
        on the veth pairs ``veth=`` names); ``bmv2://HOST:PORT?…``: attach to one."""
        u = parse_bmv2_url(url)
        if u["host"] is None:
            for key in ("nanolog", "packet_in", "json", "p4info"):
                if u[key]:
                    raise TargetError(f"{key}= is for a switch sfclab attaches to, not one it "
                                      "starts", hint=f"bmv2://HOST:PORT?{key}=…")
            bmv2 = Bmv2Target.start(ports=PortMap.veth(u["veth"]) if u["veth"] else "packet-in",
                                    device_id=u["device_id"], cpu_port=u["cpu_port"],
                                    # BMv2 logs every step at its default level,
                                    # trace: a quarter of its rate (bench_bmv2)
                                    log_level=u["log_level"] or "info", timeout=timeout)
        else:
            bmv2 = Bmv2Target.attach(url)
        try:
            switch = cls(bmv2)
        except BaseException:
            bmv2.stop()
            raise
        switch.server_port = u["server_port"]
        return switch

    @property
    def address(self) -> str:
        return self.bmv2.grpc_address

    def switch_ports(self) -> tuple[int, ...] | None:
        """The switch's data-plane ports, which a flood floods out of: its interfaces (veth,
        pcap); on its packet-in socket, which takes any port, 1..8; None: unknown."""
        if self.bmv2.ports.mode == "packet-in":
            return DEFAULT_PORTS
        return tuple(self.bmv2.ports.ports) or None

    def __repr__(self) -> str:
        how = "owned" if self.bmv2.owned else "attached"
        return f"<Bmv2Switch {self.bmv2.url} {how}>"

    def describe(self) -> str:
        """The switch, its ports and its event logger, in words."""
        ports = self._ports.describe() if self._ports is not None else (
            self._ports_error or "no data-plane ports sfclab can reach")
        events = (f"event logger {self.bmv2.nanolog}" if self.bmv2.nanolog
                  else "no event logger (no per-packet traces)")
        return f"{self!r}: {ports}; {events}"

    # -- program and entries -------------------------------------------------------------------
    def _device_config(self, gen: Generated):
        """Compile *gen* with p4c-bm2-ss: BMv2 JSON and p4c's P4Info (for the session)."""
        from ...codegen.p4c import compiler_p4info

        build = compile_v1model(gen, self.workdir / f"build{next(self._builds)}")
        self._pending = build
        return build.device_config(), compiler_p4info(build.p4info_path)

    def _adopt(self, gen: Generated) -> None:
        """After a push or update: if *gen*'s program was compiled and now runs, its
        names read the event logger."""
        build, self._pending = self._pending, None
        if build is None or self.session.generated is not gen:
            return
        self.build = build
        self.bmv2.config = build.device_config()
        self.bmv2.json_path, self.bmv2.p4info_path = build.json_path, build.p4info_path
        self._names = build.names()
        if self._events is not None:
            self._events.names = self._names

    def push(self, gen: Generated) -> int:
        """Compile and push the program and its entries; returns the number of entries."""
        if gen.arch != "v1model":
            raise TargetError(f"BMv2 runs v1model programs, not {gen.arch}",
                              hint="compile with arch='v1model'")
        self._check_server(gen)
        try:
            return self.session.push(gen)
        finally:
            self._adopt(gen)

    def _check_server(self, gen: Generated) -> None:
        """Refuse a program whose server port this switch does not have (on its packet
        socket every port is reachable)."""
        from ..network.detour import check_server_port

        check_server_port(gen, declared=self.server_port, ports=self.bmv2.ports.ports)

    def update(self, gen: Generated, *, allow_reload: bool = False):
        self._check_server(gen)
        try:
            return self.session.update(gen, allow_reload=allow_reload)
        finally:
            self._adopt(gen)

    def occupancy(self):
        return self.session.occupancy()

    # -- packets -------------------------------------------------------------------------------
    def _check_ready(self) -> None:
        if self._ports is None:
            raise TargetError(f"sfclab cannot put packets on the ports of {self.bmv2.url}",
                              hint=self._ports_error or (
                                  "start it with --packet-in ADDR and add packet_in=ADDR to "
                                  "the URL, or give its veth ports: veth=1@veth0,…"))
        if self.session.generated is None:
            raise TargetError("nothing is pushed yet", hint="push a compiled chain set first")

    def send(self, port: int, packet) -> PacketResult:
        """Send one packet (bytes or scapy) into *port*; wait for what comes out and
        for its events; return its outputs and trace."""
        return self.send_many([(port, packet)])[0]

    def send_many(self, packets: Iterable[tuple[int, Any]]) -> list[PacketResult]:
        """Send ``(port, packet)`` pairs; one result each, in order.

        With the event logger, at most :attr:`window` packets are inside the switch at a
        time (:mod:`sfclab.targets.bmv2.batch`: the next goes when one is complete), so no queue of
        BMv2's overflows; each packet's trace comes from its own events.  Without it,
        packets go one at a time, each followed by :attr:`quiet` seconds of silence.

        A packet that goes out of the program's server port is sfclab's to serve
        (:mod:`sfclab.targets.network.detour`): the server's NFs run and it goes back in on that port
        (in the next batch); its result is the whole packet's."""
        self._check_ready()
        items = [(int(port), bytes(pkt)) for port, pkt in packets]
        loop = self._server_loop()
        out = self._send_raw(items) if loop is None else loop.run(self._send_raw, items)
        self.results += out
        return out

    def _send_raw(self, items: list[tuple[int, bytes]]) -> list[PacketResult]:
        if self._events is None:
            return [self._send_quiet(port, frame) for port, frame in items]
        return self._send_batch(items)

    def _server_loop(self):
        """The server the pushed program's detours need (None: it has none)."""
        from ..network.detour import server_loop

        self._loop = server_loop(self.session.generated, self._loop)
        return self._loop

    def _leftovers(self) -> None:
        """Drop what earlier packets left on the sockets."""
        self._ports.poll()
        if self._events is not None:
            self._events.poll()
        self._drain_packet_ins()

    def _send_batch(self, items: list[tuple[int, bytes]]) -> list[PacketResult]:
        self._leftovers()
        tracker = self._tracker(items)
        sent = 0
        while True:
            now = time.monotonic()
            while sent < len(items) and tracker.in_flight < self.window.size:
                self._ports.send(*items[sent])
                tracker.sent(sent, now=now)
                sent += 1
            got, now = self._pump(tracker)
            # decided at the time the sockets were read to the end (see _pump), never at a
            # later one: a wait, or sfclab descheduled, is no silence of the switch's
            tracker.update(now=now)
            if tracker.finished(now=now, sent=sent):
                self._first_pid = tracker.next_pid
                return tracker.results(len(self.results))
            if not got:
                self._wait(tracker)

    def _tracker(self, items: list[tuple[int, bytes]]) -> BatchTracker:
        held = self._held
        if held is not None:
            held.forget(self._names)        # entries may have changed since the last batch
        return BatchTracker(self._names, items, reaches=self._ports.reaches,
                            device_id=self.bmv2.device_id, cpu_port=self.bmv2.cpu_port or -1,
                            settle=self.settle, lost_after=self.timeout, window=self.window,
                            first_pid=self._first_pid,
                            action_args=held.action_args if held else None,
                            entry_name=held.entry_name if held else None,
                            replicas=self._replicas)

    def _replicas(self, trace) -> int | None:
        """How many copies BMv2's replication engine makes of a multicast packet: the size
        of the group sfclab wrote that its ``flood`` chose (:mod:`sfclab.runtime.replication`);
        None when the trace does not tell (another group, its argument unknown)."""
        last = trace.events[-1].pass_no if trace.events else 0
        grp = flood_group((e.name, e.args) for e in trace.events
                          if e.kind == "action" and e.pass_no == last)
        group = self.session.groups.get(grp) if grp is not None else None
        return len(group.ports) if group is not None else None

    def _wait(self, tracker: BatchTracker) -> None:
        """Sleep until the event or packet socket has something (at most a few ms, so
        that settled drops and CPU packets, which come over gRPC, are seen)."""
        fds = [f for f in (self._events.fileno(), self._ports.fileno()) if f is not None]
        wait = min(0.002 if tracker.in_flight else 0.005, tracker.settle_time)
        if fds:
            select.select(fds, [], [], wait)
        else:
            time.sleep(wait)

    def _pump(self, tracker: BatchTracker) -> tuple[int, float]:
        """Feed *tracker* what came from the switch; returns how many messages came, and
        the time just before the sockets were read.  Whatever the switch sent before that
        time has been fed, so a packet with no news since is quiet on the switch's side: a
        settle or finish decided at that time cannot be fooled by events that waited unread
        while sfclab slept past them, was descheduled or paused (a loaded machine)."""
        now = time.monotonic()
        msgs = self._events.poll()
        for m in msgs:
            tracker.event(m, now=now)
        frames = self._ports.poll()
        for port, frame in frames:
            tracker.output(port, frame, now=now)
        pins = self._drain_packet_ins()
        for p in pins:
            tracker.output(self.bmv2.cpu_port, bytes(p.payload), now=now, packet_in=p)
        return len(msgs) + len(frames) + len(pins), now

    def _send_quiet(self, port: int, frame: bytes) -> PacketResult:
        """No event logger: send, then wait for :attr:`quiet` seconds of silence."""
        self._leftovers()
        self._ports.send(port, frame)
        outputs = self._ports.collect(quiet=self.quiet, timeout=self.timeout)
        packet_ins = self._drain_packet_ins()
        outputs += [(self.bmv2.cpu_port, bytes(p.payload)) for p in packet_ins]
        trace = outputs_trace(len(self.results), port, outputs,
                              "no events from the switch (its event logger is off or "
                              "unreadable): only its outputs are known")
        return PacketResult(outputs, with_output(trace, outputs), packet_ins)

    def _drain_packet_ins(self) -> list:
        out = []
        while True:
            try:
                out.append(self.client.packet_ins.get_nowait())
            except queue.Empty:
                return out

    # -- life cycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the session, ports and event logger; stop the switch if sfclab started it."""
        for part in (self._events, self._ports, self.session.register_io, self.client,
                     self._held and self._held.thrift):
            if part is not None:
                part.close()
        self._events = self._ports = None
        self.bmv2.stop()
        if self._made_workdir:
            remove_at_exit(self.workdir)

    def __enter__(self) -> Bmv2Switch:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
