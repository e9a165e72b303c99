"""A program the model refuses at load shows the refused line with a caret under the
construct, however the program reached the model: as a file, as text, parsed already,
through :func:`load_switch` (what a P4Runtime push runs), from a file a text includes, or
composed with a user's NF and pushed by a Lab — for v1model and TNA alike.

Before, the caret came only from the text given to ``ModelSwitch`` or from re-reading the
file the position names: TNA text, a parsed program and every P4Runtime push showed no
caret, and a text including the refused line's file drew the text's line of that number.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sfclab.errors import TargetError
from sfclab.p4 import parse_p4
from sfclab.p4.preprocess import BMV2_DEFINES
from sfclab.targets.model import ModelCompileError, ModelSwitch
from sfclab.targets.model.tna import TnaSwitch, load_switch

from .conftest import v1model

WHAT = "hdr.mpls.next"
V1MODEL = v1model(
    "header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }\n"
    "header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }\n",
    "state start { pkt.extract(hdr.ethernet); transition accept; }",
    f"apply {{ if (hdr.ethernet.isValid()) {{ {WHAT}.ttl = 1; }} }}",
    headers="ethernet_t ethernet; mpls_t[3] mpls;")
TNA = """#include <core.p4>
#include <tna.p4>
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
struct hs { mpls_t[2] mpls; }
struct ms { }
parser IP(packet_in pkt, out hs hdr, out ms md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition accept; } }
control I(inout hs hdr, inout ms md, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1;
            hdr.mpls.next.ttl = 1; } }
control ID(packet_out pkt, inout hs hdr, in ms md) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out hs hdr, out ms md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; } }
control E(inout hs hdr, inout ms md) { apply { } }
control ED(packet_out pkt, inout hs hdr, in ms md) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"""


def refused_at(text: str, what: str = WHAT) -> list[tuple[int, int]]:
    """(line, column) of each line of *text* that writes *what*."""
    return [(i, ln.index(what) + 1) for i, ln in enumerate(text.splitlines(), 1) if what in ln]


def assert_caret(message: str, source: str, text: str, what: str = WHAT) -> None:
    """*message* names *source* at a place in *text* where *what* is written, shows that
    line and a caret under *what*."""
    first, shown, caret = message.splitlines()[:3]
    where = first.removeprefix(f"{source}:").split(":")[:2]
    line, col = int(where[0]), int(where[1])
    assert (line, col) in refused_at(text, what), first
    assert first.startswith(f"{source}:{line}:{col}: {what}: a header stack's 'last' and "
                            "'next' can be used only in a parser"), first
    assert shown == "    " + text.splitlines()[line - 1]
    assert caret == " " * (3 + col) + "^" * len(what)


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "refused.p4"
    path.write_text(text)
    return path


LOADS = {
    "v1model text": (V1MODEL, lambda text, path: ModelSwitch(text)),
    "v1model file": (V1MODEL, lambda text, path: ModelSwitch(path)),
    "v1model parsed": (V1MODEL, lambda text, path: ModelSwitch(
        parse_p4(text, defines=BMV2_DEFINES))),
    "v1model load_switch": (V1MODEL, lambda text, path: load_switch(text)),
    "tna text": (TNA, lambda text, path: TnaSwitch(text)),
    "tna file": (TNA, lambda text, path: TnaSwitch(path)),
    "tna parsed": (TNA, lambda text, path: TnaSwitch(parse_p4(text))),
    "tna load_switch": (TNA, lambda text, path: load_switch(text)),
}


@pytest.mark.parametrize("how", LOADS)
def test_a_refusal_shows_the_line_and_a_caret_however_the_program_came(tmp_path, how):
    text, load = LOADS[how]
    path = _file(tmp_path, text)
    with pytest.raises(ModelCompileError) as e:
        load(text, path)
    assert_caret(e.value.message, str(path) if how.endswith("file") else "<string>", text)


def test_a_refusal_in_an_included_file_shows_that_files_line(tmp_path):
    """The refused line is in a file the program text includes: the caret is drawn in the
    included file's line, not in the including text's line of the same number."""
    body = V1MODEL.split("#include <v1model.p4>", 1)[1]
    path = _file(tmp_path, body)
    ((line, _),) = refused_at(body)
    main = ("#include <core.p4>\n#include <v1model.p4>\n" + "// a comment\n" * line
            + f'#include "{path}"\n')
    with pytest.raises(ModelCompileError) as e:
        ModelSwitch(main)
    assert_caret(e.value.message, str(path), body)


USER_NF = """#include <core.p4>
#include "sfc_headers.p4"

control ttl_marker(inout headers_t hdr, inout sfc_meta_t sfc) {
    apply { if (hdr.mpls[0].isValid()) { hdr.mpls.last.ttl = 1; } }
}
"""


def test_a_users_nf_pushed_to_the_tna_model_shows_the_line_and_a_caret():
    """A user's NF (as a %%chain cell's Lab takes it) composed into the TNA program and
    pushed over P4Runtime to ``model?arch=tna``: the refusal names the composed program's
    line and draws the caret in it."""
    from sfclab.api.lab import Lab

    lab = Lab("tna")
    try:
        lab.add_nf(USER_NF)
        lab.add("chain q: ttl_marker -> l3fwd")
        lab.connect("model?arch=tna")
        with pytest.raises(TargetError) as e:
            lab.push()
        text = lab.generated().program.text
    finally:
        lab.close()
    message = str(e.value)
    assert "the program does not run on the model: <tna program>:" in message
    assert_caret(message.split("the program does not run on the model: ", 1)[1],
                 "<tna program>", text, "hdr.mpls.last")
