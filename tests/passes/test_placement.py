"""Placement pass: Dejavu §3.3 placement and §4 throughput model."""

from __future__ import annotations

import pytest

from sfclab.errors import CompileError
from sfclab.ir.model import linear_chain
from sfclab.passes.generate import random_chains
from sfclab.passes.placement import Pipelet, naive_placement, place, recirculation_throughput

from passes_support import FIXTURES, check_golden, fixtures, load


@pytest.mark.parametrize("path", fixtures("placement"), ids=lambda p: p.stem)
def test_fixture(path):
    chains, cat = load(path, field="stages")
    r = place(chains.paths(), cat, pipes=2, stages=2)
    text = f"{r.naive}\n{r.best}\n" + "".join(
        f"{pid}: {k} recirculations, {t:.2f} T\n"
        for (pid, k), (_, t) in zip(r.best.recirculations, r.best.throughput))
    check_golden(path, text)


def test_dejavu_fig6_three_recirculations_naive_one_placed():
    chains, cat = load(FIXTURES / "placement" / "dejavu_fig6.nfs", field="stages")
    r = place(chains.paths(), cat, pipes=2, stages=2, exit_pipe=0)
    # Fig. 6(a): I0 AB, E0 C, I1 D, E1 EF -> I0 E0 I0 E1 I1 E1 I1 E0: 3 recirculations
    naive = dict(r.naive.pipelets)
    assert naive[Pipelet(0, "ingress")] == ("a", "b") and naive[Pipelet(0, "egress")] == ("c",)
    assert naive[Pipelet(1, "ingress")] == ("d",) and naive[Pipelet(1, "egress")] == ("e", "f")
    assert r.naive.weighted_recirculations == 3
    # Fig. 6(b): C and EF swapped -> I0 E1 I1 E0: 1 recirculation
    best = dict(r.best.pipelets)
    assert best[Pipelet(0, "egress")] == ("e", "f") and best[Pipelet(1, "egress")] == ("c",)
    assert r.best.weighted_recirculations == 1
    assert dict(r.naive.throughput)["fig6/0"] == pytest.approx(0.16, abs=0.005)
    assert dict(r.best.throughput)["fig6/0"] == 1.0


def test_dejavu_section4_throughput_figures():
    x = 1 - recirculation_throughput(2)           # y + x = T, y = xT/(T + x)
    assert x == pytest.approx(0.62, abs=0.005)
    assert x + x / (1 + x) == pytest.approx(1.0)
    assert recirculation_throughput(2) == pytest.approx(0.38, abs=0.005)
    assert recirculation_throughput(3) == pytest.approx(0.16, abs=0.005)
    assert recirculation_throughput(1) == recirculation_throughput(0) == 1.0
    # more loopback capacity lifts the curve; the decline is super-linear
    assert recirculation_throughput(3, 2.0) > recirculation_throughput(3)
    t = [recirculation_throughput(k) for k in range(1, 6)]
    assert all(a > b for a, b in zip(t, t[1:]))


def test_placed_is_never_worse_than_naive():
    for seed in range(4):
        paths = random_chains(10, seed=seed).paths()
        r = place(paths, pipes=4, stages=12)
        assert r.best.weighted_recirculations <= r.naive.weighted_recirculations
        used = {nf for _, nfs in r.best.pipelets for nf in nfs}
        assert used == {nf for p in paths for nf in p.nfs}


def test_stage_budget_is_respected_and_infeasible_is_an_error():
    from sfclab.p4.catalog import load_default

    paths = random_chains(10, seed=1).paths()
    r = place(paths, pipes=6, stages=6)
    for _, nfs in r.best.pipelets:
        assert sum(load_default().resolve(n).stages for n in nfs) <= 6
    with pytest.raises(CompileError, match="needs 5 stages but a pipelet offers at most 2"):
        naive_placement(linear_chain("c", ["heavy_hitter"]).paths(), stages=2)
    with pytest.raises(CompileError, match=r"2 pipe\(s\) of 6 stages offer 24"):
        place(paths, pipes=2, stages=6)


