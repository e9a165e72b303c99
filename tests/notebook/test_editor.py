"""ChainEditor without a browser: edits -> chain text -> ChainSet, text -> drawing, errors, undo."""

from __future__ import annotations

import asyncio

import pytest

import sfclab
from sfclab.errors import ChainValidationError
from sfclab.notebook import ChainEditor, EditorChange
from sfclab.notebook.editor import LAYER_COLORS, check_drawing, layered_positions
from sfclab.notebook.editor_layout import NODE_HEIGHT, in_view

# -- a dummy comm, as in ipywidgets' own tests: widgets never talk to a kernel -------------------


class DummyComm:
    """Records what a widget sends; never talks to a kernel."""

    comm_id = "dummy-comm"
    kernel = "Truthy"

    def __init__(self, *args, **kwargs) -> None:
        self.messages: list[tuple] = []

    def open(self, *args, **kwargs) -> None:
        pass

    def on_msg(self, *args, **kwargs) -> None:
        pass

    def send(self, *args, **kwargs) -> None:
        self.messages.append((args, kwargs))

    def close(self, *args, **kwargs) -> None:
        pass


@pytest.fixture(autouse=True)
def dummy_comm(monkeypatch):
    import comm

    monkeypatch.setattr(comm, "create_comm", lambda **kw: DummyComm())
    yield


@pytest.fixture
def front_end():
    """``front_end(widget, content)`` delivers a custom message as the browser would;
    ``front_end(widget, state=...)`` a trait update from the browser."""

    def deliver(widget, content: dict | None = None, *, state: dict | None = None) -> None:
        if state is not None:
            data = {"method": "update", "state": state, "buffer_paths": []}
        else:
            data = {"method": "custom", "content": content}
        widget._handle_msg({"content": {"data": data}, "buffers": []})

    return deliver

