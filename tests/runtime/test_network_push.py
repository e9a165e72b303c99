"""A network push is one transaction: when a switch's push fails (refused, the connection
dropped, the answer too late), the switches already pushed are taken back — to the program
they ran before with its entries, or after a first push to the new program with no entries
(P4Runtime cannot remove one) — and the Lab, drift, %sfc tables and the topology view say
what each switch holds; the next push works.  The fault injector (test_transactions.Faults)
makes one switch's P4Runtime server fail its n-th write."""

from __future__ import annotations

import pytest

from sfclab.api.drift import drift
from sfclab.errors import SfclabError
from sfclab.lab import Lab
from sfclab.notebook.runtime_views import drift_output
from test_transactions import KINDS, Faults, _rows

TOPOLOGY = "topology lab\nuse leaf_spine(2, 2, stages=8)\n"
CHAINS = """chain web match udp.dport == 8080 from h1 to h4: firewall -> nat -> l3fwd
chain dns match udp.dport == 53 from h3 to h2: monitor -> qos
"""


@pytest.fixture
def lab():
    lab = Lab()
    lab.set_topology(TOPOLOGY)
    lab.add(CHAINS)
    yield lab
    lab.close()


def _armed(lab, k: int, at: int, kind: str):
    """Faults on the *k*-th switch the network pushes (its *at*-th write fails)."""
    net = lab.network
    order = list(net.program.switches)
    faults = Faults(net.target._target(order[k]).server)
    faults.arm(at, kind)
    return order, faults


def _said(holds: str) -> dict[str, str]:
    """switch -> what the drift's text says it holds."""
    out = {}
    for part in holds.removesuffix(": no chain runs").split("; "):
        verb = min(part.index(w) for w in (" hold", " run", " may") if w in part)
        for s in part[:verb].split(", "):
            assert s not in out, f"{s} said twice: {holds}"
            out[s] = part[verb + 1:]
    return out


def runs_the_chains(lab) -> None:
    net = lab.network
    assert net.pushed and drift(lab) is None and not net.holding()
    for s, t in net.target.switches.items():
        assert t.session.stranded is None and t.session.generated is \
            net.program.switches[s].generated
        assert _rows(t.session.read_entries()) == _rows(t.session.installed.values())
    for chain, egress in (("web", "h4"), ("dns", "h2")):
        assert [t.egress for t in lab.send_between(None, None, chain, 2)] == [egress] * 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k, at", [(2, 1), (2, 2), (0, 2), (3, 0)])
def test_a_failed_first_network_push_says_what_each_switch_holds(lab, k, at, kind):
    """Switch *k* of the push fails its *at*-th write (VERIFY, the swap, the entries)."""
    order, faults = _armed(lab, k, at, kind)
    view = lab.live_view(("topology",)).panels["topology"]
    with pytest.raises(SfclabError) as info:
        lab.push()
    faults.arm(None)
    failed = order[k]
    message = info.value.message
    assert message.startswith(f"{failed}: ")
    assert (f"taken back on {', '.join(order[:k])}" if k else "stopped there") in message
    net = lab.network
    assert not net.pushed and net.target.program is None
    sessions = {s: net.target.switches[s].session for s in order}
    for s in order[:k]:              # pushed, then taken back: the program, no entries
        st = sessions[s].stranded
        assert sessions[s].generated is None and st is not None and st.sure and st.clean
        assert net.target.switches[s].server.config is not None
        assert sessions[s].read_entries() == []
    for s in order[k + 1:]:          # never reached
        assert sessions[s].stranded is None and net.target.switches[s].server.config is None
    d = drift(lab)
    holds_any = k > 0 or sessions[failed].stranded is not None
    if not holds_any:
        assert d is None and "Nothing is pushed" not in view.head.value
    else:
        assert d.needs == "push" and d.command == "%sfc push" and d.added == ("web", "dns")
        said = _said(d.holds)
        assert set(said) == set(order)
        for s in order[:k]:
            assert said[s].endswith("the program of a failed first push, with no table "
                                    "entries (P4Runtime cannot remove a program)")
            assert said[s].startswith("hold")
        for s in order[k + 1:]:
            assert said[s] in ("holds no program", "hold no program")
        assert drift_output(d).text.startswith("warning: nothing is pushed: ")
        assert "Nothing is pushed: the last push failed" in view.head.value
        assert d.holds.split(": no chain runs")[0] in view.text()
        for s in order[:k]:          # %sfc tables SWITCH reads its (empty) tables, no push
            uses = lab.tables(s)
            assert uses and all(u.entries == 0 for u in uses) and not net.pushed
    lab.push()
    assert "Nothing is pushed" not in view.head.value and "Running" in view.head.value
    runs_the_chains(lab)


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_push_to_a_running_network_leaves_every_switch_as_it_was(lab, kind):
    """The network runs; pushing it again fails on its third switch: the first two run
    their programs again with their entries, and the network runs on."""
    lab.push()
    program = lab.network.program
    order, faults = _armed(lab, 2, 2, kind)
    with pytest.raises(SfclabError, match=f"^{order[2]}: .*taken back on {order[0]}, "
                                          f"{order[1]}"):
        lab.network.push()
    faults.arm(None)
    assert lab.network.program is program
    runs_the_chains(lab)


