"""Packets per second sfclab drives through BMv2 (``send``, one packet at a time), next to
the embedded model through the same target API.

    python benchmarks/bench_bmv2.py [--packets N]

BMv2 is ``simple_switch_grpc`` and ``p4c-bm2-ss`` when they are installed
(``PATH``, ``SFCLAB_BMV2``, ``SFCLAB_P4C``); otherwise the test suite's stand-in
(``tests/targets/standin_bmv2.py``: BMv2's interfaces around sfclab's model), and
the table says which.  Each ``send`` puts the packet on the switch's packet-in
socket and waits until no output came for ``Bmv2Switch.quiet`` seconds, then
reads the event logger: the rows with a shorter quiet window show what that wait
costs.  The baseline is :class:`~sfclab.targets.model.ModelTarget` (in-process).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import sfclab
from sfclab.codegen import generate
from sfclab.runtime.traffic import packets_for
from sfclab.targets.bmv2 import missing_tools
from sfclab.targets.bmv2_switch import Bmv2Switch
from sfclab.targets.connect import open_target

CHAIN = "chain web match tcp.dport == 80: firewall -> l3fwd"


def _which_bmv2() -> str:
    if not missing_tools():
        return "BMv2 (simple_switch_grpc)"
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "targets"))
    from standin_bmv2 import install_standins

    switch, p4c = install_standins(Path(tempfile.mkdtemp(prefix="sfclab-bench-")))
    os.environ["SFCLAB_BMV2"], os.environ["SFCLAB_P4C"] = str(switch), str(p4c)
    return "stand-in BMv2 (sfclab's model behind BMv2's interfaces)"


def _rate(target, gen, n: int) -> float:
    target.push(gen)
    chain = gen.composition.compiled.chains["web"]
    pkts = packets_for(chain, n, chains=gen.composition.compiled.chains)
    target.send(pkts[0].port, pkts[0].packet)                # warm up
    start = time.perf_counter()
    for cp in pkts:
        target.send(cp.port, cp.packet)
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=20)
    args = ap.parse_args()
    gen = generate(sfclab.compile(CHAIN))
    rows = []
    with open_target("model") as model:
        rows.append(("embedded model (baseline)", "-", _rate(model, gen, args.packets)))
    which = _which_bmv2()
    default = Bmv2Switch.quiet
    for quiet in (default, 0.05):
        with open_target("bmv2") as t:
            t.quiet = quiet
            rows.append((which, f"{quiet:.2f} s", _rate(t, gen, args.packets)))
    print(f"| target | quiet window | packets/s ({args.packets} packets, {CHAIN!r}) |")
    print("|---|---:|---:|")
    for name, quiet, rate in rows:
        print(f"| {name} | {quiet} | {rate:,.1f} |")


if __name__ == "__main__":
    main()
