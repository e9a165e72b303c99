"""sfclab's TNA programs run on the embedded model's TNA semantics (``model?arch=tna``) as
the v1model program runs on the model: same outcome, bytes and NFs in order; and each
packet recirculates as often as placement planned for its service path (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.lang import parse_file
from sfclab.targets.connect import open_target
from sfclab.targets.traffic.coverage import all_class_traffic
from sfclab.targets.diff import _for_arch, diff_targets
from sfclab.targets.ports.packet_io import send_many

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name, bindings", [
    ("every_nf.sfc", {}), ("p4sfc_mixed.sfc", {})])     # (all of them: the report's figures)
def test_tna_program_runs_as_v1model_and_recirculates_as_planned(name, bindings):
    v1 = generate(sfclab.compile(parse_file(EXAMPLES / name), arch="v1model"),
                  options=CodegenOptions(bindings=bindings))
    report = diff_targets(v1, "model", "model?arch=tna", packets=2)
    assert report.same, report.text()
    t = open_target("model?arch=tna")
    try:
        tna = _for_arch(v1, v1, t)
        t.push(tna)
        plan = tna.composition.pipelets
        seen, wrong = set(), []
        for traffic in all_class_traffic(v1, 2).values():
            pairs = [(cp.port, cp.packet) for cp in traffic.packets]
            for path, r in zip(traffic.expected, send_many(t, pairs)):
                if path not in plan.visits:          # a detour's switch paths differ
                    continue
                got = sum(1 for e in r.trace.events if e.kind == "recirculate")
                seen.add(got)
                if got != plan.recirculations(path):
                    wrong.append((path, got, plan.recirculations(path)))
    finally:
        t.close()
    assert not wrong, wrong
    if name == "every_nf.sfc":
        assert max(seen) >= 1          # packets did cross pipelets through a recirculation
