"""Many packets through BMv2: the tracker (bmv2_batch.py) on event streams built as BMv2
logs them, then the whole path on the stand-in, whose queues have BMv2's sizes: a burst
without back-pressure loses packets, the same burst through ``send_many`` comes back
whole.  And pcap-file ports (``run_pcap``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from standin_bmv2 import install_standins

import sfclab
from sfclab.codegen import generate
from sfclab.runtime.traffic import packets_for
from sfclab.targets.bmv2 import events as E
from sfclab.targets.bmv2.batch import BatchTracker, Window
from sfclab.targets.bmv2.events import NameMap
from sfclab.targets.bmv2.pcap_ports import run_pcap
from sfclab.targets.connect import open_target
from sfclab.targets.model import ModelTarget
from sfclab.targets.ports.packet_io import send_many
from sfclab.targets.traces.trace import diff_traces

WEB = "chain web match tcp.dport == 80: firewall -> l3fwd"

NAMES = NameMap.from_json({
    "pipelines": [{"name": "ingress", "id": 0, "tables": [{"name": "t", "id": 1, "key": [{}]}],
                   "conditionals": []},
                  {"name": "egress", "id": 1, "tables": [], "conditionals": []}],
    "actions": [{"name": "a", "id": 2}]})


def forwarded(pid: int, port_in: int, port_out: int) -> list[bytes]:
    """A packet's events as simple_switch logs them: in, parse, ingress, egress,
    deparse, out."""
    steps = [(E.PACKET_IN, port_in), (E.PARSER_START, 0), (E.PARSER_DONE, 0),
             (E.PIPELINE_START, 0), (E.TABLE_HIT, 1, 5), (E.ACTION_EXECUTE, 2),
             (E.PIPELINE_DONE, 0), (E.PIPELINE_START, 1), (E.PIPELINE_DONE, 1),
             (E.DEPARSER_START, 0), (E.DEPARSER_DONE, 0), (E.PACKET_OUT, port_out)]
    return [E.pack_message(t, *f, packet_id=pid) for t, *f in steps]


def dropped(pid: int, port_in: int) -> list[bytes]:
    """Dropped at the end of ingress: BMv2 logs nothing after the ingress pipeline."""
    return forwarded(pid, port_in, 0)[:7]


def tracker(packets, **kw) -> BatchTracker:
    return BatchTracker(NAMES, packets, reaches=lambda port: port != 9, **kw)


# -- the tracker -----------------------------------------------------------------------------------

def test_packets_are_bmv2s_numbers_in_order_and_frames_match_packet_outs():
    b = tracker([(1, b"a"), (2, b"b"), (1, b"c")], first_pid=41)
    for k in range(3):
        b.sent(k, now=0.0)
    for m in E.pack_message(E.PACKET_IN, 7, packet_id=40), *forwarded(39, 1, 3):
        b.event(m, now=0.0)            # someone else's packet and one before the batch
    assert b.in_flight == 3
    # packet 1's PACKET_IN was lost: it keeps its place (41), its other events still count
    streams = [forwarded(50, 1, 2), forwarded(51, 2, 3)[1:], forwarded(52, 1, 2)]
    b.output(2, b"A", now=0.01)        # a frame may come before its PACKET_OUT event
    for m in streams[0] + streams[1] + streams[2]:
        b.event(m, now=0.01)
    b.output(3, b"B", now=0.01)
    b.output(2, b"C", now=0.01)
    assert b.update(now=0.02) == 0
    r = b.results()
    assert [x.outputs for x in r] == [[(2, b"A")], [(3, b"B")], [(2, b"C")]]
    assert [x.trace.packet_id for x in r] == [50, 51, 52]
    assert r[0].trace.nfs() == r[2].trace.nfs() and not any(
        e.kind == "note" for e in r[0].trace.events)
    assert any("PACKET_IN is missing" in str(e.value) for e in r[1].trace.events)
    assert b.window.losses == 1 and b.next_pid == 53


def _fates() -> NameMap:
    """NAMES, and what p4c's JSON says its actions do: 3 forwards, 4 drops, 5 resubmits."""
    to = {"type": "field", "value": ["standard_metadata", "egress_spec"]}
    return NameMap.from_json({
        "pipelines": [{"name": "ingress", "id": 0, "tables": [{"name": "t", "id": 1,
                                                                "key": [{}]}],
                       "conditionals": []},
                      {"name": "egress", "id": 1, "tables": [], "conditionals": []}],
        "actions": [{"name": "fwd", "id": 3, "primitives": [{"op": "assign",
                                                              "parameters": [to, {}]}]},
                    {"name": "drop", "id": 4, "primitives": [
                        {"op": "assign", "parameters": [to, {}]},
                        {"op": "mark_to_drop", "parameters": []}]},
                    {"name": "again", "id": 5, "primitives": [
                        {"op": "mark_to_drop", "parameters": []},
                        {"op": "resubmit_preserving_field_list", "parameters": []}]}]})


