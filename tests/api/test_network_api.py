"""sfclab.Network, the two-step API: chains and a topology in, placement table,
push, send between hosts, tables of one switch, per-switch outputs, clear errors."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.errors import SfclabError, TargetError
from sfclab.ir.topology import leaf_spine, line

CHAINS = """
chain web match udp.dport == 80: firewall -> nat
chain dns match udp.dport == 53: monitor -> qos
"""


@pytest.fixture(scope="module")
def net():
    chains = sfclab.parse(CHAINS)
    chains["dns"].ingress, chains["dns"].egress = "h3", "h1"
    n = sfclab.Network(leaf_spine(2, 2), chains)
    yield n
    n.close()


def test_placement_table_says_where_and_which_endpoints_defaulted(net):
    text = str(net.placement)
    assert "exact" in text and "heuristic" in text
    assert "web  h1 -> h4 (default ingress and egress)" in text
    assert "dns  h3 -> h1  " in text


def test_send_between_hosts_picks_the_chain_from_its_endpoints(net):
    t = net.send("h3", "h1")                     # the chain from h3 to h1: dns
    assert t.label == "dns" and t.egress == "h1" and t.nfs() == ["monitor", "qos"]
    ts = net.send("h1", "h4", "web", n=3)
    assert [x.egress for x in ts] == ["h4"] * 3 and len(net.traces) >= 4
    with pytest.raises(SfclabError, match="(?s)no chain 'wbe'.*did you mean 'web'"):
        net.send("h1", "h4", "wbe")
    with pytest.raises(SfclabError, match="no chain runs from 'h2'"):
        net.send("h2", "h3")


def test_tables_of_a_switch(net):
    net.send("h1", "h4", "web")
    first = net.placement.chosen.chains["web"].route[0]
    occ = {o.table: o for o in net.tables(first)}
    assert occ["SfcIngress.initializer"].hits >= 1
    assert all(o.entries <= o.size for o in occ.values())


def test_export_writes_one_program_per_switch(net, tmp_path):
    paths = net.export(tmp_path)
    for s in net.topology.switches:
        assert (tmp_path / s / "program.p4").read_text().startswith("/* sfclab")
    assert tmp_path / "placement.txt" in paths


def test_a_network_of_tna_switches_is_not_run_embedded():
    n = sfclab.Network(line(2, arch="tna"), "chain a: firewall")
    try:
        assert n.program.switches["s1"].generated.arch == "tna"
        with pytest.raises(TargetError, match="runs v1model switches"):
            n.push()
    finally:
        n.close()


def test_a_network_targets_url_options_are_checked_and_typed():
    """Network.connect's URLs read as every target's (sfclab.targets.url_query): an unknown
    parameter gets a "did you mean", a bad value says what it must be, in the URL given."""
    from sfclab.api.network import open_network_target

    def refused(url: str) -> TargetError:
        with pytest.raises(TargetError) as e:
            open_network_target(url, line(2))
        return e.value

    e = refused("mininet?timeuot=3")
    assert (e.message, e.hint) == ("unknown parameter 'timeuot' in 'mininet?timeuot=3'",
                                   "did you mean 'timeout' or 'start_timeout'?")
    assert str(refused("mininet?timeout=soon")) == \
        "timeout must be a number in 'mininet?timeout=soon', not 'soon'"
    e = refused("mininet?switch=bvm2")
    assert (e.message, e.hint) == ("switch must be model or bmv2 in 'mininet?switch=bvm2', "
                                   "not 'bvm2'", "did you mean 'bmv2'?")
    e = refused("model?x=1")
    assert (e.message, e.hint) == ("unknown parameter 'x' in 'model?x=1'",
                                   "it takes no parameters")


def test_a_hosts_packets_carry_its_addresses_and_meet_the_acl_as_they_are():
    """Class traffic from h1 to h4 is h1's traffic to h4: their MACs and addresses.  The
    firewall's example ACL denies TCP from 10.0.0.0/8, h1's range: web's packets are
    dropped after the firewall (as the chain alone on one switch drops them), and those
    of the same NFs over UDP run the whole path and come out at h4."""
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether

    chains = sfclab.parse("chain web match tcp.dport == 80 from h1 to h4: firewall -> nat -> "
                          "l3fwd\nchain quic match udp.dport == 443 from h1 to h4: firewall -> "
                          "nat -> l3fwd")
    topo = leaf_spine(2, 2, stages=8)
    h1, h4 = topo.hosts["h1"], topo.hosts["h4"]
    with sfclab.Network(topo, chains) as n:
        for name in ("web", "quic"):
            plan = n.class_traffic(name, 3, seed=1)
            assert len(plan.packets) == 3 and not plan.warnings
            for cp in plan.packets:
                p = cp.packet
                assert (p[Ether].src, p[IP].src) == (h1.mac_text, h1.ip), p.summary()
                assert (p[Ether].dst, p[IP].dst) == (h4.mac_text, h4.ip), p.summary()
        for seed in range(2):
            web = n.send("h1", "h4", "web", n=3, seed=seed)
            assert all(t.outcome() == f"dropped after firewall ({t.switches()[-1]})"
                       for t in web), [t.text() for t in web]
            quic = n.send("h1", "h4", "quic", n=3, seed=seed)
            assert [t.egress for t in quic] == ["h4"] * 3, [t.text() for t in quic]
            assert all(t.nfs() == ["firewall", "nat", "l3fwd"] for t in quic)


def test_a_match_that_contradicts_the_hosts_addresses_is_followed_with_a_warning():
    """The issue's campus: ``guard`` matches sources in 192.168.0.0/16 but alice is
    10.20.0.5: its packets follow the match, and one warning (located at the chain)
    says which address they cannot carry; the destination (bob's) is kept."""
    import warnings

    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether

    from sfclab.errors import SourceWarning

    topo = sfclab.parse_topology("switch s1\nhost alice 10.20.0.5 at s1:1\n"
                                 "host bob 10.20.1.7 at s1:2\n")
    chains = "chain ok match udp.dport == 53 from alice to bob: monitor\n" \
             "chain guard match ipv4.src == 192.168.0.0/16 && udp.dport == 54 " \
             "from alice to bob: monitor"
    with sfclab.Network(topo, chains) as n, warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ok = n.class_traffic("ok", 2).packets
        n.send("alice", "bob", "guard", n=2)
        plan = n.class_traffic("guard", 2)
    said = [w.message for w in got if issubclass(w.category, SourceWarning)]
    assert len(said) == 1 and said[0].line == 2, [str(w) for w in said]
    assert "cannot carry alice's address 10.20.0.5 (ipv4.src)" in str(said[0])
    assert plan.warnings == (said[0].message,)
    assert all(p.packet[IP].src == "10.20.0.5" for p in ok)
    for cp in plan.packets:
        assert cp.packet[IP].src.startswith("192.168.") and cp.packet[IP].dst == "10.20.1.7"
        assert cp.packet[Ether].src == topo.hosts["alice"].mac_text
