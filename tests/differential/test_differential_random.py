"""The model against BMv2 on random well-typed v1model programs (p4gen): a fixed set of
seeds, each program compiled with p4c-bm2-ss and run with its random packets and
entries on both.  ``benchmarks/fuzz_model.py`` runs thousands of seeds."""

from __future__ import annotations

import pytest
from diff_support import needs_bmv2
from harness import compare, compile_all, describe
from p4gen import generate

#: Seeds the suite runs (a few seconds of p4c each, two at a time).
SEEDS = range(1000, 1010)


def test_generator_is_deterministic():
    a, b = generate(7), generate(7)
    assert (a.text, a.stf) == (b.text, b.stf)
    assert generate(8).text != a.text


@needs_bmv2
@pytest.mark.bmv2
def test_model_agrees_with_bmv2_on_random_programs(bmv2, tmp_path):
    programs = {}
    for seed in SEEDS:
        g = generate(seed, copies=False)       # copies make BMv2's stale headers racy
        path = tmp_path / f"s{seed}.p4"
        path.write_text(g.text)
        programs[f"s{seed}"] = (path, g.stf)
    builds = compile_all({n: p for n, (p, _) in programs.items()}, tmp_path / "build")
    refused = [n for n, b in builds.items() if isinstance(b, Exception)]
    assert len(refused) <= 1, f"p4c refused too many generated programs: {refused}"
    outcomes = [compare(n, p, stf, builds[n], bmv2) for n, (p, stf) in programs.items()
                if n not in refused]
    assert all(o.same for o in outcomes), describe(outcomes)
