"""The %sfc target commands in a real IPython shell: push, send, trace, tables, counters,
update, target and send-pcap, with their error paths."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from scapy.all import IP, TCP, Ether, wrpcap

import sfclab.notebook.magics as magics_module
from sfclab.notebook.magics import SfcMagics
from sfclab.notebook.runtime_views import PushSummary, TablesView
from sfclab.notebook.send_view import SendView, coverage
from notebook_support import ipython_shell
from test_editor import dummy_comm, front_end  # noqa: F401  (fixtures: a dummy comm, browser messages)

ROOT = Path(__file__).resolve().parents[2]
WEB = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt match vlan.vid == 100 { input => l2fwd => output; }"""



@pytest.fixture(scope="module")
def ip():
    return ipython_shell()

@pytest.fixture
def sfc(ip, monkeypatch):
    ip.config.pop("SfcMagics", None)
    magics = SfcMagics(ip)
    ip.register_magics(magics)
    monkeypatch.setattr(magics_module, "display", lambda *a, **k: None)
    ip.run_cell_magic("chain", "", WEB)
    yield magics
    magics.lab.close()
    ip.configurables.remove(magics)


def test_push_prints_a_summary_without_urls(ip, sfc):
    summary = ip.run_line_magic("sfc", "push")
    assert isinstance(summary, PushSummary)
    bundle = summary._repr_mimebundle_()
    text = bundle["text/plain"]
    assert text.startswith("pushed to the embedded switch model, P4Runtime at 127.0.0.1:")
    groups = {g: len(es) for g, es in sfc.lab.pushed.groups().items()}
    assert f"  {sum(groups.values())} table entries" in text
    assert f"per chain: web {groups['chain:web']}, mgmt {groups['chain:mgmt']}" in text
    assert f"per NF slot: slot0_firewall {groups['nf:slot0_firewall']}" in text
    assert "://" not in text and "<" not in text            # nothing JupyterLab links
    assert "<code>the embedded switch model, P4Runtime at 127.0.0.1:" in bundle["text/html"]
    assert "v1model" in bundle["text/html"] and "ModelTarget" not in bundle["text/html"]


FLOOD = "chain lan match vlan.vid == 100: firewall -> flood"


def test_push_says_what_it_installed_for_the_switch_and_what_it_could_not(ip, sfc):
    ip.run_cell_magic("chain", "", FLOOD)
    text = ip.run_line_magic("sfc", "push")._repr_mimebundle_()["text/plain"]
    generated = len(sfc.lab.pushed.entries)
    assert f"{generated + 8} ({generated} generated, 8 for this switch) table entries" in text
    assert re.search(r"for this switch: 8 entries \(SfcIngress\.slot\d_flood\.flood_groups\), "
                     r"9 multicast groups", text), text
    assert "note:" not in text
    sfc.lab.target.session.ports = None                      # a switch whose ports are unknown
    bundle = ip.run_line_magic("sfc", "push")._repr_mimebundle_()
    assert "for this switch" not in bundle["text/plain"]
    assert re.search(r"^note: flood: the switch's ports are unknown, so no flood groups are "
                     r"written", bundle["text/plain"], re.M)
    assert "class='sfc-note'" in bundle["text/html"] and "ports are unknown" in bundle["text/html"]


def test_tables_and_the_entries_tab_show_what_the_switch_holds_beyond_the_program(ip, sfc):
    ip.run_cell_magic("chain", "", FLOOD)
    view = sfc.lab.live_view(show="entries")
    assert "sfc-installed" not in view.panels["entries"].html.value      # nothing pushed yet
    ip.run_line_magic("sfc", "push")
    html = view.panels["entries"].html.value                            # refreshed by the push
    assert "installed on the switch beyond the generated entries" in html
    assert html.count("set_mcast_grp") == 8 and "sfc.ingress_port = 3" in html
    assert "flood from port 1: every other port" in html and "2, 3, 4, 5, 6, 7, 8" in html
    tables = ip.run_line_magic("sfc", "tables")
    assert "installed beyond the generated entries: 8 entries" in tables.text()
    assert "multicast group 16385: ports 2, 3, 4, 5, 6, 7, 8" in tables.text()
    assert "sfc-installed" in tables._repr_html_()
    sfc.lab.target.session.ports = None
    ip.run_line_magic("sfc", "push")
    html = view.panels["entries"].html.value
    assert "set_mcast_grp" not in html and "ports are unknown" in html
    assert "note: flood: the switch's ports are unknown" in ip.run_line_magic("sfc", "tables").text()


