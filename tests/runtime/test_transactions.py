"""A push or an update the switch refuses, or that a transport error or a timeout cuts
short, is one transaction: afterwards the switch runs exactly what the Lab says it runs
(program, entries, register cells), the error says what happened, and the next update
works.  The fault injector makes the model's P4Runtime server fail its n-th write."""

from __future__ import annotations

import pytest
from finsy.proto import p4r, rpc_code
from scapy.all import IP, TCP, Ether

from sfclab.errors import RuntimeWriteError, SfclabError, TargetError
from sfclab.lab import Lab
from sfclab.runtime.migrate import read_registers, register_names
from sfclab.targets.model.p4rt.codec import _fail
from p4rt_rig import tagger_catalog

A = ("chain web match tcp.dport == 80: firewall -> nat -> l3fwd\n"
     "chain mgmt match vlan.vid == 100: l2fwd")
B = "chain web match tcp.dport == 80: firewall -> l3fwd\nchain mgmt match vlan.vid == 100: l2fwd"
RELOAD = "chain x match udp.dport == 53: lb"          # a new NF type: a program reload
KINDS = ("refusal", "unavailable", "timeout")


class Faults:
    """The model's P4Runtime server fails its *at*-th write (Write or
    SetForwardingPipelineConfig, counted from :meth:`arm`): a refusal (the last update
    of a batch is refused, the others are done; a pipeline is refused), UNAVAILABLE
    (nothing is done) or DEADLINE_EXCEEDED (it is done, but the answer says it timed
    out)."""

    def __init__(self, server) -> None:
        self.count, self.at, self.kind, self.fired = 0, None, None, None
        write, setp = server._write, server._set_pipeline
        server._write = lambda req: self._call(write, req, "Write")
        server._set_pipeline = lambda req: self._call(setp, req, "SetForwardingPipelineConfig")

    def arm(self, at: int | None, kind: str | None = None) -> None:
        self.count, self.at, self.kind, self.fired = 0, at, kind, None

    def _call(self, fn, req, what: str):
        k, self.count = self.count, self.count + 1
        if k != self.at:
            return fn(req)
        self.fired = what
        if self.kind == "refusal":
            if what != "Write":
                _fail(rpc_code.INVALID_ARGUMENT, "the test refuses this pipeline")
            bad = p4r.WriteRequest()
            bad.CopyFrom(req)
            bad.updates[-1].type = p4r.Update.UNSPECIFIED
            return fn(bad)
        if self.kind == "unavailable":
            _fail(rpc_code.UNAVAILABLE, "the test dropped the connection")
        fn(req)
        _fail(rpc_code.DEADLINE_EXCEEDED, "the test's answer came too late")


@pytest.fixture
def lab():
    lab = Lab()
    lab.add(A)
    lab.push()
    lab.faults = Faults(lab.target.server)
    yield lab
    lab.close()


def _rows(entries):
    return {(e.table, e.match, e.priority, e.action, e.params) for e in entries}


def runs_what_the_lab_says(lab) -> None:
    """The switch runs the Lab's pushed program and the session's entries and groups;
    every chain's packets take every path the model finds."""
    s = lab.target.session
    assert s.generated is lab.pushed
    assert lab.target.server.config.p4_device_config.decode() == lab.pushed.program.text
    assert _rows(s.read_entries()) == _rows(s.installed.values())
    assert {(g.id, g.ports) for g in s.read_groups()} == \
        {(g.id, g.ports) for g in s.groups.values()}
    for chain in lab.pushed.compiled.chains.names():
        r = lab.send(chain, 3)
        assert not r.missed, r.summary()


def _writes(lab, action) -> int:
    """How many writes *action* makes when nothing fails."""
    lab.faults.arm(None)
    action()
    return lab.faults.count


# -- point 1: a refused push --------------------------------------------------------------------
def test_a_push_past_a_tables_size_leaves_the_old_program_and_entries():
    """The issue's reproducer: a table of 16 given 17 entries in a second chain."""
    lab = Lab(catalog=tagger_catalog(*range(17)))
    try:
        lab.add("chain web match tcp.dport == 80: firewall -> nat -> lb -> l3fwd")
        lab.push()
        before, pushed = _rows(lab.target.session.read_entries()), lab.pushed
        lab.add("chain t match udp.dport == 53: tagger -> l3fwd")
        with pytest.raises(RuntimeWriteError) as info:
            lab.push()
        assert "tags holds 16, the program has 17" in info.value.message
        assert "the switch runs what it ran before" in info.value.message
        assert "tags" in info.value.failures[0].entity
        assert lab.pushed is pushed and _rows(lab.target.session.read_entries()) == before
        runs_what_the_lab_says(lab)
        assert lab.send("web", 3).covered == {"web/0": 3}
    finally:
        lab.close()


