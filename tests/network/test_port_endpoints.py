"""A free switch port as a chain's endpoint (``from s3:7``, ``to s3:7``): on the embedded
network a packet of a chain ``to s3:7`` leaves switch s3 by port 7 (the trace ends
there, egress ``s3:7``), ``send("s3:7", …)`` injects at that port, and a port the
topology links to something is refused, located in the chain text."""

from __future__ import annotations

import pytest
from netsupport import OneSwitch
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

import sfclab
from sfclab import Lab
from sfclab.errors import ChainValidationError, SfclabError, TargetError
from sfclab.ir.model import ChainSet
from sfclab.ir.topology import line
from sfclab.network import Network

CHAINS = """chain out match udp.dport == 80 from h1 to s3:7: firewall -> nat
chain in match tcp.sport == 80 from s3:7 to h1: monitor
"""


@pytest.fixture(scope="module")
def net():
    n = Network(line(3, stages=8), sfclab.parse(CHAINS))
    n.push()
    yield n
    n.close()


def test_a_packet_to_a_switch_port_leaves_the_network_by_it(net):
    pkt = net.class_traffic("out", 1).packets[0].packet
    nt = net.send("h1", "s3:7", pkt)
    assert nt.egress == "s3:7" and not nt.dropped, nt.text()
    assert nt.switches() == ["s1", "s2", "s3"] and nt.nfs() == ["firewall", "nat"]
    last_switch, port = nt.hops[-2], nt.hops[-1]
    assert last_switch.node == "s3" and last_switch.exits == (7,) and not last_switch.dropped
    assert (port.node, port.kind) == ("s3:7", "port")
    assert "out on port 7 (free: leaves the network)" in last_switch.text()
    assert nt.text().splitlines()[0].endswith("left the network at s3:7")
    assert nt.to_dict()["egress"] == "s3:7" and nt.to_dict()["hops"][-2]["exits"] == [7]
    # the bytes are the one-switch program's
    oracle = OneSwitch(ChainSet.of([net.chains["out"]]))
    try:
        r, path = oracle.send(1, pkt)
    finally:
        oracle.close()
    assert path == nt.path == "out/0" and r.output() == nt.output


def test_a_packet_sent_from_a_switch_port_enters_there(net):
    nt = net.send("s3:7", "h1")                      # the chain from s3:7 to h1: in
    assert nt.label == "in" and nt.source == "s3:7", nt.text()
    assert nt.hops[0].node == "s3" and nt.hops[0].in_port == 7
    assert nt.switches() == ["s3", "s2", "s1"] and nt.egress == "h1" and nt.nfs() == ["monitor"]
    pkt = Ether(dst="00:00:00:00:00:01") / IP(src="10.0.1.9", dst="10.0.0.1") / TCP(sport=80)
    assert net.send("s3:7", None, pkt).egress == "h1"             # a packet of one's own
    with pytest.raises(TargetError, match="port 1 of 's1' is linked to host 'h1'.*"
                                          "must be free"):
        net.send("s1:1", None, pkt)
    with pytest.raises(TargetError, match="switch 's1' has ports 1..64"):
        net.send("s1:99", None, pkt)
    with pytest.raises(TargetError, match="no host 's9'"):
        net.send("s9", None, pkt)


def test_a_linked_port_as_an_endpoint_is_refused_where_it_is_written():
    text = "chain c match tcp.dport == 80 from h1 to s3:1: nat\n"
    with pytest.raises(SfclabError, match="port 1 of 's3' is linked to host 'h2'"):
        Network(line(3), sfclab.parse(text)).placement
    lab = Lab()
    try:
        lab.set_topology("use line(3)\n")
        with pytest.raises(ChainValidationError) as e:
            lab.add(text)
        assert (e.value.line, e.value.column) == (1, 42)
        assert "chain 'c': port 1 of 's3' is linked to host 'h2'" in str(e.value)
        assert "hint: name 'h2' instead, or a free port of 's3' (s3:3)" in str(e.value)
        assert lab.chains.names() == []
    finally:
        lab.close()
