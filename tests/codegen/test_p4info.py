"""P4Info generation: p4c's names, ids and aliases for sfclab's P4 AST.

The strongest checks here compare with ids that p4c itself wrote into its
test outputs (``testdata/p4_16_samples_outputs/*.p4info.txtpb`` in
p4lang/p4c, and P4Infos of projects compiled with p4c): the programs below
are written for this test but declare the same objects under the same names,
so p4c would give them the same ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import finsy
import pytest
from google.protobuf import json_format

from sfclab.codegen.p4info import (
    PREFIX,
    SymbolTable,
    build_p4info,
    compare_p4info,
    field_ids,
    jenkins_hash,
    p4info_from_text,
    p4info_json,
    p4info_text,
    probe_id,
)
from sfclab.codegen.p4c import find_compiler, run_p4c
from sfclab.errors import CompileError
from sfclab.p4 import parse_p4, parse_p4_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "p4"
V1_HEAD = "#include <core.p4>\n#include <v1model.p4>\n"


def one_at_a_time(name: str) -> int:
    """Jenkins' one-at-a-time hash, written out independently of the module."""
    h = 0
    for byte in name.encode("utf-8"):
        h = (h + byte) % 2**32
        h = (h + h * 1024) % 2**32
        h = h ^ (h // 64)
    h = (h + h * 8) % 2**32
    h = h ^ (h // 2048)
    return (h + h * 32768) % 2**32


def expected_id(prefix: int, name: str) -> int:
    return prefix * 2**24 + one_at_a_time(name) % 2**24


def v1(body: str):
    return parse_p4(V1_HEAD + body)


def by_name(items):
    return {x.preamble.name: x for x in items}


def ids(items):
    return {x.preamble.name: x.preamble.id for x in items}


def aliases(items):
    return {x.preamble.name: x.preamble.alias for x in items}


def v1switch(ingress: str = "MyIngress", egress: str = "MyEgress") -> str:
    return f"""
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {{
    state start {{ transition accept; }}
}}
control MyVerify(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control MyCompute(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control MyDeparser(packet_out pkt, in headers hdr) {{ apply {{ }} }}
V1Switch(MyParser(), MyVerify(), {ingress}(), {egress}(), MyCompute(), MyDeparser()) main;
"""


# --- ids that p4c wrote ---------------------------------------------------------------------

#: (prefix, fully qualified name, id) from P4Info files p4c generated.
P4C_IDS = [
    # core.p4's NoAction, in every v1model P4Info
    (0x01, "NoAction", 21257015),
    # flowlet_switching-bmv2.p4.p4info.txtpb
    (0x02, "ingress.ecmp_group", 38446407),
    (0x02, "ingress.ecmp_nhop", 41627831),
    (0x02, "ingress.flowlet", 42150575),
    (0x02, "ingress.forward", 43289378),
    (0x02, "ingress.new_flowlet", 43789109),
    (0x02, "egress.send_frame", 49367184),
    (0x01, "ingress._drop", 19344232),
    (0x01, "ingress.set_ecmp_select", 20375000),
    (0x01, "ingress.set_nhop", 29239084),
    (0x01, "ingress.lookup_flowlet_map", 27889477),
    (0x01, "ingress.set_dmac", 30489383),
    (0x01, "ingress.update_flowlet_id", 17397136),
    (0x01, "egress.rewrite_mac", 23531945),
    (0x01, "egress._drop", 25850727),
    (0x16, "ingress.flowlet_id", 384519412),
    (0x16, "ingress.flowlet_lasttime", 375147533),
    # v1model-digest-containing-ser-enum.p4.p4info.txtpb
    (0x02, "MyIngress.forward", 46460945),
    (0x02, "MyIngress.ipv4_lpm", 37375156),
    (0x02, "MyEgress.send_frame", 49202009),
    (0x01, "MyIngress.set_dmac", 33025127),
    (0x01, "MyIngress.drop", 25652968),
    (0x01, "MyIngress.set_nhop", 24952588),
    (0x01, "MyIngress.send_digest", 23592486),
    (0x01, "MyEgress.rewrite_mac", 22398708),
    (0x17, "test_digest_t", 387015589),
    (0x17, "test_digest2_t", 392468736),
    (0x17, "test_digest3_t", 399106899),
    # action_profile-bmv2.p4.p4info.txtpb
    (0x02, "IngressI.indirect", 46872340),
    (0x02, "IngressI.indirect_ws", 38116258),
    (0x01, "IngressI.drop", 23455883),
    (0x11, "ap", 294074782),
    (0x11, "ap_ws", 300324846),
    # controller headers: the id hashes the header *type* name
    (0x04, "packet_in_header_t", 81826293),
    (0x04, "packet_out_header_t", 76689799),
    (0x04, "packet_in_t", 80671331),
]


@pytest.mark.parametrize("prefix, name, p4c_id", P4C_IDS)
def test_hash_reproduces_p4c_ids(prefix, name, p4c_id):
    assert expected_id(prefix, name) == p4c_id
    assert probe_id(jenkins_hash(name), prefix, set()) == p4c_id


FLOWLET_LIKE = """
header ipv4_t { bit<32> dstAddr; bit<8> ttl; }
struct headers { ipv4_t ipv4; }
struct ingress_metadata_t { bit<32> nhop_ipv4; bit<14> ecmp_offset; }
struct metadata { ingress_metadata_t ingress_metadata; }

control ingress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    register<bit<16>>(32w8192) flowlet_id;
    register<bit<32>>(32w8192) flowlet_lasttime;
    action _drop() { mark_to_drop(standard_metadata); }
    action set_nhop(bit<32> nhop_ipv4, bit<9> port) {
        meta.ingress_metadata.nhop_ipv4 = nhop_ipv4;
        standard_metadata.egress_spec = port;
    }
    action set_dmac(bit<48> dmac) { }
    table ecmp_nhop {
        key = { meta.ingress_metadata.ecmp_offset : exact; }
        actions = { _drop; set_nhop; NoAction; }
        size = 16384;
    }
    table forward {
        key = { meta.ingress_metadata.nhop_ipv4 : exact; }
        actions = { set_dmac; _drop; NoAction; }
        size = 512;
    }
    apply { ecmp_nhop.apply(); forward.apply(); }
}

control egress(inout headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    action rewrite_mac(bit<48> smac) { }
    action _drop() { mark_to_drop(standard_metadata); }
    table send_frame {
        key = { standard_metadata.egress_port : exact; }
        actions = { rewrite_mac; _drop; NoAction; }
        size = 256;
    }
    apply { send_frame.apply(); }
}
"""


def test_program_with_p4c_names_gets_p4c_ids_and_aliases():
    info = build_p4info(v1(FLOWLET_LIKE + v1switch("ingress", "egress")))
    known = {name: i for _, name, i in P4C_IDS}
    for kind in (info.tables, info.actions, info.registers):
        for name, ident in ids(kind).items():
            assert ident == known[name], name
    # p4c's aliases: '_drop' is in both controls, so both keep their control
    assert aliases(info.actions)["ingress._drop"] == "ingress._drop"
    assert aliases(info.actions)["egress._drop"] == "egress._drop"
    assert aliases(info.actions)["ingress.set_nhop"] == "set_nhop"
    assert aliases(info.tables)["ingress.ecmp_nhop"] == "ecmp_nhop"
    t = by_name(info.tables)["ingress.ecmp_nhop"]
    assert [(f.id, f.name, f.bitwidth) for f in t.match_fields] == [
        (1, "meta.ingress_metadata.ecmp_offset", 14)]
    assert [r.id for r in t.action_refs] == [19344232, 29239084, 21257015]
    assert t.size == 16384
    assert by_name(info.tables)["egress.send_frame"].match_fields[0].bitwidth == 9
    nhop = by_name(info.actions)["ingress.set_nhop"]
    assert [(p.id, p.name, p.bitwidth) for p in nhop.params] == [
        (1, "nhop_ipv4", 32), (2, "port", 9)]
    reg = by_name(info.registers)["ingress.flowlet_id"]
    assert reg.size == 8192 and reg.type_spec.bitstring.bit.bitwidth == 16


DIGESTS_LIKE = """
typedef bit<48> macAddr_t;
header ethernet_t { macAddr_t dstAddr; macAddr_t srcAddr; bit<16> etherType; }
header ipv4_t { bit<8> ttl; bit<32> dstAddr; }
enum MyPacketTypes { IPv4, Other }
enum bit<8> MySerEnum1 { foo = 28, bar = 17, gah = 42 }
struct test_digest_t { macAddr_t in_mac_srcAddr; error my_parser_error; MyPacketTypes pkt_type; }
struct test_digest2_t { macAddr_t in_mac_dstAddr; MySerEnum1 my_thing; }
struct test_digest3_t { bit<16> in_mac_etherType; }
struct metadata { test_digest_t test_digest; test_digest2_t test_digest2;
                  test_digest3_t test_digest3; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
error { UnreachableState }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_dmac(macAddr_t dstAddr) { hdr.ethernet.dstAddr = dstAddr; }
    action drop() { }
    table forward {
        key = { hdr.ipv4.dstAddr : exact; }
        actions = { set_dmac; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    action set_nhop(bit<32> dstAddr, bit<9> port) { standard_metadata.egress_spec = port; }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { set_nhop; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    action send_digest() {
        digest(1, meta.test_digest);
        digest(2, meta.test_digest2);
        digest(3, meta.test_digest3);
    }
    apply { ipv4_lpm.apply(); forward.apply(); send_digest(); }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action rewrite_mac(macAddr_t srcAddr) { hdr.ethernet.srcAddr = srcAddr; }
    table send_frame {
        key = { standard_metadata.egress_port : exact; }
        actions = { rewrite_mac; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    apply { send_frame.apply(); }
}
"""


@pytest.fixture(scope="module")
def digests_info():
    return build_p4info(v1(DIGESTS_LIKE + v1switch()))


def test_digests_and_type_info_as_p4c(digests_info):
    info = digests_info
    known = {name: i for _, name, i in P4C_IDS}
    for kind in (info.tables, info.actions, info.digests):
        for name, ident in ids(kind).items():
            assert ident == known[name], name
    # an action the apply block calls stays (p4c does not inline those)
    assert "MyIngress.send_digest" in ids(info.actions)
    assert [d.type_spec.struct.name for d in info.digests] == [
        "test_digest_t", "test_digest2_t", "test_digest3_t"]
    ti = info.type_info
    assert sorted(ti.structs) == ["test_digest2_t", "test_digest3_t", "test_digest_t"]
    members = [(m.name, m.type_spec.WhichOneof("type_spec"))
               for m in ti.structs["test_digest_t"].members]
    assert members == [("in_mac_srcAddr", "bitstring"), ("my_parser_error", "error"),
                       ("pkt_type", "enum")]
    assert [m.name for m in ti.enums["MyPacketTypes"].members] == ["IPv4", "Other"]
    assert list(ti.error.members) == [
        "NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
        "ParserTimeout", "ParserInvalidArgument", "UnreachableState"]
    ser = ti.serializable_enums["MySerEnum1"]
    assert ser.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in ser.members] == [
        ("foo", b"\x1c"), ("bar", b"\x11"), ("gah", b"*")]


def test_default_action_is_initial_default(digests_info):
    t = by_name(digests_info.tables)["MyIngress.forward"]
    assert t.initial_default_action.action_id == 21257015
    assert t.const_default_action_id == 0
    assert [r.scope for r in t.action_refs] == [0, 0, 0]


# --- the sample programs ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample():
    return build_p4info(parse_p4_file(FIXTURES / "v1model_sample.p4"))


def test_sample_names_ids_aliases(sample):
    expect = {
        "tables": {"SfcIngress.initializer": 0x02, "SfcIngress.slot0_firewall_acl": 0x02},
        "actions": {"NoAction": 0x01, "SfcIngress.set_token": 0x01,
                    "SfcIngress.permit": 0x01, "SfcIngress.deny": 0x01},
        "registers": {"SfcIngress.flow_packets": 0x16},
        "direct_counters": {"SfcIngress.acl_hits": 0x13},
        "digests": {"learn_t": 0x17},
    }
    for kind, names in expect.items():
        got = getattr(sample, kind)
        assert ids(got) == {n: expected_id(p, n) for n, p in names.items()}, kind
        assert aliases(got) == {n: n.rsplit(".", 1)[-1] for n in names}, kind


def test_sample_drops_actions_inlined_away(sample):
    # 'drop' is only called from 'deny': p4c inlines it and removes it
    assert "SfcIngress.drop" not in ids(sample.actions)
    assert [a.preamble.name for a in sample.actions][0] == "NoAction"
    noaction = by_name(sample.actions)["NoAction"]
    assert '@noWarn("unused")' in noaction.preamble.annotations


def test_sample_tables(sample):
    init = by_name(sample.tables)["SfcIngress.initializer"]
    assert [(f.id, f.name, f.bitwidth, f.match_type) for f in init.match_fields] == [
        (1, "ipv4.dst", 32, 3), (2, "hdr.ipv4.protocol", 8, 4),
        (3, "standard_metadata.ingress_port", 9, 5)]
    assert init.size == 256
    assert init.const_default_action_id == expected_id(1, "NoAction")
    assert init.initial_default_action.action_id == expected_id(1, "NoAction")
    noaction_ref = init.action_refs[1]
    assert noaction_ref.scope == noaction_ref.DEFAULT_ONLY
    assert list(noaction_ref.annotations) == ["@defaultonly"]
    acl = by_name(sample.tables)["SfcIngress.slot0_firewall_acl"]
    assert [(f.name, f.bitwidth) for f in acl.match_fields] == [
        ("hdr.ipv4.src_addr", 32), ("hdr.ipv4.src_addr[31:24]", 8)]
    assert acl.is_const_table and acl.has_initial_entries
    assert acl.const_default_action_id == 0
    assert acl.initial_default_action.action_id == expected_id(1, "SfcIngress.permit")
    assert list(acl.direct_resource_ids) == [expected_id(0x13, "SfcIngress.acl_hits")]


def test_sample_externs(sample):
    reg = sample.registers[0]
    assert reg.size == 1024 and reg.type_spec.bitstring.bit.bitwidth == 32
    dc = sample.direct_counters[0]
    assert dc.spec.unit == dc.spec.PACKETS
    assert dc.direct_table_id == expected_id(0x02, "SfcIngress.slot0_firewall_acl")
    dig = sample.digests[0]
    assert dig.type_spec.struct.name == "learn_t"
    learn = sample.type_info.structs["learn_t"]
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in learn.members] == [
        ("mac", 48), ("port", 9)]


