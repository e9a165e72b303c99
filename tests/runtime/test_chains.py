"""Chains on the embedded model, pushed over P4Runtime: every packet of a class runs
exactly one of its chain's service paths, with the passes the FSM plan predicts."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.runtime.traffic import packets_for
from sfclab.targets.model import ModelTarget

ROOT = Path(__file__).resolve().parents[2]
CHAIN_SETS = [*sorted((ROOT / "tests" / "fixtures" / "codegen").glob("*.sfc")),
              ROOT / "examples" / "web.sfc", ROOT / "examples" / "p4sc_table3.sfc",
              ROOT / "examples" / "flexmesh_fig9.sfc"]


@pytest.fixture(scope="module")
def target():
    with ModelTarget() as t:
        yield t


@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_each_class_follows_a_service_path_with_the_planned_passes(target, path: Path):
    compiled = sfclab.compile(path.read_text())
    # FlexMesh Fig. 9's multibranch cases p1..p3 are ports bound at run time
    target.push(generate(compiled, options=CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3})))
    fsm = {f.path.id: f for f in compiled.fsm.paths}
    seen = set()
    chains = list(compiled.chains)
    for k, chain in enumerate(chains):
        if any(c.match is None for c in chains[:k]):
            # an earlier chain without a classifier takes all traffic (FlexMesh's E1 and E2
            # run on different switches): sfclab says so instead of sending nothing
            with pytest.raises(sfclab.SfclabError, match="gets no packets.*takes every packet"):
                packets_for(chain, 1, chains=compiled.chains)
            continue
        for cp in packets_for(chain, 6, chains=compiled.chains):
            r = target.send(cp.port, cp.packet)
            took = target.session.path_of(r.trace)
            assert took is not None and took.startswith(chain.name + "/"), (chain.name, took)
            plan = fsm[took]
            assert tuple(r.trace.nfs()) == plan.path.nfs, (took, r.trace.text())
            assert r.passes == plan.passes, (took, r.passes, plan.passes)
            if plan.path.terminal == "drop":
                assert r.dropped
            elif plan.path.terminal == "cpu":
                assert r.ports == [255]
            seen.add(took)
    assert seen                                   # every chain set sends something through


def test_a_branch_takes_the_outcome_the_nf_decides(target):
    """The design example: the firewall's example ACL denies TCP from 10/8, so the
    web class from 10.0.0.5 takes web/1 (drop); from 192.168.1.10 it takes web/0."""
    from scapy.all import IP, TCP, Ether

    compiled = sfclab.compile((ROOT / "examples" / "web.sfc").read_text())
    target.push(generate(compiled))
    ok = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5") / TCP(dport=80)
    bad = Ether(dst="00:00:00:00:00:02") / IP(src="10.0.0.5", dst="10.0.1.5") / TCP(dport=80)
    r_ok, r_bad = target.send(1, ok), target.send(1, bad)
    assert target.session.path_of(r_ok.trace) == "web/0" and r_ok.ports == [1]
    assert target.session.path_of(r_bad.trace) == "web/1" and r_bad.dropped
    assert r_ok.trace.nfs() == ["firewall", "nat", "lb", "l3fwd"]
    assert r_bad.trace.nfs() == ["firewall"]


def test_header_rewrites_survive_recirculation(target):
    """FlexMesh Fig. 1's reversed flow needs two passes on the {l3fwd, firewall, nat}
    pipeline; NAT's source rewrite in pass 1 is still there when the packet leaves."""
    from scapy.all import IP, TCP, Ether

    src = ("chain p match tcp.dport == 80: l3fwd -> firewall -> nat\n"
           "chain r match tcp.dport == 8080: l3fwd -> nat -> firewall")
    compiled = sfclab.compile(src, pipeline="naive")
    target.push(generate(compiled))
    pkt = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.7") / TCP(dport=8080)
    r = target.send(1, pkt)
    assert target.session.path_of(r.trace) == "r/0" and r.passes == 2
    out = Ether(r.outputs[0][1])
    assert out[IP].src == "203.0.113.10"          # the NAT example entry's new source
    assert out.type == 0x0800                      # the SFC header is gone
    assert r.trace.nfs() == ["l3fwd", "nat", "firewall"]
