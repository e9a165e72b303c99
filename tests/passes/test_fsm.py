"""FSM pass: token states, rewinder and branch entries, widths, and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.errors import ChainValidationError, CompileError
from sfclab.ir.model import ChainSet, linear_chain
from sfclab.passes.fsm import (MAX_SAVED, TokenWidths, build_fsm, chain_saved_nfs, cond_source,
                               replay)
from sfclab.passes.generate import random_chains
from sfclab.passes.pipeline import build_pipelines

from passes_support import FIXTURES, check_golden, fixtures, load

LANG = Path(__file__).parent.parent / "fixtures" / "lang"


def render(plan) -> str:
    out = [f"slots: {' | '.join(plan.slots)}"]
    for f in plan.paths:
        out.append(f"{f.path.id} #{f.num}: " + "; ".join(
            f"s{s.state} {bin(s.bitmap)} [{', '.join(s.nodes)}] c{s.counter}" for s in f.states))
    out += [f"init {e.chain} -> #{e.path_num} {bin(e.bitmap)}" for e in plan.initializer]
    out += [f"rewind {e}" for e in plan.rewinder]
    out += [f"branch {e}" for e in plan.branches]
    out.append(f"widths {plan.widths}")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("path", fixtures("fsm"), ids=lambda p: p.stem)
def test_fixture_on_naive_pipeline(path):
    chains, cat = load(path)
    paths = chains.paths()
    slots = build_pipelines(paths, cat).naive.slots
    check_golden(path, render(build_fsm(slots, paths)))


def _all_inputs():
    for p in sorted(LANG.glob("*.sfc")):
        yield p.stem, load(p)[0]
    for seed in range(6):
        yield f"random{seed}", random_chains(12, seed=seed)
    yield "fsm_branches", load(FIXTURES / "fsm" / "branches_loops.sfc")[0]


@pytest.mark.parametrize("name,chains", list(_all_inputs()), ids=lambda x: x if isinstance(x, str) else "")
def test_replay_executes_exactly_each_path(name, chains: ChainSet):
    paths = chains.paths()
    r = build_pipelines(paths, dup_slots=1)
    for pipe in r.candidates():
        plan = build_fsm(pipe.slots, paths, limits=TokenWidths(bitmap=64))
        for f in plan.paths:
            nfs, terminal = replay(plan, f.path.id)
            assert nfs == list(f.path.nfs), (pipe.method, f.path.id)
            assert terminal == f.path.terminal
            assert f.passes == pipe.report.worst_passes or f.passes < pipe.report.worst_passes
        # every state runs at least one slot, except an empty path's only state
        assert all(s.bitmap or not f.path.nfs for f in plan.paths for s in f.states)


def test_states_and_rewinder_of_the_reversed_flow():
    paths = ChainSet.of([linear_chain("fwd", ["l3fwd", "firewall", "nat"]),
                         linear_chain("rev", ["l3fwd", "nat", "firewall"])]).paths()
    plan = build_fsm(("l3fwd", "firewall", "nat"), paths)
    rev = plan.path("rev/0")
    assert [(s.bitmap, s.nodes) for s in rev.states] == [(0b101, ("l3fwd", "nat")),
                                                           (0b010, ("firewall",))]
    assert rev.transitions == ((0, 1),)
    entries = [e for e in plan.rewinder if e.path == "rev/0"]
    assert [(e.state, e.next_state, e.bitmap, e.done) for e in entries] == [
        (0, 1, 0b010, False), (1, None, None, True)]
    assert [e.path_num for e in plan.initializer] == [1, 2]
    assert plan.widths == TokenWidths(path_id=2, state=1, bitmap=3, counter=1)


def test_branch_entries_point_at_the_other_outcome():
    chains, _ = load(FIXTURES / "fsm" / "branches_loops.sfc")
    plan = build_fsm(build_pipelines(chains.paths()).optimal.slots, chains.paths())
    web = [e for e in plan.branches if e.path.startswith("web/")]
    assert {(e.path, e.kind, e.target) for e in web} == {
        ("web/0", "else", "web/1"), ("web/1", "then", "web/0")}
    cases = {(e.path, e.cases, e.target) for e in plan.branches if e.kind == "case"}
    assert cases == {("loop/0", (2,), "loop/1"), ("loop/1", (1,), "loop/0")}


def test_loop_counter_is_carried_by_the_rewinder():
    chains, _ = load(FIXTURES / "fsm" / "branches_loops.sfc")
    paths = [p for p in chains.paths() if p.chain == "loop"]
    plan = build_fsm(("monitor", "l3fwd", "nat", "firewall"), paths)
    f = plan.paths[0]
    assert [s.counter for s in f.states] == [0, 1, 2]
    assert [e.counter for e in plan.rewinder if e.path_num == f.num and not e.done] == [1, 2]


def test_widths_are_checked_against_the_header():
    paths = linear_chain("c", ["nat", "firewall", "l3fwd"]).paths()
    with pytest.raises(CompileError, match="bitmap field needs 3 bits") as e:
        build_fsm(("nat", "firewall", "l3fwd"), paths, limits=TokenWidths(bitmap=2))
    assert "widths=bitmap=3, at most 32" in e.value.hint
    with pytest.raises(CompileError, match="state field"):
        build_fsm(("l3fwd", "firewall", "nat"), paths, limits=TokenWidths(state=0))


def test_widths_beyond_the_sfc_header_are_refused():
    """The SFC header's fields are fixed (a 32-bit bitmap): a wider token would be
    truncated by p4c and refused by P4Runtime, so the option stops at the header's."""
    import sfclab

    with pytest.raises(CompileError, match="the SFC header's bitmap field has 32 bits"):
        sfclab.compile("chain a: l3fwd", widths=TokenWidths(bitmap=64))
    import random

    nfs = ["firewall", "nat", "lb", "l3fwd", "monitor", "qos", "ids", "ipsg", "heavy_hitter",
           "vgw", "reporter", "l2fwd", "router", "classifier", "stateful_firewall"]
    rng = random.Random(3)                # 40 chains: MA-FSA's pipeline needs > 32 slots
    text = "\n".join(f"chain c{i} match tcp.dport == {1000 + i}: "
                     + " -> ".join(rng.sample(nfs, 5)) for i in range(40))
    with pytest.raises(CompileError, match="bitmap field needs") as e:
        sfclab.compile(text, pipeline="mafsa")
    assert "widths=" not in e.value.hint


