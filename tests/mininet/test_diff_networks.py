"""``sfclab diff-targets CHAINS --topology NET.topo --a net --b URL``: two network targets
run one network program and every chain's class traffic, compared packet by packet
(fate, egress, bytes, NFs, switches, service path).  Over a network of every kind the
topology language makes (``tests/network/netkinds.py``: line, ring, leaf-spine, fat
tree, a hand-written campus in 10.20.0.0/16 with a server), the embedded network and
Mininet with the model as switch processes agree on every packet; on the campus, real
BMv2 does too — a chain whose egress is a free switch port included (it was dropped
there: BMv2 had no interface on the port)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from mnsupport import interfaces_named, needs_network_chains

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "network"))
from netkinds import KINDS, network  # noqa: E402

from sfclab.cli.commands import main  # noqa: E402


def _diff(tmp_path, kind: str, b: str, capsys, packets: int = 2) -> str:
    topo, chains = network(kind, 0, small=True)
    (tmp_path / "net.topo").write_text(topo)
    (tmp_path / "chains.sfc").write_text(chains)
    prefix = "t" + uuid.uuid4().hex[:3]
    rc = main(["diff-targets", str(tmp_path / "chains.sfc"), "--topology",
               str(tmp_path / "net.topo"), "--a", "net", "--b", f"{b}&prefix={prefix}",
               "--packets", str(packets)])
    out = capsys.readouterr().out
    assert interfaces_named(prefix) == []               # every interface removed
    assert rc == 0, out
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_embedded_network_and_mininet_agree_on_every_packet(kind, mininet, tmp_path,
                                                                capsys):
    needs_network_chains()
    out = _diff(tmp_path, kind, "mininet?switch=model", capsys)
    assert out.startswith("6 packets on net and mininet (model): every packet ran the same "
                          "way"), out
    assert "service paths covered: 3 of 3" in out


def test_real_bmv2_agrees_on_the_campus_free_port_included(mininet, tmp_path, capsys):
    needs_network_chains()
    pytest.importorskip("pynng", reason="pynng (BMv2's event logger) is not installed")
    from sfclab.targets.bmv2.target import missing_tools

    missing = missing_tools()
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (BMv2 in Mininet needs both)")
    _, chains = network("campus", 0, small=True)
    assert " to core:" in chains or " to bld" in chains      # a chain leaves by a free port
    out = _diff(tmp_path, "campus", "mininet?switch=bmv2", capsys, packets=1)
    assert out.startswith("3 packets on net and mininet (bmv2): every packet ran the same "
                          "way"), out
