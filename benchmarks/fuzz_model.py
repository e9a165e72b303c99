"""Hunt for the model's disagreements with BMv2 on random v1model programs.

    python benchmarks/fuzz_model.py [--seeds FIRST:LAST] [--keep DIR] [--workers N]

Each seed is a program and an STF test from tests/differential/p4gen.py; every
program p4c-bm2-ss accepts runs on the embedded model and on one simple_switch_grpc
(tests/differential/harness.py), and every packet's outputs are compared.  Prints
how many programs p4c refused, how many agreed, and each disagreement; ``--keep DIR``
writes the disagreeing programs and their STF files there (to make fixtures of).
One seed in four sets up multicast and clone copies: there a disagreement may be
BMv2's (a copy's invalid headers hold whatever earlier packet's values its pooled
storage kept, depending on thread timing); check it before calling it a model bug.
Needs p4c-bm2-ss, simple_switch_grpc and unshare; run it under
``flock /tmp/sfclab-heavy.lock`` on a shared machine.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "differential"))

from harness import compare, compile_all  # noqa: E402
from p4gen import generate  # noqa: E402

from sfclab.targets.stf.bmv2 import StfBmv2, missing_stf_tools  # noqa: E402


def _stop(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")     # so that the switch is stopped too


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0:200", help="FIRST:LAST (LAST excluded)")
    ap.add_argument("--keep", type=Path, help="write disagreeing programs here")
    ap.add_argument("--workers", type=int, default=2, help="p4c compiles at a time")
    ap.add_argument("--batch", type=int, default=50, help="programs compiled per batch")
    args = ap.parse_args()
    missing = missing_stf_tools()
    if missing:
        print(f"needs {', '.join(missing)}", file=sys.stderr)
        return 2
    first, last = (int(x) for x in args.seeds.split(":"))
    t0 = time.perf_counter()
    refused = agreed = 0
    bad = []
    with tempfile.TemporaryDirectory(prefix="sfclab-fuzz-") as tmp, \
            StfBmv2(Path(tmp) / "switch") as sw:
        for lo in range(first, last, args.batch):
            programs = {}
            for seed in range(lo, min(last, lo + args.batch)):
                g = generate(seed)
                path = Path(tmp) / f"s{seed}.p4"
                path.write_text(g.text)
                programs[f"s{seed}"] = (path, g.stf)
            builds = compile_all({n: p for n, (p, _) in programs.items()}, Path(tmp) / "build",
                                 workers=args.workers)
            for name, (path, stf) in programs.items():
                build = builds[name]
                if isinstance(build, Exception):
                    refused += 1
                    continue
                o = compare(name, path, stf, build, sw)
                if o.same:
                    agreed += 1
                    continue
                bad.append(name)
                print(f"=== {name}\n" + "\n".join(o.differences)[:4000], flush=True)
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"{name}.p4").write_text(path.read_text())
                    (args.keep / f"{name}.stf").write_text(stf)
            print(f"seeds {first}..{min(last, lo + args.batch) - 1}: {agreed} agree, "
                  f"{len(bad)} disagree, p4c refused {refused} "
                  f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    print(f"\n{last - first} programs: p4c refused {refused}, the model agrees with BMv2 on "
          f"{agreed}, disagrees on {len(bad)}: {', '.join(bad) or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
