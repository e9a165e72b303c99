"""sfclab's P4 checks refuse what p4c's front end (and bf-p4c's one-access rule) refuses:
wrong specialisations, constructors, methods and arguments against the architecture
files as they declare them (and as their #define selects), use before declaration,
and, on TNA, a register touched twice by one packet."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.errors import CatalogError, P4Error, UnsupportedP4Error
from sfclab.p4 import ast as A
from sfclab.p4 import parse_p4, parse_p4_file, to_p4
from sfclab.p4.arch import ARCH_FILES
from sfclab.p4.check import arch_of, check_program

ROOT = Path(__file__).resolve().parents[2]
V1 = "#include <core.p4>\n#include <v1model.p4>\n"
V1_2020 = "#include <core.p4>\n#define V1MODEL_VERSION 20200408\n#include <v1model.p4>\n"
TNA = "#include <core.p4>\n#include <tna.p4>\n"


def _control(pre: str, body: str, apply: str = "") -> str:
    params = "inout standard_metadata_t sm" if "v1model" in pre else "inout bit<8> x"
    return f"{pre}control Ctl({params}) {{\n    {body}\n    apply {{ {apply} }}\n}}\n"


def _refused(src: str) -> P4Error:
    with pytest.raises(P4Error) as err:
        check_program(parse_p4(src), text=src)
    return err.value


# (architecture preamble, control locals, apply body, what the error says)
WRONG = [
    # the three messages p4c 1.2.5.16 gave for sfclab's programs (issue 13, point 1)
    (V1, "register<bit<32>, bit<12>>(4096) r;", "",
     "register<bit<32>, bit<12>>: Type register has 1 type parameter(s), but it is specialized "
     "with 2"),
    (V1, "counter<bit<10>>(1024, CounterType.packets) c;", "",
     "counter<bit<10>>: Type counter has 0 type parameter(s), but it is specialized with 1"),
    (V1, "meter<bit<8>>(256, MeterType.bytes) m;", "",
     "meter<bit<8>>: Type meter has 0 type parameter(s), but it is specialized with 1"),
    # with the define, the index-typed forms are the only ones
    (V1_2020, "register<bit<32>>(16) r;", "",
     "register<bit<32>>: Type register has 2 type parameter(s), but it is specialized with 1"),
    (V1_2020, "counter(16, CounterType.packets) c;", "",
     "counter: Type counter has 1 type parameter(s), but it is specialized with 0"),
    (V1_2020, "direct_counter<bit<8>>(CounterType.packets) d;", "",
     "Type direct_counter has 0 type parameter(s), but it is specialized with 1"),
    # constructors
    (V1_2020, "counter<bit<10>>(16) c;", "",
     "counter(…) c: 1 argument(s), but the constructor takes 2"),
    (V1_2020, "counter<bit<10>>(16, MeterType.packets) c;", "",
     "'MeterType.packets' is a MeterType, the parameter 'type' a CounterType"),
    (V1_2020, "meter<bit<8>>(16, MeterType.bits) m;", "", "MeterType has no member 'bits'"),
    # methods and their arguments
    (V1_2020, "register<bit<32>, bit<10>>(16) r; bit<32> v = 0;", "r.add(v, 1);",
     "r.add: register has no method 'add'"),
    (V1_2020, "register<bit<32>, bit<10>>(16) r; bit<32> v = 0;", "r.read(v);",
     "r.read: 1 argument(s), but the method takes 2"),
    (V1_2020, "register<bit<32>, bit<10>>(16) r; bit<32> v = 0; bit<8> i = 0;", "r.read(v, i);",
     "r.read: 'i' is a bit<8>, the parameter 'index' a bit<10>"),
    (V1, "register<bit<32>>(16) r; bit<32> v = 0; bit<10> i = 0;", "r.read(v, i);",
     "r.read: 'i' is a bit<10>, the parameter 'index' a bit<32>"),
    (V1_2020, "register<bit<32>, bit<10>>(16) r; bit<16> v = 0;", "r.read(v, 10w1);",
     "r.read: 'v' is a bit<16>, the parameter 'result' a bit<32>"),
    (V1_2020, "register<bit<32>, bit<10>>(16) r;", "r.read(32w1 + 32w2, 10w1);",
     "'32w1 + 32w2' cannot be written (the parameter 'result' is out)"),
    (V1_2020, "bit<8> x = 0;", "hash(x, HashAlgorithm.crc32, 8w0, {x});",
     "hash: 4 argument(s), but the function takes 5"),
    (V1_2020, "bit<8> x = 0;", "mark_to_drop(sm, sm);",
     "mark_to_drop: 2 argument(s), but the function takes 0 or 1"),
    (V1_2020, "bit<8> x = 0;", "digest<bit<8>, bit<8>>(1, x);",
     "digest: 2 type argument(s), it takes 1"),
    (V1_2020, "meter<bit<8>>(16, MeterType.bytes) m; bit<2> col = 0;", "m.execute(8w1, col);",
     "m.execute: meter has no method 'execute'"),
    # TNA (tofino1_base.p4)
    (TNA, "Register<bit<32>>(16) r;", "",
     "Register<bit<32>>: Type Register has 2 type parameter(s), but it is specialized with 1"),
    (TNA, "Counter<bit<10>>(16, CounterType_t.PACKETS) c;", "",
     "Type Counter has 2 type parameter(s), but it is specialized with 1"),
    (TNA, "Hash(HashAlgorithm_t.CRC32) h;", "",
     "Hash: Type Hash has 1 type parameter(s), but it is specialized with 0"),
    (TNA, "Meter<bit<8>>(256) m;", "", "m: 1 argument(s), but the constructor takes 2 or 5"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; RegisterAction<bit<32>, bit<4>>(r) a = "
          "{ void apply(inout bit<32> v) { v = 1; } };", "",
     "Type RegisterAction has 3 type parameter(s), but it is specialized with 2"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; RegisterAction<bit<32>, bit<4>, bit<8>>(r) a;", "",
     "a: RegisterAction must implement its abstract method 'apply'"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; RegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
          "{ void apply(inout bit<16> v) { v = 1; } };", "",
     "a.apply: parameter 'v' is inout bit<16>; the abstract method's is inout bit<32>"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; RegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
          "{ void apply(inout bit<32> v, out bit<8> rv) { v = 1; rv = 2; } };", "x = a.execute();",
     "a.execute: 0 argument(s), but the method takes 1"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; RegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
          "{ void apply(inout bit<32> v, out bit<8> rv) { v = 1; rv = 2; } };",
     "x = a.execute(8w1);", "a.execute: '8w1' is a bit<8>, the parameter 'index' a bit<4>"),
    (TNA, "DirectCounter<bit<32>>(CounterType_t.PACKETS) d;", "d.count(1, 2);",
     "d.count: 2 argument(s), but the method takes 1"),
    (TNA, "Hash<bit<8>>(HashAlgorithm_t.CSUM16) h;", "", "HashAlgorithm_t has no member 'CSUM16'"),
    # tna.p4's Register.write and DirectRegister.write return nothing
    (TNA, "Register<bit<8>, bit<4>>(16) r;", "x = r.write(4w1, 8w1);",
     "r.write returns void: its result cannot be assigned"),
    (TNA, "DirectRegister<bit<8>>() r;", "x = r.write(8w1);",
     "r.write returns void: its result cannot be assigned"),
    (TNA, "table t { key = { x : optional; } actions = { NoAction; } size = 4; }", "",
     "optional: match kind not declared by core.p4 and tna.p4"),
]


# Tofino's rules that p4c-barefoot 9.13.4 enforced on sfclab's programs before issue 24, with
# the compiler's words in the comment; the control's parameter is `inout bit<8> x`.
TOFINO_WRONG = [
    # lb / nat: `add: action spanning multiple stages … require multiple stages for a single
    # action` (the incremental checksum folded with &, >>, + in one assignment)
    (TNA, "bit<32> c = 0;", "c = (c & 0xffff) + (c >> 16);",
     "action spanning multiple stages: `c = (c & 0xffff) + (c >> 16)` needs 3 dependent ALU "
     "operations on one field"),
    (TNA, "bit<16> a = 0; bit<16> b = 0; bit<32> d = 0;",
     "d = (bit<32>) ~a + (bit<32>) ~b + (bit<32>) a;", "needs 4 dependent ALU operations"),
    # qos (the TNA meter colour): `and: action spanning multiple stages … operand 2`
    (TNA, "bit<2> col = 0;", "col = col - ((col >> 1) & col & 1);",
     "action spanning multiple stages: `col = col - (col >> 1 & col & 1)`"),
    # one action: a computed field read again by a later instruction of the same action
    (TNA, "bit<8> y = 0; action a() { y = x + 1; x = y + 2; } "
          "table t { key = { x : exact; } actions = { a; } size = 4; }", "t.apply();",
     "action 'a': action spanning multiple stages: `y` is written (line 4) and then read in "
     "the same action"),
    # heavy_hitter / stateful_firewall: `condition too complex, one operand of … must be
    # constant`
    (TNA, "bit<32> c0 = 0; bit<32> c1 = 0;", "if (c1 < c0) { x = 1; }",
     "condition too complex, one operand of `c1 < c0` must be constant"),
    (TNA, "bit<32> n = 0; bit<32> lim = 0;", "if (x == 1 && n > lim) { x = 2; }",
     "one operand of `n > lim` must be constant"),
    # monitor: `Attached object … flow_counters in table … is executed in some actions and not
    # executed in others … direct attached objects must be enabled in all hit actions`
    (TNA, "DirectCounter<bit<32>>(CounterType_t.PACKETS) d; action a() { d.count(); } "
          "table t { key = { x : exact; } actions = { a; NoAction; } default_action = NoAction(); "
          "counters = d; size = 4; }", "t.apply();",
     "table 't': its direct counter 'd' is not used in action 'NoAction'"),
    (TNA, "DirectCounter<bit<32>>(CounterType_t.PACKETS) d; action a() { } "
          "table t { key = { x : exact; } actions = { a; } counters = d; size = 4; }", "t.apply();",
     "its direct counter 'd' is not used in action 'a'"),
    # the composed program's branch table on the 32-bit NF value: `cannot perform a range
    # match on key … as the key does not fit in under 5 PHV nibbles`
    (TNA, "bit<32> w = 0; table t { key = { x : exact; w : range; } actions = { NoAction; } "
          "size = 4; }", "t.apply();",
     "table 't': cannot perform a range match on key `w` (32 bits): Tofino's range keys are at "
     "most 20 bits"),
    (TNA, "bit<32> w = 0; table t { key = { w[23:0] : range; } actions = { NoAction; } "
          "size = 4; }", "t.apply();", "range match on key `w[23:0]` (24 bits)"),
]


@pytest.mark.parametrize("pre, body, apply, message", WRONG + TOFINO_WRONG,
                         ids=[f"{i}" for i in range(len(WRONG))]
                         + [f"tofino{i}" for i in range(len(TOFINO_WRONG))])
def test_wrong_uses_of_the_architecture_are_refused(pre, body, apply, message):
    err = _refused(_control(pre, body, apply))
    assert message in err.message
    assert err.line >= 3 and err.hint
    assert "^" in str(err)                     # the line, with a caret


TOFINO_RIGHT = [
    # one operation per field, a copy propagated, a constant comparison, @defaultonly NoAction,
    # a comparison inside a RegisterAction
    (TNA, "bit<32> c = 0; bit<16> w = 0; DirectCounter<bit<32>>(CounterType_t.PACKETS) d; "
          "Register<bit<32>, bit<4>>(16) r; bit<32> lim = 0; "
          "RegisterAction<bit<32>, bit<4>, bit<1>>(r) over = { void apply(inout bit<32> v, "
          "out bit<1> rv) { v = v + 1; rv = 0; if (v > lim) { rv = 1; } } }; "
          "action a() { c = (bit<32>) w; x = c[7:0]; d.count(); } "
          "table t { key = { x : exact; } actions = { a; @defaultonly NoAction; } "
          "default_action = NoAction(); counters = d; size = 4; }",
     "t.apply(); c = c + 1; w = ~w & 0xff; if (c > 10) { x = over.execute(4w1) ++ 7w0; }"),
    # a range key of 20 bits (a slice of a wider field), a 32-bit field matched as ternary
    (TNA, "bit<32> w = 0; table t { key = { w[19:0] : range; w : ternary; x : range; } "
          "actions = { NoAction; } size = 4; }", "t.apply();"),
]


@pytest.mark.parametrize("pre, body, apply", TOFINO_RIGHT)
def test_tofino_rules_let_the_tofino_forms_through(pre, body, apply):
    assert check_program(parse_p4(_control(pre, body, apply))).arch == "tna"


def _tna_refuses_firewall_variant(tmp_path, name: str, old: str, new: str):
    """The library firewall as NF *name* with *old* replaced by *new*: it compiles for
    v1model and TNA refuses it; returns the error and where *new*'s last line is (file:line:)."""
    from sfclab.codegen import generate
    from sfclab.errors import CompileError
    from sfclab.p4.catalog import load_default

    nf = tmp_path / "p4" / "nf"
    nf.mkdir(parents=True)
    (tmp_path / "p4" / "include").symlink_to(ROOT / "p4" / "include")
    src = (ROOT / "p4" / "nf" / "firewall.p4").read_text().replace("control firewall(",
                                                                   f"control {name}(")
    src = src.replace(old, new, 1)
    (nf / f"{name}.p4").write_text(src)
    cat = load_default().copy()
    cat.add_path(nf)
    first = new.splitlines()[-1]
    line = src.splitlines().index(first) + 1
    text = f"chain c {{ input => {name} => output; }}"
    generate(sfclab.compile(text, catalog=cat))                    # v1model: fine
    with pytest.raises(CompileError) as err:
        generate(sfclab.compile(text, arch="tna", catalog=cat))
    return err.value, f"{nf / (name + '.p4')}:{line}:"


