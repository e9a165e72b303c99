"""sfclab diff-targets: the same program and packets on two targets, compared per packet."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.cli import main
from sfclab.codegen import generate
from sfclab.errors import TargetError
from sfclab.targets.diff import diff_targets
from sfclab.targets.model import ModelTarget, start

WEB = Path(__file__).resolve().parents[2] / "examples" / "web.sfc"


class NoRoutes(ModelTarget):
    """A switch that behaves differently: its routing table is emptied after the push."""

    def push(self, gen):
        n = super().push(gen)
        for name in self.switch.tables:
            if name.endswith("l3fwd.ipv4_lpm"):
                self.switch.clear(name)
        return n


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
    assert main(["diff-targets", str(WEB), "--packets", "2"]) == 0
    assert "every packet ran the same way" in capsys.readouterr().out
    assert main(["diff-targets", str(WEB), "--b", "bmx://x"]) == 1
    assert "cannot read the target" in capsys.readouterr().err
    assert main(["diff-targets", str(WEB), "--bind", "p1"]) == 1
    assert "NAME=NUMBER" in capsys.readouterr().err


def test_bmv2_pushes_p4cs_p4info(tmp_path, monkeypatch):
    """Pushing to BMv2 compiles with p4c-bm2-ss and pushes p4c's P4Info, not sfclab's
    (a stand-in p4c writes a JSON and a P4Info with one id changed)."""
    from sfclab.targets.connect import _bmv2_config

    fake = tmp_path / "p4c-bm2-ss"
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import sys, pathlib\n"
        "a = sys.argv\n"
        "pathlib.Path(a[a.index('-o') + 1]).write_text('{\"bmv2\": \"json\"}')\n"
        "dst = pathlib.Path(a[a.index('--p4runtime-files') + 1])\n"
        "text = (dst.parent / 'p4info.txt').read_text()\n"
        "dst.write_text(text.replace('alias: \"rewinder\"', 'alias: \"from_p4c\"'))\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SFCLAB_P4C", str(fake))
    config, info = _bmv2_config(generate(sfclab.compile("chain a: l2fwd")))
    assert config == b'{"bmv2": "json"}'
    assert any(t.preamble.name == "SfcIngress.rewinder" and t.preamble.alias == "from_p4c"
               for t in info.tables)
