"""Benchmarks of network-wide chains; prints markdown tables.

    python benchmarks/bench_network.py [--quick]

* placement on fat trees (k=4: 20 switches, 16 hosts; k=8: 80 switches, 128
  hosts; 12 stages and 64 tables per switch): the exact ILP (HiGHS, 60 s time
  limit) and the heuristic side by side — status, cost, time, gap to the
  optimum or to the ILP's bound.  Chains are drawn round-robin from six kinds
  (P4SC Table III's three real-world chains; a web chain with a drop branch, a
  DNS chain, a source-guard chain) between random hosts, seeded;
* packets per second through a chain split over three switches on the embedded
  network, next to the same chain on one embedded switch.

Targets: the heuristic places 1,000 chains on fat_tree(8) in under 10 s; the
exact solver solves 20 chains on fat_tree(4) within 60 s.  Takes about five
minutes (``--quick``: one minute, no 1,000-chain ILPs).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import sfclab
from sfclab.ir.model import Chain, ChainSet, linear_chain
from sfclab.ir.topology import fat_tree, line
from sfclab.passes.netplace import build_problem, solve_exact, solve_heuristic

KINDS = (Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "codegen"
         / "p4sc_table3.sfc").read_text() + """
chain web match tcp.dport == 443 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain dns match udp.dport == 53: monitor -> qos -> stateful_firewall -> l3fwd
chain guard match ipv4.proto == 17: ipsg -> heavy_hitter -> l3fwd
"""


def workload(topology, n: int, seed: int = 1) -> ChainSet:
    """*n* chains of the six kinds, round-robin, each between two random hosts."""
    kinds = list(sfclab.parse(KINDS))
    rng = random.Random(seed)
    hosts = sorted(topology.hosts)
    out = []
    for i in range(n):
        k = kinds[i % len(kinds)]
        a, b = rng.sample(hosts, 2)
        out.append(Chain(f"{k.name}_{i}", k.graph, match=k.match, ingress=a, egress=b))
    return ChainSet.of(out)


def _gap(cost: float, bound: float | None) -> str:
    if cost <= 0:
        return "0.00%"
    if not bound:
        return "(no bound)"
    return f"{100 * max(0.0, cost - bound) / cost:.2f}%"


def bench_placement(quick: bool) -> None:
    print("## Network placement: exact (ILP, HiGHS) vs heuristic\n")
    print("| topology | chains | solver | status | cost | lower bound | time (s) | gap |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    cases = [(4, 20), (4, 100), (8, 100), (4, 1000), (8, 1000)]
    builds = []
    for k, n in cases:
        topo = fat_tree(k)
        chains = workload(topo, n)
        t0 = time.perf_counter()
        problem = build_problem(topo, chains)
        t_build = time.perf_counter() - t0
        builds.append((k, n, t_build))
        heur = solve_heuristic(problem)
        exact = None
        if not (quick and n >= 1000):
            exact = solve_exact(problem, time_limit=60.0, start=heur.chains if heur.ok else None)
        best = exact.bound if exact is not None and exact.ok else None
        if exact is not None and exact.status == "optimal":
            best = exact.cost.total
        name = f"fat_tree({k})"
        for s in (exact, heur):
            if s is None:
                continue
            cost = f"{s.cost.total:.4g}" if s.ok else "-"
            secs = s.seconds + t_build
            why = f" ({s.reason})" if not s.ok and s.reason else ""
            gap = _gap(s.cost.total, best) if s.ok else ""
            lb = f"{s.bound:.4g}" if s.bound is not None else ""
            print(f"| {name} | {n} | {s.solver} | {s.status}{why} | {cost} "
                  f"| {lb} | {secs:.2f} | {gap} |")
    print("\nTimes include building the problem (below); the gap is to the ILP's optimum, or "
          "to its lower bound (HiGHS's dual bound) when it stopped at its time limit; the ILP "
          "starts from the heuristic's placement.\n")
    print("| topology | chains | problem build (s) |")
    print("|---|---:|---:|")
    for k, n, t_build in builds:
        print(f"| fat_tree({k}) | {n} | {t_build:.2f} |")
    print("\nBuilding the problem (`build_problem`): the candidate routes of every chain and "
          "the resources of every switch, once for both solvers.\n")


def bench_packets(n: int) -> None:
    from sfclab.codegen import generate
    from sfclab.network import Network
    from sfclab.runtime.traffic import packets_for
    from sfclab.targets.model import ModelTarget

    print(f"## Packets through a chain split over three switches ({n} packets)\n")
    chains = ChainSet.of([linear_chain("c", ["heavy_hitter", "qos", "nat"])])
    pkts = [bytes(cp.packet) for cp in packets_for(chains["c"], 50)]
    with Network(line(3, stages=8), chains) as net:     # 6 NF stages each: one NF per switch
        net.push()
        where = [s.node for s in net.program.journeys["c/0"] if s.nfs]
        assert where == ["s1", "s2", "s3"], where
        t0 = time.perf_counter()
        for i in range(n):
            nt = net.target.send("h1", pkts[i % len(pkts)])
        net_rate = n / (time.perf_counter() - t0)
        assert nt.egress == "h2"
    one = ModelTarget()
    try:
        one.push(generate(sfclab.compile(chains)))
        t0 = time.perf_counter()
        for i in range(n):
            one.send(1, pkts[i % len(pkts)])
        one_rate = n / (time.perf_counter() - t0)
    finally:
        one.close()
    print("| where | packets/s |")
    print("|---|---:|")
    print(f"| embedded network: s1 [heavy_hitter] → s2 [qos] → s3 [nat] | {net_rate:,.0f} |")
    print(f"| one embedded switch: heavy_hitter → qos → nat | {one_rate:,.0f} |")
    print("\nThe network runs each packet through three switch models (with the SFC header "
          "parsed, looked up in `arrival` and forwarded at each) and records a network-wide "
          "trace.\n")


def main() -> None:
    quick = "--quick" in sys.argv
    bench_placement(quick)
    bench_packets(500 if quick else 2000)


if __name__ == "__main__":
    main()