def test_sample_controller_header(sample):
    (cpm,) = sample.controller_packet_metadata
    assert cpm.preamble.name == cpm.preamble.alias == "packet_in"
    assert cpm.preamble.id == expected_id(0x04, "packet_in_t") == 80671331
    assert list(cpm.preamble.annotations) == ['@controller_header("packet_in")']
    assert [(m.id, m.name, m.bitwidth) for m in cpm.metadata] == [
        (1, "ingress_port", 16), (2, "reason", 16)]


TNA_PIPE = """
parser SfcIngressParser(packet_in pkt, out headers_t hdr, out meta_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); transition accept; }
}
parser SfcEgressParser(packet_in pkt, out headers_t hdr, out meta_t meta,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control SfcEgress(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control SfcEgressDeparser(packet_out pkt, inout headers_t hdr, in meta_t meta,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(SfcIngressParser(), SfcIngress(), SfcIngressDeparser(),
         SfcEgressParser(), SfcEgress(), SfcEgressDeparser()) pipe;
Switch(pipe) main;
"""


@pytest.fixture(scope="module")
def tna():
    text = (FIXTURES / "tna_sample.p4").read_text() + TNA_PIPE
    return build_p4info(parse_p4(text), arch="tna")


def tna_externs(info):
    return {(e.extern_type_name, i.preamble.name): (e.extern_type_id, i)
            for e in info.externs for i in e.instances}


