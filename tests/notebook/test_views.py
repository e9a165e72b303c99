"""LiveView without a browser: every tab's content, in-place updates, clicks, text fallback."""

from __future__ import annotations

import re

import ipycytoscape
import pytest

import sfclab
from sfclab import Lab
from sfclab.codegen import generate
from sfclab.errors import CompileError
from sfclab.notebook import LiveView
from sfclab.notebook.editor import ENDPOINT_COLORS, LAYER_COLORS
from sfclab.notebook.graphs import SHARE_COLORS, chain_elements, sync_graph
from sfclab.notebook.views import TABS, CodeView, highlight_p4, normalize_show
from test_editor import dummy_comm, front_end  # noqa: F401  (a dummy comm; browser messages)

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


def view_of(text: str, *, show=None, arch: str = "v1model", **options) -> LiveView:
    compiled = sfclab.compile(text, arch=arch, **options)
    return LiveView(compiled, {a: generate(compiled, arch=a) for a in ("v1model", "tna")},
                    show=show)


def data(graph, kind: str = "nodes") -> dict[str, dict]:
    return {w.data["id"]: dict(w.data) for w in getattr(graph.graph, kind)}


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


# -- tabs ------------------------------------------------------------------------------------------

def test_all_tabs_by_default_and_a_selection():
    v = view_of(WEB)
    assert tuple(v.titles) == TABS and len(v.children) == len(TABS)
    v = view_of(WEB, show="p4, chains")
    assert v.show == ("chains", "p4") and tuple(v.titles) == ("chains", "p4")
    assert v.needs_code and not LiveView(show="ir").needs_code


