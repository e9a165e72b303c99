"""A packet's outputs on BMv2 are collected until every copy the switch made of it is out.

BMv2 runs one egress pass per copy it makes (a multicast makes one per replica, each with a
copy id of its own) and logs a ``PACKET_OUT`` for each as its transmit thread sends it.  A
loaded switch sends a flood's replicas one by one with waits between them: sfclab must not
take the first replica for the whole packet and stop listening (a flood to ports 2-8 once
came back as ports 2, 5, 6 under load).  Here the tracker, on event streams built as BMv2
logs them, with the times given (no clock).  The whole path is proven on the stand-in BMv2 by
``tests/targets/test_examples_bmv2.py``: its switch pauses before each multicast's second
copy (``STANDIN_TX_PAUSE``), longer than any settle time sfclab allows, and every example,
every_nf.sfc's flood included, must come back as the model runs it.
"""

from __future__ import annotations

from sfclab.targets.bmv2 import events as E
from sfclab.targets.bmv2.batch import BatchTracker
from sfclab.targets.bmv2.events import NameMap

_TO = {"type": "field", "value": ["standard_metadata", "mcast_grp"]}
NAMES = NameMap.from_json({
    "pipelines": [{"name": "ingress", "id": 0, "tables": [{"name": "groups", "id": 1,
                                                            "key": [{}]}], "conditionals": []},
                  {"name": "egress", "id": 1, "tables": [{"name": "prune", "id": 2,
                                                           "key": [{}]}], "conditionals": []}],
    "actions": [{"name": "flood", "id": 3, "primitives": [{"op": "assign",
                                                            "parameters": [_TO, {}]}]},
                {"name": "prune", "id": 4, "primitives": [{"op": "mark_to_drop",
                                                            "parameters": []}]}]})


def _msg(t: int, *f: int, copy: int = 0) -> bytes:
    return E.pack_message(t, *f, packet_id=7, copy_id=copy)


def _flood(copies: int, pruned: tuple[int, ...] = ()) -> list[bytes]:
    """A multicast as simple_switch logs it: the ingress sets its group, then each replica
    (copy ids 1..) runs its egress (those in *pruned* drop theirs) and is deparsed."""
    out = [_msg(E.PACKET_IN, 1), _msg(E.PARSER_START, 0), _msg(E.PARSER_DONE, 0),
           _msg(E.PIPELINE_START, 0), _msg(E.TABLE_MISS, 1), _msg(E.ACTION_EXECUTE, 3), _msg(E.PIPELINE_DONE, 0)]
    for c in range(1, copies + 1):
        out += [_msg(E.PIPELINE_START, 1, copy=c)]
        out += [_msg(E.TABLE_MISS, 2, copy=c), _msg(E.ACTION_EXECUTE, 4, copy=c)] \
            if c in pruned else []
        out += [_msg(E.PIPELINE_DONE, 1, copy=c)]
        out += [] if c in pruned else [_msg(E.DEPARSER_START, 0, copy=c),
                                       _msg(E.DEPARSER_DONE, 0, copy=c)]
    return out


def _tracker(**kw) -> BatchTracker:
    b = BatchTracker(NAMES, [(1, b"in")], reaches=lambda port: True, settle=0.005, **kw)
    b.sent(0, now=0.0)
    return b


def _out(b: BatchTracker, copy: int, port: int, now: float) -> None:
    b.event(_msg(E.PACKET_OUT, port, copy=copy), now=now)
    b.output(port, b"x%d" % port, now=now)


def test_a_flood_is_complete_when_every_replica_is_out_however_late():
    b = _tracker()
    for m in _flood(3):
        b.event(m, now=0.0)
    _out(b, 1, 2, now=0.001)
    # a second after the first replica, long past any settle time: the other two are on
    # their way (their egress passes ran), so neither the packet nor the batch is done
    assert not b.done(0, now=1.0) and not b.finished(now=1.0, sent=1)
    assert b.unannounced(0) == 2
    _out(b, 2, 3, now=1.5)
    _out(b, 3, 4, now=2.0)
    assert b.done(0, now=2.0) and b.finished(now=2.1, sent=1)
    [r] = b.results()
    assert r.outputs == [(2, b"x2"), (3, b"x3"), (4, b"x4")]
    assert not [e for e in r.trace.events if e.kind == "note"]
    assert b.window.losses == 0


def test_replicas_whose_egress_drops_them_are_not_waited_for():
    b = _tracker()
    for m in _flood(3, pruned=(2,)):
        b.event(m, now=0.0)
    _out(b, 1, 2, now=0.0)
    assert not b.done(0, now=0.01)
    _out(b, 3, 4, now=0.01)
    assert b.done(0, now=0.01)
    [r] = b.results()
    assert r.outputs == [(2, b"x2"), (4, b"x4")]


