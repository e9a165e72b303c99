"""A program reload carries each NF's register state into the new program when it keeps
its meaning there (the same NF code, the same registers; slots renumbered by the
reload mapped old -> new), says what it carried and what starts from zero, and a
failed register write takes the reload back with the old program and its cells."""

from __future__ import annotations

import pytest
from finsy.proto import p4r, rpc_code
from scapy.all import IP, TCP, Ether

from sfclab.errors import SfclabError, TargetError
from sfclab.lab import Lab
from sfclab.runtime.migrate import read_registers, register_names
from sfclab.targets.model.p4rt.codec import _fail

#: Drops a source's 4th packet on: a count per source address in a register.
LIMITER = """control limiter(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcRegister<bit<32>, bit<4>>(16) seen;
    bit<32> n = 0;
    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            n = seen.add(hdr.ipv4.src_addr[3:0], 1);
            if (n > 3) {
                sfc.drop = 1;
            }
        }
    }
}"""
FIRST = ("chain s match tcp.dport == 80: limiter -> l3fwd\n"
         "chain f match tcp.dport == 443: stateful_firewall -> l3fwd")
# heavy_hitter takes slot 0: limiter and stateful_firewall move up a slot
RENUMBER = "chain h match udp.dport == 53: heavy_hitter -> l3fwd"
FLOW = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5") / \
    TCP(sport=1234, dport=80)
WEB = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.11", dst="10.0.1.5") / \
    TCP(sport=999, dport=443)


@pytest.fixture
def lab():
    lab = Lab()
    lab.add_nf(LIMITER)
    lab.add(FIRST)
    lab.push()
    for _ in range(3):                       # the limiter's 3 packets, all through
        assert lab.send_packet(FLOW).outputs
    for _ in range(5):
        lab.send_packet(WEB)
    yield lab
    lab.close()


def _cells(lab, nf: str) -> dict[str, list[int]]:
    """The NF's register cells, by the register's name within the NF."""
    s = lab.target.session
    return {n.rsplit(".", 1)[1]: v for n, v in read_registers(s, register_names(s, nf)).items()}


def _slot(lab, nf: str) -> int:
    return next(s.index for s in lab.target.session.generated.composition.slots if s.nf == nf)


def test_a_reload_that_renumbers_the_slots_carries_the_registers(lab):
    before = {nf: _cells(lab, nf) for nf in ("limiter", "stateful_firewall")}
    slots = {nf: _slot(lab, nf) for nf in before}
    assert sorted(v for v in before["limiter"]["seen"] if v) == [3]
    assert sorted(v for v in before["stateful_firewall"]["window_count"] if v) == [5]
    lab.add(RENUMBER)
    plan = lab.update(allow_reload=True)
    assert plan.kind == "reload" and plan.done
    moved = {nf: _slot(lab, nf) for nf in before}
    assert all(moved[nf] != slots[nf] for nf in before)            # the slots were renumbered
    assert {nf: _cells(lab, nf) for nf in before} == before          # every cell carried
    assert (f"carried the registers of limiter (slot {slots['limiter']} -> "
            f"{moved['limiter']}: 1 register, 16 cells)") in str(plan)
    assert "carried the registers of stateful_firewall (slot" in str(plan)
    assert "2 registers, 8192 cells" in str(plan)
    assert not lab.send_packet(FLOW).outputs     # the 4th packet drops, as with no reload
    assert sorted(v for v in _cells(lab, "limiter")["seen"] if v) == [4]


def test_the_update_text_says_what_was_carried(lab):
    from sfclab.notebook.runtime_views import update_text

    lab.add(RENUMBER)
    text = update_text(lab.update(allow_reload=True))
    assert "carried the registers of limiter" in text
    assert "carried the registers of stateful_firewall" in text


def test_a_redefined_nf_starts_from_zero_and_says_so(lab):
    lab.add_nf(LIMITER.replace("n > 3", "n > 5"))
    lab.add(RENUMBER)
    plan = lab.update(allow_reload=True)
    assert "limiter's registers start from zero (its P4 code changed)" in str(plan)
    assert not any(_cells(lab, "limiter")["seen"])
    assert "carried the registers of stateful_firewall" in str(plan)   # unchanged: carried


def test_a_push_starts_the_registers_from_zero(lab):
    """A push is a fresh start (only an update's reload carries state)."""
    lab.add(RENUMBER)
    lab.push()
    assert not any(_cells(lab, "limiter")["seen"])
    assert lab.target.session.carried == []


@pytest.mark.parametrize("kind", ["refusal", "unavailable"])
def test_a_failed_register_write_takes_the_reload_back_with_the_old_cells(lab, kind):
    """The fault is injected at the first write of register cells after the reload's
    entries: the old program runs again, with its entries and register cells."""
    server = lab.target.server
    write, fired = server._write, []

    def fail_registers(req):
        if not fired and any(u.entity.HasField("register_entry") for u in req.updates):
            fired.append(req)
            if kind == "unavailable":
                _fail(rpc_code.UNAVAILABLE, "the test dropped the connection")
            bad = p4r.WriteRequest()
            bad.CopyFrom(req)
            bad.updates[-1].type = p4r.Update.UNSPECIFIED
            return write(bad)
        return write(req)

    server._write = fail_registers
    pushed, s = lab.pushed, lab.target.session
    before = {nf: _cells(lab, nf) for nf in ("limiter", "stateful_firewall")}
    entries = {(e.table, e.match, e.priority, e.action, e.params) for e in s.read_entries()}
    lab.add(RENUMBER)
    with pytest.raises(SfclabError, match="the switch runs the program it ran before, "
                                          "with its entries"):
        lab.update(allow_reload=True)
    assert fired
    assert lab.pushed is pushed and s.generated is pushed
    assert server.config.p4_device_config.decode() == pushed.program.text
    assert {(e.table, e.match, e.priority, e.action, e.params)
            for e in s.read_entries()} == entries
    assert {nf: _cells(lab, nf) for nf in before} == before
    assert not lab.send_packet(FLOW).outputs      # the old program's state still counts
    server._write = write
    plan = lab.update(allow_reload=True)          # and the next reload carries it
    assert "carried the registers of limiter" in str(plan)
    assert sorted(v for v in _cells(lab, "limiter")["seen"] if v) == [4]



