"""The catalogue's stage estimates and placement's core against what the Tofino compiler uses
(issue 24, point 4).

Placement (``sfclab/passes/placement.py``) adds up each NF's ``stages`` (its manifest,
``p4/nf/<nf>.json``) on a pipelet after sfclab's own core (``TNA_CORE_STAGES``).  Those
figures are honest when the compiler never uses more: each library NF alone spans at most its
estimate, and a program's ingress uses at most the core plus its NFs' estimates (what
placement says fits, the compiler places in that many stages).  With p4c-barefoot installed
the NF programs are compiled (once per session, shared with test_tofino.py); without it the
table recorded in the repository (``tofino_measured.json``) stands in, so a lowered estimate
fails on any machine.
"""

from __future__ import annotations

import functools

import pytest

from sfclab.p4.catalog import load_default
from sfclab.passes.placement import TNA_CORE_STAGES

from tofino_measure import RECORD, load_record, measure
from tofino_programs import NFS, needs_tofino_compiler, placed_chain, swept_nf_programs


TO_RECORD = "measure again: python benchmarks/bench_tofino.py --only nfs --record"


def test_no_estimate_is_below_the_recorded_measurement():
    """Runs without the compiler: every library NF is in the table, and no NF's estimate
    nor placement's core is below what p4c-barefoot was measured to use."""
    table = load_record()
    cat = load_default()
    assert set(table["nfs"]) == set(cat.names()), \
        f"{RECORD.name} does not list the library's NFs: {TO_RECORD}"
    low = {nf: f"estimate {cat.get(nf).stages} < measured {span}"
           for nf, span in table["nfs"].items() if cat.get(nf).stages < span}
    assert not low, (f"NF estimates below {table['compiler']}'s spans ({RECORD.name}): {low}; "
                     "raise `stages` in p4/nf/<nf>.json")
    assert TNA_CORE_STAGES.ingress >= table["core"]["ingress"]
    assert TNA_CORE_STAGES.egress >= table["core"]["egress"]


def test_the_record_says_what_it_measured():
    table = load_record()
    assert table["compiler"].startswith(("p4c-barefoot ", "bf-p4c "))
    assert "--record" in table["command"]
    assert all(isinstance(s, int) and s >= 0 for s in table["nfs"].values())


def _compiled(tofino_builds, programs):
    futures = {what: tofino_builds.submit(g) for what, g in programs.items()}
    out = {}
    for what, f in futures.items():
        b = f.result()
        assert b.result.ok, f"{what}: refused by the Tofino compiler"
        out[what] = measure(b.out, programs[what])
        assert out[what] is not None, f"{what}: the compiler wrote no .bfa"
    return out


@needs_tofino_compiler
def test_each_library_nf_alone_spans_at_most_its_estimate(tofino_builds):
    """Before issue 24's fix 14 of the 18 estimates were below the compiler's spans (e.g. qos
    3 for 5, stateful_firewall 3 for 6, router 1 for 3)."""
    cat = load_default()
    measured = _compiled(tofino_builds, swept_nf_programs())
    over = {}
    for nf in NFS:
        if f"{nf} alone" not in measured:       # not in CI's sweep: the record checks it
            continue
        for slot_nf, span in measured[f"{nf} alone"].spans:
            if span > cat.get(slot_nf).stages:
                over[nf] = f"span {span} > estimate {cat.get(slot_nf).stages}"
    assert not over, f"the compiler uses more stages than the catalogue says: {over}"


@needs_tofino_compiler
def test_placements_budget_holds_what_the_compiler_places(tofino_builds):
    """Each NF alone and mid-chain, per pipe and gress: the pipelet uses at most what
    placement counts (sfclab's core plus its slots' estimates), and the core's own stages
    (no NF table there) are at most TNA_CORE_STAGES: 2 of an ingress, 1 of an egress
    (issue 31; 8 and 2 before)."""
    measured = _compiled(tofino_builds, swept_nf_programs())
    wrong = {}
    for what, m in measured.items():
        for p in m.pipelets:
            core = TNA_CORE_STAGES.ingress if p.gress == "ingress" else TNA_CORE_STAGES.egress
            if p.need > p.plan or len(p.core) > core:
                wrong[f"{what} {p.name}"] = (f"{p.need} stages (plan {p.plan}), core "
                                             f"{len(p.core)} ({p.core})")
    assert not wrong, wrong


@needs_tofino_compiler
def test_a_chain_placement_fits_in_one_ingress_pipelet_fits_a_tofino_pipe(tofino_builds):
    """firewall => l3fwd: placement puts both on I0 (2 + 2 stages after the core's 2 of 12);
    the compiled program's pipe 0 ingress uses the core's 2 and the NFs' 4 stages at most.
    (The program is queued with the session's others: ``tofino_programs.programs_of``.)"""
    compiled, gen = placed_chain()
    (i0, nfs), *rest = compiled.placement.best.pipelets
    assert str(i0) == "I0" and set(nfs) == {"firewall", "l3fwd"}
    assert all(not n for _, n in rest)
    b = tofino_builds.submit(gen).result()
    assert b.result.ok
    m = measure(b.out, gen)
    assert m.stages("ingress") <= 2 + 4 and not m.over