def test_send_shows_packets_their_timeline_and_path(ip, sfc, front_end):
    view = ip.run_line_magic("sfc", "send web 3")
    assert isinstance(view, SendView) and len(view.traces) == 3
    planned = [p.id for p in sfc.lab.compiled.paths if p.chain == "web"]
    assert planned == ["web/0", "web/1"]                     # firewall lets in / drops
    paths = [t.path for t in view.traces]
    rows = view.table.rows
    assert [(r["chain"], r["path"], r["passes"]) for r in rows] == [("web", p, 1) for p in paths]
    # the packets are varied so that every service path of the class is taken
    assert {r["path"] for r in rows} == set(planned), rows
    deny = rows[paths.index("web/1")]                        # a packet the firewall dropped
    assert deny["dropped"] and deny["nfs"] == "firewall"
    assert deny["outcome"] == "dropped after firewall"       # not the program's mark_to_drop()
    k = paths.index("web/0")                                # a packet the firewall let in
    assert rows[k]["outcome"] == "port 1" and rows[k]["nfs"] == "firewall → nat → lb → l3fwd"
    assert view.table.selected == 2                          # the last packet, selected
    front_end(view.table, state={"selected": k})            # a click on its row
    details = view.details.value
    assert f"packet {view.traces[k].trace.packet_id}" in details and "on <b>web/0</b>" in details
    assert "pass 0" in details and "classifier" in details and "rewinder" in details
    assert "hdr.ipv4.dst_addr=10.0.1.0/24" in details       # the entry, as written
    assert "route(dmac=00:00:00:00:01:01, smac=00:00:00:00:00:fe, port=1)" in details
    assert "out on port 1" in details and "dmac=257" not in details
    svg = view.graph.svg
    assert re.search(r'data-node="firewall" class="sfc-visited"', svg)
    assert re.search(r'data-node="drop" class="sfc-idle"', svg)
    # coverage: every service path of web covered, in the widget and in the text
    assert view.covered == planned and view.missed == []
    assert ("service paths covered: <b>web/0</b>, <b>web/1</b></div>" in view.summary.value), \
        view.summary.value
    text = view.text()
    table = text.split("\ncovered: ")[0].splitlines()[1:]   # the per-packet lines
    assert [line.split()[2] for line in table] == paths
    assert "\ncovered: web/0, web/1\n" in text and "not reached" not in text
    assert "pass 0" in text
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/plain" in bundle
    again = ip.run_line_magic("sfc", "trace 2")
    assert [t.trace.packet_id for t in again.traces] == [t.trace.packet_id for t in view.traces[1:]]


UNREACHED = (ROOT / "tests" / "fixtures" / "traffic" / "unreached_paths.sfc").read_text()


def test_send_says_which_path_it_could_not_cover_and_why(ip, sfc):
    ip.run_cell_magic("chain", "", UNREACHED)
    assert [p.id for p in sfc.lab.compiled.paths if p.chain == "cls"] == ["cls/0", "cls/1"]
    view = ip.run_line_magic("sfc", "send cls 2")
    assert [r["path"] for r in view.table.rows] == ["cls/0", "cls/0"]
    assert view.covered == ["cls/0"]
    assert [p for p, _ in view.missed] == ["cls/1"]
    why = "the classifier's entries never make classifier.class_id == 7 (it sets 0, 1, 2)"
    assert why in view.missed[0][1]
    summary = view.summary.value
    assert "service paths covered: <b>cls/0</b>; not reached: " in summary, summary
    assert ">cls/1</b> (no packet found" in summary
    assert why.replace("'", "&#x27;") in summary
    assert re.search(r"\ncovered: cls/0; not reached: cls/1 \(no packet found \(\d+ tried\); "
                     + re.escape(why) + r"\)\n", view.text()), view.text()
    # a path that hangs on an NF's state: says so
    view = ip.run_line_magic("sfc", "send hh 3")
    assert view.covered == ["hh/0"] and [p for p, _ in view.missed] == ["hh/1"]
    assert "computed by heavy_hitter from its state" in view.missed[0][1]
    assert "not reached: hh/1 (no packet found" in view.text()


