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
        r = place(paths, pipes=2, stages=8)
        assert r.best.weighted_recirculations <= r.naive.weighted_recirculations
        used = {nf for _, nfs in r.best.pipelets for nf in nfs}
        assert used == {nf for p in paths for nf in p.nfs}


def test_stage_budget_is_respected_and_infeasible_is_an_error():
    from sfclab.p4.catalog import load_default

    paths = random_chains(10, seed=1).paths()
    r = place(paths, pipes=4, stages=4)
    for _, nfs in r.best.pipelets:
        assert sum(load_default().resolve(n).stages for n in nfs) <= 4
    with pytest.raises(CompileError, match="stages but a pipelet has 2"):
        naive_placement(linear_chain("c", ["heavy_hitter"]).paths(), stages=2)
    with pytest.raises(CompileError, match="2 pipes offer 16"):
        place(paths, pipes=2, stages=4)
