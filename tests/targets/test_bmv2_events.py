"""BMv2 event-logger messages (built from event_logger.cpp's struct layout) → traces."""

from __future__ import annotations

import json
import struct
import sys
import types

import pytest

from sfclab.errors import TargetError
from sfclab.targets.bmv2 import events as E
from sfclab.targets.bmv2.events import (
    EventSubscriber,
    NameMap,
    RawEvent,
    TraceBuilder,
    decode_events,
    decode_message,
    pack_message,
    subscriber_backend,
)

# -- the wire format -------------------------------------------------------------------------------


def test_header_layout_is_event_logger_cpp_msg_hdr_t():
    # struct msg_hdr_t { int type; uint64 switch_id; uint32 cxt_id; uint64 sig;
    #                    uint64 id; uint64 copy_id; } __attribute__((packed));
    # then, for TABLE_HIT: int table_id; int entry_hdl;
    raw = (struct.pack("<i", 12) + struct.pack("<Q", 1) + struct.pack("<I", 2)
           + struct.pack("<Q", 0xDEADBEEF) + struct.pack("<Q", 42) + struct.pack("<Q", 3)
           + struct.pack("<i", 7) + struct.pack("<i", 99))
    assert len(raw) == 48
    assert pack_message(E.TABLE_HIT, 7, 99, switch_id=1, cxt_id=2, sig=0xDEADBEEF,
                        packet_id=42, copy_id=3) == raw
    ev = decode_message(raw)
    assert ev == RawEvent(12, 1, 2, 0xDEADBEEF, 42, 3, (7, 99))
    assert ev.type_name == "TABLE_HIT"


def test_type_numbers_follow_the_enum():
    assert (E.PACKET_IN, E.PACKET_OUT, E.PARSER_START, E.PARSER_DONE, E.PARSER_EXTRACT,
            E.DEPARSER_START, E.DEPARSER_DONE, E.DEPARSER_EMIT, E.CHECKSUM_UPDATE,
            E.PIPELINE_START, E.PIPELINE_DONE, E.CONDITION_EVAL, E.TABLE_HIT, E.TABLE_MISS,
            E.ACTION_EXECUTE, E.CONFIG_CHANGE) == (*range(15), 999)


@pytest.mark.parametrize("type_,size", [(E.PACKET_IN, 44), (E.CONDITION_EVAL, 48),
                                        (E.TABLE_HIT, 48), (E.ACTION_EXECUTE, 44),
                                        (E.CONFIG_CHANGE, 40)])
def test_message_sizes(type_, size):
    n = E.MESSAGE_TYPES[type_][1]
    assert len(pack_message(type_, *range(n))) == size


def test_config_change_is_the_bare_header():
    # config_change(): memset(0), type 999, switch_id = device id.
    raw = struct.pack("<iQIQQQ", 999, 4, 0, 0, 0, 0)
    assert decode_message(raw) == RawEvent(999, 4, 0, 0, 0, 0, ())