#: A stand-in for bf-p4c: accepts the program and writes a .bfa per pipe whose pipe 0
#: ingress uses STAGES stages (as p4c-barefoot 9.13.4 does for programs longer than a
#: Tofino 1 pipe), and the P4Info sfclab wrote.
_FAKE_BF_P4C = """\
import os, sys, pathlib
args = sys.argv[1:]
out = pathlib.Path(args[args.index("-o") + 1])
info = pathlib.Path(args[args.index("--p4runtime-files") + 1])
n = int(os.environ["FAKE_STAGES"])
for pipe in ("pipe0", "pipe1"):
    (out / pipe).mkdir(parents=True, exist_ok=True)
    k = n if pipe == "pipe0" else 2
    (out / pipe / "program.bfa").write_text("version: 1.0.1\\n" + "".join(
        f"stage {i} ingress:\\n  ternary_match t{i} 0:\\n    p4: {{ name: t{i} }}\\n"
        for i in range(k)) + "stage 0 egress:\\n  ternary_match e0 0:\\n    p4: { name: e0 }\\n")
info.write_text((info.parent / "p4info.txt").read_text())
"""


@pytest.mark.parametrize("stages, refused", [(15, True), (12, False)])
def test_compile_p4c_refuses_a_program_past_a_tofino_1s_last_stage(
        stages, refused, tmp_path, monkeypatch, no_tools, capsys):
    """Before issue 31 a warning, exit status 0; now an error naming the pipe, the gress and
    the stages, and a non-zero exit (the compiler's own exit status is 0 for it)."""
    from targets_support import write_exe

    from sfclab.cli import main

    write_exe(tmp_path / "bin" / "bf-p4c", _FAKE_BF_P4C)
    monkeypatch.setenv("SFCLAB_BF_P4C", str(tmp_path / "bin" / "bf-p4c"))
    monkeypatch.setenv("FAKE_STAGES", str(stages))
    src = tmp_path / "c.sfc"
    src.write_text("chain c match ipv4.dst == 10.0.1.0/24 { input => firewall => output; }\n")
    rc = main(["compile", "--arch", "tna", "--p4c", "-o", str(tmp_path / "o"), str(src)])
    out = capsys.readouterr()
    assert f"pipe 0 ingress: slot0_firewall; stages used {stages} of 12" in out.out
    if refused:
        assert rc == 1
        assert ("the Tofino compiler placed tables past a Tofino 1's last stage (11): pipe 0 "
                "ingress: stages 12-14 (t12, t13, t14)" in out.err)
        assert "hint: compile for more pipes" in out.err
    else:
        assert rc == 0, out.err
        assert "error" not in out.err


@functools.cache
def _h2():
    """h2_nat_lb_branch.sfc's TNA program (pipe 1's egress: lb | classifier, then qos)."""
    from pathlib import Path

    import sfclab
    from sfclab.codegen import generate
    from sfclab.lang import parse_file

    src = Path(__file__).resolve().parents[1] / "heldout_new" / "chains" / "h2_nat_lb_branch.sfc"
    return generate(sfclab.compile(parse_file(src), arch="tna", pipes=2))


def _egress_bfa(gen, conditions: dict[int, list[str]]) -> str:
    """A ``.bfa`` of pipe 1's egress as p4c-barefoot 9.13.4 laid out h2's (lb 0-2, qos 3-7,
    the core's end in 8), with the checksum-update conditions in the stages given."""
    slot = {s.nf: s.index for s in gen.composition.slots}
    tables = {0: [f"slot{slot['lb']}_lb_backends"], 2: [f"slot{slot['lb']}_lb_backends_1"],
              3: [f"slot{slot['qos']}_qos_dscp_marking"], 7: [f"slot{slot['qos']}_qos_2"],
              8: ["tbl_end"]}
    for st, names in conditions.items():
        tables.setdefault(st, []).extend(names)
    return "version: 1.0.1\n" + "".join(
        f"stage {st} egress:\n" + "".join(f"  exact_match {n} {i}:\n    p4: {{ name: {n} }}\n"
                                          for i, n in enumerate(names))
        for st, names in sorted(tables.items()))


TCP = "egresshdr.tcp.checksum_encode_update_condition_6"
UDP = "egresshdr.udp.checksum_encode_update_condition_7"


@pytest.mark.parametrize("conditions, stages, need", [
    ({9: [TCP], 10: [UDP]}, 11, 9),        # as the compiler placed h2's: a stage each
    ({9: [TCP, UDP]}, 10, 9),              # both in one stage of their own
    ({8: [TCP, UDP]}, 9, 9),               # beside the core's end (a full pipe's way)
    ({5: [TCP], 6: [UDP]}, 9, 9),          # stages of their own, but before the NFs' end
])
def test_the_checksum_conditions_stages_at_the_end_are_room_not_need(
        conditions, stages, need):
    """p4c-barefoot 9.13.4 gave h2's pipe 1 egress 11 stages where placement counted 10:
    with room, the TCP and the UDP checksum-update condition get a stage each after the
    other tables (9, 10); in a full pipe both go beside the last stage's tables (filled to
    the 12 placement counts, each compiled in 12: h7_p4sc.sfc's pipe 0 ingress, h2 with
    monitor after qos, p4sfc_mixed.sfc with reporter after monitor).  What a pipelet needs
    leaves those stages aside; before, the check saw 11 stages for a count of 10."""
    from sfclab.targets.tofino.stages import pipelet_stages, stage_report

    gen = _h2()
    (e1,) = [p for p in pipelet_stages({1: _egress_bfa(gen, conditions)}, gen)
             if p.name == "E1"]
    assert (e1.stages, e1.need, e1.plan) == (stages, need, 10)
    report = stage_report([e1])
    if stages > need:
        own = ", ".join(map(str, range(need, stages)))
        assert (f"conditions took stage(s) {own} of their own at the end, where a full pipe "
                f"puts them beside its last tables: 9 stages without them (plan 10)") in report
    else:
        assert "conditions took" not in report
    lb = next(s for s in e1.slots if s.nf == "lb")
    assert (lb.span, lb.estimate) == (3, 4)       # lb 3, and its checksum condition
