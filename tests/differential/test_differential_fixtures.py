"""The model against BMv2 on the hand-written programs of tests/fixtures/differential/:
every packet's outputs (ports and bytes; a drop is none) and every refusal the same,
and each program's STF expectations met on both."""

from __future__ import annotations

import pytest
from diff_support import FIXTURES, needs_bmv2
from harness import compare, compile_all, describe

pytestmark = [needs_bmv2, pytest.mark.bmv2]

PROGRAMS = sorted(FIXTURES.glob("*.p4"))


def test_every_fixture_has_a_test():
    assert len(PROGRAMS) >= 9
    for p in PROGRAMS:
        assert p.with_suffix(".stf").is_file(), f"{p.name} has no .stf beside it"
        assert "expect" in p.with_suffix(".stf").read_text(), f"{p.stem}.stf expects nothing"


def test_model_agrees_with_bmv2_on_every_fixture(bmv2, tmp_path):
    builds = compile_all({p.stem: p for p in PROGRAMS}, tmp_path)
    refused = {n: b for n, b in builds.items() if isinstance(b, Exception)}
    assert not refused, f"p4c-bm2-ss refused fixtures: {refused}"
    outcomes = []
    for p in PROGRAMS:
        o = compare(p.stem, p, p.with_suffix(".stf").read_text(), builds[p.stem], bmv2)
        outcomes.append(o)
        for report in (o.model, o.bmv2):
            if report is not None and not o.differences:
                assert report.ok, f"{p.stem} on {report.target}:\n{report.text()}"
    assert all(o.same for o in outcomes), describe(outcomes)


def test_sfclab_stf_on_bmv2(capsys):
    """The user's command: compile, start a BMv2 in its own network namespace, run, stop."""
    from sfclab.cli.commands import main

    assert main(["stf", str(FIXTURES / "ternary_width.p4"), "--target", "bmv2", "-v"]) == 0
    out = capsys.readouterr().out
    assert "ternary_width.stf:1: packet on port 0 010000000000000000 -> port 1: 010006000180" in out
    assert out.splitlines()[-1] == "bmv2: 2 of 2 expectation(s) met"
