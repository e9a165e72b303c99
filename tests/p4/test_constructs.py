"""The P4_16 constructs sfclab's front end reads beyond its NF subset, each parsed into the
AST it should be and printed back to text that parses to the same AST."""

from __future__ import annotations

import pytest

from sfclab.errors import P4SyntaxError
from sfclab.p4 import ast as A
from sfclab.p4 import parse_p4, to_p4

HEAD = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header g_t { bit<16> c; }
struct s_t { bit<8> x; bit<8> y; }
"""


def parse(body: str) -> A.Program:
    prog = parse_p4(HEAD + body)
    again = parse_p4(to_p4(prog))
    assert again == prog, to_p4(prog)
    return prog


def last(prog: A.Program):
    return prog.decls[-1]


def apply_stmts(prog: A.Program):
    return prog.controls()[-1].apply.stmts


def test_functions_with_return_values_type_parameters_and_defaults():
    prog = parse("bit<8> f(in bit<8> x, in bit<8> y = 1) { if (x > y) { return x; } return y; }\n"
                 "T pick<T>(in bool c, in T a, in T b) { return c ? a : b; }\n"
                 "control c(inout h_t h) { apply { h.a = f(h.a) + pick<bit<8>>(true, h.b, 2); "
                 "h.b = f(y = 2, x = h.a); } }")
    f, g = prog.find(A.FunctionDecl)
    assert f.params[1].default == A.Const(1) and isinstance(f.body.stmts[-1], A.Return)
    assert f.body.stmts[-1].value == A.Name("y") and g.type_params == ("T",)
    call = apply_stmts(prog)[0].rhs.right
    assert call.type_args == (A.BitType(8),)
    named = apply_stmts(prog)[1].rhs.args
    assert named == (A.NamedArg("y", A.Const(2)), A.NamedArg("x", A.Member(A.Name("h"), "a")))


def test_header_union_varbit_and_tuple_types():
    prog = parse("header_union u_t { h_t h; g_t g; }\nheader v_t { bit<8> n; varbit<(8 * 4)> o; }\n"
                 "typedef tuple<bit<8>, bool> pair_t;\nstruct all_t { u_t u; u_t[2] us; v_t v; }")
    u = prog.find(A.HeaderUnionDecl)[0]
    assert [f.name for f in u.fields] == ["h", "g"]
    assert prog.find(A.HeaderDecl, "v_t")[0].fields[1].type == A.VarbitType(32)
    assert prog.find(A.Typedef)[0].type == A.TupleType((A.BitType(8), A.BoolType()))


def test_width_expressions_use_constants_declared_before():
    prog = parse("const bit<32> N = 3;\nheader w_t { bit<(N * 8)> a; int<(N + 1)> b; }\n"
                 "struct st_t { w_t[N - 1] ws; }")
    w = prog.find(A.HeaderDecl, "w_t")[0]
    assert [f.type for f in w.fields] == [A.BitType(24), A.BitType(4, True)]
    assert prog.find(A.StructDecl, "st_t")[0].fields[0].type == A.StackType(A.NamedType("w_t"), 2)


def test_statements_loops_compound_assignments_and_value_switch():
    prog = parse("control c(inout h_t h) { apply {\n"
                 "  for (bit<8> i = 0, bit<8> j = 1; i < 4; i = i + 1, j += 2) {\n"
                 "    if (i == 2) { continue; } if (j > 5) { break; } h.a |+|= j; }\n"
                 "  for (bit<8> k in 1 .. 3) { h.b ^= k; }\n"
                 "  h.a <<= 1; h.b >>= 2; h.a %= 3;\n"
                 "  switch (h.a) { 1: 2: { h.b = 0; } 8w3: { } default: { h.b = 1; } }\n"
                 "  @atomic { h.a = h.b; }\n} }")
    loop, each, shl, shr, mod, sw, block = apply_stmts(prog)
    assert isinstance(loop, A.For) and len(loop.init) == 2 and len(loop.update) == 2
    assert loop.update[1] == A.Assign(A.Name("j"), A.Binary("+", A.Name("j"), A.Const(2)))
    assert isinstance(each, A.ForIn) and each.iterable == A.Range(A.Const(1), A.Const(3))
    assert shr.rhs.op == ">>" and mod.rhs.op == "%"
    assert [c.label for c in sw.cases] == ["1", "2", "8w3", "default"]
    assert sw.cases[0].body is None and sw.cases[2].expr == A.Const(3, 8)
    assert isinstance(block, A.Block)


def test_expressions_of_the_p4_16_grammar():
    prog = parse("control c(inout h_t h, inout s_t s, inout g_t g) { apply {\n"
                 "  s = {x = 1, y = +h.a}; s = {h.a, h.b,}; h = {#}; s = {y = 2, ...};\n"
                 "  h.a = (bit<8>) g.c[15:4][7:0]; h.b = .glob;\n} }\n"
                 "const bit<8> glob = 2;")
    s1, s2, inv, dots, nested, dotted = apply_stmts(prog)
    assert dots.rhs.rest and dots.rhs.items == (("y", A.Const(2)),)
    assert s1.rhs == A.StructExpr((("x", A.Const(1)), ("y", A.Unary("+", A.Member(A.Name("h"),
                                                                                   "a")))))
    assert len(s2.rhs.items) == 2 and isinstance(inv.rhs, A.InvalidExpr)
    assert isinstance(nested.rhs.expr, A.Slice) and isinstance(nested.rhs.expr.expr, A.Slice)
    assert dotted.rhs == A.Name("glob")


def test_calls_with_type_arguments_in_expressions_and_dont_care_arguments():
    prog = parse("parser p(packet_in pk, out h_t h) { state start {\n"
                 "  transition select(pk.lookahead<bit<8>>()) { 1: a; default: b; } }\n"
                 "  state a { pk.extract<g_t>(_); transition accept; }\n"
                 "  state b { bit<8> v = pk.lookahead<h_t>().a; transition accept; } }")
    states = prog.find(A.ParserDecl)[0].states
    sel = states[0].transition.exprs[0]
    assert sel.type_args == (A.BitType(8),) and sel.func.name == "lookahead"
    skip = states[1].stmts[0].call
    assert skip.args == (A.DontCare(),) and skip.type_args == (A.NamedType("g_t"),)


def test_a_comparison_is_not_taken_for_type_arguments():
    prog = parse("enum bit<8> E { A = 1 }\ncontrol c(inout h_t h) { apply {\n"
                 "  if (h.a < (bit<8>) E.A && h.b > 1) { h.a = 0; } } }")
    cond = apply_stmts(prog)[0].cond
    assert cond.op == "&&" and cond.left.op == "<"


def test_block_type_declarations_new_types_and_entries():
    prog = parse("control Pipe<H>(inout H h);\nparser Prs<H>(packet_in b, out H h);\n"
                 "package Pkg<H>(Pipe<H> p);\ntype bit<8> octet_t;\n"
                 "control c(inout h_t h) {\n  action set(bit<8> v) { h.a = v; }\n"
                 "  table t() { key = { h.a : ternary; } actions = { set; }\n"
                 "    entries = { priority = 10: 1 &&& 0xF : set(1); const 2 : set(2) @x; } }\n"
                 "  table u { key = { h.a : ternary; } actions = { set; }\n"
                 "    const entries = { 1 &&& 0xF : set(3) @priority(2); } }\n"
                 "  apply { t.apply(); u.apply(); } };")
    kinds = [(d.kind, d.name, d.type_params) for d in prog.find(A.BlockTypeDecl)]
    assert kinds == [("control", "Pipe", ("H",)), ("parser", "Prs", ("H",)),
                     ("package", "Pkg", ("H",))]
    assert prog.find(A.Typedef)[0].new
    t, u = prog.controls()[0].tables()
    assert [e.priority for e in t.entries] == [10, None] and t.entries[1].const
    assert u.entries[0].annotations == (A.Annotation("priority", "2"),)


@pytest.mark.parametrize("src, says", [
    ("control c() { apply { for (;;) { break } } }", "unexpected '}'"),
    ("header h { bit<(x)> a; }", "the width of bit<…> must be a compile-time constant"),
    ("const bit<8> for = 1;", "'for' is a P4 keyword"),
])
def test_constructs_written_wrong_are_refused_with_their_line(src, says):
    with pytest.raises(P4SyntaxError) as info:
        parse_p4(src, source="bad.p4")
    assert says in str(info.value) and info.value.line == 1