def test_tna_emitter_refuses_an_nf_breaking_a_tofino_rule_with_its_line(tmp_path):
    """An NF in the portable API that compiles for v1model but not for Tofino: `sfclab
    compile --arch tna` names the NF, the rule and the line in the NF's file."""
    err, where = _tna_refuses_firewall_variant(
        tmp_path, "cmp_fw", "    apply {", "    bit<32> a = 0;\n    bit<32> b = 0;\n\n    apply {\n"
                                          "        if (a < b) { sfc.metadata = 1; }")
    assert "NF 'cmp_fw': condition too complex, one operand of `a < b` must be constant" \
        in err.message
    assert where in err.message


def test_tna_emitter_refuses_an_nf_range_matching_a_32_bit_field_with_its_line(tmp_path):
    """An NF whose table range-matches the 32-bit source address compiles for v1model; for
    TNA sfclab names the NF, the key, Tofino's 20-bit limit and the line in the NF's file."""
    err, where = _tna_refuses_firewall_variant(
        tmp_path, "rng_fw", "            hdr.ipv4.src_addr : ternary;",
        "            hdr.ipv4.src_addr : range;")
    assert "NF 'rng_fw': table 'acl': cannot perform a range match on key `hdr.ipv4.src_addr` " \
           "(32 bits): Tofino's range keys are at most 20 bits" in err.message
    assert where in err.message
    assert "ternary" in err.hint


