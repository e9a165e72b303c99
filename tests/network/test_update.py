"""Network-wide updates: entries only where the slots stay, consistent for every
packet (old configuration on every switch, or new on every switch), all or nothing."""

from __future__ import annotations

import threading

import pytest

import sfclab
from sfclab.errors import RuntimeWriteError, TargetError, UpdateFailure
from sfclab.ir.topology import line
from sfclab.network import Network

OLD = ["firewall", "nat", "lb"]
NEW = ["firewall", "lb"]


def _chains(nfs):
    return sfclab.parse(f"chain web match udp.dport == 80: {' -> '.join(nfs)}\n"
                        "chain other match udp.dport == 53: monitor")


@pytest.fixture
def net():
    # 6 NF stages per switch: web's NFs go over the three switches
    n = Network(line(3, stages=8), _chains(OLD))
    n.push()
    yield n
    n.close()


def _entries(net):
    return {s: sorted(map(str, t.session.read_entries())) for s, t in net.target.switches.items()}


def test_a_changed_chain_is_an_entries_only_update(net):
    before = net.send("h1", "h2", "web")
    assert before.nfs() == OLD and len({h.node for h in before.hops if h.nfs}) >= 2
    other = net.send("h1", "h2", "other").hops
    plan = net.update(_chains(NEW))
    assert plan.kind == "entries" and not plan.reloads(), str(plan)
    after = net.send("h1", "h2", "web")
    assert after.nfs() == NEW and after.egress == "h2"
    assert net.program.spis["web/0"] != before.hops[0].header[0]      # new service path id
    # the chain that did not change kept its service path and its entries
    assert net.send("h1", "h2", "other").hops[0].header == other[0].header


def test_new_slots_need_a_reload(net):
    with pytest.raises(TargetError, match="needs a program reload on"):
        net.update(_chains(["heavy_hitter"]))
    assert net.send("h1", "h2", "web").nfs() == OLD                   # nothing changed
    plan = net.update(_chains(["heavy_hitter"]), allow_reload=True)
    assert plan.reloads()
    assert net.send("h1", "h2", "web").nfs() == ["heavy_hitter"]


def test_an_in_flight_packet_finishes_on_the_old_configuration(net, monkeypatch):
    """A packet classified before the flip runs the old NFs on every switch, even
    when the update happens while it is between switches; one sent after the flip
    runs the new ones: never a mix, never a loss."""
    mid = net.program.journeys["web/0"][1].node
    target = net.target.switches[mid]
    reached, go = threading.Event(), threading.Event()
    real = target.send
    held = {"done": False}

    def slow(port, data):
        if not held["done"]:
            held["done"] = True
            reached.set()
            assert go.wait(20)
        return real(port, data)

    monkeypatch.setattr(target, "send", slow)
    draining = threading.Event()
    drain = net.target.drain

    def watched_drain(*a, **kw):
        draining.set()                           # the classifier has flipped
        return drain(*a, **kw)

    monkeypatch.setattr(net.target, "drain", watched_drain)
    out = {}
    first = threading.Thread(target=lambda: out.setdefault("old", net.send("h1", "h2", "web")))
    first.start()
    assert reached.wait(20)                     # classified by the old entries, now in flight
    upd = threading.Thread(target=lambda: out.setdefault("plan", net.update(_chains(NEW))))
    upd.start()
    assert draining.wait(60)
    out["new"] = net.target.send("h1", _class_packet(net, "web"), label="web")
    assert upd.is_alive()                       # old entries stay while the packet is out
    go.set()
    first.join(20)
    upd.join(20)
    assert out["old"].nfs() == OLD and out["old"].egress == "h2"
    assert out["new"].nfs() == NEW and out["new"].egress == "h2"
    assert out["plan"].kind == "entries"
    old_spis = {h.header[0] for h in out["old"].hops if h.header}
    new_spis = {h.header[0] for h in out["new"].hops if h.header}
    assert len(old_spis) == len(new_spis) == 1 and old_spis != new_spis


def _class_packet(net, chain):
    from sfclab.runtime.traffic import packets_for

    return packets_for(net.chains[chain], 1, seed=99)[0].packet


def test_updates_under_traffic_never_mix_configurations(net):
    results, stop = [], threading.Event()

    def traffic():
        while not stop.is_set():
            results.append(net.target.send("h1", _class_packet(net, "web"), label="web"))

    t = threading.Thread(target=traffic)
    t.start()
    try:
        for nfs in (NEW, OLD, NEW):
            net.update(_chains(nfs))
    finally:
        stop.set()
        t.join(20)
    assert results
    for nt in results:
        assert not nt.dropped, nt.text()
        assert nt.nfs() in (OLD, NEW), nt.text()
        assert len({h.header[0] for h in nt.hops if h.header}) == 1, nt.text()
    assert {tuple(nt.nfs()) for nt in results} == {tuple(OLD), tuple(NEW)} or len(results) < 4


def test_a_failed_update_is_taken_back_on_every_switch(net, monkeypatch):
    before = _entries(net)
    victim = net.program.journeys["web/0"][-1].node
    session = net.target.switches[victim].session

    def fail(steps):
        if steps:
            raise RuntimeWriteError("1 of 1 updates failed", [UpdateFailure(
                index=0, code="RESOURCE_EXHAUSTED", message="table full", entity="")])

    monkeypatch.setattr(session, "write", fail)
    with pytest.raises(RuntimeWriteError):
        net.update(_chains(NEW))
    monkeypatch.undo()
    assert _entries(net) == before
    assert net.send("h1", "h2", "web").nfs() == OLD
    assert net.update(_chains(NEW)).kind == "entries"               # and it works afterwards
    assert net.send("h1", "h2", "web").nfs() == NEW


def test_an_update_cut_short_by_a_timeout_is_taken_back_on_every_switch(net):
    """The victim's first write is done but its answer times out: the network is read
    back to what ran before, everywhere, and the next update works."""
    from finsy.proto import rpc_code

    from sfclab.targets.model.p4rt.codec import _fail

    before = _entries(net)
    victim = net.program.journeys["web/0"][-1].node
    server = net.target.switches[victim].server
    write = server._write

    def late(req):
        server._write = write
        write(req)
        _fail(rpc_code.DEADLINE_EXCEEDED, "the answer came too late")
    server._write = late
    with pytest.raises(TargetError, match="DEADLINE_EXCEEDED.*taken back"):
        net.update(_chains(NEW))
    assert server._write is write                  # the fault fired
    assert _entries(net) == before
    assert net.send("h1", "h2", "web").nfs() == OLD
    assert net.update(_chains(NEW)).kind == "entries"
    assert net.send("h1", "h2", "web").nfs() == NEW
