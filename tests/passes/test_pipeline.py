"""Pipeline pass: FlexMesh MA-FSA pipeline, naive baseline, exact optimiser."""

from __future__ import annotations

import itertools
import random

import pytest

from sfclab.ir.model import ChainSet, ServicePath, linear_chain
from sfclab.passes.common import weighted_recirculations
from sfclab.passes.generate import random_chains
from sfclab.passes.mafsa import build_mafsa
from sfclab.passes.ordering import add_duplicates, local_search, optimal_order, order_cost
from sfclab.passes.pipeline import build_pipelines, mafsa_pipeline, naive_pipeline, optimal_pipeline

from passes_support import FIXTURES, check_golden, fixtures, load


def render(result) -> str:
    lines = [str(p) + ("" if p.exact else " [heuristic]") for p in result.candidates()]
    lines.append("chosen: " + result.chosen.method)
    lines.append("pairs: " + ", ".join(f"{a}>{b}" for a, b in result.pairs))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", fixtures("pipeline"), ids=lambda p: p.stem)
def test_fixture(path):
    chains, cat = load(path)
    check_golden(path, render(build_pipelines(chains.paths(), cat, dup_slots=2)))


def test_flexmesh_fig1_reversed_flow_needs_a_duplicate_fw():
    chains, _ = load(FIXTURES / "pipeline" / "flexmesh_fig1.sfc")
    paths = chains.paths()
    naive = naive_pipeline(paths)
    assert naive.slots == ("l3fwd", "firewall", "nat")
    assert naive.report.worst_passes == 2 and naive.report.worst_path == "reverse/0"
    m = mafsa_pipeline(paths)
    assert sorted(m.slots) == ["firewall", "firewall", "l3fwd", "nat"]
    assert m.report.duplicated_slots == 1
    assert m.report.weighted_recirculations == 0 and m.report.worst_passes == 1


def test_flexmesh_fig11_p6_and_p7():
    chains, _ = load(FIXTURES / "pipeline" / "flexmesh_fig11.sfc")
    paths = chains.paths()
    r = build_pipelines(paths)
    p6 = next(p for p in paths if p.chain == "P6")
    assert p6.nfs == ("l3fwd", "ipsg", "firewall")
    # the MA-FSA pipeline runs every policy in one pass
    assert r.mafsa.report.worst_passes == 1
    # without duplicates some policy must go round (P.5 contradicts P.4)
    assert r.optimal.report.weighted_recirculations > 0
    assert r.optimal.report.weighted_recirculations <= r.naive.report.weighted_recirculations


def test_mafsa_is_minimal_and_accepts_exactly_the_words():
    words = [("a", "b", "c"), ("a", "c"), ("b", "b", "c"), ("a", "b")]
    auto = build_mafsa(words)
    for w in words:
        assert auto.accepts(w)
    assert not auto.accepts(("a",)) and not auto.accepts(("b", "c"))
    # right languages: start, {bc,c,b}, {bc}, {c,ε}, {c}, {ε}: six states, all
    # word ends share the final state
    assert auto.n_states == 6 and len(auto.finals) == 2


def test_mafsa_empty_and_single():
    assert build_mafsa([]).n_states == 1
    assert mafsa_pipeline([]).slots == ()
    one = linear_chain("c", ["nat"]).paths()
    assert mafsa_pipeline(one).slots == ("nat",)


def _random_paths(rng: random.Random, n_nfs: int) -> list[ServicePath]:
    nfs = [f"n{i}" for i in range(n_nfs)]
    paths = []
    for k in range(rng.randint(1, 6)):
        seq = tuple(rng.choice(nfs) for _ in range(rng.randint(1, 7)))
        paths.append(ServicePath(f"c{k}", 0, seq, seq, "output", rng.random()))
    return paths


@pytest.mark.parametrize("seed", range(40))
def test_exact_optimiser_matches_brute_force(seed):
    rng = random.Random(seed)
    paths = _random_paths(rng, rng.randint(1, 8))
    nfs = list(dict.fromkeys(nf for p in paths for nf in p.nfs))
    best = min(weighted_recirculations(perm, paths) for perm in itertools.permutations(nfs))
    got = optimal_pipeline(paths)
    assert got.exact
    assert got.report.weighted_recirculations == pytest.approx(best)
    # the heuristic is never better than the optimum
    from sfclab.passes.common import pair_weights
    _, h = local_search(nfs, pair_weights(paths))
    assert h >= best - 1e-9


def test_order_cost_equals_pass_count():
    rng = random.Random(7)
    for _ in range(20):
        paths = _random_paths(rng, 6)
        nfs = list(dict.fromkeys(nf for p in paths for nf in p.nfs))
        rng.shuffle(nfs)
        from sfclab.passes.common import pair_weights
        assert order_cost(nfs, pair_weights(paths)) == pytest.approx(
            weighted_recirculations(nfs, paths))


def test_optimal_order_tiny():
    assert optimal_order([], {}) == ([], 0.0)
    assert optimal_order(["a"], {("a", "a"): 0.5}) == (["a"], 0.5)


def test_heuristic_above_the_exact_limit():
    paths = random_chains(20, seed=11).paths()
    exact = optimal_pipeline(paths, exact_limit=20)
    heur = optimal_pipeline(paths, exact_limit=4)
    assert exact.exact and not heur.exact
    assert heur.report.weighted_recirculations >= exact.report.weighted_recirculations - 1e-9


def test_duplicates_tradeoff_curve_is_monotone():
    paths = random_chains(10, seed=2).paths()
    base = optimal_pipeline(paths)
    curve = add_duplicates(base.slots, paths, 4)
    costs = [c for _, c in curve]
    assert costs == sorted(costs, reverse=True)
    assert all(len(s) == len(base.slots) + k for k, (s, _) in enumerate(curve))


def test_auto_falls_back_to_optimal_when_mafsa_is_too_wide():
    paths = random_chains(20, seed=1).paths()
    r = build_pipelines(paths, max_slots=8)
    assert r.chosen is r.optimal
    r = build_pipelines(paths, max_slots=10_000)
    assert r.chosen is r.mafsa and r.mafsa.report.worst_passes == 1


def test_every_path_runs_in_one_pass_on_the_mafsa_pipeline():
    for seed in range(5):
        paths = random_chains(15, seed=seed).paths()
        assert mafsa_pipeline(paths).report.worst_passes == 1


def test_unknown_choice_and_nf():
    from sfclab.errors import CompileError
    with pytest.raises(CompileError, match="unknown pipeline choice"):
        build_pipelines(linear_chain("c", ["nat"]).paths(), choose="best")
    with pytest.raises(CompileError, match="not in the NF catalogue"):
        mafsa_pipeline(ChainSet.of([linear_chain("c", ["warp_drive"])]).paths())