def test_the_refusal_says_which_define_selects_the_form_used():
    err = _refused(_control(V1, "register<bit<32>, bit<12>>(4096) r;"))
    assert "register<T, I> needs `#define V1MODEL_VERSION 20200408` (or later) before " \
           "#include <v1model.p4>" in err.hint
    assert "register<bit<32>, bit<12>>(4096) r;" in str(err)       # the line, with a caret
    err = _refused(_control(V1_2020, "register<bit<32>>(16) r;"))
    assert "register<T> needs V1MODEL_VERSION below 20200408" in err.hint


RIGHT = [
    (V1, "register<bit<32>>(16) r; counter(8, CounterType.packets) c; "
         "meter(4, MeterType.bytes) m; bit<32> v = 0; bit<2> col = 0;",
     "r.read(v, 32w3); r.write(32w3, v + 1); c.count(32w1); m.execute_meter(32w1, col);"),
    (V1_2020, "register<bit<32>, bit<10>>(16) r; counter<bit<10>>(8, CounterType.packets) c; "
              "meter<bit<8>>(4, MeterType.bytes) m; bit<32> v = 0; bit<2> col = 0; bit<10> i = 0;",
     "r.read(v, i); r.write(i, v + 1); c.count(i); m.execute_meter(8w1, col); "
     "hash(i, HashAlgorithm.crc16, (bit<10>) 0, {v}, (bit<64>) 1024); "
     "digest<bit<32>>(1, v); mark_to_drop(sm);"),
    (TNA, "Register<bit<32>, bit<4>>(16) r; bit<4> i = 0; bit<32> n = 0; "
          "RegisterAction<bit<32>, bit<4>, bit<32>>(r) bump = { void apply(inout bit<32> value, "
          "out bit<32> rv) { value = value + (bit<32>) x; rv = value; } }; "
          "Meter<bit<4>>(16, MeterType_t.BYTES) m; Hash<bit<4>>(HashAlgorithm_t.CRC16) h;",
     "i = h.get({x}); n = bump.execute(i); x = m.execute(i); x = m.execute(i, MeterColor_t.RED);"),
]


