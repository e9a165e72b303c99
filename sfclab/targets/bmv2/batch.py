"""Many packets through BMv2 at once: correlation, completion and a window of credits.

Where BMv2 loses packets or events (``simple_switch.cpp`` and ``transport_nn.cpp``,
BMv2 1.15):

* the **egress queues** — 64 packets per port; ``enqueue`` drops a packet whose
  queue is full, silently.  They fill when the ingress thread outpaces the egress
  threads, or when nobody reads the packet socket: the transmit thread then blocks
  in ``nn_sendmsg``, the 128-packet output buffer fills, the egress threads block;
* the **event logger** — a nanomsg ``NN_PUB`` socket (``--nanolog``): nanomsg drops a
  message for a subscriber whose connection cannot take it at once.  On IPC that is
  past some 340 messages (~7 packets: each message is a kernel buffer of its own), so a
  subscriber descheduled for a few milliseconds lost events; a switch sfclab starts
  logs on TCP, where about 3,000 fit (:mod:`sfclab.targets.bmv2.sp`), more than :attr:`Window.max_size`
  packets log.  A lost ``PACKET_OUT`` is repaired or reported (:meth:`BatchTracker._repair`).

The input buffer (1,024 packets) and the packet socket block instead: back-pressure.

So sfclab keeps at most ``window`` packets inside the switch: the next is sent when
one is **complete** — its ``PACKET_OUT`` events came and the frames they announce
arrived (the k-th ``PACKET_OUT`` on a port is the k-th frame out of it), or its
last event ends a pipeline whose last deciding action was ``mark_to_drop`` (a drop
for sure: BMv2 logs none; :func:`~sfclab.targets.bmv2.events.action_verdict` reads the actions in
the BMv2 JSON).  When that pipeline's actions do not tell (none set ``egress_spec``,
or one resubmits or clones), a pipeline end with nothing after it for ``settle``
seconds, or three times the longest wait between two pipelines seen lately, is
taken for a drop (the waits of the last 64 packets count); a packet whose pipeline
forwarded it is waited for however late its egress comes (on a loaded machine an
egress thread may wait tens of milliseconds), up to ``lost_after``, then reported lost
on its trace.  Every such wait is measured at the time the switch's sockets were last
read to the end (the caller's ``now``), never at a later one: events that waited unread
while sfclab slept or was descheduled are no silence of the switch.  Packets are matched to BMv2's
packet ids by order: BMv2 numbers the packets it receives one after the other, so
packet k of a batch is the first one's number plus k.  A complete packet whose
events show a gap (:meth:`~sfclab.targets.bmv2.events.TraceBuilder.gaps`) halves the window
(down to 1, one packet at a time); whole ones grow it again by one each, up to
:attr:`Window.max_size`.

>>> from sfclab.targets.bmv2.events import pack_message as m, PACKET_IN, PACKET_OUT, \\
...     PARSER_START, PARSER_DONE, PIPELINE_START, PIPELINE_DONE, NameMap
>>> b = BatchTracker(NameMap(), [(1, b"a")], reaches=lambda port: True)
>>> b.sent(0, now=0.0)
>>> for t, *f in [(PACKET_IN, 1), (PARSER_START, 0), (PARSER_DONE, 0),
...               (PIPELINE_START, 0), (PIPELINE_DONE, 0), (PACKET_OUT, 2)]:
...     b.event(m(t, *f, packet_id=7), now=0.001)
>>> b.done(0, now=0.002), b.in_flight
(False, 1)
>>> b.output(2, b"A", now=0.002)
>>> b.done(0, now=0.002), b.in_flight
(True, 0)
>>> [(r.outputs, r.trace.egress_port) for r in b.results()]
[([(2, b'A')], 2)]
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .events import DEPARSER_DONE, PACKET_IN, PACKET_OUT, PIPELINE_DONE, ActionArgs, NameMap, RawEvent, TraceBuilder, decode_message
from ..ports.packet_io import PacketResult, outputs_trace, with_output
from ..traces.trace import Event, PacketTrace

__all__ = ["Window", "BatchTracker"]


def _alike(a: bytes, b: bytes) -> int:
    """How many bytes *a* and *b* share at the same place, counted from the start or
    from the end (an encapsulation moves the start), whichever is more.

    >>> _alike(b"abcdef", b"abXdef"), _alike(b"HDRabc", b"abc")
    (5, 3)
    """
    n = min(len(a), len(b))
    if not n:
        return 0
    def same(x: bytes, y: bytes) -> int:
        return (int.from_bytes(x, "big") ^ int.from_bytes(y, "big")).to_bytes(n, "big").count(0)
    return max(same(a[:n], b[:n]), same(a[-n:], b[-n:]))


@dataclass
class Window:
    """How many packets may be inside the switch: halved when events are lost, one more
    for each packet whose events came whole.

    >>> w = Window(8, max_size=32)
    >>> w.lost(); w.size
    4
    >>> for _ in range(3): w.whole()
    >>> w.size
    7
    """

    size: int = 8
    max_size: int = 32
    losses: int = 0
    #: the last waits seen between a pipeline's end and the packet's next event (kept
    #: from batch to batch, as the window is)
    gaps: collections.deque = field(default_factory=lambda: collections.deque(maxlen=64))

    @property
    def max_gap(self) -> float:
        """The longest of the last 64 waits between pipelines."""
        return max(self.gaps, default=0.0)

    def lost(self) -> None:
        self.losses += 1
        self.size = max(1, self.size // 2)

    def whole(self) -> None:
        self.size = min(self.max_size, self.size + 1)


@dataclass(slots=True)
class _Packet:
    port: int
    frame: bytes
    sent_at: float = -1.0
    pid: int | None = None
    last_at: float = -1.0               # when its last event or frame came
    outs: list[tuple[int, bytes]] = field(default_factory=list)
    packet_ins: list = field(default_factory=list)
    awaited: int = 0                    # frames announced by PACKET_OUT, not yet arrived
    out_events: int = 0
    done: bool = False
    deparsed_at: int | None = None      # place of its last DEPARSER_DONE in the event stream
    placed: bool = False                # its frame was placed without its PACKET_OUT
    given_up: bool = False              # complete only because lost_after passed


class BatchTracker:
    """The packets of one batch, their events and outputs as they arrive.

    *reaches(port)* says whether a frame sent out of *port* reaches sfclab (a veth that
    is not attached, or the CPU port, does not: CPU packets come over P4Runtime and are
    given with :meth:`packet_in`).  *action_args* and *entry_name* give the traces'
    actions their arguments and hit entries their match (:class:`~sfclab.targets.bmv2.events.TraceBuilder`)."""

    def __init__(self, names: NameMap, packets: Sequence[tuple[int, bytes]], *,
                 reaches: Callable[[int], bool], device_id: int = 0, cpu_port: int = 255,
                 settle: float = 0.005, lost_after: float = 3.0,
                 window: Window | None = None, first_pid: int = 0,
                 action_args: ActionArgs | None = None,
                 entry_name: Callable[[str, int], str | None] | None = None,
                 replicas: Callable[[PacketTrace], int | None] | None = None) -> None:
        self.packets = [_Packet(int(p), bytes(f)) for p, f in packets]
        self.builder = TraceBuilder(names, device_id=device_id, action_args=action_args,
                                    entry_name=entry_name)
        self.device_id, self.cpu_port = device_id, cpu_port
        self.reaches = reaches
        #: how many copies the replication engine makes of a multicast packet (its trace so
        #: far tells the group), None: unknown
        self.replicas = replicas
        self._replicas: dict[tuple[int, int], int] = {}
        self.settle, self.lost_after = settle, lost_after
        self.window = window or Window()
        self._base: int | None = None               # BMv2's number for packet 0
        #: BMv2's numbers below this are earlier batches' packets
        self.first_pid = first_pid
        #: PACKET_INs on another port than the packet with that number was sent to
        self.mismatches = 0
        self._announced: dict[int, collections.deque] = collections.defaultdict(
            collections.deque)                       # port -> packets with a PACKET_OUT there
        self._frames: dict[int, collections.deque] = collections.defaultdict(
            collections.deque)                       # port -> frames not matched yet
        self._open: set[int] = set()                 # sent, not complete
        self.last_activity = 0.0
        self._seq = 0                                # events of this batch so far
        self._ann_log: dict[int, list[int]] = collections.defaultdict(list)
        self._frame_log: dict[int, list] = collections.defaultdict(list)
        #: what the batch could not tell about its outputs, and the packets it concerns
        #: (see :meth:`_repair`)
        self.ambiguous: tuple[str, set[int]] | None = None

    # -- what happens ------------------------------------------------------------------------
    def sent(self, i: int, *, now: float) -> None:
        p = self.packets[i]
        p.sent_at = p.last_at = now
        self._open.add(i)
        self.last_activity = now

    def event(self, msg: bytes | RawEvent, *, now: float) -> None:
        """One event-logger message (others' packets are ignored)."""
        ev = decode_message(msg) if not isinstance(msg, RawEvent) else msg
        if ev.switch_id != self.device_id:
            return
        i = self._index(ev)
        if i is None:
            return
        p = self.packets[i]
        if self.builder.last_step(ev.packet_id) == PIPELINE_DONE:
            # how long a packet waits between its pipelines: what settle must exceed
            self.window.gaps.append(now - p.last_at)
        self.builder.feed(ev)
        p.last_at = self.last_activity = now
        self._seq += 1
        if ev.type == DEPARSER_DONE:
            p.deparsed_at = self._seq
        elif ev.type == PACKET_OUT:
            p.out_events += 1
            port = ev.fields[0]
            if port == self.cpu_port or self.reaches(port):
                p.awaited += 1
                self._announced[port].append(i)
                self._ann_log[port].append(i)
                self._match(port, now)

    def _index(self, ev: RawEvent) -> int | None:
        """Which packet of the batch an event is about.  BMv2 numbers the packets it
        receives one by one: the first ``PACKET_IN`` on the first packet's port gives the
        number of packet 0, and packet k is that number plus k (so a packet whose
        ``PACKET_IN`` was lost keeps its place)."""
        if self._base is None:
            if ev.type != PACKET_IN or self.packets[0].sent_at < 0 \
                    or ev.fields[0] != self.packets[0].port or ev.packet_id < self.first_pid:
                return None
            self._base = ev.packet_id
        k = ev.packet_id - self._base
        if not 0 <= k < len(self.packets) or self.packets[k].sent_at < 0:
            return None
        p = self.packets[k]
        if p.pid is None:
            p.pid = ev.packet_id
        if ev.type == PACKET_IN and ev.fields[0] != p.port:
            self.mismatches += 1            # someone else's packet came in between
        return k

    def output(self, port: int, frame: bytes, *, now: float, packet_in=None) -> None:
        """A frame that came out of *port* (for the CPU port: a P4Runtime packet-in's
        payload, and the *packet_in* message itself)."""
        self._frames[port].append((bytes(frame), packet_in))
        self._frame_log[port].append(self._frames[port][-1])
        self.last_activity = now
        self._match(port, now)

    def _match(self, port: int, now: float) -> None:
        ann, frames = self._announced[port], self._frames[port]
        while ann and frames:
            p = self.packets[ann.popleft()]
            frame, packet_in = frames.popleft()
            p.outs.append((port, frame))
            if packet_in is not None:
                p.packet_ins.append(packet_in)
            p.awaited -= 1
            p.last_at = now

    # -- completion --------------------------------------------------------------------------
    def done(self, i: int, *, now: float) -> bool:
        p = self.packets[i]
        if p.done:
            return True
        if p.sent_at < 0:
            return False
        quiet = now - p.last_at
        # every copy the switch made of it (an egress pass each) is out, its frame in
        whole = p.awaited == 0 and self.unannounced(i) == 0
        if whole and p.out_events:
            complete = True
        elif p.pid is not None and whole and self.builder.last_step(p.pid) == PIPELINE_DONE:
            # a pipeline ended: its last deciding action dropped the packet (a drop for
            # sure), forwarded it (more is coming, however late), or cannot be told (a drop
            # if nothing follows for the settle time)
            fate = self.builder.fate(p.pid)
            complete = fate == "drop" or (fate is None and quiet >= self.settle_time)
            p.given_up = not complete and quiet >= self.lost_after
            complete = complete or p.given_up
        else:
            complete = p.given_up = quiet >= self.lost_after
        if complete:
            p.done = True
            self._open.discard(i)
            if p.pid is None or p.given_up or self.builder.gaps(p.pid):
                self.window.lost()
            else:
                self.window.whole()
        return complete

    def unannounced(self, i: int) -> int:
        """How many copies of packet *i* ran (or run) their egress without a
        ``PACKET_OUT`` yet, or, for a multicast whose group :attr:`replicas` knows, were
        made and wait for their egress: outputs on their way, however late (a loaded
        switch runs and transmits a multicast's replicas one by one)."""
        p = self.packets[i]
        if p.pid is None:
            return 0
        made = 0
        if self.replicas is not None and (trace := self.builder.multicast(p.pid)) is not None:
            # its group is chosen once per pass: asked once
            key = (p.pid, trace.events[-1].pass_no if trace.events else 0)
            if key not in self._replicas:
                self._replicas[key] = self.replicas(trace) or 0
            made = self._replicas[key]
        return max(0, self.builder.copies_out(p.pid, replicas=made) - p.out_events)

    @property
    def settle_time(self) -> float:
        """``settle``, or three times the longest of the last 64 waits seen between
        pipelines if longer (at most 0.2 s)."""
        return min(max(self.settle, 3 * self.window.max_gap), 0.2)

    @property
    def in_flight(self) -> int:
        return len(self._open)

    def update(self, *, now: float) -> int:
        """Check the packets in flight; returns how many are."""
        for i in list(self._open):
            self.done(i, now=now)
        return len(self._open)

    def finished(self, *, now: float, sent: int) -> bool:
        """Every one of the first *sent* packets is complete, and nothing came for
        ``settle`` seconds (late copies of a multicast still find their packet)."""
        return (sent == len(self.packets) and self.update(now=now) == 0
                and now - self.last_activity >= self.settle_time)

    # -- results -----------------------------------------------------------------------------
    @property
    def next_pid(self) -> int:
        """BMv2's number for the packet after this batch (or ``first_pid``)."""
        return self.first_pid if self._base is None else self._base + len(self.packets)

    #: how far (in packets sent) a frame's owner is looked for around the announced packet
    NEAR = 64

    def _repair(self) -> None:
        """Place the frames of packets whose ``PACKET_OUT`` event was lost.

        Frames are matched to packets by the order of their ``PACKET_OUT`` events on a
        port (:meth:`_match`); when the event logger drops one, the frames after it on that
        port go to the packet before theirs and the last one to nobody.  So a port with
        more frames than ``PACKET_OUT`` events is matched again (:meth:`_rematch`): a frame
        more like the input of a packet sent near the announced one, which has no
        ``PACKET_OUT`` there, is that packet's.  Frames still left over go by the order
        packets left the egress pipeline (one egress thread per port, FIFO queues, one
        transmit thread; a packet's ``DEPARSER_DONE`` says when), when they are on one port
        and as many as the packets deparsed without a ``PACKET_OUT``.  Otherwise nothing is
        guessed: :attr:`ambiguous` says so on every packet whose outputs it may concern
        (those on the ports concerned, those deparsed without a ``PACKET_OUT``, those that
        look dropped)."""
        extra = {port: n for port, fr in self._frame_log.items()
                 if (n := len(fr) - len(self._ann_log[port])) > 0}
        for port in extra:
            extra[port] = self._rematch(port)
        extra = {port: n for port, n in extra.items() if n > 0}
        if not extra:
            return
        missing = [k for k, p in enumerate(self.packets)
                   if p.out_events == 0 and p.deparsed_at is not None and not p.outs]
        port, n = next(iter(extra.items()))
        holders = list(self._ann_log[port])
        if len(extra) > 1 or n != len(missing) or len(set(holders)) != len(holders) \
                or any(p.placed for p in self.packets) \
                or any(self.packets[k].deparsed_at is None for k in holders):
            self.ambiguous = (
                f"{sum(extra.values())} frame(s) on port(s) {', '.join(map(str, extra))} came "
                f"without a PACKET_OUT event and {len(missing)} packet(s) were deparsed "
                "without one: outputs after the lost events may belong to a neighbour",
                set(missing).union(*(self._ann_log[q] for q in extra),
                                   (k for k, p in enumerate(self.packets) if not p.outs)))
            return
        self._assign(port, sorted(holders + missing, key=lambda k: self.packets[k].deparsed_at),
                     placed=set(missing))

    def _rematch(self, port: int) -> int:
        """Match *port*'s frames again, in order, each to the packet whose ``PACKET_OUT``
        comes next there or to a packet sent near it without one there (and no frame yet)
        whose input the frame is more like, byte for byte (:func:`_alike`; equal inputs
        give equal outputs, so a tie keeps the announced one).  Returns how many frames are
        left over."""
        anns, frames = self._ann_log[port], self._frame_log[port]
        announced = set(anns)
        owners: list[int] = []
        placed: set[int] = set()
        a = 0
        for frame, _ in frames:
            if a == len(anns):
                break
            i = anns[a]
            best, score = i, _alike(frame, self.packets[i].frame)
            for j in range(max(0, i - self.NEAR), min(len(self.packets), i + self.NEAR)):
                q = self.packets[j]
                if j in announced or j in placed or q.sent_at < 0:
                    continue
                if (sc := _alike(frame, q.frame)) > score:
                    best, score = j, sc
            if best == i:
                a += 1
            else:
                placed.add(best)
            owners.append(best)
        self._assign(port, owners, placed=placed)
        return len(frames) - len(owners)

    def _assign(self, port: int, owners: Sequence[int], *, placed: set[int]) -> None:
        """Give *port*'s frames, in order, to *owners* (the ones in *placed* without their
        ``PACKET_OUT``); frames past the owners stay unmatched."""
        for k in set(self._ann_log[port]) | set(owners):
            p = self.packets[k]
            p.outs = [(q, f) for q, f in p.outs if q != port]
            if port == self.cpu_port:
                p.packet_ins = []
        for k, (frame, packet_in) in zip(owners, self._frame_log[port]):
            p = self.packets[k]
            p.outs.append((port, frame))
            if packet_in is not None:
                p.packet_ins.append(packet_in)
            p.awaited = 0
            p.placed = p.placed or k in placed
        self._frames[port].clear()

    def results(self, first_id: int = 0) -> list[PacketResult]:
        """One result per packet, in the order sent: outputs and the trace from its events
        (its outputs only, saying why, when none came)."""
        self._repair()
        gaps = {p.pid: self.builder.gaps(p.pid) for p in self.packets if p.pid is not None}
        unannounced = [self.unannounced(k) for k in range(len(self.packets))]
        traces = {t.packet_id: t for t in self.builder.finish()}
        out = []
        for k, p in enumerate(self.packets):
            outs = list(p.outs)
            if p.awaited:
                outs_note = (f"{p.awaited} frame(s) the switch sent out did not arrive "
                             "(a port sfclab does not read?)")
            else:
                outs_note = ""
            trace = traces.get(p.pid) if p.pid is not None else None
            if trace is None:
                trace = outputs_trace(first_id + k, p.port, outs,
                                      "no events from the switch for this packet (its event "
                                      "logger dropped them, or the packet was lost)")
            else:
                for g in gaps.get(p.pid, ()):
                    trace.add(Event(kind="note", value=f"events were lost ({g}): the "
                                    "event logger's queue overflowed"))
            if outs_note:
                trace.add(Event(kind="note", value=outs_note))
            if p.given_up and (missing := unannounced[k]):
                trace.add(Event(kind="note", value=f"{missing} of the {missing + p.out_events} "
                                f"copies the switch made of it did not come out within "
                                f"{self.lost_after:g} s (the switch lost them, or their "
                                "PACKET_OUT events)"))
            elif p.given_up and p.pid is not None and not p.awaited and not outs:
                trace.add(Event(kind="note", value=f"nothing came from the switch for "
                                f"{self.lost_after:g} s after its last event: taken as lost "
                                "(the switch lost it, or its events)"))
            if p.placed:
                trace.add(Event(kind="note", value="its PACKET_OUT event was lost: its frame "
                                "was told by its bytes, or by the order packets left the "
                                "egress pipeline"))
            if self.ambiguous and k in self.ambiguous[1]:
                trace.add(Event(kind="note", value=self.ambiguous[0]))
            out.append(PacketResult(outs, with_output(trace, outs), list(p.packet_ins)))
        return out