WEB = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }
"""
LOOP = "chain sr { input => sr_encap => (self : l3fwd ? sr_encap.global_counter < 4); l3fwd => output; }"
CASES = ("chain mb { input => classifier => (1@nat : 2@lb : 3@lb # classifier.class_id); "
         "nat => output; lb => output; }")


def ids(items):
    return sorted(i["id"] for i in items)


def edge(ed, eid):
    return next(e for e in ed.edges if e["id"] == eid)


def linear(ed: ChainEditor, *nfs: str) -> None:
    """Draw input -> nfs -> output through the Python API."""
    prev = "input"
    for nf in nfs:
        n = ed.add_nf(nf)
        ed.connect(prev, n)
        prev = n
    ed.connect(prev, "output")


# -- text -> drawing ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, name", [(WEB, "web"), (WEB, "mgmt"), (LOOP, "sr"), (CASES, "mb")])
def test_text_to_drawing_and_back_is_the_same_chain(text, name):
    ed = ChainEditor.from_text(text, chain_name=name)
    assert ed.errors == [] and ed.valid
    assert ed.text == text  # loading keeps the user's text as written
    assert ed.commit()  # ... and writing the drawing back gives the same chains
    assert sfclab.parse(ed.text) == sfclab.parse(text)
    assert ed.chain == sfclab.parse(text)[name]


def test_drawing_of_web():
    ed = ChainEditor.from_text(WEB)
    assert ed.chain_name == "web"
    assert ids(ed.nodes) == ["drop", "firewall", "input", "l3fwd", "lb", "nat", "output"]
    fw = next(n for n in ed.nodes if n["id"] == "firewall")
    assert (fw["kind"], fw["nf"], fw["layer"], fw["color"]) == ("nf", "firewall", 4, LAYER_COLORS[4])
    assert next(n for n in ed.nodes if n["id"] == "drop")["kind"] == "endpoint"
    then, other = edge(ed, "firewall->nat"), edge(ed, "firewall->drop")
    assert (then["kind"], then["field"], then["op"], then["value"]) == ("then", "firewall.verdict", "==", 0)
    assert then["label"] == "verdict == 0" and other["kind"] == "else"
    xs = {n["id"]: n["x"] for n in ed.nodes}
    assert xs["input"] < xs["firewall"] < xs["nat"] < xs["lb"] < xs["l3fwd"] <= xs["output"]


def test_loop_and_case_edges_carry_bound_and_values():
    ed = ChainEditor.from_text(LOOP)
    loop = edge(ed, "sr_encap->sr_encap")
    assert (loop["kind"], loop["bound"], loop["label"]) == ("loop", 4, "×4")
    assert edge(ed, "sr_encap->l3fwd")["kind"] == "exit"
    ed = ChainEditor.from_text(CASES)
    assert edge(ed, "classifier->lb")["cases"] == [2, 3]
    assert edge(ed, "classifier->nat")["field"] == "classifier.class_id"


def test_setting_text_redraws_and_keeps_positions():
    ed = ChainEditor.from_text("chain c: firewall -> nat")
    ed.move({"firewall": (11, 22)})
    ed.text = "chain c: firewall -> lb"
    assert ids(ed.nodes) == ["firewall", "input", "lb", "output"]
    assert next(n for n in ed.nodes if n["id"] == "firewall")[("x")] == 11


def test_bad_text_is_an_error_and_keeps_the_drawing():
    ed = ChainEditor.from_text("chain c: firewall -> nat")
    before = ed.nodes
    ed.text = "chain c { input => firewal => output; }"
    assert ed.nodes == before and not ed.valid
    (err,) = ed.errors
    assert err["kind"] == "text" and "firewal" in err["message"] and "firewall" in err["hint"]
    assert (err["line"], err["column"]) == (1, 20)
    with pytest.raises(ChainValidationError, match="unknown NF"):
        ed.chains


def test_multiple_chains_switch_and_keep_the_others():
    ed = ChainEditor.from_text(WEB, chain_name="mgmt")
    assert ids(ed.nodes) == ["input", "l2fwd", "output"]
    ed.add_nf("monitor")
    ed.remove("l2fwd->output")
    ed.connect("l2fwd", "monitor")
    ed.connect("monitor", "output")
    assert ed.chains.names() == ["web", "mgmt"]  # order kept, web untouched
    assert ed.chains["web"] == sfclab.parse(WEB)["web"]
    assert [str(p) for p in ed.chains["mgmt"].paths()] == ["mgmt/0 [1]: input -> l2fwd -> monitor -> output"]
    ed.chain_name = "web"  # draw the other chain
    assert "firewall" in ids(ed.nodes)
    ed.chain_name = "web2"  # a new name renames the drawn chain
    assert ed.chains.names() == ["web2", "mgmt"]


# -- drawing -> text (Python API) -----------------------------------------------------------------

def test_empty_editor_says_what_to_do():
    ed = ChainEditor(chain_name="fresh")
    assert ids(ed.nodes) == ["input", "output"]
    assert ed.errors[0]["message"] == "the chain has no NF"
    assert "palette" in ed.errors[0]["hint"] and ed.text == "chain fresh {\n}"


def test_draw_a_chain():
    ed = ChainEditor(chain_name="web")
    linear(ed, "FW", "nat", "l3fwd")
    assert ed.errors == []
    assert ed.text == ("chain web {\n    input => firewall;\n    firewall => nat;\n"
                       "    nat => l3fwd;\n    l3fwd => output;\n}")
    assert [str(p) for p in ed.chains.paths()] == ["web/0 [1]: input -> firewall -> nat -> l3fwd -> output"]


def test_second_instance_gets_a_serial_number():
    ed = ChainEditor()
    assert [ed.add_nf("nat"), ed.add_nf("NAT"), ed.add_nf("output")] == ["nat", "nat#2", "output"]


def test_branch_then_makes_the_other_edge_else():
    ed = ChainEditor(chain_name="b")
    linear(ed, "firewall", "nat")
    ed.connect("firewall", "drop") if "drop" in ids(ed.nodes) else None
    ed.add_nf("drop")
    ed.connect("firewall", "drop")
    assert "nothing to choose" in ed.errors[0]["message"]
    assert sorted(ed.errors[0]["ids"]) == ["firewall->drop", "firewall->nat"]
    ed.set_edge("firewall->nat", "then", value=0)
    assert ed.errors == [] and edge(ed, "firewall->drop")["kind"] == "else"
    assert "firewall => (nat : drop ? firewall.verdict == 0);" in ed.text
    (p0, p1) = ed.chains.paths()
    assert p0.terminal == "output" and p1.terminal == "drop"


def test_case_edges_are_numbered():
    ed = ChainEditor(chain_name="m")
    for nf in ("classifier", "nat", "lb"):
        ed.add_nf(nf)
    for u, v in [("input", "classifier"), ("classifier", "nat"), ("classifier", "lb"),
                 ("nat", "output"), ("lb", "output")]:
        ed.connect(u, v)
    ed.set_edge("classifier->lb", "case", field="classifier.class_id", cases=["2", "7"])
    assert edge(ed, "classifier->nat")["cases"] == [1]
    assert "(1@nat : 2@lb : 7@lb # classifier.class_id)" in ed.text and ed.valid


def test_self_loop_and_its_bound():
    ed = ChainEditor(chain_name="sr")
    linear(ed, "sr_encap", "l3fwd")
    assert ed.connect("sr_encap", "sr_encap") == "sr_encap->sr_encap"  # a self edge is a loop
    assert edge(ed, "sr_encap->sr_encap")["bound"] == 3 and ed.valid
    ed.set_edge("sr_encap->sr_encap", "loop", bound=1)
    assert ed.errors[0]["ids"] == ["sr_encap->sr_encap"] and "bound" in ed.errors[0]["message"]
    ed.set_edge("sr_encap->sr_encap", "loop", bound=5)
    assert ed.chain.paths()[0].nodes.count("sr_encap") == 5


def test_unknown_field_is_pinned_on_the_branch_edges():
    ed = ChainEditor(chain_name="b")
    linear(ed, "firewall", "nat")
    ed.add_nf("drop")
    ed.connect("firewall", "drop")
    ed.set_edge("firewall->nat", "then", field="firewall.verdikt")
    (err,) = ed.errors
    assert err["kind"] == "edge" and sorted(err["ids"]) == ["firewall->drop", "firewall->nat"]
    assert "verdikt" in err["message"] and "verdict" in err["hint"]


def test_cycle_is_pinned_on_the_edge_that_closes_it():
    ed = ChainEditor(chain_name="c")
    for nf in ("firewall", "nat", "lb"):
        ed.add_nf(nf)
    for u, v in [("input", "firewall"), ("firewall", "nat"), ("nat", "output"), ("nat", "lb"),
                 ("lb", "firewall")]:
        ed.connect(u, v)
    ed.set_edge("nat->lb", "then")
    (err,) = ed.errors
    assert err["ids"] == ["lb->firewall"] and "cycle" in err["message"]


def test_loop_must_go_back():
    ed = ChainEditor(chain_name="c")
    linear(ed, "firewall", "nat", "lb")
    ed.connect("firewall", "lb", "loop", bound=3)
    (err,) = ed.errors
    assert err["ids"] == ["firewall->lb"] and "does not come before it" in err["message"]
    ed.remove("firewall->lb")
    ed.connect("lb", "firewall", "loop", bound=3)  # back to an NF before it: fine
    assert ed.valid
    assert "lb => (firewall : output ? lb.global_counter < 3);" in ed.text
    assert ed.chain.paths()[0].nodes == ("firewall", "nat", "lb") * 3


def test_invalid_drawing_marks_nodes_and_edges():
    ed = ChainEditor(chain_name="c")
    linear(ed, "firewall")
    ed.add_nf("nat")
    ed.connect("output", "nat")
    by_msg = {e["message"]: e for e in ed.errors}
    assert by_msg["'output' is an end point: nothing can follow it"]["ids"] == ["output->nat"]
    assert by_msg["'nat' leads nowhere: packets stop after it"]["ids"] == ["nat"]
    assert not ed.valid


def test_remove_node_removes_its_edges_but_input_output_stay():
    ed = ChainEditor(chain_name="c")
    linear(ed, "firewall", "nat")
    ed.remove("nat", "input", "output")
    assert ids(ed.nodes) == ["firewall", "input", "output"]
    assert ids(ed.edges) == ["input->firewall"]


def test_undo_and_redo():
    ed = ChainEditor(chain_name="c")
    linear(ed, "firewall", "nat")
    good = ed.text
    ed.remove("nat")
    assert not ed.valid and ed.can_undo
    assert ed.undo() and ed.text == good and ed.valid and ed.can_redo
    assert ed.redo() and "nat" not in ids(ed.nodes)
    ed.undo()
    ed.text = "chain c: lb"  # a text edit is undoable too
    assert ed.undo() and ed.text == good
    while ed.undo():
        pass
    assert ids(ed.nodes) == ["input", "output"] and not ed.can_undo


def drawing(ed: ChainEditor) -> tuple:
    """What a person sees: nodes with their places, edges with their kinds, the chains."""
    return (sorted((n["id"], n["x"], n["y"]) for n in ed.nodes),
            sorted((e["id"], e["kind"], e["field"], e["value"], tuple(e["cases"]), e["bound"])
                   for e in ed.edges), ed.chain_name,
            sfclab.lang.format_chains(ed.chains) if ed.valid else ed.text)


GESTURES = {
    "move": lambda ed: ed.move({"nat": (400.0, 250.0)}),
    "move two": lambda ed: ed.move({"nat": (400.0, 250.0), "firewall": (5.0, 6.0)}),
    "tidy": lambda ed: (ed.move({"nat": (999.0, 999.0)}), ed.tidy()),
    "add": lambda ed: ed.add_nf("lb"),
    "add at a point": lambda ed: ed.add_nf("lb", x=300, y=300),
    "delete node": lambda ed: ed.remove("nat"),
    "delete edge": lambda ed: ed.remove("firewall->nat"),
    "connect": lambda ed: ed.connect("firewall", "drop"),
    "edge kind": lambda ed: ed.set_edge("firewall->drop", "case", cases=[1]),
    "branch": lambda ed: ed.set_edge("firewall->drop", "then", field="firewall.verdict",
                                      value=1),
    "text": lambda ed: setattr(ed, "text", "chain c: lb -> l3fwd"),
    "rename": lambda ed: setattr(ed, "chain_name", "d"),
}


@pytest.mark.parametrize("gesture", GESTURES)
def test_undo_and_redo_take_back_exactly_the_last_gesture(gesture):
    ed = ChainEditor(chain_name="c")
    linear(ed, "firewall", "nat")
    ed.add_nf("drop")
    if "kind" in gesture or "branch" in gesture:
        ed.connect("firewall", "drop")
    ed.move({"firewall": (210.0, 80.0)})
    before = drawing(ed)
    steps = len(ed._history)
    GESTURES[gesture](ed)
    after = drawing(ed)
    assert after != before
    for _ in range(len(ed._history) - steps):
        assert ed.undo()
    assert drawing(ed) == before and ed.can_redo
    while ed.redo():
        pass
    assert drawing(ed) == after
    assert ed.undo()  # and the gesture before it is still there to undo
    ed.undo()
    assert drawing(ed) != after


def test_undo_after_moving_a_new_node_moves_it_back():
    ed = ChainEditor(chain_name="c")
    nat = ed.add_nf("nat")
    start = next((n["x"], n["y"]) for n in ed.nodes if n["id"] == nat)
    ed.move({nat: (333.0, 222.0)})
    assert ed.undo()
    assert next((n["x"], n["y"]) for n in ed.nodes if n["id"] == nat) == start
    assert ed.redo()
    assert next((n["x"], n["y"]) for n in ed.nodes if n["id"] == nat) == (333.0, 222.0)
    ed.undo()
    assert ed.undo() and nat not in ids(ed.nodes)


def test_a_gesture_that_changes_nothing_is_no_undo_step(front_end):
    ed = ChainEditor(chain_name="c", debounce=0)
    linear(ed, "firewall")
    steps = len(ed._history)
    fw = next(n for n in ed.nodes if n["id"] == "firewall")
    ed.move({"firewall": (fw["x"], fw["y"])})  # a click on a node: dragfree at the same place
    ed.set_edge("firewall->output", "seq")  # the edge menu applied as it was
    ed.connect("input", "firewall")  # already there
    ed.remove("input")  # stays
    assert len(ed._history) == steps


def test_front_end_move_is_undone_as_a_move(front_end):
    ed = ChainEditor(chain_name="c", debounce=0)
    front_end(ed, {"event": "add_node", "nf": "nat", "view": [0, 0, 800, 400]})
    front_end(ed, {"event": "move", "positions": {"nat": [500, 300]}})
    front_end(ed, {"event": "undo"})
    assert "nat" in ids(ed.nodes)
    assert next(n for n in ed.nodes if n["id"] == "nat")["y"] != 300


def boxes_overlap(a, b) -> bool:
    return abs(a["x"] - b["x"]) < (a["width"] + b["width"]) / 2 \
        and abs(a["y"] - b["y"]) < NODE_HEIGHT


def assert_apart(nodes) -> None:
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            assert not boxes_overlap(a, b), f"{a['id']} is drawn over {b['id']}"


def test_palette_clicks_land_on_free_visible_spots(front_end):
    ed = ChainEditor(chain_name="c", debounce=0)
    view = [-40.0, -20.0, 760.0, 330.0]  # what the canvas shows (node coordinates)
    for nf in ["firewall", "nat", "lb", "l3fwd", "ids", "stateful_firewall", "qos", "dpi",
               "monitor", "router", "nat", "nat"]:
        front_end(ed, {"event": "add_node", "nf": nf, "view": view})
    assert ed.viewport == view and len(ed.nodes) == 14
    for n in ed.nodes:
        assert in_view(n["x"], n["y"], view, n["width"]), f"{n['id']} is outside the view"
    assert_apart(ed.nodes)


def test_palette_click_next_to_the_right_edge_stays_in_view(front_end):
    """The issue's case: the last NF sits near the right edge of what is shown."""
    ed = ChainEditor.from_text("chain c: firewall -> nat -> lb -> l3fwd", debounce=0)
    xs = [n["x"] for n in ed.nodes]
    view = [min(xs) - 60, 0.0, max(xs) + 50, 300.0]
    front_end(ed, {"event": "add_node", "nf": "ids", "view": view})
    ids_node = next(n for n in ed.nodes if n["id"] == "ids")
    assert in_view(ids_node["x"], ids_node["y"], view, ids_node["width"])
    assert_apart(ed.nodes)


