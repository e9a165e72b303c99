"""The embedded model's packet rate against a baseline commit, side by side in one run.

    python benchmarks/bench_model_baseline.py [--baseline REV] [--rounds N] [--packets N]

The baseline commit's tree is unpacked (``git archive``) into a folder under /tmp
once; then, round after round, a fresh Python process per tree (the baseline's
``sfclab`` first on ``sys.path``, then this checkout's) measures the cases of
``bench_model.py``: the four-table program, and each class of the program sfclab
composes for P4SC Table III's chains.  Alternating the two trees in every round
means a busy machine slows both alike; rates are packets per CPU second of the
measuring process (``time.process_time``: other jobs' time is not counted), the best
round of each counts, and the table gives the ratio (this checkout / the baseline).
Run it under ``flock /tmp/sfclab-heavy.lock`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, importlib.util
from pathlib import Path
root, n = Path(sys.argv[1]), int(sys.argv[2])
sys.path.insert(0, str(root))
import sfclab
assert Path(sfclab.__file__).resolve().is_relative_to(root), sfclab.__file__
spec = importlib.util.spec_from_file_location("bm", root / "benchmarks" / "bench_model.py")
bm = importlib.util.module_from_spec(spec); spec.loader.exec_module(bm)
out = {}
sw = bm.make_switch(); pkts = bm.packets(512); sw.process(1, pkts[0])
t = time.process_time()
for i in range(n):
    sw.process(1, pkts[i % 512])
out["4 tables + checksum"] = n / (time.process_time() - t)
from sfclab.codegen import generate
from sfclab.runtime.traffic import packets_for
from sfclab.targets.model import ModelTarget
compiled = sfclab.compile((root / "examples" / "p4sc_table3.sfc").read_text())
with ModelTarget() as target:
    target.push(generate(compiled))
    sw = target.switch
    for chain in compiled.chains:
        ps = [bytes(p.packet) for p in packets_for(chain, 200, chains=compiled.chains)]
        sw.process(1, ps[0])
        t = time.process_time()
        for i in range(n):
            sw.process(1, ps[i % len(ps)])
        out[chain.name] = n / (time.process_time() - t)
print(json.dumps(out))
"""


def baseline_tree(rev: str) -> Path:
    """The baseline commit's files in /tmp (unpacked once per commit)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True,
                         text=True, check=True).stdout.strip()
    dest = Path(tempfile.gettempdir()) / f"sfclab-baseline-{sha[:12]}"
    if not (dest / "sfclab" / "__init__.py").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        data = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True,
                              check=True).stdout
        with tempfile.TemporaryFile() as f:
            f.write(data)
            f.seek(0)
            tarfile.open(fileobj=f).extractall(dest, filter="data")
    return dest


def measure(tree: Path, n: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(n)], capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="493e002", help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--packets", type=int, default=10_000, help="packets per case and round")
    args = ap.parse_args()
    trees = {"baseline": baseline_tree(args.baseline), "this checkout": ROOT}
    best: dict[str, dict[str, float]] = {k: {} for k in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for case, rate in measure(tree, args.packets).items():
                best[name][case] = max(best[name].get(case, 0.0), rate)
    print(f"## the embedded model against {args.baseline} (packets per CPU second, best of "
          f"{args.rounds} alternating rounds, {args.packets:,} packets each)\n")
    print("| case | baseline packets/s | this checkout packets/s | ratio |")
    print("|---|---:|---:|---:|")
    for case, base in best["baseline"].items():
        now = best["this checkout"][case]
        print(f"| {case} | {base:,.0f} | {now:,.0f} | {now / base:.2f} |")


if __name__ == "__main__":
    main()
