"""The embedded model's packet rate on TNA programs beside v1model's, on the same chains.

    python benchmarks/bench_tna_model.py [--quick] [--pipes N] [--blocks] [--distinct]

Each example chain set is compiled for v1model and for TNA (``model?arch=tna``: a Tofino
1 of 2 pipes by default); both programs are pushed to an embedded model over P4Runtime,
and the same packets of each class (``packets_for``) run through both switches in
alternating rounds, so that both see the same load; the best round of each counts.  A
TNA packet runs more than a v1model one does (Tofino's ingress and egress parsers read
intrinsic and bridged metadata, the traffic manager, per-pipe state), and multi-pipe
programs send some classes round through recirculation ports (Tofino's stages: the
TNA program needs more passes than the v1model one).  The issue's target: the TNA model
at 0.5x the v1model model's rate or better, on every class; the last column divides the
rates of passes (packets/s times passes), the model's speed without the program's extra
passes.  Rates are packets per second of the process's CPU time.

``--distinct`` makes every packet of a round different (its IPv4 identification, the
checksum made again): no two packets share their header bytes, so the TNA model's
remembered parser runs (``model/tna/parse_cache.py``) never hit, and the rates are what a
flow-less stream of packets gets (a run is remembered the second time its bytes come).

``--blocks`` adds, after the rates (its own rounds, never the measured ones), where a TNA
packet's time goes: its parsers, its controls, its deparsers and the rest (traffic manager,
intrinsic metadata, the pass loop), and the ratio the TNA model would reach if everything
but the controls took no time (the controls run the program's tables and NFs in every
pipelet, as v1model's controls do once).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

import sfclab
from sfclab.codegen import generate
from sfclab.lang import parse_file
from sfclab.runtime.traffic import packets_for
from sfclab.targets.connect import open_target

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FILES = ("web.sfc", "p4sc_table3.sfc", "datacenter.sfc", "every_nf.sfc")


def rate(switch, port: int, pkts: list[bytes], n: int) -> float:
    """Packets per second of this process's CPU time (the machine is shared: CPU time
    is what other jobs' load changes least)."""
    t = time.process_time()
    for i in range(n):
        switch.process(port, pkts[i % len(pkts)])
    return n / (time.process_time() - t)


def blocks(switch, port: int, pkts: list[bytes], n: int) -> dict[str, float]:
    """The shares of a TNA packet's time in the switch's parsers, controls, deparsers and
    the rest: each block timed around its call (``perf_counter``: a cheap clock, so the
    timing changes little), on *n* packets after the measured rounds."""
    spent: dict[str, float] = defaultdict(float)
    saved = []
    for cp in switch.pipelines.values():
        for g in (cp.ingress, cp.egress):
            for attr, kind in (("parse", "parsers"), ("control", "controls"),
                               ("deparse", "deparsers")):
                f = getattr(g, attr)
                saved.append((g, attr, f))
                setattr(g, attr, _timed(f, kind, spent))
            if g.cache is not None:              # the parser's runs looked up (or made)
                saved.append((g, "cache", g.cache))
                g.cache = _TimedCache(g.cache, spent)
    try:
        t = time.perf_counter()
        for i in range(n):
            switch.process(port, pkts[i % len(pkts)])
        total = time.perf_counter() - t
    finally:
        for g, attr, f in saved:
            setattr(g, attr, f)
    spent["rest"] = total - sum(spent.values())
    return {k: x / total for k, x in spent.items()}


class _TimedCache:
    """A gress's parse cache, its lookups (and the parser runs it makes on a miss) timed
    as parsers."""

    def __init__(self, cache, spent: dict) -> None:
        self.cache, self.spent = cache, spent

    def hit(self, p, key, ts):
        t = time.perf_counter()
        try:
            return self.cache.hit(p, key, ts)
        finally:
            self.spent["parsers"] += time.perf_counter() - t

    def miss(self, p, key, at):
        t = time.perf_counter()
        try:
            # the parser it runs is the untimed one
            return self.cache.miss(p, key, at)
        finally:
            self.spent["parsers"] += time.perf_counter() - t


def _timed(f, kind: str, spent: dict):
    clock = time.perf_counter

    def timed(p):
        t = clock()
        try:
            return f(p)
        finally:
            spent[kind] += clock() - t
    return timed


