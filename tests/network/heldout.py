"""Kinds of network nobody here wrote the chains' placement for (issue 21): a
leaf-spine with an inspection server on a fixed port, switches too small for a
whole chain (chains split), chains crossing a ring with a server detour, a
hand-written campus with fixed ports, and a random fat tree with a server on a
core switch.  Each is a topology text and chains with ``from`` / ``to``;
:func:`check_every_class` sends every class packet end to end and checks it
against the chain run alone on one switch as the network runs it."""

from __future__ import annotations

import random

import sfclab

#: Building switches with room for nothing but the steering tables: whatever a chain
#: from alice or carol runs, it runs on the core.
CORE_CAMPUS = """
topology campus
switch bld1, bld2 stages 2 ports 8
switch core stages 12 ports 8
host alice 10.1.0.10 at bld1:3
host carol 10.2.0.30 at bld2:3
host printer 10.2.0.50 at bld2:5
link bld1:1 -- core:1
link bld2:1 -- core:2
"""

#: name -> (topology, chains)
NETWORKS = {
    "leaf_spine": ("""
topology dc
use leaf_spine(2, 4, hosts=2, stages=8)
server insp runs ips, dpi at spine2:9
""", """
chain web match tcp.dport == 80 from h1 to h6: firewall -> ips -> nat -> l3fwd
chain dns match udp.dport == 53 from h3 to h8: monitor -> dpi -> qos
chain guard match tcp.dport == 22 from h7 to h2: ipsg -> stateful_firewall
"""),
    "small_switches": ("""
topology small
use line(4, stages=8)
""", """
chain long match tcp.dport == 80 from h1 to h2: firewall -> nat -> heavy_hitter -> l3fwd
chain guard match udp.dport == 53 from h2 to h1: ipsg -> mac_learning -> monitor
"""),
    "ring": ("""
topology loop
use ring(5, stages=8)
server box runs ips at s3
""", """
chain across match tcp.dport == 443 from h1 to h4: firewall -> ips -> l3fwd
chain back match tcp.dport == 8080 from h5 to h2: ipsg -> ips -> monitor
chain near match udp.dport == 5353 from h2 to h3: qos -> nat
"""),
    "campus": ("""
topology campus
switch bld1, bld2 stages 4 ports 16
switch core_a, core_b stages 12 ports 16
host alice 10.1.0.10 at bld1:3
host bob 10.1.0.11 at bld1:4
host printer 10.2.0.50 at bld2
server insp runs ips, dpi at core_b:7
link bld1:1 -- core_a:1
link bld1:2 -- core_b:1
link bld2:1 -- core_a:2
link bld2:2 -- core_b:2
link core_a:3 -- core_b:3
""", """
chain print match tcp.dport == 9100 from alice to printer: ipsg -> firewall -> l3fwd
chain scan match tcp.dport == 9100 from bob to printer: mac_learning -> dpi -> monitor
chain back match udp.dport == 631 from printer to alice: ipsg -> qos
"""),
}

#: NF types the random fat tree's chains draw from (its server runs dpi and ips).
FAT_TREE_TYPES = ("firewall", "nat", "l3fwd", "lb", "monitor", "qos", "heavy_hitter", "ipsg",
                  "ids", "stateful_firewall", "mac_learning", "dpi", "ips")


def random_fat_tree(seed: int = 21, chains: int = 8) -> tuple[str, str]:
    """A k=4 fat tree with a server on core switch c1 and *chains* random chains of 1
    to 4 NFs between random hosts (each its own TCP port)."""
    rng = random.Random(seed)
    lines = []
    for i in range(chains):
        src, dst = rng.sample([f"h{k}" for k in range(1, 17)], 2)
        nfs = rng.sample(FAT_TREE_TYPES, rng.randint(1, 4))
        lines.append(f"chain r{i} match tcp.dport == {7000 + i} from {src} to {dst}: "
                     + " -> ".join(nfs))
    return ("use fat_tree(4, stages=8)\nserver dpi1 runs dpi, ips at c1\n",
            "\n".join(lines) + "\n")


NETWORKS["fat_tree"] = random_fat_tree()


def load(name: str) -> tuple:
    """(topology, chains) of held-out network *name*."""
    topo_text, chains_text = NETWORKS[name]
    topo = sfclab.parse_topology(topo_text)
    return topo, sfclab.parse(chains_text)


def check_every_class(net, n: int = 3, seed: int = 5, *, also=None) -> dict[str, int]:
    """Send *n* packets of every chain's class (covering its service paths) from its
    ingress; each must do what the chain alone does on one switch as the network runs
    it (:meth:`~sfclab.network.Network.one_switch`): the same NFs, delivered to the
    chain's egress with the same bytes on the service path the coverage solver
    expected, across the switches its journey names, or dropped where that switch
    drops it.  *also*: another network target running the same program (Mininet),
    sent each packet too: it must agree hop by hop.  Returns, per chain, how many
    packets were delivered."""
    from sfclab.runtime.traffic import contradicted, host_fields

    delivered = {}
    hosts = net.topology.hosts
    for chain in net.chains:
        src, dst = net.endpoints(chain.name)
        plan = net.class_traffic(chain.name, n, seed=seed)
        assert plan.packets, plan.text()
        own = host_fields(hosts.get(src), hosts.get(dst))
        for cp in plan.packets:          # the hosts' own addresses, but where the match says
            for f in contradicted(cp.packet, cp.port, own):
                assert any(f"({f})" in w for w in plan.warnings), (f, plan.text())
        delivered[chain.name] = 0
        with net.one_switch(chain.name) as alone:
            for cp, expected in zip(plan.packets, plan.expected):
                nt = net.send(src, None, cp.packet)
                r = alone.send(cp.packet)
                if also is not None:
                    got = also.send(src, cp.packet, label=chain.name)
                    assert (got.egress, got.output, got.nfs(), got.switches(), got.path) == \
                        (nt.egress, nt.output, nt.nfs(), nt.switches(), nt.path), \
                        (got.text(), nt.text())
                    assert [h.text() for h in got.hops] == [h.text() for h in nt.hops]
                assert nt.nfs() == r.trace.nfs(), (nt.text(), r.trace.nfs())
                journey = net.program.journeys[expected]
                switches = [s.node for s in journey if s.kind == "switch"]
                if r.outputs:
                    assert nt.egress == dst and nt.output == r.output(), nt.text()
                    assert nt.path == expected and nt.switches() == switches, nt.text()
                    delivered[chain.name] += 1
                else:
                    assert nt.dropped, nt.text()
                    assert nt.switches() == switches[:len(nt.switches())], nt.text()
                    assert nt.outcome().startswith(("dropped after", "dropped before")), \
                        nt.text()
    return delivered


def enough_delivered(delivered: dict[str, int], n: int = 3) -> bool:
    """At least half the packets sent (*n* per chain) were delivered: the others ran into
    an NF that drops them, as on one switch (a firewall's example ACL denies TCP from
    10.0.0.0/8, the generated hosts' addresses)."""
    return 2 * sum(delivered.values()) >= n * len(delivered)

