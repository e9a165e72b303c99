"""%%topology and the network branches of %sfc (push, send, tables, trace, update, target) in a
real IPython shell: a topology cell and a chain cell show where every NF runs; packets go from
host to host; errors are located as the cell shows them and change nothing."""

from __future__ import annotations

import re

import pytest
from IPython.core.error import UsageError

from sfclab.notebook import LiveView
from sfclab.notebook.magics import SfcUsageError
from sfclab.notebook.network_views import NetworkPushSummary, NetworkSendView, SwitchTables
from sfclab.notebook.runtime_views import PushSummary
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)
from test_magics import ip, sfc  # noqa: F401  (a fresh Lab per test; displays in sfc.shown)

SMALL = "topology lab\nuse leaf_spine(2, 2, stages=8)\n"
CHAINS = """chain web match udp.dport == 80 from h1 to h4: firewall -> nat -> l3fwd
chain dns match udp.dport == 53 from h3 to h2: monitor -> qos
"""


def node_svg(svg: str, node: str) -> str:
    """The SVG of one drawn node (its ``<g data-node=…>`` element)."""
    start = svg.index(f'<g data-node="{node}"')
    depth, i = 0, start
    while True:
        i = svg.index("<", i)
        if svg.startswith("</g>", i):
            depth -= 1
            if depth == 0:
                return svg[start:i + 4]
        elif svg.startswith("<g", i):
            depth += 1
        i += 1


def drawn_nodes(svg: str) -> set[str]:
    return set(re.findall(r'data-node="([^"]+)"', svg))


def visited_links(svg: str) -> set[str]:
    return set(re.findall(r'class="sfc-link sfc-visited" data-link="([^"]+)"', svg))


def topology_tab(sfc_magics) -> object:
    view = sfc_magics.lab.live_view(("topology",))
    return view.panels["topology"]


@pytest.fixture
def net(ip, sfc):  # noqa: F811
    """A lab on a leaf-spine with two chains (cells as a user writes them)."""
    ip.run_cell_magic("topology", "", SMALL)
    ip.run_cell_magic("chain", "", CHAINS)
    yield sfc
    sfc.lab.close()


# -- %%topology --------------------------------------------------------------------------------

def test_a_topology_cell_keeps_the_network_and_shows_its_tab(ip, sfc):  # noqa: F811
    ip.run_cell_magic("topology", "", "use fat_tree(4)\n")
    topo = sfc.lab.topology
    assert topo is not None and len(topo.switches) == 20 and len(topo.hosts) == 16
    (view,) = sfc.shown
    assert isinstance(view, LiveView) and view.show == ("topology",)
    panel = view.panels["topology"]
    assert "topology fat_tree4: 20 switches, 16 hosts" in panel.head.value
    assert drawn_nodes(panel.drawing.value) == set(topo.switches) | set(topo.hosts)
    assert "No chains yet" in panel.table.value


def test_two_cells_show_where_every_nf_runs(ip, sfc):  # noqa: F811
    ip.run_cell_magic("topology", "", "use fat_tree(4, stages=8)\n")
    ip.run_cell_magic("chain", "", "chain web match udp.dport == 443 from h1 to h16: "
                                   "firewall -> nat -> lb -> l3fwd\n")
    panel = topology_tab(sfc)
    pl = sfc.lab.network.placement
    svg = panel.drawing.value
    for inst, _, node in pl.chains["web"].where:             # each NF drawn on its switch
        assert f">{inst}<" in node_svg(svg, node)
    empty = set(sfc.lab.topology.switches) - {n for _, _, n in pl.chains["web"].where}
    for node in empty:
        assert "firewall" not in node_svg(svg, node)
    view = sfc.lab.live_view(("topology",))                  # as text: the placement table
    assert view.summary.startswith("topology fat_tree4: 20 switches") and \
        "  web  h1 -> h16  " in view.summary
    table = panel.table.value
    assert "exact (ILP, HiGHS)" in table and "heuristic" in table and "★" in table
    assert "switches running NFs" in table and "h1 → h16" in table


def test_the_earlier_topology_output_updates_when_chains_come(ip, sfc):  # noqa: F811
    ip.run_cell_magic("topology", "", SMALL)
    panel = topology_tab(sfc)
    assert "firewall" not in panel.drawing.value
    ip.run_cell_magic("chain", "", CHAINS)
    assert "firewall" in panel.drawing.value and "monitor" in panel.drawing.value