def _ingress(pid: int, action: int) -> list[bytes]:
    steps = [(E.PACKET_IN, 1), (E.PARSER_START, 0), (E.PARSER_DONE, 0),
             (E.PIPELINE_START, 0), (E.TABLE_MISS, 1), (E.ACTION_EXECUTE, action),
             (E.PIPELINE_DONE, 0)]
    return [E.pack_message(t, *f, packet_id=pid) for t, *f in steps]


def test_the_pipelines_actions_tell_a_drop_from_a_late_egress():
    """BMv2 logs no drop.  A packet whose ingress last ran mark_to_drop is dropped at
    once; one whose ingress set egress_spec is waited for however late its egress comes
    (a descheduled egress thread once made it look dropped); where the actions cannot
    tell (a resubmit), nothing following for the settle time still means a drop."""
    b = BatchTracker(_fates(), [(1, b"a"), (1, b"b"), (1, b"c")],
                     reaches=lambda port: True, settle=0.005)
    for k in range(3):
        b.sent(k, now=0.0)
    for k, action in enumerate((4, 3, 5)):
        for m in _ingress(10 + k, action):
            b.event(m, now=0.0)
    assert [b.done(k, now=0.0) for k in range(3)] == [True, False, False]
    assert [b.done(k, now=1.0) for k in range(3)] == [True, False, True]
    late = [(E.PIPELINE_START, 1), (E.PIPELINE_DONE, 1), (E.DEPARSER_START, 0),
            (E.DEPARSER_DONE, 0), (E.PACKET_OUT, 2)]
    for t, *f in late:
        b.event(E.pack_message(t, *f, packet_id=11), now=1.0)
    b.output(2, b"B", now=1.0)
    assert b.done(1, now=1.0)
    r = b.results()
    assert [x.outputs for x in r] == [[], [(2, b"B")], []]
    assert r[0].trace.dropped and r[2].trace.dropped and b.window.losses == 0


def test_a_drop_is_settled_after_a_quiet_pipeline_end_not_in_mid_pipeline():
    b = tracker([(1, b"a"), (1, b"b")], settle=0.005, lost_after=1.0)
    b.sent(0, now=0.0)
    b.sent(1, now=0.0)
    for m in dropped(10, 1) + forwarded(11, 1, 2)[:4]:    # 11 is in its ingress pipeline
        b.event(m, now=0.1)
    assert not b.done(0, now=0.104) and b.done(0, now=0.106)
    assert not b.done(1, now=0.5)                          # not an end: wait for it
    assert b.done(1, now=1.2)                              # given up after lost_after
    [r0, r1] = b.results()
    assert r0.trace.dropped and r0.outputs == []
    assert any("events were lost" in str(e.value) for e in r1.trace.events)


def test_a_forwarded_packet_whose_egress_never_comes_is_reported_lost():
    """Its ingress forwarded it: waited for up to lost_after, then given up, saying so
    (not a silent "dropped by the program"), and the window shrinks."""
    b = BatchTracker(_fates(), [(1, b"a")], reaches=lambda port: True, lost_after=3.0)
    b.sent(0, now=0.0)
    for m in _ingress(10, 3):                                  # fwd: egress_spec set
        b.event(m, now=0.0)
    assert not b.done(0, now=2.9) and b.done(0, now=3.0)
    [r] = b.results()
    assert r.outputs == [] and b.window.losses == 1
    assert any("taken as lost" in str(e.value) for e in r.trace.events if e.kind == "note")


class _Clock:
    """time for bmv2_switch: each reading is *step* s after the last (sfclab descheduled,
    or paused, between any two steps of its loop); sleeping takes no time."""

    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def monotonic(self) -> float:
        self.t += self.step
        return self.t

    def sleep(self, _s: float) -> None:
        pass


