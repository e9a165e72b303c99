"""P4Runtime in-process (sfclab.runtime.inprocess): the embedded model spoken to with the
same messages and the same answers as over gRPC, with no socket and no thread (what a Lab
uses where grpcio is missing: JupyterLite's kernel)."""

from __future__ import annotations

import threading

import pytest
from finsy.proto import p4i, p4r
from scapy.all import IP, TCP, Ether

import sfclab
from sfclab.codegen import generate
from sfclab.codegen.p4info import build_p4info
from sfclab.errors import RuntimeWriteError, TargetError
from sfclab.runtime.inprocess import InProcessClient
from sfclab.targets.model import ModelTarget
from sfclab.targets.model import target as model_target
from sfclab.targets.model.p4rt import P4RuntimeModelServer
from p4rt_rig import tagger_catalog

A = ("chain web match tcp.dport == 80: firewall -> nat -> l3fwd\n"
     "chain mgmt match vlan.vid == 100: l2fwd")
WEB = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.9") / TCP(dport=80)


def _read_all(target) -> list[bytes]:
    """Every table entry on *target*'s switch, as the server serializes them, sorted."""
    req = p4r.Entity()
    req.table_entry.SetInParent()
    return sorted(e.SerializeToString(deterministic=True) for e in target.client.read([req]))


@pytest.fixture(params=["grpc", "inprocess"])
def target(request):
    with ModelTarget(transport=request.param) as t:
        yield t


def test_both_transports_leave_the_switch_the_same():
    gen = generate(sfclab.compile(A))
    with ModelTarget(transport="grpc") as a, ModelTarget(transport="inprocess") as b:
        assert a.push(gen) == b.push(gen) == len(gen.entries)
        assert _read_all(a) == _read_all(b)
        assert repr(b) == "<ModelTarget model://in-process>" and a.address.startswith("127.0.0.1:")
        ra, rb = a.send(1, WEB), b.send(1, WEB)
        assert ra.trace.text() == rb.trace.text() and rb.ports == [1]
        assert [o.entries for o in a.occupancy()] == [o.entries for o in b.occupancy()]


def test_a_refused_batch_says_the_same_over_both(target):
    with pytest.raises(RuntimeWriteError) as info:
        cat = tagger_catalog(*range(17))           # 17 entries for a table of 16
        target.push(generate(sfclab.compile(sfclab.parse("chain t: tagger -> l3fwd",
                                                         catalog=cat), catalog=cat)))
    (failure,) = info.value.failures
    assert failure.code == "RESOURCE_EXHAUSTED" and "ttl=16" in failure.entity
    assert "tags holds 16, the program has 17" in info.value.message
    with pytest.raises(TargetError, match="FAILED_PRECONDITION"):
        _read_all(target)                           # refused before the program went in


def test_an_unknown_device_is_refused_at_arbitration():
    server = P4RuntimeModelServer(device_id=1)
    with pytest.raises(TargetError, match="refused this controller: NOT_FOUND: no device 7"):
        InProcessClient(server, device_id=7).connect()


def test_primary_and_backup_in_process():
    server = P4RuntimeModelServer()
    low = InProcessClient(server, election_id=1).connect()
    high = InProcessClient(server, election_id=5).connect()
    assert high.is_primary and not low.is_primary       # the answer came within connect()
    with pytest.raises(TargetError) as info:            # a backup cannot write
        low.set_pipeline(p4i.P4Info(), b"")
    assert info.value.status == "PERMISSION_DENIED"
    high.close()                                        # the primary leaves: low is told
    assert low.capabilities() == "1.4.0"
    low.close()


def test_no_thread_is_started_in_process(monkeypatch):
    """What Pyodide allows: nothing may start a thread (its start raises there)."""
    def refuse(self):
        raise RuntimeError("can't start new thread")

    gen = generate(sfclab.compile("chain l: mac_learning -> l2fwd"))
    (digest,) = build_p4info(gen.program.program).digests
    monkeypatch.setattr(threading.Thread, "start", refuse)
    with ModelTarget(transport="inprocess") as t:
        t.push(gen)
        batched = p4r.Update(type=p4r.Update.INSERT)     # lists of 10, or after 1 s: a timer
        batched.entity.digest_entry.digest_id = digest.preamble.id
        batched.entity.digest_entry.config.max_timeout_ns = 10**9
        batched.entity.digest_entry.config.max_list_size = 10
        t.client.write([batched])
        t.send(1, Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:09", type=0x9000))
        t.update(gen)
        assert t.occupancy()
        assert t.client.digests.qsize() == 1     # mac_learning's: sent at once, no timer


def test_a_lab_without_grpc_talks_in_process(monkeypatch):
    monkeypatch.setattr(model_target, "grpc_available", lambda: False)
    lab = sfclab.Lab()
    lab.add(A)
    try:
        lab.push()
        assert lab.target.transport == "inprocess"
        lab.send("web", 2)
        lab.send("mgmt", 2)
        assert [t.path for t in lab.traces] == ["web/0", "web/0", "mgmt/0", "mgmt/0"]
    finally:
        lab.close()


def test_unknown_transport():
    with pytest.raises(TargetError, match="unknown transport 'udp'"):
        ModelTarget(transport="udp")
