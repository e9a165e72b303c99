"""Property tests: any AST the printer prints parses back to itself; junk raises P4Error only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfclab.errors import P4Error, SfclabError
from sfclab.p4 import ast as A
from sfclab.p4 import parse_p4, to_p4
from sfclab.p4.catalog import load_default
from sfclab.p4.printer import PRECEDENCE

PRELUDE = """header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct H { h_t h; }
"""
HDR = A.Name("hdr")
FIELDS = [A.Member(A.Member(HDR, "h"), f) for f in ("a", "b", "c")]

consts = st.builds(
    lambda v, w, signed, base: A.Const(v, w, signed if w else False, base),
    st.integers(0, 2**16), st.sampled_from([None, 8, 16, 32]), st.booleans(),
    st.sampled_from([2, 8, 10, 16]))
leaves = st.one_of(consts, st.builds(A.BoolLit, st.booleans()), st.just(A.Name("x")),
                   st.sampled_from(FIELDS))


def _compound(inner):
    return st.one_of(
        st.builds(A.Binary, st.sampled_from(sorted(PRECEDENCE)), inner, inner),
        st.builds(A.Unary, st.sampled_from(["!", "~", "-"]), inner),
        st.builds(A.Cast, st.builds(A.BitType, st.integers(1, 64)), inner),
        st.builds(A.Slice, inner, st.builds(A.Const, st.integers(0, 31)),
                  st.builds(A.Const, st.integers(0, 31))),
        st.builds(A.Ternary, inner, inner, inner),
        st.builds(lambda f: A.Call(A.Member(A.Member(HDR, "h"), f)),
                  st.sampled_from(["isValid", "setValid"])),
    )


exprs = st.recursive(leaves, _compound, max_leaves=12)
lvalues = st.sampled_from([A.Name("x"), *FIELDS, A.Slice(FIELDS[2], A.Const(7), A.Const(0))])


def _stmts(inner):
    blocks = st.builds(lambda s: A.Block(tuple(s)), st.lists(inner, max_size=3))
    return st.one_of(
        st.builds(A.If, exprs, blocks, st.one_of(st.none(), blocks)),
        blocks,
    )


simple_stmts = st.one_of(
    st.builds(A.Assign, lvalues, exprs),
    st.just(A.CallStmt(A.Call(A.Member(A.Member(HDR, "h"), "setInvalid")))),
    st.just(A.Exit()),
)
stmts = st.recursive(simple_stmts, _stmts, max_leaves=8)


def _program(body: tuple) -> str:
    control = A.ControlDecl("c", (A.Param("inout", A.NamedType("H"), "hdr"),),
                            (A.VarDecl(A.BitType(32), "x", A.Const(0)),), A.Block(body))
    return PRELUDE + to_p4(control)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(stmts, min_size=1, max_size=4))
def test_print_parse_print_is_stable(body):
    text = _program(tuple(body))
    prog = parse_p4(text)
    (control,) = prog.controls()
    assert control.apply.stmts == tuple(body)
    assert to_p4(prog).endswith(to_p4(control))
    assert to_p4(parse_p4(to_p4(prog))) == to_p4(prog)


@settings(max_examples=150, deadline=None)
@given(exprs)
def test_expressions_keep_their_meaning(expr):
    text = PRELUDE + f"control c(inout H hdr) {{ bit<32> x = 0; apply {{ x = {to_p4(expr)}; }} }}"
    (control,) = parse_p4(text).controls()
    assert control.apply.stmts[0].rhs == expr


P4ISH = st.lists(st.sampled_from(
    list("{}();:<>=&|!~+-*/%.,[]@#\"' \n\tabcxyz0123456789_")
    + ["header ", "struct ", "control ", "apply ", "table ", "key", "action ", "if ", "else ",
       "bit<8> ", "0x", "8w", "&&&", "..", "#include ", "const ", "state ", "transition "]),
    max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(P4ISH)
def test_junk_raises_only_p4_errors(text):
    try:
        parse_p4(text)
    except P4Error as e:
        assert e.line >= 0 and str(e)


# Input that used to reach a Python traceback (issue 19.8): numbers longer than Python
# converts (4,300 digits), odd #include names, manifests of any JSON shape.
LIBRARY = sorted((Path(__file__).resolve().parents[2] / "p4" / "nf").glob("*.p4"))
MAX_DIGITS = 4300
HUGE = st.integers(MAX_DIGITS + 1, MAX_DIGITS + 400).map(lambda n: "9" * n) \
    | st.integers(MAX_DIGITS // 4 + 1, MAX_DIGITS).map(lambda n: "8w1_234" + "1_234" * n)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(LIBRARY), st.data())
def test_a_huge_number_anywhere_in_an_nf_is_a_located_p4_error(path, data):
    seed = path.read_text()
    runs = [m.span() for m in re.finditer(r"\d+", seed)]
    i, j = data.draw(st.sampled_from(runs)) if data.draw(st.booleans()) else \
        (k := data.draw(st.integers(0, len(seed))), k)
    with pytest.raises(P4Error) as e:
        parse_p4(seed[:i] + data.draw(HUGE) + seed[j:], base=path.parent)
    assert e.value.line >= 1 and "digits" in e.value.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12) | st.sampled_from(["a\0b.p4", "x" * 5000, "../" * 300, "", "/"]),
       st.booleans())
def test_any_include_name_raises_only_p4_errors(name, quoted):
    text = f'#include {chr(34) if quoted else "<"}{name}{chr(34) if quoted else ">"}\n'
    try:
        parse_p4(text)
    except P4Error as e:
        assert str(e)


def test_a_constant_too_long_for_decimal_prints_in_hex_and_reads_back():
    value = 2 ** 65536 - 1
    text = to_p4(A.Const(value))
    assert text.startswith("0x")
    expr = parse_p4(f"const bit<65536> k = {text};").decls[0].value
    assert expr.value == value


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=6) | HUGE | HUGE.map(lambda n: f"10.0.0.0/{n}"),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
MANIFEST_KEYS = ["aliases", "layer", "offload", "description", "field", "stages", "tables",
                 "entries", "p4", "name"]
NF = """#include <core.p4>
#include "../include/sfc_headers.p4"
control marker(inout headers_t hdr, inout sfc_meta_t sfc) {
    action mark(bit<6> dscp) { hdr.ipv4.dscp = dscp; sfc.metadata = (bit<32>) dscp; }
    table classes { key = { hdr.ipv4.src_addr : lpm; } actions = { mark; NoAction; }
                    default_action = NoAction(); size = 64; }
    apply { sfc.metadata = 0; classes.apply(); }
}
"""


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(MANIFEST_KEYS), JSON, max_size=4) | JSON)
def test_manifests_of_any_shape_raise_only_sfclab_errors(manifest):
    cat = load_default().copy()
    before = sorted(cat.names())
    try:
        cat.add_source(NF, manifest=manifest)
    except SfclabError as e:
        assert str(e)
        assert sorted(cat.names()) == before
