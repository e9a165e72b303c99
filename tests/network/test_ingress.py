"""Where a packet entered the network, wherever its NFs run: every point where a
chain enters has a network port, carried in the SFC header, which NFs read as
``sfc.ingress_port`` on every switch; NFs keyed on it get entries from the
topology (each host on its network port).  Every library NF placed off the
ingress switch (on a transit switch, on the egress switch) does to each class
packet what it does on the ingress switch."""

from __future__ import annotations

import pytest
from heldout import CORE_CAMPUS as CAMPUS
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

import sfclab
from sfclab.network import Network
from sfclab.p4.catalog import load_default

#: Every NF of the library that runs on a switch (the others run on servers only).
SWITCH_NFS = sorted(n for n in load_default().names() if load_default().definition(n).has_p4)
#: Where the NF must run: the switch with room for it (the others have only the
#: steering tables' 2 stages).
WHERE = {"ingress": "s1", "transit": "s2", "egress": "s3"}


def _line(room: str):
    stages = {s: (12 if s == room else 2) for s in ("s1", "s2", "s3")}
    return sfclab.parse_topology("topology room\n" + "".join(
        f"switch {s} stages {n}\n" for s, n in stages.items()) +
        "host h1 10.1.0.10 mac 00:00:00:00:01:0a at s1:3\nhost h3 10.3.0.30 at s3\n"
        "link s1 -- s2 -- s3\n")


def _own(net):
    """A packet h1 sends with its own addresses."""
    h1, h3 = net.topology.hosts["h1"], net.topology.hosts["h3"]
    return Ether(src=h1.mac_text, dst=h3.mac_text) / IP(src=h1.ip, dst=h3.ip) / TCP(dport=80)


def _digests(t):
    return [d for h in t.hops if h.kind == "switch" for d in getattr(h.source, "digests", ())]


@pytest.mark.parametrize("nf", SWITCH_NFS)
def test_every_library_nf_off_the_ingress_switch_does_what_it_does_on_it(nf):
    chain = f"chain c from h1 to h3: {nf}"
    nets = {pos: Network(_line(s), chain) for pos, s in WHERE.items()}
    try:
        for pos, s in WHERE.items():
            assert nets[pos].placement.chosen.chains["c"].describe().count(f"{s}[{nf}]") == 1, \
                nets[pos].placement.chosen.chains["c"].describe()
        plan = nets["ingress"].class_traffic("c", 4, seed=3)
        assert plan.packets, plan.text()
        for cp, expected in zip(plan.packets, plan.expected):
            got = {pos: net.send("h1", None, cp.packet) for pos, net in nets.items()}
            base = got["ingress"]
            if not base.dropped:
                assert base.path == expected, base.text()
            for pos in ("transit", "egress"):
                t = got[pos]
                assert (t.dropped, t.output, t.nfs(), t.path) == \
                    (base.dropped, base.output, base.nfs(), base.path), (pos, t.text(), base.text())
                assert WHERE[pos] in [h.node for h in t.hops if h.nfs], t.text()
        # a packet h1 sends with its own addresses, and one with a MAC nobody has
        port = nets["ingress"].program.ingress_ports["h1"]
        for pos, net in nets.items():
            own = net.send("h1", None, _own(net))
            stranger = net.send("h1", None, Ether(src="02:00:00:00:00:99") / _own(net).payload)
            if nf == "ipsg":        # its address is bound to where it enters
                assert own.egress == "h3", (pos, own.text())
            if nf == "mac_learning":    # its MAC is known where it enters; another is learnt
                assert not _digests(own), (pos, own.text())
                (d,) = _digests(stranger)
                assert sorted(d.data.values()) == [port, 0x020000000099], d
    finally:
        for net in nets.values():
            net.close()




def _tcp(src: str, dst: str = "10.2.0.50"):
    return Ether() / IP(src=src, dst=dst) / TCP(dport=9100)


