"""BMv2 switches in Mininet starved of CPU: do packets still run as on the embedded network?

    sudo .venv/bin/python benchmarks/stall_bmv2_mininet.py [--rounds 3] [--quota-us 2000]
         [--period-us 250000] [--kind campus]

A loaded machine deschedules a ``simple_switch_grpc`` mid-packet; this makes that happen
on purpose: every switch process goes into a CPU cgroup (v1 ``cpu`` or v2) allowed
``--quota-us`` of CPU per ``--period-us``, so each pauses for most of a period, often in
the middle of a packet.  Each chain's class traffic of ``tests/network/netkinds.py``'s
network (small) is sent ``--rounds`` times on the embedded network and on
``mininet?switch=bmv2``; printed: packets that ran the same way (fate, egress, bytes, NFs,
switches, service path), and those whose BMv2 trace says its events stopped short.
Run it against another checkout for a baseline (``PYTHONPATH=/path/to/it``).  Needs root,
Mininet, BMv2 and p4c, and a writable cgroup file system.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "network"))

import netkinds  # noqa: E402

import sfclab  # noqa: E402
from sfclab.network import Network  # noqa: E402
from sfclab.targets.network.connect import open_network_target  # noqa: E402
from sfclab.targets.network.diff import compare_traces  # noqa: E402


def cgroup(quota_us: int, period_us: int) -> Path:
    """A CPU cgroup with that quota (v1's ``cpu`` controller, else v2)."""
    name = f"sfclab-stall-{os.getpid()}"
    v1 = Path("/sys/fs/cgroup/cpu")
    if v1.is_dir():
        d = v1 / name
        d.mkdir()
        (d / "cpu.cfs_period_us").write_text(str(period_us))
        (d / "cpu.cfs_quota_us").write_text(str(quota_us))
    else:
        d = Path("/sys/fs/cgroup") / name
        d.mkdir()
        (d / "cpu.max").write_text(f"{quota_us} {period_us}")
    return d


def switch_pids(prefix: str) -> list[str]:
    """The ``simple_switch_grpc`` processes on interfaces named with *prefix*."""
    found = subprocess.run(["pgrep", "-f", f"^[^ ]*simple_switch_grpc .*{prefix}"],
                           capture_output=True, text=True, check=False)
    return found.stdout.split()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quota-us", type=int, default=2000)
    ap.add_argument("--period-us", type=int, default=250_000)
    ap.add_argument("--kind", default="campus", choices=sorted(netkinds.KINDS))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    topo, chains = netkinds.load(args.kind, 0, small=True)
    prefix = f"z{uuid.uuid4().hex[:3]}"
    group = cgroup(args.quota_us, args.period_us)
    same = sent = short = 0
    try:
        with Network(topo, chains) as net:
            net.push()
            bmv2 = open_network_target(f"mininet?switch=bmv2&prefix={prefix}", topo)
            try:
                bmv2.push(net.program)
                for pid in switch_pids(prefix):
                    (group / "cgroup.procs").write_text(pid)
                t0 = time.monotonic()
                for _ in range(args.rounds):
                    for chain in net.chains:
                        src, _dst = net.endpoints(chain.name)
                        for cp in net.class_traffic(chain.name, 1).packets:
                            nt = net.send(src, None, cp.packet)
                            got = bmv2.send(src, bytes(cp.packet), label=chain.name)
                            sent += 1
                            same += not compare_traces(nt, got)
                            short += any("no more came" in str(e.value) for h in got.hops
                                         if h.trace is not None for e in h.trace.events)
                took = time.monotonic() - t0
            finally:
                bmv2.close()
    finally:
        group.rmdir()
    print(f"sfclab {Path(sfclab.__file__).parent}: {args.kind}, BMv2 at {args.quota_us} us CPU "
          f"per {args.period_us} us: {same}/{sent} packets ran as on the embedded network, "
          f"{short} traces say their events stopped short; {took:.0f} s")


if __name__ == "__main__":
    main()