def test_malformed_messages():
    with pytest.raises(ValueError, match="shorter than its 40-byte header"):
        decode_message(b"\x00" * 10)
    with pytest.raises(ValueError, match="unknown event-logger message type 77"):
        decode_message(struct.pack("<iQIQQQ", 77, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="TABLE_HIT message of 44 bytes; expected 48"):
        decode_message(pack_message(E.TABLE_HIT, 1, 2)[:44])
    with pytest.raises(ValueError, match="takes 2 field"):
        pack_message(E.TABLE_HIT, 1)


# -- names from the BMv2 JSON ----------------------------------------------------------------------


def test_name_map_from_p4c_json(bmv2_json):
    for src in (bmv2_json, bmv2_json.read_text(), bmv2_json.read_bytes(),
                json.loads(bmv2_json.read_text())):
        m = NameMap.from_json(src)
        assert m.name("table", 1) == "SfcIngress.slot0_firewall.acl"
        assert m.name("action", 3) == "SfcIngress.slot1_l3fwd.route"
        assert m.name("pipeline", 1) == "egress"
        assert m.name("header", 6) == "ipv4"
        assert m.name("checksum", 0) == "cksum"
        assert m.name("condition", 0) == "node_2"
        assert m.conditions[2] == ("meta.sfc.drop == 0 && meta.sfc.to_cpu == 0 && "
                                   "hdr.sfc.bitmap & 32w0x1 != 0")
        assert m.synthetic_tables == {4, 5}
        assert m.name("table", 99) == "table#99"


# -- traces -------------------------------------------------------------------------------------


def _recirculated_packet(pid: int, *, switch_id: int = 0) -> list[bytes]:
    """Two passes (firewall, then l3fwd) and out on port 2, as simple_switch emits them."""
    def m(t, *f, copy=0):
        return pack_message(t, *f, packet_id=pid, copy_id=copy, switch_id=switch_id)

    first = [m(E.PACKET_IN, 1), m(E.PARSER_START, 0), m(E.PARSER_EXTRACT, 4),
             m(E.PARSER_EXTRACT, 6), m(E.PARSER_EXTRACT, 7), m(E.PARSER_DONE, 0),
             m(E.PIPELINE_START, 0), m(E.CONDITION_EVAL, 0, 0), m(E.CONDITION_EVAL, 1, 1),
             m(E.TABLE_HIT, 0, 0), m(E.ACTION_EXECUTE, 5), m(E.CONDITION_EVAL, 2, 1),
             m(E.TABLE_HIT, 1, 3), m(E.ACTION_EXECUTE, 1), m(E.TABLE_HIT, 3, 1),
             m(E.ACTION_EXECUTE, 7), m(E.TABLE_MISS, 4), m(E.ACTION_EXECUTE, 9),
             m(E.PIPELINE_DONE, 0), m(E.PIPELINE_START, 1), m(E.CONDITION_EVAL, 3, 1),
             m(E.TABLE_MISS, 5), m(E.ACTION_EXECUTE, 10), m(E.PIPELINE_DONE, 1),
             m(E.CHECKSUM_UPDATE, 0), m(E.DEPARSER_START, 0), m(E.DEPARSER_EMIT, 4),
             m(E.DEPARSER_EMIT, 5), m(E.DEPARSER_EMIT, 6), m(E.DEPARSER_EMIT, 7),
             m(E.DEPARSER_DONE, 0)]
    second = [m(E.PARSER_START, 0, copy=1), m(E.PARSER_EXTRACT, 4, copy=1),
              m(E.PARSER_EXTRACT, 5, copy=1), m(E.PARSER_DONE, 0, copy=1),
              m(E.PIPELINE_START, 0, copy=1), m(E.TABLE_HIT, 2, 0x80000001, copy=1),
              m(E.ACTION_EXECUTE, 3, copy=1), m(E.TABLE_HIT, 3, 2, copy=1),
              m(E.ACTION_EXECUTE, 8, copy=1), m(E.PIPELINE_DONE, 0, copy=1),
              m(E.PIPELINE_START, 1, copy=1), m(E.CONDITION_EVAL, 3, 0, copy=1),
              m(E.PIPELINE_DONE, 1, copy=1), m(E.DEPARSER_START, 0, copy=1),
              m(E.DEPARSER_DONE, 0, copy=1), m(E.PACKET_OUT, 2, copy=1)]
    return first + second


def test_recirculated_packet_trace(bmv2_json):
    [t] = decode_events(_recirculated_packet(7), NameMap.from_json(bmv2_json))
    assert (t.packet_id, t.ingress_port, t.egress_port, t.dropped) == (7, 1, 2, False)
    assert t.passes == 2
    assert t.nfs() == ["firewall", "l3fwd"]
    assert t.tables() == [("SfcIngress.initializer", True), ("SfcIngress.slot0_firewall.acl", True),
                          ("SfcIngress.rewinder", True), ("SfcIngress.slot1_l3fwd.ipv4_lpm", True),
                          ("SfcIngress.rewinder", True)]
    kinds = [e.kind for e in t.events]
    r = kinds.index("recirculate")
    assert t.events[r].pass_no == 1 and kinds[r + 1] == "parser_start"
    assert {e.pass_no for e in t.events[:r]} == {0}
    assert {e.pass_no for e in t.events[r:]} == {1}
    conds = [(e.name, e.value) for e in t.events if e.kind == "condition"]
    assert conds[0] == ("hdr.packet_out.isValid()", False)
    assert conds[1] == ("!hdr.sfc.isValid()", True)
    assert [e.name for e in t.events if e.kind == "extract"][:3] == ["ethernet", "ipv4", "tcp"]
    assert [e.name for e in t.events if e.kind == "deparser_emit"][:2] == ["ethernet", "sfc"]
    assert any(e.kind == "checksum" and e.name == "cksum" for e in t.events)
    # Synthetic tables are hidden, their actions stay.
    assert "tbl_program424" not in {e.name for e in t.events}
    assert [e.name for e in t.events if e.kind == "action"][-2:] == [
        "SfcIngress.slot1_l3fwd.route", "SfcIngress.finish"]
    # An entry handle above 2**31 arrives as a negative int and is read back unsigned.
    hits = [e.entry for e in t.events if e.kind == "table_hit"]
    assert hits[3] == f"entry handle {0x80000001}"
    assert t.events[-1].kind == "packet_out" and t.events[-1].value == 2


def test_actions_p4c_made_of_statements_show_what_they_run(tmp_path):
    """p4c turns plain statements into an action named after their line (``program3``)
    and a keyless table (``tbl_program3``): the trace shows what the action runs, read
    from the program beside the JSON (p4c's own fragments are cut short), as the model's
    trace names its steps; an action of the program keeps its name."""
    src = tmp_path / "program.p4"
    src.write_text("const bit<9> CPU = 255;\n"
                   "  meta.sfc.port = standard_metadata.ingress_port;\n"
                   "  standard_metadata.egress_spec = CPU;\n")
    at = {"filename": str(src), "column": 3}
    cfg = {"actions": [
        {"id": 0, "name": "program2", "primitives": [
            {"op": "assign", "source_info": {**at, "line": 2, "source_fragment":
                                             "meta.sfc.port = standard_metadata.ingr"}}]},
        {"id": 1, "name": "program3", "primitives": [
            {"op": "assign", "source_info": {**at, "line": 1, "column": 24,
                                             "source_fragment": "255"}}]},
        {"id": 2, "name": "SfcIngress.finish", "primitives": []}],
        "pipelines": [{"name": "ingress", "id": 0, "tables": [
            {"name": "tbl_program2", "id": 0, "key": [], "action_ids": [0]},
            {"name": "tbl_program3", "id": 1, "key": [], "action_ids": [1]},
            {"name": "SfcIngress.rewinder", "id": 2, "key": [{}], "action_ids": [2]}]}]}
    m = lambda t, *f: pack_message(t, *f, packet_id=1)      # noqa: E731
    [t] = decode_events([m(E.PACKET_IN, 1), m(E.PIPELINE_START, 0), m(E.TABLE_MISS, 0),
                         m(E.ACTION_EXECUTE, 0), m(E.TABLE_HIT, 2, 0), m(E.ACTION_EXECUTE, 2),
                         m(E.TABLE_MISS, 1), m(E.ACTION_EXECUTE, 1)], NameMap.from_json(cfg))
    assert [e.text() for e in t.events if e.kind in ("statements", "action")] == [
        "run meta.sfc.port = standard_metadata.ingress_port", "action SfcIngress.finish()",
        "run standard_metadata.egress_spec = CPU"]      # a constant's line: the action's own
    src.unlink()                                         # without the program: p4c's words
    assert NameMap.from_json(cfg).statements == {
        0: "meta.sfc.port = standard_metadata.ingr", 1: "program3"}


def test_synthetic_tables_on_request_and_entry_names(bmv2_json):
    names = NameMap.from_json(bmv2_json)
    seen = []

    def entry(table, handle):
        seen.append((table, handle))
        return "web: tcp.dport == 80" if table.endswith("initializer") else None

    [t] = decode_events(_recirculated_packet(1), names, synthetic_tables=True, entry_name=entry)
    assert ("tbl_program424", False) in t.tables()
    assert t.events[[e.kind for e in t.events].index("table_hit")].entry == "web: tcp.dport == 80"
    assert ("SfcIngress.slot0_firewall.acl", 3) in seen


def test_dropped_interleaved_and_other_devices(bmv2_json):
    names = NameMap.from_json(bmv2_json)
    a = _recirculated_packet(1)
    dropped = [pack_message(E.PACKET_IN, 3, packet_id=2),
               pack_message(E.PARSER_START, 0, packet_id=2),
               pack_message(E.PIPELINE_START, 0, packet_id=2),
               pack_message(E.TABLE_MISS, 0, packet_id=2),
               pack_message(E.ACTION_EXECUTE, 6, packet_id=2),
               pack_message(E.PIPELINE_DONE, 0, packet_id=2)]
    other = _recirculated_packet(1, switch_id=9)
    mixed = []
    for i in range(max(len(a), len(dropped))):
        mixed += a[i:i + 1] + dropped[i:i + 1] + other[i:i + 1]
    mixed += other[len(dropped):]
    mixed.insert(5, pack_message(E.CONFIG_CHANGE))
    b = TraceBuilder(names, device_id=0)
    for msg in mixed:
        b.feed(msg)
    assert b.config_changes == 1
    t1, t2 = b.finish()
    assert (t1.packet_id, t1.egress_port, t1.passes) == (1, 2, 2)
    assert (t2.packet_id, t2.ingress_port, t2.dropped) == (2, 3, True)
    assert t2.drop_reason == "no packet out: dropped by the program"
    assert t2.events[-1].kind == "drop"
    assert t2.tables() == [("SfcIngress.initializer", False)]
    # Without a device filter the other switch's packet is a trace of its own.
    assert len(decode_events(mixed, names)) == 3


def test_resubmit_and_missing_start(bmv2_json):
    names = NameMap.from_json(bmv2_json)
    msgs = [pack_message(E.PARSER_START, 0, packet_id=4),      # packet_in was missed
            pack_message(E.PIPELINE_START, 0, packet_id=4),
            pack_message(E.PIPELINE_DONE, 0, packet_id=4),
            pack_message(E.PARSER_START, 0, packet_id=4, copy_id=1),  # no egress in between
            pack_message(E.PIPELINE_START, 0, packet_id=4, copy_id=1),
            pack_message(E.PIPELINE_DONE, 0, packet_id=4, copy_id=1),
            pack_message(E.PIPELINE_START, 1, packet_id=4, copy_id=1),
            pack_message(E.PACKET_OUT, 5, packet_id=4, copy_id=1),
            pack_message(E.PACKET_OUT, 6, packet_id=4, copy_id=2)]   # a multicast copy
    [t] = decode_events(msgs, names)
    assert t.ingress_port == -1 and t.events[0].kind == "note"
    assert [e.kind for e in t.events].count("resubmit") == 1
    assert t.passes == 2 and t.egress_port == 5
    assert [e.value for e in t.events if e.kind == "packet_out"] == [5, 6]


def test_unknown_ids_keep_their_number():
    [t] = decode_events([pack_message(E.PACKET_IN, 0), pack_message(E.TABLE_MISS, 42),
                         pack_message(E.ACTION_EXECUTE, 3)], NameMap())
    assert [e.name for e in t.events][1:3] == ["table#42", "action#3"]


# -- the subscriber ----------------------------------------------------------------------------


def test_no_backend_is_a_clear_error(monkeypatch, bmv2_json):
    monkeypatch.setitem(sys.modules, "pynng", None)
    monkeypatch.setitem(sys.modules, "nnpy", None)
    with pytest.raises(TargetError) as e:
        subscriber_backend()
    assert e.value.message == ("cannot read BMv2's event logger: neither pynng nor nnpy "
                               "is installed")
    assert "pip install pynng" in e.value.hint
    with pytest.raises(TargetError, match="neither pynng nor nnpy"):
        EventSubscriber("ipc:///tmp/x.ipc", NameMap.from_json(bmv2_json))


class _FakeTimeout(Exception):
    pass


class _FakeTryAgain(Exception):
    pass


def _fake_pynng(queue):
    mod = types.ModuleType("pynng")
    exc = types.ModuleType("pynng.exceptions")
    exc.Timeout = _FakeTimeout
    exc.TryAgain = _FakeTryAgain

    class Sub0:
        def __init__(self, recv_timeout, recv_buffer_size=None):
            self.recv_timeout, self.subs, self.dialed, self.closed = recv_timeout, [], [], False

        def subscribe(self, topic):
            self.subs.append(topic)

        def dial(self, addr, block=None):
            self.dialed.append((addr, block))
            Sub0.last = self

        def recv(self, block=True):
            if not queue:
                raise _FakeTimeout() if block else _FakeTryAgain()
            return queue.pop(0)

        def close(self):
            self.closed = True

    mod.Sub0 = Sub0
    mod.exceptions = exc
    return mod, exc


def test_pynng_subscriber_collects_traces(monkeypatch, bmv2_json):
    queue = list(_recirculated_packet(3))
    mod, exc = _fake_pynng(queue)
    monkeypatch.setitem(sys.modules, "pynng", mod)
    monkeypatch.setitem(sys.modules, "pynng.exceptions", exc)
    with EventSubscriber("ipc:///tmp/ev.ipc", NameMap.from_json(bmv2_json)) as sub:
        assert sub.backend == "pynng"
        sock = mod.Sub0.last
        assert sock.dialed == [("ipc:///tmp/ev.ipc", False)] and sock.subs == [b""]
        [t] = sub.collect(quiet=0.2, timeout=3)
        assert (t.packet_id, t.egress_port, t.passes) == (3, 2, 2)
        assert sub.collect(quiet=0.1) == []
    assert sock.closed


def test_nnpy_subscriber_and_its_errors(monkeypatch, bmv2_json):
    import errno

    queue = [pack_message(E.PACKET_IN, 1, packet_id=1)]
    mod = types.ModuleType("nnpy")
    errs = types.ModuleType("nnpy.errors")

    class NNError(Exception):
        def __init__(self, error_no, *a):
            super().__init__(*a)
            self.error_no = error_no

    errs.NNError = NNError
    mod.AF_SP, mod.SUB, mod.SUB_SUBSCRIBE, mod.SOL_SOCKET, mod.RCVTIMEO = 1, 33, 1, 0, 5
    fail = {"errno": errno.ETIMEDOUT}

    class Socket:
        def __init__(self, domain, proto):
            self.opts = []
            Socket.last = self

        def connect(self, addr):
            self.addr = addr

        def setsockopt(self, level, option, value):
            self.opts.append((level, option, value))

        def recv(self):
            if queue:
                return queue.pop(0)
            raise NNError(fail["errno"], "error")

        def close(self):
            pass

    mod.Socket, mod.errors = Socket, errs
    monkeypatch.setitem(sys.modules, "pynng", None)
    monkeypatch.setitem(sys.modules, "nnpy", mod)
    monkeypatch.setitem(sys.modules, "nnpy.errors", errs)
    sub = EventSubscriber("ipc:///tmp/ev.ipc", NameMap(), device_id=0)
    assert sub.backend == "nnpy"
    assert Socket.last.addr == "ipc:///tmp/ev.ipc"
    assert (33, 1, "") in Socket.last.opts and (0, 5, 100) in Socket.last.opts
    assert decode_message(sub.recv()).type == E.PACKET_IN
    assert sub.recv() is None                      # a timeout is quiet
    fail["errno"] = errno.EBADF
    with pytest.raises(TargetError, match="reading BMv2 events from ipc:///tmp/ev.ipc"):
        sub.recv()
    sub.close()


def test_real_pynng_pub_sub(tmp_path, bmv2_json):
    """End to end over a real NNG socket (pynng is a test dependency)."""
    import time

    import pynng

    addr = f"ipc://{tmp_path}/ev.ipc"
    # NNG's publisher drops what does not fit its per-subscriber queue (16 by default)
    with pynng.Pub0(listen=addr, send_buffer_size=1024) as pub:
        with EventSubscriber(addr, NameMap.from_json(bmv2_json), backend="pynng") as sub:
            assert sub.wait_connected(5)
            while not pub.pipes:              # the publisher's end of the connection too
                time.sleep(0.01)
            for msg in _recirculated_packet(11):
                pub.send(msg)
            [t] = sub.collect(quiet=0.3, timeout=5)
    assert (t.packet_id, t.egress_port, t.nfs()) == (11, 2, ["firewall", "l3fwd"])


def test_actions_show_the_arguments_of_the_entry_they_ran_from():
    """BMv2 logs an action's id only: its arguments come from the entry the table hit
    (or its default entry on a miss) as the switch holds it (*action_args*, over Thrift
    on a real switch), or from the JSON where the program fixes the default (p4c's
    tables for direct action calls); an entry that holds another action now gives none."""
    cfg = {"actions": [
        {"id": 0, "name": "SfcIngress.slot0_l3fwd.route", "primitives": [],
         "runtime_data": [{"name": "dmac", "bitwidth": 48}, {"name": "port", "bitwidth": 9}]},
        {"id": 1, "name": "SfcIngress.slot0_l3fwd.drop", "primitives": [], "runtime_data": []},
        {"id": 2, "name": "SfcIngress.slot0_l2fwd.forward", "primitives": [],
         "runtime_data": [{"name": "port", "bitwidth": 9}]}],
        "pipelines": [{"name": "ingress", "id": 0, "tables": [
            {"name": "SfcIngress.slot0_l3fwd.ipv4_lpm", "id": 0, "key": [{}],
             "action_ids": [0, 1], "default_entry": {"action_id": 1, "action_data": [],
                                                     "action_entry_const": False}},
            {"name": "tbl_forward", "id": 1, "key": [], "action_ids": [2],
             "default_entry": {"action_id": 2, "action_data": ["0x5"],
                               "action_entry_const": True}}]}]}
    names = NameMap.from_json(cfg)
    assert names.params[0] == ("dmac", "port") and names.const_defaults == {1: (2, (5,))}
    held = {("SfcIngress.slot0_l3fwd.ipv4_lpm", 3): ("SfcIngress.slot0_l3fwd.route", [2, 7]),
            ("SfcIngress.slot0_l3fwd.ipv4_lpm", 4): ("SfcIngress.slot0_l3fwd.drop", [])}
    asked = []

    def action_args(table, handle):
        asked.append((table, handle))
        return held.get((table, handle))

    m = lambda t, *f: pack_message(t, *f, packet_id=1)      # noqa: E731
    msgs = [m(E.PACKET_IN, 1), m(E.PIPELINE_START, 0), m(E.TABLE_HIT, 0, 3),
            m(E.ACTION_EXECUTE, 0), m(E.TABLE_MISS, 1), m(E.ACTION_EXECUTE, 2),
            m(E.TABLE_HIT, 0, 4), m(E.ACTION_EXECUTE, 0)]     # entry 4 holds drop now
    [t] = decode_events(msgs, names, action_args=action_args)
    assert [(e.name, e.args) for e in t.events if e.kind == "action"] == [
        ("SfcIngress.slot0_l3fwd.route", (("dmac", 2), ("port", 7))),
        ("SfcIngress.slot0_l2fwd.forward", (("port", 5),)),
        ("SfcIngress.slot0_l3fwd.route", ())]
    assert asked == [("SfcIngress.slot0_l3fwd.ipv4_lpm", 3), ("SfcIngress.slot0_l3fwd.ipv4_lpm", 4)]
    [t] = decode_events(msgs, names)                   # no Thrift: the fixed default only
    assert [e.args for e in t.events if e.kind == "action"] == [(), (("port", 5),), ()]
    # an entry of wildcards only (a default route) is described as nothing, as on the model
    [t] = decode_events(msgs, names, entry_name=lambda table, handle: "")
    assert t.events[2].text() == "table SfcIngress.slot0_l3fwd.ipv4_lpm: hit"


def test_held_entries_ask_once_and_stop_where_thrift_cannot_answer():
    from sfclab.errors import TargetError
    from sfclab.targets.bmv2.entries import HeldEntries, HeldEntry
    from sfclab.targets.bmv2.thrift import ThriftError

    route = {1: [{1: 2, 4: {1: b"\x0a\x00\x00\x00", 2: b"\xff\x00\x00\x00"}},
                 {1: 4, 6: {1: b"\x00\x00", 2: b"\xff\xff"}}, {1: 0, 2: {1: b"\x00\x05"}}],
             2: {1: _INT32_MAX - 7}, 3: 1, 4: {1: 1, 2: b"t.route", 3: [b"\x01\x02"]}}

    class Thrift:
        calls: list = []
        fail: Exception | None = None

        def table_entry(self, table, handle):
            self.calls.append((table, handle))
            if self.fail:
                raise self.fail
            return route

        def default_entry(self, table):
            self.table_entry(table, None)
            return {1: 1, 2: b"t.drop", 3: []}

    th = Thrift()
    names = NameMap(keys={"t": (("hdr.ipv4.src_addr", 32), ("meta.port", 16), ("hdr.x.k", 9))})
    held = HeldEntries(th, names)
    assert held.action_args("t", 1) == ("t.route", (258,))
    # a range over the whole field and a zero mask are wildcards, left out as the model does
    assert held.entry_name("t", 1) == "hdr.ipv4.src_addr=0x0a000000&&&0xff000000 hdr.x.k=0x005 " \
        "priority=7"
    assert held.action_args("t", None) == ("t.drop", ()) and len(th.calls) == 2
    held.forget()
    held.action_args("t", 1)
    assert len(th.calls) == 3
    default_route = HeldEntry.from_thrift({**route, 1: [{1: 1, 3: {1: b"\0" * 4, 2: 0}}],
                                           2: {1: -1}})
    assert default_route.describe((("hdr.ipv4.dst_addr", 32),)) == ""
    th.fail = ThriftError("BMv2 refused bm_mt_get_entry: code 2", "code 2")   # a stale handle
    assert held.action_args("t", 2) is None and held.off is None
    th.fail = ThriftError("refused bm_mt_get_entry: Invalid method name", "UNKNOWN_METHOD")
    assert held.entry_name("t", 3) is None and "Invalid method" in held.off
    n = len(th.calls)
    assert held.action_args("t", 4) is None and len(th.calls) == n        # not asked again
    held = HeldEntries(th)
    th.fail = TargetError("the Thrift runtime: bm_mt_get_entry failed: refused")
    assert held.action_args("t", 5) is None and "failed" in held.off


_INT32_MAX = (1 << 31) - 1
