"""Plots and switch pictures drawn in Python (sfclab.plots, sfclab.diagrams): the data
where it belongs, readable labels, the routes and passes the compiler computed."""

from __future__ import annotations

import math
import re

import pytest

import sfclab
from sfclab.cli.demo import demo_chains
from sfclab.draw.switch import passes_svg, pipelines_svg, placement_figure, placement_svg, \
    throughput_figure
from sfclab.nfinfo import NFCatalog, NFInfo
from sfclab.passes import place, recirculation_throughput
from sfclab.passes.placement import Pipelet, route_of
from sfclab.lang import parse_file
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
from sfclab.passes.common import passes_on
from sfclab.passes.placement import step_costs
from sfclab.draw.plots import Mark, Series, Span, bar_plot, line_plot, timeline_plot

FIG6 = NFCatalog([NFInfo(name=n, layer=4, stages=2) for n in "abcdef"])


def floats(s: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", s)]


def polyline(svg: str, k: int = 0) -> list[tuple[float, float]]:
    pts = re.findall(r'<polyline points="([^"]+)"', svg)[k]
    return [tuple(map(float, p.split(","))) for p in pts.split()]


def texts(svg: str) -> list[tuple[float, float, str]]:
    return [(float(x), float(y), t) for x, y, t in
            re.findall(r'<text x="([\d.-]+)" y="([\d.-]+)"[^>]*>([^<]*)</text>', svg)]


def test_a_curve_goes_through_its_points_and_marks_sit_on_it():
    fig = line_plot([Series("s", ((0, 0.0), (1, 0.5), (2, 1.0)))],
                    marks=[Mark(1, 0.5, "here")], y_range=(0, 1), x_ticks=[0, 1, 2])
    (x0, y0), (x1, y1), (x2, y2) = polyline(fig.svg)
    assert x1 - x0 == pytest.approx(x2 - x1) and y0 - y1 == pytest.approx(y1 - y2)   # linear
    assert y0 > y2                                                       # up is more
    cx, cy = map(float, re.search(r'class="sfc-mark" cx="([\d.]+)" cy="([\d.]+)"',
                                  fig.svg).groups())
    assert (cx, cy) == (x1, y1)
    assert "● here: (1, 0.5)" in fig.text and fig._repr_mimebundle_()["text/plain"] == fig.text


def test_labels_of_marks_on_one_spot_do_not_overlap():
    marks = [Mark(1, 0.5, f"label {k}") for k in range(4)]
    fig = line_plot([Series("s", ((0, 0), (2, 1)))], marks=marks)
    ys = sorted(y for _, y, t in texts(fig.svg) if t.startswith("label"))
    assert len(ys) == 4 and all(b - a >= 14 for a, b in zip(ys, ys[1:]))


def test_a_mark_s_label_keeps_clear_of_its_ring():
    """Issue 33.6: lab 02's ring covered the "%" of "your mean: 12.1%" (the label ended
    1.5 px from the ring, its halo on it).  At the right edge the label ends to the left."""
    fig = line_plot([Series("s", ((0, 1.0), (128, 0.12)))], x_ticks=[0, 64, 128],
                    marks=[Mark(128, 0.1315, "P4SC: 13.15 %"), Mark(128, 0.121, "your mean: 12.1%"),
                           Mark(64, 0.5, "middle")])
    rings = [tuple(map(float, m)) for m in re.findall(
        r'class="sfc-mark" cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', fig.svg)]
    ends = {t: (float(x), anchor) for x, anchor, t in re.findall(
        r'<text x="([\d.-]+)" y="[\d.-]+" [^>]*text-anchor="(start|end)"[^>]*>([^<]*)</text>',
        fig.svg)}
    for (cx, _, r), label in zip(rings, ("P4SC: 13.15 %", "your mean: 12.1%", "middle")):
        x, anchor = ends[label]
        gap = cx - x if anchor == "end" else x - cx
        assert gap >= r + 1.5 + 6, (label, gap)      # ring, its stroke, the halo and room


def test_labels_are_readable_sizes():
    for fig in (throughput_figure(), bar_plot(["a"], [("x", [3])]),
                timeline_plot([("r", "#000")], [(0.1, 0)])):
        sizes = [int(s) for s in re.findall(r'font-size="(\d+)"', fig.svg)]
        assert sizes and min(sizes) >= 10, sizes


def test_bars_on_a_log_scale_grow_by_decades():
    fig = bar_plot(["1", "2"], [("LCS", [10, 100]), ("parallel", [1000, 1000])], log=True)
    heights = [float(h) for h in re.findall(r'class="sfc-bar" x="[\d.]+" y="[\d.]+" '
                                            r'width="[\d.]+" height="([\d.]+)"', fig.svg)]
    lcs1, par1, lcs2, par2 = heights
    assert par1 == par2 and lcs2 - lcs1 == pytest.approx(par1 - lcs2, abs=0.2)  # equal decades
    assert fig.text.splitlines()[1].split() == ["1", "10", "1000"]


def test_a_timeline_puts_each_event_in_its_row_and_shades_the_spans():
    fig = timeline_plot([("old", "#111"), ("new", "#222")], [(0.0, 0), (1.0, 1), (2.0, 0)],
                        spans=[Span(0.5, 0.7, "update")])
    ev = re.findall(r'class="sfc-event" x="([\d.]+)" y="([\d.]+)"[^>]*fill="(#\d+)"', fig.svg)
    assert [c for _, _, c in ev] == ["#111", "#222", "#111"]
    assert ev[0][1] == ev[2][1] != ev[1][1]                     # rows by kind
    x = re.search(r'class="sfc-span" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', fig.svg)
    assert float(ev[0][0]) < float(x[1]) < float(ev[1][0])      # between the events
    assert fig.text.splitlines() == ["old: 2 events", "new: 1 events", "update: 0.5 .. 0.7"]


# -- the switch ---------------------------------------------------------------------------------

def test_the_throughput_model_is_dejavus_and_the_placed_paths_are_marked():
    pl = sfclab.compile(demo_chains(), arch="tna", pipes=4).placement
    fig = throughput_figure(pl)
    legend = [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", fig.svg) if "loopback" in t]
    this = next(i for i, t in enumerate(legend) if "(this switch)" in t)
    pts = polyline(fig.svg, this)
    ticks = {t: y - 4 for _, y, t in texts(fig.svg) if t in ("0.00", "1.00")}  # the y axis
    y = lambda v: ticks["0.00"] + (ticks["1.00"] - ticks["0.00"]) * v  # noqa: E731
    for k, (_, py) in enumerate(pts):                      # 1, 1, 0.38, 0.16, … of T
        assert py == pytest.approx(y(recirculation_throughput(k)), abs=0.2), k
    assert recirculation_throughput(2) == pytest.approx(0.38, abs=0.005)
    marks = [(float(a), float(b)) for a, b in
             re.findall(r'class="sfc-mark" cx="([\d.]+)" cy="([\d.]+)"', fig.svg)]
    ks = {k for _, k in pl.best.recirculations}
    assert {round(cx) for cx, _ in marks} >= {round(pts[k][0]) for k in ks}
    for cx, cy in marks:                                      # every mark on the curve
        assert any(abs(cx - px) < 0.5 and abs(cy - py) < 0.5 for px, py in pts)


def test_step_costs_add_up_to_each_paths_recirculations():
    c = sfclab.compile(demo_chains(), arch="tna", pipes=4)
    pl, o = c.placement, c.options
    for placement in (pl.best, pl.naive):
        rec = dict(placement.recirculations)
        for p in c.paths:
            costs = step_costs(p.nfs, placement, pipes=pl.pipes, stages=pl.stages,
                               entry_pipe=o.entry_pipe, exit_pipe=o.exit_pipe)
            assert sum(costs) == rec[p.id], p.id


def test_fig6_naive_and_dejavu_side_by_side_with_the_route():
    chains = sfclab.parse("chain fig6: a -> b -> c -> d -> e -> f", catalog=FIG6)
    path = chains.paths()[0]
    result = place(chains.paths(), FIG6, pipes=2, stages=4)
    fig = placement_figure(result, FIG6, path=path)
    naive, dejavu = fig.svg.split('<svg x=')[1:]
    assert "naive: 2 recirculations" in naive and "Dejavu: 1 recirculation" in dejavu
    assert "route of fig6/0: 2 recirculations" in naive and ">↻ 2<" in naive
    assert dejavu.count('class="sfc-recirculate"') == 1 and ">↻ 1<" in dejavu
    # the NFs numbered in path order, on the pipelets Dejavu put them on
    where = result.best.where()
    for pipelet in ("I0", "I1", "E1"):
        box = dejavu.split(f'data-pipelet="{pipelet}"')[1].split("</title>")[0]
        assert sorted(n for n, (pl, _) in where.items() if str(pl) == pipelet) == \
            sorted(re.findall(r"\b[a-f]\b", box.split(":")[1].split(";")[0]))


def test_placement_pictures_fade_what_the_route_does_not_run():
    c = sfclab.compile(demo_chains(), arch="tna", pipes=4)
    path = next(p for p in c.paths if p.id == "SFC1_DC/0")
    svg = placement_svg(c.placement.best, c.catalog, stages=c.placement.stages, path=path)
    faded = re.findall(r'<g class="sfc-chip" opacity="0.35"><title>(\w+):', svg)
    lit = re.findall(r'<g class="sfc-chip"><title>(\w+):', svg)
    placed = [n for _, nfs in c.placement.best.pipelets for n in nfs]
    assert set(placed) - set(path.nfs) <= set(faded)
    assert sorted(lit) == sorted(set(path.nfs))     # one instance of each lit: the route's
    assert len(faded) + len(lit) == len(placed)
    badges = re.findall(r'class="sfc-badge">.*?>(\d+)</text>', svg)
    assert sorted(map(int, badges)) == list(range(1, len(path.nfs) + 1))


def test_placement_pictures_number_the_replica_the_route_runs():
    """An NF placed twice (a replica): the path's number sits on the instance its route
    runs, the other is faded, and the route strip counts the recirculations the
    placement does."""
    c = sfclab.compile(parse_file(EXAMPLES / "p4sc_table3.sfc"), arch="tna", pipes=2)
    best = c.placement.best
    assert best.replicas(), "p4sc_table3's GiLAN path is expected to use replicas"
    path = next(p for p in c.paths if p.id == "SFC3_GiLAN/0")
    svg = placement_svg(best, c.catalog, stages=c.placement.stages, path=path)
    chosen, costs = route_of(path.nfs, best)
    assert sum(costs) == dict(best.recirculations)[path.id] == 1
    assert f"route of {path.id}: 1 recirculation<" in svg
    for k, (pl, i) in enumerate(chosen, 1):       # the badge sits in the chosen chip's pipelet
        block = svg.split(f'data-pipelet="{pl}"')[1].split("sfc-pipelet")[0]
        assert f">{k}</text>" in block


def test_pipelines_show_the_pass_of_every_slot_a_path_runs():
    c = sfclab.compile(demo_chains())
    svg = pipelines_svg(c.pipeline, c.paths, c.catalog, max_paths=100)
    blocks = svg.split("weighted recirculations</text>")[1:]
    for block, pl in zip(blocks, (c.pipeline.naive, c.pipeline.mafsa, c.pipeline.optimal)):
        rows = block.split('<g class="sfc-path-row">')[1:]
        seen = {}
        for r in rows:
            label = re.search(r'anchor="end"[^>]*>([^<]+)</text>', r)[1].split(" +")[0]
            seen[label] = max(map(int, re.findall(r'font-weight="bold">(\d)</text>', r))) + 1
        for p in c.paths:
            if p.id in seen:
                assert seen[p.id] == passes_on(p.nfs, pl.slots), (pl.method, p.id)


def test_passes_of_a_looping_path_count_down():
    c = sfclab.compile("chain sr { input => sr_encap => (self : l3fwd ? "
                       "sr_encap.global_counter < 3); l3fwd => output; }")
    f = c.fsm.paths[0]
    svg = passes_svg(c.fsm, f, c.catalog)
    assert svg.count('class="sfc-pass"') == f.passes == len(f.states)
    assert svg.count('class="sfc-recirculate"') == f.passes - 1
    assert "recirculate (counter" in svg or all(s.counter == 0 for s in f.states)
    assert not math.isnan(sum(floats(re.search(r'viewBox="([^"]+)"', svg)[1])))


def test_tna_placement_pictures_show_the_stages_sfclabs_core_takes():
    c = sfclab.compile(demo_chains(), arch="tna", pipes=4)
    svg = placement_figure(c.placement, c.catalog).svg
    i0 = svg.split('data-pipelet="I0"')[1].split("</title>")[0]
    used = sum(c.catalog.get(n).stages for n in dict(c.placement.naive.pipelets)[Pipelet(0, "ingress")])
    assert f"; {used} + core 2 of 12 stages" in i0
    assert "E0 · " in svg and " + core 1 of 12 stages" in svg


def test_placement_pictures_count_side_by_side_nfs_once():
    """NFs side by side share stages: a pipelet's label counts a group's largest NF, so no
    pipelet of a placement that fits shows more stages than it has (every_nf.sfc's I0 holds
    nine NFs in 10 stages; summing them said 30)."""
    c = sfclab.compile(parse_file(EXAMPLES / "every_nf.sfc"), arch="tna", pipes=2)
    svg = placement_svg(c.placement.best, c.catalog, stages=12, reserved=c.placement.reserved)
    shown = re.findall(r"(\w\d) · (\d+) \+ core (\d+) of 12 stages", svg)
    assert len(shown) == 4
    assert all(int(used) + int(core) <= 12 for _, used, core in shown), shown
    assert int(dict((pl, u) for pl, u, _ in shown)["I0"]) >= 9