def test_ipsg_on_a_core_switch_binds_each_host_to_where_it_entered():
    """alice and carol enter on port 3 of their building switches; ipsg runs on the
    core.  Each passes with her own address and is dropped with the other's: the
    core tells the two port 3s apart (a port number alone would not)."""
    chains = """
    chain a match tcp.dport == 9100 from alice to printer: ipsg
    chain c match tcp.dport == 9100 from carol to printer: ipsg
    """
    with Network(sfclab.parse_topology(CAMPUS), chains) as net:
        assert net.placement.chosen.chains["a"].describe() == "bld1 core[ipsg] bld2"
        ports = net.program.ingress_ports
        assert sorted(ports) == ["alice", "carol"] and ports["alice"] != ports["carol"]
        own = net.send("alice", None, _tcp("10.1.0.10"))
        assert own.egress == "printer" and own.nfs() == ["ipsg"], own.text()
        assert net.send("carol", None, _tcp("10.2.0.30")).egress == "printer"
        for src, spoofed in (("alice", "10.2.0.30"), ("carol", "10.1.0.10"),
                             ("alice", "10.0.0.1")):
            t = net.send(src, None, _tcp(spoofed))
            assert t.dropped and t.drop_reason.startswith("core"), t.text()
        # the core's bindings are the topology's hosts on their network ports
        binds = sorted((dict(e.match)["sfc.ingress_port"].value, dict(e.match)[
            "hdr.ipv4.src_addr"].value) for e in net.program.switches["core"].generated.entries
            if e.table.endswith("ipsg.bindings"))
        assert binds == sorted([(ports["alice"], 0x0A01000A), (ports["carol"], 0x0A02001E)])


def test_the_class_packets_of_a_chain_through_ipsg_pass_it_off_the_ingress_switch():
    """The issue's chain: its class packets come from alice's address, and ipsg on the
    core lets them through (firewall's example ACL then denies TCP from 10/8, as it
    does on one switch)."""
    chains = "chain print match tcp.dport == 9100 from alice to printer: ipsg -> l3fwd"
    with Network(sfclab.parse_topology(CAMPUS), chains) as net:
        plan = net.class_traffic("print", 2)
        for cp in plan.packets:
            t = net.send("alice", None, cp.packet)
            assert t.egress == "printer" and t.nfs() == ["ipsg", "l3fwd"], t.text()
            assert t.hop("core").nfs[:1] == ("ipsg",)


def _by_id(info):
    """*info* with each list in id order (p4c lists a table's actions where it meets
    them; the P4Runtime server looks them up by id), and NoAction's annotations
    left out (sfclab writes ``@corelib`` on it as older p4c did; p4c 1.2.5.16 does
    not: a difference of the P4Info builder, not of the network's programs)."""
    for a in info.actions:
        if a.preamble.name == "NoAction":
            del a.preamble.annotations[:]
    for name in ("tables", "actions", "counters", "direct_counters", "meters", "registers",
                 "digests", "controller_packet_metadata"):
        items = sorted(getattr(info, name), key=lambda x: x.preamble.id)
        del getattr(info, name)[:]
        getattr(info, name).extend(items)
    return info


@pytest.mark.bmv2
def test_the_real_p4c_accepts_every_switch_program_with_ingress_nfs_off_the_ingress(tmp_path):
    """Every switch's program (ipsg and mac_learning on the core, the classifier's
    set_token with the network port) compiles with p4c-bm2-ss; its P4Info is
    sfclab's."""
    from sfclab.codegen.p4c import compile_program, compiler_p4info, find_compiler
    from sfclab.codegen.p4info import build_p4info

    if find_compiler("v1model") is None:
        pytest.skip("p4c-bm2-ss not installed (live test)")
    chains = """
    chain a match tcp.dport == 9100 from alice to printer: ipsg -> mac_learning
    chain c from carol to printer: mac_learning -> firewall
    """
    with Network(sfclab.parse_topology(CAMPUS), chains) as net:
        assert {"ipsg", "mac_learning"} <= set(net.program.switches["core"].slots)
        for s, sp in net.program.switches.items():
            res = compile_program(sp.generated, "v1model", tmp_path / s, what="BMv2")
            assert res.ok
            theirs = compiler_p4info(tmp_path / s / "p4info.p4c.txt")
            assert _by_id(theirs) == _by_id(build_p4info(sp.generated.program.program)), s
