"""Idle StreamChannels on the model's P4Runtime server: its threads and a Capabilities
call's latency, before and with 1,000 clients each holding a stream open.

    python benchmarks/bench_p4rt_streams.py [--streams N]

The server takes at most ``max_streams`` (16) streams at once and refuses the rest
with RESOURCE_EXHAUSTED before they cost a thread (two threads per open stream);
without the bound every stream kept its two threads.  Figures (2 cores, load ~7):
1,000 streams -> 2,000 server threads unbounded, 32 bounded; Capabilities median
0.7 ms unbounded, 0.4-1.1 ms bounded (0.4-0.5 ms with no stream; the 1,000 clients run
in the same process, so their threads share its GIL).  The issue measured 150 ms per
call with 1,000 streams on a busier run.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import grpc
from finsy.proto import p4r, p4r_grpc

from sfclab.targets.model.p4rt import P4RuntimeModelServer


def capabilities_ms(stub, n: int = 20) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        stub.Capabilities(p4r.CapabilitiesRequest(), timeout=30)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def server_threads() -> int:
    return sum(t.name.startswith(("sfclab-p4rt", "p4rt-stream")) for t in threading.enumerate())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=1000)
    n = ap.parse_args().streams
    srv = P4RuntimeModelServer()
    srv.start()
    stub = p4r_grpc.P4RuntimeStub(grpc.insecure_channel(srv.address))
    print(f"no stream: {server_threads()} server threads, Capabilities "
          f"{capabilities_ms(stub):.1f} ms")
    hold = threading.Event()
    channels, calls = [], []
    for _ in range(n):
        c = grpc.insecure_channel(srv.address)
        calls.append(p4r_grpc.P4RuntimeStub(c).StreamChannel(iter(hold.wait, True)))
        channels.append(c)
    time.sleep(3)
    print(f"{n} streams asked for, {len(srv._streams)} open: {server_threads()} server "
          f"threads, Capabilities {capabilities_ms(stub):.1f} ms")
    hold.set()
    for c in channels:
        c.close()
    srv.stop(0)


if __name__ == "__main__":
    main()