def test_nodes_from_python_and_text_land_apart():
    ed = ChainEditor.from_text("chain c: firewall -> nat")
    ed.text = "chain c: firewall -> nat -> l3fwd"  # l3fwd's fresh place is output's place
    assert_apart(ed.nodes)
    ed.text = "chain c { input => firewall => (nat : lb ? firewall.verdict == 0); " \
              "nat => l3fwd => output; lb => l3fwd; }"
    assert_apart(ed.nodes)
    for nf in ["ids", "ids", "qos", "dpi", "router"]:  # Python, no view known
        ed.add_nf(nf)
    assert_apart(ed.nodes)
    ed.viewport = [0.0, 0.0, 900.0, 400.0]
    n = ed.add_nf("monitor")
    m = next(x for x in ed.nodes if x["id"] == n)
    assert in_view(m["x"], m["y"], ed.viewport, m["width"])
    assert_apart(ed.nodes)


def test_on_change_callbacks():
    ed = ChainEditor(chain_name="c")
    seen: list[EditorChange] = []
    ed.on_change(seen.append)
    linear(ed, "firewall")
    assert seen[-1].chains is not None and seen[-1].errors == ()
    assert seen[-1].chains.names() == ["c"]
    ed.add_nf("nat")
    assert seen[-1].chains is None and seen[-1].errors[0]["ids"] == ["nat"]
    n = len(seen)
    ed.move({"nat": (1, 2)})  # moving is not an edit
    ed.on_change(seen.append, remove=True)
    ed.undo()
    assert len(seen) == n