@pytest.mark.parametrize("pre, body, apply", RIGHT, ids=["v1model-2018", "v1model-2020", "tna"])
def test_right_uses_of_the_architecture_pass(pre, body, apply):
    env = check_program(parse_p4(_control(pre, body, apply)))
    assert env.arch == ("tna" if "tna" in pre else "v1model")


# --- #define ---------------------------------------------------------------------------------

def test_the_defines_an_architecture_file_reads_are_parsed_and_printed():
    prog = parse_p4(V1_2020)
    assert prog.decls[1] == A.Define("V1MODEL_VERSION", 20200408)
    assert to_p4(prog) == V1_2020
    assert check_program(prog).defines == {"V1MODEL_VERSION": 20200408}
    assert ARCH_FILES["tna.p4"].defines == {"__TARGET_TOFINO__": None}
    tna = parse_p4("#include <core.p4>\n#define __TARGET_TOFINO__ 1\n#include <tna.p4>\n")
    assert arch_of(tna) == "tna"


@pytest.mark.parametrize("src, cls, message", [
    ("#define V1MODEL_VERSION new\n", UnsupportedP4Error, "needs an integer value"),
    (V1 + "#define V1MODEL_VERSION 20200408\n", P4Error,
     "comes after #include <v1model.p4>, which reads it"),
    ("#include <core.p4>\n#define V1MODEL_VERSION 20200408\n", P4Error,
     "no included file reads it"),
    ("#include <core.p4>\n#define __TARGET_TOFINO__ 1\n#include <v1model.p4>\n", P4Error,
     "#define __TARGET_TOFINO__: no included file reads it"),
    ("#define V1MODEL_VERSION 20200408\n#define V1MODEL_VERSION 20180101\n#include <v1model.p4>\n",
     P4Error, "is defined twice"),
])
def test_other_defines_are_refused(src, cls, message):
    with pytest.raises(cls, match=message) as err:
        check_program(parse_p4(src))
    assert err.value.line >= 1