def test_an_egress_still_running_is_waited_for():
    """The last event ends the egress of a replica that dropped its copy, while another's
    egress runs: not a drop of the packet."""
    b = _tracker()
    for m in _flood(1) + [_msg(E.PIPELINE_START, 1, copy=2), _msg(E.PIPELINE_START, 1, copy=3),
                          _msg(E.TABLE_MISS, 2, copy=3), _msg(E.ACTION_EXECUTE, 4, copy=3),
                          _msg(E.PIPELINE_DONE, 1, copy=3)]:
        b.event(m, now=0.0)
    _out(b, 1, 2, now=0.0)
    assert not b.done(0, now=1.0)
    for m in [_msg(E.PIPELINE_DONE, 1, copy=2), _msg(E.DEPARSER_START, 0, copy=2),
              _msg(E.DEPARSER_DONE, 0, copy=2)]:
        b.event(m, now=1.0)
    _out(b, 2, 3, now=1.0)
    assert b.done(0, now=1.0)
    assert b.results()[0].outputs == [(2, b"x2"), (3, b"x3")]


def test_replicas_that_never_come_are_reported_after_the_bound_not_dropped_silently():
    b = _tracker(lost_after=3.0)
    for m in _flood(7):
        b.event(m, now=0.0)
    for copy, port in ((1, 2), (4, 5), (5, 6)):
        _out(b, copy, port, now=0.0)
    assert not b.done(0, now=2.9) and b.done(0, now=3.0)
    [r] = b.results()
    assert [p for p, _ in r.outputs] == [2, 5, 6]
    notes = [str(e.value) for e in r.trace.events if e.kind == "note"]
    assert any("4 of the 7 copies the switch made of it did not come out within 3 s" in n
               for n in notes), notes
    assert b.window.losses == 1


def test_replicas_whose_egress_has_not_started_are_waited_for_when_the_group_is_known():
    """On BMv2 each replica runs its egress in an egress thread of its port: the first can be
    out before a descheduled thread starts another's.  The group the ingress chose tells
    how many copies are on their way (the multicast's trace goes to *replicas*)."""
    asked = []
    b = _tracker(replicas=lambda trace: asked.append(trace.packet_id) or 3)
    for m in _flood(1):
        b.event(m, now=0.0)
    _out(b, 1, 2, now=0.0)
    assert not b.done(0, now=1.0) and b.unannounced(0) == 2 and asked[-1] == 7
    for m in _flood(3)[-8:]:                       # copies 2 and 3, late
        b.event(m, now=1.0)
    _out(b, 2, 3, now=1.0)
    _out(b, 3, 4, now=1.0)
    assert b.done(0, now=1.0)
    assert [p for p, _ in b.results()[0].outputs] == [2, 3, 4]


def test_a_packet_the_ingress_did_not_multicast_is_not_given_a_groups_copies():
    b = _tracker(replicas=lambda trace: 7)
    drop = [_msg(E.PACKET_IN, 1), _msg(E.PARSER_START, 0), _msg(E.PARSER_DONE, 0),
            _msg(E.PIPELINE_START, 0), _msg(E.TABLE_MISS, 1), _msg(E.ACTION_EXECUTE, 3),
            _msg(E.TABLE_MISS, 1), _msg(E.ACTION_EXECUTE, 4), _msg(E.PIPELINE_DONE, 0)]
    for m in drop:                  # its group was set, then mark_to_drop decided last
        b.event(m, now=0.0)
    assert b.unannounced(0) == 0 and b.done(0, now=0.0)
    assert b.results()[0].trace.dropped


def test_the_group_sfclabs_flood_chose_tells_how_many_replicas_bmv2_makes():
    from types import SimpleNamespace

    from sfclab.runtime.replication import MulticastGroup
    from sfclab.targets.bmv2.switch import Bmv2Switch
    from sfclab.targets.traces.trace import Event, PacketTrace

    sw = Bmv2Switch.__new__(Bmv2Switch)
    sw.session = SimpleNamespace(groups={16385: MulticastGroup(16385, (2, 3, 4))})

    def trace(*args, pass_no: int = 0) -> PacketTrace:
        t = PacketTrace(packet_id=1, ingress_port=1)
        t.add(Event(kind="action", name="SfcIngress.slot0_flood.set_mcast_grp", args=args))
        t.add(Event(kind="pipeline_done", name="ingress", pass_no=pass_no))
        return t

    assert sw._replicas(trace(("grp", 16385))) == 3
    assert sw._replicas(trace(("grp", 7))) is None            # not a group sfclab wrote
    assert sw._replicas(trace()) is None                      # its argument unknown
    assert sw._replicas(trace(("grp", 16385), pass_no=1)) is None   # an earlier pass's
