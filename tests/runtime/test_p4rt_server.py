"""The model switch's P4Runtime server against the P4Runtime specification (v1.4).

Every refused request is checked twice: the gRPC status (and, for a ``Write``
batch, the ``p4.v1.Error`` of each update) is the one the specification
prescribes, and reading everything back shows that nothing changed.  The happy
paths cover the pipeline actions, reads with wildcards, counters, direct
counters, registers, meters, the packet replication engine, arbitration,
packet I/O through the CPU port and digests.
"""

from __future__ import annotations

import queue
import time

import grpc
import pytest
from finsy.proto import p4d, p4r, rpc_code
from scapy.all import IP, TCP, Ether

from sfclab.codegen.p4info import build_p4info
from sfclab.p4 import parse_p4
from sfclab.targets.model.p4rt import P4RT_API_VERSION

from p4rt_rig import PROGRAM, enc, entity, pipeline_config, rpc_failure, update

OK, UNKNOWN = grpc.StatusCode.OK, grpc.StatusCode.UNKNOWN
C = rpc_code


def mac(n: int) -> str:
    return ":".join(f"{b:02x}" for b in n.to_bytes(6, "big"))


def frame(dst: int, src: int = 0x99, ip: dict | None = None) -> bytes:
    """An Ethernet frame (MACs as ints), IPv4/TCP when *ip* gives the IP fields."""
    if ip is not None:
        return bytes(Ether(dst=mac(dst), src=mac(src)) / IP(**ip) / TCP())
    return bytes(Ether(dst=mac(dst), src=mac(src), type=0x9000) / b"payload")


def send(server, port: int, data: bytes):
    """Run a packet through the committed pipeline as ModelTarget.send does (packet-ins
    and digests go to the primary client)."""
    with server._lock:
        result = server.switch.process(port, data)
        server.deliver(result)
    return result


def snapshot(rig) -> list[bytes]:
    """Everything a client can read, serialized and sorted."""
    ents = [entity(p4r.TableEntry(counter_data=p4r.CounterData()))]
    ents += [entity(p4r.TableEntry(table_id=t.preamble.id, is_default_action=True))
             for t in rig.info.tables]
    ents += [entity(p4r.CounterEntry()), entity(p4r.RegisterEntry()), entity(p4r.MeterEntry()),
             entity(p4r.PacketReplicationEngineEntry()), entity(p4r.DigestEntry()),
             entity(p4r.DirectCounterEntry(table_entry=p4r.TableEntry()))]
    return sorted(e.SerializeToString(deterministic=True) for e in rig.read(*ents))


def mc_group(gid: int, *ports: int, legacy: bool = False) -> p4r.PacketReplicationEngineEntry:
    pre = p4r.PacketReplicationEngineEntry()
    g = pre.multicast_group_entry
    g.multicast_group_id = gid
    for p in ports:
        if legacy:
            g.replicas.add(egress_port=p, instance=0)
        else:
            g.replicas.add(port=enc(p), instance=0)
    return pre


def clone_session(sid: int, *ports: int) -> p4r.PacketReplicationEngineEntry:
    pre = p4r.PacketReplicationEngineEntry()
    s = pre.clone_session_entry
    s.session_id = sid
    for p in ports:
        s.replicas.add(port=enc(p), instance=1)
    return pre


@pytest.fixture()
def loaded(primary):
    """The primary with entries in most tables, a changed default action, a register
    cell, a multicast group and a clone session."""
    r = primary
    E = r.entry
    r.ok(update("INSERT", E("l2", {"dst": 0x0a}, "fwd", {"port": 1})),
         update("INSERT", E("l2", {"dst": 0x0b}, "to_cpu", {"reason": 7})),
         update("INSERT", E("routes", {"dst": (0x0a000000, 8)}, "fwd", {"port": 2})),
         update("INSERT", E("acl", {"src": (0x0a000000, 0xff000000), "ttl": (1, 64),
                                    "protocol": 6}, "acl_deny", priority=10)),
         update("INSERT", E("two_keys", {"src": 0xaa, "ingress_port": 1}, "NoAction")),
         update("MODIFY", E("routes", action="fwd", params={"port": 9},
                            is_default_action=True)),
         update("MODIFY", p4r.RegisterEntry(register_id=r.obj_id("registers", "last_len"),
                                            index=p4r.Index(index=2),
                                            data=p4d.P4Data(bitstring=enc(77)))),
         update("INSERT", mc_group(1, 1, 2)),
         update("INSERT", clone_session(5, 3)))
    return r


# --- refused writes: the code the specification prescribes, and nothing changes ------------

def _digest(r, kind="MODIFY", digest_id=None):
    return update(kind, p4r.DigestEntry(
        digest_id=r.obj_id("digests", "learn_t") if digest_id is None else digest_id,
        config=p4r.DigestEntry.Config(max_timeout_ns=0, max_list_size=1)))


def _raw(kind: int, **entity_fields) -> p4r.Update:
    u = p4r.Update(type=kind)
    for k, v in entity_fields.items():
        getattr(u.entity, k).CopyFrom(v)
    return u


def _with(te: p4r.TableEntry, fn) -> p4r.TableEntry:
    fn(te)
    return te


