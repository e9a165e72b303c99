"""Sessions: a push is one transaction; chains change by entries only, consistently,
while packets flow; a change that needs new NF slots says it needs a program reload."""

from __future__ import annotations

import threading

import pytest
from scapy.all import IP, TCP, Dot1Q, Ether

import sfclab
from sfclab.codegen import generate
from sfclab.errors import CompileError, RuntimeWriteError, TargetError
from sfclab.targets.model import ModelTarget
from p4rt_rig import tagger_catalog

A = ("chain web match tcp.dport == 80: firewall -> nat -> l3fwd\n"
     "chain mgmt match vlan.vid == 100: l2fwd")
B = "chain web match tcp.dport == 80: firewall -> l3fwd\nchain mgmt match vlan.vid == 100: l2fwd"
WEB = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.9") / TCP(dport=80)
MGMT = Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=100) / IP(dst="10.9.9.9") / TCP(dport=22)


@pytest.fixture()
def target():
    with ModelTarget() as t:
        yield t


def _on(target, text):
    """Compile *text* to fit the program on the switch (its pipeline, keys, headers)."""
    options, slots = target.session.options_for_update()
    return generate(sfclab.compile(text, pipeline=slots), options=options)


def test_push_installs_everything_and_reads_back(target):
    gen = generate(sfclab.compile(A))
    n = target.push(gen)
    assert n == len(gen.entries)
    back = target.session.read_entries()
    assert len(back) == n
    occ = {o.table: o for o in target.occupancy()}
    assert occ["SfcIngress.rewinder"].entries == 2
    assert occ["SfcIngress.rewinder"].size >= 2


def _tagger(*entries):
    """A chain set whose NF ``tagger`` has *entries* as its example entries."""
    cat = tagger_catalog(*entries)
    return generate(sfclab.compile(sfclab.parse("chain t: tagger -> l3fwd", catalog=cat),
                                   catalog=cat))


def test_entries_past_a_tables_size_are_refused_before_the_program_is_swapped(target):
    with pytest.raises(RuntimeWriteError) as info:
        target.push(_tagger(*range(17)))          # the table holds 16
    (failure,) = info.value.failures
    assert failure.code == "RESOURCE_EXHAUSTED"
    assert "tags" in failure.entity and "ttl=16" in failure.entity
    assert "tags holds 16, the program has 17" in info.value.message
    assert "nothing was written" in info.value.message
    assert target.server.config is None and target.session.generated is None


def test_an_entry_that_does_not_fit_the_program_is_refused_before_anything_changes(target):
    a = generate(sfclab.compile(A))
    target.push(a)
    before = target.session.read_entries()
    with pytest.raises(TargetError, match="value 300 does not fit in 8 bits"):
        target.push(_tagger(64, 300))
    assert target.session.read_entries() == before        # the old program runs on
    assert target.session.generated is a


def test_a_chain_changes_by_entries_only(target):
    a = generate(sfclab.compile(A))
    target.push(a)
    before = {e for e in target.session.read_entries() if "l2fwd" in e.table or e.params == ()}
    r = target.send(1, WEB)
    assert r.trace.nfs() == ["firewall", "nat", "l3fwd"]
    plan = target.update(_on(target, B))
    assert plan.kind == "entries" and plan.changed == ["web"] and not plan.added
    r = target.send(1, WEB)
    assert r.trace.nfs() == ["firewall", "l3fwd"] and r.ports == [1]
    assert target.send(1, MGMT).trace.nfs() == ["l2fwd"]
    after = {e for e in target.session.read_entries() if "l2fwd" in e.table or e.params == ()}
    assert before <= after                          # mgmt's entries were not touched
    assert target.update(_on(target, B)).kind == "none"


def test_adding_and_removing_a_chain(target):
    a = generate(sfclab.compile(A))
    target.push(a)
    plan = target.update(_on(target, "chain web match tcp.dport == 80: firewall -> nat -> l3fwd"))
    assert plan.removed == ["mgmt"] and plan.kind == "entries"
    r = target.send(1, MGMT)
    assert r.dropped and r.trace.nfs() == []        # unclassified now
    plan = target.update(_on(target, A))
    assert plan.added == ["mgmt"]
    assert target.send(1, MGMT).trace.nfs() == ["l2fwd"]


def test_a_new_nf_type_needs_a_program_reload(target):
    a = generate(sfclab.compile(A))
    target.push(a)
    with pytest.raises(CompileError, match="have no slot in the pipeline"):
        _on(target, A + "\nchain x match udp.dport == 53: lb")
    bigger = generate(sfclab.compile(A + "\nchain x match udp.dport == 53: lb"))
    assert target.session.plan(bigger).kind == "reload"
    with pytest.raises(TargetError, match="needs a program reload"):
        target.update(bigger)
    plan = target.update(bigger, allow_reload=True)
    assert plan.kind == "reload"
    assert target.send(1, WEB).trace.nfs() == ["firewall", "nat", "l3fwd"]


