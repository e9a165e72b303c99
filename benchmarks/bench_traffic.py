"""Class traffic: the solver's check of a chain set, and coverage on the embedded model.

Run: python benchmarks/bench_traffic.py [--chains N] [--packets N]

* ``shadowed()``: the reachability check ``compile()`` runs on every chain set (which
  chains get no packets), on N chains with random prefix and port classifiers (so
  many overlap and some are shadowed), best of 5;
* ``all_class_traffic()``: candidates run through the oracle (the embedded model)
  until every service path of every class of ``sfclab/cli/demo.sfc`` has packets or the
  budget is spent; candidates per second and the time for the whole set.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.ir.validate import program_headers, shadowed
from sfclab.lang import default_catalog
from sfclab.targets.coverage import all_class_traffic

ROOT = Path(__file__).resolve().parents[1]


def random_set(n: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        net = f"10.{rnd.randint(0, 3)}.0.0/{rnd.choice([8, 16])}"
        port = rnd.choice([22, 53, 80, 443])
        proto = "tcp" if port != 53 else "udp"
        lines.append(f"chain c{i} match ipv4.dst == {net} && {proto}.dport == {port}: l3fwd")
    return "\n".join(lines)


def bench_shadowed(n: int) -> None:
    chains = sfclab.parse(random_set(n))
    parsed = program_headers(chains, default_catalog())
    best, found = float("inf"), []
    for _ in range(5):
        t = time.perf_counter()
        found = shadowed(chains, parsed=parsed)
        best = min(best, time.perf_counter() - t)
    print(f"shadowed(): {n} chains, {len(found)} get no packets: {best * 1000:.1f} ms")


def bench_coverage(packets: int) -> None:
    gen = generate(sfclab.compile((ROOT / "sfclab" / "cli" / "demo.sfc").read_text()),
                   options=CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3}))
    t = time.perf_counter()
    plans = all_class_traffic(gen, packets)
    took = time.perf_counter() - t
    tried = sum(p.tried for p in plans.values())
    paths = sum(len(p.paths) for p in plans.values())
    covered = sum(len(p.covered) for p in plans.values())
    print(f"all_class_traffic(): demo.sfc, {packets} packets per class: {covered} of {paths} "
          f"paths covered, {tried} candidates in {took:.2f} s ({tried / took:.0f} candidates/s, "
          "oracle start included)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chains", type=int, default=20)
    ap.add_argument("--packets", type=int, default=8)
    args = ap.parse_args()
    bench_shadowed(args.chains)
    bench_coverage(args.packets)


if __name__ == "__main__":
    main()
