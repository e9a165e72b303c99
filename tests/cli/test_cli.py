"""`sfclab check` and `sfclab --version`, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pathlib import Path

import sfclab
from sfclab.cli.commands import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lang"
EXAMPLES = Path(__file__).parents[2] / "examples"


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


def test_compile_explain_prints_every_pass(capsys):
    assert main(["compile", "--explain", str(EXAMPLES / "web.sfc")]) == 0
    out = capsys.readouterr().out
    for part in ("merge:", "pipeline (", "fsm:", "initializer:", "rewinder:", "offload"):
        assert part in out


def test_compile_writes_the_program_p4info_entries_and_plan(tmp_path, capsys):
    import json

    assert main(["compile", str(EXAMPLES / "web.sfc"), "-o", str(tmp_path), "--arch", "tna"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["entries.json", "p4info.txt", "plan.txt", "program.p4"]
    assert "#include <tna.p4>" in (tmp_path / "program.p4").read_text()
    entries = json.loads((tmp_path / "entries.json").read_text())
    assert {"chain:web", "chain:mgmt"} <= set(entries)
    info = (tmp_path / "p4info.txt").read_text()
    assert '"pipe0.SfcIngress0.rewinder"' in info and '"pipe1.SfcEgress1.rewinder"' in info
    assert "code generation (tna):" in (tmp_path / "plan.txt").read_text()


def test_compile_errors_are_messages_not_tracebacks(tmp_path, capsys):
    bad = tmp_path / "bad.sfc"
    bad.write_text("chain a: firewal\n")
    assert main(["compile", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "unknown NF 'firewal'" in err and "Traceback" not in err
    assert main(["compile", str(tmp_path / "missing.sfc")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_compile_runs_p4c_and_maps_its_errors_to_the_nf(tmp_path, capsys, monkeypatch):
    """A stand-in p4c-bm2-ss (the real one is not installable here) reports an error on
    the line of the firewall's ACL; sfclab names the NF it belongs to."""
    program = tmp_path / "out" / "program.p4"
    fake = tmp_path / "p4c-bm2-ss"
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import sys\n"
        "src = sys.argv[-1]\n"
        "n = next(i for i, l in enumerate(open(src), 1) if 'table acl' in l)\n"
        "print(f'{src}({n}): [--Werror=type-error] error: table acl: bad key', file=sys.stderr)\n"
        "sys.exit(1)\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SFCLAB_P4C", str(fake))
    assert main(["compile", str(EXAMPLES / "web.sfc"), "-o", str(program.parent), "--p4c"]) == 1
    err = capsys.readouterr().err
    assert "error: table acl: bad key" in err
    assert "(in control 'firewall', table 'acl')" in err


