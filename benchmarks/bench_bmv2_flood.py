"""Floods through BMv2: packets per second and sfclab's CPU per packet of ``send_many`` on
``chain broadcast match eth.dst == ff:ff:ff:ff:ff:ff: flood`` (each packet is replicated
to the 7 other ports of BMv2's packet socket), and how many came back short of 7 outputs.

    python benchmarks/bench_bmv2_flood.py [--packets N]

Needs the real ``simple_switch_grpc`` and ``p4c-bm2-ss`` (``PATH``).  To compare two trees,
run this file with each one's sfclab first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import time

import sfclab
from sfclab.codegen import generate
from sfclab.targets.bmv2.target import missing_tools
from sfclab.targets.connect import open_target

CHAIN = "chain broadcast match eth.dst == ff:ff:ff:ff:ff:ff: flood"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=1000)
    args = ap.parse_args()
    if missing_tools():
        raise SystemExit(f"needs {', '.join(missing_tools())}")
    from scapy.layers.l2 import Ether

    gen = generate(sfclab.compile(CHAIN))
    frame = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src="00:00:00:00:00:01") / (b"\0" * 46))
    n = args.packets
    with open_target("bmv2") as sw:
        sw.push(gen)
        sw.send_many([(1, frame)] * 20)                     # warm up
        wall, cpu = time.perf_counter(), time.process_time()
        results = sw.send_many([(1 + k % 8, frame) for k in range(n)])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    short = sum(len(r.outputs) != 7 for r in results)
    print(f"{sfclab.__file__}: {n:,} floods, {n / wall:,.0f} packets/s, sfclab CPU "
          f"{cpu / n * 1e6:,.0f} µs a packet, {short} with fewer than 7 outputs")


if __name__ == "__main__":
    main()
