"""The hand-written TNA programs the embedded Tofino model's tests run
(``tests/model/tna/programs``) are Tofino's: ``p4c-barefoot`` compiles each, and the
P4Info sfclab derives for it (the names and ids the model's P4Runtime server takes) is
the compiler's.  Where the Tofino compiler is not installed the test skips, saying so."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

from tna_diff_support import full_sweep
from tofino_programs import needs_tofino_compiler, tofino_compiler

from sfclab.codegen.p4c import compiler_p4info, run_p4c
from sfclab.codegen.p4info import build_p4info, compare_p4info
from sfclab.p4 import parse_p4_file
from sfclab.targets.model.tna import TnaSwitch

PROGRAMS = Path(__file__).resolve().parents[1] / "model" / "tna" / "programs"
FILES = sorted(p.name for p in PROGRAMS.glob("*.p4"))
#: The programs CI compiles (p4c-barefoot takes 10-20 s a program): the one with a
#: pipeline per pipe and the one with every extern the model runs.
CI_PROGRAMS = ("externs.p4", "multipipe.p4")


def test_the_programs_are_the_ones_the_model_tests_run():
    assert {"forward.p4", "multipipe.p4", "loops.p4", "resubmit.p4", "mirror.p4",
            "externs.p4", "checksum.p4"} <= set(FILES)
    for name in FILES:                               # and the model loads each
        TnaSwitch(PROGRAMS / name)


@needs_tofino_compiler
def test_p4c_barefoot_compiles_each_and_its_p4info_is_sfclabs(tmp_path):
    exe = tofino_compiler()

    def build(name: str):
        out = tmp_path / name.removesuffix(".p4")
        out.mkdir()
        return name, out, run_p4c(PROGRAMS / name, "tna", out, exe=exe)

    files = FILES if full_sweep() else CI_PROGRAMS
    assert set(CI_PROGRAMS) <= set(FILES)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        builds = list(pool.map(build, files))
    for name, out, res in builds:
        assert res.ok, f"{name}: {res.output[-2000:]}"
        ours = build_p4info(parse_p4_file(PROGRAMS / name), arch="tna")
        theirs = compiler_p4info(out / "p4info.p4c.txt")
        assert compare_p4info(ours, theirs) == [], name


def test_each_pipelines_tables_carry_its_name():
    """As bf-p4c names them (the P4Info test above holds sfclab's P4Info to its)."""
    info = build_p4info(parse_p4_file(PROGRAMS / "multipipe.p4"), arch="tna")
    names = sorted(t.preamble.name for t in info.tables)
    assert names == ["pipe_a.IngressA.types", "pipe_b.IngressB.types"]
    sw = TnaSwitch(PROGRAMS / "multipipe.p4")
    assert sorted(sw.tables) == names
    assert sw.pipe_tables() == {0: ["pipe_a.IngressA.types"], 1: ["pipe_b.IngressB.types"]}
