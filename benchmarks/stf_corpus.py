"""Run every ``NAME.p4`` with its ``NAME.stf`` in a folder (p4c's test programs) on the
model, and optionally on BMv2; print how many load and pass, and why the others fail.

    python benchmarks/stf_corpus.py FOLDER [--bmv2] [--only NAME…] [--json OUT]

A program *loads* when sfclab's front end reads it and the model compiles it; it
*passes* when every expectation of its STF file is met.  Failures are grouped by
their reason (the error's first line with names and numbers taken out), so the
table says what to build next.  With ``--bmv2`` each program is also compiled with
p4c-bm2-ss and run on one simple_switch_grpc (:mod:`sfclab.targets.stf.bmv2`), to
see which STF files the real tools pass.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

from sfclab.errors import SfclabError
from sfclab.targets.stf.runner import ModelDriver, load_model, run_stf
from sfclab.targets.stf.script import parse_stf


def reason(text: str) -> str:
    """An error's first line, with what is particular to one program taken out."""
    line = text.strip().splitlines()[0] if text.strip() else "(no message)"
    line = re.sub(r"^\S+\.(p4|stf):\d+:\d+: ", "", line)
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", line)
    line = re.sub(r"\b0x[0-9a-fA-F]+\b|\b\d+\b", "N", line)
    return line[:110]


def run_model(p4: Path, stf: Path) -> dict:
    t0 = time.perf_counter()
    try:
        script = parse_stf(stf.read_text(), source=str(stf))
    except SfclabError as e:
        return {"status": "bad-stf", "why": reason(str(e))}
    try:
        sw = load_model(p4)
    except SfclabError as e:
        return {"status": "load", "why": reason(e.message if hasattr(e, "message") else str(e)),
                "error": str(e)[:600]}
    except Exception as e:                          # a model bug: keep the traceback
        return {"status": "crash-load", "why": f"{type(e).__name__}: {reason(str(e))}",
                "error": traceback.format_exc()[-1500:]}
    try:
        report = run_stf(ModelDriver(sw), script, source=str(stf))
    except Exception as e:
        return {"status": "crash-run", "why": f"{type(e).__name__}: {reason(str(e))}",
                "error": traceback.format_exc()[-1500:]}
    out = {"status": "pass" if report.ok else "fail", "checks": len(report.checks),
           "seconds": round(time.perf_counter() - t0, 3)}
    if not report.ok:
        first = report.failures[0]
        out["why"] = reason(first.why)
        out["error"] = report.text()[-1500:]
    return out


def run_bmv2(names: list[str], folder: Path) -> dict[str, dict]:
    from sfclab.targets.stf.bmv2 import StfBmv2, compile_bmv2

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="sfclab-corpus-") as tmp:
        sw = None
        try:
            for name in names:
                p4, stf = folder / f"{name}.p4", folder / f"{name}.stf"
                try:
                    build = compile_bmv2(p4, Path(tmp) / name)
                except SfclabError as e:
                    results[name] = {"status": "p4c", "why": reason(str(e).split("\n", 1)[-1])}
                    continue
                if sw is None or not sw.process.running:
                    sw = StfBmv2(Path(tmp) / f"switch-{name}")
                try:
                    report = run_stf(sw.load(build), parse_stf(stf.read_text()), source=str(stf))
                except SfclabError as e:
                    results[name] = {"status": "error", "why": reason(str(e))}
                    continue
                results[name] = {"status": "pass" if report.ok else "fail"}
                if not report.ok:
                    results[name]["why"] = reason(report.failures[0].why)
                print(f"  bmv2 {name}: {results[name]['status']}", file=sys.stderr)
        finally:
            if sw is not None:
                sw.close()
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--bmv2", action="store_true", help="also run each on BMv2")
    ap.add_argument("--only", nargs="*", help="these programs only (names without .p4)")
    ap.add_argument("--json", type=Path, help="write every program's result here")
    args = ap.parse_args(argv)
    names = sorted(p.stem for p in args.folder.glob("*.p4") if p.with_suffix(".stf").is_file())
    if args.only:
        names = [n for n in names if n in set(args.only)]
    model = {}
    for name in names:
        model[name] = run_model(args.folder / f"{name}.p4", args.folder / f"{name}.stf")
        print(f"  model {name}: {model[name]['status']} {model[name].get('why', '')}",
              file=sys.stderr)
    bmv2 = run_bmv2(names, args.folder) if args.bmv2 else {}
    n = len(names)
    loaded = [k for k, v in model.items() if v["status"] in ("pass", "fail", "crash-run")]
    passed = [k for k, v in model.items() if v["status"] == "pass"]
    print(f"\n{n} programs with an STF file in {args.folder}")
    print(f"model: loads {len(loaded)}, passes {len(passed)} ({100 * len(passed) / max(n, 1):.0f}%)")
    if bmv2:
        bp = [k for k, v in bmv2.items() if v["status"] == "pass"]
        print(f"bmv2: passes {len(bp)}; of those the model passes "
              f"{len(set(bp) & set(passed))} ({100 * len(set(bp) & set(passed)) / max(len(bp), 1):.0f}%)")
    groups = collections.defaultdict(list)
    for k, v in model.items():
        if v["status"] != "pass":
            groups[(v["status"], v.get("why", ""))].append(k)
    print("\n| model | why | programs |\n|---|---|---|")
    for (status, why), ks in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        extra = "" if not bmv2 else f" (bmv2 passes {sum(bmv2.get(x, {}).get('status') == 'pass' for x in ks)})"
        print(f"| {status} | {why} | {len(ks)}{extra}: {', '.join(ks[:6])}{' …' if len(ks) > 6 else ''} |")
    if args.json:
        args.json.write_text(json.dumps({"model": model, "bmv2": bmv2}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