def test_coverage_says_which_paths_no_packet_reached():
    from types import SimpleNamespace as T

    took, missed = coverage([T(path="web/0"), T(path="web/0")], ["web/0", "web/1"])
    assert took == ["web/0"] and missed == [("web/1", "no packet sent took it")]
    took, missed = coverage([], ["web/0", "web/1"], covered={"web/0": 2},
                            missed={"web/1": "firewall.verdict is never 1"})
    assert took == ["web/0"] and missed == [("web/1", "firewall.verdict is never 1")]


def test_send_shows_what_the_sender_says_it_covered(ip, sfc, monkeypatch):
    class Sent(list):
        covered = ["web/0"]
        missed = {"web/1": "firewall.verdict is 0 for every packet the firewall lets in"}

    real = sfc.lab.send
    monkeypatch.setattr(sfc.lab, "send", lambda *a, **k: Sent(real(*a, **k)))
    view = ip.run_line_magic("sfc", "send web 2")
    assert view.missed == [("web/1", Sent.missed["web/1"])]
    assert "(firewall.verdict is 0 for every packet" in view.summary.value


def test_send_pushes_first_and_ports_can_be_given(ip, sfc):
    view = ip.run_line_magic("sfc", "send mgmt 2 --port 5")
    assert [t.result.trace.ingress_port for t in view.traces] == [5, 5]
    assert [t.trace.nfs() for t in view.traces] == [["l2fwd"], ["l2fwd"]]


def test_tables_and_counters(ip, sfc, capsys):
    ip.run_line_magic("sfc", "send web 4")
    tables = ip.run_line_magic("sfc", "tables")
    assert isinstance(tables, TablesView)
    rows = {r.table: r for r in tables.rows}
    assert rows["SfcIngress.rewinder"].entries == 3 and rows["SfcIngress.rewinder"].hits == 4
    acl = rows["SfcIngress.slot0_firewall.acl"]
    assert acl.hits + acl.misses == 4                       # every packet looked it up
    assert any(r.misses for r in tables.rows)
    for r in tables.rows:                                   # hits and misses, side by side
        line = next(x for x in tables.text().splitlines() if x.startswith(r.table + " "))
        assert line.split()[-2:] == [str(r.hits), str(r.misses)], line
    assert "SfcIngress.initializer" in tables.text() and "sfc-tables" in tables._repr_html_()
    ip.run_line_magic("sfc", "counters")
    assert "no counter has counted anything yet" in capsys.readouterr().out
    ip.run_cell_magic("chain", "", "chain m match udp.dport == 53: monitor -> l3fwd")
    ip.run_line_magic("sfc", "update --reload")
    ip.run_line_magic("sfc", "send m 3")
    capsys.readouterr()
    ip.run_line_magic("sfc", "counters")
    assert "pkts" in capsys.readouterr().out


def test_update_by_entries_and_when_a_reload_is_needed(ip, sfc, capsys):
    ip.run_line_magic("sfc", "push")
    ip.run_cell_magic("chain", "", "chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80: "
                                   "firewall -> l3fwd")
    capsys.readouterr()
    ip.run_line_magic("sfc", "update")
    assert "entries only" in capsys.readouterr().out
    ip.run_line_magic("sfc", "update")
    assert "nothing to change" in capsys.readouterr().out
    ip.run_cell_magic("chain", "", "chain x match udp.dport == 53: ids")
    with pytest.raises(UsageError, match="needs a program reload"):
        ip.run_line_magic("sfc", "update")
    ip.run_line_magic("sfc", "update --reload")
    out = capsys.readouterr().out
    assert out.startswith("reloaded the program (the NF slots change") and "needed" not in out
    assert ip.run_line_magic("sfc", "send x 1").traces[0].trace.nfs() == ["ids"]


def _shown(monkeypatch) -> list:
    shown: list = []
    monkeypatch.setattr(magics_module, "display", shown.append)
    return shown


WEB_MONITOR = WEB.replace("nat => lb => l3fwd => output;", "nat => lb => l3fwd => monitor => output;")


