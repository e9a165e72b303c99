"""Shared pieces of the network tests: the fat-tree example, random placement
instances, and the one-switch oracle a packet's bytes are compared with."""

from __future__ import annotations

import random

import sfclab
from sfclab.codegen import generate
from sfclab.ir.model import ChainSet, linear_chain
from sfclab.ir.topology import fat_tree, leaf_spine, line, ring

#: Several chains on a fat tree (k=4) whose switches have 6 stages (4 for NFs once the
#: steering tables are in): branches, a multibranch with a bounded loop, a chain long
#: enough to be spread over four switches, and a chain that stays on one edge switch.
#: web's match names sources other than its ingress host's (10.0.0.1): its packets follow
#: the match (with a warning), out of the range the firewall's example ACL denies TCP from
#: (10/8).  sr enters at a free port of h2's edge switch: no host's address, so its
#: packets' sources are free to take each of the classifier's classes.
FAT_TREE_CHAINS = """
chain web match ipv4.src == 192.168.0.0/16 && ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.4 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain sr match ipv4.dst == 10.2.0.0/16 && udp.dport != 53 {
    input => classifier;
    classifier => (1@sr_encap : 2@heavy_hitter : 3@l3fwd # classifier.class_id);
    sr_encap => (self : l3fwd ? sr_encap.global_counter < 3);
    heavy_hitter => (cpu : l3fwd ? heavy_hitter.hitter_value >= 1000);
    l3fwd => output;
}
chain dns match udp.dport == 53: monitor -> qos -> stateful_firewall -> l3fwd
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }
"""
FAT_TREE_ENDS = {"web": ("h1", "h16"), "sr": ("e1_1:9", "h9"), "dns": ("h5", "h12"),
                 "mgmt": ("h3", "h4")}
#: The example's service paths that no packet of its class takes, and (part of) the reason
#: the coverage solver gives; every other path is driven by the tests.
FAT_TREE_UNREACHABLE = {
    # a packet of web's class comes from 192.168.0.0/16: the firewall's ACL denies none
    "web/1": "no packet found",
    # heavy_hitter.hitter_value counts the flow's packets: >= 1000 needs 1000 earlier ones
    "sr/1": "computed by heavy_hitter from its state, a meter or a hash, so it depends on "
            "earlier packets",
    # the classifier's example entries set class_id 0, 1 or 2 only
    "sr/3": "the classifier's entries never make classifier.class_id in {3}",
}


def check_coverage(plans, paths) -> set[str]:
    """The service paths the class traffic *plans* (chain -> ClassTraffic) drive: every
    one of *paths* but those of :data:`FAT_TREE_UNREACHABLE`, which are missed with
    their reason.  Returns the paths driven."""
    driven = {p for plan in plans.values() for p in plan.expected}
    missed = {p: why for plan in plans.values() for p, why in plan.missed.items()}
    assert set(missed) == set(FAT_TREE_UNREACHABLE), missed
    for p, why in FAT_TREE_UNREACHABLE.items():
        assert why in missed[p], (p, missed[p])
    assert driven == set(paths) - set(missed), (sorted(driven), sorted(paths))
    return driven


def fat_tree_example() -> tuple:
    """(topology, chains) of the fat-tree example."""
    cs = sfclab.parse(FAT_TREE_CHAINS)
    for c in cs:
        c.ingress, c.egress = FAT_TREE_ENDS[c.name]
    return fat_tree(4, stages=8), cs


#: NF types the random instances draw from (all offloadable, resources 2 to 6 stages).
TYPES = ("firewall", "nat", "l3fwd", "lb", "monitor", "qos", "heavy_hitter", "ipsg", "ids",
         "stateful_firewall")


def random_instance(seed: int):
    """A small random placement instance: a line, ring or leaf-spine with 7 to 14
    stages per switch, sometimes a server that runs dpi, and 2 to 6 linear chains
    of 1 to 4 NFs (repeats numbered) between random hosts."""
    rng = random.Random(seed)
    kind = rng.randrange(3)
    stages = rng.randint(7, 14)
    if kind == 0:
        t = line(rng.randint(2, 4), stages=stages)
    elif kind == 1:
        t = ring(rng.randint(3, 5), stages=stages)
    else:
        t = leaf_spine(2, 3, hosts=1, stages=stages)
    if rng.random() < 0.4:
        t.add_server("srv1", nfs=("dpi", "ips"))
        t.add_link("srv1", rng.choice(sorted(t.switches)))
    hosts = sorted(t.hosts)
    chains = []
    for i in range(rng.randint(2, 6)):
        nfs: list[str] = []
        for k in range(rng.randint(1, 4)):
            ty = rng.choice(TYPES + (("dpi",) if "srv1" in t else ()))
            nfs.append(ty if ty not in nfs else f"{ty}#{k + 2}")
        c = linear_chain(f"c{i}", nfs)
        c.ingress, c.egress = rng.sample(hosts, 2)
        chains.append(c)
    return t, ChainSet.of(chains)


class OneSwitch:
    """The chain set compiled for one switch, on the embedded model: what a packet of
    a chain's class must come out as, whatever the network does with it."""

    def __init__(self, chains) -> None:
        from sfclab.targets.model import ModelTarget

        self.target = ModelTarget()
        self.gen = generate(sfclab.compile(chains))
        self.target.push(self.gen)

    def send(self, port: int, packet):
        r = self.target.send(port, packet)
        return r, self.target.session.path_of(r.trace)

    def close(self) -> None:
        self.target.close()
