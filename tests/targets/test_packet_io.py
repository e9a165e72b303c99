"""Packets on a real switch's ports: BMv2's packet-in socket and veth pairs."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import uuid

import pytest

from sfclab.errors import TargetError
from sfclab.targets.ports import packet_io as P

FRAME = bytes.fromhex("000000000002" "000000000001" "9000") + b"sfclab packet io"


# -- BMv2's packet-in messages ----------------------------------------------------------------------


def test_packet_in_message_layout():
    msg = P.pack_packet_in(7, FRAME)
    assert struct.unpack_from("<iii", msg) == (P.PACKET_IN, 7, len(FRAME))
    assert msg[12:] == FRAME


@pytest.mark.parametrize("msg,match", [
    (b"\x04\x00", "shorter than its 12-byte header"),
    (struct.pack("<iii", P.PACKET_OUT, 2, 10) + b"abc", "10 bytes left port 2, but 3 came"),
])
def test_malformed_packet_out(msg, match):
    with pytest.raises(TargetError, match=match):
        P.unpack_packet_out(msg)


def test_other_messages_are_not_packets():
    assert P.unpack_packet_out(struct.pack("<iiii", P.INFO_REP, 1, 1, 1)) is None


def test_nanomsg_ports_round_trip(tmp_path):
    """sfclab's end against a peer that plays BMv2's packet-in manager (PAIR, listening)."""
    import pynng

    addr = f"ipc://{tmp_path}/p.ipc"
    with pynng.Pair0(listen=addr, recv_timeout=3000) as switch:
        ports = P.NanomsgPorts(addr)
        try:
            ports.send(3, FRAME)
            assert switch.recv() == P.pack_packet_in(3, FRAME)
            for port in (1, 2):
                switch.send(struct.pack("<iii", P.PACKET_OUT, port, len(FRAME)) + FRAME)
            assert ports.collect(quiet=0.2, timeout=3) == [(1, FRAME), (2, FRAME)]
            assert ports.collect(quiet=0.05, timeout=1) == []
            assert "packet-in socket" in ports.describe()
        finally:
            ports.close()


def test_nanomsg_ports_need_no_library(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "pynng", None)
    ports = P.NanomsgPorts(f"ipc://{tmp_path}/none.ipc")
    assert ports.poll() == []
    with pytest.raises(TargetError, match="nothing listens at ipc://") as e:
        ports.send(1, FRAME)
    assert "--packet-in" in e.value.hint


def test_drain_reads_what_is_queued_even_without_waiting():
    queue = [[(1, b"a")], [(2, b"b")], []]
    assert P.drain(lambda wait: queue.pop(0), 0.0, 0.0) == [(1, b"a"), (2, b"b")]


# -- veth pairs --------------------------------------------------------------------------------------


def _fake_sysfs(root, links):
    """links: name -> (ifindex, iflink)."""
    for name, (index, link) in links.items():
        d = root / name
        d.mkdir()
        (d / "ifindex").write_text(f"{index}\n")
        (d / "iflink").write_text(f"{link}\n")
    return root


def test_veth_peer_from_sysfs(tmp_path):
    sysfs = _fake_sysfs(tmp_path, {"veth0": (5, 6), "veth1": (6, 5), "eth0": (2, 2)})
    assert P.veth_peer("veth0", sysfs=sysfs) == "veth1"
    assert P.veth_peer("veth1", sysfs=sysfs) == "veth0"
    with pytest.raises(TargetError, match="'eth0' is not one end of a veth pair"):
        P.veth_peer("eth0", sysfs=sysfs)
    with pytest.raises(TargetError, match="there is no network interface 'veth9'") as e:
        P.veth_peer("veth9", sysfs=sysfs)
    assert "ip link add" in e.value.hint


def _veth_pair():
    """A real veth pair (root), or a skip that says why not."""
    if os.geteuid() != 0:
        pytest.skip("veth pairs need root (not root here)")
    a, b = f"sfa{uuid.uuid4().hex[:6]}", f"sfb{uuid.uuid4().hex[:6]}"
    made = subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                          capture_output=True, text=True, check=False)
    if made.returncode:
        pytest.skip(f"cannot create a veth pair here: {made.stderr.strip()}")
    for name in (a, b):
        subprocess.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{name}.disable_ipv6=1"],
                       capture_output=True, check=False)
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
    return a, b


@pytest.fixture
def veth():
    a, b = _veth_pair()
    yield a, b
    subprocess.run(["ip", "link", "del", a], capture_output=True, check=False)


def test_veth_ports_send_on_the_peer_and_hear_the_switch(veth):
    switch_end, host_end = veth
    ports = P.VethPorts({4: switch_end})
    assert ports.peers == {4: host_end}
    sw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    sw.bind((switch_end, 0))
    sw.settimeout(3)
    try:
        ports.send(4, FRAME)                     # what the switch's port 4 receives
        while True:
            data, addr = sw.recvfrom(2048)
            if data == FRAME:
                break
        sw.send(FRAME[::-1][:14] + FRAME[14:])   # the switch sends out of port 4
        got = ports.collect(quiet=0.2, timeout=3)
        assert (4, FRAME[::-1][:14] + FRAME[14:]) in got
        assert all(frame != FRAME for _, frame in got)      # not our own frame back
        with pytest.raises(TargetError, match="port 9 is not attached to a veth"):
            ports.send(9, FRAME)
    finally:
        sw.close()
        ports.close()


def test_veth_ports_keep_the_vlan_tag_of_what_the_switch_sends(veth):
    """Linux takes a received frame's VLAN tag off (offload) and reports it beside the
    frame; VethPorts puts it back, so a VLAN class's output reads as it was on the wire."""
    switch_end, _ = veth
    tagged = bytes.fromhex("000000000002" "000000000001" "8100" "0064" "0800") + bytes(46)
    ports = P.VethPorts({4: switch_end})
    sw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    sw.bind((switch_end, 0))
    try:
        sw.send(tagged)
        assert (4, tagged) in ports.collect(quiet=0.2, timeout=3)
    finally:
        sw.close()
        ports.close()


