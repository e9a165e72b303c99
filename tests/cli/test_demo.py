"""`sfclab demo`, as the README's first command runs it (fewer packets)."""

from __future__ import annotations

import re

import sfclab
from sfclab.cli.commands import main
from sfclab.codegen import generate
from sfclab.cli.demo import demo_chains, planned, run


def test_demo_runs_every_class_on_its_planned_path(tmp_path, capsys):
    html = tmp_path / "demo.html"
    assert main(["demo", "--packets", "3", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    chains = sfclab.parse(demo_chains())
    plans = planned(generate(sfclab.compile(chains)))
    for chain in chains:
        lines = re.findall(rf"^    (\d+) on ({re.escape(chain.name)}/\d+): (.*) -> (\w+), (\d+) pass",
                           out, re.M)
        assert lines, f"no path reported for {chain.name}"
        for count, pid, nfs, terminal, passes in lines:
            want_nfs, want_passes, want_terminal = plans[pid]
            assert nfs.split(" -> ") == list(want_nfs) and terminal == want_terminal
            assert int(passes) == want_passes
        assert sum(int(c) for c, *_ in lines) == 3
    assert "every packet ran its planned service path" in out
    assert "table occupancy (entries / size):" in out and "SfcIngress.rewinder" in out
    page = html.read_text()
    assert page.startswith("<!doctype html>") and page.count("<svg") == len(chains)
    assert "<script" not in page                      # self-contained, no JavaScript


def test_demo_result_is_data_too():
    r = run(packets=2, out=None, progress=None)
    assert r.ok and set(r.classes) == {c.name for c in sfclab.parse(demo_chains())}
    assert all(c.sent == 2 and c.trace.startswith("packet ") for c in r.classes.values())


def test_the_last_line_names_the_paths_no_packet_took():
    """Issue 22.4: the demo printed `none on core/1 (…): no packet found` and then ended
    with `every class ran its planned service path`; the last line must not claim more
    than ran."""
    r = run(packets=2, out=None, progress=None)
    missed = [p for c in r.classes.values() for p in c.missed]
    last = r.report.rstrip().splitlines()[-1]
    assert last == r.verdict() and last.startswith("every packet ran its planned service path")
    planned = sum(len(c.planned) for c in r.classes.values())
    assert missed, "the demo's heavy-hitter branch depends on earlier packets"
    assert f"{planned - len(missed)} of {planned} service paths ran" in last
    assert all(p in last for p in missed) and "every class" not in last
    for c in r.classes.values():
        c.missed.clear()
    assert r.verdict().endswith(f"and all {planned} service paths ran")


def test_demo_covers_the_edge_chains_flood_paths():
    """FlexMesh Fig. 9's E2 tests l2fwd's flood flag after QoS: the class traffic finds
    packets for edge/1 and edge/3 (an unknown destination MAC) and they run there."""
    r = run(packets=4, out=None, progress=None)
    edge = r.classes["edge"]
    assert set(edge.paths) == {"edge/0", "edge/1", "edge/2", "edge/3"} and not edge.missed
    assert r.ok


def test_demo_on_an_unknown_target_says_how_to_name_one(capsys):
    assert main(["demo", "--target", "bmx://127.0.0.1:1"]) == 1
    assert "cannot read the target" in capsys.readouterr().err


def test_the_demo_sends_its_p4sfc_class_through_the_server(capsys):
    """web_ips's IPS runs on the server behind the switch's server port: its packets
    leave after firewall, nat, ips (on the server), monitor, in two passes, and the trace
    shows the detour."""
    assert main(["demo", "--packets", "2"]) == 0
    out = capsys.readouterr().out
    assert "the target plays the server behind port 8" in out
    assert re.search(r"^  web_ips/0: switch \[firewall, nat\] -> server \[ips\] -> switch "
                     r"\[monitor\]$", out, re.M)
    assert re.search(r"^    2 on web_ips/0: firewall -> nat -> ips -> monitor -> output, "
                     r"2 passes \(ips on the server behind port 8\)$", out, re.M)
    trace = out[out.index("trace of a web_ips packet:"):]
    assert "-> out on port 8 to its server, which ran ips; back with next NF 3" in trace
    assert "arrival: hit spi=" in trace