def test_updates_under_traffic_are_consistent_and_lose_nothing(target):
    """While web's chain flips between A and B, every packet runs A's path or B's,
    never a mix, and every packet is forwarded."""
    a = generate(sfclab.compile(A))
    target.push(a)
    versions = [_on(target, B), _on(target, A)]
    results, stop = [], threading.Event()

    def traffic():
        while not stop.is_set():
            results.append(target.send(1, WEB))

    t = threading.Thread(target=traffic)
    t.start()
    try:
        for k in range(20):
            target.update(versions[k % 2])
    finally:
        stop.set()
        t.join()
    assert len(results) > 20
    allowed = {("firewall", "nat", "l3fwd"), ("firewall", "l3fwd")}
    for r in results:
        assert tuple(r.trace.nfs()) in allowed, r.trace.text()
        assert r.ports == [1], r.trace.text()
    nat_out = [Ether(r.outputs[0][1])[IP].src for r in results
               if r.trace.nfs() == ["firewall", "nat", "l3fwd"]]
    assert set(nat_out) == {"203.0.113.10"}          # NAT's rewrite, whenever NAT ran


def test_a_script_ends_without_closing_its_lab(tmp_path):
    """The embedded model's server must not keep a script alive (its RPC threads are daemons)."""
    import subprocess
    import sys

    script = tmp_path / "lab.py"
    script.write_text("import sfclab\nlab = sfclab.Lab()\n"
                      "lab.add('chain web match tcp.dport == 80: firewall -> l3fwd')\n"
                      "lab.push()\nprint(lab.send('web', 1)[0].ports)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[1]", done.stderr


# --- flood's replication groups and entries, written by the session -------------------------

FLOODING = ("chain bcast match eth.dst == ff:ff:ff:ff:ff:ff: flood -> l3fwd\n"
            "chain web match tcp.dport == 80: firewall -> l3fwd")
BCAST = Ether(dst="ff:ff:ff:ff:ff:ff") / IP(dst="10.0.1.9") / TCP(dport=99)


def _flood_state(target):
    s = target.session
    return ([(g.id, g.ports) for g in s.read_groups()],
            sorted((e for e in s.read_entries() if e.table.endswith("flood_groups")), key=repr))


def test_flood_groups_stay_while_chains_change(target):
    target.push(generate(sfclab.compile(FLOODING)))
    state = _flood_state(target)
    assert len(state[0]) == 9 and len(state[1]) == 8 + 1        # + flood's example entry
    plan = target.update(_on(target, FLOODING.replace("firewall -> l3fwd", "l3fwd")))
    assert plan.kind == "entries" and plan.changed == ["web"]
    assert _flood_state(target) == state
    assert sorted(target.send(3, BCAST).ports) == [1, 2, 4, 5, 6, 7, 8]


def test_new_ports_rewrite_the_flood_groups_and_entries(target):
    gen = generate(sfclab.compile(FLOODING))
    target.push(gen)
    target.session.ports = [2, 3, 4]
    plan = target.session.plan(gen)
    assert plan.kind == "entries" and plan.writes == 4 + 5 + 5   # groups 1, 2..4; 5 groups and
    target.update(gen)                                          # 5 entries of ports 1, 5..8
    groups, entries = _flood_state(target)
    assert groups == [(1, (2, 3, 4)), (0x4002, (3, 4)), (0x4003, (2, 4)), (0x4004, (2, 3))]
    assert len(entries) == 3 + 1
    assert sorted(target.send(3, BCAST).ports) == [2, 4]
    assert sorted(target.send(7, BCAST).ports) == [2, 3, 4]         # not a port: group 1
    assert target.session.plan(gen).kind == "none"


def test_a_reload_without_flood_leaves_no_groups(target):
    target.push(generate(sfclab.compile(FLOODING)))
    plan = target.update(generate(sfclab.compile(A)), allow_reload=True)
    assert plan.kind == "reload"
    assert target.session.read_groups() == [] and target.session.groups == {}


def test_without_a_port_set_no_flood_groups_are_written_and_the_session_says_so(target):
    target.session.ports = None
    target.push(generate(sfclab.compile(FLOODING)))
    assert target.session.read_groups() == []
    (note,) = target.session.notes
    assert "ports are unknown" in note and "session.ports" in note
    assert target.send(3, BCAST).dropped


def test_ports_that_are_not_switch_ports_are_refused(target):
    target.session.ports = [1, 600]
    with pytest.raises(TargetError, match="port 600 is not a switch port"):
        target.push(generate(sfclab.compile(FLOODING)))
    assert target.session.generated is None
