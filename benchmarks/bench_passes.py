"""Benchmarks of the compiler passes; prints markdown tables.

    python benchmarks/bench_passes.py [--quick]

Inputs come from P4SC §IV-E's generator (``sfclab.passes.generate``: 15 NF
types, at most 3 branches per chain, fewer than 15 NFs per chain, an NF at most
once), seeded, so the figures are reproducible.  Takes about a minute.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time

from sfclab.compiler import compile
from sfclab.nfinfo import NFCatalog
from sfclab.p4.catalog import load_default
from sfclab.passes.generate import random_chains
from sfclab.passes.merge import merge_chains
from sfclab.passes.pipeline import mafsa_pipeline, make_pipeline, naive_pipeline, optimal_pipeline

UNIFORM = NFCatalog(dataclasses.replace(i, tables=1) for i in load_default())


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_merge() -> None:
    print("## merge (P4SC Algorithm 1) time\n")
    print("| chains | time (s) | LCS nodes | LCS tables | parallel tables |")
    print("|---:|---:|---:|---:|---:|")
    for n in (1, 10, 100, 1000):
        chains = random_chains(n, seed=n)
        t, ir = timed(lambda: merge_chains(chains), 3 if n < 1000 else 1)
        print(f"| {n} | {t:.3f} | {ir.lcs.nodes} | {ir.lcs.tables} | {ir.parallel.tables} |")
    print("\n## LCS merge tables as a share of the parallelism method, 128 chains\n")
    print("| tables per NF | seeds | LCS / parallel (mean) | min | max |")
    print("|---|---:|---:|---:|---:|")
    for name, cat in (("1 (P4SC's assumption)", UNIFORM), ("catalogue", load_default())):
        shares = []
        for seed in range(10):
            ir = merge_chains(random_chains(128, seed=seed), cat)
            shares.append(ir.lcs.tables / ir.parallel.tables)
        print(f"| {name} | 10 | {100 * statistics.mean(shares):.2f}% | "
              f"{100 * min(shares):.2f}% | {100 * max(shares):.2f}% |")
    print("\nP4SC reports 13.15% at 128 chains.\n")


def bench_pipeline(sets: int) -> None:
    print(f"## pipeline: weighted recirculations on {sets} random sets of 20 chains\n")
    rows = {k: ([], [], []) for k in ("naive", "MA-FSA order (1 slot per NF)",
                                        "MA-FSA pipeline (duplicates)",
                                        "local search from MA-FSA order (compile default)",
                                        "optimum (exact DP)")}
    for seed in range(sets):
        paths = random_chains(20, seed=1000 + seed).paths()
        t0 = time.perf_counter()
        naive = naive_pipeline(paths)
        t1 = time.perf_counter()
        mafsa = mafsa_pipeline(paths)
        t2 = time.perf_counter()
        dedup = make_pipeline("mafsa-order", list(dict.fromkeys(mafsa.slots)), paths)
        t3 = time.perf_counter()
        heur = optimal_pipeline(paths, seed=dedup.slots, exact_limit=0)
        t4 = time.perf_counter()
        opt = optimal_pipeline(paths, exact_limit=20)
        t5 = time.perf_counter()
        assert opt.exact and not heur.exact
        for key, p, dt in zip(rows, (naive, dedup, mafsa, heur, opt),
                              (t1 - t0, t3 - t1, t2 - t1, t4 - t3, t5 - t4)):
            rows[key][0].append(p.report.weighted_recirculations)
            rows[key][1].append(p.report.slots)
            rows[key][2].append(dt)
    print("| pipeline | weighted recirculations (mean) | worst set | slots (mean) | time (ms, mean) |")
    print("|---|---:|---:|---:|---:|")
    for key, (rec, slots, dts) in rows.items():
        print(f"| {key} | {statistics.mean(rec):.3f} | {max(rec):.3f} | "
              f"{statistics.mean(slots):.1f} | {1000 * statistics.mean(dts):.1f} |")
    print()


def bench_compile() -> None:
    chains = random_chains(20, seed=7)
    compile(chains)                                   # warm caches
    runs = []
    for _ in range(20):
        t = time.perf_counter()
        out = compile(chains)
        runs.append(time.perf_counter() - t)
    print("## end-to-end compile(), 20 chains (v1model)\n")
    print("| runs | median (ms) | max (ms) | paths | pipeline | slots |")
    print("|---:|---:|---:|---:|---|---:|")
    print(f"| {len(runs)} | {1000 * statistics.median(runs):.1f} | {1000 * max(runs):.1f} | "
          f"{len(out.paths)} | {out.pipeline.chosen.method} | {out.pipeline.chosen.report.slots} |")
    print()


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    start = time.perf_counter()
    print("# sfclab pass benchmarks\n")
    bench_merge()
    bench_pipeline(10 if quick else 100)
    bench_compile()
    print(f"total benchmark time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