def test_nf_without_slot_is_an_error():
    with pytest.raises(CompileError, match="has no slot"):
        build_fsm(("nat",), linear_chain("c", ["lb"]).paths())


def test_empty_path():
    cs = ChainSet.of([linear_chain("e", [])])
    plan = build_fsm((), cs.paths())
    assert plan.paths[0].states[0].bitmap == 0
    assert replay(plan, "e/0") == ([], "output")


# --- saved metadata: a branch on the field of an NF before the branching one ----------------

EDGE = ("chain e { input => l2fwd => qos; qos => (output : flood ? l2fwd.flood_flag == 0);"
        " flood => output; }")


def test_a_branch_on_an_earlier_nf_reads_its_saved_value_across_passes():
    """qos before l2fwd in the pipeline: l2fwd runs in pass 0, the branch after qos in
    pass 1 tests what l2fwd saved."""
    chains = sfclab.parse(EDGE)
    plan = build_fsm(("qos", "l2fwd", "flood"), chains.paths(),
                     saved={"e": chain_saved_nfs(chains["e"])})
    assert plan.saved == (("e", ("l2fwd",)),) and plan.n_saved == 1
    assert [(e.path, e.state, e.slot, e.index) for e in plan.saves] == [
        ("e/0", 0, 1, 0), ("e/1", 0, 1, 0)]
    assert [(e.path, e.state, e.slot, e.saved) for e in plan.branches] == [
        ("e/0", 1, 0, 0), ("e/1", 1, 0, 0)]
    # the same plan as the one the paths' decisions alone give
    assert build_fsm(("qos", "l2fwd", "flood"), chains.paths()) == plan


def test_a_branch_on_the_branching_nf_saves_nothing():
    chains, _ = load(FIXTURES / "fsm" / "branches_loops.sfc")
    plan = build_fsm(build_pipelines(chains.paths()).optimal.slots, chains.paths())
    assert plan.saves == () and plan.n_saved == 0
    assert all(e.saved is None for e in plan.branches)
    assert all(cond_source(c) != "metadata" or c.nf == n for n, k, c in
               ((e.node, e.kind, e.cond) for e in plan.branches))


def test_each_chain_numbers_its_saved_nfs_from_zero():
    chains = sfclab.parse(EDGE + "\nchain g { input => classifier => lb => nat;"
                          " nat => (0@l3fwd : 1@monitor # lb.backend); monitor => l3fwd;"
                          " l3fwd => (output : cpu ? classifier.class_id == 0); }")
    assert [chain_saved_nfs(c) for c in chains] == [("l2fwd",), ("lb", "classifier")]
    compiled = sfclab.compile(chains)
    assert compiled.fsm.n_saved == 2
    # a save entry after every run of a saved NF on every path of its chain
    for f in compiled.fsm.paths:
        saved = dict(compiled.fsm.saved)[f.path.chain]
        want = [(n, saved.index(n)) for n in f.path.nodes if n in saved]
        assert [(e.node, e.index) for e in compiled.fsm.saves if e.path == f.path.id] == want


def test_too_many_saved_nfs_is_refused_at_the_condition():
    n = MAX_SAVED + 3
    body = " ".join(f"firewall#{k} => (firewall#{k + 1} : drop ? firewall#{k - 1}.verdict == 0);"
                    for k in range(2, n))
    text = f"chain many {{\n input => firewall#1 => firewall#2;\n {body}\n firewall#{n} => output;\n}}"
    with pytest.raises(ChainValidationError, match=f"fields of {MAX_SAVED + 1} NFs") as e:
        sfclab.compile(text)
    assert e.value.line == 3 and "branch right after" in e.value.hint
    assert text.splitlines()[2][e.value.column - 1:].startswith(f"firewall#{n} : drop")
