"""`sfclab compile --topology` (the placement table, one program per switch) and `sfclab check
--topology` (chains' from / to against the network, located), run as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sfclab.cli.commands import main

EXAMPLES = Path(__file__).parents[2] / "examples"
CHAINS, TOPO = str(EXAMPLES / "datacenter.sfc"), str(EXAMPLES / "datacenter.topo")


def test_compile_prints_the_placement_table_and_writes_nothing_without_o(capsys, tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compile", CHAINS, "--topology", TOPO]) == 0
    out = capsys.readouterr().out
    assert "network placement: 3 chains, 9 NF instances on datacenter (20 switches)" in out
    assert "  exact      optimal" in out and "  heuristic  " in out
    assert "  inspect  h5 -> h12  " in out
    assert "-o DIR writes one program per switch" in out and list(tmp_path.iterdir()) == []


def test_compile_writes_one_program_per_switch(capsys, tmp_path):
    out = tmp_path / "out"
    assert main(["compile", CHAINS, "--topology", TOPO, "-o", str(out), "--solver",
                 "heuristic"]) == 0
    said = capsys.readouterr().out
    assert "  heuristic  feasible" in said and "  exact " not in said
    switches = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert len(switches) == 20 and "e1_1" in switches and "c1" in switches
    for s in switches:
        assert sorted(p.name for p in (out / s).iterdir()) == ["entries.json", "p4info.txt",
                                                               "plan.txt", "program.p4"]
    placement = (out / "placement.txt").read_text()
    switch, nfs = re.search(r"  web  h1 -> h16  (\w+)\[([^\]]*)\]", placement).groups()
    program = (out / switch / "program.p4").read_text()
    slots = next(x for x in program.splitlines() if x.startswith(" * slots: "))
    assert [s.partition("_")[2] for s in slots[10:].split(" | ")] == nfs.split(", ")
    entries = json.loads((out / switch / "entries.json").read_text())
    assert entries and not (out / "servers.txt").exists()


def test_compile_writes_what_the_servers_run(tmp_path, capsys):
    chains = tmp_path / "c.sfc"
    chains.write_text("chain inspect match tcp.dport == 443 from h5 to h12: firewall -> dpi -> "
                      "l3fwd\n")
    out = tmp_path / "out"
    assert main(["compile", str(chains), "--topology", TOPO, "-o", str(out)]) == 0
    assert "dpi1{dpi}" in capsys.readouterr().out               # the detour to the server
    assert (out / "servers.txt").read_text().startswith("dpi1: service path 1, next NF 1: run "
                                                        "dpi, then next NF 2")


def test_compile_without_a_placement_says_why(tmp_path, capsys):
    topo = tmp_path / "tight.topo"
    topo.write_text("use leaf_spine(2, 2, stages=4)\n")
    chains = tmp_path / "c.sfc"
    chains.write_text("chain web match tcp.dport == 80 from h1 to h4: nat\n")
    assert main(["compile", str(chains), "--topology", str(topo), "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "no network placement exists" in err and "room for nat (3 stages" in err
    assert "hint: raise the switches' stages" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_compile_refuses_endpoints_the_network_lacks(tmp_path, capsys):
    chains = tmp_path / "c.sfc"
    chains.write_text("chain web match tcp.dport == 80 from h1 to h99: nat\n")
    assert main(["compile", str(chains), "--topology", TOPO]) == 1
    err = capsys.readouterr().err
    assert f"{chains}:1:44: chain 'web' goes to 'h99', which topology 'datacenter' does not " \
           "have" in err
    assert err.splitlines()[2].strip() == "^^^"


def test_compile_runs_p4c_on_every_switch(tmp_path, capsys, monkeypatch):
    """A stand-in p4c that fails on the program holding the NAT (the real one is not
    installable here): sfclab says which switch's program it refused."""
    fake = tmp_path / "p4c"
    fake.write_text("#!/usr/bin/env python3\n"
                    "import sys, pathlib\n"
                    "args = sys.argv\n"
                    "src = pathlib.Path(args[-1])\n"
                    "if 'control nat(' in src.read_text():\n"
                    "    print(f'{src}(1): error: no NAT today', file=sys.stderr); sys.exit(1)\n"
                    "dst = pathlib.Path(args[args.index('--p4runtime-files') + 1])\n"
                    "dst.write_text((dst.parent / 'p4info.txt').read_text())\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SFCLAB_P4C", str(fake))
    topo = tmp_path / "line.topo"
    topo.write_text("use line(3, stages=8)\n")
    chains = tmp_path / "c.sfc"
    chains.write_text("chain web match tcp.dport == 80: heavy_hitter -> nat\n")
    assert main(["compile", str(chains), "--topology", str(topo), "-o", str(tmp_path / "o"),
                 "--p4c"]) == 1
    cap = capsys.readouterr()
    assert "s1:" in cap.out and "sfclab's P4Info agrees" in cap.out   # s1: heavy_hitter
    assert "error: no NAT today" in cap.err
    assert f"p4c refused the program of switch s2 ({tmp_path / 'o' / 's2' / 'program.p4'})" \
        in cap.err


def test_check_with_a_topology_checks_the_endpoints(tmp_path, capsys):
    assert main(["check", "-q", CHAINS, "--topology", TOPO]) == 0
    assert "datacenter.sfc: 3 chain(s), endpoints on datacenter, OK" in capsys.readouterr().out
    bad = tmp_path / "bad.sfc"
    bad.write_text("chain a from h1 to h2: nat\nchain b from c1 to h3: nat\n")
    assert main(["check", str(bad), "--topology", TOPO]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:14: chain 'b': 'c1' is a switch" in err
    assert "    chain b from c1 to h3: nat\n                 ^^" in err
    assert "hint: name a host (`from h1`) or a free port of it (`from c1:6`)" in err


def test_check_refuses_a_server_only_nf_no_server_of_the_network_runs(tmp_path, capsys):
    """As compile does (located, before placing): dpi runs on a server only, and the
    network's only server runs ips; with a server running dpi, the chain is fine."""
    chains = tmp_path / "dpi.sfc"
    chains.write_text("chain web from h1 to h2: nat\nchain a from h1 to h2: firewall -> DPI\n")
    topo = tmp_path / "t.topo"
    topo.write_text("use line(3)\nserver box runs ips at s2\n")
    assert main(["check", str(chains), "--topology", str(topo)]) == 1
    err = capsys.readouterr().err
    assert f"{chains}:2:36: chain 'a': dpi runs on a server only (P4SFC: not offloadable), " \
           "and no server of topology 'line3' runs it" in err
    assert "    chain a from h1 to h2: firewall -> DPI\n" + " " * 39 + "^^^" in err
    assert main(["compile", str(chains), "--topology", str(topo)]) == 1
    assert f"{chains}:2:36: chain 'a': dpi runs on a server only" in capsys.readouterr().err
    topo.write_text("use line(3)\nserver box runs ips, dpi at s2\n")
    assert main(["check", "-q", str(chains), "--topology", str(topo)]) == 0


def test_check_with_a_bad_topology_file(tmp_path, capsys):
    topo = tmp_path / "bad.topo"
    topo.write_text("switch s1\nlink s1 -- s2\n")
    assert main(["check", CHAINS, "--topology", str(topo)]) == 1
    assert f"{topo}:2:12: unknown node 's2' in a link" in capsys.readouterr().err
    assert main(["check", CHAINS, "--topology", str(tmp_path / "none.topo")]) == 1
    assert "cannot read" in capsys.readouterr().err