@pytest.mark.parametrize("show, message", [
    ("irr", "unknown view 'irr'; did you mean 'ir'?"), (" , ", "no view given"),
    (["chains", "graph"], "unknown view 'graph'; views: chains, ir"),
])
def test_bad_tab_names(show, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        normalize_show(show)


def test_chains_tab_one_graph_per_chain():
    v = view_of(WEB)
    panel = v.panels["chains"]
    assert list(panel.items) == ["web", "mgmt"]
    box, head, graph = panel.items["web"]
    assert isinstance(graph, ipycytoscape.CytoscapeWidget)
    assert graph.cytoscape_layout["name"] == "dagre"
    assert "match" in head.value and "2 service path" in head.value
    nodes, edges = data(graph), data(graph, "edges")
    assert nodes["firewall"]["color"] == LAYER_COLORS[4] and nodes["firewall"]["kind"] == "nf"
    assert nodes["drop"]["color"] == ENDPOINT_COLORS["drop"] and nodes["drop"]["kind"] == "endpoint"
    assert (edges["firewall->nat"]["kind"], edges["firewall->nat"]["label"]) == ("then",
                                                                                "verdict == 0")
    assert edges["firewall->drop"]["label"] == "else"
    assert panel.box.children[1] is box


def test_loop_edges_show_their_bound():
    _, edges = chain_elements(sfclab.parse(LOOP)["sr"])
    labels = {e["data"]["id"]: (e["data"]["kind"], e["data"]["label"]) for e in edges}
    assert labels["sr_encap->sr_encap"] == ("loop", "×4")
    assert labels["sr_encap->l3fwd"] == ("exit", "done")


def test_ir_tab_colours_by_sharing_and_marks_duplicates():
    v = view_of(CROSS)
    nodes = data(v.panels["ir"].graph)
    assert nodes["l3fwd"]["color"] == SHARE_COLORS[1] and nodes["l3fwd"]["chains"] == ["p", "r"]
    assert nodes["firewall"]["color"] == SHARE_COLORS[0]
    dup = next(w for w in v.panels["ir"].graph.graph.nodes if w.data["replica"])
    assert dup.classes == "replica" and "duplicate" in dup.data["label"]
    assert "1 duplicated" in v.panels["ir"].head.value


def test_pipeline_tab_automaton_slots_and_three_pipelines():
    v = view_of(CROSS)
    p = v.panels["pipeline"]
    compiled = sfclab.compile(CROSS)
    a = compiled.pipeline.automaton
    assert len(p.graph.graph.nodes) == a.n_states and len(p.graph.graph.edges) == len(a.transitions)
    assert {e.data["label"] for e in p.graph.graph.edges} == {"l3fwd", "firewall", "nat"}
    assert "0: l3fwd" in p.slots.value and "3: firewall" in p.slots.value
    table = text(p.table.value)
    assert "naive" in table and "MA-FSA ★" in table and "optimal" in table
    assert "weighted recirculations" in table and "0.5" in table


def test_fsm_tab_passes_and_bitmaps():
    v = view_of(CROSS, pipeline="optimal")
    html = v.panels["fsm"].html.value
    assert "<b>r/0</b>" in html and "2 passes" in html
    assert "0b101" in html and "0b10" in html
    assert "state 0) -&gt; state 1" in html and "done: output" in html


def test_placement_tab():
    v = view_of(LOOP + "\n" + CROSS, arch="tna")
    html = v.panels["placement"].html.value
    assert "2 pipes × 12 stages" in html and "ingress" in html and "egress" in html
    assert "0.16 T" in text(html) and "sr/0" in html
    assert "runs for <code>tna</code>" in view_of(WEB).panels["placement"].html.value


def test_offload_tab():
    v = view_of(WEB)
    html = v.panels["offload"].html.value
    assert "pre-server" in html and "post-server" in html and "web/0" in html
    assert "web: nat, lb" in text(html)


def test_p4_tab_both_architectures():
    compiled = sfclab.compile(WEB)
    gens = {a: generate(compiled, arch=a) for a in ("v1model", "tna")}
    v = LiveView(compiled, gens, show="p4")
    codes = v.panels["p4"].codes
    assert tuple(v.panels["p4"].tabs.titles) == ("v1model", "tna")
    for arch, view in codes.items():
        assert view.code == gens[arch].program.text and view.error == ""
        assert view.filename == f"sfclab_{arch}.p4" and view.title.startswith(arch)
        assert '<span class="p4-keyword">control</span>' in view.html
    failed = CompileError("TNA cannot do this", hint="use v1model")
    v.update(compiled, {"v1model": gens["v1model"], "tna": failed})
    assert codes["tna"].error == "CompileError: TNA cannot do this\nhint: use v1model"
    assert codes["tna"].code == "" and codes["v1model"].code


def test_entries_tab_a_table_per_group():
    v = view_of(WEB)
    html = v.panels["entries"].html.value
    assert html.count("<details") == len(generate(sfclab.compile(WEB)).groups())
    assert "chain:web" in html and "set_token" in html


def test_no_chains_says_what_to_do():
    v = LiveView(sfclab.compile(sfclab.ChainSet()))
    assert "%%chain" in v.panels["fsm"].html.value and "%%chain" in v.panels["chains"].note.value
    assert "%%chain" in v.panels["entries"].html.value
    v = LiveView(sfclab.compile(WEB), show="p4,entries")             # compiled, no code given
    assert "No program generated" in v.panels["entries"].html.value
    assert v.panels["p4"].codes["tna"].error == "no program generated for tna"


# -- in-place updates ------------------------------------------------------------------------------

def test_update_in_place_reuses_widgets():
    lab = Lab()
    lab.add(WEB)
    v = lab.view
    chains = v.panels["chains"]
    _, _, web_graph = chains.items["web"]
    fw_node = next(w for w in web_graph.graph.nodes if w.data["id"] == "firewall")
    _, _, mgmt_graph = chains.items["mgmt"]
    ir, code = v.panels["ir"].graph, v.panels["p4"].codes["v1model"]
    children = v.children

    lab.add("chain web: firewall -> l3fwd\nchain extra: nat")
    assert lab.view is v and v.children == children
    assert chains.items["web"][2] is web_graph and v.panels["ir"].graph is ir
    assert v.panels["p4"].codes["v1model"] is code and "extra" in code.code
    assert set(data(web_graph)) == {"input", "firewall", "l3fwd", "output"}
    assert fw_node.comm is None                  # new elements: the old ones are closed
    assert list(chains.items) == ["web", "mgmt", "extra"] and "3 chains" in v.summary

    lab.remove("mgmt")
    assert "mgmt" not in chains.items and mgmt_graph.comm is None      # closed, not leaked
    assert [b for b in chains.box.children[1:-1]] == [chains.items[n][0] for n in ("web", "extra")]


def test_same_elements_new_data_keep_their_widgets():
    lab = Lab()
    lab.add("chain a: firewall -> nat")
    ir = lab.view.panels["ir"].graph
    before = list(ir.graph.nodes)
    ir.comm.messages.clear()
    lab.add("chain b: firewall -> nat")
    assert list(ir.graph.nodes) == before and before[0].comm is not None
    assert {"method": "custom", "content": {"name": "layout"}} in \
        [m[1]["data"] for m in ir.comm.messages]              # new labels: lay out again
    assert [w.data["chains"] for w in before] == [["a", "b"], ["a", "b"]]
    assert before[0].data["color"] == SHARE_COLORS[1]


def test_sync_graph_empties_then_refills_on_new_elements():
    g = ipycytoscape.CytoscapeWidget()
    nodes, edges = chain_elements(sfclab.parse(WEB)["web"])
    assert sync_graph(g, nodes, edges)
    assert not sync_graph(g, nodes, edges)               # nothing changed: nothing sent
    assert all("directed" in e.classes for e in g.graph.edges)
    assert set(g.graph._adj["firewall"]) == {"nat", "drop"}
    g.graph.comm.messages.clear()
    assert sync_graph(g, *chain_elements(sfclab.parse("chain web: firewall -> lb")["web"]))
    states = [m[1]["data"]["state"] for m in g.graph.comm.messages
              if m[1]["data"]["method"] == "update"]
    assert states[0]["nodes"] == [] and states[0]["edges"] == []   # first empty, then refill
    assert len(states[1]["nodes"]) == 4 and len(states[1]["edges"]) == 3


def test_view_state_reaches_the_front_end():
    v = view_of(WEB, show="chains,p4")
    view = v.panels["p4"].codes["tna"]
    view.comm.messages.clear()
    view.set_code("control c() { apply { } }", title="t")
    sent = [m[1]["data"] for m in view.comm.messages]
    state = next(d["state"] for d in sent if d.get("method") == "update")
    assert state["code"] == "control c() { apply { } }" and "p4-keyword" in state["html"]


# -- interaction ---------------------------------------------------------------------------------

def test_clicking_a_node_shows_its_details(front_end):
    v = view_of(WEB)
    _, _, graph = v.panels["chains"].items["web"]
    graph.on("node", "click", lambda d: None)            # handlers stack: ours stays
    front_end(graph, {"event": "click", "widget": "node",
                      "data": {"data": {"id": "firewall", "nf": "firewall"}}})
    details = v.panels["chains"].details.value
    assert "firewall" in details and "layer 4" in details and "verdict" in details
    ir = v.panels["ir"]
    front_end(ir.graph, {"event": "click", "widget": "node",
                         "data": {"data": {"id": "nat", "nf": "nat", "chains": ["web"]}}})
    assert "chains web" in ir.details.value


def test_showing_a_tab_lays_its_graphs_out_again():
    v = view_of(WEB)
    graph = v.panels["ir"].graph
    graph.comm.messages.clear()
    v.selected_index = TABS.index("ir")
    assert {"method": "custom", "content": {"name": "layout"}} in \
        [m[1]["data"] for m in graph.comm.messages]


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