BAD_WRITES = {
    # existence
    "duplicate INSERT": (lambda r: [update("INSERT", r.entry("l2", {"dst": 0x0a}, "fwd",
                                                             {"port": 1}))], [C.ALREADY_EXISTS]),
    "MODIFY of a missing entry": (lambda r: [update("MODIFY", r.entry(
        "l2", {"dst": 0x99}, "fwd", {"port": 1}))], [C.NOT_FOUND]),
    "DELETE of a missing entry": (lambda r: [update("DELETE", r.entry("l2", {"dst": 0x99}))],
                                  [C.NOT_FOUND]),
    "DELETE with another priority": (lambda r: [update("DELETE", r.entry(
        "acl", {"src": (0x0a000000, 0xff000000), "ttl": (1, 64), "protocol": 6},
        priority=11))], [C.NOT_FOUND]),
    # ids that are not in the P4Info
    "unknown table id": (lambda r: [update("INSERT", _with(r.entry("l2", {"dst": 1}, "fwd",
                                                                   {"port": 1}),
                                                           lambda te: setattr(te, "table_id",
                                                                              0x02ffffff)))],
                         [C.INVALID_ARGUMENT]),
    "table id 0": (lambda r: [update("INSERT", p4r.TableEntry())], [C.INVALID_ARGUMENT]),
    "unknown action id": (lambda r: [update("INSERT", _with(
        r.entry("l2", {"dst": 1}, "fwd", {"port": 1}),
        lambda te: setattr(te.action.action, "action_id", 0x01ffffff)))], [C.INVALID_ARGUMENT]),
    "unknown match field id": (lambda r: [update("INSERT", _with(
        r.entry("l2", {"dst": 1}, "fwd", {"port": 1}),
        lambda te: setattr(te.match[0], "field_id", 9)))], [C.INVALID_ARGUMENT]),
    "unknown parameter id": (lambda r: [update("INSERT", _with(
        r.entry("l2", {"dst": 1}, "fwd", {"port": 1}),
        lambda te: setattr(te.action.action.params[0], "param_id", 7)))], [C.INVALID_ARGUMENT]),
    # bytestrings
    "value wider than the field": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1 << 48}, "fwd", {"port": 1}))], [C.OUT_OF_RANGE]),
    "parameter wider than declared": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 512}))], [C.OUT_OF_RANGE]),
    "empty bytestring": (lambda r: [update("INSERT", r.entry("l2", {"dst": b""}, "fwd",
                                                             {"port": 1}))], [C.OUT_OF_RANGE]),
    # match kinds
    "ternary with a zero mask": (lambda r: [update("INSERT", r.entry(
        "acl", {"src": (0, 0)}, "acl_deny", priority=1))], [C.INVALID_ARGUMENT]),
    "ternary value bits outside the mask": (lambda r: [update("INSERT", r.entry(
        "acl", {"src": (0x0a000001, 0xff000000)}, "acl_deny", priority=1))],
        [C.INVALID_ARGUMENT]),
    "lpm with bits beyond the prefix": (lambda r: [update("INSERT", r.entry(
        "routes", {"dst": (0x0a000001, 8)}, "fwd", {"port": 1}))], [C.INVALID_ARGUMENT]),
    "lpm with prefix length 0": (lambda r: [update("INSERT", r.entry(
        "routes", {"dst": (0, 0)}, "fwd", {"port": 1}))], [C.INVALID_ARGUMENT]),
    "lpm prefix longer than the field": (lambda r: [update("INSERT", r.entry(
        "routes", {"dst": (0x0a000000, 33)}, "fwd", {"port": 1}))], [C.INVALID_ARGUMENT]),
    "range low > high": (lambda r: [update("INSERT", r.entry(
        "acl", {"ttl": (9, 3)}, "acl_deny", priority=1))], [C.INVALID_ARGUMENT]),
    "range covering everything": (lambda r: [update("INSERT", r.entry(
        "acl", {"ttl": (0, 255)}, "acl_deny", priority=1))], [C.INVALID_ARGUMENT]),
    "missing exact field": (lambda r: [update("INSERT", r.entry(
        "two_keys", {"src": 0xab}, "NoAction"))], [C.INVALID_ARGUMENT]),
    "match kind not the field's": (lambda r: [update("INSERT", _with(
        r.entry("l2", action="fwd", params={"port": 1}),
        lambda te: te.match.add(field_id=1).lpm.CopyFrom(
            p4r.FieldMatch.LPM(value=b"\x01", prefix_len=48))))], [C.INVALID_ARGUMENT]),
    "field given twice": (lambda r: [update("INSERT", _with(
        r.entry("l2", {"dst": 1}, "fwd", {"port": 1}),
        lambda te: te.match.add().CopyFrom(te.match[0])))], [C.INVALID_ARGUMENT]),
    "optional value wider than the field": (lambda r: [update("INSERT", r.entry(
        "acl", {"protocol": 256}, "acl_deny", priority=1))], [C.OUT_OF_RANGE]),
    # priorities: a table with a ternary, range or optional field needs one on every entry
    # (even one whose fields are all omitted), an exact / lpm table takes none
    "missing priority": (lambda r: [update("INSERT", r.entry(
        "acl", {"protocol": 17}, "acl_deny"))], [C.INVALID_ARGUMENT]),
    "missing priority, ternary": (lambda r: [update("INSERT", r.entry(
        "acl", {"src": (0x0a000000, 0xff000000)}, "acl_deny"))], [C.INVALID_ARGUMENT]),
    "missing priority, range": (lambda r: [update("INSERT", r.entry(
        "acl", {"ttl": (1, 9)}, "acl_deny"))], [C.INVALID_ARGUMENT]),
    "missing priority, every field omitted": (lambda r: [update("INSERT", r.entry(
        "acl", {}, "acl_deny"))], [C.INVALID_ARGUMENT]),
    "extra priority": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 1}, priority=5))], [C.INVALID_ARGUMENT]),
    "extra priority, lpm": (lambda r: [update("INSERT", r.entry(
        "routes", {"dst": (0x0b000000, 8)}, "fwd", {"port": 1}, priority=5))],
        [C.INVALID_ARGUMENT]),
    # actions
    "action not in the table": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "acl_permit"))], [C.INVALID_ARGUMENT]),
    "missing action parameter": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {}))], [C.INVALID_ARGUMENT]),
    "INSERT without an action": (lambda r: [update("INSERT", r.entry("l2", {"dst": 1}))],
                                 [C.INVALID_ARGUMENT]),
    "action profile member in a direct table": (lambda r: [update("INSERT", _with(
        r.entry("l2", {"dst": 1}), lambda te: setattr(te.action, "action_profile_member_id",
                                                      3)))], [C.INVALID_ARGUMENT]),
    "@defaultonly action in an entry": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "only_default"))], [C.PERMISSION_DENIED]),
    "@tableonly action as the default": (lambda r: [update("MODIFY", r.entry(
        "l2", action="only_in_entries", is_default_action=True))], [C.PERMISSION_DENIED]),
    # default entries
    "modifying a const default action": (lambda r: [update("MODIFY", r.entry(
        "ethertype_guard", action="fwd", params={"port": 1}, is_default_action=True))],
        [C.PERMISSION_DENIED]),
    "resetting a const default action": (lambda r: [update("MODIFY", r.entry(
        "ethertype_guard", is_default_action=True))], [C.PERMISSION_DENIED]),
    "INSERT of the default entry": (lambda r: [update("INSERT", r.entry(
        "routes", action="NoAction", is_default_action=True))], [C.INVALID_ARGUMENT]),
    "DELETE of the default entry": (lambda r: [update("DELETE", r.entry(
        "routes", is_default_action=True))], [C.INVALID_ARGUMENT]),
    "default entry with a match": (lambda r: [update("MODIFY", r.entry(
        "routes", {"dst": (0x0a000000, 8)}, "NoAction", is_default_action=True))],
        [C.INVALID_ARGUMENT]),
    # other TableEntry fields
    "is_const in a write": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 1}, is_const=True))], [C.INVALID_ARGUMENT]),
    "idle timeout on a table without it": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 1}, idle_timeout_ns=10**9))], [C.INVALID_ARGUMENT]),
    "counter data on a table without a direct counter": (lambda r: [update("INSERT", r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 1}, counter_data=p4r.CounterData(packet_count=1)))],
        [C.INVALID_ARGUMENT]),
    "INSERT into a keyless table": (lambda r: [update("INSERT", r.entry("keyless",
                                                                        action="NoAction"))],
                                    [C.INVALID_ARGUMENT]),
    # updates
    "unspecified update type": (lambda r: [_raw(0, table_entry=r.entry(
        "l2", {"dst": 1}, "fwd", {"port": 1}))], [C.INVALID_ARGUMENT]),
    "empty entity": (lambda r: [p4r.Update(type=p4r.Update.INSERT)], [C.INVALID_ARGUMENT]),
    "action profile members": (lambda r: [_raw(p4r.Update.INSERT, action_profile_member=(
        p4r.ActionProfileMember(action_profile_id=1, member_id=1)))], [C.UNIMPLEMENTED]),
    # counters, registers, meters
    "INSERT of a counter entry": (lambda r: [update("INSERT", p4r.CounterEntry(
        counter_id=r.obj_id("counters", "port_counter"), index=p4r.Index(index=1)))],
        [C.INVALID_ARGUMENT]),
    "counter index beyond the size": (lambda r: [update("MODIFY", p4r.CounterEntry(
        counter_id=r.obj_id("counters", "port_counter"), index=p4r.Index(index=8),
        data=p4r.CounterData(packet_count=1)))], [C.OUT_OF_RANGE]),
    "negative counter index": (lambda r: [update("MODIFY", p4r.CounterEntry(
        counter_id=r.obj_id("counters", "port_counter"), index=p4r.Index(index=-1),
        data=p4r.CounterData(packet_count=1)))], [C.INVALID_ARGUMENT]),
    "unknown counter id": (lambda r: [update("MODIFY", p4r.CounterEntry(
        counter_id=0x12ffffff, data=p4r.CounterData(packet_count=1)))], [C.INVALID_ARGUMENT]),
    "register index beyond the size": (lambda r: [update("MODIFY", p4r.RegisterEntry(
        register_id=r.obj_id("registers", "last_len"), index=p4r.Index(index=16),
        data=p4d.P4Data(bitstring=b"\x01")))], [C.OUT_OF_RANGE]),
    "register value wider than the cell": (lambda r: [update("MODIFY", p4r.RegisterEntry(
        register_id=r.obj_id("registers", "last_len"), index=p4r.Index(index=1),
        data=p4d.P4Data(bitstring=enc(1 << 32))))], [C.OUT_OF_RANGE]),
    "DELETE of a register entry": (lambda r: [update("DELETE", p4r.RegisterEntry(
        register_id=r.obj_id("registers", "last_len"), index=p4r.Index(index=1)))],
        [C.INVALID_ARGUMENT]),
    "meter with cir above pir": (lambda r: [update("MODIFY", p4r.MeterEntry(
        meter_id=r.obj_id("meters", "port_meter"), index=p4r.Index(index=1),
        config=p4r.MeterConfig(cir=100, cburst=10, pir=50, pburst=10)))],
        [C.INVALID_ARGUMENT]),
    "direct counter INSERT": (lambda r: [update("INSERT", p4r.DirectCounterEntry(
        table_entry=r.entry("acl", {"src": (0x0a000000, 0xff000000), "ttl": (1, 64),
                                    "protocol": 6}, priority=10)))], [C.INVALID_ARGUMENT]),
    "direct counter of a missing entry": (lambda r: [update("MODIFY", p4r.DirectCounterEntry(
        table_entry=r.entry("acl", {"protocol": 17}, priority=3),
        data=p4r.CounterData(packet_count=5)))], [C.NOT_FOUND]),
    # packet replication engine
    "multicast group 0": (lambda r: [update("INSERT", mc_group(0, 1))], [C.INVALID_ARGUMENT]),
    "multicast group INSERT twice": (lambda r: [update("INSERT", mc_group(1, 4))],
                                     [C.ALREADY_EXISTS]),
    "multicast group MODIFY of a missing group": (lambda r: [update("MODIFY", mc_group(7, 4))],
                                                  [C.NOT_FOUND]),
    "multicast group DELETE of a missing group": (lambda r: [update("DELETE", mc_group(7))],
                                                  [C.NOT_FOUND]),
    "multicast group with a replica twice": (lambda r: [update("INSERT", mc_group(8, 4, 4))],
                                             [C.INVALID_ARGUMENT]),
    # BMv2's server (PI) keeps group ids from 32768 up for its clone sessions
    "multicast group id 32768": (lambda r: [update("INSERT", mc_group(1 << 15, 4))],
                                 [C.OUT_OF_RANGE]),
    "multicast group replica without a port": (lambda r: [update("INSERT", _with(
        mc_group(9), lambda pre: pre.multicast_group_entry.replicas.add(instance=1)))],
        [C.INVALID_ARGUMENT]),
    "clone session 0": (lambda r: [update("INSERT", clone_session(0, 1))], [C.INVALID_ARGUMENT]),
    "clone session INSERT twice": (lambda r: [update("INSERT", clone_session(5, 1))],
                                   [C.ALREADY_EXISTS]),
    # digests
    "MODIFY of an unconfigured digest": (lambda r: [_digest(r, "MODIFY")], [C.NOT_FOUND]),
    "DELETE of an unconfigured digest": (lambda r: [_digest(r, "DELETE")], [C.NOT_FOUND]),
    "unknown digest id": (lambda r: [_digest(r, "INSERT", 0x17ffffff)], [C.INVALID_ARGUMENT]),
    # several failures in one batch: each update has its own code
    "a batch of failures": (lambda r: [
        update("INSERT", r.entry("l2", {"dst": 0x0a}, "fwd", {"port": 1})),
        update("DELETE", r.entry("l2", {"dst": 0x99})),
        update("INSERT", r.entry("l2", {"dst": 1 << 48}, "fwd", {"port": 1}))],
        [C.ALREADY_EXISTS, C.NOT_FOUND, C.OUT_OF_RANGE]),
}


