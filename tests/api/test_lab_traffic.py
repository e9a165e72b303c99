"""``lab.traffic(chain)``: packets keep going while a block changes the switches: on a
thread, or where no thread starts (the browser) one after every write to a switch; either
way no packet sees a mix of the old and the new chain."""

from __future__ import annotations

import threading

import pytest

import sfclab
from sfclab.errors import SfclabError
from sfclab.runtime import inprocess
from sfclab.targets.model import target as model_target

LONG = "chain web match tcp.dport == 80: firewall -> nat -> l3fwd"
SHORT = "chain web match tcp.dport == 80: firewall -> l3fwd"
RUNS = {("firewall", "nat", "l3fwd"), ("firewall", "l3fwd")}


def _flip(lab, times: int) -> list:
    plans = []
    for k in range(times):
        lab.add(SHORT if k % 2 == 0 else LONG)
        plans.append(lab.update())
    return plans


@pytest.fixture
def lab():
    lab = sfclab.Lab()
    lab.add(LONG)
    lab.push()
    yield lab
    lab.close()


def test_on_a_thread(lab):
    with lab.traffic("web") as traffic:
        plans = _flip(lab, 4)
        while len(traffic.sent) < 3:        # the thread has sent a few at least
            threading.Event().wait(0.01)
    assert traffic.mode == "thread" and {p.kind for p in plans} == {"entries"}
    assert {tuple(r.trace.nfs()) for r in traffic.packets} <= RUNS
    assert not any(r.dropped for r in traffic.packets)
    times = [t for t, _ in traffic.sent]
    assert times == sorted(times) and times[0] >= 0


def test_between_writes_where_no_thread_starts(monkeypatch):
    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(model_target, "grpc_available", lambda: False)   # as in Pyodide
    lab = sfclab.Lab()
    lab.add(LONG)
    lab.push()
    writes = []
    monkeypatch.setattr(threading.Thread, "start", refuse)
    try:
        with inprocess.between_writes(lambda: writes.append(1)):
            with lab.traffic("web") as traffic:
                _flip(lab, 2)
        assert traffic.mode == "between writes"
        assert len(traffic.sent) == len(writes) >= 6          # first, flip, last: each update
        runs = [tuple(r.trace.nfs()) for r in traffic.packets]
        assert set(runs) == RUNS                              # the old and the new, no mix
        assert not any(r.dropped for r in traffic.packets)
        sent = len(traffic.sent)
        _flip(lab, 1)                                         # after the block: none sent
        assert len(traffic.sent) == sent
    finally:
        lab.close()


def test_an_unknown_chain_is_refused_at_once(lab):
    with pytest.raises(SfclabError, match="no chain 'wbe'"):
        lab.traffic("wbe")