def test_tna_placement_leaves_sfclabs_core_its_stages_in_every_pipelet():
    """For TNA each ingress pipelet holds sfclab's lean core (2 of 12 stages, measured with
    the Tofino compiler; 8 before issue 31) and each egress 1 (2 before): NFs get the rest,
    no path running two NFs of a group side by side."""
    from sfclab.passes.placement import side_by_side_groups
    import sfclab
    from sfclab.passes.placement import TNA_CORE_STAGES

    chains = ("chain a match ipv4.dst == 10.0.1.0/24 { input => firewall => l3fwd => output; }\n"
              "chain b match ipv4.dst == 10.0.2.0/24 { input => qos => nat => output; }\n")
    r = sfclab.compile(chains, arch="tna").placement
    assert r.reserved == TNA_CORE_STAGES and (r.reserved.ingress, r.reserved.egress) == (2, 1)
    compiled = sfclab.compile(chains, arch="tna")
    cat, paths = compiled.catalog, compiled.paths
    for pl, nfs in r.best.pipelets:
        groups = r.best.groups_of(pl)
        assert [n for g in groups for n in g] == list(nfs)
        assert sum(max(cat.get(n).stages for n in g) for g in groups) <= r.free(pl) == 12 - (
            2 if pl.gress == "ingress" else 1)
        for g in groups:     # side by side: no path runs two of a group
            assert not any(len(set(g) & set(p.nfs)) > 1 for p in paths)
    # l3fwd picks the port: an ingress pipelet's
    assert dict((nf, pl.gress) for pl, nfs in r.best.pipelets for nf in nfs)["l3fwd"] == "ingress"
    assert side_by_side_groups(["firewall", "qos", "l3fwd", "nat"],
                               {frozenset(("firewall", "l3fwd")), frozenset(("qos", "nat"))}) \
        == (("firewall", "qos"), ("l3fwd", "nat"))
    assert "sfclab's core 2 of each ingress, 1 of each egress" in compiled.explain()
    # placed on an abstract switch the core is the caller's to give
    assert place(linear_chain("c", ["qos"]).paths(), pipes=1, stages=12).reserved.ingress == 0


def test_what_fits_without_the_core_does_not_fit_with_it():
    from sfclab.passes.placement import CoreStages

    paths = linear_chain("c", ["stateful_firewall", "qos", "heavy_hitter"]).paths()   # 6+5+5
    assert place(paths, pipes=1, stages=12).best                   # I0 6+5, E0 5
    with pytest.raises(CompileError, match=r"need 16 stages .* offer 14 after sfclab's core "
                                           r"\(8 of each ingress pipelet's 12 stages, 2 of"):
        place(paths, pipes=1, stages=12, reserved=CoreStages(8, 2))
    with pytest.raises(CompileError, match="needs 6 stages but a pipelet offers at most 4"):
        naive_placement(paths, pipes=4, stages=8, reserved=CoreStages(4, 4))
    # 16 stages in all, but no two of 6, 5, 5 share a pipelet of 8: an error, not a crash
    with pytest.raises(CompileError, match=r"do not pack into the pipelets' free stages "
                                           r"\(I0 8, E0 8\)"):
        place(paths, pipes=1, stages=8)


def test_tna_placement_error_is_located_and_says_what_to_do():
    import sfclab
    from sfclab.lang import parse_file

    every = FIXTURES.parents[2] / "examples" / "every_nf.sfc"
    chains = parse_file(every)
    with pytest.raises(CompileError) as e:
        sfclab.compile(chains, arch="tna", pipes=1)
    assert e.value.message.startswith(f"{every}:3:7: chain 'web': the NFs need 54 stages")
    assert "--pipes 2" in e.value.hint and "fewer NFs" in e.value.hint
    assert sfclab.compile(chains, arch="tna").placement.pipes == 2    # side by side, lean core
    assert sfclab.compile(chains).placement is None           # v1model: no placement, no limit


def test_what_does_not_fit_four_pipes_is_refused_saying_which_chains_fit():
    """A Tofino 1 has 4 pipes at most: past them the error names the chains that fit
    together on 4, and never suggests more pipes."""
    from sfclab.nfinfo import NFCatalog, NFInfo
    from sfclab.lang import parse
    from sfclab.passes.placement import TNA_CORE_STAGES

    cat = NFCatalog([NFInfo(name=f"n{i}", layer=4, stages=9) for i in range(12)])
    text = "".join(f"chain c{k}: n{3 * k} -> n{3 * k + 1} -> n{3 * k + 2}\n" for k in range(4))
    paths = parse(text, catalog=cat).paths() + parse(
        "chain all: " + " -> ".join(f"n{i}" for i in range(12)), catalog=cat).paths()
    with pytest.raises(CompileError) as e:
        place(paths, cat, pipes=4, stages=12, reserved=TNA_CORE_STAGES, side_by_side=True,
              where=lambda nf: "x.sfc:1:1: ")
    assert e.value.message.startswith("x.sfc:1:1: the NFs need 108 stages")
    assert "--pipes" not in e.value.hint
    assert "these chains fit together: c0, c1, c2, c3" in e.value.hint


