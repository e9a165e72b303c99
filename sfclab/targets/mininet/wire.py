"""What a BMv2 switch did with each packet, from its wires and its event logger.

BMv2 keeps no record of the bytes it received and sent, so a switch's
:class:`~sfclab.targets.model.process.SwitchRecord` s are assembled from outside:
raw sockets on the switch's own interfaces (they live in the root namespace) see
every frame it receives and every frame it sends (:meth:`InterfacePorts.sniff
<sfclab.targets.ports.packet_io.InterfacePorts.sniff>`, in the kernel's order), and its
event logger (``--nanolog``, :mod:`sfclab.targets.bmv2.events`) gives each
packet's trace, whose actions get their arguments from the entries the switch holds
(its Thrift runtime, :mod:`sfclab.targets.bmv2.entries`), as on the one-switch BMv2
target.  Once the switch has been quiet for a moment, each frame it
received opens a record, the frames it sent after it are that record's outputs
(frames sent with nothing received before them are packet-outs, from the CPU
port), and the traces, in the event logger's packet order, are given to the
records in turn.  "Quiet" is not enough on a loaded machine: BMv2 logs a packet's steps
as its threads take them, and a switch descheduled mid-packet goes quiet with the
packet half done, so records also wait for every packet's events to reach an end (a
``PACKET_OUT``, or a pipeline that dropped it); a packet whose events stay short is
reported as such, never as dropped by the program (as it once was: a packet "dropped
before any NF" that BMv2 in fact delivered).

>>> records = assemble([(3, b"po", True, 0.9), (1, b"in", False, 1.0),
...                     (2, b"out", True, 1.1)], [], cpu_port=255, first_seq=1)
>>> [(r.port, r.data, r.outputs) for r in records]
[(255, None, [(3, b'po')]), (1, b'in', [(2, b'out')])]
>>> records[1].trace.text().splitlines()[0]
'packet 2: in on port 1, 1 pass(es), NFs (none), port 2'
"""

from __future__ import annotations

import collections
import contextlib
import socket
import time
from collections.abc import Mapping, Sequence

from ...errors import TargetError
from ..bmv2.entries import HeldEntries
from ..bmv2.events import HEADER, EventSubscriber, NameMap, TraceBuilder
from ..bmv2.sp import SpSocket
from ..model.process import SwitchRecord
from ..ports.interfaces import InterfacePorts
from ..ports.packet_io import outputs_trace
from ..traces.trace import Event, PacketTrace
from .emulator import netns

__all__ = ["Bmv2Records", "assemble"]

_NO_EVENTS = ("no events from the switch (its event logger is off or unreadable): only "
              "its wires are known")


def assemble(frames: Sequence[tuple[int, bytes, bool, float]], traces: Sequence[PacketTrace],
             *, cpu_port: int, first_seq: int, cut: Mapping[int, str] | None = None
             ) -> list[SwitchRecord]:
    """Records from the frames a switch received and sent (``(port, frame, outgoing,
    time)``, oldest first) and its traces (in packet order).  A frame sent goes to the
    oldest packet received before it whose trace still owes an output on that port; to
    the last one received, when the switch gives no traces; else it is a packet-out.

    *cut*: packet id -> where the events of a trace stop short (no more came): that
    trace tells what the packet did up to there, not its fate; the record keeps the steps
    and says so (out of the ports its frames were seen leaving by, else "not known"),
    never "dropped by the program".

    >>> from sfclab.targets.bmv2.events import TraceBuilder, NameMap, pack_message, PACKET_IN
    >>> b = TraceBuilder(NameMap()); b.feed(pack_message(PACKET_IN, 1, packet_id=0))
    >>> [r] = assemble([(1, b"in", False, 1.0)], b.finish(), cpu_port=255, first_seq=1,
    ...                cut={0: "its events stop at PACKET_IN"})
    >>> r.trace.dropped, r.trace.drop_reason.split(":")[0]
    (True, 'its events stop at PACKET_IN and no more came')
    """
    cut = cut or {}
    records: list[SwitchRecord] = []
    owed: list[list[int] | None] = []              # per record: ports its trace sends to
    pending = list(traces)
    for port, frame, outgoing, _ in frames:
        if not outgoing:
            rec = SwitchRecord(seq=first_seq + len(records), port=port, data=frame)
            k = next((i for i, t in enumerate(pending) if t.ingress_port in (port, -1)), None)
            rec.trace = pending.pop(k) if k is not None else None
            records.append(rec)
            owed.append(None if rec.trace is None or rec.trace.packet_id in cut else
                        [e.value for e in rec.trace.events
                         if e.kind == "packet_out" and e.value != cpu_port])
            continue
        k = next((i for i, o in enumerate(owed) if o is not None and port in o), None)
        if k is None and records and owed[-1] is None and records[-1].data is not None:
            k = len(records) - 1
        if k is None:
            if not records or records[-1].data is not None:
                records.append(SwitchRecord(seq=first_seq + len(records), port=cpu_port,
                                            data=None))
                owed.append([])
            k = len(records) - 1
        elif owed[k] is not None:
            owed[k].remove(port)
        records[k].outputs.append((port, frame))
    for rec in records:
        if rec.trace is None:
            rec.trace = outputs_trace(rec.seq, rec.port, rec.outputs, _NO_EVENTS)
        elif rec.trace.packet_id in cut:
            rec.trace = _cut_short(rec.trace, cut[rec.trace.packet_id], rec.outputs)
    return records


