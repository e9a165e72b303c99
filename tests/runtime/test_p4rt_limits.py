"""The model's P4Runtime server within bounds: its shutdown always completes (even
after a stream message it cannot decode), its error trailers fit gRPC's default
metadata limits however big the batch, and its open StreamChannels are bounded."""

from __future__ import annotations

import threading

import grpc
import pytest

from sfclab.lab import Lab
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