@pytest.mark.parametrize("case", list(BAD_WRITES))
def test_a_refused_update_has_the_specified_code_and_changes_nothing(loaded, case):
    build, codes = BAD_WRITES[case]
    before = snapshot(loaded)
    r = loaded.write(build(loaded))
    assert r.code == UNKNOWN, r.details
    assert r.codes == codes, [e.message for e in r.errors]
    assert all(e.message for e in r.errors)
    assert snapshot(loaded) == before


@pytest.mark.parametrize("atomicity", ["ROLLBACK_ON_ERROR", "DATAPLANE_ATOMIC"])
def test_an_atomic_batch_with_one_failure_applies_nothing(loaded, atomicity):
    r = loaded
    before = snapshot(r)
    batch = _mixed_batch(r)
    res = r.write(batch, atomicity=atomicity)
    assert res.code == UNKNOWN
    assert res.codes == [C.ABORTED] * (len(batch) - 1) + [C.ALREADY_EXISTS]
    assert snapshot(r) == before
    assert send(r.server, 1, frame(0x0a)).ports == [1]      # the old entry still forwards


def test_continue_on_error_applies_the_good_updates(loaded):
    r = loaded
    batch = _mixed_batch(r)
    res = r.write(batch)
    assert res.code == UNKNOWN
    assert res.codes == [C.OK] * (len(batch) - 1) + [C.ALREADY_EXISTS]
    assert send(r.server, 1, frame(0x0a)).ports == [5]      # MODIFY'd
    assert send(r.server, 1, frame(0x0c)).ports == [4]      # INSERT'ed
    assert len(r.read(entity(r.entry("routes")))) == 0      # DELETE'd
    (cell,) = r.read(entity(p4r.RegisterEntry(register_id=r.obj_id("registers", "last_len"),
                                              index=p4r.Index(index=2))))
    assert cell.register_entry.data.bitstring == enc(1234)
    (group,) = r.read(entity(mc_group(1)))
    assert [x.port for x in group.packet_replication_engine_entry.multicast_group_entry
            .replicas] == [enc(6)]


