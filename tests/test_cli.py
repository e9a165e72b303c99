"""`sfclab check` and `sfclab --version`, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sfclab
from sfclab.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
EXAMPLES = Path(__file__).parent.parent / "examples"


def test_check_prints_a_summary_per_chain(capsys):
    assert main(["check", str(FIXTURES / "design_example.sfc")]) == 0
    out = capsys.readouterr().out
    assert "2 chain(s), OK" in out
    assert "chain web" in out and "match   ipv4.dst == 10.0.1.0/24 && tcp.dport == 80" in out
    assert "firewall => drop  [else]  not firewall.verdict == 0" in out
    assert "web/0 [0.3]: input -> firewall -> nat -> lb -> l3fwd -> output" in out
    assert "weight  0.4 (default)" in out


def test_check_every_example_and_fixture(capsys):
    files = [str(p) for p in sorted(EXAMPLES.iterdir())] + [
        str(p) for p in sorted(FIXTURES.iterdir()) if p.suffix in (".sfc", ".json")]
    assert main(["check", "-q", *files]) == 0
    assert capsys.readouterr().out.count(", OK") == len(files)


def test_check_reports_errors_with_caret_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.sfc"
    bad.write_text("chain a {\n    input => firewal => output;\n}\n")
    good = tmp_path / "good.sfc"
    good.write_text("chain b: l2fwd\n")
    assert main(["check", str(bad), str(good)]) == 1
    cap = capsys.readouterr()
    assert f"{bad}:2:14: unknown NF 'firewal'" in cap.err
    assert "        input => firewal => output;\n                 ^^^^^^^" in cap.err
    assert "hint: did you mean 'firewall'?" in cap.err
    assert "Traceback" not in cap.err
    assert "good.sfc: 1 chain(s), OK" in cap.out


def test_check_missing_file(capsys):
    assert main(["check", "/nonexistent/x.sfc"]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_console_script_version():
    out = subprocess.run([sys.executable, "-m", "sfclab.cli", "--version"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"sfclab {sfclab.__version__}"