def _cut_short(trace: PacketTrace, why: str, outputs: Sequence[tuple[int, bytes]]
               ) -> PacketTrace:
    """*trace* (its events stop short: *why*) with the program's "drop" that
    :meth:`~sfclab.targets.bmv2.events.TraceBuilder.finish` gave it taken back: out of
    the ports its frames left by, or dropped for a reason that says the fate is not known."""
    trace.events = [e for e in trace.events if e.kind != "drop"]
    note = (f"{why} and no more came: the switch's event logger lost the rest, or the "
            f"switch stalled")
    trace.add(Event(kind="note", value=note))
    for port, _ in outputs:
        trace.add(Event(kind="packet_out", value=port))
    if outputs:
        trace.finish(egress_port=outputs[0][0])
    else:
        trace.finish(drop_reason=f"{note}; nothing came out of it, so what became of the "
                                 f"packet is not known")
    return trace


class Bmv2Records:
    """The :class:`SwitchRecord` s of one BMv2 switch (``read()``, as
    :class:`~sfclab.targets.model.process.RecordReader`): its interfaces sniffed, its
    event logger subscribed; records come out once it was quiet *quiet* seconds."""

    def __init__(self, interfaces: dict[int, str], nanolog: str | None, names: NameMap, *,
                 device_id: int = 0, cpu_port: int = 255, quiet: float = 0.1,
                 lost_after: float = 3.0, netns_pid: int | None = None,
                 held: HeldEntries | None = None) -> None:
        self.interfaces = dict(interfaces)
        #: the entries the switch holds (its Thrift runtime), asked once per batch of
        #: records: the traces' action arguments and entries (None: actions without them)
        self.held = held
        #: the interfaces are in the network namespace of this process (None: ours)
        self.netns_pid = netns_pid
        self.names = names
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.quiet = quiet
        self.lost_after = lost_after
        self.notes: list[str] = []
        self._wires: InterfacePorts | None = None
        self._events: EventSubscriber | None = None
        self._frames: list = []
        self._messages: list[bytes] = []
        self._last = 0.0
        self._seq = 1
        #: BMv2 packet ids whose events stayed short past *lost_after* (reported so)
        self._given_up: set[int] = set()
        self._held_noted = False
        if nanolog:
            tcp = nanolog.startswith("tcp://")
            try:
                self._events = EventSubscriber(nanolog, names, device_id=device_id,
                                               connect=self._dial if tcp else None)
            except TargetError as e:
                self.notes.append(f"no traces from the switch: {e.message}")
            else:
                if tcp and not self._events.wait_connected(5.0):
                    self.notes.append(f"the switch's event logger ({nanolog} in its "
                                      f"namespace) did not answer: traces may miss steps")

    def _dial(self, host: str, port: int, *, rcvbuf: int = 0) -> socket.socket:
        """A TCP connection to the event logger at *host*:*port* of the switch's namespace
        (made there, with the receive buffer sfclab's reader asks for)."""
        with netns(self.netns_pid) if self.netns_pid else contextlib.nullcontext():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if rcvbuf:
                    SpSocket._grow_rcvbuf(s)
                s.settimeout(1.0)
                s.connect((host, port))
            except OSError:
                s.close()
                raise
        return s

    @property
    def wires(self) -> InterfacePorts:
        """The switch's interfaces, opened when first read (they exist by then)."""
        if self._wires is None:
            if self.netns_pid is None:
                self._wires = InterfacePorts(self.interfaces)
            else:
                with netns(self.netns_pid):     # raw sockets stay in the namespace
                    self._wires = InterfacePorts(self.interfaces)
        return self._wires

    def read(self) -> list[SwitchRecord]:
        """The records of what the switch did until it went quiet ([] while it is busy).

        Quiet is counted up to the start of this read (time sfclab itself spent elsewhere
        is not the switch's silence), and while the events say a packet went out of a port
        whose frame has not been seen yet, a received frame has no events yet, or a
        packet's events stop short of its end (a ``PACKET_OUT``, or a pipeline that
        dropped it: :meth:`~sfclab.targets.bmv2.events.TraceBuilder.unfinished`), the
        records wait for it, up to *lost_after* seconds of silence (a loaded machine
        deschedules the switch mid-packet for longer than *quiet*; what is still missing
        then is lost, and its record says so rather than "dropped")."""
        now = time.monotonic()
        got = self.wires.sniff(0.0)
        msgs = self._events.messages(quiet=0.0, timeout=0.0) if self._events else []
        if got or msgs:
            self._frames += got
            self._messages += msgs
            self._last = now
            return []
        if not self._frames or now - self._last < self.quiet:
            return []
        builder = self._builder()
        for m in self._messages:
            if len(m) < HEADER.size or HEADER.unpack_from(m)[4] not in self._given_up:
                builder.feed(m)
        cut = {pid: why for pid in builder.packets()
               if (why := builder.unfinished(pid)) is not None}
        traces = builder.finish()
        if now - self._last < self.lost_after and (cut or self._owed(traces)):
            return []
        # what stays short now is reported so; its late events are nobody's
        self._given_up.update(cut)
        out = assemble(self._frames, traces, cpu_port=self.cpu_port, first_seq=self._seq,
                       cut=cut)
        self._seq += len(out)
        self._frames, self._messages = [], []
        self._held_done()
        return out

    def _builder(self) -> TraceBuilder:
        """A trace builder; with :attr:`held`, one whose actions show their arguments
        and whose hits name their entries."""
        held = self.held
        if held is None:
            return TraceBuilder(self.names, device_id=self.device_id)
        if held.names is not self.names:                # a new program was pushed
            held.forget(self.names)
        return TraceBuilder(self.names, device_id=self.device_id,
                            action_args=held.action_args, entry_name=held.entry_name)

    def _held_done(self) -> None:
        """After a batch of records: ask the switch again next time (its entries may
        change before the next packets); once its Thrift runtime failed, a note says so."""
        held = self.held
        if held is None:
            return
        held.forget()
        if held.off is not None and not self._held_noted:
            self._held_noted = True
            self.notes.append(f"traces show actions without their arguments: {held.off}")

    def _owed(self, traces: Sequence[PacketTrace]) -> bool:
        """Whether the events promise frames not seen yet: a frame received without its
        packet's events (when the switch gives events), or an output the events name."""
        received = sum(1 for _, _, outgoing, _ in self._frames if not outgoing)
        if self._events is not None and len(traces) < received:
            return True
        sent = collections.Counter(port for port, _, outgoing, _ in self._frames if outgoing)
        promised = collections.Counter(e.value for t in traces for e in t.events
                                       if e.kind == "packet_out" and e.value != self.cpu_port)
        return bool(promised - sent)

    def close(self) -> None:
        for part in (self._wires, self._events, self.held and self.held.thrift):
            if part is not None:
                part.close()
        self._wires = self._events = None
