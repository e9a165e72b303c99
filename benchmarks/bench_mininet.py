"""The fat tree (k=4) in Mininet with model switch processes: how long each step takes.

    sudo python benchmarks/bench_mininet.py [--packets N]

Builds the topology in Mininet (16 hosts, 48 links), starts the 20 switch processes
(``sfclab model-switch --iface …``) forked from the preloaded fork server and, for
comparison, run as commands; pushes every switch's program over P4Runtime (the
network-wide chains' fat-tree example, when ``sfclab.network`` is there); sends
packets host to host (each rebuilt into a network-wide trace); stops everything.  Needs root and Mininet.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

from sfclab.ir.topology import fat_tree
from sfclab.targets.mininet import MininetNetwork, missing_mininet


def _start(topo, *, fork: bool) -> tuple[MininetNetwork, float, float]:
    """A started network; (it, seconds to build Mininet, seconds until every switch serves)."""
    net = MininetNetwork(topo, prefix="b" + uuid.uuid4().hex[:3])
    net.switch_kind.fork = fork
    emulation_start = net.emulation.start
    times = {}

    def timed():
        t = time.perf_counter()
        emulation_start()
        times["build"] = time.perf_counter() - t
        return net.emulation
    net.emulation.start = timed
    t = time.perf_counter()
    net.start()
    total = time.perf_counter() - t
    return net, times["build"], total - times["build"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--packets", type=int, default=4, help="packets per chain class")
    args = ap.parse_args()
    why = missing_mininet()
    if why:
        print(f"cannot run: {why}")
        return 1
    import tempfile

    from sfclab.targets.model.forked import start_forked

    t = time.perf_counter()                    # the fork server, once per Python process
    start_forked(["--version"], log_path=Path(tempfile.mkdtemp()) / "v.log").wait(60)
    preload = time.perf_counter() - t
    rows = []
    for fork in (False, True):
        net, build, ready = _start(fat_tree(4), fork=fork)
        t = time.perf_counter()
        net.close()
        rows.append(("forked from the fork server" if fork else "run as commands", build, ready,
                     time.perf_counter() - t))
    print("#### fat tree (k=4) in Mininet: 20 model switch processes, 16 hosts, 48 links\n")
    print("| switch processes | Mininet build (s) | 20 switches serving (s) | stop (s) |")
    print("|---|---:|---:|---:|")
    for how, build, ready, stop in rows:
        print(f"| {how} | {build:.2f} | {ready:.2f} | {stop:.2f} |")
    print(f"\nThe fork server starts once per Python process and imports sfclab: {preload:.2f} s.")
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "network"))
        from netsupport import FAT_TREE_ENDS, fat_tree_example

        from sfclab.network import Network
    except ImportError:
        print("\n(no network-wide chains here: push and packets not measured)")
        return 0
    from sfclab.runtime.traffic import packets_for

    topo, chains = fat_tree_example()
    embedded = Network(topo, chains)
    program = embedded.program
    net, _, _ = _start(topo, fork=True)
    try:
        t = time.perf_counter()
        net.push(program)
        push = time.perf_counter() - t
        sent, hops, t = 0, 0, time.perf_counter()
        for chain in embedded.chains:
            src = FAT_TREE_ENDS[chain.name][0]
            for cp in packets_for(chain, args.packets, seed=7):
                hops += len(net.send(src, cp.packet, label=chain.name).hops)
                sent += 1
        send = time.perf_counter() - t
    finally:
        net.close()
        embedded.close()
    print("\n| push 20 switches (s) | packets sent | hops | packets/s (each traced) |")
    print("|---:|---:|---:|---:|")
    print(f"| {push:.2f} | {sent} | {hops} | {sent / send:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