# --- declaration before use ------------------------------------------------------------------

def test_a_name_used_before_its_declaration_is_refused_as_p4c_does():
    """Issue 13, point 7: TNA's front end said `now: declaration not found`."""
    src = _control(TNA, """Register<bit<32>, bit<4>>(16) r;
    RegisterAction<bit<32>, bit<4>, bit<32>>(r) stamp = {
        void apply(inout bit<32> value) { value = now; }
    };
    bit<32> now = 0;""", "stamp.execute(1);")
    err = _refused(src)
    assert err.message == "now: declaration not found"
    assert err.line == 6 and src.splitlines()[5][err.column - 1:].startswith("now;")
    assert "'now' is declared at line 8, after this use" in err.hint


@pytest.mark.parametrize("body, apply, name", [
    ("action a() { y = 1; } bit<8> y = 0;", "a();", "y"),
    ("table t { key = { x : exact; } actions = { a; } size = 4; } action a() { }", "t.apply();",
     "a"),
    ("bit<8> y = z; bit<8> z = 0;", "", "z"),
    ("", "x = w; bit<8> w = 1;", "w"),
    ("", "undeclared_thing();", "undeclared_thing"),
])
def test_declaration_before_use_everywhere(body, apply, name):
    err = _refused(_control(TNA, body, apply))
    assert err.message == f"{name}: declaration not found"


def test_names_of_the_architecture_and_the_includes_are_known():
    check_program(parse_p4_file(ROOT / "tests" / "fixtures" / "p4" / "tna_sample.p4"))
    check_program(parse_p4_file(ROOT / "tests" / "fixtures" / "p4" / "v1model_sample.p4"))
    for nf in sorted((ROOT / "p4" / "nf").glob("*.p4")):
        check_program(parse_p4_file(nf), portable=True)        # sfc_headers.p4, sfc_api.p4


# --- TNA: one access per register per packet -------------------------------------------------