def test_trait_validation():
    ed = ChainEditor()
    with pytest.raises(Exception, match="chain name"):
        ed.chain_name = 'a"b'
    with pytest.raises(Exception, match="kind"):
        ed.edges = [{"id": "a->b", "source": "a", "target": "b", "kind": "bogus"}]
    with pytest.raises(ValueError, match="edge kind"):
        linear(ed, "nat")
        ed.set_edge("input->nat", "maybe")
    ed.selection = ["nat", "nope"]
    assert ed.selection == ["nat"]


def test_repr_has_no_address():
    assert repr(ChainEditor.from_text("chain c: nat")) == "<ChainEditor 'c': 3 nodes, 2 edges, valid>"


# -- the front end's messages ----------------------------------------------------------------------

def test_front_end_gestures(front_end):
    ed = ChainEditor(chain_name="web", debounce=0)
    front_end(ed, {"event": "add_node", "nf": "firewall", "x": 200.0, "y": 80.0})
    front_end(ed, {"event": "add_node", "nf": "nat"})
    assert next(n for n in ed.nodes if n["id"] == "firewall")["x"] == 200.0
    for u, v in [("input", "firewall"), ("firewall", "nat"), ("nat", "output")]:
        front_end(ed, {"event": "add_edge", "source": u, "target": v})
    assert ed.valid and "firewall => nat;" in ed.text
    front_end(ed, {"event": "add_node", "nf": "drop"})
    front_end(ed, {"event": "add_edge", "source": "firewall", "target": "drop"})
    front_end(ed, {"event": "set_edge", "id": "firewall->drop", "kind": "then",
                   "field": "firewall.verdict", "op": "!=", "value": "0", "cases": [], "bound": None})
    assert "firewall => (drop : nat ? firewall.verdict != 0);" in ed.text
    front_end(ed, {"event": "move", "positions": {"nat": [5, 6]}})
    assert next(n for n in ed.nodes if n["id"] == "nat")["x"] == 5
    front_end(ed, state={"selection": ["drop"]})
    assert ed.selection == ["drop"]
    front_end(ed, {"event": "remove", "ids": ["drop"]})
    assert "drop" not in ids(ed.nodes) and ed.selection == []
    front_end(ed, {"event": "undo"})
    assert "drop" in ids(ed.nodes) and ed.valid
    front_end(ed, state={"text": "chain web: lb -> l3fwd"})
    assert ids(ed.nodes) == ["input", "l3fwd", "lb", "output"]
    front_end(ed, {"event": "set_edge", "id": "no->such", "kind": "seq"})
    assert "no such" in ed.errors[-1]["message"] or "no->such" in ed.errors[-1]["message"]


