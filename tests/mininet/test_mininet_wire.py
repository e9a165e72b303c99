"""A BMv2 switch's records, assembled from its wires and its event logger: here a
thread plays the switch on two veth pairs (port 1 in, port 2 out) and publishes,
per packet, the event-logger messages BMv2 would (``bmv2_events.pack_message``)."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from sfclab.targets.bmv2 import events as E
from sfclab.targets.mininet.wire import Bmv2Records
from sfclab.targets.ports.interfaces import InterfacePorts

NAMES = {"pipelines": [{"name": "ingress", "id": 0, "tables": [
    {"name": "SfcIngress.slot0_firewall.acl", "id": 3, "key": [{}]}], "conditionals": []}],
    "actions": [{"name": "SfcIngress.slot0_firewall.allow", "id": 7}]}


class _FakeSwitch(threading.Thread):
    """Port 1 -> port 2 (the frame reversed after the MACs), each packet's events published."""

    def __init__(self, ports: InterfacePorts, pub, *, lag: float = 0.0,
                 stall: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.ports, self.pub, self.stop = ports, pub, threading.Event()
        self.next_id = 0
        self.lag = lag          # seconds between a packet's events and its frame going out
        self.stall = stall      # seconds between its PACKET_IN and its pipeline (descheduled)

    def run(self) -> None:
        while not self.stop.is_set():
            for port, frame in self.ports.recv(0.05):
                pid, self.next_id = self.next_id, self.next_id + 1
                out = frame[:12] + frame[12:][::-1]
                for msg in (E.pack_message(E.PACKET_IN, port, packet_id=pid),
                            E.pack_message(E.PIPELINE_START, 0, packet_id=pid),
                            E.pack_message(E.TABLE_HIT, 3, 1, packet_id=pid),
                            E.pack_message(E.ACTION_EXECUTE, 7, packet_id=pid),
                            E.pack_message(E.PIPELINE_DONE, 0, packet_id=pid),
                            E.pack_message(E.PACKET_OUT, 2, packet_id=pid)):
                    self.pub.send(msg)
                    if E.decode_message(msg).type == E.PACKET_IN:
                        time.sleep(self.stall)
                time.sleep(self.lag)
                self.ports.send(2, out)


@contextlib.contextmanager
def _wired(veths, tmp_path, *, lag: float = 0.0, stall: float = 0.0):
    """A fake switch on the veths and its Bmv2Records (sniffers open): (records, hosts)."""
    pynng = pytest.importorskip("pynng", reason="pynng (BMv2's event logger) is not installed")
    (sw1, h1), (sw2, h2) = veths
    address = f"ipc://{tmp_path}/events.ipc"
    pub = pynng.Pub0(listen=address)
    switch = _FakeSwitch(InterfacePorts({1: sw1, 2: sw2}), pub, lag=lag, stall=stall)
    records = Bmv2Records({1: sw1, 2: sw2}, address, E.NameMap.from_json(NAMES))
    hosts = InterfacePorts({1: h1, 2: h2})
    switch.start()
    try:
        assert records._events.wait_connected(5)
        deadline = time.monotonic() + 10
        while not pub.pipes and time.monotonic() < deadline:   # the publisher's end too:
            time.sleep(0.01)                                     # it sends only to those
        assert pub.pipes, "the publisher never saw the subscriber"
        records.read()                                   # opens the sniffers
        yield records, hosts
    finally:
        switch.stop.set()
        switch.join(2)
        records.close()
        hosts.close()
        pub.close()


def test_records_pair_each_frame_in_with_what_went_out_and_its_trace(veths, tmp_path):
    with _wired(veths, tmp_path) as (records, hosts):
        frames = [bytes(12) + b"\x09\x00" + bytes([i]) * 50 for i in (1, 2)]
        got = []
        for f in frames:
            hosts.send(1, f)
        deadline = time.monotonic() + 5
        while len(got) < 2 and time.monotonic() < deadline:
            got += records.read()
            time.sleep(0.02)
        assert [(r.port, r.data) for r in got] == [(1, f) for f in frames]
        for r, f in zip(got, frames):
            assert r.outputs == [(2, f[:12] + f[12:][::-1])]
            assert r.trace.nfs() == ["firewall"] and r.trace.ingress_port == 1
        assert records.read() == []                       # nothing twice


def test_a_frame_the_events_promise_is_waited_for_past_the_quiet_time(veths, tmp_path):
    """A loaded switch sends its frame out 0.5 s after its events (five times the quiet
    time): the record waits for the output the events named (before, it came out after
    0.1 s of quiet without its output, as once in CI under load)."""
    with _wired(veths, tmp_path, lag=0.5) as (records, hosts):
        frame = bytes(12) + b"\x09\x00" + bytes([7]) * 50
        hosts.send(1, frame)
        got: list = []
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            got = records.read()
            time.sleep(0.02)
        assert [(r.port, r.outputs) for r in got] == [(1, [(2, frame[:12] + frame[12:][::-1])])]


def _first_records(records, timeout: float = 10.0) -> list:
    got: list = []
    deadline = time.monotonic() + timeout
    while not got and time.monotonic() < deadline:
        got = records.read()
        time.sleep(0.02)
    return got


def test_a_packet_whose_events_stop_short_is_waited_for_not_called_dropped(veths, tmp_path):
    """The switch is descheduled for 0.5 s between a packet's PACKET_IN and its pipeline
    (five times the quiet time), as a loaded BMv2 in Mininet was: the record waits for the
    rest of its events.  Before, it came out after 0.1 s of quiet with a trace of only
    PACKET_IN, read as "dropped by the program" ("dropped before any NF" in the network's
    trace) though the switch delivered the packet; its late events then went to the next."""
    with _wired(veths, tmp_path, stall=0.5) as (records, hosts):
        frames = [bytes(12) + b"\x09\x00" + bytes([i]) * 50 for i in (3, 4)]
        for f in frames:
            hosts.send(1, f)
            [r] = _first_records(records)
            assert (r.port, r.data) == (1, f)
            assert r.outputs == [(2, f[:12] + f[12:][::-1])]
            assert not r.trace.dropped and r.trace.nfs() == ["firewall"]


class _Fed:
    """Wires and event logger of a switch, fed by the test: ``sniff`` / ``messages``
    hand out what was queued since the last call."""

    def __init__(self) -> None:
        self.frames: list = []
        self.msgs: list[bytes] = []

    def sniff(self, _timeout: float) -> list:
        out, self.frames = self.frames, []
        return out

    def messages(self, **_kw) -> list[bytes]:
        out, self.msgs = self.msgs, []
        return out

    def close(self) -> None:
        pass


def test_a_trace_that_stays_short_says_so_and_its_late_events_go_to_no_other_packet():
    """No root needed: the switch's wires and events are fed by hand.  Packet 0's events
    stop at PACKET_IN for longer than *lost_after*: its record says its events stopped
    short (it is not "dropped by the program"); the rest of its events, coming with packet
    1's, are not taken for packet 1's."""
    names = E.NameMap.from_json(NAMES)
    records = Bmv2Records({1: "sw1", 2: "sw2"}, None, names, quiet=0.02, lost_after=0.3)
    fed = _Fed()
    records._wires = records._events = fed
    msgs = lambda pid: [E.pack_message(E.PACKET_IN, 1, packet_id=pid),  # noqa: E731
                        E.pack_message(E.PIPELINE_START, 0, packet_id=pid),
                        E.pack_message(E.TABLE_HIT, 3, 1, packet_id=pid),
                        E.pack_message(E.ACTION_EXECUTE, 7, packet_id=pid),
                        E.pack_message(E.PIPELINE_DONE, 0, packet_id=pid),
                        E.pack_message(E.PACKET_OUT, 2, packet_id=pid)]
    fed.frames = [(1, b"first", False, 0.0)]
    fed.msgs = msgs(0)[:1]
    started = time.monotonic()
    [r0] = _first_records(records)
    assert time.monotonic() - started >= 0.3                    # waited for the rest
    assert r0.trace.dropped and r0.outputs == []
    assert r0.trace.drop_reason.startswith("its events stop at PACKET_IN and no more came")
    assert "dropped by the program" not in r0.trace.text()
    fed.frames = [(1, b"second", False, 1.0), (2, b"SECOND", True, 1.1)]
    fed.msgs = msgs(0)[1:] + msgs(1)
    [r1] = _first_records(records)
    assert (r1.data, r1.outputs) == (b"second", [(2, b"SECOND")])
    assert r1.trace.packet_id == 1 and r1.trace.nfs() == ["firewall"]
    assert r1.trace.egress_port == 2
