"""Random well-typed v1model programs, with packets and entries to run them (an STF file).

``generate(seed)`` is deterministic: the same seed gives the same program and test.
A program has two or three header types of random widths (some fields ``int<N>``),
a header stack, a parser that selects on a field (a value, a mask or a range) and
loops over the stack,
metadata with bit, int and bool fields and a nested struct, and ingress / egress
controls made of random statements: assignments of random expressions, ``if`` /
``else``, tables (exact, ternary and lpm keys) applied for ``hit`` / ``miss`` or
``switch``-ed on ``action_run``, actions with control-plane parameters and actions
with ``inout`` arguments called directly, ``exit`` and ``return``, ``setValid`` /
``setInvalid``, stack ``push_front`` / ``pop_front``, ``mark_to_drop``, locals, struct
copies, a register (read, write), ``hash`` with every algorithm BMv2 has but the custom
ones, multicast groups and clones (the STF sets up group 1 and session 5 for one seed in
four: see :func:`generate`), and a ``csum16`` checksum update.  Expressions cover every form v1model programs use: literals with and without
width, signed ``int<N>``, casts, slices, concatenation, shifts by constants and by
fields (past the width too), ``?:`` (with an untyped literal branch), bitwise,
arithmetic and saturating operators, division of constants, unary minus and
complement, comparisons, ``&&`` / ``||`` / ``!``, header validity, stack elements.

What it stays away from, because the language leaves it undefined and p4c and
BMv2 need not agree with any reference: reads of uninitialised locals, and stack
indexes known only at run time; and what p4c-bm2-ss refuses for BMv2: division of
run-time values, ``lastIndex`` outside parsers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["GenProgram", "generate"]


@dataclass(frozen=True)
class T:
    """A value type: ``bit<w>`` / ``int<w>`` (``signed``), or bool (``w == 0``)."""

    w: int
    signed: bool = False

    @property
    def is_bool(self) -> bool:
        return self.w == 0

    def p4(self) -> str:
        if self.is_bool:
            return "bool"
        return f"{'int' if self.signed else 'bit'}<{self.w}>"


BOOL = T(0)


@dataclass
class GenProgram:
    seed: int
    text: str
    stf: str


@dataclass
class _Hdr:
    name: str
    fields: list[tuple[str, T]]

    @property
    def bits(self) -> int:
        return sum(t.w for _, t in self.fields)


@dataclass
class _Ctx:
    """What a statement may use where it is generated (its own copies of the lists)."""

    lvalues: list[tuple[str, T]]
    rvalues: list[tuple[str, T]]
    where: str                        # "ingress", "egress", "action"
    depth: int = 0

    def __post_init__(self) -> None:
        self.lvalues, self.rvalues = list(self.lvalues), list(self.rvalues)

    def block(self) -> tuple[int, int]:
        return len(self.lvalues), len(self.rvalues)

    def end(self, mark: tuple[int, int]) -> None:
        """Forget the locals declared since *mark* (the block that declared them ended)."""
        del self.lvalues[mark[0]:]
        del self.rvalues[mark[1]:]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.seed = seed
        self.n = 0
        self.table_keys: dict[str, list[tuple[str, str, T]]] = {}
        self.table_acts: dict[str, list[tuple[str, list[tuple[str, T]]]]] = {}

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    # -- types ---------------------------------------------------------------------------------
    def width(self) -> int:
        return self.r.choice([1, 2, 3, 4, 5, 7, 8, 8, 8, 9, 12, 16, 16, 16, 24, 32, 32, 48, 64])

    def vtype(self) -> T:
        w = self.width()
        return T(w, w > 1 and self.r.random() < 0.25)

    # -- declarations --------------------------------------------------------------------------
    def header(self, name: str, nfields: int) -> _Hdr:
        fields = [(f"f{i}", self.vtype()) for i in range(nfields)]
        pad = (-sum(t.w for _, t in fields)) % 8
        if pad:
            fields.append((f"f{nfields}", T(pad)))
        return _Hdr(name, fields)

    def program(self) -> GenProgram:
        r = self.r
        self.h0 = self.header("h0_t", r.randint(2, 5))
        # the select field: an unsigned field of h0
        sel = [(n, t) for n, t in self.h0.fields if not t.signed and 2 <= t.w <= 16]
        if not sel:
            self.h0.fields.insert(0, ("sel", T(8)))
            sel = [("sel", T(8))]
        self.sel_name, self.sel_t = r.choice(sel)
        self.h1 = self.header("h1_t", r.randint(1, 4))
        self.h2 = self.header("h2_t", r.randint(1, 3))
        self.stack_size = r.randint(2, 4)
        self.h2_loop = next(((n, t) for n, t in self.h2.fields if not t.signed and t.w >= 2),
                            None)
        self.meta = [(f"m{i}", self.vtype()) for i in range(r.randint(2, 4))] + [("flag", BOOL)]
        self.inner = [("a", self.vtype()), ("b", self.vtype())]
        self.sel_values = sorted({r.randrange(1 << self.sel_t.w) for _ in range(2)})
        hdrs = self._decls()
        parser = self._parser()
        ing = self._control("ingress")
        eg = self._control("egress")
        text = "\n".join([
            "#include <core.p4>", "#include <v1model.p4>", "", hdrs, parser,
            "control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }",
            ing, eg,
            self._compute(),
            "control MyDeparser(packet_out pkt, in headers_t hdr) {",
            "    apply { pkt.emit(hdr.h0); pkt.emit(hdr.h1); pkt.emit(hdr.stk); }",
            "}",
            "V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), "
            "MyDeparser()) main;", ""])
        return GenProgram(self.seed, text, self._stf())

    def _compute(self) -> str:
        """The compute-checksum control: a csum16 of some of h0's fields into a 16-bit one."""
        sixteen = [f for f, t in self.h0.fields if t == T(16)]
        if not sixteen or self.r.random() < 0.4:
            return "control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }"
        dst = self.r.choice(sixteen)
        data = [f"hdr.h0.{f}" for f, _ in self.h0.fields if f != dst]
        return ("control MyCompute(inout headers_t hdr, inout meta_t meta) {\n    apply {\n"
                f"        update_checksum(hdr.h0.isValid(), {{ {', '.join(data)} }}, hdr.h0.{dst}, "
                "HashAlgorithm.csum16);\n    }\n}")

    def _decls(self) -> str:
        out = []
        for h in (self.h0, self.h1, self.h2):
            body = " ".join(f"{t.p4()} {n};" for n, t in h.fields)
            out.append(f"header {h.name} {{ {body} }}")
        out.append("struct inner_t { " + " ".join(f"{t.p4()} {n};" for n, t in self.inner)
                   + " }")
        out.append(f"struct headers_t {{ h0_t h0; h1_t h1; h2_t[{self.stack_size}] stk; }}")
        out.append("struct meta_t { " + " ".join(f"{t.p4()} {n};" for n, t in self.meta)
                   + " inner_t s1; inner_t s2; }")
        return "\n".join(out) + "\n"

    def _parser(self) -> str:
        v0, v1 = self.sel_values[0], self.sel_values[-1]
        w = self.sel_t.w
        lines = ["parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,",
                 "                inout standard_metadata_t sm) {",
                 "    state start {",
                 "        pkt.extract(hdr.h0);",
                 f"        transition select(hdr.h0.{self.sel_name}) {{",
                 f"            {self._keyset(v0, w)}: parse_h1;"]
        if v1 != v0:
            lines.append(f"            {w}w{v1}: parse_stk;")
        lines += ["            default: accept;", "        }", "    }",
                  "    state parse_h1 { pkt.extract(hdr.h1); transition parse_stk; }",
                  "    state parse_stk {", "        pkt.extract(hdr.stk.next);"]
        if self.h2_loop is not None:
            n, t = self.h2_loop
            lines += [f"        transition select(hdr.stk.last.{n}) {{",
                      f"            {t.w}w0: parse_stk;", "            default: accept;",
                      "        }"]
        else:
            lines.append("        transition accept;")
        lines += ["    }", "}", ""]
        return "\n".join(lines)

    def _keyset(self, v: int, w: int) -> str:
        """A select case matching *v*: the value, a mask or a range around it."""
        k = self.r.random()
        if k < 0.5:
            return f"{w}w{v}"
        if k < 0.75:
            m = self.r.randrange(1 << w)
            return f"{w}w{v & m} &&& {w}w{m}"
        hi = min((1 << w) - 1, v + self.r.randint(0, 3))
        return f"{w}w{v} .. {w}w{hi}"

    # -- controls ------------------------------------------------------------------------------
    def _values(self, valid_only: bool) -> list[tuple[str, T]]:
        out = [(f"hdr.h0.{n}", t) for n, t in self.h0.fields]
        out += [(f"hdr.h1.{n}", t) for n, t in self.h1.fields]
        for i in range(self.stack_size):
            out += [(f"hdr.stk[{i}].{n}", t) for n, t in self.h2.fields]
        out += [(f"meta.{n}", t) for n, t in self.meta]
        out += [(f"meta.s1.{n}", t) for n, t in self.inner]
        out += [(f"meta.s2.{n}", t) for n, t in self.inner]
        return out

    def _control(self, where: str) -> str:
        r = self.r
        name = "MyIngress" if where == "ingress" else "MyEgress"
        lv = self._values(True)
        rv = lv + [("sm.ingress_port", T(9)), ("sm.packet_length", T(32)),
                   ("sm.instance_type", T(32))]
        if where == "egress":
            rv.append(("sm.egress_port", T(9)))
        self.tables: list[tuple[str, list[str]]] = []
        self.actions: list[tuple[str, list[tuple[str, T]]]] = []
        self.applied: set[str] = set()
        body: list[str] = []
        decls: list[str] = [f"    register<bit<16>>(8) rg;"]
        self.where = where
        # actions with control-plane parameters
        for _ in range(r.randint(1, 3)):
            aname = self.fresh("a")
            params = [(self.fresh("p"), self.vtype()) for _ in range(r.randint(0, 2))]
            ctx = _Ctx(lv, rv + params, "action")
            stmts = [self.stmt(ctx) for _ in range(r.randint(1, 3))]
            if where == "ingress" and r.random() < 0.5:
                stmts.append(f"sm.egress_spec = {self.port_expr(ctx)};")
            ps = ", ".join(f"{t.p4()} {n}" for n, t in params)
            decls.append(f"    action {aname}({ps}) {{\n" + _indent(stmts, 8) + "    }")
            self.actions.append((aname, params))
        # an action with inout / in arguments, called directly
        io_t = self.vtype()
        io_name = self.fresh("io")
        ctx = _Ctx(lv + [("x", io_t)], rv + [("x", io_t), ("y", io_t)], "action")
        stmts = [f"x = {self.expr(io_t, ctx, 2)};"]
        if r.random() < 0.5:
            stmts.append(f"if ({self.expr(BOOL, ctx, 1)}) {{ exit; }}")
        stmts.append(f"x = {self.expr(io_t, ctx, 2)};")
        decls.append(f"    action {io_name}(inout {io_t.p4()} x, in {io_t.p4()} y) {{\n"
                     + _indent(stmts, 8) + "    }")
        # tables
        ctx = _Ctx(lv, rv, where)
        for _ in range(r.randint(1, 2)):
            decls.append(self._table(ctx))
        # the apply block
        ctx = _Ctx(lv, rv, where)
        if where == "ingress":
            body.append(f"sm.egress_spec = {self.port_expr(ctx)};")
        same = [(n, t) for n, t in lv if t == io_t and not n.startswith("hdr.stk")]
        call = f"{io_name}({r.choice(same)[0]}, {self.expr(io_t, ctx, 1)});" if same else None
        for _ in range(r.randint(3, 7)):
            body.append(self.stmt(ctx, tables=True))
        if call:                # before the first local: its arguments use none
            first_local = next((i for i, b in enumerate(body) if _declares(b)), len(body))
            body.insert(r.randrange(first_local + 1), call)
        for tname, _ in self.tables:
            if not any(f"{tname}.apply()" in s for s in body):
                body.append(f"{tname}.apply();")
        sig = ("inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm")
        return (f"control {name}({sig}) {{\n" + "\n".join(decls) + "\n    apply {\n"
                + _indent(body, 8) + "    }\n}\n")

    def _table(self, ctx: _Ctx) -> str:
        r = self.r
        tname = self.fresh("t")
        keys = []
        cands = [(n, t) for n, t in ctx.rvalues if not t.is_bool and not n.startswith("sm.")
                 and t.w <= 64 and not n.startswith("meta.s")]
        for _ in range(r.randint(1, 2)):
            n, t = r.choice(cands)
            if n in [k[0] for k in keys]:
                continue
            kind = r.choice(["exact", "exact", "ternary", "lpm"])
            if kind == "lpm" and any(k[1] == "lpm" for k in keys):
                kind = "exact"
            keys.append((n, kind, t))
        if r.random() < 0.3:
            keys.append(("hdr.h1.isValid()", "exact", T(1)))
        acts = [a for a, _ in self.actions]
        r.shuffle(acts)
        acts = acts[:r.randint(1, len(acts))]
        self.tables.append((tname, acts))
        self.table_keys[tname] = keys
        self.table_acts[tname] = [(a, dict(self.actions)[a]) for a in acts]
        key_lines = "".join(f" {n}: {k};" for n, k, _ in keys)
        default = ""
        if r.random() < 0.4:
            a = r.choice(acts)
            params = dict(self.actions)[a]
            args = ", ".join(self.literal(t) for _, t in params)
            default = f" default_action = {a}({args});"
        return (f"    table {tname} {{ key = {{{key_lines} }} actions = {{ "
                + " ".join(f"{a};" for a in acts) + " NoAction; }" + default + " }")

    # -- statements ----------------------------------------------------------------------------
    def port_expr(self, ctx: _Ctx) -> str:
        r = self.r
        if r.random() < 0.5:
            return f"9w{r.randint(0, 7)}"
        n, t = r.choice([(n, t) for n, t in ctx.rvalues if not t.is_bool])
        return f"(bit<9>)(({self.cast_to(T(t.w), n, t)}) & {t.w}w7)" if t.w >= 3 else \
            f"(bit<9>){self.cast_to(T(t.w), n, t)}"

    def stmt(self, ctx: _Ctx, tables: bool = False) -> str:
        r = self.r
        ctx.depth += 1
        try:
            k = r.random()
            if ctx.depth > 3:
                k = r.random() * 0.55
            if k < 0.45:
                n, t = r.choice(ctx.lvalues)
                return f"{n} = {self.expr(t, ctx, r.randint(1, 3))};"
            if k < 0.55:
                t = self.vtype()
                name = self.fresh("v")
                init = self.expr(t, ctx, 2)
                ctx.lvalues.append((name, t))
                ctx.rvalues.append((name, t))
                return f"{t.p4()} {name} = {init};"
            if k < 0.7:
                cond = self.expr(BOOL, ctx, 2)
                text = f"if ({cond}) {{\n" + _indent(self.stmts(ctx, 1, 2, tables), 4) + "}"
                if r.random() < 0.5:
                    text += " else {\n" + _indent(self.stmts(ctx, 1, 2, tables), 4) + "}"
                return text
            if k < 0.78 and tables:
                return self._apply_table(ctx)
            if k < 0.83:
                return r.choice(["hdr.h1.setValid();", "hdr.h1.setInvalid();",
                                 "hdr.stk.push_front(1);", "hdr.stk.pop_front(1);",
                                 f"hdr.stk[{r.randrange(self.stack_size)}].setValid();",
                                 "hdr.h0.setInvalid();"])
            if k < 0.87:
                return "meta.s2 = meta.s1;" if r.random() < 0.5 else "meta.s1 = meta.s2;"
            if k < 0.9 and ctx.where != "action":
                return f"if ({self.expr(BOOL, ctx, 1)}) {{ mark_to_drop(sm); }}"
            if k < 0.93:
                return f"if ({self.expr(BOOL, ctx, 1)}) {{ exit; }}"
            if k < 0.95 and ctx.where != "action":
                return f"if ({self.expr(BOOL, ctx, 1)}) {{ return; }}"
            if ctx.where != "action":
                return self._extern_stmt(ctx)
            n, t = r.choice(ctx.lvalues)
            return f"{n} = {self.expr(t, ctx, 1)};"
        finally:
            ctx.depth -= 1

    def _extern_stmt(self, ctx: _Ctx) -> str:
        """A register read or write, a hash, a multicast group or a clone."""
        r = self.r
        k = r.random()
        idx = f"(bit<32>)({self.expr(T(3), ctx, 1)})"
        if k < 0.5:
            name = self.fresh("v")
            if r.random() < 0.5:
                text = f"bit<16> {name}; rg.read({name}, {idx});"
            else:
                algo = r.choice(["crc16", "crc32", "csum16", "xor16", "identity"])
                data = ", ".join(self.expr(self.vtype(), ctx, 1) for _ in range(r.randint(1, 3)))
                text = (f"bit<16> {name}; hash({name}, HashAlgorithm.{algo}, 16w{r.randint(0, 9)}, "
                        f"{{ {data} }}, 16w{r.choice([1, 7, 1024, 65535])});")
            ctx.lvalues.append((name, T(16)))
            ctx.rvalues.append((name, T(16)))
            return text
        if k < 0.75:
            return f"rg.write({idx}, {self.expr(T(16), ctx, 2)});"
        if self.where == "ingress" and k < 0.88:
            return f"if ({self.expr(BOOL, ctx, 1)}) {{ sm.mcast_grp = 16w1; }}"
        kind = "I2E" if self.where == "ingress" else "E2E"
        return (f"if ({self.expr(BOOL, ctx, 1)} && sm.instance_type == 0) "
                f"{{ clone(CloneType.{kind}, 32w5); }}")

    def stmts(self, ctx: _Ctx, lo: int, hi: int, tables: bool = False) -> list[str]:
        """A block of statements; its locals are not visible after it."""
        mark = ctx.block()
        out = [self.stmt(ctx, tables) for _ in range(self.r.randint(lo, hi))]
        ctx.end(mark)
        return out

    def _apply_table(self, ctx: _Ctx) -> str:
        r = self.r
        free = [t for t, _ in self.tables if t not in self.applied]
        if not free:
            n, t = r.choice(ctx.lvalues)
            return f"{n} = {self.expr(t, ctx, 2)};"
        tname = r.choice(free)
        self.applied.add(tname)
        k = r.random()
        if k < 0.35:
            return f"{tname}.apply();"
        if k < 0.7:
            return (f"if ({tname}.apply().{r.choice(['hit', 'miss'])}) {{\n"
                    + _indent(self.stmts(ctx, 1, 2), 4) + "}")
        acts = [a for a, _ in self.table_acts[tname]]
        lines = [f"switch ({tname}.apply().action_run) {{"]
        for a in r.sample(acts, r.randint(1, len(acts))):
            lines.append(f"    {a}: {{")
            lines.append(_indent(self.stmts(ctx, 1, 1), 8).rstrip("\n"))
            lines.append("    }")
        if r.random() < 0.5:
            lines.append("    default: {")
            lines.append(_indent(self.stmts(ctx, 1, 1), 8).rstrip("\n"))
            lines.append("    }")
        lines.append("}")
        return "\n".join(lines)

    # -- expressions ---------------------------------------------------------------------------
    def literal(self, t: T) -> str:
        r = self.r
        if t.is_bool:
            return r.choice(["true", "false"])
        if t.signed:
            lo, hi = -(1 << (t.w - 1)), (1 << (t.w - 1)) - 1
            v = r.choice([lo, hi, 0, 1, -1, r.randint(lo, hi)])
            return f"{t.w}s{v}" if v >= 0 else f"-{t.w}s{-v}" if -v <= hi else \
                f"(int<{t.w}>)({t.w}w{(1 << t.w) + v})"
        v = r.choice([0, 1, (1 << t.w) - 1, r.randrange(1 << t.w)])
        return f"{t.w}w{v}"

    def cast_to(self, t: T, text: str, src: T) -> str:
        """*text* (of type *src*) as a *t*, by legal casts."""
        if src == t:
            return text
        if src.is_bool:
            one = f"(bit<1>)({text})"
            return one if t == T(1) else self.cast_to(t, one, T(1))
        if t.is_bool:
            return f"({self.cast_to(T(src.w), text, src)} != 0)"
        if src.signed != t.signed and src.w != t.w:
            mid = T(t.w, src.signed)
            return f"(({t.p4()})({mid.p4()})({text}))"
        return f"(({t.p4()})({text}))"

    def leaf(self, t: T, ctx: _Ctx) -> str:
        r = self.r
        same = [n for n, u in ctx.rvalues if u == t]
        if same and r.random() < 0.6:
            return r.choice(same)
        if r.random() < 0.35:
            return self.literal(t)
        n, u = r.choice(ctx.rvalues)
        return self.cast_to(t, n, u)

    def expr(self, t: T, ctx: _Ctx, depth: int) -> str:
        r = self.r
        if depth <= 0:
            return self.leaf(t, ctx)
        if t.is_bool:
            return self._bool(ctx, depth)
        k = r.random()
        sub = lambda u=t: self.expr(u, ctx, depth - 1)  # noqa: E731
        if k < 0.2:
            op = r.choice(["+", "-", "*", "&", "|", "^", "|+|", "|-|"])
            return f"({sub()} {op} {sub()})"
        if k < 0.27:
            return f"({sub()} {r.choice(['+', '-', '&', '|', '^'])} {r.randint(0, 300)})"
        if k < 0.33:
            return f"({r.choice(['-', '~'])}{sub()})"
        if k < 0.42:
            amt = r.choice([str(r.randint(0, t.w + 3)),
                            f"8w{r.randint(0, t.w + 3)}",
                            self.cast_to(T(8), *r.choice([(n, u) for n, u in ctx.rvalues
                                                         if not u.is_bool]))])
            return f"((({t.p4()})({sub()})) {r.choice(['<<', '>>'])} {amt})"
        if k < 0.5 and t.w >= 2 and not t.signed:
            lo = r.randint(1, t.w - 1)
            a, b = T(lo), T(t.w - lo)
            return (f"((({a.p4()})({self.expr(a, ctx, depth - 1)})) ++ "
                    f"(({b.p4()})({self.expr(b, ctx, depth - 1)})))")
        if k < 0.58:
            wider = T(min(64, t.w + r.randint(0, 16)), r.random() < 0.3)
            lo = r.randint(0, wider.w - t.w)
            s = f"({self.expr(wider, ctx, depth - 1)})[{lo + t.w - 1}:{lo}]"
            return s if not t.signed else f"(({t.p4()}){s})"
        if k < 0.68:
            c = self._bool(ctx, depth - 1)
            a, b = sub(), sub()
            if r.random() < 0.3:
                b = str(r.randint(0, 5))
            return f"({c} ? {a} : {b})"
        if k < 0.76:
            u = self.vtype()
            return self.cast_to(t, self.expr(u, ctx, depth - 1), u)
        if k < 0.8 and not t.signed:      # BMv2 divides only what p4c folds
            return (f"({self.literal(t)} {r.choice(['/', '%'])} "
                    f"{t.w}w{r.randint(1, max(1, min(9, (1 << t.w) - 1)))})")
        return self.leaf(t, ctx)

    def _bool(self, ctx: _Ctx, depth: int) -> str:
        r = self.r
        k = r.random()
        if depth <= 0 or k < 0.15:
            return r.choice(["hdr.h0.isValid()", "hdr.h1.isValid()", "meta.flag",
                             f"hdr.stk[{r.randrange(self.stack_size)}].isValid()",
                             self.literal(BOOL)])
        if k < 0.6:
            t = self.vtype()
            op = r.choice(["==", "!=", "<", ">", "<=", ">="])
            return f"({self.expr(t, ctx, depth - 1)} {op} {self.expr(t, ctx, depth - 1)})"
        if k < 0.85:
            return (f"({self._bool(ctx, depth - 1)} {r.choice(['&&', '||'])} "
                    f"{self._bool(ctx, depth - 1)})")
        return f"(!{self._bool(ctx, depth - 1)})"

    # -- the test ------------------------------------------------------------------------------
    def _packet(self) -> bytes:
        r = self.r
        fields = []
        for n, t in self.h0.fields:
            if n == self.sel_name and r.random() < 0.8:
                fields.append((r.choice(self.sel_values), t.w))
            else:
                fields.append((r.randrange(1 << t.w), t.w))
        bits = _pack(fields)
        extra = bytes(r.randrange(256) for _ in range(r.randint(0, 24)))
        for _ in range(r.randint(0, self.stack_size)):      # stack elements ending the loop
            vals = []
            for n, t in self.h2.fields:
                if self.h2_loop and n == self.h2_loop[0]:
                    vals.append((0 if r.random() < 0.6 else r.randrange(1 << t.w), t.w))
                else:
                    vals.append((r.randrange(1 << t.w), t.w))
            extra = _pack(vals) + extra
        h1 = _pack([(r.randrange(1 << t.w), t.w) for _, t in self.h1.fields])
        data = bits + h1 + extra
        if r.random() < 0.1:
            data = data[:r.randint(0, len(data))]
        return data

    def _stf(self) -> str:
        r = self.r
        packets = [self._packet() for _ in range(r.randint(3, 6))]
        lines = []
        for tname, keys in self.table_keys.items():
            for _ in range(r.randint(0, 3)):
                a, params = r.choice(self.table_acts[tname])
                ks = []
                prio = ""
                for n, kind, t in keys:
                    v = r.randrange(1 << t.w) if not t.is_bool else r.randint(0, 1)
                    if r.random() < 0.5 and n.startswith("hdr.h0."):
                        v = _field_value(packets[0], self.h0, n.split(".")[-1])
                    if kind == "ternary":
                        m = r.randrange(1 << t.w)
                        ks.append(f"{n}:{v & m:#x}&&&{m:#x}")
                        prio = f" {r.randint(1, 20)}"
                    elif kind == "lpm":       # as BMv2 counts it: from the top of the bytes
                        pad = -t.w % 8
                        plen = r.choice([0, r.randint(pad + 1, t.w)]) if t.w > pad else 0
                        ks.append(f"{n}:{v:#x}/{plen}")
                    else:
                        ks.append(f"{n}:{v:#x}")
                args = ", ".join(f"{p}:{r.randrange(1 << t.w):#x}" for p, t in params)
                lines.append(f"add {tname}{prio} {' '.join(ks)} {a}({args})")
        if self.copies:
            lines += ["mc_mgrp_create 1", f"mc_node_create {r.randint(0, 9)} 2 3",
                      "mc_node_associate 1 0", f"mirroring_add 5 {r.randint(4, 6)}"]
        for data in packets:
            lines.append(f"packet {r.randint(0, 3)} {data.hex()}")
        return "\n".join(lines) + "\n"


