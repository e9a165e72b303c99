"""The C preprocessor sfclab runs on P4 as p4c does (sfclab/p4/preprocess.py), and what the
parser makes of its output: macros, conditionals, includes, -D/-I, errors at the user's line."""

from __future__ import annotations

import pytest

from sfclab.errors import P4SyntaxError
from sfclab.p4 import ast as A
from sfclab.p4 import parse_p4, parse_p4_file, to_p4
from sfclab.p4.preprocess import BMV2_DEFINES, preprocess


def lines(text: str, **kw) -> list[str]:
    return [x.strip() for x in preprocess(text, **kw).text.splitlines()]


def test_text_without_directives_comes_back_as_it_is():
    text = "header h_t { bit<8> a; }\n// no directive here\n"
    pp = preprocess(text)
    assert pp.text == text and pp.where(2) == ("<string>", 2)


def test_object_and_function_like_macros_with_stringify_and_paste():
    out = lines("#define W 8\n#define ADD(a, b) ((a) + (b))\n#define S(x) #x\n"
                "#define CAT(a, b) a##b\n"
                "const bit<W> CAT(x, 1) = ADD(W, 2);\n@name(S(hi there)) action a() { }")
    assert out[4] == "const bit<8> x1 = ((8) + (2));"
    assert out[5] == '@name("hi there") action a() { }'


def test_a_macro_is_not_expanded_inside_itself_or_a_string():
    out = lines('#define X X + 1\n#define Y "X"\nconst bit<8> a = X; @name(Y) action b() { }')
    assert out[2] == 'const bit<8> a = X + 1; @name("X") action b() { }'


def test_a_call_spanning_lines_keeps_the_lines_after_it_in_place():
    pp = preprocess("#define F(a, b) a + b\nconst bit<8> x = F(1,\n   2);\nconst bit<8> y = 3;")
    rows = pp.text.splitlines()
    assert rows[1].split() == ["const", "bit<8>", "x", "=", "1", "+", "2;"]
    assert rows[3] == "const bit<8> y = 3;"


@pytest.mark.parametrize("cond, taken", [
    ("defined(A) && A > 1", True), ("!defined B || 0", True), ("A * 3 == 6 ? 0 : 1", False),
    ("(A << 4) >= 32 && -A < 0", True), ("0x10 / 4 % 3 == 1", True), ("UNDEFINED_NAME", False),
    ("010 == 8", True), ("1U + 2L == 3", True),
])
def test_if_takes_c_integer_expressions(cond, taken):
    out = lines(f"#define A 2\n#if {cond}\nyes\n#else\nno\n#endif")
    assert ("yes" in out) == taken and ("no" in out) != taken


def test_ifdef_elif_else_nest_and_undef_removes():
    text = ("#define A\n#ifdef A\n#ifndef B\none\n#elif 1\nnot\n#endif\n#else\nnot\n#endif\n"
            "#undef A\n#ifdef A\nnot\n#elif defined(A) || 1\ntwo\n#endif")
    out = [x for x in lines(text) if x]
    assert out == ["one", "two"]


def test_d_options_and_what_p4c_bm2_ss_defines():
    out = lines("#if defined(__TARGET_BMV2__) && N == 3\nbmv2\n#endif", defines={
        **BMV2_DEFINES, "N": 3})
    assert "bmv2" in out
    assert "bmv2" not in lines("#ifdef __TARGET_BMV2__\nbmv2\n#endif")


def test_v1model_defines_its_version_unless_the_program_did():
    text = "#include <v1model.p4>\n#if V1MODEL_VERSION >= 20200408\nnew\n#else\nold\n#endif"
    assert "old" in lines(text)
    assert "new" in lines("#define V1MODEL_VERSION 20200408\n" + text)
    assert lines(text)[0] == "#include <v1model.p4>"     # sfclab knows what it declares


def test_include_with_search_folders_guards_and_macros_from_the_file(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "defs.h").write_text("#ifndef DEFS\n#define DEFS\n#define WIDTH 16\n"
                                "header h_t { bit<WIDTH> a; }\n#endif\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "defs.h"\n#include <defs.h>\nconst bit<WIDTH> x = 1;\n')
    prog = parse_p4_file(main, include_dirs=[inc])
    inc_node, again, const = prog.decls
    assert isinstance(inc_node, A.Include) and inc_node.path == "defs.h"
    assert [d.name for d in inc_node.decls] == ["h_t"]        # the file's own declarations
    assert again.decls == () and const.type == A.BitType(16)
    assert inc_node.decls[0].pos.file == str((inc / "defs.h").resolve())
    assert to_p4(prog).startswith('#include "defs.h"\n#include <defs.h>\n')


def test_an_include_inside_a_declaration_is_its_text(tmp_path):
    (tmp_path / "fields.p4").write_text("bit<8> a;\nbit<8> b;\n")
    main = tmp_path / "main.p4"
    main.write_text('header h_t {\n#include "fields.p4"\n}\n')
    h = parse_p4_file(main).decls[0]
    assert [f.name for f in h.fields] == ["a", "b"]
    assert h.fields[1].pos.line == 2 and h.fields[1].pos.file.endswith("fields.p4")


def test_an_error_in_an_included_file_names_that_file_and_line(tmp_path):
    (tmp_path / "bad.p4").write_text("// first\nheader h_t { bit<8> a }\n")
    main = tmp_path / "main.p4"
    main.write_text('const bit<8> x = 1;\n#include "bad.p4"\n')
    with pytest.raises(P4SyntaxError) as info:
        parse_p4_file(main)
    err = info.value
    assert err.source.endswith("bad.p4") and err.line == 2
    assert "header h_t { bit<8> a }" in str(err)


def test_errors_after_macros_name_the_users_line():
    with pytest.raises(P4SyntaxError) as info:
        parse_p4("#define F(x) x +\n\n\nconst bit<8> y = F(1);\n", source="m.p4")
    assert info.value.line == 4 and str(info.value).startswith("m.p4:4:")


@pytest.mark.parametrize("text, says, line", [
    ("#error stop: no target\n", "#error stop: no target", 1),
    ("#include nothing\n", "#include expects", 1),
    ('#include "missing.p4"\n', "cannot find the included file 'missing.p4'", 1),
    ("\n#if\n#endif\n", "#if with no expression", 2),
    ("#if 1 / 0\n#endif\n", "division by zero", 1),
    ("#define F(a) a\nF(1\n", "unterminated argument list invoking macro 'F'", 2),
    ("#define F(a, 1) a\n", "'1' is not a parameter name", 1),
])
def test_directive_errors_name_the_line(text, says, line):
    with pytest.raises(P4SyntaxError) as info:
        preprocess(text, source="d.p4")
    assert says in info.value.message and info.value.line == line


def test_a_file_that_includes_itself_is_stopped(tmp_path):
    f = tmp_path / "loop.p4"
    f.write_text('#include "loop.p4"\n')
    with pytest.raises(P4SyntaxError, match="nested too deeply"):
        parse_p4_file(f)
