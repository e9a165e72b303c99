"""``Lab(arch="tna")`` on the default target: the embedded Tofino model pushes, sends,
traces and shows tables by pipe; the live view's placement tab shows the plan beside
what the packets did."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.notebook.runtime_views import TablesView
from sfclab.targets.traces.timeline import timeline, timeline_text

WEB = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }
"""
#: Two orders of the same NFs: in the naive pipeline, `r` needs a second pass.
CROSS = ("chain p match udp.dport == 53 { input => l3fwd => firewall => nat => output; }\n"
         "chain r match udp.dport == 123 { input => l3fwd => nat => firewall => output; }\n")


@pytest.fixture(scope="module")
def lab():
    lab = sfclab.Lab(arch="tna", pipeline="naive")
    lab.add(WEB + CROSS)
    yield lab
    lab.close()


def test_the_default_target_runs_the_labs_tna_program(lab):
    assert lab.push() > 0
    assert lab.pushed.arch == "tna" and lab.target.arch == "tna" and lab.target.pipes == 2
    sent = lab.send("web", 3)
    assert len(sent) == 3
    trace = lab.traces[-1].trace
    assert "pipe 0 ingress" in trace.text() and "pipe 0 egress" in trace.text()
    assert lab.traces[-1].path in ("web/0", "web/1")


def test_recirculations_show_where_they_ran(lab):
    lab.send("r", 1)
    rec = lab.traces[-1]
    planned = lab.pushed.composition.pipelets.recirculations(rec.path)   # the program's plan
    assert rec.path == "r/0" and planned >= 1
    assert dict(lab.compiled.placement.best.recirculations)["r/0"] == planned
    text = rec.trace.text()
    assert text.count("recirculated on port 68") == planned
    ran = lab.ran_paths()
    assert ran[rec.path].recirculations == {planned: 1}
    assert ran[rec.path].route_text().startswith("pipe 0 ingress → pipe 0 egress → "
                                                 "recirculated on port 68 → pipe 0 ingress")
    # the timeline a user reads: each block under the pipelet it ran in, and how it came back
    passes = timeline(rec.trace)
    assert [sorted({b.where for b in p.blocks}) for p in passes] == \
        [["pipe 0 egress", "pipe 0 ingress"]] * (planned + 1)
    assert passes[0].blocks[0].where == "pipe 0 ingress" and passes[0].how == \
        "recirculated on port 68"
    text = timeline_text(rec.trace)
    assert " pipe 0 egress:\n  rewinder" in text
    assert "-> recirculated on port 68 -> pass 1 (path_id=" in text


def test_tables_come_by_pipe(lab):
    rows = lab.tables()
    # one Pipeline per pipe (pipe0, pipe1): each table on the pipe its pipeline runs on
    assert {r.pipes for r in rows} == {(0,), (1,)}
    assert all(r.table.startswith(f"pipe{r.pipes[0]}.") for r in rows)
    assert any(r.table == "pipe0.SfcIngress0.initializer" and r.hits for r in rows)
    text = TablesView(rows).text()
    assert text.startswith("pipe 0 (pipeline pipe0)") and "\npipe 1 (pipeline pipe1)\n" in text


def test_the_placement_tab_shows_what_the_packets_did(lab):
    view = lab.live_view("placement")
    pl = view.panels["placement"]
    view.refresh()
    assert "ran on the TNA model: recirculations" in pl.rest.value
    pl.route.value = "r/0"
    planned = dict(lab.compiled.placement.best.recirculations)["r/0"]
    assert (f"what 1 packet(s) of r/0 did on the TNA model</b>: {planned} recirculation(s), "
            f"as planned") in pl.ran_html.value
    assert "recirculated on port 68" in pl.ran_html.value
    pl.route.value = "p/0"
    assert "no packet of p/0 ran" in pl.ran_html.value


def test_the_default_model_follows_the_labs_architecture():
    lab = sfclab.Lab(arch="tna")
    try:
        lab.add("chain a: l2fwd")
        lab.push()
        assert lab.target.arch == "tna"
        lab.arch = "v1model"
        lab.push()
        assert lab.target.arch == "v1model" and lab.pushed.arch == "v1model"
    finally:
        lab.close()