def _indent(stmts: list[str], n: int) -> str:
    pad = " " * n
    return "".join(pad + line + "\n" for s in stmts for line in s.splitlines())


def _declares(stmt: str) -> bool:
    """Whether a top-level statement declares a local (``bit<8> v3 = …;``)."""
    return stmt.startswith(("bit<", "int<", "bool "))


def _pack(fields: list[tuple[int, int]]) -> bytes:
    v, bits = 0, 0
    for x, w in fields:
        v, bits = (v << w) | (x & ((1 << w) - 1)), bits + w
    return v.to_bytes(bits // 8, "big") if bits else b""


def _field_value(data: bytes, h: _Hdr, name: str) -> int:
    total = h.bits
    v = int.from_bytes(data[:total // 8].ljust(total // 8, b"\0"), "big")
    off = total
    for n, t in h.fields:
        off -= t.w
        if n == name:
            return (v >> off) & ((1 << t.w) - 1)
    return 0


def generate(seed: int, *, copies: bool | None = None) -> GenProgram:
    """The program and STF test of *seed* (see the module docstring).  *copies*: the STF
    sets up the multicast group and clone session the program may use (default: for one
    seed in four).  Without them, no packet has copies: BMv2 gives each copy header
    storage from a pool, whose invalid headers hold some earlier packet's values,
    which one depending on its threads' timing — a program reading them cannot be
    compared."""
    g = _Gen(seed)
    g.copies = seed % 4 == 3 if copies is None else copies
    return g.program()