def test_picking_a_chain_highlights_its_route(net):
    panel = topology_tab(net)
    assert visited_links(panel.drawing.value) == set()
    panel.pick.value = "web"
    route = net.lab.network.placement.chains["web"].route
    walk = ["h1", *route, "h4"]
    want = {f"{a}--{b}" if f"{a}--{b}" in panel.drawing.value else f"{b}--{a}"
            for a, b in zip(walk, walk[1:])}
    assert visited_links(panel.drawing.value) == want
    assert [v for _, v in panel.pick.options] == ["", "web", "dns"]


def test_a_service_path_can_be_picked(ip, sfc):  # noqa: F811
    ip.run_cell_magic("topology", "", SMALL)
    ip.run_cell_magic("chain", "", "chain web match tcp.dport == 80 from h1 to h4 {\n"
                                   "  input => firewall => (nat : drop ? firewall.verdict == 0);\n"
                                   "  nat => l3fwd => output; }\n")
    panel = topology_tab(sfc)
    values = [v for _, v in panel.pick.options]
    assert "web\nweb/0" in values and "web\nweb/1" in values
    panel.pick.value = "web\nweb/1"                         # denied: firewall only
    ran = panel.highlight().ran
    assert sorted(i for v in ran.values() for i in v) == ["firewall"]


def test_no_placement_says_why(ip, sfc):  # noqa: F811
    ip.run_cell_magic("topology", "", "use leaf_spine(2, 2, stages=4)\n")
    ip.run_cell_magic("chain", "", "chain web match tcp.dport == 80 from h1 to h4: nat\n")
    panel = topology_tab(sfc)
    assert "no placement" in panel.table.value and "room for nat (3 stages" in panel.table.value
    assert "leaf1 has 2 of 2 stages" in panel.table.value
    assert drawn_nodes(panel.drawing.value) >= {"leaf1", "spine1", "h1"}   # still drawn


@pytest.mark.parametrize("cell, where, message", [
    ("switch s1\nlink s1 -- s9\n", "<cell>:3:12:", "unknown node 's9' in a link"),
    ("use fat_tree(3)\n", "<cell>:2:14:", "k must be even"),
    ("switch s1 stages 0x\n", "<cell>:2:", "stages"),
])
def test_topology_errors_count_the_magic_line_and_change_nothing(ip, sfc, where, cell,  # noqa: F811
                                                                 message):
    ip.run_cell_magic("topology", "", SMALL)
    before = sfc.lab.topology
    sfc.shown.clear()
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("topology", "", cell)
    shown = "\n".join(e.value._render_traceback_())
    assert shown.startswith(f"TopologyError: {where}") and message in shown
    assert "Traceback" not in shown and "^" in shown
    assert sfc.lab.topology is before and sfc.shown == []


def test_topology_usage_errors(ip, sfc):  # noqa: F811
    with pytest.raises(UsageError, match="the cell is empty"):
        ip.run_cell_magic("topology", "", "  \n")
    with pytest.raises(UsageError, match="takes no options"):
        ip.run_cell_magic("topology", "--k 4", SMALL)
    assert sfc.lab.topology is None


def test_chain_endpoints_are_checked_against_the_topology_in_the_cell(net, ip):  # noqa: F811
    before = net.lab.chains
    with pytest.raises(SfcUsageError) as e:
        ip.run_cell_magic("chain", "", "chain x: nat\nchain web from h1 to h9: firewall\n")
    err = e.value.error
    assert err.location == "<cell>:3:22" and "goes to 'h9'" in err.message
    assert err.context.splitlines()[1].strip() == "^^"
    assert net.lab.chains is before


def test_a_topology_without_the_chains_hosts_warns(net, ip):  # noqa: F811
    net.shown.clear()
    ip.run_cell_magic("topology", "", "use line(2)\n")
    view, warning = net.shown
    assert "chain 'web' (to h4)" in str(warning) and "has no host or server 'h4'" in str(warning)
    assert "no placement" in view.panels["topology"].table.value


# -- running -----------------------------------------------------------------------------------