def test_front_end_edits_are_debounced():
    async def scenario() -> tuple[str, str, str]:
        ed = ChainEditor(chain_name="c", debounce=0.05)
        ed._handle_msg({"content": {"data": {"method": "custom", "content":
                        {"event": "add_node", "nf": "nat"}}}, "buffers": []})
        right_away = ed.text
        await asyncio.sleep(0.15)
        later = ed.text
        ed._handle_msg({"content": {"data": {"method": "custom", "content":
                        {"event": "add_edge", "source": "input", "target": "nat"}}}, "buffers": []})
        _ = ed.valid  # reading the state flushes a waiting commit
        return right_away, later, ed.text

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever runs in this thread
        right_away, later, flushed = pool.submit(asyncio.run, scenario()).result()
    assert right_away == "chain c {\n}"
    assert later == right_away and "input => nat;" in flushed


def test_state_sent_to_the_front_end():
    ed = ChainEditor.from_text("chain c: nat")
    state = ed.get_state()
    assert {"nodes", "edges", "palette", "errors", "text", "chain_name", "selection"} <= set(state)
    pal = {p["name"]: p for p in state["palette"]}
    assert pal["firewall"]["color"] == LAYER_COLORS[4] and "verdict" in pal["firewall"]["fields"]
    assert pal["drop"]["kind"] == "endpoint"
    assert "debounce" not in state