def test_tna_names_and_ids(tna):
    assert tna.pkg_info.arch == "tna"
    assert ids(tna.tables) == {"pipe.SfcIngress.dmac": expected_id(2, "pipe.SfcIngress.dmac")}
    assert ids(tna.actions) == {n: expected_id(1, n)
                                for n in ("SfcIngress.forward", "SfcIngress.drop")}
    ext = tna_externs(tna)
    expect = {("Register", "pipe.SfcIngress.counts"): 0x8B,
              ("DynHash", "pipe.SfcIngress.flow_hash"): 0x8F,
              ("DirectCounter", "pipe.SfcIngress.hits"): 0x84,
              ("Digest", "pipe.SfcIngressDeparser.learn"): 0x8E}
    assert set(ext) == set(expect)
    for (kind, name), prefix in expect.items():
        type_id, inst = ext[(kind, name)]
        assert type_id == prefix
        assert inst.preamble.id == expected_id(prefix, name)
        assert inst.preamble.alias == name.rsplit(".", 1)[-1]


def test_tna_payloads(tna):
    ext = tna_externs(tna)
    text = p4info_text(tna)
    assert "[type.googleapis.com/barefoot.Register]" in text
    assert 'data_field_name: "SfcIngress.counts"' in text
    assert "hash_width: 10" in text
    _, dc = ext[("DirectCounter", "pipe.SfcIngress.hits")]
    assert dc.info.type_url == "type.googleapis.com/barefoot.DirectCounter"
    table = tna.tables[0]
    assert list(table.direct_resource_ids) == [dc.preamble.id]
    assert table.size == 4096


