"""The model's P4Runtime server within bounds: its shutdown always completes (even
after a stream message it cannot decode), its error trailers fit gRPC's default
metadata limits however big the batch, and its open StreamChannels are bounded."""

from __future__ import annotations

import threading

import grpc
import pytest

from sfclab.lab import Lab
from sfclab.runtime.client import INDEX_SPACE
from sfclab.targets.model.p4rt import P4RuntimeModelServer


def _undecodable_stream(address: str):
    """A StreamChannel that sends ``ff ff ff`` (no P4Runtime message) and stays open;
    returns its channel and the event that lets it end."""
    channel = grpc.insecure_channel(address)
    call = channel.stream_stream("/p4.v1.P4Runtime/StreamChannel")       # raw bytes
    hold = threading.Event()

    def requests():
        yield b"\xff\xff\xff"
        hold.wait()
    answers = call(requests())
    with pytest.raises(grpc.RpcError) as info:
        next(answers)
    assert info.value.code() == grpc.StatusCode.INTERNAL
    return channel, hold


def test_a_lab_closes_after_an_undecodable_stream_message():
    lab = Lab()
    lab.add("chain a: l2fwd")
    lab.push()
    channel, hold = _undecodable_stream(lab.target.address)
    closing = threading.Thread(target=lab.close, daemon=True)
    closing.start()
    closing.join(60)                  # a bound far above the server's own (grace + 2 s)
    hold.set()
    channel.close()
    assert not closing.is_alive(), "Lab.close() did not return"


def test_the_servers_stop_is_bounded_when_grpc_never_says_it_stopped():
    """What ``sfclab model-switch`` and ``Lab.close()`` call: grpcio's stop event that is
    never set (its fault after an undecodable message) does not hold it."""
    server = P4RuntimeModelServer()
    server.start()
    real = server._grpc

    class NeverStopped:
        def stop(self, grace):
            real.stop(grace)
            return threading.Event()
    server._grpc = NeverStopped()
    stopping = threading.Thread(target=server.stop, kwargs={"bound": 0.5}, daemon=True)
    stopping.start()
    stopping.join(60)
    assert not stopping.is_alive(), "the server's stop() did not return"
    assert server._grpc is None


# -- point 9: big refused batches, open streams -------------------------------------------------
def _big_batch(r, n):
    """*n* - 1 good updates (a register cell, again and again), then an INSERT of an
    entry that exists (refused)."""
    from finsy.proto import p4d, p4r

    from p4rt_rig import enc, update
    cell = update("MODIFY", p4r.RegisterEntry(register_id=r.obj_id("registers", "last_len"),
                                              index=p4r.Index(index=2),
                                              data=p4d.P4Data(bitstring=enc(7))))
    dup = update("INSERT", r.entry("l2", {"dst": 0x0b}, "fwd", {"port": 1}))
    return [cell] * (n - 1) + [dup]


@pytest.mark.parametrize("atomicity", ["ROLLBACK_ON_ERROR", "CONTINUE_ON_ERROR"])
@pytest.mark.parametrize("n", [150, 300, 20_000])
def test_a_default_grpc_client_reads_the_failure_of_a_big_refused_batch(primary, n, atomicity):
    from finsy.proto import rpc_code

    from p4rt_rig import update
    r = primary                          # its channel has gRPC's default limits
    r.ok(update("INSERT", r.entry("l2", {"dst": 0x0b}, "fwd", {"port": 1})))
    res = r.write(_big_batch(r, n), atomicity=atomicity)
    assert res.code == grpc.StatusCode.UNKNOWN, res.details
    failed = [e for e in res.errors if e.canonical_code not in (rpc_code.OK, rpc_code.ABORTED)]
    assert [e.canonical_code for e in failed] == [rpc_code.ALREADY_EXISTS]
    assert "already has an entry" in failed[0].message
    # one error per update while that fits, else the failed one with its index
    assert len(res.errors) == n or (failed[0].space, failed[0].code) == (INDEX_SPACE, n - 1)
    assert f"1 of {n} updates failed" in res.details
    if len(res.errors) != n:
        done = "rolled back" if atomicity == "ROLLBACK_ON_ERROR" else "applied"
        assert f"the other {n - 1:,} were {done}" in res.details


def test_sfclabs_client_names_the_failed_update_of_20000(primary):
    from sfclab.errors import RuntimeWriteError
    from sfclab.runtime.client import Client

    from p4rt_rig import update
    r = primary
    r.ok(update("INSERT", r.entry("l2", {"dst": 0x0b}, "fwd", {"port": 1})))
    with Client(r.server.address, election_id=20) as c:
        with pytest.raises(RuntimeWriteError) as info:
            c.write(_big_batch(r, 20_000), describe=lambda i: f"update #{i}")
    (f,) = info.value.failures
    assert (f.index, f.code, f.entity) == (19_999, "ALREADY_EXISTS", "update #19999")


def test_open_stream_channels_are_bounded(rig):
    from p4rt_rig import Stream
    server = rig.server
    streams = [rig.stream(10 + i) for i in range(server.max_streams)]
    extra = Stream(rig.stub, rig.device_id)
    assert extra.ended.wait(10)
    assert extra.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "close one" in extra.error.details()
    streams[0].close()                    # one leaves: a new one gets in
    for _ in range(100):
        if len(server._streams) < server.max_streams:
            break
        threading.Event().wait(0.05)
    late = rig.stream(99)
    assert late.error is None and not late.ended.is_set()