def _mixed_batch(r):
    """Nine good updates of every kind, then a duplicate INSERT."""
    E = r.entry
    return [
        update("INSERT", E("l2", {"dst": 0x0c}, "fwd", {"port": 4})),
        update("MODIFY", E("l2", {"dst": 0x0a}, "fwd", {"port": 5})),
        update("DELETE", E("routes", {"dst": (0x0a000000, 8)})),
        update("MODIFY", E("routes", is_default_action=True)),           # reset
        update("MODIFY", p4r.RegisterEntry(register_id=r.obj_id("registers", "last_len"),
                                           index=p4r.Index(index=2),
                                           data=p4d.P4Data(bitstring=enc(1234)))),
        update("MODIFY", p4r.CounterEntry(counter_id=r.obj_id("counters", "port_counter"),
                                          data=p4r.CounterData(packet_count=3, byte_count=9))),
        update("MODIFY", mc_group(1, 6)),
        update("DELETE", clone_session(5)),
        _digest(r, "INSERT"),
        update("INSERT", E("l2", {"dst": 0x0b}, "fwd", {"port": 1})),    # exists: fails
    ]


def test_a_full_table_refuses_the_next_entry(loaded):
    r = loaded
    r.ok(update("INSERT", r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 1})),
         update("INSERT", r.entry("l2", {"dst": 0x0d}, "fwd", {"port": 1})))
    before = snapshot(r)
    res = r.write([update("INSERT", r.entry("l2", {"dst": 0x0e}, "fwd", {"port": 1}))])
    assert res.code == UNKNOWN and res.codes == [C.RESOURCE_EXHAUSTED]
    assert snapshot(r) == before
    # a full table still takes MODIFYs, and an INSERT after a DELETE
    r.ok(update("MODIFY", r.entry("l2", {"dst": 0x0c}, "drop")),
         update("DELETE", r.entry("l2", {"dst": 0x0d})),
         update("INSERT", r.entry("l2", {"dst": 0x0e}, "fwd", {"port": 1})))


# --- refused requests --------------------------------------------------------------------------

def test_a_write_before_any_pipeline_fails_the_precondition(rig):
    rig.become_primary(10)
    res = rig.write([update("INSERT", rig.entry("l2", {"dst": 1}, "fwd", {"port": 1}))])
    assert res.code == grpc.StatusCode.FAILED_PRECONDITION and not res.errors
    assert "forwarding pipeline config" in res.details
    assert rig.read_failure(entity(p4r.TableEntry())).code == \
        grpc.StatusCode.FAILED_PRECONDITION
    assert not rig.get_pipeline().HasField("config")       # P4Runtime: config left unset


def test_a_write_from_a_backup_is_denied(loaded):
    r = loaded
    before = snapshot(r)
    r.stream(5, expect=C.ALREADY_EXISTS)          # a live backup with election id 5
    u = [update("INSERT", r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 1}))]
    for eid in (5, 11, None):
        res = r.write(u, election_id=eid) if eid is not None else _write_unset(r, u)
        assert res.code == grpc.StatusCode.PERMISSION_DENIED and not res.errors
    assert _set_denied(r, 5) == grpc.StatusCode.PERMISSION_DENIED
    assert snapshot(r) == before


def _write_unset(r, updates):
    req = p4r.WriteRequest(device_id=r.device_id)
    req.updates.extend(updates)
    try:
        r.stub.Write(req)
    except grpc.RpcError as e:
        return rpc_failure(e)
    raise AssertionError("a write without election id succeeded")


def _set_denied(r, eid):
    with pytest.raises(grpc.RpcError) as info:
        r.set_pipeline(pipeline_config(r.info), election_id=eid)
    return info.value.code()


def test_a_wrong_device_id_is_not_found(loaded):
    r = loaded
    before = snapshot(r)
    res = r.write([update("INSERT", r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 1}))],
                  device_id=7)
    assert res.code == grpc.StatusCode.NOT_FOUND and not res.errors
    assert r.read_failure(entity(p4r.TableEntry()), device_id=7).code == \
        grpc.StatusCode.NOT_FOUND
    for call in (lambda: r.get_pipeline(device_id=7),
                 lambda: r.set_pipeline(pipeline_config(r.info), device_id=7)):
        with pytest.raises(grpc.RpcError) as info:
            call()
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
    # an unknown role is refused the same way: the server knows only the default role
    res = r.write([update("INSERT", r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 1}))],
                  role="routing")
    assert res.code == grpc.StatusCode.NOT_FOUND
    assert snapshot(r) == before


# --- SetForwardingPipelineConfig / GetForwardingPipelineConfig --------------------------------

def _variant(old: str, new: str):
    text = PROGRAM.replace(old, new)
    assert text != PROGRAM
    return text, build_p4info(parse_p4(text))