def test_send_trace_and_tables_say_first_that_the_switch_runs_other_chains(ip, sfc, monkeypatch):
    """Issue 19.3: push, add `-> monitor` to a chain, re-run the cell: `%sfc send web 3`
    warns first, names the chain and the command that applies the change."""
    ip.run_line_magic("sfc", "push")
    shown = _shown(monkeypatch)
    ip.run_line_magic("sfc", "send web 3")
    assert not any("sfc-drift" in getattr(x, "html", "") for x in shown)   # in step: no warning
    ip.run_cell_magic("chain", "", WEB_MONITOR)
    shown.clear()
    view = ip.run_line_magic("sfc", "send web 3")
    (warning,) = [x for x in shown if "sfc-drift" in getattr(x, "html", "")]
    assert shown[0] is warning                           # first, before anything else
    assert "web changed" in warning.text and "mgmt" not in warning.text
    assert "needs a program reload" in warning.text              # monitor is a new NF slot
    assert "%sfc update --reload (or %sfc push)" in warning.text
    assert all("monitor" not in t.trace.nfs() for t in view.traces)      # the old program ran
    for command in ("trace", "tables"):
        shown.clear()
        ip.run_line_magic("sfc", command)
        assert "sfc-drift" in shown[0].html and "web changed" in shown[0].text
    ip.run_line_magic("sfc", "update --reload")
    shown.clear()
    view = ip.run_line_magic("sfc", "send web 3")
    assert not shown and any("monitor" in t.trace.nfs() for t in view.traces)


GATE = "control gate(inout headers_t hdr, inout sfc_meta_t sfc) {\n    apply { }\n}"


def test_an_nf_cell_rerun_after_the_push_is_flagged_by_send_trace_and_tables(ip, sfc,
                                                                             monkeypatch):
    """An NF redefined with %%nf after the push: the switch runs its old code until a
    reload, and send, trace and tables say so first, naming the NF and the command."""
    ip.run_cell_magic("nf", "gate", GATE)
    ip.run_cell_magic("chain", "", "chain g match tcp.dport == 8080: gate -> l3fwd")
    ip.run_line_magic("sfc", "push")
    ip.run_cell_magic("nf", "gate", GATE.replace("apply { }", "apply { sfc.drop = 1; }"))
    shown = _shown(monkeypatch)
    view = ip.run_line_magic("sfc", "send g 2")
    assert not any(t.result.dropped for t in view.traces)          # the old code ran
    for command in ("trace", "tables"):
        shown.clear()
        ip.run_line_magic("sfc", command)
        warning = shown[0]
        assert "sfc-drift" in warning.html and "NF gate redefined since" in warning.text
        assert "The target still runs the NF code of the last push or update" in warning.html
        assert warning.text.endswith("%sfc update --reload (or %sfc push)")
    ip.run_line_magic("sfc", "update --reload")
    shown.clear()
    view = ip.run_line_magic("sfc", "send g 2")
    assert not shown and all(t.result.dropped for t in view.traces)


def test_tables_after_a_failed_first_push_say_the_switch_holds_the_program_empty(ip, sfc,
                                                                                  monkeypatch):
    """A first push whose entries are refused leaves the program on the switch with no
    entries: %sfc tables says so first (and how to recover), then shows the tables empty."""
    from finsy.proto import rpc_code
    from sfclab.targets.model.p4rt.codec import _fail

    server = sfc.lab.target.server
    write = server._write
    server._write = lambda req: _fail(rpc_code.RESOURCE_EXHAUSTED, "the test refuses entries")
    with pytest.raises(UsageError, match="the switch holds the program of a failed first push"):
        ip.run_line_magic("sfc", "push")
    server._write = write
    shown = _shown(monkeypatch)
    view = ip.run_line_magic("sfc", "tables")
    assert sfc.lab.pushed is None and "sfc-stranded" in shown[0].html
    assert shown[0].text.startswith("warning: nothing is pushed: the switch holds the program")
    assert shown[0].text.endswith("Push again once the cause of the failure is fixed: %sfc push")
    assert isinstance(view, TablesView) and not view.rows
    assert view.text().startswith("no entries and no lookups in any of the program's")
    ip.run_line_magic("sfc", "push")
    shown.clear()
    ip.run_line_magic("sfc", "tables")
    assert not any("sfc-drift" in getattr(x, "html", "") for x in shown)


