"""Class packets: solved from the classifiers, built with the headers the class needs,
and classified into their chain by the switch (the embedded model)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import generate
from sfclab.ir.solve import regions
from sfclab.runtime.traffic import (ClassUnreachable, build_packet, candidates, class_regions,
                                    field_values, packets_for)
from sfclab.targets.model import ModelTarget

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traffic"
HELD_OUT = sorted(FIXTURES.glob("held_out_*.sfc"))


@pytest.fixture(scope="module")
def target():
    with ModelTarget() as t:
        yield t


def in_class(values: dict[str, int], chain, chains) -> bool:
    before = list(chains)[:list(chains).index(chain)]
    return (chain.match is None or chain.match.matches(values)) and not any(
        c.match is None or c.match.matches(values) for c in before)


@pytest.mark.parametrize("path", HELD_OUT, ids=lambda p: p.stem)
def test_held_out_classes_are_classified_into_their_chain_by_the_switch(target, path):
    """Issue 13.4: the classes sfclab called unreachable get packets, and the switch
    gives each of them (every header stack of the class) to the chain."""
    compiled = sfclab.compile(path.read_text())
    gen = generate(compiled)
    target.push(gen)
    assert not compiled.warnings
    for chain in compiled.chains:
        stacks = set()
        for cp in itertools.islice(candidates(chain, compiled.chains,
                                              parsed=gen.composition.headers), 40):
            r = target.send(cp.port, cp.packet)
            took = target.session.path_of(r.trace)
            assert took is not None and took.startswith(chain.name + "/"), \
                (chain.name, took, cp.packet.summary())
            assert in_class(field_values(cp.packet, cp.port), chain, compiled.chains)
            stacks.add(tuple(type(x).__name__ for x in cp.packet.iterpayloads()))
        if chain.name == "mgmt":     # tagged packets with IPv4 outside 10/8, and without IPv4
            assert all("Dot1Q" in s for s in stacks)
            assert any("IP" in s for s in stacks) and any("IP" not in s for s in stacks)


def test_packets_for_the_held_out_classes_leave_the_earlier_prefixes():
    cs = sfclab.parse((FIXTURES / "held_out_dns.sfc").read_text())
    for cp in packets_for(cs["dns"], 5, chains=cs):
        v = field_values(cp.packet, cp.port)
        assert v["udp.dport"] == 53
        assert v["ipv4.src"] >> 24 != 10 and v["ipv4.dst"] >> 24 != 10


def test_a_shadowed_class_is_refused_with_the_chains_that_take_it():
    cs = sfclab.parse("chain wide match ipv4.dst == 10.0.0.0/8: l3fwd\n"
                      "chain narrow match ipv4.dst == 10.1.0.0/16: l3fwd")
    with pytest.raises(ClassUnreachable, match=r"'narrow' gets no packets.*taken by 'wide'"):
        packets_for(cs["narrow"], 1, chains=cs)
    with pytest.raises(ClassUnreachable, match="matches no packet"):
        packets_for(sfclab.parse("chain c match tcp.dport == 1 && tcp.dport == 2: l3fwd")["c"])


def test_packets_for_keeps_the_defaults_the_nf_examples_expect():
    c = sfclab.parse("chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80: firewall")["web"]
    ps = packets_for(c, 3, seed=7)
    assert [p.port for p in ps] == [1, 1, 1]
    for p in ps:
        assert p.packet["Ether"].dst == "00:00:00:00:00:02"
        assert p.packet["IP"].dst.startswith("10.0.1.") and p.packet["TCP"].dport == 80
    assert [bytes(p) for p in ps] == [bytes(p) for p in packets_for(c, 3, seed=7)]


def test_the_port_avoids_the_cpu_port_unless_the_class_is_there():
    c = sfclab.parse("chain c match std.ingress_port == 250..260: l2fwd")["c"]
    ports = {cp.port for cp in itertools.islice(candidates(c), 60)}
    assert ports and ports <= set(range(250, 261)) - {255}
    only = sfclab.parse("chain c match std.ingress_port == 255: l2fwd")["c"]
    assert packets_for(only)[0].port == 255


@pytest.mark.parametrize("text, chain", [
    ("chain a match ipv4.src == 10.0.0.0/8: l2fwd\nchain m match vlan.vid == 4000: l2fwd", "m"),
    ("chain a match vxlan.vni == 7 && ipv4.dst == 10.0.0.0/8: l2fwd", "a"),
    ("chain a match ipv6.dst == 2001:db8::/32 && udp.dport == 53: l2fwd", "a"),
    ("chain a match eth.type == 0x88cc: l2fwd", "a"),
    ("chain a match tcp.flags == 0x12 && ipv4.dscp == 46 && ipv4.ttl == 3: l2fwd", "a"),
])
def test_built_packets_carry_the_region_values(text, chain):
    """build_packet and field_values agree: what the solver chose is what is sent."""
    cs = sfclab.parse(text)
    c = cs[chain]
    for r in class_regions(c, cs, parsed=None):
        w = r.witness()
        port = w.pop("std.ingress_port")
        got = field_values(build_packet(r.headers, w), port)
        assert {f: got[f] for f in w} == w, (str(r), w, got)
        assert in_class(got, c, list(cs))


def test_regions_follow_the_program_parser():
    """Without IPv6 in the program, a TCP class after an IPv4 protocol class is empty;
    with the parser unknown the solver does not claim so."""
    cs = sfclab.parse("chain t match ipv4.proto == 6: l3fwd\nchain w match tcp.dport == 80: l3fwd")
    assert list(regions(cs["w"].match, [cs["t"].match]))
    with pytest.raises(ClassUnreachable):
        class_regions(cs["w"], cs, parsed=generate(sfclab.compile(cs)).composition.headers)
