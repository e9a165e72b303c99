"""%%chain cells checked as the student types (sfclab.notebook.live_check, the kernel
side of the JupyterLab extension's live check)."""

from __future__ import annotations

import json

import pytest

from sfclab.notebook.live_check import check
from sfclab.notebook.magics import SfcMagics
from notebook_support import ipython_shell
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)


@pytest.fixture
def sfc():
    ip = ipython_shell()
    ip.config.pop("SfcMagics", None)
    magics = SfcMagics(ip)
    ip.register_magics(magics)
    yield magics
    ip.configurables.remove(magics)


def test_a_valid_cell_goes_into_the_lab_and_its_views_without_a_run(sfc):
    view = sfc.lab.live_view()
    out = check("c1", "%%chain\nchain web: firewall -> nat")
    assert out == {"status": "ok", "chains": ["web"]}
    assert json.loads(repr(out)) == out                   # what the extension reads
    assert [str(p) for p in sfc.lab.compiled.paths] == ["web/0 [1]: input -> firewall -> nat -> output"]
    assert view.comm is not None
    ed = sfc.lab.editor("web")                             # a bound editor follows too
    check("c1", "%%chain\nchain web: firewall -> nat -> l3fwd")
    assert sorted(n["id"] for n in ed.nodes) == ["firewall", "input", "l3fwd", "nat", "output"]


def test_an_invalid_cell_is_located_as_the_cell_shows_it_and_the_lab_stays(sfc):
    check("c1", "%%chain\nchain web: firewall -> nat")
    out = check("c1", "%%chain\nchain web {\n    input => firewal => output;\n}")
    assert out["status"] == "error"
    (e,) = out["errors"]
    assert (e["line"], e["column"]) == (3, 14) and "firewal" in e["message"]
    assert "firewall" in e["hint"]
    assert sfc.lab.chains.names() == ["web"]
    assert [str(p) for p in sfc.lab.compiled.paths] == ["web/0 [1]: input -> firewall -> nat -> output"]


def test_names_typed_on_the_way_do_not_stay_but_the_cells_chains_do(sfc):
    sfc.lab.add("chain web: firewall -> nat\nchain mgmt match vlan.vid == 100: l2fwd")
    for name in ("s", "ss", "ssh"):
        out = check("c1", f"%%chain\nchain {name} match tcp.dport == 22 weight 0.4: nat")
        assert out["status"] == "ok", out
    assert sfc.lab.chains.names() == ["web", "mgmt", "ssh"]  # as a run: web, mgmt kept
    # a text the Lab refuses leaves it as it was, typed names included
    out = check("c1", "%%chain\nchain sshd match tcp.dport == 22 weight 1.0: nat\n"
                      "chain x weight 0.5: nat")
    assert out["status"] == "error" and sfc.lab.chains.names() == ["web", "mgmt", "ssh"]
    check("c1", "%%chain\nchain web: ids -> nat")
    assert sfc.lab.chains.names() == ["web", "mgmt"]


def test_nothing_to_check(sfc):
    assert check("c1", "print(1)")["status"] == "off"
    assert check("c1", "%%chain\n   ")["status"] == "off"
    assert check("c1", "%%chain --bogus\nchain web: nat")["status"] == "error"