def test_a_p4info_that_does_not_match_the_program_is_refused(loaded):
    r = loaded
    before = snapshot(r)
    bad = type(r.info)()
    bad.CopyFrom(r.info)
    bad.tables[0].match_fields[0].bitwidth = 32
    cases = [pipeline_config(bad),                                   # P4Info != program
             pipeline_config(r.info, b"\xff\xfe not UTF-8"),          # not the program's text
             pipeline_config(r.info, "this is not P4"),
             pipeline_config(r.info, "")]
    for cfg in cases:
        for action in ("VERIFY", "VERIFY_AND_SAVE", "VERIFY_AND_COMMIT", "RECONCILE_AND_COMMIT"):
            with pytest.raises(grpc.RpcError) as info:
                r.set_pipeline(cfg, action)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        r.set_pipeline(None, "VERIFY_AND_COMMIT")                  # no config at all
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as info:
        r.set_pipeline(pipeline_config(r.info), "UNSPECIFIED")
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "does not match" in _details(lambda: r.set_pipeline(pipeline_config(bad)))
    assert "UTF-8" in _details(lambda: r.set_pipeline(pipeline_config(r.info, b"\xff")))
    assert snapshot(r) == before
    assert r.server.saved is None
    assert r.get_pipeline("P4INFO_AND_COOKIE").config.p4info == r.info


def _details(call) -> str:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.details()


def test_verify_changes_nothing(loaded):
    r = loaded
    before, switch = snapshot(r), r.server.switch
    text, info = _variant("size = 4;", "size = 8;")
    r.set_pipeline(pipeline_config(info, text), "VERIFY")
    assert r.server.switch is switch and r.server.saved is None
    assert snapshot(r) == before


def test_verify_and_save_then_commit(loaded):
    r = loaded
    old = r.server.switch
    text, info = _variant("size = 4;", "size = 8;")
    r.set_pipeline(pipeline_config(info, text, cookie=42), "VERIFY_AND_SAVE")
    # packets still run the old pipeline; Read and Write address the saved one
    assert r.server.switch is old
    assert send(r.server, 1, frame(0x0a)).ports == [1]
    assert r.read(entity(p4r.TableEntry())) == []
    r.ok(update("INSERT", r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 4})))
    assert send(r.server, 1, frame(0x0c)).ports == []       # not in the running pipeline
    assert r.get_pipeline("COOKIE_ONLY").config.cookie.cookie == 0
    with pytest.raises(grpc.RpcError) as e:
        r.set_pipeline(pipeline_config(info, text), "COMMIT")   # COMMIT takes no config
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    r.set_pipeline(None, "COMMIT")
    assert r.server.switch is not old and r.server.saved is None
    assert send(r.server, 1, frame(0x0c)).ports == [4]      # the write was kept
    assert send(r.server, 1, frame(0x0a)).ports == []       # the old state is gone
    assert r.get_pipeline("COOKIE_ONLY").config.cookie.cookie == 42
    assert r.get_pipeline().config.p4info.tables[0].size == 8
    with pytest.raises(grpc.RpcError) as e:
        r.set_pipeline(None, "COMMIT")                       # nothing saved any more
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_verify_and_commit_clears_the_forwarding_state(loaded):
    r = loaded
    r.ok(_digest(r, "INSERT"))
    r.push()
    assert r.read(entity(p4r.TableEntry())) == []
    assert r.read(entity(p4r.PacketReplicationEngineEntry())) == []
    assert r.read(entity(p4r.DigestEntry())) == []
    (d,) = r.read(entity(r.entry("routes", is_default_action=True)))
    assert d.table_entry.action.action.action_id == r.aid("NoAction")


def test_reconcile_and_commit_keeps_the_forwarding_state(loaded):
    r = loaded
    before = snapshot(r)
    text, info = _variant("size = 4;", "size = 8;")
    r.set_pipeline(pipeline_config(info, text), "RECONCILE_AND_COMMIT")
    assert snapshot(r) == before                     # same names, same ids: same state
    assert send(r.server, 1, frame(0x0a)).ports == [1]
    before = snapshot(r)
    # a program where l2 matches another field cannot keep l2's entries
    text2, info2 = _variant("key = { hdr.ethernet.dst: exact; }",
                            "key = { hdr.ethernet.src: exact; }")
    switch = r.server.switch
    with pytest.raises(grpc.RpcError) as e:
        r.set_pipeline(pipeline_config(info2, text2), "RECONCILE_AND_COMMIT")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "I.l2" in e.value.details()
    assert r.server.switch is switch and snapshot(r) == before


def test_get_forwarding_pipeline_config_response_types(primary):
    r = primary
    r.set_pipeline(pipeline_config(r.info, cookie=0xC0FFEE))
    got = {t: r.get_pipeline(t).config for t in ("ALL", "COOKIE_ONLY", "P4INFO_AND_COOKIE",
                                                 "DEVICE_CONFIG_AND_COOKIE")}
    assert got["ALL"].p4info == r.info and got["ALL"].p4_device_config == PROGRAM.encode()
    assert all(c.cookie.cookie == 0xC0FFEE for c in got.values())
    assert not got["COOKIE_ONLY"].HasField("p4info") and not got["COOKIE_ONLY"].p4_device_config
    assert got["P4INFO_AND_COOKIE"].p4info == r.info
    assert not got["P4INFO_AND_COOKIE"].p4_device_config
    assert not got["DEVICE_CONFIG_AND_COOKIE"].HasField("p4info")
    assert got["DEVICE_CONFIG_AND_COOKIE"].p4_device_config == PROGRAM.encode()


def test_set_pipeline_needs_the_primary(rig):
    with pytest.raises(grpc.RpcError) as e:                 # nobody has arbitrated
        rig.push()
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    rig.become_primary(3)
    with pytest.raises(grpc.RpcError) as e:
        rig.push(election_id=2)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    rig.push()


def test_capabilities(rig):
    assert rig.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == \
        P4RT_API_VERSION


# --- reads ---------------------------------------------------------------------------------------

def test_wildcard_reads(loaded):
    r = loaded
    everything = r.read(entity(p4r.TableEntry()))
    assert len(everything) == 5
    assert {e.table_entry.table_id for e in everything} == \
        {r.tid(t) for t in ("l2", "routes", "acl", "two_keys")}
    l2 = r.read(entity(r.entry("l2")))
    assert [e.table_entry.match[0].exact.value for e in l2] == [b"\x0a", b"\x0b"]
    (one,) = r.read(entity(r.entry("l2", {"dst": 0x0b})))
    assert one.table_entry.action.action.action_id == r.aid("to_cpu")
    assert r.read(entity(r.entry("l2", {"dst": 0x0c}))) == []
    only_fwd = r.read(entity(_with(r.entry("l2"), lambda te: setattr(
        te.action.action, "action_id", r.aid("fwd")))))
    assert len(only_fwd) == 1
    assert len(r.read(entity(r.entry("acl", priority=10)))) == 1
    assert r.read(entity(r.entry("acl", priority=11))) == []
    # default entries: one table's, changed or not
    (d,) = r.read(entity(r.entry("routes", is_default_action=True)))
    a = d.table_entry.action.action
    assert d.table_entry.is_default_action and a.action_id == r.aid("fwd")
    assert a.params[0].value == b"\x09"
    (g,) = r.read(entity(r.entry("ethertype_guard", is_default_action=True)))
    assert g.table_entry.action.action.action_id == r.aid("drop")
    # several requests in one Read
    assert len(r.read(entity(r.entry("l2")), entity(r.entry("routes")))) == 3


