"""P4Runtime write throughput into the embedded model, and memory per entry.

    python benchmarks/bench_p4runtime.py [--quick] [--profile]

The model's P4Runtime server runs in this process on a loopback port; a raw
P4Runtime client (grpcio and finsy's protobufs, the requests built before the
clock starts) sends batched INSERTs of table entries over gRPC, as a
controller pushing a FIB would.  Rows:

* exact table (one 48-bit key, a two-parameter action), batches of 1,000 and
  of 100 updates, ``CONTINUE_ON_ERROR`` and ``ROLLBACK_ON_ERROR``, and one
  update per ``Write`` into a table that already holds the others;
* the same entries through sfclab's own :class:`~sfclab.runtime.client.Client`
  with its encoding from names (:class:`~sfclab.runtime.encode.P4InfoIndex`),
  i.e. what a :class:`~sfclab.runtime.session.Session` push costs;
* an LPM and a ternary table, batches of 1,000;
* reading all entries back (entities per second).

Memory per installed entry is tracemalloc's difference across inserting 10,000
entries (with the server in the same process, so requests in flight are
excluded by measuring after they are freed).  The target is 20,000 exact-table
INSERTs per second on a 2-core machine.  ``--profile`` prints cProfile's top
functions for the exact-table run.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc

import grpc
from finsy.proto import p4r, p4r_grpc

from sfclab.codegen.entries import Exact, TableEntry
from sfclab.codegen.p4info import build_p4info
from sfclab.p4 import parse_p4
from sfclab.runtime.client import Client
from sfclab.runtime.encode import P4InfoIndex
from sfclab.targets.model.p4rt import P4RuntimeModelServer

TARGET = 20_000

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_nhop(bit<9> port, bit<48> dmac) { sm.egress_spec = port; hdr.ethernet.dst = dmac; }
    action drop() { mark_to_drop(sm); }
    table mac_fib {
        key = { hdr.ethernet.dst: exact; }
        actions = { set_nhop; drop; }
        default_action = drop();
        size = 262144;
    }
    table routes {
        key = { hdr.ipv4.dst: lpm; }
        actions = { set_nhop; drop; }
        default_action = drop();
        size = 262144;
    }
    table acl {
        key = { hdr.ipv4.src: ternary; hdr.ipv4.dst: ternary; }
        actions = { set_nhop; drop; }
        default_action = drop();
        size = 262144;
    }
    apply {
        mac_fib.apply();
        if (hdr.ipv4.isValid()) { routes.apply(); acl.apply(); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

ELECTION_ID = 7


def enc(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class Bench:
    """A server with the program pushed and a raw stub that is its primary."""

    def __init__(self) -> None:
        self.info = build_p4info(parse_p4(PROGRAM))
        self.ids = {t.preamble.alias: t.preamble.id for t in self.info.tables}
        self.actions = {a.preamble.alias: a.preamble.id for a in self.info.actions}
        self.server = P4RuntimeModelServer()
        self.server.start("127.0.0.1:0")
        self.channel = grpc.insecure_channel(self.server.address)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._out: list = []
        arb = p4r.StreamMessageRequest()
        arb.arbitration.device_id = 1
        arb.arbitration.election_id.low = ELECTION_ID
        self._done = False
        self.stream = self.stub.StreamChannel(self._requests(arb))
        first = next(self.stream)
        assert first.arbitration.status.code == 0, first

    def _requests(self, arb):
        yield arb
        while not self._done:
            time.sleep(0.05)

    def push(self) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=1, action=3)
        req.election_id.low = ELECTION_ID
        req.config.p4info.CopyFrom(self.info)
        req.config.p4_device_config = PROGRAM.encode()
        self.stub.SetForwardingPipelineConfig(req)

    def entry(self, table: str, i: int) -> p4r.TableEntry:
        te = p4r.TableEntry(table_id=self.ids[table])
        if table == "mac_fib":
            te.match.add(field_id=1).exact.value = enc(0x020000000000 + i)
        elif table == "routes":
            fm = te.match.add(field_id=1)
            fm.lpm.value, fm.lpm.prefix_len = enc((10 << 24) | (i << 8)), 24
        else:
            te.priority = 1 + i % 1000
            fm = te.match.add(field_id=1)
            fm.ternary.value, fm.ternary.mask = enc(0xC0A80000 | i), enc(0xFFFFFFFF)
            fm = te.match.add(field_id=2)
            fm.ternary.value, fm.ternary.mask = enc(0x0A000000), enc(0xFF000000)
        a = te.action.action
        a.action_id = self.actions["set_nhop"]
        a.params.add(param_id=1, value=enc(1 + i % 16))
        a.params.add(param_id=2, value=enc(0x0A0000000000 + i))
        return te

    def requests(self, table: str, n: int, batch: int, atomicity: int = 0) -> list:
        out = []
        for start in range(0, n, batch):
            req = p4r.WriteRequest(device_id=1, atomicity=atomicity)
            req.election_id.low = ELECTION_ID
            for i in range(start, min(n, start + batch)):
                u = req.updates.add(type=p4r.Update.INSERT)
                u.entity.table_entry.CopyFrom(self.entry(table, i))
            out.append(req)
        return out

    def write_all(self, reqs) -> float:
        t0 = time.perf_counter()
        for req in reqs:
            self.stub.Write(req, timeout=600)
        return time.perf_counter() - t0

    def read_all(self, table: str) -> tuple[int, float]:
        req = p4r.ReadRequest(device_id=1)
        req.entities.add().table_entry.table_id = self.ids[table]
        t0 = time.perf_counter()
        n = sum(len(r.entities) for r in self.stub.Read(req, timeout=600))
        return n, time.perf_counter() - t0

    def close(self) -> None:
        self._done = True
        self.channel.close()
        self.server.stop(0)


def run_raw(table: str, n: int, batch: int, atomicity: int = 0, repeat: int = 3) -> float:
    """Median INSERTs per second over *repeat* fresh pipelines."""
    rates = []
    b = Bench()
    try:
        for _ in range(repeat):
            b.push()
            reqs = b.requests(table, n, batch, atomicity)
            gc.collect()
            rates.append(n / b.write_all(reqs))
    finally:
        b.close()
    return statistics.median(rates)


def run_single(prefill: int, n: int) -> float:
    """One INSERT per Write (as p4runtime-shell's ``te.insert()`` does) into a table that
    already holds *prefill* entries."""
    b = Bench()
    try:
        b.push()
        b.write_all(b.requests("mac_fib", prefill, 1000))
        reqs = [r for r in b.requests("mac_fib", prefill + n, 1)[prefill:]]
        gc.collect()
        return n / b.write_all(reqs)
    finally:
        b.close()


def run_sfclab_client(n: int, batch: int = 512) -> float:
    """sfclab's Client with its name-based encoding (what Session.push does per batch)."""
    b = Bench()
    try:
        # a higher election id than the raw stream's: sfclab's client becomes the primary
        client = Client(b.server.address, election_id=ELECTION_ID + 1).connect()
        client.set_pipeline(b.info, PROGRAM.encode())
        index = P4InfoIndex(b.info)
        entries = [TableEntry("I.mac_fib", (("hdr.ethernet.dst", Exact(0x020000000000 + i)),),
                              "I.set_nhop", (("port", 1 + i % 16), ("dmac", 0x0A0000000000 + i)))
                   for i in range(n)]
        gc.collect()
        t0 = time.perf_counter()
        for s in range(0, n, batch):
            client.write([index.update("INSERT", e) for e in entries[s:s + batch]])
        rate = n / (time.perf_counter() - t0)
        client.close()
        return rate
    finally:
        b.close()


def memory_per_entry(n: int = 10_000) -> float:
    b = Bench()
    try:
        b.push()
        reqs = b.requests("mac_fib", n, 1000)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        b.write_all(reqs)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(b.server.switch.table("I.mac_fib").entries) == n
        return (after - before) / n
    finally:
        b.close()


def profile(n: int) -> None:
    import cProfile
    import pstats

    b = Bench()
    try:
        b.push()
        reqs = b.requests("mac_fib", n, 1000)
        prof = cProfile.Profile()
        # the server's work happens on gRPC's threads: profile the servicer call itself
        server = b.server
        write = server._write

        def traced(request):
            prof.enable()
            try:
                return write(request)
            finally:
                prof.disable()
        server._write = traced
        b.write_all(reqs)
        server._write = write
        pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
    finally:
        b.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer entries, one run each")
    ap.add_argument("--profile", action="store_true", help="cProfile the exact-table writes")
    args = ap.parse_args(argv)
    n = 5_000 if args.quick else 50_000
    repeat = 1 if args.quick else 3
    if args.profile:
        profile(n)
        return 0
    rows = []
    exact = run_raw("mac_fib", n, 1000, repeat=repeat)
    rows.append(("exact, batches of 1,000", n, exact, "INSERT/s"))
    rows.append(("exact, batches of 100", n, run_raw("mac_fib", n, 100, repeat=repeat),
                 "INSERT/s"))
    rows.append((f"exact, one INSERT per Write, into {n:,} entries", n // 10,
                 run_single(n, n // 10), "INSERT/s"))
    rows.append(("exact, batches of 1,000, ROLLBACK_ON_ERROR", n,
                 run_raw("mac_fib", n, 1000, atomicity=1, repeat=repeat), "INSERT/s"))
    rows.append(("exact, sfclab Client + name encoding, batches of 512", n,
                 run_sfclab_client(n), "INSERT/s"))
    rows.append(("lpm /24, batches of 1,000", n, run_raw("routes", n, 1000, repeat=repeat),
                 "INSERT/s"))
    rows.append(("ternary (2 fields, priorities), batches of 1,000", n // 5,
                 run_raw("acl", n // 5, 1000, repeat=1), "INSERT/s"))
    b = Bench()
    try:
        b.push()
        b.write_all(b.requests("mac_fib", n, 1000))
        got, secs = b.read_all("mac_fib")
        rows.append(("read back the exact table (one Read)", got, got / secs, "entities/s"))
    finally:
        b.close()
    mem = memory_per_entry(10_000)
    print("| P4Runtime into the model | entries | rate |")
    print("|---|---:|---:|")
    for what, count, rate, unit in rows:
        print(f"| {what} | {count:,} | {rate:,.0f} {unit} |")
    print(f"| memory per installed exact entry (tracemalloc, 10,000 entries) | 10,000 | "
          f"{mem:,.0f} bytes |")
    ok = exact >= TARGET
    print(f"\nexact-table INSERTs: {exact:,.0f}/s — target {TARGET:,}/s "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
