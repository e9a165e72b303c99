"""Every class packet of every chain, on every network target, for networks of every kind.

    sudo .venv/bin/python benchmarks/sweep_network_targets.py [--targets net,model,bmv2]
         [--seeds 2] [--packets 3]

The networks: the five held-out kinds of issue 21 (``tests/network/heldout.py``: a
leaf-spine with a server, a line of small switches, a ring with a server, a campus, a
random fat tree) and, per seed, a network of every kind ``tests/network/netkinds.py``
makes (line, ring, leaf-spine, fat tree, a hand-written campus in 10.20.0.0/16 with a
chain to a free port).  Each chain's class traffic (its ingress host's own packets) is
sent from its ingress; a packet *ran its path* on the embedded network (``net``) when it
does what the chain alone does on one switch as the network runs it (the same NFs;
delivered to the chain's egress with the same bytes on the service path the coverage
solver expected, or dropped where that switch drops it), and on Mininet (``model``: the
model as switch processes; ``bmv2``: real ``simple_switch_grpc``) when it also runs
there as on the embedded network (fate, egress, bytes, NFs, switches, service path).
Prints a Markdown table: per target and network, packets that ran their path.  Needs
root and Mininet for the Mininet targets, BMv2 and p4c for ``bmv2``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "tests" / "network"
sys.path.insert(0, str(HERE))

import heldout  # noqa: E402
import netkinds  # noqa: E402

from sfclab.network import Network  # noqa: E402
from sfclab.targets.network.connect import open_network_target  # noqa: E402
from sfclab.targets.network.diff import compare_traces  # noqa: E402

URLS = {"model": "mininet?switch=model", "bmv2": "mininet?switch=bmv2"}


def _alone_ok(net, chain: str, dst: str, cp, expected: str, nt, alone) -> bool:
    """Whether network trace *nt* does what the chain alone on one switch does."""
    r = alone.send(cp.packet)
    if nt.nfs() != r.trace.nfs():
        return False
    journey = net.program.journeys[expected]
    switches = [s.node for s in journey if s.kind == "switch"]
    if r.outputs:
        return (nt.egress == dst and nt.output == r.output() and nt.path == expected
                and nt.switches() == switches)
    return nt.dropped and nt.switches() == switches[:len(nt.switches())]


def run(name: str, topo, chains, targets: list[str], packets: int) -> dict[str, tuple[int, int]]:
    """``target -> (packets that ran their path, packets sent)`` for one network."""
    out = {t: [0, 0] for t in targets}
    with Network(topo, chains) as net:
        net.push()
        others = {}
        try:
            for t in targets:
                if t != "net":
                    others[t] = open_network_target(
                        f"{URLS[t]}&prefix=w{uuid.uuid4().hex[:3]}", topo)
                    others[t].push(net.program)
            for chain in net.chains:
                src, dst = net.endpoints(chain.name)
                plan = net.class_traffic(chain.name, packets)
                with net.one_switch(chain.name) as alone:
                    for cp, expected in zip(plan.packets, plan.expected):
                        nt = net.send(src, None, cp.packet)
                        ok = _alone_ok(net, chain.name, dst, cp, expected, nt, alone)
                        if "net" in out:
                            out["net"][0] += ok
                            out["net"][1] += 1
                        for t, target in others.items():
                            got = target.send(src, bytes(cp.packet), label=chain.name)
                            out[t][0] += ok and not compare_traces(nt, got)
                            out[t][1] += 1
        finally:
            for target in others.values():
                target.close()
    return {t: (a, b) for t, (a, b) in out.items()}


def networks(seeds: int):
    for name in sorted(heldout.NETWORKS):
        yield f"held-out {name}", *heldout.load(name)
    for seed in range(seeds):
        for kind in netkinds.KINDS:
            yield f"{kind} (seed {seed})", *netkinds.load(kind, seed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="net,model,bmv2")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--packets", type=int, default=3, help="packets per chain")
    args = ap.parse_args()
    targets = args.targets.split(",")
    warnings.simplefilter("ignore")
    print(f"| network | {' | '.join(targets)} |")
    print("|---|" + "---:|" * len(targets))
    total = {t: [0, 0] for t in targets}
    for name, topo, chains in networks(args.seeds):
        t0 = time.monotonic()
        got = run(name, topo, chains, targets, args.packets)
        for t, (a, b) in got.items():
            total[t][0] += a
            total[t][1] += b
        cells = " | ".join(f"{a}/{b}" for a, b in got.values())
        print(f"| {name} | {cells} |  <!-- {time.monotonic() - t0:.0f} s -->", flush=True)
    print("| **all** | " + " | ".join(f"**{a}/{b}**" for a, b in total.values()) + " |")


if __name__ == "__main__":
    main()