def test_switches_pushed_at_once_are_all_taken_back_when_one_fails(lab):
    """As a network of switch processes pushes (parallel): every switch but the failing
    one finished its push, and each is taken back."""
    from sfclab.targets.network.push import push_network

    order, faults = _armed(lab, 2, 2, "refusal")
    net = lab.network
    targets = {s: net.target._target(s) for s in order}
    with pytest.raises(SfclabError, match=f"^{order[2]}: .*taken back on "
                                          f"{', '.join(s for s in order if s != order[2])}"):
        push_network(targets, {s: sp.generated for s, sp in net.program.switches.items()},
                     parallel=True)
    faults.arm(None)
    for s, t in targets.items():
        assert t.session.generated is None and t.session.stranded is not None
        assert t.session.read_entries() == []
    lab.push()
    runs_the_chains(lab)


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_network_update_puts_reloaded_switches_back_with_their_registers(kind):
    """An update reloads s1 (heavy_hitter's counts in its registers) and s2, then a write
    on s3 fails: s1 and s2 run their old programs again with their entries and s1 its
    counts (before: the old program was pushed afresh, its registers at zero)."""
    from sfclab.ir.topology import line
    from sfclab.runtime.migrate import read_registers, register_names

    lab = Lab()
    try:
        lab.set_topology(line(3, stages=12))
        lab.add("chain web match tcp.dport == 80: heavy_hitter -> nat")
        lab.push()
        net = lab.network
        program, s1 = net.program, net.target.switches["s1"].session
        lab.send("web", 4)
        counts = read_registers(s1, register_names(s1, "heavy_hitter"))
        assert any(any(cells) for cells in counts.values())
        lab.add("chain web match tcp.dport == 80: heavy_hitter -> qos -> nat")
        plan = net.plan_update(lab.chains)
        assert plan.reloads() == ["s1", "s2"] and plan.switches["s3"].kind == "entries"
        faults = Faults(net.target.switches["s3"].server)
        faults.arm(0, kind)
        with pytest.raises(SfclabError, match="reloaded s1, s2 and put back"):
            lab.update(allow_reload=True)
        faults.arm(None)
        assert net.program is program and drift(lab).changed == ("web",)
        assert read_registers(s1, register_names(s1, "heavy_hitter")) == counts
        for s, t in net.target.switches.items():
            assert t.session.generated is program.switches[s].generated
            assert _rows(t.session.read_entries()) == _rows(t.session.installed.values())
            assert t.server.config.p4_device_config.decode() == \
                program.switches[s].generated.program.text
        assert all(t.egress == "h2" and t.nfs() == ["heavy_hitter", "nat"]
                   for t in lab.send_between(None, None, "web", 2))
        lab.update(allow_reload=True)
        assert drift(lab) is None and lab.send_between(None, None, "web")[0].nfs() == \
            ["heavy_hitter", "qos", "nat"]
    finally:
        lab.close()