def test_compile_says_what_to_install_without_p4c(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SFCLAB_P4C", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["compile", str(EXAMPLES / "web.sfc"), "-o", str(tmp_path / "o"), "--p4c"]) == 1
    err = capsys.readouterr().err
    assert "p4c-bm2-ss is not installed" in err and "install p4c" in err


def test_compile_p4c_checks_sfclabs_p4info_against_the_compilers(tmp_path, capsys, monkeypatch):
    """A stand-in p4c that writes the P4Info it is given back (as p4c would, for a program
    sfclab names correctly) agrees; one that renames a table is reported."""
    out = tmp_path / "out"

    def fake(rename: bool):
        script = tmp_path / ("p4c-bad" if rename else "p4c-good")
        script.write_text(
            "#!/usr/bin/env python3\n"
            "import sys, pathlib\n"
            "args = sys.argv\n"
            "dst = pathlib.Path(args[args.index('--p4runtime-files') + 1])\n"
            "text = (dst.parent / 'p4info.txt').read_text()\n"
            + ("text = text.replace('SfcIngress.rewinder', 'SfcIngress.rewinder_0')\n"
               if rename else "") +
            "dst.write_text(text)\n")
        script.chmod(0o755)
        return str(script)

    monkeypatch.setenv("SFCLAB_P4C", fake(False))
    assert main(["compile", str(EXAMPLES / "web.sfc"), "-o", str(out), "--p4c"]) == 0
    assert "sfclab's P4Info agrees with the compiler's" in capsys.readouterr().out
    monkeypatch.setenv("SFCLAB_P4C", fake(True))
    assert main(["compile", str(EXAMPLES / "web.sfc"), "-o", str(out), "--p4c"]) == 1
    err = capsys.readouterr().err
    assert "differs from the compiler's" in err and "rewinder" in err


SHADOWED = """chain wide match ipv4.dst == 10.0.0.0/8: l3fwd
chain narrow match ipv4.dst == 10.1.0.0/16: l3fwd
chain all: l2fwd
chain "after all" match tcp.dport == 80: l3fwd
"""


def test_check_warns_about_chains_no_packet_reaches(tmp_path, capsys):
    f = tmp_path / "s.sfc"
    f.write_text(SHADOWED)
    assert main(["check", "-q", str(f)]) == 0               # a warning is not an error
    cap = capsys.readouterr()
    assert f"{f}: 4 chain(s), OK (2 warnings)" in cap.out
    assert (f"{f}:2:7: warning: chain 'narrow' gets no packets: every packet of its class "
            "(ipv4.dst == 10.1.0.0/16) is taken by 'wide' (ipv4.dst == 10.0.0.0/8), written "
            "before it\n    chain narrow match ipv4.dst == 10.1.0.0/16: l3fwd\n"
            "          ^^^^^^\nhint: write 'narrow' before 'wide'") in cap.err
    assert (f"{f}:4:7: warning: chain 'after all' gets no packets: chain 'all', written before "
            "it, has no match and takes every packet\n"
            '    chain "after all" match tcp.dport == 80: l3fwd\n'
            "          ^^^^^^^^^^^\nhint: give 'all' a `match`") in cap.err


def test_check_warns_about_a_chain_without_match_after_one_without_match(tmp_path, capsys):
    f = tmp_path / "n.sfc"
    f.write_text("chain a: firewall -> l3fwd\nchain b: nat -> l3fwd\n")
    assert main(["check", "-q", str(f)]) == 0
    cap = capsys.readouterr()
    assert f"{f}: 2 chain(s), OK (1 warning)" in cap.out
    assert (f"{f}:2:7: warning: chain 'b' gets no packets: chain 'a', written before it, has "
            "no match and takes every packet\n    chain b: nat -> l3fwd\n          ^\n"
            "hint: give 'a' a `match`, or write 'b' before it") in cap.err


def test_check_says_nothing_about_partly_shadowed_chains(tmp_path, capsys):
    f = tmp_path / "p.sfc"
    f.write_text("chain a match ipv4.src == 10.0.0.0/8: l2fwd\n"
                 "chain b match ipv4.dst == 10.0.0.0/8: l2fwd\n"
                 "chain mgmt match vlan.vid == 4000: l2fwd\n"
                 "chain dns match udp.dport == 53: l2fwd\n")
    assert main(["check", "-q", str(f)]) == 0
    cap = capsys.readouterr()
    assert "warning" not in cap.err and "4 chain(s), OK\n" in cap.out


def test_compile_prints_the_warnings_too(tmp_path, capsys):
    f = tmp_path / "s.sfc"
    f.write_text(SHADOWED)
    assert main(["compile", str(f)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: chain") == 2 and "          ^^^^^^\n" in err


def test_compile_tna_refuses_chains_the_tofino_cannot_hold_and_pipes_makes_room(tmp_path, capsys):
    """every_nf.sfc's 18 NFs need 54 stages (the catalogue's measured estimates, branch and checksum-condition stages); one pipe
    offers 21 after sfclab's lean core: a located error that says what to do, no files; the
    default 2 pipes fit them (the NFs no path shares sit side by side); `--pipes` takes
    1, 2 or 4 (Tofino 1's); v1model has no stage limit."""
    every = str(EXAMPLES / "every_nf.sfc")
    assert main(["compile", "--arch", "tna", "--pipes", "1", "-o", str(tmp_path / "o"),
                 every]) == 1
    err = capsys.readouterr().err
    assert f"{every}:3:7: chain 'web': the NFs need 54 stages (stateful_firewall 6," in err
    assert "after sfclab's core (2 of each ingress pipelet's 12 stages, 1 of each" in err
    assert "hint: compile for more pipes (2 would do: `--pipes 2`" in err
    assert not (tmp_path / "o").exists()
    assert main(["compile", "--arch", "tna", "-o", str(tmp_path / "o"), every]) == 0
    assert "placement (2 pipes x 12 stages" in (tmp_path / "o" / "plan.txt").read_text()
    assert main(["compile", "--arch", "tna", "--pipes", "4", "-o", str(tmp_path / "f"),
                 every]) == 0
    assert "Switch(pipe0, pipe1, pipe2, pipe3) main;" in (tmp_path / "f" / "program.p4").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["compile", "--arch", "tna", "--pipes", "3", every])
    assert "invalid choice: 3" in capsys.readouterr().err
    assert main(["compile", every, "-o", str(tmp_path / "v")]) == 0
    capsys.readouterr()
    assert main(["compile", "--pipes", "4", every]) == 2
    assert "BMv2 (v1model) has no pipes to plan" in capsys.readouterr().err


def test_compile_tna_plan_says_where_each_slot_runs_and_the_stages_by_the_estimates(tmp_path,
                                                                                    capsys):
    """Without the compiler, plan.txt says per pipelet its slots (side by side: `|`) and the
    stages by the estimates — sfclab's core (2 of an ingress, 1 of an egress) plus the slots'."""
    src = tmp_path / "c.sfc"
    src.write_text("chain c match ipv4.dst == 10.0.1.0/24 { input => firewall => qos => l3fwd "
                   "=> output; }\n")
    assert main(["compile", "--arch", "tna", "-o", str(tmp_path / "o"), str(src)]) == 0
    assert "warning" not in capsys.readouterr().err
    plan = (tmp_path / "o" / "plan.txt").read_text()
    assert "tna: 2 pipe(s), 3 NF slots on their pipelets" in plan
    assert "stages by the estimates (sfclab's core + the NF slots): I0 12" in plan
    assert "0 weighted recirculations" in plan
