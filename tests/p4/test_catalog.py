"""The NF catalogue: the library's manifests agree with its P4, users add NFs, bad NFs change nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import sfclab
from sfclab.errors import CatalogError, ChainValidationError, P4Error, UnsupportedP4Error
from sfclab.p4.catalog import P4Catalog, load_default

ROOT = Path(__file__).resolve().parents[2]
NF_DIR = ROOT / "p4" / "nf"

LIBRARY = ["l2fwd", "l3fwd", "firewall", "stateful_firewall", "nat", "lb", "ids", "heavy_hitter",
           "qos", "ipsg", "mac_learning", "flood", "vgw", "sr_encap", "monitor", "reporter",
           "classifier", "router"]

DSCP_MARKER = """#include <core.p4>
#include "../include/sfc_headers.p4"

control dscp_marker(inout headers_t hdr, inout sfc_meta_t sfc) {
    action mark(bit<6> dscp) { hdr.ipv4.dscp = dscp; sfc.metadata = (bit<32>) dscp; }
    table classes {
        key = { hdr.ipv4.src_addr : lpm; }
        actions = { mark; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    apply { sfc.metadata = 0; if (hdr.ipv4.isValid()) { classes.apply(); } }
}
"""
DSCP_MANIFEST = {"aliases": ["DSCPM"], "layer": 3, "offload": "fully",
                 "field": {"name": "dscp", "width": 6}, "stages": 1}


def test_library_nfs_are_all_there_and_agree_with_their_manifests():
    cat = load_default()
    assert set(LIBRARY) <= set(cat.names())
    assert cat.check_all() == sorted(cat.names())      # parses every P4, checks every manifest
    for name in LIBRARY:
        d = cat.definition(name)
        assert d.has_p4 and d.control.name == name
        assert d.entries, f"{name} has no example entry"
        assert all(t.size for t in d.tables)
    for name in ("ips", "dpi", "ipsec"):
        d = cat.definition(name)
        assert not d.has_p4 and d.info.offload == "non"


def test_manifest_tables_are_what_the_p4_declares():
    cat = load_default()
    for name in LIBRARY:
        manifest = json.loads((NF_DIR / f"{name}.json").read_text())
        tables = {t.name: t for t in cat.definition(name).tables}
        assert set(tables) == set(manifest["tables"]), name
        for tname, spec in manifest["tables"].items():
            t = tables[tname]
            assert [list(k) for k in t.keys] == spec["keys"], (name, tname)
            assert list(t.actions) == spec["actions"] and t.size == spec["size"], (name, tname)


def test_the_chain_language_uses_the_catalogue():
    chains = sfclab.parse("chain c { input => FW => (nat : drop ? firewall.verdict == 0);"
                          " nat => HITTER => (l3fwd : cpu ? heavy_hitter.hitter_value < 1000); }")
    assert [p.nfs for p in chains.paths()][0] == ("firewall", "nat", "heavy_hitter", "l3fwd")
    with pytest.raises(ChainValidationError, match="does not set a field 'rate'"):
        sfclab.parse("chain c { input => stateful_firewall => "
                     "(drop : output ? stateful_firewall.rate == 0); }")
    assert sfclab.catalog is load_default()


def test_a_tampered_manifest_is_caught(tmp_path: Path):
    shutil.copy(NF_DIR / "firewall.p4", tmp_path)
    manifest = json.loads((NF_DIR / "firewall.json").read_text())
    manifest["tables"]["acl"]["size"] = 2048
    manifest["tables"]["acl"]["actions"].append("reject")
    (tmp_path / "firewall.json").write_text(json.dumps(manifest))
    (tmp_path / "firewall.p4").write_text(
        (NF_DIR / "firewall.p4").read_text().replace("../include/", str(ROOT / "p4/include") + "/"))
    cat = P4Catalog()
    with pytest.raises(CatalogError, match="manifest's tables differ") as info:
        cat.add_path(tmp_path)
    assert "size 2048 in the manifest, 1024 in the P4" in info.value.hint
    assert "actions" in info.value.hint
    assert len(cat) == 0


def _user_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "my_nfs"
    folder.mkdir()
    (folder / "dscp_marker.p4").write_text(DSCP_MARKER.replace(
        '"../include/sfc_headers.p4"', '"sfc_headers.p4"'))
    (folder / "dscp_marker.json").write_text(json.dumps(DSCP_MANIFEST))
    return folder


def test_a_user_nf_from_a_folder_is_usable_in_a_chain(tmp_path: Path):
    cat = load_default().copy()
    assert cat.add_path(_user_folder(tmp_path)) == ["dscp_marker"]
    d = cat.definition("DSCPM")
    assert d.info.layer == 3 and d.info.fields == {"dscp": 6} and d.info.tables == 1
    assert [t.name for t in d.tables] == ["classes"]
    chains = sfclab.parse("chain q { input => l3fwd => DSCPM => (drop : output ? dscp_marker.dscp == 46); }",
                          catalog=cat)
    assert chains.paths()[0].nfs == ("l3fwd", "dscp_marker")
    out = sfclab.compile(chains, catalog=cat)
    assert "dscp_marker" in out.pipeline.slots
    assert "dscp_marker" not in load_default()            # the copy, not the default, has it


def test_a_user_nf_from_a_string_and_one_without_a_manifest():
    cat = load_default().copy()
    name = cat.add_source(DSCP_MARKER, manifest=DSCP_MANIFEST)
    assert name == "dscp_marker" and cat.resolve("dscpm").name == "dscp_marker"
    bare = DSCP_MARKER.replace("dscp_marker", "marker2")
    assert cat.add_source(bare) == "marker2"
    info = cat.resolve("marker2")
    assert (info.layer, info.offload, dict(info.fields), info.tables) == (4, "fully", {}, 1)


def test_the_default_catalogue_takes_user_nfs_and_gives_them_back(tmp_path: Path):
    cat = load_default()
    try:
        sfclab.catalog.add_path(_user_folder(tmp_path))
        assert sfclab.parse("chain q: dscp_marker -> l3fwd").paths()[0].nfs == ("dscp_marker", "l3fwd")
    finally:
        cat.remove("dscp_marker")
    assert "dscp_marker" not in cat


BAD_NFS = [
    # (P4 replacing DSCP_MARKER, manifest, error class, what it says)
    (DSCP_MARKER.replace("hdr.ipv4.dscp = dscp;", "standard_metadata.egress_spec = 1;"), {},
     UnsupportedP4Error, "architecture metadata 'standard_metadata'"),
    (DSCP_MARKER.replace("inout sfc_meta_t sfc", "inout sfc_meta_t sfc, in bit<8> x"), {},
     P4Error, "parameters must be"),
    (DSCP_MARKER.replace("        size = 64;\n", ""), {}, P4Error, "has no size"),
    (DSCP_MARKER.replace("    action mark", "    register<bit<8>>(4) r;\n    action mark")
     .replace("#include <core.p4>", "#include <core.p4>\n#include <v1model.p4>"), {},
     UnsupportedP4Error, "not part of sfclab's portable API"),
    (DSCP_MARKER.replace("    action mark", "    Register<bit<8>, bit<2>>(4) r;\n    action mark"),
     {}, P4Error, "unexpected 'Register'"),
    (DSCP_MARKER.replace("    action mark", "    SfcRegister<bit<8>, bit<2>>(4) r;\n    action mark")
     .replace("hdr.ipv4.dscp = dscp;", "r.read(0);"), {}, P4Error, "must be assigned"),
    (DSCP_MARKER.replace("    action mark", "    SfcCounter<bit<2>>(4, SfcCounterType.PACKETS) n;\n"
                                            "    action mark")
     .replace("hdr.ipv4.dscp = dscp;", "hdr.ipv4.dscp = n.count(0);"), {}, P4Error,
     "is a statement"),
    (DSCP_MARKER.replace("sfc.metadata = (bit<32>) dscp;", "").replace("sfc.metadata = 0;", ""),
     DSCP_MANIFEST, CatalogError, "never assigns sfc.metadata"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "layers": 3}, CatalogError, "unknown manifest key 'layers'"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "offload": "maybe"}, CatalogError, "offload must be"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "field": {"name": "global_counter", "width": 8}},
     CatalogError, "FlexMesh global field"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "entries": [{"table": "classes", "match": {
        "hdr.ipv4.src_addr": "10.0.0.0"}, "action": "mark", "params": {"dscp": 46}}]},
     CatalogError, "lpm key"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "entries": [{"table": "classes", "match": {
        "hdr.ipv4.src_addr": "10.0.0.0/8"}, "action": "mark", "params": {}}]},
     CatalogError, "takes (dscp)"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "aliases": ["FW"]}, CatalogError, "already used by 'firewall'"),
    (DSCP_MARKER.replace("dscp_marker", "firewall"), {}, CatalogError, "already in the catalogue"),
    ("control a(inout headers_t hdr, inout sfc_meta_t sfc) { apply { } }\n"
     "control b(inout headers_t hdr, inout sfc_meta_t sfc) { apply { } }", {}, CatalogError,
     "exactly one control"),
    # issue 19.8: these reached a Python traceback
    (DSCP_MARKER, {**DSCP_MANIFEST, "aliases": [None]}, CatalogError, "lists names, not null"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "aliases": [["x"]]}, CatalogError, 'lists names, not ."x".'),
    (DSCP_MARKER, {**DSCP_MANIFEST, "aliases": [False]}, CatalogError, "lists names, not false"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "layer": 10 ** 5000}, CatalogError, "'layer' is out of range"),
    (DSCP_MARKER, [("layer", 3)], CatalogError, "manifest is a JSON object"),
    (DSCP_MARKER.replace("    action mark", "    SfcHash<bit<65536>>(SfcHashAlgorithm.CRC32) h;\n"
                                            "    action mark"), {}, P4Error, "a hash gives 1..64"),
    (DSCP_MARKER.replace("size = 64", "size = " + "9" * 5000), {}, P4Error,
     "number of 5,000 digits"),
    (DSCP_MARKER, {**DSCP_MANIFEST, "entries": [{"table": "classes", "match": {
        "hdr.ipv4.src_addr": "10.0.0.0/" + "9" * 5000}, "action": "mark", "params": {"dscp": 4}}]},
     CatalogError, "holds a number of more than 4,300 digits"),
    (DSCP_MARKER.replace('"../include/sfc_headers.p4"', '"../include/sfc\0headers.p4"'), {},
     P4Error, "name holds a NUL"),
]


@pytest.mark.parametrize("p4, manifest, cls, says", BAD_NFS, ids=[b[3] for b in BAD_NFS])
def test_a_bad_nf_is_refused_and_changes_nothing(p4, manifest, cls, says):
    cat = load_default().copy()
    before = sorted(cat.names())
    with pytest.raises(cls, match=says.replace("(", r"\(").replace(")", r"\)")):
        cat.add_source(p4, manifest=manifest)
    assert sorted(cat.names()) == before


def test_a_bad_folder_adds_nothing(tmp_path: Path):
    folder = _user_folder(tmp_path)
    (folder / "broken.p4").write_text("control broken(inout headers_t hdr, inout sfc_meta_t sfc) {")
    cat = load_default().copy()
    with pytest.raises(P4Error, match="unexpected end of input"):
        cat.add_path(folder)
    assert "dscp_marker" not in cat                  # the good NF beside it was not added either
    (folder / "broken.p4").unlink()
    (folder / "broken.json").write_text('{"layer": 3,,}')
    with pytest.raises(CatalogError, match="invalid JSON") as info:
        cat.add_path(folder)
    assert info.value.line == 1 and "dscp_marker" not in cat
    with pytest.raises(CatalogError, match="no NF folder"):
        cat.add_path(tmp_path / "nowhere")