@pytest.fixture
def two_veths():
    pairs = [_veth_pair(), _veth_pair()]
    yield pairs
    for a, _ in pairs:
        subprocess.run(["ip", "link", "del", a], capture_output=True, check=False)


def test_a_tofino_url_with_veth_ports_sends_packets(two_veths):
    """tofino://…&veth=… sends into the switch's veths and reports what came out; here a
    thread plays the switch's data plane (port 1 -> port 2) and sfclab's model server its
    P4Runtime server."""
    import threading

    from sfclab.targets.connect import open_target
    from sfclab.targets.model import start

    (sw1, _), (sw2, _) = two_veths
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    rx.bind((sw1, 0))
    rx.settimeout(0.1)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    tx.bind((sw2, 0))
    stop = threading.Event()

    def data_plane():
        while not stop.is_set():
            try:
                data, addr = rx.recvfrom(2048)
            except TimeoutError:
                continue
            if addr[2] != 4 and data.endswith(b"sfclab packet io"):
                tx.send(data[:12] + b"\x90\x01" + data[14:])

    thread = threading.Thread(target=data_plane, daemon=True)
    thread.start()
    server = start(device_id=0)
    try:
        with open_target(f"tofino://{server.address}?device_id=0&veth=1@{sw1},2@{sw2}") as t:
            r = t.send(1, FRAME)
            assert r.ports == [2] and r.output(2) == FRAME[:12] + b"\x90\x01" + FRAME[14:]
            assert r.trace.egress_port == 2 and r.trace.output == r.output(2)
            assert "keeps no per-packet event log" in r.trace.text()
            r = t.send(2, FRAME)                 # nothing forwards port 2's packets
            assert r.dropped and r.trace.drop_reason == "nothing came out"
    finally:
        stop.set()
        thread.join()
        rx.close()
        tx.close()
        server.stop()
