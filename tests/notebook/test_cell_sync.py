"""A %%chain cell re-run after its chains were changed elsewhere (the chain editor, Python)
says so instead of silently discarding the change; --from-lab takes the Lab's text into
the cell, --force runs the cell's text; %sfc chains prints the Lab's chains as cell text."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

import sfclab.notebook.magics as magics_module
from sfclab import parse
from sfclab.notebook.cell_sync import StaleCellError
from sfclab.notebook.magics import SfcMagics, SfcUsageError
from notebook_support import ipython_shell
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)

CELL = ("chain web match tcp.dport == 80: firewall -> nat -> l3fwd\n"
        "chain mgmt match vlan.vid == 100: l2fwd\n")


@pytest.fixture(scope="module")
def ip():
    return ipython_shell()


@pytest.fixture
def sfc(ip, monkeypatch):
    """Fresh magics (and Lab); what they display lands in ``sfc.shown``, what they put
    in cells (IPython's set_next_input payload) in ``sfc.inputs``."""
    ip.config.pop("SfcMagics", None)
    magics = SfcMagics(ip)
    ip.register_magics(magics)
    magics.shown, magics.inputs = [], []
    monkeypatch.setattr(magics_module, "display", magics.shown.append)
    monkeypatch.setattr(ip, "set_next_input",
                        lambda text, replace=False: magics.inputs.append((text, replace)))
    yield magics
    ip.configurables.remove(magics)
    magics.lab.close()


def draw_monitor_into_mgmt(lab):
    """What a user does in the drawing: mgmt gets a monitor before its output."""
    ed = lab.editor("mgmt")
    ed.add_nf("monitor", x=400, y=60)
    ed.remove("l2fwd->output")
    ed.connect("l2fwd", "monitor")
    ed.connect("monitor", "output")
    return ed


def mgmt_nfs(lab) -> list[str]:
    return lab.chains["mgmt"].nf_nodes()


def test_a_cell_whose_chain_was_redrawn_is_refused_and_says_what_differs(ip, sfc, capsys):
    ip.run_cell_magic("chain", "", CELL)
    draw_monitor_into_mgmt(sfc.lab)
    assert mgmt_nfs(sfc.lab) == ["l2fwd", "monitor"]
    before = sfc.lab.compiled
    with pytest.raises(SfcUsageError) as info:
        ip.run_cell_magic("chain", "", CELL)                 # the stale cell, re-run
    err = info.value.error
    assert isinstance(err, StaleCellError) and [s.name for s in err.stale] == ["mgmt"]
    assert "'mgmt' was changed by the chain editor" in err.message
    assert err.line == 3 and err.context.splitlines()[0].strip().startswith("chain mgmt")
    text = str(err)
    assert "-    l2fwd => output;" in text and "+    l2fwd => monitor;" in text
    assert "+    monitor => output;" in text and "web" not in err.message
    assert "%%chain --from-lab" in err.hint and "%%chain --force" in err.hint
    assert sfc.lab.compiled is before and mgmt_nfs(sfc.lab) == ["l2fwd", "monitor"]
    ip.run_cell(f"%%chain\n{CELL}")                          # as a notebook shows it
    out = capsys.readouterr()
    assert "StaleCellError: <cell>:3:7: running this cell would discard" in out.out + out.err
    assert "Traceback" not in out.out + out.err and mgmt_nfs(sfc.lab) == ["l2fwd", "monitor"]


def test_from_lab_puts_the_labs_text_in_the_cell_and_changes_nothing(ip, sfc, capsys):
    ip.run_cell_magic("chain", "--show chains", CELL)
    draw_monitor_into_mgmt(sfc.lab)
    before = sfc.lab.compiled
    ip.run_cell_magic("chain", "--show chains --from-lab", CELL)
    assert sfc.lab.compiled is before
    ((text, replace),) = sfc.inputs
    assert replace and text.startswith("%%chain --show chains\n")
    magic, body = text.split("\n", 1)
    assert [c.signature() for c in parse(body)] == \
        [sfc.lab.chains[n].signature() for n in ("web", "mgmt")]
    assert "monitor" in body
    said = capsys.readouterr().out           # the text is in the cell, not printed twice
    assert said.startswith("this cell now holds the lab's text of web, mgmt") and "=>" not in said
    ip.run_cell_magic("chain", "--show chains", body)          # the cell run again: no change
    assert sfc.lab.compiled is before
    with pytest.raises(UsageError, match="give one of them"):
        ip.run_cell_magic("chain", "--from-lab --force", CELL)


def test_force_runs_the_cells_text_and_the_editor_follows(ip, sfc):
    ip.run_cell_magic("chain", "", CELL)
    ed = draw_monitor_into_mgmt(sfc.lab)
    ip.run_cell_magic("chain", "--force", CELL)
    assert mgmt_nfs(sfc.lab) == ["l2fwd"]
    assert "monitor" not in {n["id"] for n in ed.nodes}
    ip.run_cell_magic("chain", "", CELL)                      # the cell's own again: fine


def test_cells_replacing_each_others_chains_still_work(ip, sfc):
    ip.run_cell_magic("chain", "", "chain web: firewall -> nat")
    ip.run_cell_magic("chain", "", "chain web: firewall -> l3fwd")
    ip.run_cell_magic("chain", "", "chain web: firewall -> nat")
    assert sfc.lab.chains["web"].nf_nodes() == ["firewall", "nat"]


def test_changes_from_python_and_removals_count_too_but_sfc_remove_does_not(ip, sfc):
    ip.run_cell_magic("chain", "", CELL)
    sfc.lab.add("chain web match tcp.dport == 80: firewall -> l3fwd")
    with pytest.raises(SfcUsageError, match="'web' was changed by lab.add"):
        ip.run_cell_magic("chain", "", CELL)
    ip.run_cell_magic("chain", "--force", CELL)
    sfc.lab.set_chains("chain web match tcp.dport == 80: firewall -> nat -> l3fwd")
    with pytest.raises(SfcUsageError) as info:                 # mgmt removed since
        ip.run_cell_magic("chain", "", CELL)
    assert "'mgmt' was removed by the chain editor" in info.value.error.message
    assert "mgmt is no longer in the Lab" in str(info.value.error)
    ip.run_cell_magic("chain", "--force", CELL)
    ip.run_line_magic("sfc", "remove mgmt")                   # the magic: the cell brings it back
    ip.run_cell_magic("chain", "", CELL)
    assert sfc.lab.chains.names() == ["web", "mgmt"]


def test_a_chain_first_drawn_then_written_in_a_cell_is_not_overwritten(ip, sfc):
    ip.run_cell_magic("chain", "", "chain web: firewall -> nat")
    ed = sfc.lab.editor("vlan")                               # a new chain, drawn
    ed.add_nf("l2fwd", x=200, y=60)
    ed.connect("input", "l2fwd")
    ed.connect("l2fwd", "output")
    with pytest.raises(SfcUsageError, match="'vlan' was changed by the chain editor"):
        ip.run_cell_magic("chain", "", "chain vlan: l3fwd")
    ip.run_cell_magic("chain", "", "chain vlan: l2fwd")       # what was drawn: no loss
    assert sfc.lab.chains.names() == ["web", "vlan"]


def test_sfc_chains_prints_the_labs_chains_as_a_cell(ip, sfc, capsys):
    ip.run_line_magic("sfc", "chains")
    assert "no chains yet" in capsys.readouterr().out
    ip.run_cell_magic("chain", "", CELL)
    draw_monitor_into_mgmt(sfc.lab)
    ip.run_line_magic("sfc", "chains")
    out = capsys.readouterr().out
    assert out.startswith("%%chain\nchain web match tcp.dport == 80 {")
    assert [c.signature() for c in parse(out.split("\n", 1)[1])] == \
        [c.signature() for c in sfc.lab.chains]
    ip.run_line_magic("sfc", "chains mgmt --cell")
    ((text, replace),) = sfc.inputs
    assert not replace and text.startswith("%%chain\nchain mgmt") and "web" not in text
    assert "a new cell below holds mgmt" in capsys.readouterr().out
    with pytest.raises(UsageError, match="no chain 'mgm' in the lab; did you mean 'mgmt'"):
        ip.run_line_magic("sfc", "chains mgm")


def test_a_chain_added_from_python_that_no_cell_wrote_a_cell_takes_over(ip, sfc):
    sfc.lab.add("chain web: firewall -> nat")
    ip.run_cell_magic("chain", "", "chain web: firewall -> l3fwd")
    assert sfc.lab.chains["web"].nf_nodes() == ["firewall", "l3fwd"]


def test_typing_in_a_stale_cell_marks_the_chain_and_leaves_the_drawing(ip, sfc):
    """The live check (as the cell is typed, before any run) applies the same rule."""
    from sfclab.notebook.live_check import check

    ip.run_cell_magic("chain", "", CELL)
    draw_monitor_into_mgmt(sfc.lab)
    before = sfc.lab.compiled
    typed = CELL.replace("nat -> l3fwd", "l3fwd")              # a change to web, typed
    out = check("c1", "%%chain\n" + typed)
    assert out["status"] == "error"
    (e,) = out["errors"]
    assert (e["line"], e["column"], e["width"]) == (3, 7, 4)    # at mgmt, as the cell shows it
    assert "'mgmt' was changed by the chain editor" in e["message"]
    assert "--from-lab" in e["hint"] and sfc.lab.compiled is before
    assert check("c1", "%%chain --from-lab\n" + typed)["status"] == "off"
    assert check("c1", "%%chain --force\n" + typed) == {"status": "ok",
                                                         "chains": ["web", "mgmt"]}
    assert mgmt_nfs(sfc.lab) == ["l2fwd"] and sfc.lab.chains["web"].nf_nodes() == \
        ["firewall", "l3fwd"]
    ip.run_cell_magic("chain", "", typed)                       # what the cell now says: fine


def test_the_bound_editor_says_when_the_drawing_is_newer_than_the_cell(ip, sfc):
    ip.run_cell_magic("chain", "", CELL)
    ed = draw_monitor_into_mgmt(sfc.lab)
    assert ed.lab_state["status"] == ("in the Lab: web, mgmt · mgmt: newer than its %%chain cell "
                                        "(run it with --from-lab)")
    assert "run it with --from-lab to copy the drawing there" in ed.lab_state["detail"]
    ip.run_cell_magic("chain", "--from-lab", CELL)             # the cell takes the drawing
    assert ed.lab_state["status"] == "in the Lab: web, mgmt"


def test_from_lab_with_no_chain_of_the_cell_in_the_lab_says_so(ip, sfc):
    with pytest.raises(UsageError, match=r"none of this cell's chains \(web, mgmt\)"):
        ip.run_cell_magic("chain", "--from-lab", CELL)
    assert sfc.inputs == [] and len(sfc.lab.chains) == 0
    with pytest.raises(SfcUsageError, match="unknown NF 'firewal'"):    # located as a run
        ip.run_cell_magic("chain", "--from-lab", "chain web: firewal")
    ip.run_cell_magic("chain", "--name www", "chain web: firewall -> nat")
    ip.run_cell_magic("chain", "--name www --from-lab", "chain web: firewall")
    ((text, replace),) = sfc.inputs
    assert replace and text.startswith("%%chain\nchain www {")   # the name is in the text
