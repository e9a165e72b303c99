"""sfclab's P4 front end: every library file parses and prints back, the subset's
constructs mean what P4_16 says, and bad or unsupported P4 is refused with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sfclab.errors import P4Error, P4SyntaxError, UnsupportedP4Error
from sfclab.p4 import ast as A
from sfclab.p4 import library_dir, parse_p4, parse_p4_file, to_p4

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = sorted((ROOT / "p4").rglob("*.p4"))
SAMPLES = sorted((ROOT / "tests" / "fixtures" / "p4").glob("*.p4"))


def test_the_library_is_where_the_package_finds_it():
    assert library_dir().resolve() == (ROOT / "p4").resolve()
    assert len([p for p in LIBRARY if p.parent.name == "nf"]) >= 17


@pytest.mark.parametrize("path", LIBRARY + SAMPLES, ids=lambda p: p.name)
def test_file_parses_and_printing_is_stable(path: Path):
    prog = parse_p4_file(path)
    assert prog.decls
    text = to_p4(prog)
    again = parse_p4(text, base=path.parent)
    assert again == prog                    # print -> parse gives the same AST
    assert to_p4(again) == text             # and printing it again gives the same text


def _sample(name: str) -> A.Program:
    return parse_p4_file(ROOT / "tests" / "fixtures" / "p4" / name)


def _control(prog: A.Program, name: str) -> A.ControlDecl:
    (c,) = prog.find(A.ControlDecl, name)
    return c


def test_parser_select_keeps_values_masks_ranges_and_default():
    prog = _sample("v1model_sample.p4")
    (parser,) = prog.find(A.ParserDecl)
    states = {s.name: s for s in parser.states}
    sel = states["parse_ethernet"].transition
    assert isinstance(sel, A.Select)
    kinds = [type(c.keys[0]).__name__ for c in sel.cases]
    assert kinds == ["Name", "Name", "Const", "Range", "Mask", "Default"]
    assert sel.cases[3].keys[0] == A.Range(A.Const(0x9000, base=16), A.Const(0x90FF, base=16))
    tuple_case = states["parse_ipv4"].transition.cases[0]
    assert tuple_case.keys == (A.Const(6), A.DontCare()) and tuple_case.state == "accept"
    assert states["start"].transition == "parse_ethernet"


def test_tables_keep_keys_actions_defaults_entries_and_properties():
    ingress = _control(_sample("v1model_sample.p4"), "SfcIngress")
    tables = {t.name: t for t in ingress.tables()}
    init = tables["initializer"]
    assert [k.match_kind for k in init.keys] == ["lpm", "ternary", "range"]
    assert init.keys[0].annotations == (A.Annotation("name", '"ipv4.dst"'),)
    assert init.annotations == (A.Annotation("name", '"initializer"'),)
    assert init.default_const and init.default_action.name == "NoAction" and init.size == 256
    assert init.actions[1].annotations[0].name == "defaultonly"
    acl = tables["slot0_firewall_acl"]
    assert acl.property("counters") == A.Name("acl_hits")
    assert acl.entries_const and len(acl.entries) == 2
    first = acl.entries[0]
    assert first.priority == 10 and first.action.name == "deny"
    assert first.keys[0] == A.Mask(A.Const(0x0A000000, base=16), A.Const(0xFF000000, base=16))
    assert acl.keys[1].expr == A.Slice(A.Member(A.Member(A.Name("hdr"), "ipv4"), "src_addr"),
                                       A.Const(31), A.Const(24))


def test_apply_block_constructs():
    ingress = _control(_sample("v1model_sample.p4"), "SfcIngress")
    stmts = ingress.apply.stmts
    # `a & b != 0` is `(a & b) != 0` in P4_16 (bitwise binds tighter than comparison)
    cond = stmts[1].cond
    assert cond.op == "!=" and cond.left.op == "&"
    sw = stmts[1].then.stmts[0]
    assert isinstance(sw, A.Switch) and [c.label for c in sw.cases] == ["deny", "permit", "default"]
    assert sw.cases[1].body is None                      # falls through to default
    assert sw.expr == A.Member(A.Call(A.Member(A.Name("slot0_firewall_acl"), "apply")), "action_run")
    hit = stmts[2]
    assert hit.cond.name == "hit" and hit.other.cond.name == "miss"
    assert isinstance(hit.other.then.stmts[0], A.Exit)
    digest = stmts[4].call
    assert digest.type_args == (A.NamedType("learn_t"),) and isinstance(digest.args[1], A.ListExpr)
    ttl = stmts[8].rhs
    assert isinstance(ttl, A.Ternary) and ttl.other == A.Const(0, width=8)
    shifts = stmts[9].rhs                               # -idx >> 2 << 1
    assert shifts.op == "<<" and shifts.left.op == ">>" and isinstance(shifts.left.left, A.Unary)
    logic = stmts[11].cond                              # a && !(b || c)
    assert logic.op == "&&" and logic.right.op == "!" and logic.right.expr.op == "||"
    count = _control(_sample("v1model_sample.p4"), "SfcIngress").apply.stmts[1]
    concat = count.then.stmts[0].cases[2].body.stmts[0].rhs
    assert concat.op == "++" and isinstance(concat.left, A.Cast)


def test_declarations():
    prog = _sample("v1model_sample.p4")
    (stack,) = [f for f in prog.find(A.StructDecl, "headers_t")[0].fields if f.name == "mpls"]
    assert stack.type == A.StackType(A.NamedType("mpls_t"), 4)
    (reason,) = prog.find(A.EnumDecl)
    assert reason.type == A.BitType(8) and reason.members == (("UNKNOWN", A.Const(0)),
                                                              ("LEARN", A.Const(1)))
    (err,) = prog.find(A.ErrorDecl)
    assert err.members == ("BadSfcVersion",)
    (pin,) = prog.find(A.HeaderDecl, "packet_in_t")
    assert pin.annotations == (A.Annotation("controller_header", '"packet_in"'),)
    (main,) = prog.find(A.Instance)
    assert main.name == "main" and main.type == A.NamedType("V1Switch")
    assert [a.func.name for a in main.args][0] == "SfcParser"
    assert [i.path for i in prog.find(A.Include)] == ["core.p4", "v1model.p4"]


def test_tna_register_action_body():
    ingress = _control(_sample("tna_sample.p4"), "SfcIngress")
    ra = next(i for i in ingress.instances() if i.name == "counts_add")
    assert ra.type == A.NamedType("RegisterAction", (A.BitType(32), A.BitType(10), A.BitType(32)))
    (fn,) = ra.body
    assert fn.name == "apply" and [p.direction for p in fn.params] == ["inout", "out"]


def test_every_node_knows_where_it_was_written():
    prog = parse_p4_file(ROOT / "p4" / "nf" / "firewall.p4")
    (fw,) = prog.controls()
    text = (ROOT / "p4" / "nf" / "firewall.p4").read_text().splitlines()
    assert fw.pos.file.endswith("firewall.p4")
    assert "control firewall" in text[fw.pos.line - 1]
    (acl,) = fw.tables()
    assert "table acl" in text[acl.pos.line - 1]
    assert "permit" in text[fw.actions()[0].pos.line - 1]
    # positions are not part of equality
    assert parse_p4("\n\n" + to_p4(prog), base=ROOT / "p4" / "nf") == prog


def test_integer_literals():
    prog = parse_p4("const bit<8> A = 8w0x1F; const int<8> B = 8s5; const bit<4> C = 0b1010;"
                    "const bit<16> D = 1_000; const bit<8> E = 0o17;")
    values = [(d.value.value, d.value.width, d.value.signed, d.value.base) for d in prog.decls]
    assert values == [(31, 8, False, 16), (5, 8, True, 10), (10, None, False, 2),
                      (1000, None, False, 10), (15, None, False, 8)]
    assert to_p4(prog.decls[0]).strip() == "const bit<8> A = 8w0x1F;"


# --- errors --------------------------------------------------------------------------------

BAD = [
    # (source, error class, line, what the message says)
    ("const bit<8> Y = 2;\n#ifdef FOO\n", P4SyntaxError, 2, "#ifdef at line 2 has no #endif"),
    ("#if 1\n#else\n#else\n#endif", P4SyntaxError, 3, "#else after #else"),
    ("#endif", P4SyntaxError, 1, "#endif without #if"),
    ("#ifndef X\n#error X is needed\n#endif", P4SyntaxError, 2, "#error X is needed"),
    ("#define F(a) a\nconst bit<8> Y = F(1, 2);", P4SyntaxError, 2,
     "macro 'F' takes 1 argument(s), but 2 given"),
    ("#if 1 +\n#endif", P4SyntaxError, 1, "#if: the expression ends too early"),
    ("#frobnicate\n", P4SyntaxError, 1, "unknown preprocessor directive #frobnicate"),
    ("const bit<8> Y = 2;\nheader h_t { bit<(Y + Z)> a; }", P4SyntaxError, 2,
     "the width of bit<…> must be a compile-time constant, not 'Y + Z'"),
    ("struct s_t { list<bit<8>> l; }", UnsupportedP4Error, 1, "'list' is P4_16 that sfclab does not read yet"),
    ("header h_t { bit<8> a }", P4SyntaxError, 1, "unexpected '}'"),
    ("header h_t {\n    bit<8> a;\n", P4SyntaxError, 2, "unexpected end of input"),
    ("control c(inout h_t h) { apply { } }", P4SyntaxError, 1, "unexpected 'h_t'"),
    ("header h_t { bit<8> a; }\ncontrol c(inout h_t h) { apply { h.a = ; } }", P4SyntaxError, 2,
     "unexpected ';'"),
    ("header h_t { bit<8> a; }\ncontrol c(inout h_t h) { apply { h.a = 1 } }", P4SyntaxError, 2,
     "unexpected '}'"),
    ("header h_t { bit<8> a; }\ncontrol c(inout h_t h) {\n table t { actions = { } size = x; }\n"
     " apply { } }", P4SyntaxError, 3, "size must be a compile-time constant"),
    ("header h_t { bit<8> a; }\ncontrol c(inout h_t h) {\n table t { size = 1; size = 2; }\n"
     " apply { } }", P4SyntaxError, 3, "sets 'size' twice"),
    ("const bit<8> X = 3 $ 4;", P4SyntaxError, 1, "unexpected character '$'"),
    ('#include "nowhere.p4"\n', P4SyntaxError, 1, "cannot find the included file 'nowhere.p4'"),
    ("header h_t { bit<8> a; }\ncontrol c(inout h_t h) { apply { h.a = 1 >> > 2; } }",
     P4SyntaxError, 2, "unexpected '>'"),
    ("control c() {\n    apply {\n        if (x) { y = 1; } else else { }\n    }\n}", P4SyntaxError, 3,
     "unexpected 'else'"),
    ("parser p() {\n    state start {\n        transition select(x) { 1 : ; }\n    }\n}",
     P4SyntaxError, 3, "unexpected ';'"),
]


@pytest.mark.parametrize("src, cls, line, says", BAD, ids=[b[3] for b in BAD])
def test_bad_p4_is_refused_with_its_line(src, cls, line, says):
    with pytest.raises(cls) as info:
        parse_p4(src, source="bad.p4")
    err = info.value
    assert says in err.message
    assert err.line == line
    text = str(err)
    assert text.startswith(f"bad.p4:{line}:")
    if "#include" not in src:
        assert "^" in text                  # the line with a caret under the column


def test_syntax_errors_say_what_was_expected():
    with pytest.raises(P4SyntaxError) as info:
        parse_p4("header h_t { bit<8> a; }\ncontrol c(inout h_t h) { apply { h.a = ; } }")
    assert info.value.hint == "expected an expression"


def test_errors_in_an_included_file_name_that_file(tmp_path: Path):
    (tmp_path / "bad.p4").write_text("header h_t {\n  bit<8> a\n}\n")
    (tmp_path / "main.p4").write_text('#include "bad.p4"\nconst bit<8> X = 1;\n')
    with pytest.raises(P4SyntaxError) as info:
        parse_p4_file(tmp_path / "main.p4")
    assert info.value.source.endswith("bad.p4") and info.value.line == 3


def test_types_of_included_files_are_known(tmp_path: Path):
    (tmp_path / "types.p4").write_text("typedef bit<48> mac_t;\nheader e_t { mac_t dst; }\n")
    prog = parse_p4('#include "types.p4"\nstruct s_t { e_t eth; mac_t m; }', base=tmp_path)
    assert prog.decls[1].fields[1].type == A.NamedType("mac_t")


def test_errors_are_p4_errors():
    assert issubclass(P4SyntaxError, P4Error) and issubclass(UnsupportedP4Error, P4Error)