def test_a_push_failing_after_the_swap_puts_back_the_old_program_entries_and_registers():
    lab = Lab()
    try:
        lab.add("chain s match tcp.dport == 80: stateful_firewall -> l3fwd")
        lab.push()
        flow = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5") / \
            TCP(sport=1234, dport=80)
        for _ in range(4):
            lab.send_packet(flow)
        s = lab.target.session
        names = register_names(s, "stateful_firewall")
        cells = read_registers(s, names)
        assert any(any(v) for v in cells.values())
        faults = Faults(lab.target.server)
        lab.add(RELOAD)
        faults.arm(2, "refusal")            # VERIFY, the swap, then the entries: refused
        with pytest.raises(RuntimeWriteError) as info:
            lab.push()
        assert faults.fired == "Write"
        assert "the switch runs the program it ran before, with its entries" in \
            info.value.message
        assert "INVALID_ARGUMENT" in str(info.value)            # what was refused
        assert read_registers(s, names) == cells
        runs_what_the_lab_says(lab)
        faults.arm(None)
        lab.push()
        runs_what_the_lab_says(lab)
    finally:
        lab.close()


def test_a_push_whose_old_program_cannot_be_put_back_says_nothing_is_pushed(lab):
    """The entries are refused after the swap, and the switch goes away before the old
    program is back: the error says the state is unknown, and the Lab that nothing is
    pushed; the next push works."""
    server = lab.target.server
    write, setp = server._write, server._set_pipeline
    calls = []

    def refuse(req):
        _fail(rpc_code.RESOURCE_EXHAUSTED, "the test refuses the entries")

    def down_after_the_swap(req):
        calls.append(req)
        if len(calls) > 2:                          # VERIFY, the swap, then: gone
            _fail(rpc_code.UNAVAILABLE, "the switch is down")
        return setp(req)
    server._write, server._set_pipeline = refuse, down_after_the_swap
    lab.add(RELOAD)
    with pytest.raises(TargetError, match="putting the old program back failed.*push again"):
        lab.push()
    assert lab.pushed is None and lab.target.session.generated is None
    server._write, server._set_pipeline = write, setp
    lab.push()
    runs_what_the_lab_says(lab)


# -- a failed first push: the program stays on the switch with no entries --------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("at", [0, 1, 2])                # VERIFY, the swap, the entries
def test_a_failed_first_push_says_what_the_switch_holds_and_the_next_push_works(at, kind):
    """No program ran before, and P4Runtime cannot remove one: after the failure the Lab
    says nothing is pushed; when the switch holds the new program (or may: the swap's
    answer was lost), drift and %sfc tables say so, with its tables empty, and how to
    recover; when it holds nothing, nothing says it does."""
    from sfclab.api.drift import drift
    from sfclab.notebook.runtime_views import drift_output

    lab = Lab()
    try:
        lab.add(A)
        faults = Faults(lab.target.server)
        faults.arm(at, kind)
        with pytest.raises(SfclabError) as info:
            lab.push()
        faults.arm(None)
        server, session = lab.target.server, lab.target.session
        assert lab.pushed is None and session.generated is None
        holds = server.config is not None
        d = drift(lab)
        if holds or session.stranded is not None:
            assert d is not None and d.needs == "push" and d.command == "%sfc push"
            assert d.added == ("web", "mgmt")
            sure = d.holds.startswith("the switch holds the program of a failed first push")
            assert sure == session.stranded.sure and (holds or not sure)
            assert "no table entries" in d.holds and "no chain runs" in d.holds
            assert d.message(python=True).endswith("lab.push()")
            warning = drift_output(d)
            assert warning.text.startswith("warning: nothing is pushed: the switch ")
            assert "sfc-stranded" in warning.html and "<code>%sfc push</code>" in warning.html
            assert session.read_entries() == []
            uses = lab.tables()                              # the program's tables: empty
            assert uses and all(u.entries == 0 for u in uses)
            assert {u.table for u in uses} >= {e.table for e in lab.generated().entries}
            if holds and at == 2:
                assert "no table entries (P4Runtime cannot remove a program)" in \
                    info.value.message and "push again" in info.value.message
        else:
            assert d is None and server.config is None
            with pytest.raises(TargetError, match="nothing is pushed yet"):
                lab.tables()
        lab.push()
        assert session.stranded is None and drift(lab) is None
        runs_what_the_lab_says(lab)
    finally:
        lab.close()


def test_a_first_push_whose_swap_answer_and_the_check_are_lost_says_the_switch_may_hold_it():
    """The swap's answer is lost and the switch will not say which program it holds
    (GetForwardingPipelineConfig fails too): the Lab says it may hold the new one."""
    from sfclab.api.drift import drift

    lab = Lab()
    try:
        lab.add(A)
        server = lab.target.server
        faults = Faults(server)
        faults.arm(1, "timeout")
        get = server._get_pipeline
        server._get_pipeline = lambda req: _fail(rpc_code.UNAVAILABLE, "the switch is down")
        with pytest.raises(TargetError, match="may hold"):
            lab.push()
        server._get_pipeline = get
        faults.arm(None)
        assert lab.pushed is None and not lab.target.session.stranded.sure
        assert drift(lab).holds.startswith("the switch may hold (the swap's answer was lost)")
        lab.push()
        runs_what_the_lab_says(lab)
    finally:
        lab.close()


