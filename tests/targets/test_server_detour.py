"""Targets that play a one-switch program's server: the model, BMv2 (stand-in), Lab, diff-targets."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.all import IP, TCP, UDP, Dot1Q, Ether
from standin_bmv2 import install_standins

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.errors import TargetError
from sfclab.lab import Lab
from sfclab.targets.bmv2.switch import Bmv2Switch
from sfclab.targets.connect import open_target
from sfclab.targets.diff import diff_targets
from sfclab.targets.model import ModelTarget
from sfclab.targets.network.detour import check_server_port
from sfclab.targets.traces.timeline import timeline_text

#: nat rewrites 192.168.1.10 before the server; qos marks UDP 5004 DSCP 46 after it.
P4SFC = "chain voip match udp.dport == 5004: nat -> ips -> qos"
#: Server and switch-only chains, a branch before the server (examples/p4sfc_mixed.sfc).
MIXED = (Path(__file__).resolve().parents[2] / "examples" / "p4sfc_mixed.sfc").read_text()


def _voip(src: str = "192.168.1.10"):
    return Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02") / IP(
        src=src, dst="10.9.0.1") / UDP(sport=4000, dport=5004) / b"payload"


def _run(text: str, packets, port: int = 1) -> list:
    with ModelTarget() as t:
        t.push(generate(sfclab.compile(text)))
        return [t.send(port, p) for p in packets]


def test_packets_run_pre_server_server_and_post_server_nfs_in_order():
    with ModelTarget() as t:
        t.push(generate(sfclab.compile(P4SFC)))
        r = t.send(1, _voip())
        assert r.ports == [1] and r.trace.nfs() == ["nat", "ips", "qos"]
        assert r.passes == 2 and t.session.path_of(r.trace) == "voip/0"
    out = Ether(r.output())
    assert out.type == 0x0800                            # the SFC header is off
    assert out[IP].src == "203.0.113.10"                 # nat, before the server
    assert out[IP].tos >> 2 == 46                        # qos, after it
    assert bytes(out[UDP].payload) == b"payload"
    # the server's stand-in leaves bytes as they are: the same bytes as the chain without it
    [plain] = _run("chain voip match udp.dport == 5004: nat -> qos", [_voip()])
    assert r.outputs == plain.outputs


def test_the_trace_shows_the_detour():
    with ModelTarget() as t:
        t.push(generate(sfclab.compile(P4SFC)))
        r = t.send(1, _voip())
    (ev,) = [e for e in r.trace.events if e.kind == "server"]
    assert ev.value == ("ips",) and dict(ev.args) == {"port": 8, "spi": 1, "si": 2}
    assert [e.pass_no for e in r.trace.events if e.kind == "nf"] == [0, 1]
    text = timeline_text(r.trace, path="voip/0")
    assert "pass 0" in text and "pass 1" in text
    assert "  -> out on port 8 to its server, which ran ips; back with next NF 2" in text
    assert "  arrival   arrival: hit spi=1 si=2 -> enter(" in text
    assert r.trace.to_dict()["nfs"] == ["nat", "ips", "qos"]


def test_a_mixed_set_runs_switch_only_chains_in_one_pass_and_server_chains_through_it():
    lab = Lab()
    lab.add(MIXED)
    try:
        sent = {c: lab.send(c, 4) for c in ("guarded", "plain", "voip")}
        assert set(sent["guarded"].took) == {"guarded/0", "guarded/1"}
        assert set(sent["plain"].took) == {"plain/0"} and set(sent["voip"].took) == {"voip/0"}
        assert any(t.path == "guarded/0" and not t.result.dropped for t in lab.traces)
        for t in lab.traces:
            servers = [e for e in t.result.trace.events if e.kind == "server"]
            if t.path == "guarded/0" and not t.result.dropped:
                assert t.result.trace.nfs() == ["firewall", "ips", "monitor"]
                assert len(servers) == 1 and t.result.passes == 2
            elif t.path in ("guarded/1", "plain/0"):
                assert not servers and t.result.passes == 1
        assert lab.pushed.detour.server_paths() == ("guarded/0", "voip/0")
    finally:
        lab.close()


def test_a_flood_is_not_sent_to_the_server():
    text = "chain f match vlan.vid == 7: flood\nchain s match tcp.dport == 443: ips"
    with ModelTarget() as t:
        t.push(generate(sfclab.compile(text)))
        r = t.send(1, Ether(dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=7) / IP(dst="10.0.0.1") / TCP())
    assert sorted(r.ports) == [2, 3, 4, 5, 6, 7]       # not 1 (ingress), not 8 (the server)
    assert not any(e.kind == "server" for e in r.trace.events)


def test_a_target_url_names_the_server_port():
    compiled = sfclab.compile(P4SFC)
    with open_target("model?server_port=5") as t:
        assert t.server_port == 5
        with pytest.raises(TargetError, match="out of port 8, but this target's server is "
                                              "behind port 5"):
            t.push(generate(compiled))
        t.push(generate(compiled, options=CodegenOptions(server_port=5)))
        r = t.send(1, _voip())
        assert r.ports == [1] and dict(next(e for e in r.trace.events
                                            if e.kind == "server").args)["port"] == 5
    lab = Lab()
    lab.add(P4SFC)
    try:
        lab.connect("model?server_port=6")
        lab.push()                                   # generated again for the target's port
        assert lab.pushed.detour.port == 6
        lab.send("voip", 2)
        assert all(t.result.passes == 2 for t in lab.traces)
    finally:
        lab.close()
    with pytest.raises(TargetError, match="unknown parameter 'server_prot'") as e:
        open_target("model?server_prot=5")
    assert "server_port" in e.value.hint


def test_a_switch_without_the_server_port_is_refused():
    gen = generate(sfclab.compile(P4SFC))
    with pytest.raises(TargetError, match="which this switch does not have") as e:
        check_server_port(gen, ports=[1, 2, 3])
    assert "server_port=N" in e.value.hint
    check_server_port(gen, ports=[1, 8])
    check_server_port(generate(sfclab.compile("chain a: nat")), ports=[1], declared=4)


def test_diff_targets_compares_the_detour_on_both_targets():
    report = diff_targets(generate(sfclab.compile(MIXED)), "model", "model", packets=3)
    assert report.same, report.text()
    assert "service paths covered: 4 of 4" in report.coverage_text()


@pytest.fixture
def standins(tmp_path, monkeypatch):
    switch, p4c = install_standins(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(switch))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))


def test_bmv2_gets_its_server_played_by_sfclab_in_batches(standins):
    """The stand-in BMv2 sends what leaves port 8 out of its packet socket, as BMv2 does;
    sfclab runs the server's NFs and puts the packets back in on port 8, as a batch."""
    gen = generate(sfclab.compile(P4SFC))
    with Bmv2Switch.open("bmv2") as sw, ModelTarget() as model:
        sw.push(gen)
        model.push(gen)
        packets = [(1, _voip()), (1, _voip("192.168.1.99")), (2, _voip())]
        got = sw.send_many(packets)
        want = [model.send(p, b) for p, b in packets]
        assert len(sw.results) == 3
    for b, m in zip(got, want, strict=True):
        assert b.outputs == m.outputs and b.passes == m.passes == 2
        assert b.trace.nfs() == m.trace.nfs() == ["nat", "ips", "qos"]
        assert [e.kind for e in b.trace.events].count("server") == 1
        assert sw.session.path_of(b.trace) == "voip/0"
