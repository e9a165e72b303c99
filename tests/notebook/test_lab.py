"""The Lab API: add/replace/remove, atomic errors, caching, code, NFs, callbacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sfclab
import sfclab.lab as lab_module
from sfclab import Lab
from sfclab.errors import (CatalogError, ChainError, ChainSyntaxError, ChainValidationError,
                           CompileError, P4SyntaxError)
from sfclab.lab import LabChange
from test_editor import dummy_comm  # noqa: F401  (widgets talk to a dummy comm)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WEB = (EXAMPLES / "web.sfc").read_text()
TAGGER = """control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply { if (hdr.ipv4.isValid()) { hdr.ipv4.diffserv = 8w46; } }
}"""
MARKER = """control tagger(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply { sfc.metadata = 1; }
}"""


@pytest.fixture
def compiles(monkeypatch):
    """Count the compiler runs of every Lab."""
    calls: list[list[str]] = []
    real = lab_module.compile

    def counting(chains, **kw):
        calls.append(chains.names())
        return real(chains, **kw)

    monkeypatch.setattr(lab_module, "compile", counting)
    return calls


def state(lab: Lab) -> tuple:
    return (lab.chains.names(), lab.compiled, lab.arch, sorted(lab.catalog.names()))


# -- add / replace / remove ------------------------------------------------------------------------

def test_empty_lab():
    lab = Lab()
    assert len(lab.chains) == 0 and lab.compiled.paths == () and lab.arch == "v1model"
    assert repr(lab) == "<Lab v1model: 0 chains, 0 service paths>"


def test_add_replace_remove():
    lab = Lab()
    assert lab.add(WEB) == ("web", "mgmt")
    assert [str(p).split(" ")[0] for p in lab.compiled.paths] == ["web/0", "web/1", "mgmt/0"]
    assert lab.add("chain web: firewall -> l3fwd") == ("web",)           # replaces, keeps order
    assert lab.chains.names() == ["web", "mgmt"]
    assert lab.compiled.chains["web"].nf_types() == ["firewall", "l3fwd"]
    assert lab.add("chain extra: nat") == ("extra",)
    assert lab.remove("web", "extra") == ("web", "extra")
    assert lab.chains.names() == ["mgmt"] and lab.compiled.pipeline.slots == ("l2fwd",)
    assert "mgmt" in repr(lab)


@pytest.mark.parametrize("example, names", [
    ("p4sc_table3.sfc", ["SFC1_DC", "SFC2_HTTP", "SFC3_GiLAN"]),
    ("p4sfc_intent.json", ["web_ips"]),
])
def test_every_chain_style(example, names):
    lab = Lab()
    lab.add((EXAMPLES / example).read_text())
    assert lab.chains.names()[:len(names)] == names


def test_add_chain_objects_and_rename():
    lab = Lab()
    cs = sfclab.parse(WEB)
    assert lab.add(cs) == ("web", "mgmt")
    assert lab.add(cs["mgmt"], name="admin") == ("admin",)
    assert lab.chains.names() == ["web", "mgmt", "admin"]
    assert lab.add([cs["web"]]) == ("web",)
    assert cs.names() == ["web", "mgmt"]                    # the caller's set is not touched


def test_arch_switch():
    lab = Lab()
    lab.add(WEB)
    assert lab.compiled.placement is None
    lab.arch = "tna"
    assert lab.compiled.arch == "tna" and lab.compiled.placement is not None
    lab.add("chain x: nat", arch="v1model")
    assert lab.arch == "v1model" and lab.compiled.arch == "v1model"


def test_compile_options_reach_the_compiler():
    lab = Lab(pipeline="optimal")
    lab.add("chain p: L3_SW -> FW -> NAT\nchain r: L3_SW -> NAT -> FW")
    assert lab.compiled.pipeline.chosen.method == "optimal"
    with pytest.raises(CompileError, match="unknown compile option 'pipline'"):
        Lab(pipline="optimal")
    with pytest.raises(CompileError, match="unknown architecture 'tofino'"):
        Lab(arch="tofino")


# -- errors change nothing -------------------------------------------------------------------------

@pytest.mark.parametrize("do, error, message", [
    (lambda lab: lab.add("chain c { input => firewal => output; }"), ChainValidationError,
     "unknown NF 'firewal'"),
    (lambda lab: lab.add("chain c { input => => output; }"), ChainSyntaxError, None),
    (lambda lab: lab.add("chain a: nat\nchain a: lb"), ChainValidationError, "duplicate chain"),
    (lambda lab: lab.add(WEB, name="one"), ChainError, "a name is for one chain; got 2"),
    (lambda lab: lab.add("chain c: nat", arch="tofino"), CompileError, "unknown architecture"),
    (lambda lab: setattr(lab, "arch", "bmv2"), CompileError, "unknown architecture"),
    (lambda lab: lab.remove("mgmt", "wbe"), ChainError, "no chain 'wbe'"),
    (lambda lab: lab.add_nf("control x( {"), P4SyntaxError, None),
    (lambda lab: lab.add_nf(TAGGER.replace("tagger", "firewall")), CatalogError,
     "already in the catalogue"),
])
def test_errors_leave_the_lab_unchanged(do, error, message):
    lab = Lab()
    lab.add(WEB)
    seen: list[LabChange] = []
    lab.on_change(seen.append)
    before = state(lab)
    with pytest.raises(error, match=message):
        do(lab)
    assert state(lab) == before and seen == []


def test_weights_across_cells_add_up_to_at_most_one():
    lab = Lab()
    lab.add("chain web weight 0.6: firewall -> nat")
    before = state(lab)
    cell = "chain dns match udp.dport == 53 weight 0.3: l3fwd\nchain ssh weight 0.2: nat"
    with pytest.raises(ChainValidationError) as e:           # 0.6 + 0.3 + 0.2: refused
        lab.add(cell, source="<cell>")
    assert state(lab) == before
    err = e.value
    assert err.message == ("the chain weights add up to 1.1, more than all the traffic: "
                           "0.6 (web) + 0.3 (dns) + 0.2 (ssh)")
    assert (err.line, err.column) == (2, cell.splitlines()[1].index("0.2") + 1)  # the weight
    assert "give this chain at most 0.1" in err.hint
    # a chain given again replaces its weight; objects are refused without a position
    assert lab.add("chain web weight 0.3: firewall -> nat\n" + cell) == ("web", "dns", "ssh")
    assert sum(c.weight for c in lab.chains) == pytest.approx(0.8)
    with pytest.raises(ChainError, match=r"add up to 1.7.*0.9 \(big\)"):
        lab.add(sfclab.parse("chain big weight 0.9: l3fwd"))
    assert lab.chains.names() == ["web", "dns", "ssh"]


def test_remove_suggests_names():
    lab = Lab()
    lab.add(WEB)
    with pytest.raises(ChainError) as e:
        lab.remove("wbe")
    assert e.value.hint == "did you mean 'web'?"
    with pytest.raises(ChainError, match="no chain") as e:
        Lab().remove("web")
    assert e.value.hint == "there are no chains"


def test_errors_render_the_caret_line():
    lab = Lab()
    with pytest.raises(ChainValidationError) as e:
        lab.add("chain c {\n    input => firewal => output;\n}", source="<cell>")
    assert str(e.value).splitlines() == [
        "<cell>:2:14: unknown NF 'firewal'", "        input => firewal => output;",
        "                 ^^^^^^^", "hint: did you mean 'firewall'?"]


# -- caching ---------------------------------------------------------------------------------------

def test_unchanged_chains_are_not_recompiled(compiles):
    lab = Lab()
    lab.add(WEB)
    first = lab.compiled
    n = len(compiles)
    lab.add(WEB)                                          # the same cell run again
    lab.add("chain web2: nat")
    lab.remove("web2")                                    # back to a chain set seen before
    lab.arch = "tna"
    lab.arch = "v1model"
    assert lab.compiled is first
    assert len(compiles) == n + 2                         # web2 once, tna once


def test_generated_is_cached_per_compiled_set_and_arch():
    lab = Lab()
    lab.add(WEB)
    gen = lab.generated()
    assert lab.generated() is gen and gen.arch == "v1model"
    tna = lab.generated("tna")
    assert tna.arch == "tna" and lab.generated("tna") is tna
    lab.add("chain x: nat")
    assert lab.generated() is not gen and "x" in lab.generated().groups().__repr__()
    with pytest.raises(CompileError, match="no code generator"):
        lab.generated("bmv2")


def test_export(tmp_path):
    lab = Lab()
    lab.add(WEB)
    written = lab.export(tmp_path / "out", arch="tna")
    assert sorted(p.name for p in written) == ["entries.json", "p4info.txt", "plan.txt",
                                               "program.p4"]
    assert "tna" in (tmp_path / "out" / "program.p4").read_text().splitlines()[0].lower()
    assert "chain:web" in json.loads((tmp_path / "out" / "entries.json").read_text())


# -- callbacks -----------------------------------------------------------------------------------

def test_on_change_names_what_changed():
    lab = Lab()
    seen: list[LabChange] = []
    assert lab.on_change(seen.append) == seen.append
    lab.add(WEB)
    lab.add("chain web: firewall -> l3fwd\nchain x: nat")
    lab.add("chain x: nat")                               # no change: no call
    lab.remove("mgmt")
    lab.arch = "tna"
    assert [(c.reason, c.added, c.replaced, c.removed) for c in seen] == [
        ("add", ("web", "mgmt"), (), ()), ("add", ("x",), ("web",), ()),
        ("remove", (), (), ("mgmt",)), ("arch", (), (), ())]
    assert seen[1].previous is seen[0].compiled and seen[-1].compiled is lab.compiled
    lab.on_change(seen.append, remove=True)
    lab.remove("x")
    assert len(seen) == 4


# -- user NFs -------------------------------------------------------------------------------------

def test_add_nf_is_this_labs_own():
    lab, other = Lab(), Lab()
    seen: list[LabChange] = []
    lab.on_change(seen.append)
    assert lab.add_nf(TAGGER, manifest={"layer": 3, "offload": "partially"}) == "tagger"
    info = lab.catalog.resolve("tagger")
    assert (info.layer, info.offload) == (3, "partially") and seen[-1].reason == "nf"
    lab.add("chain c: tagger -> l3fwd")
    assert "tagger" in lab.generated().program.text
    assert "tagger" not in other.catalog and "tagger" not in sfclab.catalog
    with pytest.raises(ChainValidationError, match="unknown NF 'tagger'"):
        other.add("chain c: tagger")


def test_add_nf_again_redefines_and_rechecks_the_chains():
    lab = Lab()
    lab.add_nf(MARKER, manifest={"field": {"name": "mark", "width": 8}})
    lab.add("chain c { input => tagger => (nat : drop ? tagger.mark == 1); nat => output; }")
    lab.add_nf(MARKER, manifest={"field": {"name": "mark", "width": 8}, "layer": 2})
    assert lab.catalog.resolve("tagger").layer == 2
    before = state(lab)
    with pytest.raises(ChainValidationError, match="mark"):      # the chain uses tagger.mark
        lab.add_nf(MARKER)
    assert state(lab) == before and lab.catalog.resolve("tagger").fields == {"mark": 8}


def test_add_nf_shadows_the_library_only_when_asked():
    lab = Lab()
    lab.add(WEB)
    lab.add_nf(TAGGER.replace("tagger", "nat"), replace=True)
    assert lab.catalog.definition("nat").has_p4 and "diffserv" in lab.generated().program.text
    assert "diffserv = 8w46" not in Lab().generated().program.text


# -- the view -------------------------------------------------------------------------------------

def test_view_is_made_on_first_use_and_kept():
    lab = Lab()
    assert lab._views == {}                               # scripts pay nothing for views
    view = lab.view
    assert lab.view is view and lab.live_view() is view
    assert lab.live_view("entries,p4,topology,offload,placement,fsm,pipeline,ir,chains") is view
    ir = lab.live_view("ir")
    assert ir is not view and lab.live_view(["ir"]) is ir and ir.show == ("ir",)
    lab.add(WEB)
    assert "2 chains" in view.summary and "2 chains" in ir.summary
    view.close()
    assert lab.view is not view
    with pytest.raises(ValueError, match="did you mean 'ir'"):
        lab.live_view("irr")

