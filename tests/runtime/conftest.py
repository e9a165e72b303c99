"""P4Runtime test rig: a small v1model program, its P4Info, and a raw P4Runtime client.

The raw client (:class:`Rig`) speaks plain p4.v1 protobufs over grpcio, so a test
can send requests no friendly client would build and see the exact gRPC status
and per-update ``p4.v1.Error`` codes the server answers.
"""

from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass, field

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc, rpc_code, rpc_status

from sfclab.codegen.p4info import build_p4info
from sfclab.p4 import parse_p4
from sfclab.targets.model.p4rt import P4RuntimeModelServer

# The test modules import these helpers as ``p4rt_rig``: tests/ has several
# conftest.py outside packages, so "conftest" in sys.modules is whichever came last.
sys.modules["p4rt_rig"] = sys.modules[__name__]

#: Every kind of table and extern the P4Runtime server handles: exact (small, to fill
#: up), lpm, ternary + range + optional with a direct counter, a const default action,
#: two exact keys, a keyless table, @tableonly / @defaultonly actions, an indexed
#: counter, a register, a meter, a digest and the controller packet headers.
PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>

@controller_header("packet_in")
header packet_in_t { bit<16> ingress_port; bit<8> reason; bit<8> pad; }
@controller_header("packet_out")
header packet_out_t { bit<16> egress_port; bit<16> mcast; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
struct headers_t { packet_out_t packet_out; packet_in_t packet_in; ethernet_t ethernet;
                   ipv4_t ipv4; }
struct learn_t { bit<48> mac; bit<9> port; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { 255: parse_packet_out; default: parse_ethernet; }
    }
    state parse_packet_out { pkt.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_counter;
    register<bit<32>>(16) last_len;
    meter(4, MeterType.packets) port_meter;
    direct_counter(CounterType.packets_and_bytes) acl_counter;

    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    action to_cpu(bit<8> reason) {
        sm.egress_spec = 255;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = (bit<16>) sm.ingress_port;
        hdr.packet_in.reason = reason;
        hdr.packet_in.pad = 0;
    }
    action flood(bit<16> group) { sm.mcast_grp = group; }
    action learn() { digest<learn_t>(1, {hdr.ethernet.src, sm.ingress_port}); }
    action only_in_entries() { sm.egress_spec = 1; }
    action only_default() { sm.egress_spec = 2; }
    action acl_permit() { acl_counter.count(); }
    action acl_deny() { acl_counter.count(); mark_to_drop(sm); }

    table l2 {
        key = { hdr.ethernet.dst: exact; }
        actions = { fwd; drop; to_cpu; flood; @tableonly only_in_entries;
                    @defaultonly only_default; }
        default_action = drop();
        size = 4;
    }
    table routes {
        key = { hdr.ipv4.dst: lpm; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    table acl {
        key = { hdr.ipv4.src: ternary; hdr.ipv4.ttl: range; hdr.ipv4.protocol: optional; }
        actions = { acl_permit; acl_deny; }
        default_action = acl_permit();
        counters = acl_counter;
    }
    table ethertype_guard {
        key = { hdr.ethernet.ether_type: exact; }
        actions = { fwd; drop; }
        const default_action = drop();
    }
    table two_keys {
        key = { hdr.ethernet.src: exact; sm.ingress_port: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
    }
    table keyless {
        actions = { NoAction; fwd; }
        default_action = NoAction();
    }
    apply {
        if (hdr.packet_out.isValid()) {
            bit<16> port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            if (port != 0) {
                sm.egress_spec = (bit<9>) port;
                return;
            }
        }
        if (sm.ingress_port < 8) { port_counter.count((bit<32>) sm.ingress_port); }
        if (sm.ingress_port < 16) {
            last_len.write((bit<32>) sm.ingress_port, sm.packet_length);
        }
        keyless.apply();
        two_keys.apply();
        l2.apply();
        if (hdr.ipv4.isValid()) {
            routes.apply();
            acl.apply();
        }
        if (hdr.ethernet.ether_type == 0x0806) { ethertype_guard.apply(); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.packet_in); pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="session")
def program_p4info():
    """The P4Info of :data:`PROGRAM` (what p4c would write for it)."""
    return build_p4info(parse_p4(PROGRAM))


def pipeline_config(p4info, text: str = PROGRAM, cookie: int | None = None):
    cfg = p4r.ForwardingPipelineConfig()
    cfg.p4info.CopyFrom(p4info)
    cfg.p4_device_config = text.encode() if isinstance(text, str) else text
    if cookie is not None:
        cfg.cookie.cookie = cookie
    return cfg


# --- the raw client --------------------------------------------------------------------------

class Stream:
    """One StreamChannel: what the server sends lands in ``inbox`` (or ``error``)."""

    def __init__(self, stub, device_id: int) -> None:
        self.device_id = device_id
        self._out: queue.Queue = queue.Queue()
        self.inbox: queue.Queue = queue.Queue()
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        self._call = stub.StreamChannel(iter(self._out.get, None))
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        try:
            for msg in self._call:
                self.inbox.put(msg)
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.ended.set()

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._out.put(msg)

    def arbitrate(self, election_id: int | None, *, device_id: int | None = None,
                  role: str = "") -> None:
        msg = p4r.StreamMessageRequest()
        a = msg.arbitration
        a.device_id = self.device_id if device_id is None else device_id
        if election_id is not None:
            a.election_id.high, a.election_id.low = election_id >> 64, election_id & (2**64 - 1)
        if role:
            a.role.name = role
        self.send(msg)

    def next(self, kind: str | None = None, timeout: float = 5.0):
        """The next message (of *kind*: arbitration, packet, digest, error), skipping others."""
        while True:
            msg = self.inbox.get(timeout=timeout)
            if kind is None or msg.WhichOneof("update") == kind:
                return msg

    def none(self, kind: str | None = None, wait: float = 0.3) -> bool:
        """True when no message (of *kind*) arrives within *wait* seconds."""
        try:
            self.next(kind, timeout=wait)
        except queue.Empty:
            return True
        return False

    def status(self, timeout: float = 5.0):
        """Arbitration status code and the election id the server announced."""
        a = self.next("arbitration", timeout).arbitration
        eid = (a.election_id.high << 64) | a.election_id.low if a.HasField("election_id") \
            else None
        return a.status.code, eid

    def close(self) -> None:
        self._out.put(None)
        self._call.cancel()
        self.ended.wait(5)


@dataclass
class WriteResult:
    code: grpc.StatusCode
    details: str = ""
    errors: list = field(default_factory=list)      # p4.v1.Error per update

    @property
    def codes(self) -> list[int]:
        return [e.canonical_code for e in self.errors]


def rpc_failure(e: grpc.RpcError) -> WriteResult:
    md = dict(e.trailing_metadata() or ())
    errors = []
    raw = md.get("grpc-status-details-bin")
    if raw:
        status = rpc_status.Status.FromString(raw)
        for d in status.details:
            err = p4r.Error()
            d.Unpack(err)
            errors.append(err)
    return WriteResult(e.code(), e.details(), errors)


class Rig:
    """A raw P4Runtime client of one server, plus name look-ups in the P4Info."""

    def __init__(self, server: P4RuntimeModelServer, p4info) -> None:
        self.server = server
        self.info = p4info
        self.device_id = server.device_id
        self.channel = grpc.insecure_channel(server.address)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.election_id = 10
        self.streams: list[Stream] = []

    # -- sessions -------------------------------------------------------------------------
    def stream(self, election_id: int | None = None, *, expect=rpc_code.OK) -> Stream:
        s = Stream(self.stub, self.device_id)
        self.streams.append(s)
        if election_id is not None:
            s.arbitrate(election_id)
            if expect is not None:
                code, _ = s.status()
                assert code == expect
        return s

    def become_primary(self, election_id: int = 10) -> Stream:
        self.election_id = election_id
        return self.stream(election_id)

    def close(self) -> None:
        for s in self.streams:
            s.close()
        self.channel.close()

    def _election(self, req, election_id):
        eid = self.election_id if election_id is None else election_id
        req.election_id.high, req.election_id.low = eid >> 64, eid & (2**64 - 1)

    # -- RPCs -----------------------------------------------------------------------------
    def set_pipeline(self, config=None, action: str = "VERIFY_AND_COMMIT", *,
                     election_id: int | None = None, device_id: int | None = None):
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id if device_id is None else device_id,
            action=p4r.SetForwardingPipelineConfigRequest.Action.Value(action))
        self._election(req, election_id)
        if config is not None:
            req.config.CopyFrom(config)
        return self.stub.SetForwardingPipelineConfig(req, timeout=30)

    def push(self, text: str = PROGRAM, p4info=None, **kw):
        return self.set_pipeline(pipeline_config(p4info or self.info, text), **kw)

    def get_pipeline(self, response_type: str = "ALL", *, device_id: int | None = None):
        req = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id if device_id is None else device_id,
            response_type=p4r.GetForwardingPipelineConfigRequest.ResponseType.Value(
                response_type))
        return self.stub.GetForwardingPipelineConfig(req, timeout=10)

    def write(self, updates, *, atomicity: str = "CONTINUE_ON_ERROR",
              election_id: int | None = None, device_id: int | None = None,
              role: str = "") -> WriteResult:
        req = p4r.WriteRequest(device_id=self.device_id if device_id is None else device_id,
                               atomicity=p4r.WriteRequest.Atomicity.Value(atomicity))
        if role:
            req.role = role
        self._election(req, election_id)
        req.updates.extend(updates)
        try:
            self.stub.Write(req, timeout=30)
        except grpc.RpcError as e:
            return rpc_failure(e)
        return WriteResult(grpc.StatusCode.OK)

    def ok(self, *updates, **kw) -> None:
        """Write *updates*, asserting that they all succeed."""
        r = self.write(list(updates), **kw)
        assert r.code == grpc.StatusCode.OK, (r.details, r.codes)

    def read(self, *entities, device_id: int | None = None) -> list[p4r.Entity]:
        req = p4r.ReadRequest(device_id=self.device_id if device_id is None else device_id)
        req.entities.extend(entities)
        out: list[p4r.Entity] = []
        for resp in self.stub.Read(req, timeout=30):
            out.extend(resp.entities)
        return out

    def read_failure(self, *entities, **kw) -> WriteResult:
        try:
            self.read(*entities, **kw)
        except grpc.RpcError as e:
            return rpc_failure(e)
        raise AssertionError("the read succeeded")

    # -- names -> ids -----------------------------------------------------------------------
    def table(self, alias: str):
        return next(t for t in self.info.tables if t.preamble.alias == alias)

    def action(self, alias: str):
        return next(a for a in self.info.actions if a.preamble.alias == alias)

    def tid(self, alias: str) -> int:
        return self.table(alias).preamble.id

    def aid(self, alias: str) -> int:
        return self.action(alias).preamble.id

    def fid(self, table: str, name: str) -> int:
        return next(f.id for f in self.table(table).match_fields if f.name.endswith(name))

    def obj_id(self, kind: str, alias: str) -> int:
        return next(o.preamble.id for o in getattr(self.info, kind) if o.preamble.alias == alias)

    # -- entity builders --------------------------------------------------------------------
    def entry(self, table: str, match: dict | None = None, action: str | None = None,
              params: dict | None = None, priority: int = 0, **fields) -> p4r.TableEntry:
        """A table entry; match values are ints (exact, optional), ``(v, plen)`` (lpm),
        ``(v, mask)`` (ternary) or ``(lo, hi)`` (range), looked up by field-name suffix."""
        t = self.table(table)
        te = p4r.TableEntry(table_id=t.preamble.id, priority=priority, **fields)
        for name, v in (match or {}).items():
            f = next(f for f in t.match_fields if f.name.endswith(name))
            fm = te.match.add(field_id=f.id)
            kind = {2: "exact", 3: "lpm", 4: "ternary", 5: "range", 6: "optional"}[f.match_type]
            if kind == "exact":
                fm.exact.value = enc(v)
            elif kind == "optional":
                fm.optional.value = enc(v)
            elif kind == "lpm":
                fm.lpm.value, fm.lpm.prefix_len = enc(v[0]), v[1]
            elif kind == "ternary":
                fm.ternary.value, fm.ternary.mask = enc(v[0]), enc(v[1])
            else:
                fm.range.low, fm.range.high = enc(v[0]), enc(v[1])
        if action is not None:
            a = self.action(action)
            te.action.action.action_id = a.preamble.id
            for p in a.params:
                if params is not None and p.name in params:
                    te.action.action.params.add(param_id=p.id, value=enc(params[p.name]))
        return te


def enc(v) -> bytes:
    """Canonical bytestring of an int (bytes pass through, for malformed values)."""
    if isinstance(v, bytes):
        return v
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def update(kind: str, entity) -> p4r.Update:
    """An Update of *kind* (INSERT, MODIFY, DELETE) for any entity message."""
    u = p4r.Update(type=p4r.Update.Type.Value(kind))
    name = {p4r.TableEntry: "table_entry", p4r.CounterEntry: "counter_entry",
            p4r.DirectCounterEntry: "direct_counter_entry", p4r.MeterEntry: "meter_entry",
            p4r.DirectMeterEntry: "direct_meter_entry", p4r.RegisterEntry: "register_entry",
            p4r.PacketReplicationEngineEntry: "packet_replication_engine_entry",
            p4r.DigestEntry: "digest_entry"}[type(entity)]
    getattr(u.entity, name).CopyFrom(entity)
    return u


def entity(msg) -> p4r.Entity:
    """An Entity wrapping *msg* (for reads)."""
    return update("INSERT", msg).entity


@pytest.fixture()
def p4rt_server():
    """A model switch's P4Runtime server on a free loopback port, no pipeline yet."""
    server = P4RuntimeModelServer()
    server.start("127.0.0.1:0")
    yield server
    server.stop(0)


@pytest.fixture()
def rig(p4rt_server, program_p4info):
    """A raw client of :func:`p4rt_server`, not yet arbitrated."""
    r = Rig(p4rt_server, program_p4info)
    yield r
    r.close()


@pytest.fixture()
def primary(rig):
    """*rig* as the primary (election id 10) with :data:`PROGRAM` pushed."""
    rig.become_primary(10)
    rig.push()
    return rig


def tagger_catalog(*entries):
    """The library's catalogue with an NF ``tagger`` whose table ``tags`` holds 16
    entries and whose manifest gives one example entry per TTL in *entries*."""
    import sfclab

    cat = sfclab.catalog.copy()
    cat.add_source("""control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
        action tag(bit<6> dscp) { hdr.ipv4.dscp = dscp; }
        table tags { key = { hdr.ipv4.ttl : exact; } actions = { tag; NoAction; }
                     default_action = NoAction(); size = 16; }
        apply { if (hdr.ipv4.isValid()) { tags.apply(); } }
    }""", manifest={"entries": [{"table": "tags", "match": {"hdr.ipv4.ttl": ttl},
                                 "action": "tag", "params": {"dscp": 10}} for ttl in entries]})
    return cat
