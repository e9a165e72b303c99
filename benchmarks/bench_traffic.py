"""Sending at the model's speed (issue 20): every way a Lab sends, beside the raw model.

Run: python benchmarks/bench_traffic.py [--quick] [--coverage]

For n = 1,000 / 10,000 / 100,000 packets (``--quick``: 1,000 / 10,000), each in a
fresh process, on ``chain web match tcp.dport == 80: firewall -> nat -> lb -> l3fwd``:

* raw model: ``ModelSwitch.process`` on prebuilt bytes (the planned packets), no Lab;
* ``lab.send("web", n)``: class traffic covering every service path (planned once by
  a warm-up send of 100, then varied by patching bytes), recorded in ``lab.traces``;
* ``lab.send_packet``: n prebuilt packets, one call each;
* ``lab.send_pcap``: a pcap of n packets (written first, read as it goes);
* ``net.send``: class traffic on the embedded network, three switches in a line with
  one NF each (heavy_hitter, qos, nat), per switch hop, beside the raw model of the
  same three switches on prebuilt per-hop bytes;
* RSS after ``lab.send(n)`` and the row's peak RSS (every send above, in that process).

The machine is shared, so rates are packets per CPU second of the process (wall-clock
time would count the other jobs' too), and every rate is measured alternately with a
raw run of the same size (three times each up to 10,000 packets, the best kept) and
given with its share of that raw run; the planning (the
warm-up send's oracle search) is timed apart.  ``--coverage`` adds the older figures of this file:
``shadowed()`` on N random chains and the coverage search of ``sfclab/cli/demo.sfc``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAIN = "chain web match tcp.dport == 80: firewall -> nat -> lb -> l3fwd"


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def timed(fn) -> float:
    """CPU seconds *fn* took in this process (the machine is shared: wall-clock time
    counts the other jobs' time too)."""
    t = time.process_time()
    fn()
    return time.process_time() - t


def row(n: int) -> dict:
    """One row, in this process (run by ``--row N`` in a fresh one)."""
    import sfclab
    from scapy.utils import wrpcap

    out: dict = {"n": n}
    lab = sfclab.Lab()
    lab.add(CHAIN)
    lab.push()
    out["plan_s"] = timed(lambda: lab.send("web", 100, progress=False))
    planned = [(p, d) for p, d, _ in lab._sender._plans[("web", 0)][0].packets(64)]
    sw = lab.target.switch

    def raw() -> float:
        def go() -> None:
            for i in range(n):
                p, d = planned[i % 64]
                sw.process(p, d)
        return n / timed(go)

    def pair(name: str, fn) -> None:
        best = [0.0, 0.0]
        for _ in range(repeats(n)):                 # raw and measured, alternately
            best[0] = max(best[0], raw())
            best[1] = max(best[1], n / timed(fn))
        out[name + "_raw"], out[name] = best
    pair("lab.send", lambda: lab.send("web", n, progress=False))
    out["rss_after_send"] = rss_mb()
    out["kept"] = len(list(lab.traces))
    out["counted"] = lab.traces.summary.packets

    def singles() -> None:
        for i in range(n):
            p, d = planned[i % 64]
            lab.send_packet(d, port=p)
    pair("send_packet", singles)
    with tempfile.TemporaryDirectory() as tmp:
        pcap = Path(tmp) / "web.pcap"
        wrpcap(str(pcap), [planned[i % 64][1] for i in range(n)], linktype=1)
        pair("send_pcap", lambda: lab.send_pcap(pcap, port=1, progress=False))
    out["raw"] = max(out[k] for k in out if k.endswith("_raw"))
    lab.close()
    out.update(network(n))
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def network(n: int) -> dict:
    """net.send per switch hop, beside the raw model of the same switches."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_network import line, linear_chain

    from sfclab.ir.model import ChainSet
    from sfclab.network import Network

    chains = ChainSet.of([linear_chain("c", ["heavy_hitter", "qos", "nat"])])
    with Network(line(3, stages=8), chains) as net:
        net.push()
        net.send("h1", "h2", "c", n=100)                     # plans the class traffic
        planned = [d for _, d, _ in net._plans[("c", 0)][0].packets(64)]
        target, topo = net.target, net.topology
        frames = []                                          # what each switch receives
        for data in planned:
            (node, port), per = target.entry("h1"), []
            while node in target.switches:
                sw = target.switches[node].switch
                per.append((sw, port, data))
                r = sw.process(port, data)
                port_out, data = r.outputs[0]
                node, port = topo.peer(node, port_out)
            assert len(per) == 3, per
            frames.append(per)

        def raw() -> None:
            for i in range(n):
                for sw, port, data in frames[i % 64]:
                    sw.process(port, data)
        t_raw = t_net = float("inf")
        for _ in range(repeats(n)):                 # raw and measured, alternately
            t_raw = min(t_raw, timed(raw))
            t_net = min(t_net, timed(lambda: net.send("h1", "h2", "c", n=n)))
    return {"net_raw_hop": 3 * n / t_raw, "net_hop": 3 * n / t_net}


def repeats(n: int) -> int:
    """Runs of each measurement (the best is kept): 3 up to 10,000 packets, else 1."""
    return 3 if n <= 10_000 else 1


def pct(a: float, b: float) -> str:
    return f"{a:,.0f} ({100 * a / b:.0f}%)"


def table(rows: list[dict]) -> None:
    print("| packets | raw model | lab.send | send_packet | send_pcap | raw model per hop "
          "(3 switches) | net.send per hop | RSS after lab.send | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['n']:,} | {r['raw']:,.0f} | {pct(r['lab.send'], r['lab.send_raw'])} | "
              f"{pct(r['send_packet'], r['send_packet_raw'])} | "
              f"{pct(r['send_pcap'], r['send_pcap_raw'])} | {r['net_raw_hop']:,.0f} | "
              f"{pct(r['net_hop'], r['net_raw_hop'])} | {r['rss_after_send']:.0f} MB | "
              f"{r['peak_rss']:.0f} MB |")
    print("\nRates in packets per CPU second; in brackets, the share of the raw model measured alternately "
          "with it (the same program, the same number of packets; best of 3 up to 10,000). Traces kept whole: "
          + ", ".join(f"{r['kept']:,} of {r['counted']:,}" for r in rows)
          + f". Planning (the first send of the chain: its oracle search): "
          + ", ".join(f"{r['plan_s'] * 1000:.0f} ms" for r in rows) + ".")


# -- the coverage search (the older figures of this file) -----------------------------------

def random_set(n: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        net = f"10.{rnd.randint(0, 3)}.0.0/{rnd.choice([8, 16])}"
        port = rnd.choice([22, 53, 80, 443])
        proto = "tcp" if port != 53 else "udp"
        lines.append(f"chain c{i} match ipv4.dst == {net} && {proto}.dport == {port}: l3fwd")
    return "\n".join(lines)


def bench_shadowed(n: int) -> None:
    import sfclab
    from sfclab.ir.validate import program_headers, shadowed
    from sfclab.lang import default_catalog

    chains = sfclab.parse(random_set(n))
    parsed = program_headers(chains, default_catalog())
    best, found = float("inf"), []
    for _ in range(5):
        t = time.perf_counter()
        found = shadowed(chains, parsed=parsed)
        best = min(best, time.perf_counter() - t)
    print(f"shadowed(): {n} chains, {len(found)} get no packets: {best * 1000:.1f} ms")


def bench_coverage(packets: int) -> None:
    import sfclab
    from sfclab.codegen import CodegenOptions, generate
    from sfclab.targets.traffic.coverage import all_class_traffic

    gen = generate(sfclab.compile((ROOT / "sfclab" / "cli" / "demo.sfc").read_text()),
                   options=CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3}))
    t = time.perf_counter()
    plans = all_class_traffic(gen, packets)
    took = time.perf_counter() - t
    tried = sum(p.tried for p in plans.values())
    paths = sum(len(p.paths) for p in plans.values())
    covered = sum(len(p.covered) for p in plans.values())
    print(f"all_class_traffic(): demo.sfc, {packets} packets per class: {covered} of {paths} "
          f"paths covered, {tried} candidates in {took:.2f} s ({tried / took:.0f} candidates/s, "
          "oracle start included)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="n = 1,000 and 10,000 only")
    ap.add_argument("--coverage", action="store_true", help="also the coverage search figures")
    ap.add_argument("--row", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.row:
        print(json.dumps(row(args.row)))
        return
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    rows = []
    for n in sizes:
        done = subprocess.run([sys.executable, __file__, "--row", str(n)], check=True,
                              capture_output=True, text=True, env=dict(os.environ))
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"n = {n:,}: done", file=sys.stderr)
    print(f"## sending at the model's speed: `{CHAIN}`\n")
    table(rows)
    if args.coverage:
        print()
        bench_shadowed(20)
        bench_coverage(8)


if __name__ == "__main__":
    main()