def test_tna_digest_needs_exactly_one_pack():
    text = (FIXTURES / "tna_sample.p4").read_text().replace(
        "learn.pack({hdr.ethernet.src_addr});",
        "learn.pack({hdr.ethernet.src_addr}); learn.pack({hdr.ethernet.dst_addr});")
    info = build_p4info(parse_p4(text + TNA_PIPE), arch="tna")
    assert ("Digest", "pipe.SfcIngressDeparser.learn") not in tna_externs(info)


# --- output formats and loading ----------------------------------------------------------------

def test_text_round_trip(sample, tna):
    for info in (sample, tna):
        text = p4info_text(info)
        assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n")
        assert p4info_from_text(text) == info
        assert p4info_from_text(p4info_text(info, header=False)) == info


def test_json(sample):
    data = json.loads(p4info_json(sample))
    assert data["pkgInfo"]["arch"] == "v1model"
    assert data["tables"][0]["preamble"]["name"] == "SfcIngress.initializer"
    assert json_format.Parse(p4info_json(sample), type(sample)()) == sample


def test_bad_text_is_a_compile_error():
    with pytest.raises(CompileError, match="not a text-format P4Info"):
        p4info_from_text("tables { nonsense: 1 }")


def test_loads_into_finsy(sample):
    schema = finsy.P4Schema(sample)
    assert schema.tables["initializer"].id == expected_id(2, "SfcIngress.initializer")
    assert schema.tables["SfcIngress.slot0_firewall_acl"].direct_counter is not None
    assert schema.digests["learn_t"].id == expected_id(0x17, "learn_t")
    assert schema.controller_packet_metadata["packet_in"].id == 80671331
    flowlet = finsy.P4Schema(build_p4info(v1(FLOWLET_LIKE + v1switch("ingress", "egress"))))
    assert flowlet.actions["ingress._drop"].id == 19344232
    assert flowlet.registers["flowlet_id"].id == 384519412
    # (finsy cannot read an `error` member in type_info, so the digest program with
    # one -- whose P4Info p4c writes the same way -- does not load into it)