class _Replay:
    """A switch's event socket and packet socket replaying what it sent, one chunk a read."""

    def __init__(self, events: list[list[bytes]], frames: list[list[tuple[int, bytes]]]):
        self.events, self.frames = events, frames
        self.sent: list = []

    def poll_events(self) -> list[bytes]:
        return self.events.pop(0) if self.events else []

    def poll_frames(self) -> list[tuple[int, bytes]]:
        return self.frames.pop(0) if self.frames else []


def test_a_slow_sfclab_takes_no_silence_of_its_own_for_the_switchs(monkeypatch):
    """The egress events of a packet whose ingress does not tell its fate came while sfclab
    was descheduled between two reads: they wait unread.  The packet is quiet since its
    ingress only as far as the last read tells, so it is not taken for dropped."""
    import queue
    from types import SimpleNamespace

    from sfclab.targets.bmv2 import switch as bmv2_switch
    from sfclab.targets.bmv2.switch import Bmv2Switch

    ev = forwarded(0, 1, 2)
    # read by read: nothing (leftovers), its ingress, its egress with its frame
    rp = _Replay([[], ev[:7], ev[7:]], [[], [], [(2, b"out")]])
    sw = Bmv2Switch.__new__(Bmv2Switch)
    sw.bmv2 = SimpleNamespace(device_id=0, cpu_port=255)
    sw._names, sw.window, sw._first_pid, sw.results = NAMES, Window(), 0, []
    sw._events = SimpleNamespace(poll=rp.poll_events, fileno=lambda: None)
    sw._ports = SimpleNamespace(poll=rp.poll_frames, fileno=lambda: None,
                                reaches=lambda port: True,
                                send=lambda port, frame: rp.sent.append((port, frame)))
    sw.client = SimpleNamespace(packet_ins=queue.Queue())
    monkeypatch.setattr(bmv2_switch, "time", _Clock(step=1.0))   # a second between steps
    [r] = sw._send_batch([(1, b"in")])
    assert rp.sent == [(1, b"in")]
    assert r.outputs == [(2, b"out")] and not r.trace.dropped


def test_settle_grows_with_the_waits_seen_between_pipelines():
    b = tracker([(1, b"a")], settle=0.005)
    b.sent(0, now=0.0)
    ev = forwarded(3, 1, 2)
    for m in ev[:7]:
        b.event(m, now=0.0)
    assert b.done(0, now=0.01) is True                     # looked dropped …
    for m in ev[7:]:
        b.event(m, now=0.05)                               # … but its egress came late
    b.output(2, b"x", now=0.05)
    assert b.settle_time == pytest.approx(0.15)
    [r] = b.results()
    assert r.outputs == [(2, b"x")] and r.trace.egress_port == 2


def test_multicast_copies_cpu_packets_and_unreached_ports():
    b = tracker([(1, b"a")], cpu_port=255)
    b.sent(0, now=0.0)
    ev = forwarded(8, 1, 2)
    for m in ev + [E.pack_message(E.PACKET_OUT, 255, packet_id=8, copy_id=1),
                   E.pack_message(E.PACKET_OUT, 9, packet_id=8, copy_id=2)]:
        b.event(m, now=0.0)
    b.output(2, b"x", now=0.0)
    assert not b.done(0, now=0.0)                          # the CPU copy is still to come
    b.output(255, b"cpu", now=0.0, packet_in="PacketIn")
    assert b.done(0, now=0.0)
    [r] = b.results()
    assert r.outputs == [(2, b"x"), (255, b"cpu")] and r.packet_ins == ["PacketIn"]
    assert [e.value for e in r.trace.events if e.kind == "packet_out"] == [2, 255, 9]


def test_a_lost_packet_out_does_not_shift_the_frames_after_it():
    """Frames follow PACKET_OUT events in order on a port; when the event logger drops one,
    the packet's frame is placed by the order packets left the egress pipeline (their
    DEPARSER_DONE), so no later packet takes its neighbour's frame and none is lost."""
    b = tracker([(1, b"a"), (1, b"b"), (1, b"c"), (1, b"d")], lost_after=0.5)
    for k in range(4):
        b.sent(k, now=0.0)
    for k in range(4):
        ev = forwarded(20 + k, 1, 2)
        for m in ev[:-1] if k == 1 else ev:                 # packet 1's PACKET_OUT lost
            b.event(m, now=0.01)
        b.output(2, b"ABCD"[k:k + 1], now=0.01)
    b.update(now=1.0)
    r = b.results()
    assert [x.outputs for x in r] == [[(2, b"A")], [(2, b"B")], [(2, b"C")], [(2, b"D")]]
    notes = [str(e.value) for e in r[1].trace.events if e.kind == "note"]
    assert any("PACKET_OUT event was lost" in n for n in notes)
    assert not any(e.kind == "note" for e in r[2].trace.events)


