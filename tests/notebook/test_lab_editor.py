"""A chain editor bound to a Lab (lab.editor(), %sfc edit): one source of truth both ways."""

from __future__ import annotations

import pytest

from sfclab import Lab
from sfclab.notebook import ChainEditor
from sfclab.notebook.magics import SfcMagics
from notebook_support import ipython_shell
from test_editor import DummyComm, dummy_comm, front_end  # noqa: F401  (fixtures)


def paths(lab: Lab) -> list[str]:
    return [str(p) for p in lab.compiled.paths]


def test_a_drawn_chain_goes_into_the_lab_and_the_live_view_follows():
    lab = Lab()
    lab.add("chain web: firewall -> nat\nchain ssh match tcp.dport == 22: l3fwd")
    view = lab.live_view()
    ed = lab.editor("web")
    assert ed.chain_name == "web" and ed.lab_state["bound"]
    assert sorted(n["id"] for n in ed.nodes) == ["firewall", "input", "nat", "output"]
    ed.add_nf("monitor", x=500, y=60)
    ed.remove("nat->output")
    ed.connect("nat", "monitor")
    assert "web/0 [0.5]: input -> firewall -> nat -> output" in paths(lab)  # invalid: not yet
    ed.connect("monitor", "output")
    assert "web/0 [0.5]: input -> firewall -> nat -> monitor -> output" in paths(lab)
    assert lab.chains.names() == ["web", "ssh"]           # the other chain stays
    assert ed.lab_state["status"] == "in the Lab: web, ssh" and not ed.lab_state["error"]
    assert view._compiled is lab.compiled                 # the live view shows the drawing


def test_a_chain_cell_rerun_redraws_the_bound_editor_and_undo_goes_back_into_the_lab():
    lab = Lab()
    lab.add("chain web: firewall -> nat")
    ed = lab.editor()
    lab.add("chain web: ids -> nat -> l3fwd")          # what a %%chain re-run does
    assert sorted(n["id"] for n in ed.nodes) == ["ids", "input", "l3fwd", "nat", "output"]
    assert ed.text.startswith("chain web")
    assert ed.undo()                                     # the drawing before, and the Lab too
    assert paths(lab) == ["web/0 [1]: input -> firewall -> nat -> output"]
    lab.remove("web")
    assert ed.lab_state["status"] == "the Lab has no chains"


def test_a_new_chain_drawn_beside_the_labs_chains():
    lab = Lab()
    lab.add("chain web: firewall -> nat")
    ed = lab.editor("vlan")
    assert ed.chain_name == "vlan" and not ed.valid       # input and output, nothing between
    assert lab.chains.names() == ["web"]
    ed.add_nf("l2fwd", x=200, y=60)
    ed.connect("input", "l2fwd")
    ed.connect("l2fwd", "output")
    assert lab.chains.names() == ["web", "vlan"]
    assert "vlan/0 [0.5]: input -> l2fwd -> output" in paths(lab)


def test_what_the_lab_refuses_is_shown_in_the_editor_and_the_lab_stays():
    lab = Lab()
    lab.add("chain web weight 0.6: firewall -> nat")
    ed = lab.editor("web")
    ed.text = "chain web weight 0.6: firewall -> nat\nchain b weight 0.7: l3fwd"
    assert lab.chains.names() == ["web"]                  # refused as a whole
    assert ed.errors and "weights add up to" in ed.errors[0]["message"]
    assert ed.lab_state["error"] and "not in the Lab" in ed.lab_state["status"]


def test_the_push_button_pushes_then_updates(front_end):
    lab = Lab()
    try:
        lab.add("chain web: firewall -> nat -> l3fwd")
        ed = lab.editor("web")
        assert ed.lab_state["push_label"] == "Push"
        front_end(ed, {"event": "push"})
        assert lab.pushed is not None and ed.lab_state["status"].startswith("pushed: ")
        assert ed.lab_state["push_label"] == "Update"
        ed.text = "chain web: firewall -> l3fwd"
        front_end(ed, {"event": "push"})
        assert ed.lab_state["status"] == "updated: by table entries", ed.lab_state
        assert ed.lab_state["detail"].startswith("entries only"), ed.lab_state
        assert not ed.lab_state["error"]
        assert lab.send("web", 2) and {t.path for t in lab.traces} == {"web/0"}
        assert all(t.trace.nfs() == ["firewall", "l3fwd"] for t in lab.traces)
    finally:
        lab.close()


def test_nodes_and_edges_reach_the_front_end_in_one_message():
    """Deleting a connected NF must not send nodes without their edges first (the
    canvas then saw an edge to a node that was gone: issue 19.4)."""
    ed = ChainEditor.from_text("chain web: firewall -> nat -> l3fwd")
    ed.comm.messages.clear()
    ed.remove("nat")
    states = [m[1]["data"]["state"] for m in ed.comm.messages
              if m[1].get("data", {}).get("method") == "update"]
    with_nodes = [s for s in states if "nodes" in s]
    assert with_nodes and all("edges" in s for s in with_nodes), [list(s) for s in states]


@pytest.fixture(scope="module")
def ip():
    return ipython_shell()


def test_sfc_edit_magic(ip):
    ip.config.pop("SfcMagics", None)
    magics = SfcMagics(ip)
    ip.register_magics(magics)
    try:
        magics.lab.add("chain web: firewall -> nat")
        ed = ip.run_line_magic("sfc", "edit web")
        assert ed.chain_name == "web" and ed.lab_state["bound"]
        assert ip.run_line_magic("sfc", "edit").chain_name == "web"
        assert ip.run_line_magic("sfc", "edit new").chain_name == "new"
        with pytest.raises(Exception, match="one chain name"):
            ip.run_line_magic("sfc", "edit a b")
    finally:
        ip.configurables.remove(magics)


TAGGER = """control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply { sfc.metadata = 1; }
}"""


def test_an_nf_added_to_the_lab_joins_the_palette_and_a_closed_editor_lets_go():
    lab = Lab()
    lab.add("chain web: firewall -> nat")
    ed = lab.editor("web")
    lab.add_nf(TAGGER, manifest={"layer": 4})
    assert "tagger" in {p["name"] for p in ed.palette}
    ed.text = "chain web: firewall -> tagger -> nat"          # drawable, and into the Lab
    assert "web/0 [1]: input -> firewall -> tagger -> nat -> output" in paths(lab)
    hooks = len(lab._callbacks)
    ed.close()
    lab.add("chain web: nat")                                  # nothing to redraw: let go
    assert len(lab._callbacks) == hooks - 1