def distinct(pkts: list[bytes], n: int) -> list[bytes]:
    """*n* packets cycling through *pkts*, each with its own IPv4 identification (the
    header checksum computed again): no two the same."""
    from scapy.all import IP, Ether

    out = []
    for i in range(n):
        pkt = Ether(pkts[i % len(pkts)])
        if IP not in pkt:
            return pkts                  # nothing to make different: as given
        pkt[IP].id = i & 0xFFFF
        del pkt[IP].chksum
        out.append(bytes(pkt))
    return out


def bench_file(name: str, n: int, pipes: int, rounds: int = 3,
               with_blocks: bool = False, all_distinct: bool = False) -> list[tuple]:
    chains = parse_file(EXAMPLES / name)
    v1 = generate(sfclab.compile(chains, arch="v1model"))
    tna = generate(sfclab.compile(chains, arch="tna", pipes=pipes))
    rows = []
    with open_target("model") as a, open_target(f"model?arch=tna&pipes={pipes}") as b:
        a.push(v1)
        b.push(tna)
        sa, sb = a.switch, b.switch
        for chain in v1.compiled.chains:
            pkts = [bytes(p.packet) for p in packets_for(chain, 100, chains=v1.compiled.chains)]
            ra, rb = sa.process(1, pkts[0]), sb.process(1, pkts[0])
            if all_distinct:                         # each round its own packets
                pkts = distinct(pkts, n * (rounds + 1))
            nfs = " -> ".join(ra.trace.nfs())
            passes = (ra.passes, rb.passes)
            best_a = best_b = 0.0
            for r in range(rounds):                  # alternating: the same load for both
                chunk = pkts[r * n:(r + 1) * n] if all_distinct else pkts
                best_a = max(best_a, rate(sa, 1, chunk, n))
                best_b = max(best_b, rate(sb, 1, chunk, n))
            last = pkts[rounds * n:] if all_distinct else pkts
            split = blocks(sb, 1, last, n) if with_blocks else None
            rows.append((name, chain.name, nfs or "(none)", passes, best_a, best_b, split))
    return rows


def main() -> None:
    n = 1_000 if "--quick" in sys.argv else 5_000
    pipes = int(sys.argv[sys.argv.index("--pipes") + 1]) if "--pipes" in sys.argv else 2
    print(f"## the TNA model beside the v1model model ({pipes} pipes, {n} packets a round, "
          f"best of 3{', every packet different' if '--distinct' in sys.argv else ''})\n")
    print("| chains | class | NFs | passes v1model / TNA | v1model packets/s | TNA packets/s "
          "| TNA / v1model | per pass |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    worst = worst_pass = None
    with_blocks = "--blocks" in sys.argv
    splits = []
    for name in FILES:
        for f, chain, nfs, passes, a, b, split in bench_file(
                name, n, pipes if name != "every_nf.sfc" else max(pipes, 2),
                with_blocks=with_blocks, all_distinct="--distinct" in sys.argv):
            if split is not None:
                splits.append((f, chain, passes[1], a, b, split))
            ratio = b / a
            per_pass = ratio * passes[1] / passes[0]
            worst = ratio if worst is None else min(worst, ratio)
            worst_pass = per_pass if worst_pass is None else min(worst_pass, per_pass)
            print(f"| {f} | {chain} | {nfs} | {passes[0]} / {passes[1]} | {a:,.0f} | {b:,.0f} "
                  f"| {ratio:.2f} | {per_pass:.2f} |")
    print(f"\nworst class: TNA at {worst:.2f}x the v1model model's packet rate, "
          f"{worst_pass:.2f}x its rate of passes (target: 0.5x)")
    if splits:
        print_blocks(splits)


def print_blocks(splits: list[tuple]) -> None:
    """The ``--blocks`` table: a TNA packet's CPU time (its measured rate) split by the
    blocks' shares, and the ratio with only the controls' time left."""
    print("\n## where a TNA packet's time goes (us of CPU time a packet, by the blocks' "
          "shares)\n")
    print("| chains | class | TNA passes | parsers | controls | deparsers | rest "
          "| TNA / v1model with the controls' time only |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for f, chain, passes, a, b, sp in splits:
        us = {k: sp.get(k, 0.0) / b * 1e6 for k in ("parsers", "controls", "deparsers", "rest")}
        bound = b / a / sp["controls"] if sp.get("controls") else float("inf")
        print(f"| {f} | {chain} | {passes} | {us['parsers']:.0f} | {us['controls']:.0f} "
              f"| {us['deparsers']:.0f} | {us['rest']:.0f} | {bound:.2f} |")


if __name__ == "__main__":
    main()
