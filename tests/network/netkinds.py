"""Networks of every kind the topology language makes, with random chains: a line of
small switches, a ring, a leaf-spine, a fat tree (generated), and a hand-written campus
whose hosts are in 10.20.0.0/16 (not the generators' 10.0.0.N), with a server and a
free switch port a chain leaves by.  Chains draw from the NFs a network is run with
(ipsg, nat, lb, l3fwd, firewall, qos, heavy_hitter, monitor), over TCP or UDP, from a
host to a host or to a free port; what :func:`network` returns is text (a ``.topo``
and a ``.sfc``), as ``sfclab diff-targets --topology`` reads it."""

from __future__ import annotations

import random

import sfclab

#: The NF types the chains draw from.
NF_TYPES = ("ipsg", "nat", "lb", "l3fwd", "firewall", "qos", "heavy_hitter", "monitor")

#: Kind -> the topology text (``small`` true: the smallest network of the kind, for
#: Mininet with BMv2 in the suite).
KINDS = {
    "line": lambda small: f"use line({2 if small else 4}, stages={14 if small else 9})\n",
    "ring": lambda small: "use ring(3, stages=10)\n",
    "leaf_spine": lambda small: f"use leaf_spine(2, {2 if small else 3}, hosts=1, stages=10)\n",
    "fat_tree": lambda small: f"use fat_tree({2 if small else 4}, stages=10)\n",
    "campus": lambda small: """topology campus
switch bld1, bld2 stages 10 ports 16
switch core stages 14 ports 16
host alice 10.20.0.5 at bld1:3
host bob 10.20.0.6 at bld1:4
host printer 10.20.1.50 at bld2:3
host lab 10.20.1.7 at bld2:4
server insp runs dpi, ips at core:9
link bld1:1 -- core:1
link bld2:1 -- core:2
link bld1:2 -- bld2:2
""",
}


def network(kind: str, seed: int = 0, *, chains: int = 3, small: bool = False
            ) -> tuple[str, str]:
    """``(topology text, chains text)`` of a network of *kind* with *chains* random
    chains of 1 to 3 NFs (each its own port and protocol), one of them (from the
    second on) to a free port of a switch."""
    rng = random.Random(f"{kind}/{seed}")
    topo_text = KINDS[kind](small)
    topo = sfclab.parse_topology(topo_text)
    hosts = sorted(topo.hosts)
    lines = []
    for i in range(chains):
        src, dst = rng.sample(hosts, 2)
        if i == chains - 1 and chains > 1:            # out of the network by a free port
            sw = rng.choice(sorted(topo.switches))
            dst = f"{sw}:{topo.free_port(sw)}"
        nfs = rng.sample(NF_TYPES, rng.randint(1, 3))
        proto = rng.choice(("tcp", "udp"))
        lines.append(f"chain k{i} match {proto}.dport == {6000 + i} from {src} to {dst}: "
                     + " -> ".join(nfs))
    return topo_text, "\n".join(lines) + "\n"


def load(kind: str, seed: int = 0, **kw) -> tuple:
    """(topology, chains) of :func:`network`."""
    topo_text, chains_text = network(kind, seed, **kw)
    return sfclab.parse_topology(topo_text), sfclab.parse(chains_text)