def test_reads_that_cannot_be_served(loaded):
    r = loaded
    res = r.read_failure(entity(r.entry("l2")),
                         entity(p4r.TableEntry(priority=3)),          # table 0 + a filter
                         p4r.Entity(),                                 # no entity at all
                         entity(p4r.TableEntry(table_id=0x02ffffff)),
                         entity(r.entry("l2", {"dst": 1 << 48})))
    assert res.code == UNKNOWN
    assert res.codes == [C.OK, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT,
                         C.OUT_OF_RANGE]


def test_read_write_symmetry(primary):
    r = primary
    te = r.entry("acl", {"ttl": (3, 9)}, "acl_permit", priority=4,
                 controller_metadata=77, metadata=b"cookie")
    r.ok(update("INSERT", te))
    (back,) = r.read(entity(r.entry("acl")))
    assert back.table_entry == te                     # omitted fields stay omitted
    padded = r.entry("l2", {"dst": b"\x00\x00\x00\x00\x00\x0c"}, "fwd",
                     {"port": b"\x00\x03"})           # non-canonical, accepted
    r.ok(update("INSERT", padded))
    (back,) = r.read(entity(r.entry("l2")))
    assert back.table_entry == r.entry("l2", {"dst": 0x0c}, "fwd", {"port": 3})
    # MODIFY without an action leaves the entry as it is
    r.ok(update("MODIFY", r.entry("l2", {"dst": 0x0c})))
    assert r.read(entity(r.entry("l2")))[0].table_entry == back.table_entry


def test_omitted_fields_are_dont_care_matches(primary):
    """A /0, a zero mask, a full range, an optional wildcard: the field is left out; the
    entry matches everything there, ranks as prefix length 0 in an lpm table, and reads
    back with the field still left out."""
    r = primary
    default_route = r.entry("routes", {}, "fwd", {"port": 5})           # 0.0.0.0/0
    catch_all = r.entry("acl", {}, "acl_deny", priority=1)
    r.ok(update("INSERT", default_route),
         update("INSERT", r.entry("routes", {"dst": (0x0a000000, 8)}, "fwd", {"port": 2})),
         update("INSERT", catch_all),
         update("INSERT", r.entry("acl", {"ttl": (60, 70)}, "acl_permit", priority=2)))
    by_table = {}
    for e in r.read(entity(p4r.TableEntry())):
        by_table.setdefault(e.table_entry.table_id, []).append(e.table_entry)
    assert default_route in by_table[r.tid("routes")]
    assert catch_all in by_table[r.tid("acl")]
    ip = {"src": "172.16.0.1", "ttl": 30}
    assert send(r.server, 1, frame(0x0a, ip={**ip, "dst": "10.1.2.3"})).dropped  # acl: deny
    ip["ttl"] = 64                                     # the ttl entry outranks the catch-all
    assert send(r.server, 1, frame(0x0a, ip={**ip, "dst": "10.1.2.3"})).ports == [2]
    assert send(r.server, 1, frame(0x0a, ip={**ip, "dst": "11.1.2.3"})).ports == [5]


# --- counters, registers, meters, replication ----------------------------------------------------

def test_counters(loaded):
    r = loaded
    cid = r.obj_id("counters", "port_counter")
    for _ in range(3):
        send(r.server, 3, frame(0x0a))
    sizes = [len(frame(0x0a))] * 3
    (c,) = r.read(entity(p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=3))))
    assert (c.counter_entry.data.packet_count, c.counter_entry.data.byte_count) == \
        (3, sum(sizes))
    assert len(r.read(entity(p4r.CounterEntry(counter_id=cid)))) == 8
    assert len(r.read(entity(p4r.CounterEntry()))) == 8                   # all counters
    r.ok(update("MODIFY", p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=3),
                                           data=p4r.CounterData())))
    (c,) = r.read(entity(p4r.CounterEntry(counter_id=cid, index=p4r.Index(index=3))))
    assert c.counter_entry.data.packet_count == 0
    r.ok(update("MODIFY", p4r.CounterEntry(counter_id=cid, data=p4r.CounterData(
        packet_count=5, byte_count=50))))                                  # every index
    assert {x.counter_entry.data.packet_count
            for x in r.read(entity(p4r.CounterEntry(counter_id=cid)))} == {5}


def test_direct_counters(loaded):
    r = loaded
    acl = {"src": (0x0a000000, 0xff000000), "ttl": (1, 64), "protocol": 6}
    pkt = frame(0x0a, ip={"src": "10.1.2.3", "dst": "10.9.9.9", "ttl": 30})
    n = len(pkt)
    for _ in range(2):
        assert send(r.server, 1, pkt).dropped            # acl_deny
    (d,) = r.read(entity(p4r.DirectCounterEntry(table_entry=r.entry("acl", acl,
                                                                    priority=10))))
    assert (d.direct_counter_entry.data.packet_count,
            d.direct_counter_entry.data.byte_count) == (2, 2 * n)
    (t,) = r.read(entity(r.entry("acl", counter_data=p4r.CounterData())))
    assert t.table_entry.counter_data.packet_count == 2
    assert len(r.read(entity(p4r.DirectCounterEntry(table_entry=p4r.TableEntry())))) == 1
    r.ok(update("MODIFY", p4r.DirectCounterEntry(table_entry=r.entry("acl", acl, priority=10),
                                                 data=p4r.CounterData(packet_count=100,
                                                                      byte_count=1000))))
    (d,) = r.read(entity(p4r.DirectCounterEntry(table_entry=r.entry("acl", acl,
                                                                    priority=10))))
    assert d.direct_counter_entry.data.packet_count == 100
    # an entry inserted with counter data starts from it
    r.ok(update("INSERT", r.entry("acl", {"protocol": 17}, "acl_permit", priority=2,
                                  counter_data=p4r.CounterData(packet_count=7))))
    (t,) = r.read(entity(r.entry("acl", priority=2, counter_data=p4r.CounterData())))
    assert t.table_entry.counter_data.packet_count == 7
    # reading a table without a direct counter that way is refused
    res = r.read_failure(entity(p4r.DirectCounterEntry(table_entry=r.entry("l2"))))
    assert res.codes == [C.INVALID_ARGUMENT]