def test_tna_without_direct_externs_loads_into_finsy():
    # finsy only knows P4Runtime's own direct counters/meters as a table's
    # direct resources, so a TNA table with a DirectCounter would trip it
    text = (FIXTURES / "tna_sample.p4").read_text().replace("counters = hits;", "")
    schema = finsy.P4Schema(build_p4info(parse_p4(text + TNA_PIPE), arch="tna"))
    assert {e.name for e in schema.externs} == {
        "pipe.SfcIngress.counts", "pipe.SfcIngress.flow_hash", "pipe.SfcIngressDeparser.learn"}


# --- aliases, collisions, @id ----------------------------------------------------------------

NESTED = """
header h_t { bit<8> x; bit<8> y; }
struct headers { h_t h; }
struct metadata { }
control nf(inout headers hdr) {
    action set(bit<8> v) { hdr.h.y = v; }
    table t { key = { hdr.h.x : exact; } actions = { set; NoAction; } }
    apply { t.apply(); }
}
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    nf() slot0;
    nf() slot1;
    action set(bit<8> v) { hdr.h.x = v; }
    table t { key = { hdr.h.y : exact; } actions = { set; } }
    apply { slot0.apply(); slot1.apply(); t.apply(); }
}
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
"""


def test_aliases_are_shortest_unique_suffixes():
    info = build_p4info(v1(NESTED + v1switch()))
    assert aliases(info.tables) == {"MyIngress.slot0.t": "slot0.t",
                                    "MyIngress.slot1.t": "slot1.t",
                                    "MyIngress.t": "MyIngress.t"}
    assert aliases(info.actions)["MyIngress.slot0.set"] == "slot0.set"
    assert aliases(info.actions)["NoAction"] == "NoAction"
    everything = [x.preamble for kind in (info.tables, info.actions) for x in kind]
    for pre in everything:
        assert pre.name == pre.alias or pre.name.endswith("." + pre.alias)
    assert len({p.alias for p in everything}) == len(everything)


def test_alias_of_a_name_that_is_a_suffix_of_another():
    st = SymbolTable()
    for name in ("a", "x.a", "y.b"):
        st.add(1, name)
    st.assign()
    assert (st.alias("a"), st.alias("x.a"), st.alias("y.b")) == ("a", "x.a", "b")


