"""The %sfc target commands in a real IPython shell: push, send, trace, tables, counters,
update, target and send-pcap, with their error paths."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from scapy.all import IP, TCP, Ether, wrpcap

import sfclab.notebook.magics as magics_module
from sfclab.notebook.magics import SfcMagics
from sfclab.notebook.runtime_views import TablesView, TraceView
from notebook_support import ipython_shell
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)

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


def test_push_send_trace(ip, sfc, capsys):
    ip.run_line_magic("sfc", "push")
    assert "pushed the program and" in capsys.readouterr().out
    view = ip.run_line_magic("sfc", "send web 3")
    assert isinstance(view, TraceView) and len(view.traces) == 3
    # the class's packets cover both paths: allowed (web/0) and denied (web/1)
    assert [t.path for t in view.traces] == ["web/0", "web/1", "web/0"]
    text = view.text()
    assert "NF firewall" in text and "SfcIngress.rewinder: hit" in text and "port 1" in text
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/plain" in bundle
    view.show(1)                                   # selecting a packet highlights its path
    classes = {n.data["id"]: n.classes for n in view.graph.graph.nodes}
    assert classes["firewall"] == "sfc-visited" and classes["drop"] == "sfc-visited"
    assert classes["nat"] == "sfc-idle"            # web/1: denied, dropped after the firewall
    again = ip.run_line_magic("sfc", "trace 2")
    assert [t.trace.packet_id for t in again.traces] == [t.trace.packet_id for t in view.traces[1:]]


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
    assert "SfcIngress.initializer" in tables.text() and "<table>" in tables._repr_html_()
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
    assert "program reload" in capsys.readouterr().out
    assert ip.run_line_magic("sfc", "send x 1").traces[0].trace.nfs() == ["ids"]


def test_target_commands(ip, sfc, capsys):
    ip.run_line_magic("sfc", "target")
    assert "ModelTarget" in capsys.readouterr().out
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


def test_errors(ip, sfc, capsys):
    with pytest.raises(UsageError, match="no chain 'webb' in the lab"):
        ip.run_line_magic("sfc", "send webb 2")
    ip.run_line_magic("sfc", "trace")
    assert "no packets sent yet" in capsys.readouterr().out
