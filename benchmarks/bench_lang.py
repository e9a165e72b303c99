"""Parse + validate 1,000 chains of 10 NFs each (issue 2's target: under 0.5 s here).

Run: python benchmarks/bench_lang.py [--chains N] [--repeat R]

The chains mix the primitives a user writes: sequences, an if-else, a multibranch,
a bounded loop and a classifier on every chain.  The figure is the best of R runs
of `sfclab.parse` on the whole text (grammar already loaded), plus the service-path
expansion that `sfclab check` prints.
"""

from __future__ import annotations

import argparse
import random
import time

import sfclab
from sfclab.p4.catalog import load_default

NFS = [i.name for i in load_default() if i.offload != "non" and i.name not in ("classifier", "router")]


def make_text(n_chains: int, n_nfs: int = 10, seed: int = 1) -> str:
    rnd = random.Random(seed)
    out = []
    for c in range(n_chains):
        nfs = rnd.sample(NFS, n_nfs)
        body = [f"input => {nfs[0]};"]
        for i, nf in enumerate(nfs[:-1]):
            nxt = nfs[i + 1]
            r = rnd.random()
            if r < 0.15:
                body.append(f"{nf} => ({nxt} : drop ? {nf}.global_metadata == {rnd.randint(0, 9)});")
            elif r < 0.25:
                body.append(f"{nf} => (0@{nxt} : 1@cpu : 2@drop # {nf}.global_metadata);")
            elif r < 0.3:
                body.append(f"{nf} => (self : {nxt} ? {nf}.global_counter < {rnd.randint(2, 4)});")
            else:
                body.append(f"{nf} => {nxt};")
        body.append(f"{nfs[-1]} => output;")
        out.append(f"chain c{c} match tcp.dport == {rnd.randint(1, 65535)} && "
                   f"ipv4.dst == 10.{rnd.randint(0, 255)}.0.0/16 {{\n    "
                   + "\n    ".join(body) + "\n}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    text = make_text(args.chains)
    sfclab.parse("chain warm: l2fwd")  # load the grammar and the NF catalogue once
    best_parse = best_all = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        chains = sfclab.parse(text)
        t1 = time.perf_counter()
        paths = chains.paths()
        t2 = time.perf_counter()
        best_parse, best_all = min(best_parse, t1 - t0), min(best_all, t2 - t0)
    print(f"| chains | NFs/chain | lines | parse+validate | + service paths | paths |")
    print(f"|---|---|---|---|---|---|")
    print(f"| {len(chains)} | 10 | {text.count(chr(10)) + 1} | {best_parse * 1e3:.0f} ms "
          f"| {best_all * 1e3:.0f} ms | {len(paths)} |")


if __name__ == "__main__":
    main()