def test_a_frame_whose_packet_lost_every_event_goes_to_the_packet_it_comes_from():
    """All of packet 1's events were lost (it looks like nothing at all); its frame comes
    between packet 0's and packet 2's.  The frame is more like packet 1's input than like
    packet 2's, whose PACKET_OUT comes next: it is packet 1's, and packet 2 waits for its
    own."""
    ins = [bytes([k]) * 8 + b"payload-%d" % k for k in range(3)]
    outs = [b"\xee" * 8 + b"payload-%d" % k for k in range(3)]   # rewritten header, same rest
    b = tracker([(1, f) for f in ins], lost_after=0.5)
    for k in range(3):
        b.sent(k, now=0.0)
    for k in (0, 2):
        for m in forwarded(60 + k, 1, 2):
            b.event(m, now=0.01)
    for k in range(3):
        b.output(2, outs[k], now=0.01)
    b.update(now=1.0)
    r = b.results()
    assert [x.outputs for x in r] == [[(2, o)] for o in outs]
    assert any("PACKET_OUT event was lost" in str(e.value)
               for e in r[1].trace.events if e.kind == "note")
    assert not any(e.kind == "note" for e in r[2].trace.events)


def test_lost_packet_outs_on_several_ports_are_reported_not_guessed():
    b = tracker([(1, b"a"), (1, b"b"), (1, b"c")], lost_after=0.5)
    for k in range(3):
        b.sent(k, now=0.0)
    for k, out in enumerate((2, 3, 2)):
        ev = forwarded(30 + k, 1, out)
        for m in ev if k == 2 else ev[:-1]:                  # 0 and 1 lost theirs
            b.event(m, now=0.01)
        b.output(out, b"ABC"[k:k + 1], now=0.01)
    b.update(now=1.0)
    r = b.results()
    for k in range(3):
        assert any("may belong to a neighbour" in str(e.value)
                   for e in r[k].trace.events if e.kind == "note"), k


def test_the_window_halves_on_lost_events_and_grows_back():
    w = Window(8, max_size=10)
    b = tracker([(1, b"a"), (1, b"b")], window=w)
    b.sent(0, now=0.0)
    b.sent(1, now=0.0)
    ev = forwarded(1, 1, 2)
    for m in ev[:4] + ev[5:]:                               # TABLE_HIT lost
        b.event(m, now=0.0)
    for m in forwarded(2, 1, 2):
        b.event(m, now=0.0)
    b.output(2, b"x", now=0.0)
    b.output(2, b"y", now=0.0)
    b.update(now=0.0)
    assert (w.size, w.losses) == (5, 1)                     # 8 // 2, then + 1
    notes = [e.value for e in b.results()[0].trace.events if e.kind == "note"]
    assert notes and "pass 0" in notes[0] and "queue overflowed" in notes[0]
    for _ in range(20):
        w.whole()
    assert w.size == 10
    for _ in range(10):
        w.lost()
    assert w.size == 1


# -- on the stand-in ---------------------------------------------------------------------------

@pytest.fixture
def standins(tmp_path, monkeypatch):
    switch, p4c = install_standins(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(switch))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    return switch, p4c


def _traffic(gen, n: int) -> list[tuple[int, bytes]]:
    """*n* packets of the class (at most 250 different ones, repeated: building packets
    takes longer than sending them), and every fifth one of no class (dropped)."""
    from scapy.layers.inet import ICMP, IP
    from scapy.layers.l2 import Ether

    chains = gen.composition.compiled.chains
    [chain] = list(chains)
    some = [(cp.port, bytes(cp.packet)) for cp in packets_for(chain, min(n, 250), chains=chains)]
    out = [some[k % len(some)] for k in range(n)]
    stray = bytes(Ether() / IP(dst="10.9.9.9") / ICMP())
    return [(1, stray) if k % 5 == 4 else p for k, p in enumerate(out)]


def _blast(sw, packets) -> list[tuple[int, bytes]]:
    """Every packet onto the switch's packet-in socket at once (BMv2's PAIR socket takes
    one peer: the switch's own), outputs read only afterwards."""
    for port, frame in packets:
        sw._ports.send(port, frame)
    return sw._ports.collect(quiet=2.0, timeout=120)


