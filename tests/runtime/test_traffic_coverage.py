"""Class traffic covers every service path of its class: candidates are run through the
embedded model as an oracle, packets picked round-robin over the paths found, and the
paths nobody reaches are reported with the reason.

Fixtures in tests/fixtures/traffic/ state what they expect in comments:
``# expect shadowed: a, b`` (chains no packet reaches) and ``# expect missed: PATH TEXT``
(a path no packet takes, and words its reason must contain); every other path of every
class must be covered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.targets.traffic.coverage import Oracle, all_class_traffic, class_traffic, entry_dictionary
from sfclab.targets.model import ModelTarget
from sfclab.targets.traffic.nf_values import metadata_values

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traffic"
ROOT = Path(__file__).resolve().parents[2]
BINDINGS = CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3})


def expectations(text: str) -> tuple[set[str], dict[str, str]]:
    shadowed = {n.strip() for m in re.findall(r"# expect shadowed: (.*)", text)
                for n in m.split(",")}
    missed = dict(m.split(" ", 1) for m in re.findall(r"# expect missed: (.*)", text))
    return shadowed, missed


@pytest.fixture(scope="module")
def switch():
    with ModelTarget() as t:
        yield t


#: Chain sets outside the fixtures folder, and the paths they cannot cover.
OTHERS = {
    ROOT / "examples" / "web.sfc": {},
    ROOT / "sfclab" / "cli" / "demo.sfc": {"core/1": "computed by heavy_hitter"},
    ROOT / "tests" / "fixtures" / "codegen" / "loops_digests.sfc": {
        "sr/1": "computed by heavy_hitter",
        "sr/3": "entries never make classifier.class_id in {3} (it sets 0, 1, 2)"},
}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.sfc")) + list(OTHERS),
                         ids=lambda p: p.stem)
def test_every_path_of_every_class_is_covered(switch, path):
    text = path.read_text()
    shadowed, missed = expectations(text)
    missed |= OTHERS.get(path, {})
    compiled = sfclab.compile(text)
    assert {w.message.split("'")[1] for w in compiled.warnings} == shadowed
    gen = generate(compiled, options=BINDINGS)
    plans = all_class_traffic(gen, 6)
    switch.push(gen)
    for name, plan in plans.items():
        assert not plan.strays, (name, plan.strays[:3])
        if name in shadowed:
            assert not plan.packets and "gets no packets" in next(iter(plan.missed.values()))
            continue
        expected_missed = {p for p in plan.paths if p in missed}
        assert set(plan.missed) == expected_missed, plan.text()
        assert set(plan.covered) == set(plan.paths) - expected_missed, plan.text()
        for p in expected_missed:
            assert missed[p] in plan.missed[p], plan.missed[p]
        assert len(plan.packets) == 6
        # the switch runs each packet on the path the oracle chose it for
        for cp, want in zip(plan.packets, plan.expected):
            r = switch.send(cp.port, cp.packet)
            assert switch.session.path_of(r.trace) == want, (want, r.trace.text())


def test_packets_go_round_robin_over_the_paths():
    gen = generate(sfclab.compile((ROOT / "examples" / "web.sfc").read_text()))
    with Oracle(gen) as oracle:
        t = class_traffic(gen, "web", 5, oracle=oracle)
        assert t.expected == ("web/0", "web/1", "web/0", "web/1", "web/0")
        assert t.text().startswith(
            "web: 5 packets cover 2 of 2 service paths (web/0 ×3, web/1 ×2)")
        # the packets differ (a path's packets are not one packet repeated)
        assert len({bytes(p) for p in t.packets}) == 5
        one = class_traffic(gen, "web", 1, oracle=oracle)
        assert one.expected == ("web/0",) and one.missed == {}


def test_a_path_the_entries_never_reach_says_why():
    """Without NF entries the firewall only permits: web/1 needs verdict 1."""
    gen = generate(sfclab.compile((ROOT / "examples" / "web.sfc").read_text()),
                   options=CodegenOptions(nf_entries="none"))
    t = class_traffic(gen, "web", 4)
    assert t.covered == ("web/0",)
    why = t.missed["web/1"]
    assert "no packet found" in why
    assert "the firewall's entries never make firewall.verdict != 0 (it sets 0)" in why
    assert "web/1 (not (firewall.verdict == 0) -> drop): no packet found" in t.text()


def test_the_dictionary_holds_entry_keys_and_branch_values():
    gen = generate(sfclab.compile((FIXTURES / "branches.sfc").read_text()), options=BINDINGS)
    chains = gen.composition.compiled.chains
    d = entry_dictionary(gen, chains["balance"])
    assert 0x0A000064 in d["ipv4.dst"]                      # lb's virtual IP 10.0.0.100
    ports = entry_dictionary(gen, chains["ports"])["std.ingress_port"]
    assert {1, 2, 3} <= set(ports)
    fw = entry_dictionary(gen, chains["fw"])
    assert 0x0A000000 in fw["ipv4.src"] and 53 in fw["udp.dport"]   # the ACL's keys


def test_what_an_nf_can_set_its_metadata_to():
    gen = generate(sfclab.compile("chain w: firewall -> lb -> classifier -> qos -> heavy_hitter"))
    assert metadata_values(gen, "firewall") == {0, 1}
    assert metadata_values(gen, "lb") == {0, 1, 2}
    assert metadata_values(gen, "classifier") == {0, 1, 2}
    assert metadata_values(gen, "qos") is None               # a meter's colour
    assert metadata_values(gen, "heavy_hitter") is None      # a sketch of earlier packets
    bare = generate(sfclab.compile("chain w: firewall -> lb"),
                    options=CodegenOptions(nf_entries="none"))
    assert metadata_values(bare, "firewall") == {0} and metadata_values(bare, "lb") == {0}


def test_a_branch_on_an_earlier_nfs_field_is_covered():
    """demo.sfc's edge chain tests l2fwd.flood_flag after qos, which sets its own
    metadata: the program tests l2fwd's saved flag, so a packet whose destination MAC
    l2fwd does not know takes the flood paths."""
    gen = generate(sfclab.compile((ROOT / "sfclab" / "cli" / "demo.sfc").read_text()), options=BINDINGS)
    t = class_traffic(gen, "edge", 8)
    assert set(t.covered) == {"edge/0", "edge/1", "edge/2", "edge/3"} and not t.missed