# -- point 2: an update cut short -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["unavailable", "timeout"])
def test_an_update_cut_short_by_the_transport_is_taken_back_and_the_next_works(lab, kind):
    """Between the writes of a one-switch update (here: the flip), a transport error or
    a timeout; the path-id bookkeeping is restored and the next update works."""
    ids = {c: dict(v) for c, v in lab.target.session._chain_ids.items()}
    lab.add(B)
    lab.faults.arm(1, kind)
    with pytest.raises(TargetError) as info:
        lab.update()
    assert ("UNAVAILABLE" if kind == "unavailable" else "DEADLINE_EXCEEDED") in \
        info.value.message
    assert "taken back" in info.value.message
    assert lab.target.session._chain_ids == ids
    assert _rows(lab.target.session.read_entries()) == \
        _rows(lab.target.session.installed.values())
    assert [p for p in lab.send("web", 2).took] == ["web/0", "web/0"]
    runs_what_the_lab_says(lab)
    assert lab.update().kind == "entries"
    runs_what_the_lab_says(lab)


def test_a_switch_out_of_reach_during_the_rollback_is_brought_back_by_the_next_update(lab):
    lab.add(B)
    server = lab.target.server
    write = server._write
    calls = []

    def down_after_first(req):
        calls.append(req)
        if len(calls) > 1:                # the flip and the rollback's reads fail
            _fail(rpc_code.UNAVAILABLE, "the switch is down")
        return write(req)
    server._write = down_after_first
    read = server._read
    server._read = lambda req: _fail(rpc_code.UNAVAILABLE, "the switch is down")
    with pytest.raises(TargetError, match="taking it back failed"):
        lab.update()
    assert lab.target.session.out_of_step
    server._write, server._read = write, read
    assert lab.update().kind == "entries"
    assert not lab.target.session.out_of_step
    runs_what_the_lab_says(lab)


# -- the fault-injection test: every write in turn fails --------------------------------------
#: A change, how it is applied, how it is undone, and how many writes it makes: an
#: entries-only update (first, flip, last) and a push (VERIFY, the swap, the entries).
CHANGES = {"update": (lambda lab: lab.add(B), Lab.update, lambda lab: lab.add(A), 3),
           "push": (lambda lab: lab.add(RELOAD), Lab.push, lambda lab: lab.remove("x"), 3)}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_failing_at_any_write_leaves_the_switch_as_the_lab_says(lab, change, kind):
    edit, apply, back, writes = CHANGES[change]
    edit(lab)
    assert _writes(lab, lambda: apply(lab)) == writes
    back(lab)
    apply(lab)
    for at in range(writes):
        old = lab.pushed
        edit(lab)
        lab.faults.arm(at, kind)
        with pytest.raises(SfclabError):
            apply(lab)
        lab.faults.arm(None)
        assert lab.pushed is old, at
        runs_what_the_lab_says(lab)
        apply(lab)                                    # the next update (push) works
        runs_what_the_lab_says(lab)
        back(lab)
        apply(lab)


# -- point 5: trace labels of packets that raced an update -------------------------------------
WEB = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.9") / TCP(dport=80)


def test_a_packet_that_ran_before_an_update_keeps_its_path_label(lab):
    """The update lands between a packet's run (on web's old path ids) and its label: the
    trace still names the path it took."""
    send = lab.target.send

    def send_then_update(port, packet, **kw):
        r = send(port, packet, **kw)
        lab.add(B)
        assert lab.update().changed == ["web"]        # web's paths get new ids
        return r
    lab.target.send = send_then_update
    lab.send_packet(WEB, label="web")
    lab.target.send = send
    assert lab.traces[-1].path == "web/0"
    assert lab.traces[-1].result.trace.nfs() == ["firewall", "nat", "l3fwd"]
    lab.send_packet(WEB)
    assert lab.traces[-1].path == "web/0"
    assert lab.traces[-1].result.trace.nfs() == ["firewall", "l3fwd"]


def test_packets_racing_updates_are_all_labelled(lab):
    import threading

    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            lab.send_packet(WEB)
    t = threading.Thread(target=traffic)
    t.start()
    try:
        for k in range(10):
            lab.add((B, A)[k % 2])
            lab.update()
    finally:
        stop.set()
        t.join()
    assert len(lab.traces) > 10
    kept = list(lab.traces)                   # the last lab.keep_traces of them, whole
    assert [r.path for r in kept] == ["web/0"] * len(kept)
    # and every packet, kept whole or only counted, is counted on its path
    assert dict(lab.traces.summary.paths) == {"web/0": len(lab.traces)}
