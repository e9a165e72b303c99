"""How long a ``%%chain`` edit takes in Python before the live view can show it.

    python benchmarks/bench_live.py [--chains 20] [--repeat 3]

A notebook has a 20-chain set in a ``%%chain`` cell with its live view shown; the
user edits the cell so that one chain gains an NF no chain used before, and runs it
again.  What the magic does then (parse, compile, refresh every live view) is timed
per new NF, as the median of ``--repeat`` fresh processes (in each, every edit brings in
an NF that process has not parsed, as in a new kernel), twice: with the NF's P4 not
parsed yet (compiling parses it, for the warnings about chains no packet reaches), and
with the library's P4 parsed beforehand (:meth:`sfclab.Lab.parse_nfs`: what a kernel
does between cells after the first live view); plus an edit that brings in no new NF.
The browser side (the same edit, from running the cell to the view showing the new NF)
is measured by ``benchmarks/bench_live_browser.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time

NFS = ("firewall", "nat", "l3fwd", "l2fwd", "lb", "qos", "ipsg", "monitor")
#: NFs none of the chains of :func:`chain_set` use (each with P4 of its own), each brought in
#: by one edit.
NEW_NFS = ("heavy_hitter", "ids", "vgw", "stateful_firewall", "sr_encap", "classifier", "flood",
           "mac_learning", "reporter", "router")


def chain_set(n: int = 20, new_nf: str | None = None) -> str:
    """*n* one-line chains of 4 NFs from :data:`NFS`, each with a classifier; with
    *new_nf*, the first chain's second NF is replaced by it."""
    rnd = random.Random(3)
    out = []
    for c in range(n):
        nfs = rnd.sample(NFS, 4)
        if new_nf and c == 0:
            nfs[1] = new_nf
        out.append(f"chain c{c} match tcp.dport == {1000 + c}: " + " -> ".join(nfs))
    return "\n".join(out)


def _edit_ms(n: int, new_nf: str | None, *, parsed: bool = False) -> float:
    """One edit as the ``%%chain`` magic runs it: add the text, show the live view
    (*parsed*: the NF library's P4 parsed before the edit)."""
    from sfclab import Lab
    from sfclab.p4.catalog import P4Catalog, _load_dir
    from sfclab.p4.parser import library_dir

    # a fresh copy of the NF library, none of its P4 parsed yet: as in a new kernel
    lab = Lab(catalog=P4Catalog(_load_dir(library_dir() / "nf")))
    lab.add(chain_set(n), source="<cell>")
    lab.live_view()                                       # the view the first run showed
    if parsed:
        lab.parse_nfs()
    text = chain_set(n, new_nf) if new_nf else chain_set(n).replace("== 1000:", "== 999:")
    gc.collect()                                          # not the setup's garbage
    t0 = time.perf_counter()
    lab.add(text, source="<cell>")
    lab.live_view()
    ms = (time.perf_counter() - t0) * 1e3
    lab.close()
    return ms


def _worker(chains: int, parsed: bool) -> None:
    """One process: every row's edit once, as JSON (a list of ms, in :data:`NEW_NFS`
    order, then the edit without a new NF)."""
    _edit_ms(chains, None)                                # imports, grammar, NF library
    print(json.dumps([_edit_ms(chains, nf, parsed=parsed) for nf in (*NEW_NFS, None)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--worker", choices=("cold", "parsed"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.chains, args.worker == "parsed")
        return
    runs: dict[str, list[list[float]]] = {"cold": [], "parsed": []}
    for _ in range(args.repeat):
        for mode, out in runs.items():
            cmd = [sys.executable, __file__, "--chains", str(args.chains), "--worker", mode]
            out.append(json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                 text=True).stdout.splitlines()[-1]))
    print(f"| edit of a {args.chains}-chain %%chain cell (Python time to refresh the live view, "
          f"median of {args.repeat} processes) | NF's P4 not parsed yet | library's P4 parsed "
          f"before |")
    print("|---|---:|---:|")
    labels = [f"a chain gains {nf} (new to the set)" for nf in NEW_NFS]
    labels.append("a chain's classifier changes (no new NF)")
    for k, label in enumerate(labels):
        cold, warm = (statistics.median(r[k] for r in runs[m]) for m in ("cold", "parsed"))
        print(f"| {label} | {cold:.0f} ms | {warm:.0f} ms |")
    print(f"\nload average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