# 'c.t1626' and 'c.t3872' hash to the same low 24 bits
COLLIDING = ("c.t1626", "c.t3872")


def test_colliding_names_probe_to_the_next_id():
    low = [one_at_a_time(n) % 2**24 for n in COLLIDING]
    assert low[0] == low[1]
    tables = "\n".join(f"table {n.split('.')[1]} {{ actions = {{ NoAction; }} }}"
                       for n in COLLIDING)
    applies = " ".join(f"{n.split('.')[1]}.apply();" for n in COLLIDING)
    prog = v1(f"""
struct headers {{ }}
struct metadata {{ }}
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    {tables}
    apply {{ {applies} }}
}}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
""" + v1switch("c", "e"))
    got = ids(build_p4info(prog).tables)
    # names are hashed in sorted order; the later one probes one further
    assert got == {COLLIDING[0]: 0x02000000 | low[0], COLLIDING[1]: 0x02000000 | (low[0] + 1)}


def test_probe_id_skips_taken_and_wraps():
    assert probe_id(0x123456, 2, {0x02123456, 0x02123457}) == 0x02123458
    assert probe_id(0xFFFFFF, 2, {0x02FFFFFF}) == 0x02000000


def test_id_annotations():
    prog = v1("""
struct headers { }
struct metadata { }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @id(7) action a(@id(5) bit<8> x, bit<8> y) { }
    @id(0x02000010) table t { key = { sm.ingress_port : exact @id(3); sm.egress_port : exact; }
                              actions = { a; } }
    apply { t.apply(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + v1switch("c", "e"))
    info = build_p4info(prog)
    assert info.actions[0].preamble.id == 0x01000007
    assert [p.id for p in info.actions[0].params] == [5, 2]
    assert info.tables[0].preamble.id == 0x02000010
    assert [f.id for f in info.tables[0].match_fields] == [3, 2]


def test_id_annotation_errors():
    st = SymbolTable()
    with pytest.raises(CompileError, match="wrong 8-bit prefix"):
        st.add(PREFIX["table"], "t", 0x01000001)
    st.add(PREFIX["table"], "u", 9)
    with pytest.raises(CompileError, match="multiple declarations"):
        st.add(PREFIX["table"], "v", 0x02000009)
    with pytest.raises(CompileError, match="used multiple times"):
        field_ids([1, 1])
    with pytest.raises(CompileError, match="not valid"):
        field_ids([0])


# --- match-field names and widths ------------------------------------------------------------

KEYS = """
header h_t { bit<8> x; @name("why") bit<16> y; }
struct headers { h_t h; h_t[2] st; }
struct metadata { bit<4> m; }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t {
        key = {
            hdr.h.isValid() : exact;
            hdr.st[1].x : ternary;
            hdr.h.x & 0xF0 : ternary;
            hdr.h.y : exact;
            hdr.h.y[7:0] : exact;
            meta.m : optional;
            sm.parser_error : exact;
            hdr.h.x : selector;
            hdr.h.x + 1 : exact @name("x_plus_one");
        }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
"""


def test_key_names_follow_p4c():
    info = build_p4info(v1(KEYS + v1switch("c", "e")))
    fields = [(f.id, f.name, f.bitwidth, f.match_type) for f in info.tables[0].match_fields]
    assert fields == [
        (1, "hdr.h.$valid$", 1, 2),
        (2, "hdr.st[1].x", 8, 4),
        (3, "hdr.h.x & 0xf0", 8, 4),
        (4, "hdr.h.why", 16, 2),
        (5, "hdr.h.why[7:0]", 8, 2),
        (6, "meta.m", 4, 6),
        (7, "sm.parser_error", 0, 2),
        # 8 is the selector key: not in P4Info, but it keeps its id
        (9, "x_plus_one", 8, 2),
    ]
    assert list(info.type_info.error.members)[:2] == ["NoError", "PacketTooShort"]


def test_complex_key_needs_a_name():
    prog = v1("""
header h_t { bit<8> x; }
struct headers { h_t h; }
struct metadata { }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t { key = { hdr.h.x + 1 : exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + v1switch("c", "e"))
    with pytest.raises(CompileError, match="needs a @name annotation"):
        build_p4info(prog)


# --- what survives p4c's front end -----------------------------------------------------------

def test_unapplied_tables_and_unused_actions_are_left_out():
    prog = v1("""
struct headers { }
struct metadata { }
action global_used() { }
action global_unused() { }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action helper() { }
    action called() { helper(); }
    action only_in_unused_table() { }
    table used { actions = { global_used; NoAction; } }
    table unused { actions = { only_in_unused_table; } }
    apply { used.apply(); called(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + v1switch("c", "e"))
    info = build_p4info(prog)
    assert list(ids(info.tables)) == ["c.used"]
    assert list(ids(info.actions)) == ["global_used", "NoAction", "c.called"]


def test_nested_instance_name_annotation_renames_like_p4c():
    prog = v1("""
struct headers { }
struct metadata { }
control nf() { table t { actions = { NoAction; } } apply { t.apply(); } }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name("s0") nf() slot0;
    apply { slot0.apply(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + v1switch("c", "e"))
    # names.py says c.slot0.t; p4c's inliner uses the instance's @name
    assert list(ids(build_p4info(prog).tables)) == ["c.s0.t"]


def test_counters_meters_profiles():
    prog = v1("""
struct headers { }
struct metadata { bit<16> h; }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(32w64, CounterType.packets_and_bytes) ports;
    meter(128, MeterType.bytes) policer;
    direct_meter<bit<2>>(MeterType.packets) dm;
    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) sel;
    table t { key = { meta.h : selector; } actions = { NoAction; }
              meters = dm; implementation = sel; support_timeout = true; }
    apply { t.apply(); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + v1switch("c", "e"))
    info = build_p4info(prog)
    (ctr,), (mtr,), (dm,), (ap,) = (info.counters, info.meters, info.direct_meters,
                                   info.action_profiles)
    assert (ctr.preamble.id, ctr.size, ctr.spec.unit) == (expected_id(0x12, "c.ports"), 64,
                                                          ctr.spec.BOTH)
    assert (mtr.preamble.id, mtr.size, mtr.spec.unit) == (expected_id(0x14, "c.policer"), 128,
                                                          mtr.spec.BYTES)
    table = info.tables[0]
    assert dm.direct_table_id == table.preamble.id
    assert list(table.direct_resource_ids) == [expected_id(0x15, "c.dm")]
    assert table.implementation_id == ap.preamble.id == expected_id(0x11, "c.sel")
    assert (ap.with_selector, ap.size, list(ap.table_ids)) == (True, 1024, [table.preamble.id])
    assert table.idle_timeout_behavior == table.NOTIFY_CONTROL
    assert len(table.match_fields) == 0


# --- errors ----------------------------------------------------------------------------------

def test_bad_input_raises_compile_error():
    with pytest.raises(CompileError, match="parsed P4 program"):
        build_p4info("control c() { apply { } }")  # type: ignore[arg-type]
    with pytest.raises(CompileError, match="no P4Info generator"):
        build_p4info(parse_p4("header h { bit<8> x; }"), arch="psa")
    with pytest.raises(CompileError, match="no 'main' package"):
        build_p4info(parse_p4_file(FIXTURES / "tna_sample.p4"), arch="tna")


@pytest.mark.parametrize("control, message", [
    ("table t { actions = { nowhere; } } apply { t.apply(); }", "unknown action 'nowhere'"),
    ("table t { actions = { NoAction; } counters = direct_counter(CounterType.packets); }"
     " apply { t.apply(); }", "anonymous instance"),
    ("register<bit<8>>(sm.packet_length) r; apply { }", "compile-time constant"),
    ("counter(4, CounterType.sideways) k; apply { }", "unknown unit"),
    ("register<bit<8>>(4) r; table t { actions = { NoAction; } counters = r; }"
     " apply { t.apply(); }", "not a direct_counter"),
    ("action a(bit<8> x) { } table t { actions = { a; } default_action = a(sm.ingress_port); }"
     " apply { t.apply(); }", "not a compile-time constant"),
    ("action a(bit<4> x) { } table t { actions = { a; } default_action = a(99); }"
     " apply { t.apply(); }", "does not fit"),
])
def test_unexpressible_programs(control, message):
    prog = v1("struct headers { }\nstruct metadata { }\n"
              "control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {"
              + control + "}\ncontrol e(inout headers hdr, inout metadata meta, "
              "inout standard_metadata_t sm) { apply { } }" + v1switch("c", "e"))
    with pytest.raises(CompileError, match=message):
        build_p4info(prog)


def test_unsupported_tna_extern():
    text = "extern Lpf<T, I> { Lpf(bit<32> size); }\n" + (FIXTURES / "tna_sample.p4").read_text()
    text = text.replace(
        "DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;",
        "DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;\n    Lpf<bit<16>, bit<10>>(1024) lpf;")
    with pytest.raises(CompileError, match="Lpf 'pipe.SfcIngress.lpf' is not supported"):
        build_p4info(parse_p4(text + TNA_PIPE), arch="tna")


# --- comparing ----------------------------------------------------------------------------------

def test_compare_identical_is_empty(sample):
    assert compare_p4info(sample, p4info_from_text(p4info_text(sample))) == []


def test_compare_reports_differences(sample):
    theirs = type(sample)()
    theirs.CopyFrom(sample)
    theirs.tables[0].preamble.id += 1
    theirs.tables[0].match_fields[1].name = "hdr.ipv4.proto"
    theirs.actions[1].params[0].bitwidth = 17
    theirs.registers[0].size = 2048
    del theirs.digests[:]
    diffs = compare_p4info(sample, theirs)
    assert "digest 'learn_t' is only here" in diffs
    assert any(d.startswith("table 'SfcIngress.initializer': id") for d in diffs)
    assert ("table 'SfcIngress.initializer': match field 2: name 'hdr.ipv4.protocol' here, "
            "'hdr.ipv4.proto' there") in diffs
    assert ("action 'SfcIngress.set_token': parameter 1: bitwidth 16 here, 17 there") in diffs
    assert "register 'SfcIngress.flow_packets': size '1024' here, '2048' there" in diffs
    # the id change is reported once, not again through every reference to it
    assert not any("actions" in d for d in diffs)


def test_control_without_declarations_still_counts():
    prog = v1("""
struct headers { }
struct learn_t { bit<9> port; }
struct metadata { learn_t l; }
action global_hit() { }
control c(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { global_hit(); digest<learn_t>(1, meta.l); }
}
control e(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { digest(1, {sm.ingress_port, sm.egress_port}); }
}
""" + v1switch("c", "e"))
    info = build_p4info(prog)
    assert list(ids(info.actions)) == ["global_hit"]
    assert [d.preamble.name for d in info.digests] == ["learn_t", "digest_0"]
    tup = info.digests[1].type_spec.tuple
    assert [m.bitstring.bit.bitwidth for m in tup.members] == [9, 9]


def test_tna_pack_in_an_action_called_from_apply_counts_once():
    text = (FIXTURES / "tna_sample.p4").read_text().replace(
        "    apply {\n        if (ig_dprsr_md.digest_type == 1) {\n"
        "            learn.pack({hdr.ethernet.src_addr});\n        }",
        "    action send() { learn.pack({hdr.ethernet.src_addr}); }\n"
        "    apply {\n        if (ig_dprsr_md.digest_type == 1) {\n            send();\n        }")
    assert "send();" in text
    info = build_p4info(parse_p4(text + TNA_PIPE), arch="tna")
    assert ("Digest", "pipe.SfcIngressDeparser.learn") in tna_externs(info)
    assert "SfcIngressDeparser.send" in ids(info.actions)


def test_tna_typedef_action_parameters_are_bitstrings_of_their_width():
    """Action parameters typed MulticastGroupId_t, QueueId_t, ReplicationId_t, MirrorId_t,
    L2ExclusionId_t (not only PortId_t) are described, with tofino1_specs.p4's widths;
    once "P4Runtime cannot describe type 'MulticastGroupId_t'"."""
    info = build_p4info(parse_p4_file(FIXTURES / "tna_typedefs.p4"), arch="tna")
    params = {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in info.actions}
    assert params["Ig.to_port"] == [("port", 9), ("qid", 5)]
    assert params["Ig.to_group"] == [("grp", 16), ("rid", 16)]
    assert params["Ig.mirror"] == [("session", 10), ("x", 9)]


@pytest.mark.skipif(find_compiler("tna") is None,
                    reason="the Tofino compiler (bf-p4c or p4c-barefoot) is not installed")
def test_tna_typedef_action_parameters_agree_with_the_tofino_compilers_p4info(tmp_path):
    """p4c-barefoot's P4Info is the reference: sfclab's for the same program is the same."""
    res = run_p4c(FIXTURES / "tna_typedefs.p4", "tna", tmp_path)
    assert res.ok, res.output[-2000:]
    theirs = p4info_from_text((tmp_path / "p4info.p4c.txt").read_text())
    ours = build_p4info(parse_p4_file(FIXTURES / "tna_typedefs.p4"), arch="tna")
    assert compare_p4info(ours, theirs) == []