#: The burst: 4,000 of its packets are forwarded, some three times what a switch nobody
#: reads lets through (its queues, its output buffer and the socket's: 1,272-1,348 came
#: out of bursts of 4,000 and 8,000 forwarded); 10,000 before took twice as long.
BURST = 5_000


def test_a_burst_without_back_pressure_loses_packets_the_batched_send_loses_none(standins):
    gen = generate(sfclab.compile(WEB))
    packets = _traffic(gen, BURST)
    with ModelTarget() as model:
        model.push(gen)
        want = [model.send(port, frame) for port, frame in packets]
    forwarded = sum(len(r.outputs) for r in want)
    assert 0 < forwarded < len(packets)

    with open_target("bmv2") as sw:
        sw.push(gen)
        got = _blast(sw, packets)
        log = Path(sw.bmv2.process.log_path).read_text()
    # the egress queue (64 packets) overflowed while nobody read the packet socket
    assert len(got) < forwarded, (len(got), forwarded)
    assert "its egress queue (port 1) is full: dropped" in log

    with open_target("bmv2") as sw:
        sw.push(gen)
        results = sw.send_many(packets)
        window = sw.window
    assert len(results) == len(packets)
    assert sum(len(r.outputs) for r in results) == forwarded
    assert window.losses == 0 and window.size > 1
    bad = [k for k, (a, b) in enumerate(zip(want, results)) if diff_traces(a.trace, b.trace)]
    assert not bad, (bad[:5], results[bad[0]].trace.text() if bad else "")


def test_at_bmv2s_event_queue_depth_no_output_is_silently_wrong(standins, tmp_path):
    """With the event logger on IPC (nanomsg PUB over a Unix socket: some 340 messages fit,
    as on a real BMv2) a subscriber that falls behind loses events under load, whole
    packets' included.  Frames are still told apart (by their order, their bytes): each
    packet's outputs are the model's, or its trace says why they may not be, and such
    packets stay few (one lost event does not shift every frame after it)."""
    from sfclab.targets.bmv2.target import Bmv2Target
    from sfclab.targets.bmv2.switch import Bmv2Switch

    gen = generate(sfclab.compile(WEB))
    packets = _traffic(gen, 2_000)
    with ModelTarget() as model:
        model.push(gen)
        want = [model.send(port, frame).outputs for port, frame in packets]
    target = Bmv2Target.start(ports="packet-in", event_logger=f"ipc://{tmp_path}/ev.ipc",
                              workdir=tmp_path / "w", timeout=30)
    with Bmv2Switch(target) as sw:
        sw.push(gen)
        results = sw.send_many(packets)
    assert len(results) == len(packets)
    silent = [k for k, (w, r) in enumerate(zip(want, results))
              if r.outputs != w and not any(e.kind == "note" for e in r.trace.events)]
    assert not silent, (silent[:5], results[silent[0]].trace.text())
    wrong = [k for k, (w, r) in enumerate(zip(want, results)) if r.outputs != w]
    assert len(wrong) <= len(packets) // 100, wrong[:20]


def test_send_many_for_any_target_and_the_ports(standins):
    gen = generate(sfclab.compile(WEB))
    packets = _traffic(gen, 6)
    with ModelTarget() as model, open_target("bmv2") as sw:
        model.push(gen)
        sw.push(gen)
        a, b = send_many(model, packets), send_many(sw, packets)
        one = sw.send(*packets[0])
        assert sw.switch_ports() == model.switch_ports() == tuple(range(1, 9))
        assert len(sw.results) == len(packets) + 1
    assert [r.outputs for r in a] == [r.outputs for r in b]
    assert one.outputs == b[0].outputs and one.trace.packet_id == len(packets)


def test_pcap_ports_run_once_after_the_config_and_the_wait(standins, tmp_path):
    """BMv2 with --use-files starts reading its input files WAIT seconds after the first
    config is committed: run_pcap waits for that, as the live test did not."""
    gen = generate(sfclab.compile(WEB))
    packets = _traffic(gen, 5)
    with ModelTarget() as model:
        model.push(gen)
        want = [model.send(port, frame) for port, frame in packets]
    got = run_pcap(gen, packets, wait=2, workdir=tmp_path / "run")
    assert [r.outputs for r in got] == [r.outputs for r in want]
    assert all(not diff_traces(a.trace, b.trace) for a, b in zip(want, got))
    assert got[4].trace.dropped and (tmp_path / "run" / "pcap" / "port1_out.pcap").exists()
