"""A Lab with a topology (sfclab.api.labnet): its chains run on the network — push every switch,
send host to host, one switch's tables, updates once pushed — and bad input changes nothing."""

from __future__ import annotations

import pytest
from finsy.proto import rpc_code

import sfclab
from sfclab import Lab
from sfclab.errors import ChainError, SfclabError, TargetError, TopologyError
from sfclab.ir.topology import leaf_spine, line
from sfclab.runtime.migrate import register_names
from sfclab.targets.model.p4rt.codec import _fail

CHAINS = """chain web match udp.dport == 80 from h1 to h4: firewall -> nat
chain dns match udp.dport == 53 from h3 to h2: monitor
"""


@pytest.fixture
def lab():
    lab = Lab()
    lab.set_topology("use leaf_spine(2, 2, stages=8)\n")
    lab.add(CHAINS)
    yield lab
    lab.close()


def test_a_topology_text_or_object_and_back_to_one_switch():
    lab = Lab()
    assert lab.topology is None and lab.network_state() is None
    with pytest.raises(SfclabError, match="this lab has no topology"):
        lab.network
    topo = lab.set_topology(line(3))
    assert lab.topology is topo and lab.network.topology is topo
    with pytest.raises(TopologyError, match="unknown node 's9'"):
        lab.set_topology("switch s1\nlink s1 -- s9\n")
    assert lab.topology is topo                              # a bad topology changes nothing
    assert lab.set_topology(None) is None and lab.topology is None


def test_push_sends_and_tables_on_the_network(lab):
    total = lab.push()
    program = lab.network.program
    assert total == sum(len(sp.generated.entries) for sp in program.switches.values())
    sent = lab.send("web", 2)                                # from web's ingress to its egress
    assert [t.egress for t in sent] == ["h4", "h4"] and sent.src == "h1" and sent.dst == "h4"
    assert sent.summary() == "2 packets of web from h1 to h4: 2 delivered to h4, 0 dropped"
    between = lab.send_between("h3", "h2")                   # the chain between them
    assert between.chain == "dns" and between[0].nfs() == ["monitor"]
    first = lab.network.placement.chains["web"].route[0]
    rows = {r.table: r for r in lab.tables(first)}
    assert rows["SfcIngress.initializer"].hits == 2 and rows["SfcIngress.initializer"].misses == 0
    with pytest.raises(SfclabError, match="name a switch"):
        lab.tables()
    assert len(lab.network.traces) == 3


def test_a_changed_chain_waits_for_update(lab):
    lab.push()
    lab.add("chain web match udp.dport == 80 from h1 to h4: firewall")
    state = lab.network_state()
    assert state.stale and [c.name for c in state.network.chains] == ["web", "dns"]
    assert lab.send("web")[0].nfs() == ["firewall", "nat"]  # the network runs what was pushed
    lab.add("chain ssh match udp.dport == 22 from h2 to h3: nat")
    with pytest.raises(SfclabError, match="chain 'ssh' is not on the network yet"):
        lab.send("ssh")
    plan = lab.update()
    assert plan.kind == "entries" and not lab.network_state().stale
    assert lab.send("web")[0].nfs() == ["firewall"] and lab.send("ssh")[0].egress == "h3"


def test_update_before_a_push_pushes(lab):
    plan = lab.update()
    assert plan.kind == "reload" and "pushed every switch" in plan.reason
    assert lab.network.pushed


def test_chains_endpoints_are_checked_when_added(lab):
    before = lab.chains
    with pytest.raises(ChainError, match="goes to 'h9', which topology 'leaf_spine2x2'") as e:
        lab.add("chain x from h1 to h9: nat", source="x.sfc")
    assert e.value.location == "x.sfc:1:20"
    chain = sfclab.parse("chain y from spine1 to h2: nat")["y"]
    with pytest.raises(ChainError, match="'spine1' is a switch"):
        lab.add(chain)
    assert lab.chains is before


def test_the_same_topology_again_keeps_the_network_running(lab):
    lab.push()
    net = lab.network
    lab.set_topology(leaf_spine(2, 2, stages=8))
    assert lab.network is net and net.pushed
    lab.set_topology(leaf_spine(2, 2, stages=9))             # another network: stopped
    assert lab.network is not net and not lab.network.pushed


def test_export_writes_one_program_per_switch(lab, tmp_path):
    paths = lab.export(tmp_path)
    assert {p.parent.name for p in paths if p.name == "program.p4"} == set(lab.topology.switches)


