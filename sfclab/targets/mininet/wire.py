"""What a BMv2 switch did with each packet, from its wires and its event logger.

BMv2 keeps no record of the bytes it received and sent, so a switch's
:class:`~sfclab.targets.model.process.SwitchRecord` s are assembled from outside:
raw sockets on the switch's own interfaces (they live in the root namespace) see
every frame it receives and every frame it sends (:meth:`InterfacePorts.sniff
<sfclab.targets.packet_io.InterfacePorts.sniff>`, in the kernel's order), and its
event logger (``--nanolog``, :mod:`sfclab.targets.bmv2_events`) gives each
packet's trace.  Once the switch has been quiet for a moment, each frame it
received opens a record, the frames it sent after it are that record's outputs
(frames sent with nothing received before them are packet-outs, from the CPU
port), and the traces, in the event logger's packet order, are given to the
records in turn.

>>> records = assemble([(3, b"po", True, 0.9), (1, b"in", False, 1.0),
...                     (2, b"out", True, 1.1)], [], cpu_port=255, first_seq=1)
>>> [(r.port, r.data, r.outputs) for r in records]
[(255, None, [(3, b'po')]), (1, b'in', [(2, b'out')])]
>>> records[1].trace.text().splitlines()[0]
'packet 2: in on port 1, 1 pass(es), NFs (none), port 2'
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence

from ...errors import TargetError
from ..bmv2_events import EventSubscriber, NameMap, decode_events
from ..model.process import SwitchRecord
from ..interfaces import InterfacePorts
from ..packet_io import outputs_trace
from ..trace import PacketTrace
from .emulator import netns

__all__ = ["Bmv2Records", "assemble"]

_NO_EVENTS = ("no events from the switch (its event logger is off or unreadable): only "
              "its wires are known")


def assemble(frames: Sequence[tuple[int, bytes, bool, float]], traces: Sequence[PacketTrace],
             *, cpu_port: int, first_seq: int) -> list[SwitchRecord]:
    """Records from the frames a switch received and sent (``(port, frame, outgoing,
    time)``, oldest first) and its traces (in packet order).  A frame sent goes to the
    oldest packet received before it whose trace still owes an output on that port; to
    the last one received, when the switch gives no traces; else it is a packet-out."""
    records: list[SwitchRecord] = []
    owed: list[list[int] | None] = []              # per record: ports its trace sends to
    pending = list(traces)
    for port, frame, outgoing, _ in frames:
        if not outgoing:
            rec = SwitchRecord(seq=first_seq + len(records), port=port, data=frame)
            k = next((i for i, t in enumerate(pending) if t.ingress_port in (port, -1)), None)
            rec.trace = pending.pop(k) if k is not None else None
            records.append(rec)
            owed.append(None if rec.trace is None else
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
    return records


class Bmv2Records:
    """The :class:`SwitchRecord` s of one BMv2 switch (``read()``, as
    :class:`~sfclab.targets.model.process.RecordReader`): its interfaces sniffed, its
    event logger subscribed; records come out once it was quiet *quiet* seconds."""

    def __init__(self, interfaces: dict[int, str], nanolog: str | None, names: NameMap, *,
                 device_id: int = 0, cpu_port: int = 255, quiet: float = 0.1,
                 lost_after: float = 3.0, netns_pid: int | None = None) -> None:
        self.interfaces = dict(interfaces)
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
        if nanolog:
            try:
                self._events = EventSubscriber(nanolog, names, device_id=device_id)
            except TargetError as e:
                self.notes.append(f"no traces from the switch: {e.message}")

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
        whose frame has not been seen yet, or a received frame has no events yet, the
        records wait for it, up to *lost_after* seconds of silence (a loaded machine may
        take longer than *quiet* to forward; what is still missing then is lost)."""
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
        traces = decode_events(self._messages, self.names, device_id=self.device_id)
        if now - self._last < self.lost_after and self._owed(traces):
            return []
        out = assemble(self._frames, traces, cpu_port=self.cpu_port, first_seq=self._seq)
        self._seq += len(out)
        self._frames, self._messages = [], []
        return out

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
        for part in (self._wires, self._events):
            if part is not None:
                part.close()
        self._wires = self._events = None
