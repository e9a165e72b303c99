"""LiveView without a browser: every tab's content, lazy and in-place updates, clicks,
text fallback."""

from __future__ import annotations

import re

import pytest

import sfclab
import sfclab.codegen
from sfclab import Lab
from sfclab.codegen import generate
from sfclab.errors import CompileError
from sfclab.notebook import LiveView
from sfclab.notebook.graphs import SHARE_COLORS, GraphView, chain_elements
from sfclab.notebook.views import TABS, CodeView, highlight_p4, normalize_show
from sfclab.draw.style import ENDPOINT_COLORS, LAYER_COLORS
from notebook_support import sent_states
from test_editor import dummy_comm, front_end  # noqa: F401  (fixtures: a dummy comm, browser messages)

WEB = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }
"""
CROSS = "chain p: L3_SW -> FW -> NAT\nchain r: L3_SW -> NAT -> FW"
LOOP = ("chain sr { input => sr_encap => (self : l3fwd ? sr_encap.global_counter < 4); "
        "l3fwd => output; }")
P4SFC = "chain edge: FW -> NAT -> IPS -> LB -> L3fwd\nchain offloaded: FW -> NAT -> L3fwd"


def view_of(text: str, *, show=None, arch: str = "v1model", **options) -> LiveView:
    """A view of *text* with every tab brought up to date."""
    compiled = sfclab.compile(text, arch=arch, **options)
    v = LiveView(compiled, {a: generate(compiled, arch=a) for a in ("v1model", "tna")},
                 show=show)
    v.refresh()
    return v


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def select(view: LiveView, tab: str) -> None:
    """Show *tab* as a click on it in the browser does."""
    view.selected_index = view.show.index(tab)


# -- tabs ------------------------------------------------------------------------------------------

def test_all_tabs_by_default_and_a_selection():
    v = view_of(WEB)
    assert tuple(v.titles) == TABS and len(v.children) == len(TABS)
    v = view_of(WEB, show="p4, chains")
    assert v.show == ("chains", "p4") and tuple(v.titles) == ("chains", "p4")


@pytest.mark.parametrize("show, message", [
    ("irr", "unknown view 'irr'; did you mean 'ir'?"), (" , ", "no view given"),
    (["chains", "graph"], "unknown view 'graph'; views: chains, ir"),
])
def test_bad_tab_names(show, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        normalize_show(show)


def test_chains_tab_all_graphs_in_one_widget():
    v = view_of(WEB)
    graphs = v.panels["chains"].graphs
    assert [i["key"] for i in graphs.items] == ["web", "mgmt"]
    web = graphs.items[0]
    assert "match" in web["head"] and "2 service path" in web["head"]
    assert web["svg"].startswith("<svg") and 'data-node="firewall"' in web["svg"]
    nodes, edges = graphs.elements["web"]
    nodes = {n["data"]["id"]: n["data"] for n in nodes}
    edges = {e["data"]["id"]: e["data"] for e in edges}
    assert nodes["firewall"]["color"] == LAYER_COLORS[4] and nodes["firewall"]["kind"] == "nf"
    assert nodes["drop"]["color"] == ENDPOINT_COLORS["drop"] and nodes["drop"]["kind"] == "endpoint"
    assert (edges["firewall->nat"]["kind"], edges["firewall->nat"]["label"]) == ("then",
                                                                                "verdict == 0")
    assert edges["firewall->drop"]["label"] == "else"
    assert ">verdict == 0</text>" in web["svg"] and 'stroke-dasharray="6 4"' in web["svg"]


def test_loop_edges_show_their_bound():
    _, edges = chain_elements(sfclab.parse(LOOP)["sr"])
    labels = {e["data"]["id"]: (e["data"]["kind"], e["data"]["label"]) for e in edges}
    assert labels["sr_encap->sr_encap"] == ("loop", "×4")
    assert labels["sr_encap->l3fwd"] == ("exit", "done")


def test_ir_tab_colours_by_sharing_and_marks_duplicates():
    v = view_of(CROSS)
    graph = v.panels["ir"].graph
    nodes = {n["data"]["id"]: n for n in graph.nodes}
    assert nodes["l3fwd"]["data"]["color"] == SHARE_COLORS[1]
    assert nodes["l3fwd"]["data"]["chains"] == ["p", "r"]
    assert nodes["firewall"]["data"]["color"] == SHARE_COLORS[0]
    dup = next(n for n in graph.nodes if n["data"]["replica"])
    assert dup["classes"] == "replica" and "duplicate" in dup["data"]["label"]
    assert 'stroke="#d50000"' in graph.svg                      # the replica's red border
    assert "1 duplicated" in v.panels["ir"].head.value


def test_pipeline_tab_automaton_slots_and_three_pipelines():
    v = view_of(CROSS)
    p = v.panels["pipeline"]
    a = sfclab.compile(CROSS).pipeline.automaton
    assert len(p.graph.nodes) == a.n_states and len(p.graph.edges) == len(a.transitions)
    assert {e["data"]["label"] for e in p.graph.edges} == {"l3fwd", "firewall", "nat"}
    assert "0: l3fwd" in p.slots.value and "3: firewall" in p.slots.value
    table = text(p.table.value)
    assert "naive" in table and "MA-FSA ★" in table and "optimal" in table
    assert "weighted recirculations" in table and "0.5" in table


def test_pipeline_tab_draws_the_pipelines_with_each_paths_passes():
    p = view_of(CROSS).panels["pipeline"]
    svg = p.pictures.value
    assert svg.count("<svg") == 1 and "MA-FSA ★ chosen: 4 slots" in svg
    # per pipeline (naive, MA-FSA, optimal), per path: the pass of each slot it runs
    badges = [re.findall(r'fill="#fff" font-weight="bold">(\d)</text>', r) for r in
              svg.split('<g class="sfc-path-row">')[1:]]
    # naive l3fwd|firewall|nat: r runs nat in pass 0, then firewall in pass 1
    assert sorted(badges[0]) == ["0", "0", "1"] and badges[1] == ["0", "0", "0"]
    assert sorted(badges[2]) == ["0", "0", "0"] and sorted(badges[3]) == ["0", "0", "0"]
    assert "r/0" in svg and "p/0" in svg


def test_fsm_tab_passes_and_bitmaps():
    v = view_of(CROSS, pipeline="optimal")
    html = v.panels["fsm"].html.value
    assert "<b>r/0</b>" in html and "2 passes" in html
    assert "0b101" in html and "0b10" in html
    assert "state 0) -&gt; state 1" in html and "done: output" in html


def test_fsm_tab_draws_each_paths_passes_over_the_slots():
    html = view_of(CROSS, pipeline="naive").panels["fsm"].html.value
    p, r = html.split("<div class='sfc-fsm-path'")[1:]
    assert p.count('class="sfc-pass"') == 1 and "sfc-recirculate" not in p
    assert r.count('class="sfc-pass"') == 2 and r.count('class="sfc-recirculate"') == 1
    first, second = r.split('<g class="sfc-pass">')[1:]
    assert re.findall(r'fill="#111">(\w+)</text>', first) == ["l3fwd", "nat"]
    assert re.findall(r'fill="#111">(\w+)</text>', second) == ["firewall"]
    assert "pass 0  0b101" in first and "pass 1  0b10" in second


def test_placement_tab():
    v = view_of(LOOP + "\n" + CROSS, arch="tna")
    pl = v.panels["placement"]
    head, rest = pl.head.value, pl.rest.value
    assert "2 pipes × 12 stages, less sfclab's core (2 of each ingress, 1 of each egress)" in head
    assert "0.16 T" in text(rest) and "sr/0" in rest
    assert 'data-pipelet="I0"' in pl.picture.value and 'data-pipelet="E1"' in pl.picture.value
    assert " + core 2 of 12 stages" in pl.picture.value
    off = view_of(WEB).panels["placement"]
    assert "runs for <code>tna</code>" in off.head.value and off.route.layout.display == "none"


def test_placement_tab_draws_the_route_of_the_path_chosen():
    v = view_of(LOOP + "\n" + CROSS, arch="tna")
    pl = v.panels["placement"]
    rec = dict(v._compiled.placement.best.recirculations)
    assert pl.route.options[0] == "sr/0" and rec["sr/0"] == max(rec.values())  # worst first
    assert f"route of sr/0: {rec['sr/0']} recirculation" in pl.picture.value and rec["sr/0"]
    assert pl.picture.value.count('class="sfc-recirculate"') >= 1
    pl.route.value = "p/0"                             # another path: its route, redrawn
    assert f"route of p/0: {rec['p/0']} recirculation" in pl.picture.value
    # the throughput model with the placed paths marked where they are
    plot = pl.rest.value
    assert plot.count("<polyline") == 3 and 'class="sfc-mark"' in plot
    assert "Dejavu: sr/0" in plot and "0.16 T" in plot


def test_offload_tab_one_consistent_split_per_path():
    v = LiveView(sfclab.compile(P4SFC), show="offload")    # IPS has no P4: no code
    html = v.panels["offload"].html.value
    assert "runs on a server" not in html                 # the column that repeated NFs
    rows = re.findall(r"<tr>(.*?)</tr>", html)[1:]
    cells = {re.sub(r"<[^>]+>", "", r.split("</td>")[0]).strip(): r for r in rows}
    for path, nfs in (("edge/0", ["firewall", "nat", "ips", "lb", "l3fwd"]),
                      ("offloaded/0", ["firewall", "nat", "l3fwd"])):
        shown = re.findall(r">([a-z0-9_#]+)(?: ◐)?</span>", cells[path])
        assert sorted(shown) == sorted(nfs), (path, shown)      # each NF once, in one column
    columns = cells["edge/0"].split("</td>")
    assert "nat ◐" in columns[1] and "ips" in columns[2] and "lb ◐" in columns[3]
    assert "ips" not in columns[1] + columns[3]
    assert "partially offloaded" in html and "edge: nat, ips, lb" in text(html)


def test_p4_tab_both_architectures():
    compiled = sfclab.compile(WEB)
    gens = {a: generate(compiled, arch=a) for a in ("v1model", "tna")}
    v = LiveView(compiled, gens, show="p4")
    codes = v.panels["p4"].codes
    assert tuple(v.panels["p4"].tabs.titles) == ("v1model", "tna")
    assert codes["v1model"].code == gens["v1model"].program.text
    assert codes["tna"].code == ""                           # not shown yet: not filled
    v.panels["p4"].tabs.selected_index = 1
    for arch, view in codes.items():
        assert view.code == gens[arch].program.text and view.error == ""
        assert view.filename == f"sfclab_{arch}.p4" and view.title.startswith(arch)
        assert '<span class="p4-keyword">control</span>' in view.html
    failed = CompileError("TNA cannot do this", hint="use v1model")
    v.update(compiled, {"v1model": gens["v1model"], "tna": failed})
    assert codes["tna"].error == "CompileError: TNA cannot do this\nhint: use v1model"
    assert codes["tna"].code == "" and codes["v1model"].code


def test_entries_tab_shows_addresses_and_ports_as_written():
    v = view_of(WEB)
    html = v.panels["entries"].html.value
    assert html.count("<details") == len(generate(sfclab.compile(WEB)).groups())
    assert "chain:web" in html and "set_token" in html
    assert "hdr.ipv4.dst_addr = 10.0.1.0/24" in html and "hdr.tcp.dst_port = 80" in html
    assert "dmac=00:00:00:00:01:01" in html and "port=1" in html
    assert "167772" not in html and "&amp;&amp;&amp;" not in html and "dmac=257" not in html


def test_no_chains_says_what_to_do():
    v = LiveView(sfclab.compile(sfclab.ChainSet()))
    v.refresh()
    assert "%%chain" in v.panels["fsm"].html.value and "%%chain" in v.panels["chains"].note.value
    assert "%%chain" in v.panels["entries"].html.value
    v = LiveView(sfclab.compile(WEB), show="p4,entries")             # compiled, no code given
    v.refresh()
    assert "No program generated" in v.panels["entries"].html.value
    v.panels["p4"].tabs.selected_index = 1
    assert v.panels["p4"].codes["tna"].error == "no program generated for tna"


# -- lazy and in-place updates -----------------------------------------------------------------

@pytest.fixture
def generations(monkeypatch):
    """The architectures sfclab.codegen.generate is called for, in order."""
    calls: list[str] = []
    real = sfclab.codegen.generate

    def counting(compiled, *, arch=None, options=None):
        calls.append(arch or compiled.arch)
        return real(compiled, arch=arch, options=options)

    monkeypatch.setattr(sfclab.codegen, "generate", counting)
    return calls


def test_edits_refresh_only_the_tab_on_show_and_generate_code_when_opened(generations):
    lab = Lab()
    lab.add(WEB)
    v = lab.view
    assert v.selected_index == 0 and not v.panels["chains"].stale
    assert all(v.panels[n].stale for n in TABS[1:])          # not shown: not refreshed
    lab.add("chain web: firewall -> ids -> l3fwd")           # a new NF enters the set
    assert generations == []                                 # no P4 while no code tab shows
    assert "ids" in v.panels["chains"].graphs.items[0]["svg"]
    select(v, "ir")
    assert not v.panels["ir"].stale and "ids" in v.panels["ir"].graph.node_data["merged IR"]
    select(v, "p4")
    assert generations == ["v1model"] and "ids" in v.panels["p4"].codes["v1model"].code
    v.panels["p4"].tabs.selected_index = 1
    assert generations == ["v1model", "tna"]
    select(v, "entries")
    assert generations == ["v1model", "tna"]                 # cached by the Lab
    lab.add("chain web: firewall -> ids -> l3fwd")           # the same: nothing at all
    assert generations == ["v1model", "tna"]


def test_an_edit_redraws_only_the_chain_that_changed():
    lab = Lab()
    lab.add("chain a: firewall -> nat\nchain b: l2fwd -> qos\nchain c: lb -> l3fwd")
    graphs = lab.view.panels["chains"].graphs
    before = {i["key"]: i["svg"] for i in graphs.items}
    graphs.comm.messages.clear()
    lab.add("chain b: l2fwd -> ipsg -> qos")
    after = {i["key"]: i["svg"] for i in graphs.items}
    assert after["a"] is before["a"] and after["c"] is before["c"]   # not drawn again
    assert after["b"] != before["b"] and 'data-node="ipsg"' in after["b"]
    assert len(sent_states(graphs)) == 1                           # one message for the panel


def test_update_in_place_reuses_widgets():
    lab = Lab()
    lab.add(WEB)
    v = lab.view
    v.refresh()
    graphs, ir, code = v.panels["chains"].graphs, v.panels["ir"].graph, \
        v.panels["p4"].codes["v1model"]
    children = v.children
    lab.add("chain web: firewall -> l3fwd\nchain extra: nat")
    v.refresh()
    assert lab.view is v and v.children == children
    assert v.panels["chains"].graphs is graphs and v.panels["ir"].graph is ir
    assert v.panels["p4"].codes["v1model"] is code and "extra" in code.code
    assert [i["key"] for i in graphs.items] == ["web", "mgmt", "extra"]
    assert "3 chains" in v.summary
    lab.remove("mgmt")
    assert [i["key"] for i in graphs.items] == ["web", "extra"] and "mgmt" not in graphs.elements


def test_same_drawing_sends_nothing():
    g = GraphView()
    nodes, edges = chain_elements(sfclab.parse(WEB)["web"])
    assert g.show(nodes, edges)
    g.comm.messages.clear()
    assert not g.show(nodes, edges) and sent_states(g) == []
    assert g.show(*chain_elements(sfclab.parse("chain web: firewall -> lb")["web"]))
    assert len(sent_states(g)) == 1 and 'data-node="lb"' in sent_states(g)[0]["items"][0]["svg"]


def test_view_state_reaches_the_front_end():
    v = view_of(WEB, show="chains,p4")
    view = v.panels["p4"].codes["tna"]
    view.comm.messages.clear()
    view.set_code("control c() { apply { } }", title="t")
    state = sent_states(view)[0]
    assert state["code"] == "control c() { apply { } }" and "p4-keyword" in state["html"]


# -- interaction ---------------------------------------------------------------------------------

def test_clicking_a_node_shows_its_details(front_end):
    v = view_of(WEB)
    graphs = v.panels["chains"].graphs
    front_end(graphs, {"event": "click", "key": "web", "id": "firewall"})
    details = v.panels["chains"].details.value
    assert "firewall" in details and "layer 4" in details and "verdict" in details
    front_end(graphs, {"event": "click", "key": "web", "id": "nowhere"})   # ignored
    ir = v.panels["ir"]
    front_end(ir.graph, {"event": "click", "key": "merged IR", "id": "nat"})
    assert "chains web" in ir.details.value


# -- text fallback -------------------------------------------------------------------------------

def test_plain_text_is_the_compilers_summary():
    compiled = sfclab.compile(WEB)
    v = LiveView(compiled)
    bundle = v._repr_mimebundle_()
    assert bundle["text/plain"] == compiled.summary()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert repr(LiveView(show="ir,p4")) == "<LiveView ir, p4>"


def test_highlighter_escapes_and_keeps_the_text():
    code = '#include <core.p4>\n@name("x") header h_t { bit<8> a; } // a < b && c\n'
    html = highlight_p4(code)
    assert re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">") \
        .replace("&amp;", "&") == code
    assert '<span class="p4-meta">#include &lt;core.p4&gt;</span>' in html
    assert '<span class="p4-annotation">@name</span>' in html
    assert '<span class="p4-string">"x"</span>' in html
    assert '<span class="p4-type">bit</span>' in html
    assert CodeView().filename == "program.p4"
