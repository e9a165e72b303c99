"""Sending many packets (issue 20): traffic planned once and varied by patching bytes,
traces kept bounded with every packet counted, pcap files streamed, progress bars and
interrupts that stop between two packets.  Nothing here is timed (the speed is
measured by benchmarks/bench_traffic.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.errors import SfclabError
from sfclab.runtime.traffic import build_packet
from sfclab.targets.traffic.coverage import Oracle
from sfclab.targets.model import ModelTarget
from sfclab.targets.model.target import RESULTS_KEPT
from sfclab.targets.traffic import sending
from sfclab.targets.traffic.sending import SendInterrupted
from sfclab.targets.traffic.plan import Base, TrafficPlan, find_offsets, patched

ROOT = Path(__file__).resolve().parents[2]
WEB = (ROOT / "examples" / "web.sfc").read_text()
FIXTURES = ROOT / "tests" / "fixtures" / "traffic"


@pytest.fixture
def lab():
    lab = sfclab.Lab()
    lab.add(WEB)
    yield lab
    lab.close()


def test_traces_kept_stay_bounded_and_the_summary_counts_every_packet(lab):
    lab.keep_traces = 50
    res = lab.send("web", 500, progress=False)
    traces = lab.traces
    assert len(traces) == 500 and len(res) == 500
    kept = list(traces)
    assert len(kept) == 50 and traces.first == 450 and kept[-1] is traces[-1]
    assert traces[450:] == kept and traces[-3:] == kept[-3:]
    with pytest.raises(IndexError, match="packet 0 was dropped"):
        traces[0]
    assert traces.note().startswith("450 older traces dropped: the last 50 are kept whole")
    # every packet counted: per path, egress, drop reason, table
    s = traces.summary
    assert s.packets == 500
    assert dict(s.paths) == {"web/0": 250, "web/1": 250} == res.covered
    assert s.egress[None] == 250 and sum(s.drops.values()) == 250
    assert sum(v for k, v in s.egress.items() if k is not None) == 250
    acl = "SfcIngress.slot0_firewall.acl"
    assert s.hits[acl] + s.misses[acl] == 500
    assert res.took == ["web/0", "web/1"] * 250 and res.counts.packets == 500
    # what the summary read from the raw events is what the traces say
    for t in kept:
        assert t.path == lab.target.session.path_of(t.trace)
    again = sfclab.targets.traces.store.TraceSummary()
    for t in kept:
        again.add(t.path, t.trace.egress_port, t.trace.drop_reason, t.trace.tables())
    last = lab.send("web", 50, progress=False).counts
    assert (last.hits, last.misses, last.drops) == (again.hits, again.misses, again.drops)
    # the tables view counts every packet, not the kept ones
    rows = {r.table: r for r in lab.tables()}
    assert rows[acl].hits + rows[acl].misses == 550
    # the target keeps a bounded number of results too
    lab.send("web", RESULTS_KEPT + 10, progress=False)
    assert len(lab.target.results) == RESULTS_KEPT


def test_a_send_view_says_older_traces_were_dropped(lab):
    from sfclab.notebook.send_view import SendView

    lab.keep_traces = 20
    res = lab.send("web", 100, progress=False)
    view = SendView(lab, lab.traces[-len(res):], counts=res.counts, note=lab.traces.note())
    assert len(view.traces) == 20 and "100 packets" in view.summary.value
    assert "80 older traces dropped" in view.summary.value and "80 older traces" in view.text()


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.sfc")) + [ROOT / "examples" / "web.sfc"],
                         ids=lambda p: p.stem)
def test_planned_packets_vary_and_take_their_planned_path(path):
    """Beyond the bases the oracle ran, packets are patched copies: each differs from
    the others of its base and the switch runs it on the path planned for it."""
    compiled = sfclab.compile(path.read_text())
    gen = generate(compiled, options=CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3}))
    shadowed = {w.message.split("'")[1] for w in compiled.warnings}
    with Oracle(gen) as oracle, ModelTarget() as switch:
        switch.push(gen)
        for chain in compiled.chains.names():
            if chain in shadowed:
                continue
            plan = TrafficPlan.make(gen, chain, oracle=oracle)
            n = 3 * len(plan.bases)
            sent = list(plan.packets(n))
            assert len({data for _, data, _ in sent}) == n, chain       # no two alike
            for port, data, want in sent:
                r = switch.send(port, data)
                assert switch.session.path_of(r.trace) == want, (chain, want, r.trace.text())


@pytest.mark.parametrize("headers", [("ipv4", "tcp"), ("vlan", "ipv4", "udp"), ("ipv6", "tcp"),
                                     ("ipv6", "udp"), ("ipv4",), ("ipv4", "udp", "vxlan"),
                                     ("vlan",), ("mpls", "ipv4", "tcp"), ("ipv4", "icmp"),
                                     ("vlan", "mpls", "ipv6", "udp")])
def test_patched_bytes_keep_every_checksum_right(headers):
    raw = bytes(build_packet(headers, {}))
    base = Base(1, raw, "x/0", *find_offsets(raw, len(b"sfclab")))
    for counter in (1, 2, 0xFFFF, 0x12345678):
        data = patched(base, counter)
        assert len(data) == len(raw) and data != raw
        p = Ether(data)
        for layer in ("IP", "TCP", "UDP"):
            if layer in p and not (layer == "UDP" and p[layer].chksum == 0):
                del p[layer].chksum
        assert bytes(Ether(bytes(p))) == data, headers          # scapy computes the same


def test_an_interrupt_stops_between_packets_and_the_lab_counts_what_was_sent(lab):
    lab.send("web", 2, progress=False)
    switch = lab.target.switch
    real, calls = switch.process, []

    def interrupted_after_7(port, data, **kw):
        calls.append(port)
        r = real(port, data, **kw)
        if len(calls) == 7:               # Ctrl-C / Kernel > Interrupt while packet 7 runs
            signal.raise_signal(signal.SIGINT)
        return r
    switch.process = interrupted_after_7
    before = signal.getsignal(signal.SIGINT)   # SIG_IGN when pytest runs in a background job
    with pytest.raises(SendInterrupted) as e:
        lab.send("web", 100, progress=False)
    assert isinstance(e.value, KeyboardInterrupt)
    res = e.value.result
    assert len(res) == 7 and res.took == ["web/0", "web/1"] * 3 + ["web/0"]
    assert "interrupted after 7 of 100 packets" in res.summary()
    assert len(lab.traces) == 9 and lab.traces.summary.packets == 9
    assert switch._packet_id == 9                    # the switch ran exactly those
    assert signal.getsignal(signal.SIGINT) is before  # the send put the handler back


def test_a_keyboard_interrupt_from_a_hook_leaves_the_lab_consistent(lab):
    lab.send("web", 1, progress=False)
    switch = lab.target.switch
    real, calls = switch.process, []

    def hook(port, data, **kw):
        calls.append(port)
        if len(calls) == 5:
            raise KeyboardInterrupt             # before the 5th packet runs
        return real(port, data, **kw)
    switch.process = hook
    with pytest.raises(KeyboardInterrupt):
        lab.send("web", 40, progress=False)
    assert len(lab.traces) == 5 and lab.traces.summary.packets == 5
    assert switch._packet_id == 5 and dict(lab.traces.summary.paths) == {"web/0": 3,
                                                                          "web/1": 2}


def test_send_pcap_streams_the_file_and_counts_every_packet(lab, tmp_path):
    from scapy.layers.inet import IP, TCP
    from scapy.utils import wrpcap

    f = tmp_path / "web.pcap"
    wrpcap(str(f), [Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5")
                    / TCP(dport=80, sport=1000 + i) for i in range(300)])
    lab.keep_traces = 100
    res = lab.send_pcap(f, port=1, progress=False)
    assert len(res) == 300 and len(list(lab.traces)) == 100
    assert lab.traces.summary.packets == 300 and res.counts.paths == {"web/0": 300}
    assert lab.traces[-1].chain == "web.pcap"
    with pytest.raises(SfclabError, match="cannot read .*no such file"):
        lab.send_pcap(tmp_path / "none.pcap")
    (tmp_path / "bad.pcap").write_bytes(b"not a capture at all")
    with pytest.raises(SfclabError, match="cannot read .* as a capture"):
        lab.send_pcap(tmp_path / "bad.pcap")
    assert lab.traces.summary.packets == 300
    lab.set_topology("use line(2)\n")
    with pytest.raises(SfclabError, match="sent into one switch; this lab runs its chains on a"):
        lab.send_pcap(f)


def test_a_progress_bar_shows_on_the_command_line(lab, capsys, monkeypatch):
    lab.send("web", 40, progress=True)
    err = capsys.readouterr().err
    assert "sending web" in err and "pkt" in err
    lab.send("web", 40, progress=False)
    lab.send("web", 40)                  # fewer packets than a step: never long enough
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sending, "PROGRESS_AFTER", 0.0)    # every send is long now
    lab.send("web", 300)
    assert "sending web" in capsys.readouterr().err


def test_the_count_of_traces_kept_is_checked(lab):
    with pytest.raises(SfclabError, match="whole number ≥ 1"):
        lab.keep_traces = 0
    assert lab.keep_traces == 2000


def test_a_batched_target_finishes_the_batch_it_took_and_sends_no_other():
    """A target with send_many (BMv2) runs a batch at once: an interrupt during it
    records the whole batch, and no packet after it is sent."""
    from sfclab.targets.traffic.sending import BATCH, stream

    class Batched:
        ran = 0

        def send_many(self, batch):
            self.ran += len(batch)
            return [(port, data) for port, data in batch]

    target, got = Batched(), []

    def record(r, tag):
        got.append(tag)
        if len(got) == 10:
            signal.raise_signal(signal.SIGINT)
    with pytest.raises(SendInterrupted) as e:
        stream(target, ((1, b"x", k) for k in range(5 * BATCH)), record, total=5 * BATCH,
               progress=False)
    assert target.ran == len(got) == e.value.sent == BATCH and got == list(range(BATCH))


def test_a_network_keeps_its_last_traces_and_its_tables_count_every_packet():
    lab = sfclab.Lab()
    lab.set_topology("use leaf_spine(2, 2, stages=8)\n")
    lab.add("chain web match udp.dport == 8080 from h1 to h4: firewall -> nat\n")
    try:
        lab.push()
        net = lab.network
        net.traces.keep = 10
        sent = lab.send("web", 40)                   # planned once, varied (40 > 8 per path)
        assert len(net.traces) == 40 and len(list(net.traces)) == 10 and len(sent) == 10
        assert all(t.egress == "h4" and t.path == "web/0" for t in sent)
        assert sent.summary() == ("40 packets of web from h1 to h4: 40 delivered to h4, 0 dropped"
                                  "\nthe last 10 are kept whole; 30 older traces were dropped "
                                  "(net.traces.keep = N keeps more)")
        assert len({t.hops[0].source.outputs[0][1] for t in sent}) == 10   # no two alike
        first = net.placement.chains["web"].route[0]
        rows = {r.table: r for r in lab.tables(first)}
        assert rows["SfcIngress.initializer"].hits == 40
    finally:
        lab.close()
