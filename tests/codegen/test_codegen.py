"""The code generator: golden programs per architecture, entries that agree with the
program and the FSM plan, and one clear error for what an architecture cannot express."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.compose import compose
from sfclab.errors import CompileError
from sfclab.p4 import ast as A
from sfclab.p4 import parse_p4, to_p4
from sfclab.p4.names import qualified_objects

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codegen"
CHAIN_SETS = sorted(FIXTURES.glob("*.sfc"))
ARCHS = ("v1model", "tna")


def _generate(path: Path, arch: str):
    return generate(sfclab.compile(path.read_text(), arch=arch))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_golden_program(path: Path, arch: str):
    """The whole program, compared with its golden file (SFCLAB_REGEN=1 rewrites it)."""
    actual = _generate(path, arch).program.text
    golden = path.with_suffix(f".{arch}.p4")
    if os.environ.get("SFCLAB_REGEN") or not golden.exists():
        golden.write_text(actual)
    expected = golden.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            str(golden.name), "generated", n=2))
        pytest.fail(f"{golden.name} differs from what sfclab generates:\n{diff[:6000]}")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_program_reparses_with_sfclabs_grammar(path: Path, arch: str):
    gen = _generate(path, arch)
    again = parse_p4(gen.program.text)
    assert again == gen.program.program
    assert to_p4(again) == to_p4(gen.program.program)


def _tables(prog: A.Program) -> dict[str, tuple[A.TableDecl, dict[str, list[str]]]]:
    """Qualified table name -> (declaration, {action name: params}) of the program."""
    objs = qualified_objects(prog)
    actions = {o.name: [p.name for p in o.decl.params] for o in objs if o.kind == "action"}
    out = {}
    for o in objs:
        if o.kind == "table":
            prefix = ".".join(o.path)
            acts = {}
            for ref in o.decl.actions:
                q = f"{prefix}.{ref.name}" if f"{prefix}.{ref.name}" in actions else ref.name
                acts[q] = actions.get(q, [])
            out[o.name] = (o.decl, acts)
    return out


def _key_names(t: A.TableDecl) -> dict[str, str]:
    out = {}
    for k in t.keys:
        name = next((a.body.strip('"') for a in k.annotations if a.name == "name"),
                    to_p4(k.expr).strip())
        out[name] = k.match_kind
    return out


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_every_entry_fits_the_program(path: Path, arch: str):
    gen = _generate(path, arch)
    tables = _tables(gen.program.program)
    counts: dict[str, int] = {}
    for e in gen.entries:
        assert e.table in tables, f"{e.table} is not a table of the program"
        decl, actions = tables[e.table]
        assert e.action in actions, f"{e.table} has no action {e.action}"
        assert sorted(k for k, _ in e.params) == sorted(actions[e.action]), e
        keys = _key_names(decl)
        for name, m in e.match:
            assert name in keys, f"{e.table} has no key {name}"
            assert type(m).__name__.lower() == keys[name] or (
                keys[name] == "ternary" and type(m).__name__ == "Ternary"), (e, keys[name])
        needs_priority = any(k in ("ternary", "range", "optional") for k in keys.values())
        assert (e.priority is not None and e.priority > 0) == needs_priority, e
        counts[e.table] = counts.get(e.table, 0) + 1
    for name, n in counts.items():
        assert n <= tables[name][0].size, f"{name}: {n} entries, size {tables[name][0].size}"


@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_entries_and_widths_agree_with_the_fsm_plan(path: Path):
    compiled = sfclab.compile(path.read_text())
    gen = generate(compiled)
    fsm = compiled.fsm
    by = gen.groups()
    rewinder = [e for e in gen.entries if e.table.endswith(".rewinder")]
    assert len(rewinder) == len(fsm.rewinder)
    assert {e.note for e in rewinder} == {str(r) for r in fsm.rewinder}
    init = [e for e in gen.entries if e.table.endswith(".initializer")]
    assert {dict(e.params)["path_id"] for e in init} == {i.path_num for i in fsm.initializer}
    branch = [e for e in gen.entries if "_branch" in e.table]
    assert {(dict(e.match)["hdr.sfc.path_id"].value, int(e.table.split("slot")[1].split("_")[0]))
            for e in branch} == {(b.path_num, b.slot) for b in fsm.branches}
    for chain in compiled.chains.names():
        assert f"chain:{chain}" in by
    # the SFC header holds every token the plan needs
    (sfc_t,) = gen.program.program.find(A.HeaderDecl, "sfc_t")
    widths = {f.name: f.type.width for f in sfc_t.fields}
    w = fsm.widths
    assert widths["path_id"] >= w.path_id and widths["state"] >= w.state
    assert widths["bitmap"] >= w.bitmap and widths["counter"] >= w.counter
    for e in gen.entries:
        params = dict(e.params)
        if "bitmap" in params:
            assert params["bitmap"] < 1 << len(fsm.slots)


def test_slots_and_control_tables_have_readable_names():
    gen = _generate(FIXTURES / "design_example.sfc", "v1model")
    names = {o.name for o in qualified_objects(gen.program.program)}
    assert {"SfcIngress.initializer", "SfcIngress.rewinder", "SfcIngress.slot0_branch",
            "SfcIngress.slot0_firewall.acl", "SfcIngress.slot0_firewall.deny"} <= names


def test_classifier_negation_and_ranges_become_range_entries():
    gen = _generate(FIXTURES / "loops_digests.sfc", "v1model")
    sr = [e for e in gen.entries if e.table.endswith("initializer") and e.group == "chain:sr"]
    ranges = sorted((m.low, m.high) for e in sr for k, m in e.match if k == "hdr.udp.dst_port")
    assert ranges == [(0, 52), (54, 65535)]            # udp.dport != 53


def test_tna_lowers_the_state_api():
    text = _generate(FIXTURES / "loops_digests.sfc", "tna").program.text
    assert "Register<bit<32>, bit<10>>(1024) sketch_row0;" in text
    # the count-min rows: one read-modify-write RegisterAction each (Tofino's one access)
    assert "RegisterAction<bit<32>, bit<10>, bit<32>>(sketch_row0) sketch_row0_add0" in text
    assert "cnt0 = sketch_row0_add0.execute(idx0);" in text
    assert "sketch_row0_read" not in text
    assert "Hash<bit<10>>(HashAlgorithm_t.CRC32) row0_hash;" in text
    assert "Digest<mac_learn_digest_t>() slot" in text and "ig_dprsr_md.digest_type = " in text
    assert "SfcRegister" not in text and "SfcHash" not in text and "SfcDigest" not in text


def test_a_digest_sends_the_copy_its_pack_call_made():
    """BMv2 reads a digest's fields when ingress ends, TNA's deparser after it: on both,
    pack() copies the data into its slot's own buffer and the digest is built from that.
    (On TNA an NF type has one slot, on a pipelet placement chose: the path runs it twice.)"""
    chains = ("chain a match vlan.vid == 10: "
              "mac_learning -> l3fwd -> mac_learning#2 -> l2fwd")
    for arch in ("v1model", "tna"):
        gen = generate(sfclab.compile(chains, arch=arch))
        text = gen.program.text
        assert "dg.learn_digest = {hdr.ethernet.src_addr, sfc.ingress_port};" in text
        slots = [s.instance for s in gen.composition.slots if s.nf == "mac_learning"]
        assert len(slots) == (2 if arch == "v1model" else 1)
        for slot in slots:
            assert f"mac_learning_digest_buf_t {slot}_dg;" in text
            assert f"{slot}.apply(hdr, meta.sfc, meta.{slot}_dg);" in text
        if arch == "v1model":
            calls = [line.strip() for line in text.splitlines() if "digest<" in line]
            assert calls == ["digest<mac_learn_digest_t>(32w1, dg.learn_digest);"]
        else:
            assert (f"{slots[0]}_learn_digest.pack(meta.{slots[0]}_dg.learn_digest)" in text)


def test_tna_stateful_firewall_touches_each_register_once_per_packet():
    """Point 7 of issue 13: one RegisterAction per register, declared after what it reads."""
    text = generate(sfclab.compile("chain s: stateful_firewall -> l3fwd", arch="tna")).program.text
    control = text[text.index("control stateful_firewall"):text.index("control l3fwd")]
    executes = [line.strip() for line in control.splitlines() if ".execute(" in line]
    assert executes == ["new_window = roll_window.execute(flow_idx);",
                        "over_limit = count_packet.execute(flow_idx);"]
    assert "RegisterAction<bit<32>, bit<12>, bit<1>>(window_start) roll_window = {" in control
    assert control.index("bit<32> now = 0;") < control.index("roll_window = {")
    assert control.index("bit<1> new_window = 0;") < control.index("count_packet = {")


RW_NF = """control rw_nf(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcRegister<bit<32>, bit<4>>(16) seen;
    bit<32> n = 0;
    apply {
        n = seen.read(0);
        %s
    }
}"""


def _compile_nf(text: str):
    cat = sfclab.catalog.copy()
    name = cat.add_source(text)
    return sfclab.compile(sfclab.parse(f"chain a: {name}", catalog=cat), catalog=cat)


def test_tna_refuses_two_accesses_to_one_register_on_one_path():
    compiled = _compile_nf(RW_NF % "seen.write(0, n + 1);")
    generate(compiled, arch="v1model")                     # BMv2 may read and write
    with pytest.raises(CompileError) as err:
        generate(compiled, arch="tna")
    msg = str(err.value)
    assert "NF 'rw_nf': register 'seen' is accessed 2 times on one packet path" in msg
    assert "seen.read (line 5), seen.write (line 6)" in msg
    assert "SfcRegisterAction" in err.value.hint


def test_tna_accepts_accesses_on_exclusive_branches():
    compiled = _compile_nf(RW_NF.replace("n = seen.read(0);", "if (hdr.ipv4.isValid()) "
                                         "{ n = seen.read(0); }") % "else { seen.write(0, 7); }")
    text = generate(compiled, arch="tna").program.text
    assert "seen_read.execute(0)" in text and "seen_write0.execute(0)" in text


def test_tna_declares_register_actions_after_what_they_read():
    compiled = _compile_nf("""control stamp_nf(inout headers_t hdr, inout sfc_meta_t sfc) {
        SfcRegister<bit<32>, bit<4>>(16) last_seen;
        bit<32> now = 0;
        apply { now = sfc.timestamp[31:0]; last_seen.write(0, now); }
    }""")
    text = generate(compiled, arch="tna").program.text    # checked: no "now: declaration not found"
    assert text.index("bit<32> now = 0;") < text.index("last_seen_write0 = {")


def test_v1model_inlines_a_register_action_as_read_body_write():
    compiled = _compile_nf("""control bump_nf(inout headers_t hdr, inout sfc_meta_t sfc) {
        SfcRegister<bit<32>, bit<4>>(16) cells;
        bit<4> i = 0;
        bit<32> n = 0;
        SfcRegisterAction<bit<32>, bit<4>, bit<32>>(cells) bump = {
            void apply(inout bit<32> value, out bit<32> rv) { value = value + 2; rv = value; }
        };
        apply { n = bump.execute(i); bump.execute(i + 1); }
    }""")
    text = generate(compiled, arch="v1model").program.text
    body = text[text.index("control bump_nf"):]
    assert "bit<32> bump_value;\n    bit<32> bump_rv;\n    bit<4> bump_index;" in body
    assert ("cells.read(bump_value, bump_index);\n        {\n"
            "            bump_value = bump_value + 2;" in body)
    assert "cells.write(bump_index, bump_value);\n        n = bump_rv;" in body
    assert "bump_index = i + 1;" in body
    with pytest.raises(CompileError, match=r"'cells' is accessed 2 times on one packet path: "
                                           r"bump.execute \(line 8\), bump.execute \(line 8\)"):
        generate(compiled, arch="tna")                    # one RegisterAction, executed twice


def test_tna_keeps_an_nfs_register_action():
    compiled = _compile_nf("""control bump_nf(inout headers_t hdr, inout sfc_meta_t sfc) {
        SfcRegister<bit<32>, bit<4>>(16) cells;
        bit<32> n = 0;
        SfcRegisterAction<bit<32>, bit<4>, bit<32>>(cells) bump = {
            void apply(inout bit<32> value, out bit<32> rv) { value = value + 2; rv = value; }
        };
        apply { n = bump.execute(3); }
    }""")
    tna = generate(compiled, arch="tna").program.text
    assert "RegisterAction<bit<32>, bit<4>, bit<32>>(cells) bump = {" in tna
    assert "n = bump.execute(3);" in tna
    v1 = generate(compiled, arch="v1model").program.text
    assert "cells.read(bump_value, 3);" in v1 and "bump_index" not in v1


LIBRARY_STATEFUL = ["stateful_firewall", "heavy_hitter", "monitor", "qos", "mac_learning"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("nf", sorted(sfclab.catalog.definition(n).name
                                      for n in sfclab.catalog.names()
                                      if sfclab.catalog.definition(n).has_p4))
def test_every_library_nf_passes_the_architecture_checks(nf: str, arch: str):
    """Alone and mid-chain, on both architectures: what p4c / p4test would refuse
    (specialisations, arguments, declaration order, TNA's one access) is refused here."""
    from sfclab.p4.check import check_program

    before = "nat" if nf == "firewall" else "firewall"
    after = "l2fwd" if nf == "l3fwd" else "l3fwd"
    for chain in (f"chain c: {nf}", f"chain c: {before} -> {nf} -> {after}"):
        gen = generate(sfclab.compile(chain, arch=arch))
        env = check_program(gen.program.program, text=gen.program.text)
        assert env.arch == arch
        assert ("#define V1MODEL_VERSION 20200408\n#include <v1model.p4>" in gen.program.text) == (
            arch == "v1model")


def test_compile_refuses_a_program_p4c_would_refuse(monkeypatch, tmp_path, capsys):
    """Without ``#define V1MODEL_VERSION 20200408`` v1model.p4 declares ``register<T>``: a
    program that specialises it with an index type is refused by ``generate`` and by
    ``sfclab compile`` with p4c's words, before any p4c sees it (issue 13, point 1)."""
    from sfclab.cli import main
    from sfclab.codegen.v1model import V1ModelEmitter

    monkeypatch.setattr(V1ModelEmitter, "DEFINES", {})       # an emitter that forgot the define
    chains = "chain c: stateful_firewall -> l3fwd"
    with pytest.raises(CompileError) as err:
        generate(sfclab.compile(chains))
    assert "Type register has 1 type parameter(s), but it is specialized with 2" in str(err.value)
    assert "V1MODEL_VERSION" in err.value.hint
    (tmp_path / "c.sfc").write_text(chains + "\n")
    assert main(["compile", str(tmp_path / "c.sfc"), "-o", str(tmp_path / "out")]) != 0
    captured = capsys.readouterr()
    assert "would not compile" in captured.err + captured.out
    assert not any((tmp_path / "out").glob("*.p4"))             # nothing written


@pytest.mark.parametrize("golden", sorted(FIXTURES.glob("*.p4")), ids=lambda p: p.name)
def test_every_golden_program_passes_the_architecture_checks(golden: Path):
    from sfclab.p4 import check_program, parse_p4_file

    env = check_program(parse_p4_file(golden))
    assert env.arch == golden.suffixes[0].lstrip(".")


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.sfc"))
#: every_nf.sfc's NFs need 51 Tofino stages: placement refuses them on 2 pipes (a 32-port
#: Tofino 1) and places them on 4 (the 64-port one).
TNA_PIPES = {"every_nf": 4}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_generates_a_checked_program(path: Path, arch: str):
    ports = CodegenOptions(bindings={"p1": 1, "p2": 2, "p3": 3})      # flexmesh_fig9's case ports
    pipes = {"pipes": TNA_PIPES.get(path.stem, 2)} if arch == "tna" else {}
    gen = generate(sfclab.compile(path.read_text(), arch=arch, **pipes), options=ports)  # checks
    assert gen.program.program is not None and gen.arch == arch


def test_the_stateful_library_nfs_are_all_checked():
    assert set(LIBRARY_STATEFUL) <= {sfclab.catalog.definition(n).name
                                     for n in sfclab.catalog.names()}


def test_what_cannot_run_on_a_switch_is_refused():
    from sfclab.codegen.compose import compose

    # generate() sends ips to a server (tests/codegen/test_codegen_detour.py); a switch cannot run it
    with pytest.raises(CompileError, match="NF 'ips' has no P4"):
        compose(sfclab.compile("chain a: firewall -> ips"))
    with pytest.raises(CompileError, match="no code generator for architecture 'psa'"):
        from sfclab.codegen import emitter_for
        emitter_for("psa")


def test_tna_refuses_csum16_hashes():
    cat = sfclab.catalog.copy()
    cat.add_source("""control csum_nf(inout headers_t hdr, inout sfc_meta_t sfc) {
        SfcHash<bit<16>>(SfcHashAlgorithm.CSUM16) h;
        bit<16> x = 0;
        apply { x = h.get({hdr.ethernet.src_addr}); }
    }""")
    compiled = sfclab.compile(sfclab.parse("chain a: csum_nf", catalog=cat), catalog=cat)
    generate(compiled, arch="v1model")                   # v1model has csum16
    with pytest.raises(CompileError, match="tna cannot express the hash algorithm CSUM16"):
        generate(compiled, arch="tna")


def test_runtime_names_in_conditions_need_bindings():
    src = "chain m { input => classifier => (p1@nat : p2@lb # classifier.class_id); nat => output; lb => output; }"
    compiled = sfclab.compile(src)
    with pytest.raises(CompileError, match="run-time names with no value"):
        generate(compiled)
    gen = generate(compiled, options=CodegenOptions(bindings={"p1": 7, "p2": 9}))
    vals = sorted(dict(e.match)["meta.sfc.metadata"].low for e in gen.entries if "_branch" in e.table)
    assert vals == [7, 9]


def test_nf_example_entries_can_be_left_out():
    compiled = sfclab.compile((FIXTURES / "design_example.sfc").read_text())
    with_nf = generate(compiled)
    without = generate(compiled, options=CodegenOptions(nf_entries="none"))
    assert any(g.startswith("nf:") for g in with_nf.groups())
    assert not any(g.startswith("nf:") for g in without.groups())


def test_the_parser_extracts_only_what_is_used():
    comp = compose(sfclab.compile("chain a: l2fwd"))
    assert comp.headers == ("ethernet", "sfc")
    comp = compose(sfclab.compile("chain a match udp.dport == 4789: vgw"))
    assert {"vxlan", "inner_ethernet", "inner_ipv4", "udp", "ipv4"} <= set(comp.headers)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", CHAIN_SETS, ids=lambda p: p.stem)
def test_every_entry_resolves_in_the_p4info(path: Path, arch: str):
    """Entries name tables, match fields, actions and parameters exactly as the
    program's P4Info (p4c's names) does, so a P4Runtime client can encode them."""
    from sfclab.codegen.p4info import build_p4info

    gen = _generate(path, arch)
    info = build_p4info(gen.program.program, arch=arch)
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    for e in gen.entries:
        assert e.table in tables, f"{e.table} not in P4Info ({sorted(tables)[:5]} …)"
        t = tables[e.table]
        fields = {f.name for f in t.match_fields}
        assert {k for k, _ in e.match} <= fields, (e, fields)
        action_ids = {a.id for a in t.action_refs}
        assert e.action in actions and actions[e.action].preamble.id in action_ids, e
        assert sorted(p.name for p in actions[e.action].params) == sorted(k for k, _ in e.params)


def test_tna_keeps_the_packet_out_port_out_of_shared_phv_containers():
    """p4c-barefoot 9.13.4 crashed ("Compiler Bug: Metadata initialization analysis
    incorrect") when the packet-out branch's field shared a PHV container with an NF local
    zeroed in the other branch (every_nf.sfc --pipeline naive; tests/targets/test_tofino.py
    compiles it): the TNA ingress says ``@pa_no_overlay`` for that field, by a name the
    program has; v1model has no such annotation."""
    src = "chain c { input => qos => output; }"
    prog = generate(sfclab.compile(src, arch="tna")).program.program
    ingresses = [d for d in prog.decls if getattr(d, "name", "").startswith("SfcIngress")
                 and isinstance(d, A.ControlDecl) and "Deparser" not in d.name]
    assert [c.name for c in ingresses] == ["SfcIngress0", "SfcIngress1"]     # a pipe each
    for ingress in ingresses:
        (pa,) = [a for a in ingress.annotations if a.name == "pa_no_overlay"]
        gress, field = (x.strip().strip('"') for x in pa.body.split(","))
        assert (gress, field) == ("ingress", "hdr.packet_out.egress_port")
    types = {d.name: d for d in prog.decls if isinstance(d, (A.StructDecl, A.HeaderDecl))}
    decl = types["headers_t"]
    for name in field.split(".")[1:]:
        f = next(f for f in decl.fields if f.name == name)
        decl = types.get(getattr(f.type, "name", ""))
    assert f.type == A.BitType(16)
    v1 = generate(sfclab.compile(src, arch="v1model")).program.text
    assert "@pa_" not in v1
