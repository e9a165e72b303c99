"""How long a ``%%chain`` edit takes in Python before the live view can show it.

    python benchmarks/bench_live.py [--chains 20] [--repeat 3]

A notebook has a 20-chain set in a ``%%chain`` cell with its live view shown; the
user edits the cell so that one chain gains an NF no chain used before, and runs it
again.  What the magic does then (parse, compile, refresh every live view) is timed,
per new NF, as the median of ``--repeat`` fresh Labs (each with a fresh NF library,
as a new kernel has), plus the same for an edit
that brings in no new NF.  The browser side (the same edit, from running the cell to
the view showing the new NF) is measured by ``tests/browser/test_views_browser.py``
(``test_live_edit_shows_the_new_nf_fast``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

NFS = ("firewall", "nat", "l3fwd", "l2fwd", "lb", "qos", "ipsg", "monitor")
#: NFs none of the chains of :func:`chain_set` use, each brought in by one edit.
NEW_NFS = ("heavy_hitter", "ids", "vgw", "stateful_firewall", "sr_encap")


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


def _edit_ms(n: int, new_nf: str | None) -> float:
    """One edit as the ``%%chain`` magic runs it: add the text, show the live view."""
    from sfclab import Lab
    from sfclab.p4.catalog import P4Catalog, _load_dir
    from sfclab.p4.parser import library_dir

    # a fresh copy of the NF library, none of its P4 parsed yet: as in a new kernel
    lab = Lab(catalog=P4Catalog(_load_dir(library_dir() / "nf")))
    lab.add(chain_set(n), source="<cell>")
    lab.live_view()                                       # the view the first run showed
    text = chain_set(n, new_nf) if new_nf else chain_set(n).replace("== 1000:", "== 999:")
    t0 = time.perf_counter()
    lab.add(text, source="<cell>")
    lab.live_view()
    ms = (time.perf_counter() - t0) * 1e3
    lab.close()
    return ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    _edit_ms(args.chains, None)                           # imports, grammar, NF library
    print(f"| edit of a {args.chains}-chain %%chain cell | Python time to refresh the live "
          f"view (median of {args.repeat}) |")
    print("|---|---:|")
    rows = [(f"a chain gains {nf} (new to the set)", nf) for nf in NEW_NFS]
    rows.append(("a chain's classifier changes (no new NF)", None))
    for label, nf in rows:
        ms = statistics.median(_edit_ms(args.chains, nf) for _ in range(args.repeat))
        print(f"| {label} | {ms:.0f} ms |")


if __name__ == "__main__":
    main()
