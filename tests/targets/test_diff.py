"""sfclab diff-targets: the same program and packets on two targets, compared per packet."""

from __future__ import annotations

from pathlib import Path

import pytest
from targets_support import NoRoutes

import sfclab
from sfclab.cli import main
from sfclab.codegen import generate
from sfclab.errors import TargetError
from sfclab.targets.diff import diff_targets
from sfclab.targets.model import start

WEB = Path(__file__).resolve().parents[2] / "examples" / "web.sfc"


def test_the_same_program_runs_the_same_on_two_models():
    report = diff_targets(generate(sfclab.compile(WEB.read_text())), packets=3)
    assert report.same and report.compared == 6
    assert "every packet ran the same way" in report.text()


def test_a_divergence_is_reported_with_both_traces():
    with NoRoutes() as other:
        report = diff_targets(generate(sfclab.compile(WEB.read_text())), "model", other,
                              packets=2)
    assert not report.same
    chain, k, what, ta, tb = report.divergences[0]
    assert chain == "web" and k == 0
    assert any(w.startswith("outcome: port 1 vs drop") for w in what), what
    text = report.text()
    assert "diverge; the first is packet 0 of web" in text
    assert "ipv4_lpm: hit" in ta and "ipv4_lpm: miss" in tb


def test_a_target_sfclab_cannot_send_into_says_so(capsys):
    server = start()
    try:
        with pytest.raises(TargetError, match="cannot put packets on a model switch's ports"):
            diff_targets(generate(sfclab.compile("chain a: l2fwd")), "model",
                         f"model://{server.address}", packets=1)
    finally:
        server.stop()


def test_cli(capsys):
    assert main(["diff-targets", str(WEB), "--packets", "2", "--b", "model"]) == 0
    assert "every packet ran the same way" in capsys.readouterr().out
    assert main(["diff-targets", str(WEB), "--b", "bmx://x"]) == 1
    assert "cannot read the target" in capsys.readouterr().err
    assert main(["diff-targets", str(WEB), "--bind", "p1"]) == 1
    assert "NAME=NUMBER" in capsys.readouterr().err


def test_both_targets_run_every_path_of_every_class(capsys):
    """The packets compared cover each class's paths: web/1 (the firewall's deny) too."""
    branches = Path(__file__).resolve().parents[1] / "fixtures" / "traffic" / "branches.sfc"
    report = diff_targets(generate(sfclab.compile(branches.read_text())), packets=2)
    assert report.same
    for name, plan in report.coverage.items():
        assert set(plan.expected) == set(plan.paths), (name, plan.text())
    assert "service paths covered: 8 of 8" in report.text()
    assert main(["diff-targets", str(WEB), "--packets", "2", "--b", "model"]) == 0
    assert "service paths covered: 3 of 3" in capsys.readouterr().out


def test_a_chain_no_packet_reaches_is_reported_not_fatal():
    report = diff_targets(generate(sfclab.compile("chain all: l2fwd\n"
                                                  "chain web match tcp.dport == 80: l3fwd")),
                          packets=2)
    assert report.same and report.compared == 2
    text = report.coverage_text()
    assert text.startswith("service paths covered: 1 of 2\n")
    assert text.count("chain 'web' gets no packets: chain 'all', written before it") == 1