def test_push_send_tables_and_trace_on_the_network(net, ip):  # noqa: F811
    pushed = ip.run_line_magic("sfc", "push")
    assert isinstance(pushed, NetworkPushSummary)
    program = net.lab.network.program
    assert f"{sum(len(sp.generated.entries) for sp in program.switches.values())} table " \
           f"entries" in pushed.text
    for s, sp in program.switches.items():
        if sp.slots:
            assert f"{s}: NF slots {' | '.join(sp.slots)}" in pushed.text

    sent = ip.run_line_magic("sfc", "send web 3")
    assert isinstance(sent, NetworkSendView) and len(sent.traces) == 3
    assert all(t.egress == "h4" and t.nfs() == ["firewall", "nat", "l3fwd"] for t in sent.traces)
    assert sent.table.selected == 2 and len(sent.table.rows) == 3
    route = net.lab.network.placement.chains["web"].route
    assert sent.traces[0].switches() == list(route)
    svg = sent.drawing.value
    assert visited_links(svg) and all(f'<g data-node="{s}" class="sfc-visited"' in svg
                                      for s in route)
    for s in route:                                         # a row per hop, per switch
        assert f"<b>{s}</b> <small>switch</small>" in sent.hops.value
    assert "hop 1: <b>" in sent.hops.value                  # each switch's passes, one click away

    between = ip.run_line_magic("sfc", "send h3 h2 2")      # the chain from h3 to h2: dns
    assert [t.label for t in between.traces] == ["dns", "dns"]
    assert all(t.egress == "h2" for t in between.traces) and "2 delivered to h2" in \
        between.summary.value

    tables = ip.run_line_magic("sfc", f"tables {route[0]}")
    assert isinstance(tables, SwitchTables) and f"switch {route[0]}" in tables.text
    row = next(r for r in tables.text.splitlines() if r.startswith("SfcIngress.initializer"))
    assert row.split()[-2:] == ["3", "0"]                   # the 3 web packets hit it

    trace = ip.run_line_magic("sfc", "trace 4")
    assert isinstance(trace, NetworkSendView) and len(trace.traces) == 4
    assert [r["id"] for r in trace.table.rows] == [2, 3, 4, 5]


def test_send_forms_and_their_errors(net, ip):  # noqa: F811
    sent = ip.run_line_magic("sfc", "send h1 h4")           # the chain from h1 to h4
    assert sent.traces[0].label == "web"
    sent = ip.run_line_magic("sfc", "send h1 web")          # web's class from h1, to anywhere
    assert sent.traces[0].egress == "h4"
    for args, message in [("", "usage: %sfc send SRC DST"), ("web dns", "usage"),
                          ("wbe 2", "no chain 'wbe'"), ("h2 h3", "no chain runs from 'h2'")]:
        with pytest.raises(UsageError, match=message):
            ip.run_line_magic("sfc", f"send {args}")


def test_tables_on_a_network_name_a_switch(net, ip):  # noqa: F811
    with pytest.raises(UsageError, match="(?s)name a switch.*switches running chains: "):
        ip.run_line_magic("sfc", "tables")
    with pytest.raises(UsageError, match="(?s)no switch 'leaf9'.*did you mean"):
        ip.run_line_magic("sfc", "tables leaf9")


def test_trace_before_any_packet(net, ip, capsys):  # noqa: F811
    assert ip.run_line_magic("sfc", "trace") is None
    assert "no packets sent on the network yet" in capsys.readouterr().out


def test_changed_chains_show_stale_until_updated(net, ip, sfc, capsys):  # noqa: F811  # noqa: F811
    ip.run_line_magic("sfc", "push")
    ip.run_cell_magic("chain", "", "chain web match udp.dport == 80 from h1 to h4: "
                                   "firewall -> l3fwd\n")
    panel = topology_tab(net)
    assert "The chains changed since the push" in panel.head.value
    ip.run_cell_magic("chain", "", "chain new match udp.dport == 22 from h2 to h3: nat\n")
    with pytest.raises(UsageError, match="not on the network yet"):
        ip.run_line_magic("sfc", "send new")
    sfc.shown.clear()
    ip.run_line_magic("sfc", "tables leaf1")   # says first the network runs other chains
    assert "web changed; new added" in sfc.shown[0].text and "%sfc update" in sfc.shown[0].text
    ip.run_line_magic("sfc", "update")
    assert "network update: entries" in capsys.readouterr().out
    assert "changed since the push" not in panel.head.value
    sent = ip.run_line_magic("sfc", "send new")
    assert sent.traces[0].egress == "h3" and sent.traces[0].nfs() == ["nat"]
    assert ip.run_line_magic("sfc", "send web").traces[0].nfs() == ["firewall", "l3fwd"]


def test_target_on_a_network(net, ip, capsys):  # noqa: F811
    ip.run_line_magic("sfc", "target")
    assert "the embedded network" in capsys.readouterr().out
    with pytest.raises(UsageError, match="(?s)unknown network target 'modle'.*'model'"):
        ip.run_line_magic("sfc", "target modle")
    ip.run_line_magic("sfc", "target model")
    assert "nothing pushed yet" in capsys.readouterr().out