def test_registers(loaded):
    r = loaded
    rid = r.obj_id("registers", "last_len")
    n = len(frame(0x0a))
    send(r.server, 3, frame(0x0a))
    cells = r.read(entity(p4r.RegisterEntry(register_id=rid)))
    assert len(cells) == 16
    by_index = {c.register_entry.index.index: c.register_entry.data.bitstring for c in cells}
    assert by_index[3] == enc(n) and by_index[2] == enc(77) and by_index[4] == b"\x00"
    r.ok(update("MODIFY", p4r.RegisterEntry(register_id=rid, index=p4r.Index(index=5),
                                            data=p4d.P4Data(bitstring=b"\x00\xde\xad"))))
    (c,) = r.read(entity(p4r.RegisterEntry(register_id=rid, index=p4r.Index(index=5))))
    assert c.register_entry.data.bitstring == b"\xde\xad"
    assert len(r.read(entity(p4r.RegisterEntry()))) == 16                 # all registers


def test_meters(loaded):
    r = loaded
    mid = r.obj_id("meters", "port_meter")
    cfg = p4r.MeterConfig(cir=1000, cburst=10, pir=2000, pburst=20)
    r.ok(update("MODIFY", p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1), config=cfg)))
    cells = r.read(entity(p4r.MeterEntry(meter_id=mid)))
    assert len(cells) == 4
    assert [c.meter_entry.config for c in cells if c.meter_entry.HasField("config")] == [cfg]
    r.ok(update("MODIFY", p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))   # reset
    assert not any(c.meter_entry.HasField("config")
                   for c in r.read(entity(p4r.MeterEntry(meter_id=mid))))


def test_multicast_groups_and_clone_sessions(loaded):
    r = loaded
    r.ok(update("INSERT", r.entry("l2", {"dst": 0x0e}, "flood", {"group": 1})))
    assert sorted(send(r.server, 4, frame(0x0e)).ports) == [1, 2]
    (g,) = r.read(entity(mc_group(1)))
    assert g.packet_replication_engine_entry == mc_group(1, 1, 2)       # as written
    r.ok(update("INSERT", mc_group(2, 7, legacy=True)))                  # P4Runtime 1.3 style
    groups = r.read(entity(mc_group(0)))
    assert [x.packet_replication_engine_entry for x in groups] == \
        [mc_group(1, 1, 2), mc_group(2, 7, legacy=True)]
    (s,) = r.read(entity(clone_session(0)))
    assert s.packet_replication_engine_entry == clone_session(5, 3)
    assert len(r.read(entity(p4r.PacketReplicationEngineEntry()))) == 3
    r.ok(update("MODIFY", mc_group(1, 3)))
    assert send(r.server, 4, frame(0x0e)).ports == [3]
    r.ok(update("DELETE", mc_group(1)))
    assert send(r.server, 4, frame(0x0e)).ports == []
    assert r.read(entity(mc_group(1))) == []


# --- arbitration -----------------------------------------------------------------------------

def test_two_clients_the_higher_election_id_is_primary(primary):
    r = primary                                    # election id 10, program pushed
    (a,) = r.streams
    b = r.stream()
    b.arbitrate(20)
    assert b.status() == (C.OK, 20)
    assert a.status() == (C.ALREADY_EXISTS, 20)    # the old primary is told it is a backup
    u = update("INSERT", r.entry("l2", {"dst": 1}, "fwd", {"port": 1}))
    assert r.write([u], election_id=10).code == grpc.StatusCode.PERMISSION_DENIED
    assert r.write([u], election_id=20).code == OK
    # a client with a lower id joins as a backup; only it is told
    c = r.stream()
    c.arbitrate(5)
    assert c.status() == (C.ALREADY_EXISTS, 20)
    assert a.none("arbitration") and b.none("arbitration")
    # an election id another live client uses ends the stream
    d = r.stream()
    d.arbitrate(20)
    assert d.ended.wait(5) and d.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert b.none("arbitration")


def test_when_the_primary_leaves_the_backups_are_told_and_one_takes_over(primary):
    """P4Runtime (since 1.1) promotes no one by itself: the backups learn that there
    is no primary (NOT_FOUND, with the highest election id seen) and the one that
    arbitrates again with an election id at least that high becomes primary."""
    r = primary
    (a,) = r.streams
    b = r.stream()
    b.arbitrate(5)
    assert b.status() == (C.ALREADY_EXISTS, 10)
    a.close()
    assert b.status() == (C.NOT_FOUND, 10)
    u = update("INSERT", r.entry("l2", {"dst": 1}, "fwd", {"port": 1}))
    assert r.write([u], election_id=5).code == grpc.StatusCode.PERMISSION_DENIED
    b.arbitrate(5)                                 # still below the highest seen
    assert b.status() == (C.NOT_FOUND, 10)
    b.arbitrate(10)                                # the old primary's id is free now
    assert b.status() == (C.OK, 10)
    assert r.write([u], election_id=10).code == OK
    # a primary that lowers its election id steps down: everybody is told
    c = r.stream()
    c.arbitrate(3)
    assert c.status() == (C.ALREADY_EXISTS, 10)
    b.arbitrate(4)
    assert b.status() == (C.NOT_FOUND, 10) and c.status() == (C.NOT_FOUND, 10)


def test_arbitration_that_is_refused(rig):
    s = rig.stream()
    s.arbitrate(1, device_id=9)
    assert s.ended.wait(5) and s.error.code() == grpc.StatusCode.NOT_FOUND
    s = rig.stream()
    s.arbitrate(1, role="routing")
    assert s.ended.wait(5) and s.error.code() == grpc.StatusCode.NOT_FOUND
    # an unset election id is lower than any: such a client never becomes primary
    s = rig.stream()
    s.arbitrate(None)
    assert s.status() == (C.NOT_FOUND, None)
    p = rig.stream(1)
    assert s.status() == (C.ALREADY_EXISTS, 1)
    assert p.none("arbitration")


# --- packet I/O ------------------------------------------------------------------------------

def _packet_out(r, payload: bytes, **meta) -> p4r.StreamMessageRequest:
    spec = next(m for m in r.info.controller_packet_metadata if m.preamble.name == "packet_out")
    msg = p4r.StreamMessageRequest()
    msg.packet.payload = payload
    for m in spec.metadata:
        if m.name in meta:
            msg.packet.metadata.add(metadata_id=m.id, value=enc(meta[m.name]))
    return msg


