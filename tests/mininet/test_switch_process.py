"""``sfclab model-switch --iface``: the embedded model as a switch process on real
interfaces, pushed over P4Runtime, compared frame by frame with the model run in
this process; its trace log; its refusals."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from mnsupport import model_switch
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether

import sfclab
from sfclab.codegen import generate
from sfclab.runtime.client import Client
from sfclab.runtime.session import Session
from sfclab.targets.model import ModelTarget
from sfclab.targets.model.process import RecordReader
from sfclab.targets.ports.interfaces import InterfacePorts


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sfclab", "model-switch", *args],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("args, message", [
    (["--iface", "eth0"], "cannot read the port 'eth0'"),
    (["--iface", "0@eth0"], "port 0 in '0@eth0' is not a v1model front-panel port"),
    (["--iface", "1@a", "--iface", "1@b"], "a port is given twice"),
    (["--iface", "255@a"], "CPU port 255 is also a data port"),
    (["--trace-log", "x.jsonl"], "--trace-log records the packets of a switch on interfaces"),
    (["--iface", "1@sfclab-nonesuch0"], "there is no network interface 'sfclab-nonesuch0'"),
])
def test_bad_model_switch_options_are_refused_with_the_reason(args, message):
    done = _cli("--grpc", "127.0.0.1:0", *args)
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr


FRAMES = [
    Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01") / IP(dst="10.0.0.2") / UDP() / b"x",
    Ether(dst="00:00:00:00:00:09", src="00:00:00:00:00:01") / IP(dst="10.0.0.9") / b"flood",
    Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=100) / IP(dst="10.0.0.2") / UDP() / b"tagged",
]


def test_the_switch_process_forwards_as_the_model_does(veths, tmp_path):
    (sw1, h1), (sw2, h2) = veths
    log = tmp_path / "trace.jsonl"
    proc, grpc = model_switch({1: sw1, 2: sw2}, tmp_path, "--trace-log", str(log))
    records = RecordReader(log)
    wire = InterfacePorts({1: h1, 2: h2})       # the far ends: what hosts would see
    oracle = ModelTarget(ports=(1, 2))
    client = Client(f"127.0.0.1:{grpc}", device_id=1).connect()
    try:
        wire.send(1, bytes(FRAMES[0]))           # nothing pushed yet: dropped, and said so
        assert wire.collect(quiet=0.3, timeout=2) == []
        (early,) = _wait(records, 1)
        assert early.outputs == [] and "no program pushed yet" in early.note

        gen = generate(sfclab.compile("chain a: l2fwd"))
        session = Session(client, lambda g: g.program.text.encode(), ports=lambda: (1, 2))
        assert session.push(gen) == oracle.push(gen)
        for frame in FRAMES:
            data = bytes(frame)
            wire.send(1, data)
            got = wire.collect(quiet=0.3, timeout=3)
            want = oracle.send(1, data)
            assert got == want.outputs and got, frame.summary()
            (rec,) = _wait(records, 1)
            assert (rec.port, rec.data, rec.outputs) == (1, data, want.outputs)
            assert rec.trace.nfs() == want.trace.nfs() == ["l2fwd"]
            assert rec.trace.tables() == want.trace.tables()
        # the VLAN tag crossed both veths (Linux strips it on receipt; the switch puts it back)
        assert got[0][1][12:14] == b"\x81\x00"

        # a packet-out from the controller leaves the interface its header names
        client.packet_out(bytes(FRAMES[0]), {1: (2).to_bytes(2, "big"), 2: b"\x00\x00"})
        assert wire.collect(quiet=0.3, timeout=3) == [(2, bytes(FRAMES[0]))]
        (out,) = _wait(records, 1)
        assert out.port == 255 and out.data is None and out.outputs == [(2, bytes(FRAMES[0]))]
    finally:
        client.close()
        wire.close()
        oracle.close()
        proc.popen.send_signal(signal.SIGTERM)
        status = proc.wait(10)
    assert status == 0, proc.tail()


def _wait(reader: RecordReader, n: int, timeout: float = 5.0) -> list:
    import time

    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += reader.read()
        time.sleep(0.01)
    return got