def test_network_targets_by_name(lab):
    with pytest.raises(TargetError, match="(?s)unknown network target 'modle'.*'model'"):
        lab.connect("modle")
    target = lab.connect("model")
    assert target.kind == "model-network" and lab.network.target is target
    with pytest.raises(TargetError) as e:       # the embedded network takes no options
        lab.connect("model?switch=bmv2")
    assert (e.value.message, e.value.hint) == (
        "unknown parameter 'switch' in 'model?switch=bmv2'", "it takes no parameters")


def test_one_switch_labs_have_no_switch_to_choose():
    lab = Lab()
    lab.add("chain a: nat")
    with pytest.raises(SfclabError, match="runs on one switch, not a network"):
        lab.tables("s1")
    lab.close()


def test_set_chains_only_before_a_push():
    net = sfclab.Network(line(2), "chain a from h1 to h2: nat")
    net.set_chains("chain b from h1 to h2: firewall")
    assert net.endpoints("b") == ("h1", "h2") and net.placement.chains["b"]
    net.push()
    with pytest.raises(TargetError, match="running: its chains change by update"):
        net.set_chains("chain a: nat")
    with pytest.raises(SfclabError, match="no chain 'a' in the network"):
        net.endpoints("a")
    net.close()


def _counted(lab, switch: str) -> dict[str, list[int]]:
    """heavy_hitter's register cells on *switch*, after the network ran web's packets."""
    from sfclab.runtime.migrate import read_registers, register_names

    session = lab.network.target.switches[switch].session
    return read_registers(session, register_names(session, "heavy_hitter"))


def _counting(stages: int) -> Lab:
    """A Lab on line(3) running web (heavy_hitter on s1, which counted 4 packets)."""
    lab = Lab()
    lab.set_topology(line(3, stages=stages))
    lab.add("chain web match tcp.dport == 80: heavy_hitter -> nat")
    lab.push()
    assert lab.network.placement.chains["web"].node("heavy_hitter") == "s1"
    lab.send("web", 4)
    assert any(any(cells) for cells in _counted(lab, "s1").values())
    return lab


def test_a_reload_of_a_switch_with_state_carries_its_registers():
    """heavy_hitter stays on s1, whose program is reloaded (a new slot): drift says the
    reload carries its registers, and after the update s1's cells are those counted."""
    from sfclab.api.drift import drift
    from sfclab.notebook.runtime_views import update_text

    lab = _counting(stages=12)
    try:
        before = {n.rsplit(".", 1)[1]: v for n, v in _counted(lab, "s1").items()}
        lab.add("chain web match tcp.dport == 80: heavy_hitter -> qos -> nat")
        d = drift(lab)
        carries = "carries the registers of heavy_hitter"
        assert [s for s, _ in d.state] == ["s1"] and carries in dict(d.state)["s1"]
        assert f"s1 (a program reload: {carries}" in d.what()
        plan = lab.update(allow_reload=True)
        assert lab.network.placement.chains["web"].node("heavy_hitter") == "s1"
        assert {n.rsplit(".", 1)[1]: v for n, v in _counted(lab, "s1").items()} == before
        assert "carried the registers of heavy_hitter" in update_text(plan)
    finally:
        lab.close()


def test_an_update_that_moves_a_stateful_nf_carries_its_state():
    """A changed chain placed anew may run its NFs on other switches: drift and the update's
    plan name each NF that moves and say its registers move with it; the update reads
    them on the old switch and writes them on the new one before the flip (the cells on
    s3 equal those counted on s1)."""
    from sfclab.api.drift import drift
    from sfclab.notebook.runtime_views import update_text

    lab = _counting(stages=7)
    try:
        before = {n.rsplit(".", 1)[1]: v for n, v in _counted(lab, "s1").items()}
        lab.add("chain web match tcp.dport == 80: nat -> heavy_hitter")
        d = drift(lab)
        moving = "web's heavy_hitter moves s1 -> s3 (its registers move with it: 3 " \
                 "registers, 3072 cells)"
        assert d.moved == (moving,) and moving in d.message()
        plan = lab.update(allow_reload=True)
        moved = "web's heavy_hitter moves s1 -> s3 (carried its registers: 3 registers, " \
                "3072 cells)"
        assert [str(m) for m in plan.moved] == [moved] and f"  {moved}" in update_text(plan)
        assert lab.network.placement.chains["web"].node("heavy_hitter") == "s3"
        assert {n.rsplit(".", 1)[1]: v for n, v in _counted(lab, "s3").items()} == before
        lab.add("chain web match tcp.dport == 81: nat -> heavy_hitter")
        assert drift(lab).moved == () and drift(lab).needs == "entries"    # nothing moves
    finally:
        lab.close()