RA = ("Register<bit<32>, bit<4>>(16) r;\n"
      "    RegisterAction<bit<32>, bit<4>, bit<32>>(r) get = "
      "{ void apply(inout bit<32> value, out bit<32> rv) { rv = value; } };\n"
      "    RegisterAction<bit<32>, bit<4>, bit<32>>(r) put = "
      "{ void apply(inout bit<32> value) { value = 1; } };\n"
      "    bit<32> n = 0;\n    action read_it() { n = get.execute(1); }\n"
      "    action write_it() { put.execute(1); }\n"
      "    table t { key = { x : exact; } actions = { read_it; write_it; } size = 4; }")


@pytest.mark.parametrize("apply, lines", [
    ("n = get.execute(1); put.execute(1);", "get.execute (line 11), put.execute (line 11)"),
    ("n = get.execute(1); n = get.execute(2);", "get.execute (line 11), get.execute (line 11)"),
    ("t.apply(); write_it();", "get.execute (line 8), put.execute (line 9)"),
    ("if (x == 1) { read_it(); } put.execute(1);", "get.execute (line 8), put.execute (line 11)"),
    ("switch (t.apply().action_run) { read_it: { put.execute(1); } }",
     "get.execute (line 8), put.execute (line 11)"),
])
def test_tna_refuses_a_register_touched_twice_on_one_path(apply, lines):
    err = _refused(_control(TNA, RA, apply))
    assert err.message == ("control 'Ctl': register 'r' is accessed 2 times on one packet path: "
                           + lines)
    assert "one RegisterAction" in err.hint


@pytest.mark.parametrize("apply", [
    "if (x == 1) { n = get.execute(1); } else { put.execute(1); }",
    "t.apply();",
    "switch (t.apply().action_run) { write_it: { } default: { } }",
    "if (x == 1) { read_it(); exit; put.execute(1); }",
])
def test_tna_accepts_accesses_on_exclusive_paths(apply):
    check_program(parse_p4(_control(TNA, RA, apply)))


def test_v1model_has_no_one_access_rule():
    check_program(parse_p4(_control(V1_2020, "register<bit<32>, bit<4>>(16) r; bit<32> v = 0;",
                                     "r.read(v, 4w1); r.write(4w1, v + 1); r.read(v, 4w2);")))


# --- NFs: the portable API is checked the same way -------------------------------------------

@pytest.mark.parametrize("body, apply, message", [
    ("SfcRegister<bit<32>>(16) r;", "", "Type SfcRegister has 2 type parameter(s)"),
    ("SfcRegister<bit<32>, bit<4>>(16) r; bit<32> v = 0;", "v = r.read(4w1, 4w2);",
     "r.read: 2 argument(s), but the method takes 1"),
    ("SfcRegister<bit<32>, bit<4>>(16) r; SfcRegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
     "{ void apply(inout bit<32> value, out bit<8> rv, out bit<8> more) { rv = 1; } };", "",
     "a.apply: 3 parameter(s); the abstract method is"),
    ("SfcRegister<bit<32>, bit<4>>(16) r; SfcRegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
     "{ void apply(inout bit<32> value) { value = late; } }; bit<32> late = 0;", "",
     "late: declaration not found"),
    ("SfcRegister<bit<16>, bit<4>>(16) r; SfcRegisterAction<bit<32>, bit<4>, bit<8>>(r) a = "
     "{ void apply(inout bit<32> value) { value = 1; } };", "",
     "'r' is a SfcRegister<bit<16>, bit<4>>, not a SfcRegister<bit<32>, bit<4>>"),
    ("SfcRegister<bit<32>, bit<4>>(16) r; SfcRegisterAction<bit<32>, bit<4>, bit<8>>(r) a;", "",
     "a: SfcRegisterAction must implement its abstract method 'apply'"),
    ("table t { key = { hdr.ipv4.src_addr : optional; } actions = { NoAction; } size = 4; }", "",
     "optional: match kind not declared by core.p4 and both v1model.p4 and tna.p4"),
])
def test_an_nf_is_checked_against_the_portable_api(body, apply, message):
    cat = sfclab.catalog.copy()
    src = (f"control bad_nf(inout headers_t hdr, inout sfc_meta_t sfc) {{\n    {body}\n"
           f"    apply {{ {apply} }}\n}}")
    with pytest.raises((P4Error, CatalogError)) as err:
        cat.add_source(src)
    assert message in str(err.value)
    assert "bad_nf" not in cat.names()                       # nothing was added
