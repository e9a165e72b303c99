"""The network diff (``sfclab diff-targets --topology``) on embedded networks: it reports
the first packet two targets run differently, and how; and the network target names
it takes (``net``, ``mininet?switch=…``)."""

from __future__ import annotations

import pytest
import sfclab
from sfclab.errors import TargetError
from sfclab.network import Network
from sfclab.targets.network import EmbeddedNetwork
from sfclab.targets.network.connect import open_network_target, target_name


class _Losing(EmbeddedNetwork):
    """An embedded network whose hosts never get a packet (as if the last link lost it)."""

    def send(self, host, packet, *, label=""):
        t = super().send(host, packet, label=label)
        if t.delivered:
            t.delivered = []
            t.hops[-1].dropped = "lost on the last link"
        return t


def test_a_difference_is_reported_with_the_packet_and_what_differs():
    chains = "chain a match udp.dport == 53 from h1 to h2: monitor\n" \
             "chain b match tcp.dport == 22 from h2 to h1: monitor"
    with Network(sfclab.parse_topology("use line(2)\n"), chains) as net:
        losing = _Losing(net.topology)
        try:
            report = net.diff_targets("net", losing, packets=1)
        finally:
            losing.close()
    assert not report.same and report.compared == 2 and len(report.divergences) == 2
    first = report.divergences[0]
    assert first.what[0].startswith("fate: delivered to ") and \
        first.what[0].endswith("lost on the last link"), first.what
    text = report.text()
    assert f"the first is packet {first.index} of {first.chain}:" in text, text
    assert "--- net:" in text and "service paths covered: 2 of 2" in text


def test_network_target_names():
    topo = sfclab.parse_topology("use line(2)\n")
    assert isinstance(open_network_target("net", topo), EmbeddedNetwork)
    assert target_name("mininet") == "mininet (model)" and target_name("model") == "net"
    with pytest.raises(TargetError, match="unknown network target 'bmv2'"):
        open_network_target("bmv2", topo)