def test_a_change_entries_can_apply_names_plain_update(ip, sfc, monkeypatch):
    ip.run_line_magic("sfc", "push")
    ip.run_cell_magic("chain", "", "chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80: "
                                   "firewall -> l3fwd")
    ip.run_line_magic("sfc", "remove mgmt")
    shown = _shown(monkeypatch)
    ip.run_line_magic("sfc", "tables")
    text = shown[0].text
    assert "web changed; mgmt removed" in text and "table entries can apply it" in text
    assert text.endswith("%sfc update")
    ip.run_line_magic("sfc", "update")
    shown.clear()
    ip.run_line_magic("sfc", "tables")
    assert not any("sfc-drift" in getattr(x, "html", "") for x in shown)


def test_target_commands(ip, sfc, capsys):
    ip.run_line_magic("sfc", "target")
    out = capsys.readouterr().out
    assert out.startswith("target: the embedded switch model, P4Runtime at 127.0.0.1:")
    assert "://" not in out
    with pytest.raises(UsageError, match="cannot read the target"):
        ip.run_line_magic("sfc", "target bmx://127.0.0.1:1")
    ip.run_line_magic("sfc", "target model")
    assert "nothing pushed yet" in capsys.readouterr().out


def test_send_pcap(ip, sfc, tmp_path):
    f = tmp_path / "web.pcap"
    wrpcap(str(f), [Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5")
                    / TCP(dport=80)] * 2)
    view = ip.run_line_magic("sfc", f"send-pcap {f} --port 3")
    assert len(view.traces) == 2 and all(t.path == "web/0" for t in view.traces)
    with pytest.raises(UsageError, match="cannot read"):
        ip.run_line_magic("sfc", f"send-pcap {tmp_path / 'none.pcap'}")


def test_push_with_no_chains_says_there_is_nothing_to_push(ip, sfc):
    ip.run_line_magic("sfc", "remove web mgmt")
    with pytest.raises(UsageError, match="nothing to push: the lab has no chains yet"):
        ip.run_line_magic("sfc", "push")
    assert sfc.lab.pushed is None                      # no empty program went to the switch


def test_numbers_out_of_range_are_usage_errors_not_tracebacks(ip, sfc):
    """Issue 19.8: a port the switch has not, counts of 5,000 digits."""
    huge = "9" * 5000
    for line, says in [("send web 1 --port 999999", "ingress port 999999 is not in 0..511"),
                       (f"send web 1 --port {huge}", "invalid int value"),
                       (f"trace {huge}", "(5000 digits) is not a count")]:
        with pytest.raises(UsageError, match=re.escape(says)):
            ip.run_line_magic("sfc", line)
    with pytest.raises(UsageError, match="is not a count"):
        ip.run_cell_magic("nf", f"x --field s:{huge}", "control x() { apply { } }")


def test_errors(ip, sfc, capsys):
    with pytest.raises(UsageError, match="no chain 'webb' in the lab"):
        ip.run_line_magic("sfc", "send webb 2")
    ip.run_line_magic("sfc", "trace")
    assert "no packets sent yet" in capsys.readouterr().out


def test_a_big_send_shows_the_last_packets_and_counts_them_all(ip, sfc):
    sfc.lab.keep_traces = 30
    view = ip.run_line_magic("sfc", "send web 200")
    assert isinstance(view, SendView) and len(view.traces) == 30
    assert "<b>200 packets</b>" in view.summary.value and "100 dropped" in view.summary.value
    assert "170 older traces were dropped" in view.summary.value
    assert view.covered == ["web/0", "web/1"] and view.missed == []
    trace = ip.run_line_magic("sfc", "trace 5")
    assert len(trace.traces) == 5 and "170 older traces dropped" in trace.text()
    assert "200 packets: 100 out, 100 dropped" in trace.text()


class Interrupting:
    """A switch's process that is interrupted (SIGINT) while its *k*-th packet runs."""

    def __init__(self, real, k: int) -> None:
        self.real, self.k, self.calls = real, k, 0

    def __call__(self, port, data, **kw):
        result = self.real(port, data, **kw)
        self.calls += 1
        if self.calls == self.k:
            signal.raise_signal(signal.SIGINT)
        return result


def test_an_interrupted_send_shows_what_was_sent(ip, sfc):
    lab = sfc.lab
    lab.send("web", 1, progress=False)
    lab.target.switch.process = Interrupting(lab.target.switch.process, 5)
    view = ip.run_line_magic("sfc", "send web 100")
    assert len(view.traces) == 5 and "interrupted after 5 of 100 packets" in view.text()
    assert len(lab.traces) == 6 and lab.traces.summary.packets == 6