def test_an_nf_in_two_slots_carries_each_slots_cells_to_the_slot_serving_the_same_nf():
    """limiter runs twice in chain a (slots 0 and 2); heavy_hitter takes slot 2 on the
    reload, so a's second limiter moves to slot 3 and its cells go with it."""
    lab = Lab()
    try:
        lab.add_nf(LIMITER)
        lab.add("chain a match tcp.dport == 80: limiter -> nat -> limiter#2 -> l3fwd")
        lab.push()
        flow = FLOW
        for _ in range(2):
            lab.send_packet(flow)
        s = lab.target.session
        first = read_registers(s, ["SfcIngress.slot0_limiter.seen"])
        s.client.write([_cell(s, "SfcIngress.slot2_limiter.seen", 7, 9)])   # tell them apart
        second = read_registers(s, ["SfcIngress.slot2_limiter.seen"])
        lab.add(RENUMBER)
        plan = lab.update(allow_reload=True)
        assert [x.instance for x in s.generated.composition.slots if x.nf == "limiter"] == \
            ["slot0_limiter", "slot3_limiter"]
        assert "carried the registers of limiter (1 register, 16 cells)" in str(plan)
        assert "carried the registers of limiter (slot 2 -> 3: 1 register, 16 cells)" in str(plan)
        assert read_registers(s, ["SfcIngress.slot0_limiter.seen"]) == first
        assert list(read_registers(s, ["SfcIngress.slot3_limiter.seen"]).values()) == \
            list(second.values())
    finally:
        lab.close()


def _cell(session, register: str, index: int, value: int):
    reg = next(r for r in session.index.info.registers if r.preamble.name == register)
    u = p4r.Update(type=p4r.Update.MODIFY)
    u.entity.register_entry.register_id = reg.preamble.id
    u.entity.register_entry.index.index = index
    u.entity.register_entry.data.bitstring = value.to_bytes(4, "big")
    return u


def test_slots_that_split_the_chains_another_way_are_not_guessed():
    """An NF type whose old slot served what two new slots now serve (or the reverse)
    has no one new slot for its cells: they start from zero (plan_carry says why)."""
    from types import SimpleNamespace as S

    from sfclab.runtime.carry import _pairs

    old = [S(index=0, nf="limiter"), S(index=1, nf="limiter")]
    new = [S(index=0, nf="limiter"), S(index=1, nf="limiter")]
    same = {0: frozenset({("a", "limiter")}), 1: frozenset({("b", "limiter")})}
    swapped = {0: frozenset({("b", "limiter")}), 1: frozenset({("a", "limiter")})}
    assert {o: n.index for o, n in _pairs(old, new, same, swapped).items()} == {0: 1, 1: 0}
    merged = {0: frozenset({("a", "limiter"), ("b", "limiter")}), 1: frozenset()}
    assert _pairs(old, new, same, merged) == {}          # both old slots -> new slot 0
    assert _pairs(old, new, merged, same) == {}          # old slot 0 -> both new slots


def test_drift_says_what_a_reload_would_carry(lab):
    """Before %sfc update --reload, the warning says what the reload carries and what
    starts from zero (it said nothing of the registers before)."""
    from sfclab.api.drift import drift

    lab.add(RENUMBER)
    d = drift(lab)
    assert d.needs == "reload"
    assert "carries the registers of limiter (slot 0 -> 1: 1 register, 16 cells)" in d.what()
    assert "carries the registers of stateful_firewall" in d.message()
    lab.add_nf(LIMITER.replace("n > 3", "n > 5"))
    assert "limiter's registers start from zero (its P4 code changed)" in drift(lab).what()


def test_a_switch_without_register_reads_reloads_and_says_its_registers_start_from_zero(lab):
    """BMv2's P4Runtime server neither reads nor writes registers: the reload goes on (as
    before), and says the state was not carried and why."""
    client = lab.target.session.client
    read = client.read

    def bmv2_read(entities):                 # what sfclab's client makes of BMv2's answer
        entities = list(entities)
        if any(e.HasField("register_entry") for e in entities):
            err = TargetError("Read failed: UNIMPLEMENTED: Register reads are not supported yet")
            err.status = "UNIMPLEMENTED"
            raise err
        return read(entities)

    client.read = bmv2_read
    lab.add(RENUMBER)
    plan = lab.update(allow_reload=True)
    assert plan.done and lab.pushed is lab.target.session.generated
    assert "limiter's registers start from zero (the switch does not read or write " \
           "registers over P4Runtime)" in str(plan)
    assert "carried" not in str(plan)
    lab.add("chain q match udp.dport == 54: qos -> l3fwd")          # the next reload's plan
    assert "limiter's registers start from zero (the switch does not read or write " \
           "registers over P4Runtime)" in str(lab.target.session.plan(lab.generated("v1model")))
