"""The papers' chains: each fixture parses to exactly the service paths in its `.paths` file."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab

FIXTURES = Path(__file__).parent.parent / "fixtures" / "lang"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".sfc", ".json"))


def test_every_paper_is_covered():
    names = {p.stem for p in CASES}
    for stem in ("flexmesh_fig3", "flexmesh_fig9", "flexmesh_fig11", "p4sc_table3",
                 "dejavu_fig2", "p4sfc_intent"):
        assert stem in names


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_service_paths(path: Path):
    expected = path.with_suffix(".paths").read_text().splitlines()
    chains = sfclab.parse_file(path)
    got = [p.describe() for p in chains.paths()]
    assert got == expected


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_format_round_trip(path: Path):
    chains = sfclab.parse_file(path)
    again = sfclab.parse(sfclab.format(chains))
    assert again == chains
    assert [p.describe() for p in again.paths()] == [p.describe() for p in chains.paths()]


def test_path_weights_add_up_to_the_chain_weights():
    for path in CASES:
        chains = sfclab.parse_file(path)
        for name, w in chains.weights().items():
            assert sum(p.weight for p in chains[name].paths(w)) == pytest.approx(w)


def test_loop_unrolls_to_its_bound():
    (path,) = sfclab.parse_file(FIXTURES / "flexmesh_fig3.sfc")["loop"].paths()
    assert path.nfs == ("sr_encap",) * 10


def test_p4sc_branch_end_joins_branches():
    chain = sfclab.parse_file(FIXTURES / "p4sc_table3.sfc")["SFC2_HTTP"]
    assert [p.nfs for p in chain.paths()] == [
        ("lb", "l3fwd", "firewall", "nat"), ("lb", "firewall", "nat")]


def test_json_intent_keeps_locations():
    chain = sfclab.parse_file(FIXTURES / "p4sfc_intent.json")["web_ips"]
    assert chain.graph.nodes["ips"]["location"] == "server2"
    assert chain.graph.nodes["firewall"]["instance"] == "fw1"
    assert str(chain.match) == "ipv4.dst == 10.0.0.0/8 && tcp.dport == 443"
    assert chain.weight == 0.5