# -- a network: a moved NF takes its cells along; a failed write leaves the old state -------
def _refuse_register_writes(server, fired: list) -> None:
    """*server* drops the connection at the first Write of register cells (nothing of it
    is done)."""
    write = server._write

    def refuse(req):
        if not fired and any(u.entity.HasField("register_entry") for u in req.updates):
            fired.append(req)
            _fail(rpc_code.UNAVAILABLE, "the test dropped the connection")
        return write(req)

    server._write = refuse


def _hh(lab, switch: str) -> dict[str, list[int]]:
    """heavy_hitter's cells on *switch*, by the register's name within the NF."""
    return {n.rsplit(".", 1)[1]: v for n, v in _counted(lab, switch).items()}


@pytest.fixture
def net(request):
    """_counting's Lab (switches of 7 stages, or as many as the test's parameter)."""
    lab = _counting(stages=getattr(request, "param", 7))
    yield lab
    lab.close()


def test_a_moved_nf_counts_on_from_its_carried_state(net):
    before = _hh(net, "s1")
    net.add("chain web match tcp.dport == 80: nat -> heavy_hitter")
    plan = net.update(allow_reload=True)
    assert net.network.placement.chains["web"].node("heavy_hitter") == "s3"
    assert [m.done for m in plan.moved] == [True]
    assert _hh(net, "s3") == before
    net.send("web", 2)                       # the sketch counts on from 4 on s3
    after = _hh(net, "s3")
    assert sum(map(sum, after.values())) == sum(map(sum, before.values())) + 2 * 3


def test_a_failed_write_of_a_moved_nfs_cells_leaves_the_old_placement_and_state(net):
    before, pushed = _hh(net, "s1"), net.network.program
    fired: list = []
    _refuse_register_writes(net.network.target.switches["s3"].server, fired)
    net.add("chain web match tcp.dport == 80: nat -> heavy_hitter")
    with pytest.raises(SfclabError, match="reloaded s3 and put back"):
        net.update(allow_reload=True)
    assert fired
    assert net.network.program is pushed
    assert net.network.placement.chains["web"].node("heavy_hitter") == "s1"
    assert _hh(net, "s1") == before
    s3 = net.network.target.switches["s3"].session
    assert s3.generated is pushed.switches["s3"].generated
    assert not register_names(s3, "heavy_hitter")           # s3 runs its old program again
    net.add("chain web match tcp.dport == 80: heavy_hitter -> nat")   # back to the running chains
    net.send("web", 2)                        # heavy_hitter on s1 counts on from its cells
    assert sum(map(sum, _hh(net, "s1").values())) == sum(map(sum, before.values())) + 2 * 3


@pytest.mark.parametrize("net", [12], indirect=True)     # room on s1 for qos: s1 reloads
def test_a_failed_carry_write_on_a_reloaded_switch_puts_back_its_program_and_cells(net):
    before, pushed = _hh(net, "s1"), net.network.program
    fired: list = []
    _refuse_register_writes(net.network.target.switches["s1"].server, fired)
    net.add("chain web match tcp.dport == 80: heavy_hitter -> qos -> nat")   # reloads s1
    with pytest.raises(SfclabError, match="the push was taken back"):
        net.update(allow_reload=True)
    assert fired
    assert net.network.program is pushed
    assert net.network.target.switches["s1"].session.generated is \
        pushed.switches["s1"].generated
    assert _hh(net, "s1") == before
    fired.append("once")                       # the next reload carries them
    plan = net.update(allow_reload=True)
    assert "carried the registers of heavy_hitter" in str(plan.switches["s1"])
    assert _hh(net, "s1") == before


def test_a_move_from_a_switch_without_register_reads_leaves_the_state_behind_and_says_so(net):
    """BMv2's P4Runtime server answers register reads UNIMPLEMENTED: the update moves the
    NF all the same, and says its state stayed behind and why."""
    server = net.network.target.switches["s1"].server
    read = server._read

    def refuse(req):
        if any(e.HasField("register_entry") for e in req.entities):
            _fail(rpc_code.UNIMPLEMENTED, "Register reads are not supported yet")
        return read(req)

    server._read = refuse
    net.add("chain web match tcp.dport == 80: nat -> heavy_hitter")
    plan = net.update(allow_reload=True)
    assert net.network.placement.chains["web"].node("heavy_hitter") == "s3"
    assert [str(m) for m in plan.moved] == [
        "web's heavy_hitter moves s1 -> s3 (its register state stays behind: it starts from "
        "zero on s3: the switch does not read or write registers over P4Runtime)"]
    assert not any(any(v) for v in _hh(net, "s3").values())