# -- pure helpers ---------------------------------------------------------------------------------

def test_check_drawing_empty_and_layout():
    assert check_drawing([], [])[0]["kind"] == "chain"
    assert layered_positions([], []) == {}


def test_importing_sfclab_does_not_import_widgets():
    import subprocess
    import sys

    code = "import sys, sfclab, sfclab.notebook; print('anywidget' in sys.modules, 'ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_edits_reach_the_front_end_and_text_from_it_calls_back(front_end):
    ed = ChainEditor(chain_name="c")
    ed.comm.messages.clear()
    linear(ed, "nat")
    sent = [m[0][0] if m[0] else m[1].get("data") for m in ed.comm.messages]
    states = [d["state"] for d in sent if isinstance(d, dict) and d.get("method") == "update"]
    assert any("nodes" in s for s in states) and any("edges" in s for s in states)
    assert any(s.get("errors") == [] for s in states)
    seen: list[EditorChange] = []
    ed.on_change(seen.append)
    front_end(ed, state={"text": "chain c: lb"})
    assert seen and seen[-1].chains.names() == ["c"] and "lb" in ids(ed.nodes)


def test_tidy_brings_columns_closer_to_fit_the_canvas_but_keeps_labels_clear():
    ed = ChainEditor.from_text("chain web: firewall -> nat -> monitor -> l3fwd")
    ed.tidy()
    xs = sorted({n["x"] for n in ed.nodes})
    assert xs[1] - xs[0] == 150                              # no width: the usual columns
    ed.tidy(width=700)
    xs = sorted({n["x"] for n in ed.nodes})
    step = xs[1] - xs[0]
    assert max(n["width"] for n in ed.nodes) + 40 <= step < 150
    assert ed.undo() and sorted({n["x"] for n in ed.nodes})[1] - xs[0] == 150
    # a branch label needs its room: the columns stay as far apart as usual
    ed.text = ("chain web {\n    input => firewall;\n"
               "    firewall => (nat : drop ? firewall.verdict == 0);\n    nat => output;\n}")
    ed.tidy(width=500)
    xs = sorted({n["x"] for n in ed.nodes})
    assert xs[1] - xs[0] == 150


def test_a_branch_label_keeps_clear_of_the_nodes_and_arrowheads_at_the_zoom_shown():
    """Issue 33.6: "verdict == 0" ran into nat's arrowhead and box (columns 150 apart)."""
    from sfclab.draw.layered import label_width
    from sfclab.notebook.editor_layout import LABEL_PX

    ed = ChainEditor.from_text("chain web {\n    input => firewall;\n"
                               "    firewall => (nat : drop ? firewall.verdict == 0);\n"
                               "    nat => lb => monitor => qos => l3fwd => output;\n}")
    for width in (None, 900.0):
        ed.tidy(width)
        at = {n["id"]: n for n in ed.nodes}
        xs = [n["x"] for n in ed.nodes]
        span = max(xs) - min(xs) + max(n["width"] for n in ed.nodes) + 60
        scale = max(1.0, LABEL_PX / 10 / min(1.2, width / span)) if width else 1.0
        gap = (at["nat"]["x"] - at["nat"]["width"] / 2) - (at["firewall"]["x"] + at["firewall"]["width"] / 2)
        assert gap >= label_width("verdict == 0") * scale + 2 * 10 + 2 * 8, (width, gap)
