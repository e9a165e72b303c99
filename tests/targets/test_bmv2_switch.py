"""The whole BMv2 path, end to end, on the stand-in BMv2 and p4c (standin_bmv2.py).

``bmv2`` starts a switch, pushes the compiled program with p4c's P4Info, sends packets
over BMv2's packet-in socket and reads their traces from the event logger; the
differential check runs the model against it.  The stand-ins run sfclab's own model
behind BMv2's interfaces, so what these tests prove is sfclab's orchestration (command
lines, sockets, message formats, id maps, matching outputs to packets), not BMv2's
semantics.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from standin_bmv2 import install_standins
from targets_support import NoRoutes

import sfclab
from sfclab.cli import main
from sfclab.codegen import generate
from sfclab.errors import TargetError
from sfclab.lab import Lab
from sfclab.runtime.traffic import packets_for
from sfclab.targets.bmv2.target import Bmv2Target
from sfclab.targets.bmv2.switch import Bmv2Switch
from sfclab.targets.connect import open_target
from sfclab.targets.diff import diff_targets
from sfclab.targets.model import ModelTarget

WEB = Path(__file__).resolve().parents[2] / "examples" / "web.sfc"
CHAIN = "chain web match tcp.dport == 80: firewall -> l3fwd"


@pytest.fixture
def standins(tmp_path, monkeypatch):
    switch, p4c = install_standins(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(switch))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))
    return switch, p4c


@pytest.fixture
def bmv2(standins):
    with open_target("bmv2") as t:
        yield t


def _web():
    return generate(sfclab.compile(WEB.read_text()))


def test_bmv2_is_started_owned_and_stopped(bmv2):
    assert isinstance(bmv2, Bmv2Switch) and bmv2.bmv2.owned
    cmd = bmv2.bmv2.process.command
    assert "--packet-in" in cmd and "--nanolog" in cmd and "--no-p4" in cmd
    assert "packet-in socket" in bmv2.describe() and "event logger tcp://127.0.0.1:" in bmv2.describe()
    proc = bmv2.bmv2.process
    bmv2.close()
    assert not proc.running


def test_a_packet_runs_as_on_the_model(bmv2):
    gen = generate(sfclab.compile(CHAIN))
    assert bmv2.push(gen) > 0
    names = {n for (kind, _), n in bmv2._names.names.items() if kind == "table"}
    assert "SfcIngress.slot0_firewall.acl" in names          # the switch's JSON names it
    with ModelTarget() as model:
        model.push(gen)
        chain = gen.composition.compiled.chains["web"]
        for cp in packets_for(chain, 3, chains=gen.composition.compiled.chains):
            ours, theirs = model.send(cp.port, cp.packet), bmv2.send(cp.port, cp.packet)
            assert theirs.outputs == ours.outputs
            assert theirs.trace.egress_port == ours.trace.egress_port
            assert theirs.trace.output == ours.trace.output == ours.outputs[0][1]
            assert theirs.trace.nfs() == ["firewall", "l3fwd"] == ours.trace.nfs()
            assert theirs.trace.tables() == ours.trace.tables()
            assert theirs.trace.passes == ours.trace.passes == 1
    assert len(bmv2.results) == 3


def test_pushes_p4cs_p4info(standins, tmp_path, monkeypatch):
    """The P4Info pushed is the compiler's: a p4c that names the package is obeyed."""
    _, p4c = standins
    wrapper = tmp_path / "bin" / "p4c-naming"
    wrapper.write_text(
        f"#!/bin/sh\n{p4c} \"$@\" || exit $?\n"
        "for a; do case $prev in --p4runtime-files) f=$a;; esac; prev=$a; done\n"
        "sed -i 's/^pkg_info {/pkg_info {\\n  name: \"from_p4c\"/' \"$f\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("SFCLAB_P4C", str(wrapper))
    with open_target("bmv2") as t:
        t.push(generate(sfclab.compile("chain a: l2fwd")))
        assert 'name: "from_p4c"' in t.build.p4info_path.read_text()
        assert t.client.get_pipeline().p4info.pkg_info.name == "from_p4c"
        assert [o.table for o in t.occupancy()] == [tb.preamble.name
                                                    for tb in t.session.index.info.tables]


def test_diff_targets_model_vs_bmv2(standins):
    report = diff_targets(_web(), "model", "bmv2", packets=2)
    assert report.same and report.compared == 4, report.text()
    assert "Bmv2Switch bmv2://unix:/" in report.b


def test_diff_targets_reports_a_switch_that_differs(bmv2):
    """The model with its routes taken away, against BMv2: the first packet diverges."""
    with NoRoutes() as other:
        report = diff_targets(_web(), other, bmv2, packets=1)
    assert not report.same
    _, k, what, ta, tb = report.divergences[0]
    assert k == 0 and any(w.startswith("outcome: drop") for w in what), what
    assert "ipv4_lpm: miss" in ta and "ipv4_lpm: hit" in tb


def test_cli_diff_targets_defaults_to_model_vs_bmv2(standins, capsys):
    assert main(["diff-targets", str(WEB), "--packets", "1"]) == 0
    assert "every packet ran the same way" in capsys.readouterr().out


def test_cli_diff_targets_without_bmv2_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SFCLAB_BMV2", raising=False)
    assert main(["diff-targets", str(WEB), "--packets", "1"]) == 1
    err = capsys.readouterr().err
    assert "simple_switch_grpc" in err and "SFCLAB_BMV2" in err
    assert "Traceback" not in err


def test_lab_on_bmv2(standins):
    lab = Lab()
    lab.add(CHAIN)
    try:
        lab.connect("bmv2")
        lab.push()
        [sent] = lab.send("web", 1)
        assert sent.trace.nfs() == ["firewall", "l3fwd"] and not sent.dropped
        assert lab.traces[-1].path == "web/0"           # from the NFs it shows
        with pytest.raises(TargetError, match="counters are read from the embedded model"):
            lab.counters()
    finally:
        lab.close()


def test_attach_with_packet_in_and_nanolog(standins, tmp_path):
    """A switch sfclab did not start, reached through the URL's parameters (its event
    logger on a socket file: a tcp:// one would be in its own namespace)."""
    from urllib.parse import quote

    owned = Bmv2Target.start(ports="packet-in", workdir=tmp_path / "w",
                             event_logger=f"ipc://{tmp_path}/ev.ipc")
    try:
        url = (f"bmv2://{owned.grpc_address}?device_id=0&packet_in={quote(owned.ports.address)}"
               f"&nanolog={quote(owned.nanolog)}")
        with open_target(url) as t:
            assert not t.bmv2.owned
            t.push(generate(sfclab.compile(CHAIN)))
            chain = t.session.generated.composition.compiled.chains["web"]
            [cp] = packets_for(chain, 1)
            r = t.send(cp.port, cp.packet)
            assert r.trace.nfs() == ["firewall", "l3fwd"] and r.ports == [r.trace.egress_port]
        assert owned.process.running                         # attached: left running
    finally:
        owned.stop()


def test_without_the_event_logger_outputs_are_still_matched(standins, tmp_path):
    owned = Bmv2Target.start(ports="packet-in", workdir=tmp_path / "w", event_logger=False)
    try:
        with Bmv2Switch(owned) as t:
            t.push(generate(sfclab.compile(CHAIN)))
            chain = t.session.generated.composition.compiled.chains["web"]
            [cp] = packets_for(chain, 1)
            r = t.send(cp.port, cp.packet)
            assert r.ports and r.trace.egress_port == r.ports[0]
            assert "no events from the switch" in r.trace.text()
            assert "no event logger" in t.describe()
    finally:
        owned.stop()


def test_errors(bmv2, standins, tmp_path):
    with pytest.raises(TargetError, match="nothing is pushed yet"):
        bmv2.send(1, b"\x00" * 60)
    with pytest.raises(TargetError, match="BMv2 runs v1model programs, not tna"):
        bmv2.push(generate(sfclab.compile(CHAIN, arch="tna"), arch="tna"))
    with pytest.raises(TargetError, match="names a switch sfclab starts"):
        Bmv2Target.attach("bmv2")
    with pytest.raises(TargetError, match="nanolog= is for a switch sfclab attaches to"):
        Bmv2Switch.open("bmv2?nanolog=ipc:///tmp/x.ipc")
    owned = Bmv2Target.start(workdir=tmp_path / "w")                # no ports at all
    try:
        with Bmv2Switch(owned) as t:
            t.push(generate(sfclab.compile(CHAIN)))
            with pytest.raises(TargetError, match="cannot put packets on the ports") as e:
                t.send(1, b"\x00" * 60)
            assert "packet_in=" in e.value.hint
    finally:
        owned.stop()


def test_a_reload_recompiles_and_traces_read_the_new_program(bmv2):
    bmv2.push(generate(sfclab.compile(CHAIN)))
    first = bmv2.build
    new = generate(sfclab.compile("chain web match tcp.dport == 80: monitor -> l3fwd"))
    with pytest.raises(TargetError):
        bmv2.update(new)                                 # a new NF type needs a reload
    assert bmv2.build is first
    bmv2.update(new, allow_reload=True)
    assert bmv2.build is not first
    [cp] = packets_for(new.composition.compiled.chains["web"], 1)
    assert bmv2.send(cp.port, cp.packet).trace.nfs() == ["monitor", "l3fwd"]