def test_topology_off_goes_back_to_one_switch(net, ip):  # noqa: F811
    ip.run_line_magic("sfc", "topology off")
    assert net.lab.topology is None
    assert isinstance(ip.run_line_magic("sfc", "push"), PushSummary)
    assert "No topology" in topology_tab(net).head.value
    with pytest.raises(UsageError, match="takes `off` or nothing"):
        ip.run_line_magic("sfc", "topology on")


def test_the_views_follow_close(net, ip):  # noqa: F811
    """Issue 22.4: after lab.close() lab 06's view still said "Running: pushed to every
    switch"."""
    panel = topology_tab(net)
    ip.run_line_magic("sfc", "push")
    assert "Running: pushed to every switch" in panel.head.value
    net.lab.close()
    assert "Running" not in panel.head.value and "changed since the push" not in panel.head.value
    assert not net.lab.network.pushed


# -- NFs written with %%nf after the %%topology cell -------------------------------------------

GATE = "control gate(inout headers_t hdr, inout sfc_meta_t sfc) {\n    apply { }\n}\n"
CLOSED = GATE.replace("apply { }", "apply { sfc.drop = 1; }")
GATED = "chain web match tcp.dport == 80 from h1 to h4: gate -> l3fwd\n"


def test_an_nf_cell_after_the_topology_cell_is_known_to_the_network(net, ip):  # noqa: F811
    """Issue: the network kept the NF catalogue of the %%topology cell, so a chain using an
    NF written later raised "NF 'gate' is not in the NF catalogue"; a redefinition before
    the push is what the switches run."""
    ip.run_cell_magic("nf", "gate", GATE)
    ip.run_cell_magic("chain", "", GATED)
    panel = topology_tab(net)
    assert "[gate]" in net.lab.network.placement.chains["web"].describe()
    assert "gate" in panel.table.value and "not in the NF catalogue" not in panel.table.value
    ip.run_cell_magic("nf", "gate", CLOSED)                 # redefined before the push
    ip.run_line_magic("sfc", "push")
    sent = ip.run_line_magic("sfc", "send web 2")
    assert all(t.dropped and t.nfs() == ["gate"] for t in sent.traces)   # the new code runs


def test_an_nf_redefined_after_the_push_says_which_switches_and_the_command(net, ip):  # noqa: F811
    """%sfc send / trace / tables say the switches run the NF's old code, which switch a
    reload touches, and the command; packets run the old code until --reload applies it."""
    ip.run_cell_magic("nf", "gate", GATE)
    ip.run_cell_magic("chain", "", GATED)
    ip.run_line_magic("sfc", "push")
    gate_at = net.lab.network.placement.chains["web"].node("gate")
    ip.run_cell_magic("nf", "gate", CLOSED)
    panel = topology_tab(net)
    assert "NF gate was redefined since the push" in panel.head.value
    assert "The chains changed" not in panel.head.value
    for command in ("send web 2", "trace", f"tables {gate_at}"):
        net.shown.clear()
        out = ip.run_line_magic("sfc", command)
        warning = net.shown[0].text
        assert warning.startswith("warning: the network still runs the NF code of the last "
                                  "push"), warning
        assert "NF gate redefined since (%%nf): the switches run its old code" in warning
        assert f"switches that differ: {gate_at} (a program reload)" in warning
        assert warning.endswith("%sfc update --reload (or %sfc push)")
        if command.startswith("send"):
            assert not any(t.dropped for t in out.traces)         # the old code
    with pytest.raises(UsageError, match=f"needs a program reload on {gate_at}"):
        ip.run_line_magic("sfc", "update")
    ip.run_line_magic("sfc", "update --reload")
    assert "redefined" not in panel.head.value
    net.shown.clear()
    sent = ip.run_line_magic("sfc", "send web 2")
    assert not net.shown and all(t.dropped for t in sent.traces)


def _changed_to(sfc_magics, ip, nfs: str):  # noqa: F811
    """Re-run web's cell with *nfs*; the warning %sfc trace shows first, and the plan."""
    ip.run_cell_magic("chain", "", f"chain web match udp.dport == 80 from h1 to h4: {nfs}\n")
    sfc_magics.shown.clear()
    ip.run_line_magic("sfc", "trace")
    return sfc_magics.shown[0].text, sfc_magics.lab.network.plan_update(sfc_magics.lab.chains)