def test_an_ingress_only_nf_is_packed_before_the_ingress_fills():
    """firewall -> nat -> l3fwd on one pipe of 8 stages (6 free in I0, 7 in E0): first fit
    in the chain's order filled I0 with firewall and nat, then found no ingress for l3fwd
    (it picks the port), and refused a chain that fits; the NFs an ingress must hold now
    go first."""
    import sfclab

    r = sfclab.compile("chain c: firewall -> nat -> l3fwd", arch="tna", pipes=1,
                       stages=8).placement
    for placed in (r.naive, r.best):
        where = {nf: pl for pl, nfs in placed.pipelets for nf in nfs}
        assert where["l3fwd"] == Pipelet(0, "ingress"), placed


# --- replicas: a stateless NF in more than one pipelet -------------------------------------------

def _examples(name: str, **kw):
    import sfclab
    from sfclab.lang import parse_file

    return sfclab.compile(parse_file(FIXTURES.parents[2] / "examples" / name), arch="tna",
                          pipes=2, **kw)


@pytest.mark.parametrize("name, path, before, after", [
    ("every_nf.sfc", "segments/0", 3, 1),          # sr_encap three times: three instances
    ("p4sc_table3.sfc", "SFC3_GiLAN/0", 3, 1),     # its order conflicts with SFC1/SFC2's
])
def test_replicas_save_the_recirculations_one_pipelet_per_nf_costs(name, path, before, after):
    one = _examples(name, replicas=False).placement.best
    two = _examples(name).placement.best
    assert not one.replicas() and two.replicas()
    assert dict(one.recirculations)[path] == before
    assert dict(two.recirculations)[path] == after
    # replicas are only added: no path recirculates more than without them
    assert all(k <= dict(one.recirculations)[p] for p, k in two.recirculations)
    assert two.weighted_recirculations < one.weighted_recirculations


@pytest.mark.parametrize("name", ["every_nf.sfc", "p4sc_table3.sfc", "datacenter.sfc",
                                  "web.sfc", "flexmesh_fig9.sfc"])
def test_replicas_are_stateless_allowed_and_fit_their_pipelets(name):
    from sfclab.passes.common import first_seen
    from sfclab.passes.placement import (TNA_CORE_STAGES, _costs, _Switch, co_occurring,
                                         ingress_only_nfs, stateless_nfs, tna_extra_stages)

    c = _examples(name)
    best = c.placement.best
    stateless = stateless_nfs(c.catalog, first_seen(c.paths))
    assert set(best.replicas()) <= stateless
    assert not {"monitor", "heavy_hitter", "qos", "stateful_firewall"} & stateless
    only = ingress_only_nfs(c.catalog, first_seen(c.paths), c.paths)
    sw = _Switch(2, 12, 0, 0, TNA_CORE_STAGES, only, co_occurring(c.paths))
    cost = _costs(c.catalog, first_seen(c.paths), tna_extra_stages(c.catalog, c.paths))
    for pl, nfs in best.pipelets:
        assert sw.need(list(nfs), cost) <= sw.free[pl], (pl, nfs)
        assert pl.gress == "ingress" or not set(nfs) & only, (pl, nfs)


def test_the_route_through_replicas_is_the_cheapest_and_the_programs():
    """The instance each NF runs on (``route_of``) is the one the TNA program's visits
    take: the pipelet plan's recirculations are placement's, path by path."""
    from sfclab.codegen import generate
    from sfclab.passes.placement import route_of

    c = _examples("every_nf.sfc")
    plan = generate(c).composition.pipelets
    for p in c.paths:
        chosen, steps = route_of(p.nfs, c.placement.best, terminal=p.terminal)
        assert sum(steps) == dict(c.placement.best.recirculations)[p.id]
        assert plan.recirculations(p.id) == sum(steps)
    segments = next(p for p in c.paths if p.id == "segments/0")
    chosen, _ = route_of(segments.nfs, c.placement.best)
    assert len({at for at, nf in zip(chosen, segments.nfs) if nf == "sr_encap"}) == 3
