"""Packets per second sfclab drives through BMv2, next to the embedded model, on the
same program and packets.

    python benchmarks/bench_bmv2.py [--packets N]

BMv2 is ``simple_switch_grpc`` and ``p4c-bm2-ss`` when they are installed (``PATH``,
``SFCLAB_BMV2``, ``SFCLAB_P4C``); otherwise the test suite's stand-in
(``tests/targets/standin_bmv2.py``: sfclab's model behind BMv2's interfaces, moving
packets through queues of BMv2's sizes), and the table says which.  Rows:

* ``send`` — one packet at a time, each complete before the next goes;
* ``send_many`` — batches, at most *window* packets inside the switch
  (:mod:`sfclab.targets.bmv2.batch`);
* ``send_many`` with the event logger on IPC — what sfclab used before issue 20: nanomsg
  drops the events a subscriber does not read in time, and IPC holds ~340 of them;
* a burst without back-pressure — every packet onto the packet socket, outputs read
  afterwards: what BMv2's full queues lose;
* ``lab.send`` — issue 20's measure: ``lab.send("web", 500)`` after 5 to warm up, on
  ``input => firewall => nat => l3fwd => output`` (planning included: the packets
  covering every service path are chosen on the model first).

Every fifth packet belongs to no class (the program drops it).  "lost" counts packets
whose outputs differ from the model's; "events lost" the traces with a gap; "sfclab
CPU" is this process's CPU time per packet; the last line replays a run's events and
frames into sfclab's tracker alone: the rate sfclab's side sustains whatever the switch.
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
from sfclab.targets.bmv2.target import missing_tools
from sfclab.targets.bmv2.batch import Window
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
    return "stand-in BMv2"


def _packets(gen, n: int) -> list[tuple[int, bytes]]:
    from scapy.layers.inet import ICMP, IP
    from scapy.layers.l2 import Ether

    chains = gen.composition.compiled.chains
    some = [(cp.port, bytes(cp.packet))
            for cp in packets_for(chains["web"], min(n, 250), chains=chains)]
    stray = (1, bytes(Ether() / IP(dst="10.9.9.9") / ICMP()))
    return [stray if k % 5 == 4 else some[k % len(some)] for k in range(n)]


def _run(target, packets, how: str):
    """(seconds, CPU seconds, results) of sending *packets* *how*."""
    wall, cpu = time.perf_counter(), time.process_time()
    if how == "send":
        results = [target.send(p, f) for p, f in packets]
    elif how == "send_many":
        results = target.send_many(packets)
    else:                                           # a burst, read afterwards
        for p, f in packets:
            target._ports.send(p, f)
        results = target._ports.collect(quiet=1.0, timeout=300)
    return time.perf_counter() - wall, time.process_time() - cpu, results


def _record(target) -> list:
    """Record what the switch sends sfclab (events, frames) during a run, in order."""
    log: list = []
    events_poll, ports_poll = target._events.poll, target._ports.poll

    def events():
        got = events_poll()
        log.extend(("event", m) for m in got)
        return got

    def ports():
        got = ports_poll()
        log.extend(("frame", f) for f in got)
        return got

    target._events.poll, target._ports.poll = events, ports
    return log


def _replay(target, packets, log) -> float:
    """sfclab's side alone: the recorded events and frames of a run fed to a fresh
    tracker; packets per second of CPU."""
    tracker = target._tracker(packets)
    cpu = time.process_time()
    for k in range(len(packets)):
        tracker.sent(k, now=0.0)
    for kind, item in log:
        if kind == "event":
            tracker.event(item, now=0.0)
        else:
            tracker.output(*item, now=0.0)
    tracker.update(now=1.0)
    tracker.results()
    return len(packets) / (time.process_time() - cpu)


def _lab_send(url: str, n: int) -> tuple[float, int, int]:
    """``lab.send`` of *n* packets on *url*: (packets/s, reported dropped, traces with a
    note)."""
    from sfclab.lab import Lab

    lab = Lab()
    try:
        lab.add(LAB_CHAIN)
        lab.connect(url)
        lab.push()
        lab.send("web", 5)
        wall = time.perf_counter()
        res = lab.send("web", n)
        sec = time.perf_counter() - wall
        return (n / sec, sum(r.trace.dropped for r in res),
                sum(any(e.kind == "note" for e in r.trace.events) for r in res))
    finally:
        lab.close()


LAB_CHAIN = "chain web match tcp.dport == 80 { input => firewall => nat => l3fwd => output; }"


def _bmv2_on(nanolog: str):
    """A BMv2 sfclab starts, its event logger on *nanolog* (``ipc`` or ``tcp``)."""
    import tempfile

    from sfclab.targets.bmv2.target import Bmv2Target
    from sfclab.targets.bmv2.switch import Bmv2Switch

    if nanolog == "tcp":
        return open_target("bmv2")
    work = Path(tempfile.mkdtemp(prefix="sfclab-bench-"))
    return Bmv2Switch(Bmv2Target.start(ports="packet-in", event_logger=f"ipc://{work}/ev.ipc",
                                       workdir=work, timeout=30, log_level="info"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=5000)
    ap.add_argument("--single", type=int, default=300, help="packets for the send row")
    ap.add_argument("--lab", type=int, default=500, help="packets for the lab.send rows")
    args = ap.parse_args()
    gen = generate(sfclab.compile(CHAIN))
    packets = _packets(gen, args.packets)
    with open_target("model") as model:
        model.push(gen)
        want = [model.send(p, f) for p, f in packets]
        model_sec, model_cpu, _ = _run(model, packets, "send")
    forwarded = sum(len(r.outputs) for r in want)
    rows = [("embedded model (in-process)", "send", "-", len(packets), len(packets) / model_sec,
             0, 0, model_cpu / len(packets))]
    which = _which_bmv2()
    for how, window, n, nanolog in (
            ("send", 1, args.single, "tcp"), ("send_many", 8, args.packets, "tcp"),
            ("send_many", 32, args.packets, "tcp"), ("send_many", 32, args.packets, "ipc"),
            ("burst", None, args.packets, "tcp")):
        with _bmv2_on(nanolog) as t:
            t.push(gen)
            t.window = Window(min(8, window or 8), max_size=window or 32)
            log = _record(t)
            sec, cpu, res = _run(t, packets[:n], how)
            if how == "burst":
                lost = forwarded - len(res)
                gaps = "-"
            else:
                lost = sum(a.outputs != b.outputs for a, b in zip(want, res))
                gaps = sum(any(e.kind == "note" for e in r.trace.events) for r in res)
            if how == "send_many" and window == 32 and nanolog == "tcp":
                replay = _replay(t, packets[:n], log)
            rows.append((which, how + (" (events on IPC)" if nanolog == "ipc" else ""),
                         f"≤ {window}" if window else "-", n, n / sec, lost, gaps, cpu / n))
    lab_rows = [(name, *_lab_send(url, args.lab)) for name, url in
                (("embedded model", "model"), (which, "bmv2"))]
    print(f"{args.packets} packets ({CHAIN!r}; every fifth one dropped by the program)\n")
    print("| target | how | window | packets | packets/s | lost | events lost | "
          "sfclab CPU/packet |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, how, window, n, rate, lost, gaps, cpu in rows:
        print(f"| {name} | {how} | {window} | {n:,} | {rate:,.0f} | {lost:,} | {gaps} | "
              f"{cpu * 1e6:,.0f} µs |")
    print(f"\nlab.send(\"web\", {args.lab}) after 5, {LAB_CHAIN!r}\n")
    print("| target | packets/s | reported dropped | traces with a note |")
    print("|---|---:|---:|---:|")
    for name, rate, dropped, noted in lab_rows:
        print(f"| {name} | {rate:,.0f} | {dropped} | {noted} |")
    print(f"\nsfclab's side alone (the events and frames of the send_many ≤ 32 run replayed "
          f"into a fresh tracker: decode, match, trace): {replay:,.0f} packets per CPU second")


if __name__ == "__main__":
    main()