def test_a_chain_change_says_which_switches_take_entries_and_which_a_reload(net, ip):  # noqa: F811
    ip.run_line_magic("sfc", "push")
    d, plan = _changed_to(net, ip, "firewall -> l3fwd")
    touched = [s for s, p in plan.switches.items() if p.kind != "none"]
    assert touched and plan.kind == "entries"
    assert "switches that differ: " + ", ".join(f"{s} (entries)" for s in touched) in d
    assert d.endswith("table entries can apply it: %sfc update")
    d, plan = _changed_to(net, ip, "firewall -> nat -> heavy_hitter -> l3fwd")
    assert plan.reloads() and all(f"{s} (a program reload)" in d for s in plan.reloads())
    assert d.endswith("%sfc update --reload (or %sfc push)")
    ip.run_line_magic("sfc", "update --reload")
    net.shown.clear()
    ip.run_line_magic("sfc", "trace")
    assert not net.shown


def test_a_topology_cell_rerun_with_a_switch_and_link_gone_says_the_network_stopped(ip, sfc,  # noqa: F811
                                                                                    capsys):
    three = ("switch s1, s2, s3\nhost h1 at s1\nhost h2 at s3\n"
             "link s1 -- s2\nlink s2 -- s3\n")
    ip.run_cell_magic("topology", "", three)
    ip.run_cell_magic("chain", "", "chain web match tcp.dport == 80 from h1 to h2: "
                                   "heavy_hitter -> nat\n")
    ip.run_line_magic("sfc", "push")
    panel = topology_tab(sfc)
    assert "Running" in panel.head.value
    capsys.readouterr()
    ip.run_cell_magic("topology", "", "switch s1, s3\nhost h1 at s1\nhost h2 at s3\n"
                                      "link s1 -- s3\n")
    said = capsys.readouterr().out
    assert "the topology changed (switch s2 removed; link s1 -- s2 removed; link s2 -- s3 " \
           "removed; link s1 -- s3 added): the network that ran is stopped" in said
    assert not sfc.lab.network.pushed and "Running" not in panel.head.value
    assert "The topology changed since the push (switch s2 removed;" in panel.head.value
    assert "s2" not in drawn_nodes(panel.drawing.value)
    assert "s2" not in sfc.lab.network.placement.chains["web"].route
    ip.run_cell_magic("topology", "", three.replace("h2 at s3", "h2 at s2"))   # still stopped
    assert "host h2 moved" in panel.head.value and "switch s2 removed" not in panel.head.value
    sent = ip.run_line_magic("sfc", "send web")                 # pushes the new network
    assert sent.traces[0].egress == "h2" and sfc.lab.network.pushed
    assert "changed since the push" not in panel.head.value and "Running" in panel.head.value


def test_an_update_that_moves_a_stateful_nf_says_its_registers_go_with_it(ip, sfc,  # noqa: F811
                                                                          capsys):
    """heavy_hitter counts web's packets on s1; web re-run as nat -> heavy_hitter places it
    on s3: %sfc trace warns that its registers move with it, %sfc update --reload says it
    carried them, and s3's cells are those s1 counted."""
    from sfclab.runtime.migrate import read_registers, register_names

    ip.run_cell_magic("topology", "", "use line(3, stages=7)\n")
    ip.run_cell_magic("chain", "", "chain web match tcp.dport == 80: heavy_hitter -> nat\n")
    ip.run_line_magic("sfc", "push")
    ip.run_line_magic("sfc", "send web 4")
    switches = sfc.lab.network.target.switches

    def cells(s):
        session = switches[s].session
        return {n.rsplit(".", 1)[1]: v for n, v in
                read_registers(session, register_names(session, "heavy_hitter")).items()}

    counted = cells("s1")
    assert any(any(v) for v in counted.values())
    ip.run_cell_magic("chain", "", "chain web match tcp.dport == 80: nat -> heavy_hitter\n")
    sfc.shown.clear()
    ip.run_line_magic("sfc", "trace")
    assert "web's heavy_hitter moves s1 -> s3 (its registers move with it: 3 registers, " \
           "3072 cells)" in sfc.shown[0].text
    capsys.readouterr()
    ip.run_line_magic("sfc", "update --reload")
    out = capsys.readouterr().out
    assert "  web's heavy_hitter moves s1 -> s3 (carried its registers: 3 registers, 3072 " \
           "cells)" in out
    assert cells("s3") == counted
    sfc.lab.close()
