"""Branches on the field of an NF *before* the branching one, in the generated program:
the SFC header grows by a 32-bit saved metadata field per such NF (only then), a
save table after the NF's slot keeps its value, the branch table keys on that field,
on v1model and TNA, in the P4Info, in a kept program and on every switch of a network."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.compose import core_apply
from sfclab.codegen.network import generate_network
from sfclab.codegen.p4info import build_p4info
from sfclab.errors import CompileError
from sfclab.ir.topology import line
from sfclab.p4 import ast as A
from sfclab.passes.netplace import place_network
from sfclab.runtime.encode import P4InfoIndex

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codegen"
SAVED = FIXTURES / "saved_metadata.sfc"
#: l2fwd sets flood_flag, heavy_hitter and qos set their own metadata after it.
EDGE = ("chain c match udp.dport == 80 { input => l2fwd => heavy_hitter => qos;"
        " qos => (output : flood ? l2fwd.flood_flag == 0); flood => output; }")


def _sfc_fields(gen) -> list[tuple[str, int]]:
    (sfc_t,) = gen.program.program.find(A.HeaderDecl, "sfc_t")
    return [(f.name, f.type.width) for f in sfc_t.fields]


def _slot(gen, nf: str):
    return next(s for s in gen.composition.slots if s.nf == nf)


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_the_branch_tests_the_saved_value_of_the_nf_it_names(arch):
    gen = generate(sfclab.compile(SAVED.read_text(), arch=arch))
    assert _sfc_fields(gen)[-3:] == [("ingress_port", 16), ("saved_md0", 32), ("saved_md1", 32)]
    qos, l2fwd = _slot(gen, "qos"), _slot(gen, "l2fwd")
    assert qos.saved_keys == (0,) and l2fwd.saves and not qos.saves
    # the P4Info has the new key, and every entry encodes against it
    info = build_p4info(gen.program.program, arch=arch)
    table = next(t for t in info.tables if t.preamble.name.endswith(qos.branch_table))
    key = next(f for f in table.match_fields if f.name == "hdr.sfc.saved_md0")
    # (Tofino range-matches at most 20 bits: a ternary key there, its ranges as prefixes)
    assert key.bitwidth == 32 and key.match_type == (key.RANGE if arch == "v1model"
                                                     else key.TERNARY)
    index = P4InfoIndex(info)
    for e in gen.entries:
        index.update("INSERT", e)
    # after qos, the edge chain's branch tests l2fwd's saved flag, never qos's metadata
    after_qos = [e for e in gen.entries if e.table.endswith(qos.branch_table)]
    assert len(after_qos) == (4 if arch == "v1model" else 2 * (1 + 32))   # {0}; 1 .. 2^32-1
    top = (1 << 32) - 1
    for e in after_qos:
        match = dict(e.match)
        assert "meta.sfc.metadata" not in match
        m = match["hdr.sfc.saved_md0"]
        lo, hi = (m.low, m.high) if arch == "v1model" else (m.value, m.value | (top & ~m.mask))
        assert (lo, hi) in ((0, 0), (1, top)) if arch == "v1model" else \
            (lo, hi) == (0, 0) or 1 <= lo <= hi <= top
    # l2fwd's value is saved on every path of the chain, and nowhere else
    saves = [e for e in gen.entries if e.table.endswith("_save")]
    edge = {e for e in saves if e.group == "chain:edge"}
    assert {(e.table.rpartition(".")[2], e.action) for e in edge} == {
        (l2fwd.save_table, gen.composition.action("save_md0", l2fwd.pipelet))}
    assert len(edge) == 4 and len(saves) == 12                # guard saves lb and classifier
    # the save table runs right after the NF, before its branch table
    lines = [x.strip() for x in core_apply(gen.composition)]
    at = lines.index(f"{l2fwd.instance}.apply(hdr, meta.sfc);")
    assert lines[at + 1:at + 3] == [f"{l2fwd.save_table}.apply();",
                                    f"{l2fwd.branch_table}.apply();"]
    # the token starts with nothing saved
    assert "hdr.sfc.saved_md1 = 0;" in gen.program.text


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_a_condition_on_the_branching_nf_itself_changes_nothing(arch):
    gen = generate(sfclab.compile((FIXTURES / "design_example.sfc").read_text(), arch=arch))
    assert gen.composition.saved == 0 and not gen.composition.compiled.fsm.saves
    assert "saved_md" not in gen.program.text and "_save" not in gen.program.text
    assert _sfc_fields(gen)[-1] == ("ingress_port", 16)


def test_the_plan_says_where_values_are_saved():
    compiled = sfclab.compile(SAVED.read_text())
    assert ", 12 save entries;" in compiled.summary()
    text = compiled.explain()
    assert "    edge: l2fwd -> saved_md0" in text
    assert "l2fwd.flood_flag == 0 -> edge/0) -> edge/0 #1, bitmap" in text
    assert ", tests saved_md0" in text
    assert "SFC header: 29 bytes, with 2 saved metadata field(s)" in generate(compiled).plan()


def test_a_changed_chain_set_keeps_the_program():
    """Removing the guard chain is an update by entries: the kept program keeps the
    save tables, the branch keys and the header's saved fields."""
    compiled = sfclab.compile(SAVED.read_text())
    gen = generate(compiled)
    options = CodegenOptions.keeping(gen.composition)
    edge_only = sfclab.parse(SAVED.read_text())["edge"]
    again = generate(sfclab.compile([edge_only], pipeline=compiled.pipeline.chosen.slots),
                     options=options)
    assert again.program.program == gen.program.program
    assert again.composition.saved == 2
    assert {e.group for e in again.entries if e.table.endswith("_save")} == {"chain:edge"}


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_every_switch_of_a_network_carries_the_saved_field(arch):
    chains = sfclab.parse(EDGE)
    for c in chains:
        c.ingress, c.egress = "h1", "h2"
    # 6 NF stages a switch: heavy_hitter (5) and qos (5) each need one of their own
    prog = generate_network(place_network(line(4, stages=8, arch=arch), chains), chains)
    assert [(s.node, s.nodes) for s in prog.journeys["c/1"]] == [
        ("s1", ("l2fwd",)), ("s2", ("heavy_hitter",)), ("s3", ("qos",)), ("s4", ("flood",))]
    gens = {s: sp.generated for s, sp in prog.switches.items()}
    # one header on every link
    assert {tuple(_sfc_fields(g)) for g in gens.values()} == {tuple(_sfc_fields(gens["s1"]))}
    assert _sfc_fields(gens["s1"])[-1] == ("saved_md0", 32)
    # s1 runs one segment of both paths: l2fwd, whose value it saves
    l2fwd = next(sl for sl in gens["s1"].composition.slots if sl.nf == "l2fwd")
    assert [e.action for e in gens["s1"].entries if e.table.endswith("_save")] == [
        gens["s1"].composition.action("save_md0", l2fwd.pipelet)]
    tested = [e for e in gens["s3"].entries if e.table.endswith("_branch")]
    assert tested and all("hdr.sfc.saved_md0" in dict(e.match) for e in tested)
    assert not [e for e in gens["s2"].entries if e.table.endswith(("_save", "_branch"))]


def test_a_value_an_nf_on_a_server_would_set_is_refused():
    t = line(3)
    t.add_server("srv1", nfs=("dpi",))
    t.add_link("srv1", "s2")
    chains = sfclab.parse("chain c { input => firewall => dpi => nat;"
                          " nat => (output : drop ? dpi.verdict == 0); }")
    for c in chains:
        c.ingress, c.egress = "h1", "h2"
    with pytest.raises(CompileError, match="tests a field of 'dpi', which runs on server srv1"):
        generate_network(place_network(t, chains), chains)