def _meta(r, packet) -> dict:
    spec = next(m for m in r.info.controller_packet_metadata if m.preamble.name == "packet_in")
    names = {m.id: m.name for m in spec.metadata}
    return {names[m.metadata_id]: int.from_bytes(m.value, "big") for m in packet.metadata}


def test_packet_out_to_packet_in_through_the_cpu_port(loaded):
    r = loaded
    (s,) = r.streams
    # egress_port 0: the packet runs the pipeline; l2 sends dst 0x0b to the CPU (reason 7)
    s.send(_packet_out(r, frame(0x0b), egress_port=0, mcast=0))
    pin = s.next("packet").packet
    assert pin.payload == frame(0x0b)
    assert _meta(r, pin) == {"ingress_port": 255, "reason": 7, "pad": 0}
    # a packet from the data plane: its ingress port in the metadata
    send(r.server, 2, frame(0x0b))
    pin = s.next("packet").packet
    assert _meta(r, pin) == {"ingress_port": 2, "reason": 7, "pad": 0}
    # a packet-out with a port leaves there: no packet-in
    s.send(_packet_out(r, frame(0x0b), egress_port=3, mcast=0))
    assert s.none("packet") and s.none("error")


def test_refused_packet_outs_get_a_stream_error(loaded):
    r = loaded
    (s,) = r.streams
    backup = r.stream(5, expect=C.ALREADY_EXISTS)
    backup.send(_packet_out(r, frame(0x0b), egress_port=0, mcast=0))
    err = backup.next("error").error
    assert err.canonical_code == C.PERMISSION_DENIED
    assert err.packet_out.packet_out.payload == frame(0x0b)
    assert s.none("packet")                        # dropped: no packet-in for anybody
    s.send(_packet_out(r, frame(0x0b), egress_port=0))          # mcast missing
    assert s.next("error").error.canonical_code == C.INVALID_ARGUMENT
    bad = _packet_out(r, frame(0x0b), egress_port=0, mcast=0)
    bad.packet.metadata.add(metadata_id=9, value=b"\x01")
    s.send(bad)
    assert s.next("error").error.canonical_code == C.INVALID_ARGUMENT
    s.send(_packet_out(r, frame(0x0b), egress_port=1 << 16, mcast=0))
    assert s.next("error").error.canonical_code == C.INVALID_ARGUMENT
    assert s.none("packet")


# --- digests ---------------------------------------------------------------------------------

def _learned(r, d) -> list[tuple[int, int]]:
    return [tuple(int.from_bytes(m.bitstring, "big") for m in x.struct.members)
            for x in d.data]


def test_digests_after_a_digest_entry_is_configured(loaded):
    r = loaded
    (s,) = r.streams
    did = r.obj_id("digests", "learn_t")
    send(r.server, 1, frame(0x0a, src=0x11))       # two_keys misses: learn() sends a digest
    assert s.none("digest")                         # not configured yet
    r.ok(update("INSERT", p4r.DigestEntry(digest_id=did, config=p4r.DigestEntry.Config(
        max_timeout_ns=0, max_list_size=1, ack_timeout_ns=10**10))))
    (cfg,) = r.read(entity(p4r.DigestEntry()))
    assert cfg.digest_entry.config.ack_timeout_ns == 10**10
    send(r.server, 1, frame(0x0a, src=0x11))
    d = s.next("digest").digest
    assert d.digest_id == did and _learned(r, d) == [(0x11, 1)]
    send(r.server, 1, frame(0x0a, src=0x11))
    assert s.none("digest")                         # sent, not acknowledged: suppressed
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = did, d.list_id
    s.send(ack)
    time.sleep(0.2)
    send(r.server, 1, frame(0x0a, src=0x11))
    d2 = s.next("digest").digest
    assert _learned(r, d2) == [(0x11, 1)] and d2.list_id > d.list_id
    # lists of two, or whatever has come after 100 ms
    r.ok(update("MODIFY", p4r.DigestEntry(digest_id=did, config=p4r.DigestEntry.Config(
        max_timeout_ns=10**8, max_list_size=2))))
    send(r.server, 1, frame(0x0a, src=0x21))
    send(r.server, 2, frame(0x0a, src=0x22))
    assert _learned(r, s.next("digest").digest) == [(0x21, 1), (0x22, 2)]
    send(r.server, 1, frame(0x0a, src=0x23))
    t0 = time.monotonic()
    assert _learned(r, s.next("digest", timeout=3).digest) == [(0x23, 1)]
    assert time.monotonic() - t0 >= 0.05
    # an acknowledgement for a digest that does not exist
    bad = p4r.StreamMessageRequest()
    bad.digest_ack.digest_id = 0x17ffffff
    s.send(bad)
    assert s.next("error").error.canonical_code == C.INVALID_ARGUMENT
    r.ok(update("DELETE", p4r.DigestEntry(digest_id=did)))
    send(r.server, 1, frame(0x0a, src=0x31))
    assert s.none("digest")


def test_mac_learning_digests_through_model_target():
    """The brief's NF: mac_learning sends unknown source MACs as digests once the
    controller has configured its DigestEntry."""
    import sfclab
    from sfclab.codegen import generate
    from sfclab.targets.model import ModelTarget

    gen = generate(sfclab.compile("chain l: mac_learning -> l2fwd"))
    with ModelTarget() as t:
        t.push(gen)
        info = t.session.index.info
        (dg,) = info.digests
        pkt = Ether(src="00:00:00:00:00:05", dst="00:00:00:00:00:02", type=0x9000) / b"x"
        t.send(1, pkt)
        with pytest.raises(queue.Empty):
            t.client.digests.get(timeout=0.3)
        u = update("INSERT", p4r.DigestEntry(digest_id=dg.preamble.id,
                                             config=p4r.DigestEntry.Config(max_list_size=1)))
        t.client.write([u])
        r = t.send(1, pkt)
        assert r.digests
        d = t.client.digests.get(timeout=5)
        assert d.digest_id == dg.preamble.id
        (data,) = d.data
        assert [int.from_bytes(m.bitstring, "big") for m in data.struct.members] == [5, 1]
        names = [m.name for m in info.type_info.structs[dg.type_spec.struct.name].members]
        assert names == ["mac", "port"]


def test_a_delete_considers_only_the_key(loaded):
    """P4Runtime: a DELETE ignores every field but the key, however nonsensical."""
    r = loaded
    te = r.entry("l2", {"dst": 0x0a}, "acl_permit", is_const=True, idle_timeout_ns=5,
                 controller_metadata=3)
    te.action.action.action_id = 0x01ffffff
    r.ok(update("DELETE", te))
    assert [e.table_entry.match[0].exact.value for e in r.read(entity(r.entry("l2")))] == \
        [b"\x0b"]
