"""simple_switch's packet path for the stand-in BMv2: its threads, queues and their sizes.

The stand-in (``standin_bmv2.py``) forwards with sfclab's model, but moves packets
the way ``targets/simple_switch/simple_switch.cpp`` (BMv2 1.15) does, so that
sfclab's batching meets the same limits it meets on a real switch:

* ``receive`` (the packet-in socket's or the pcap reader's thread) gives the
  packet the next packet id, logs ``PACKET_IN`` and pushes it into the **input
  buffer** — 1,024 normal packets; pushing blocks when it is full (back-pressure
  to the interface);
* one **ingress thread** runs the packet (the model runs it whole) and logs its
  ingress events, then enqueues each copy into the **egress queue** of its port —
  64 packets per port, served by 4 egress threads (port % 4); a push into a full
  queue **drops the copy silently** (``QueueingLogicPriRL::push_front`` returns 0
  and ``enqueue`` ignores it);
* the egress threads log the rest of the packet's events and push it into the
  **output buffer** — 128 packets, blocking;
* one **transmit thread** logs ``PACKET_OUT`` and transmits: to the packet-in
  socket (``nn_sendmsg`` blocks while the peer does not read), to a pcap file, or
  — for the CPU port — to the P4Runtime client.

Events are published on nanomsg's PUB as BMv2 has it (``standin_nanopub.py``): a
subscriber that does not keep up loses messages, as with a real BMv2.  Not
modelled: a recirculated pass re-entering the input buffer (the model runs all
passes at ingress; the events of the later passes leave with the egress part), a
packet dropped in egress (its events all leave at ingress) and per-copy egress
events of a multicast (the first copy carries them; the others only their
``PACKET_OUT``).

``STANDIN_TX_PAUSE=SECONDS`` in the environment makes the transmit thread pause that long
before the second copy of every multicast (a loaded switch: the tests' way to send a
packet's outputs slowly without depending on the machine's speed).
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import time
import threading
from collections.abc import Callable
from types import SimpleNamespace

__all__ = ["INPUT_CAPACITY", "EGRESS_CAPACITY", "OUTPUT_CAPACITY", "EGRESS_THREADS", "Datapath",
           "split_events"]

#: ``InputBuffer(1024 /* normal */, 1024 /* resubmit/recirc */)`` in SimpleSwitch's constructor.
INPUT_CAPACITY = 1024
#: ``egress_buffers(nb_egress_threads, 64, …)``: packets per egress port (and priority).
EGRESS_CAPACITY = 64
#: ``output_buffer(128)``.
OUTPUT_CAPACITY = 128
#: ``SimpleSwitch::nb_egress_threads``.
EGRESS_THREADS = 4


def split_events(events) -> tuple[list, list]:
    """A model trace's events: those of the first ingress pass, and the rest (from the
    first egress ``pipeline_start`` on); ``packet_in`` / ``packet_out`` left out (the
    datapath logs them when the packet arrives and leaves)."""
    events = [e for e in events if e.kind not in ("packet_in", "packet_out")]
    for i, e in enumerate(events):
        if e.kind == "pipeline_start" and e.name != "ingress":
            return events[:i], events[i:]
    return events, []


class _EgressQueues:
    """``egress_buffers``: a bounded FIFO per port, one worker per port % n; a push into a
    full queue returns False (the copy is dropped)."""

    def __init__(self, workers: int, capacity: int) -> None:
        self.capacity = capacity
        self.size: collections.Counter = collections.Counter()
        self.queues = [collections.deque() for _ in range(workers)]
        self.cond = [threading.Condition() for _ in range(workers)]
        self.dropped = 0

    def push(self, port: int, item) -> bool:
        w = port % len(self.queues)
        with self.cond[w]:
            if self.size[port] >= self.capacity:
                self.dropped += 1
                return False
            self.size[port] += 1
            self.queues[w].append((port, item))
            self.cond[w].notify()
            return True

    def pop(self, worker: int):
        with self.cond[worker]:
            while not self.queues[worker]:
                self.cond[worker].wait()
            port, item = self.queues[worker].popleft()
            if item is not None:
                self.size[port] -= 1
            return port, item

    def stop(self) -> None:
        for w in range(len(self.queues)):
            with self.cond[w]:
                self.queues[w].append((w, None))
                self.cond[w].notify()


class Datapath:
    """simple_switch's threads and queues around the stand-in's server.

    *publish(list of messages)* logs events; *transmit(port, bytes)* sends a data-plane
    packet out; *to_controller(packet_ins)* hands CPU-port packets to P4Runtime."""

    def __init__(self, server, *, publish: Callable[[list[bytes]], None],
                 transmit: Callable[[int, bytes], None] | None, log) -> None:
        self.server = server
        self.publish = publish
        self.transmit = transmit
        self.log = log
        self.ids = itertools.count()
        self.input: queue.Queue = queue.Queue(maxsize=INPUT_CAPACITY)
        self.egress = _EgressQueues(EGRESS_THREADS, EGRESS_CAPACITY)
        self.output: queue.Queue = queue.Queue(maxsize=OUTPUT_CAPACITY)
        self.threads = [threading.Thread(target=self._ingress, daemon=True, name="ingress")]
        self.threads += [threading.Thread(target=self._egress_worker, args=(w,), daemon=True,
                                          name=f"egress{w}") for w in range(EGRESS_THREADS)]
        self.threads.append(threading.Thread(target=self._transmit, daemon=True, name="transmit"))
        self.started = False
        #: seconds to wait before transmitting the second copy of a multicast
        self.tx_pause = float(os.environ.get("STANDIN_TX_PAUSE") or 0)

    def start(self) -> None:
        if not self.started:
            self.started = True
            for t in self.threads:
                t.start()

    # -- messages --------------------------------------------------------------------------
    def _messages(self, events, pid: int) -> list[bytes]:
        from standin_bmv2 import translate_trace

        ids = self.server.active.standin_ids if self.server.active is not None else None
        if ids is None or not events:
            return []
        msgs, missing = translate_trace(SimpleNamespace(events=events), ids,
                                        switch_id=self.server.device_id, packet_id=pid)
        for m in missing:
            self.log(f"packet {pid}: {m}")
        return msgs

    def _event(self, type_: int, value: int, pid: int, copy_id: int = 0) -> None:
        from sfclab.targets.bmv2 import events as E

        self.publish([E.pack_message(type_, value, switch_id=self.server.device_id,
                                     packet_id=pid, copy_id=copy_id)])

    # -- receive and ingress ---------------------------------------------------------------
    def receive(self, port: int, data: bytes) -> None:
        """``SimpleSwitch::receive_``: a packet id, ``PACKET_IN``, then the input buffer
        (blocks while it holds 1,024 packets)."""
        from sfclab.targets.bmv2 import events as E

        pid = next(self.ids)
        self._event(E.PACKET_IN, port, pid)
        self.input.put((pid, port, bytes(data)))

    def _ingress(self) -> None:
        while True:
            item = self.input.get()
            if item is None:
                return
            pid, port, data = item
            server = self.server
            with server._lock:
                if server.switch is None:
                    self.log(f"packet {pid} on port {port} dropped: no pipeline is configured")
                    continue
                try:
                    result = server.switch.process(port, data)
                except Exception as e:      # noqa: BLE001 - a bad port, a model limitation
                    self.log(f"packet {pid} on port {port} dropped: the model cannot run it: {e}")
                    continue
                self.after_ingress(pid, result)

    def after_ingress(self, pid: int, result) -> None:
        """Log the ingress events of a processed packet (the caller holds the server's
        lock), give its digests to the controller and enqueue its copies for egress."""
        from standin_bmv2 import with_deciders

        events = result.trace.events
        if self.server.active is not None:
            # the actions p4c makes of the program's statements deciding the packet's fate
            events = with_deciders(events, self.server.active.standin_ids)
        ingress, rest = split_events(events)
        self.publish(self._messages(ingress, pid))
        self.server.to_controller(SimpleNamespace(packet_ins=[], digests=result.digests))
        if not result.outputs:
            self.publish(self._messages(rest, pid))
            self.log(f"packet {pid}: dropped ({result.drop_reason})", info=True)
            return
        cpu = list(result.packet_ins)
        for copy, (port, data) in enumerate(result.outputs):
            tail = self._messages(rest, pid) if copy == 0 else []
            pins = [cpu.pop(0)] if port == self.server.cpu_port and cpu else []
            if not self.egress.push(port, (pid, copy, data, tail, pins)):
                self.log(f"packet {pid}: its egress queue (port {port}) is full: dropped",
                         info=True)

    # -- egress and transmit ---------------------------------------------------------------
    def _egress_worker(self, worker: int) -> None:
        while True:
            port, item = self.egress.pop(worker)
            if item is None:
                return
            pid, copy, data, tail, pins = item
            self.publish(tail)
            self.output.put((port, pid, copy, data, pins))

    def _transmit(self) -> None:
        from sfclab.targets.bmv2 import events as E

        while True:
            item = self.output.get()
            if item is None:
                return
            port, pid, copy, data, pins = item
            if copy == 1 and self.tx_pause > 0:
                self.log(f"packet {pid}: pausing {self.tx_pause:g} s before its second copy "
                         "(STANDIN_TX_PAUSE)")
                time.sleep(self.tx_pause)
            self._event(E.PACKET_OUT, port, pid, copy)
            if port == self.server.cpu_port:
                self.server.to_controller(SimpleNamespace(packet_ins=pins, digests=[]))
                self.log(f"packet {pid}: out on the CPU port {port} (to the controller)",
                         info=True)
            elif self.transmit is not None:
                self.log(f"packet {pid}: out on port {port} ({len(data)} bytes)", info=True)
                if self.transmit(port, data) is False:
                    return

    def stop(self) -> None:
        if not self.started:
            return
        try:
            self.input.put_nowait(None)
        except queue.Full:
            pass
        self.egress.stop()
        try:
            self.output.put_nowait(None)
        except queue.Full:
            pass
