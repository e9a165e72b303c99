"""How long the Tofino compiler takes on the programs the test suite compiles for TNA.

    python benchmarks/bench_tofino.py [--jobs N] [--only nfs|examples|networks]
                                      [--pipeline auto|mafsa|optimal|naive] [--sweep ci]
                                      [--record]

Generates the full sweep (``tests/targets/tofino_programs.py``: every library NF alone and
mid-chain, every example in every pipeline mode and on 1, 2 and 4 pipes, the Tofino
switches' programs of the example networks; ``--sweep ci``: the subset CI compiles),
compiles each distinct program once with ``p4c-barefoot`` (or ``bf-p4c``), N at a time
(default 2), the longest first (as the test suite does; ``--pipeline`` keeps the examples
in one pipeline mode, at the default 2 pipes: the README's Tofino table), and prints a markdown table:
per program its wall time and, in total, the compiler's CPU seconds (``os.times`` of the
child processes), from which the time on an unloaded machine with N cores follows
(CPU / N).  Also prints the stages each NF slot used against the catalogue's estimate, and
checks what the tests check: no table past stage 11, sfclab's P4Info as the compiler's, an NF
program's pipelets within the plan and the core's 2 + 1 stages (flagged in the table, listed
at the end).
``--record`` (with the NF programs) rewrites ``tests/targets/tofino_measured.json``, the table
of each NF's span alone and sfclab's core that the tests check the estimates against.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "targets"))

from tofino_measure import measure, record  # noqa: E402
from sfclab.codegen.p4info import build_p4info, compare_p4info, p4info_from_text  # noqa: E402
from sfclab.passes.placement import TNA_CORE_STAGES  # noqa: E402
from tofino_programs import (CI_EXAMPLES, CI_NETWORKS, EXAMPLE_FILES, NETWORKS,  # noqa: E402
                             TofinoBuilds,
                             all_nf_programs, example_programs, longest_first,
                             network_programs, tofino_compiler)



def _checks(what: str, build, generated, m) -> list[str]:
    """What the tests check besides the stage limit: sfclab's P4Info against the compiler's
    (every program) and, for an NF program, each pipelet within the plan and the core within
    ``TNA_CORE_STAGES`` (``test_placements_budget_holds_what_the_compiler_places``)."""
    notes: list[str] = []
    diffs = compare_p4info(build_p4info(generated.program.program, arch="tna"),
                           p4info_from_text((build.out / "p4info.p4c.txt").read_text()))
    if diffs:
        notes.append(f"p4info differs: {diffs[:3]}")
    nf_program = what.endswith((" alone", " mid-chain"))
    for p in m.pipelets if nf_program else ():
        core = TNA_CORE_STAGES.ingress if p.gress == "ingress" else TNA_CORE_STAGES.egress
        if p.need > p.plan or len(p.core) > core:
            notes.append(f"plan: {p.name} {p.need} stages (plan {p.plan}), core "
                         f"{len(p.core)} {p.core}")
    return notes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", choices=("nfs", "examples", "networks"))
    ap.add_argument("--pipeline", choices=("auto", "mafsa", "optimal", "naive"),
                    help="the examples in this pipeline mode only (2 pipes)")
    ap.add_argument("--sweep", choices=("full", "ci"), default="full",
                    help="the full sweep (default) or the subset CI compiles")
    ap.add_argument("--record", action="store_true",
                    help="rewrite tests/targets/tofino_measured.json from the NFs alone")
    args = ap.parse_args()
    if args.record and (args.only in ("examples", "networks") or args.sweep == "ci"):
        ap.error("--record measures every NF program: not with --only examples|networks "
                 "nor --sweep ci")
    full = args.sweep == "full"
    exe = tofino_compiler()
    if exe is None:
        print("no Tofino compiler (bf-p4c / p4c-barefoot) on PATH", file=sys.stderr)
        return 1
    programs: dict[str, object] = {}
    if args.only in (None, "nfs"):
        programs.update(all_nf_programs(full))
    if args.only in (None, "examples"):
        for p in EXAMPLE_FILES if full else [p for p in EXAMPLE_FILES if p.name in CI_EXAMPLES]:
            programs.update({w: g for w, g in example_programs(p, full).items()
                             if args.pipeline is None or w.endswith(f" --pipeline {args.pipeline}")})
    if args.only in (None, "networks"):
        for topo, chains in NETWORKS if full else CI_NETWORKS:
            programs.update(network_programs(topo, chains))
    print(f"compiler: {exe}; {len(programs)} programs; load {os.getloadavg()[0]:.1f}",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        builds = TofinoBuilds(Path(tmp), exe, jobs=args.jobs)
        t0, c0 = time.perf_counter(), os.times()
        futures = {what: builds.submit(g) for what, g in longest_first(programs).items()}
        print("| program | result | wall s | stages per pipelet (plan) | core's own | "
              "slots: span / estimate |")
        print("|---|---|---:|---|---|---|")
        seen, alone, over, wrong = set(), {}, {}, {}
        refused: dict[str, object] = {}
        for what, f in futures.items():
            b = f.result()
            if not b.result.ok:
                refused[what] = b.result
            first = id(f) not in seen
            seen.add(id(f))
            m = measure(b.out, programs[what]) if b.result.ok else None
            if m is not None and what.endswith(" alone"):
                alone[what.removesuffix(" alone")] = m
            if m is not None and m.over:
                over[what] = m.over
            notes = _checks(what, b, programs[what], m) if m is not None else []
            if notes:
                wrong[what] = notes
            used = ", ".join(f"{p.name} {p.stages} ({p.plan})" for p in m.pipelets
                             if p.stages) if m else "-"
            core = ", ".join(f"{p.name} {len(p.core)}" for p in m.pipelets if p.stages) \
                if m else "-"
            slots = ", ".join(f"{s.nf} {s.span}/{s.estimate}" for p in m.pipelets
                              for s in p.slots) if m else ""
            print(f"| {what} | {'ok' if b.result.ok else 'REFUSED'}"
                  f"{' PAST STAGE 11' if m and m.over else ''}"
                  f"{''.join(' ' + n.split(':')[0].upper() for n in wrong.get(what, []))} | "
                  f"{b.wall:.1f}{'' if first else ' (same program)'} | {used} | {core} | "
                  f"{slots} |", flush=True)
        builds.close()
        wall, c1 = time.perf_counter() - t0, os.times()
    cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    for what, r in refused.items():
        crash = [line for line in r.output.splitlines() if "Compiler Bug" in line]
        print(f"\n{what}: REFUSED\n" + "\n".join([*r.messages[:6], *crash]
                                                  or [r.output[-1500:]]))
    for what, o in over.items():
        print(f"\n{what}: tables past stage 11: {o[:6]}")
    for what, notes in wrong.items():
        print(f"\n{what}: " + "; ".join(notes))
    if args.record:
        nfs = {w.removesuffix(" alone") for w in all_nf_programs() if w.endswith(" alone")}
        if set(alone) != nfs:
            print(f"not recorded: no measurement for {sorted(nfs - set(alone))}",
                  file=sys.stderr)
            return 1
        ran = subprocess.run([exe, "--version"], capture_output=True, text=True)
        version = ran.stdout + ran.stderr          # p4c-barefoot prints it on stderr
        table = record(alone, f"{Path(exe).name} {version.split()[-1] if version else '?'}")
        print(f"recorded {len(table['nfs'])} NFs and the core {table['core']} in "
              f"tests/targets/tofino_measured.json")
    print(f"\n{len(builds.futures)} distinct programs ({len(refused)} of {len(programs)} "
          f"refused, {len(over)} past stage 11, {len(wrong)} with a wrong P4Info or an NF "
          f"program over its plan or core) compiled in {wall:.0f} s wall, "
          f"{cpu:.0f} s of compiler CPU ({cpu / max(len(builds.futures), 1):.1f} s each): "
          f"{cpu / args.jobs:.0f} s on {args.jobs} unloaded cores; load now "
          f"{os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
