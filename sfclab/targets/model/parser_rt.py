"""Parsers and deparsers: ``extract``, ``lookahead``, ``advance``, ``verify``,
``select`` and ``emit``, with BMv2's error behaviour.

A parser error (``PacketTooShort``, ``StackOutOfBounds``, ``NoMatch`` when no
``select`` case matches, a failed ``verify``) stops parsing: headers extracted
before it stay valid, the bytes not parsed become the payload, and the packet
goes on to ingress with ``standard_metadata.parser_error`` set — v1model does
not drop it.  An explicit ``transition reject`` ends parsing like ``accept``
with no error, as p4c's BMv2 back end compiles it.
"""

from __future__ import annotations

from collections.abc import Callable

from ...p4 import ast as A
from ...p4.printer import expr_p4
from .assign import fused
from .control import Compiler, PacketIO, _apply_sites, seq
from .expr import CE, NOCONST, DynHeader, Scope
from .storage import HeaderRef, ScalarRef, StackRef, StructRef
from .types import Bits, BoolT, EnumT, HeaderT, UnionT
from .varbit import VarbitError, varbit_codec

__all__ = ["ParserError", "PipelineCompiler", "MAX_PARSER_STATES", "packed"]

#: States a parser may visit for one packet before ``ParserTimeout``.
MAX_PARSER_STATES = 1000


class ParserReject(Exception):
    """``transition reject`` in a sub-parser: the whole parse ends there."""


class ParserError(Exception):
    """Parsing stopped with a P4 ``error`` (its name in ``code``)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _field_codec(t: HeaderT):
    """``(unpack(n) -> list, pack(values) -> int)`` for header type *t*.

    Both are generated once per header type as straight-line lambdas (no loop
    per field); stored values are always in range, so only signed fields are
    masked when packed."""
    off = t.nbits
    un, pk = [], []
    env: dict = {}
    for i, (_, ft) in enumerate(t.fields):
        w = ft.width if isinstance(ft, Bits) else 1 if isinstance(ft, BoolT) else ft.underlying.width
        off -= w
        m = (1 << w) - 1
        x = f"(n >> {off}) & {m}" if off else f"n & {m}"
        if isinstance(ft, BoolT):
            un.append(f"bool({x})")
            pk.append(f"(int(v[{i}]) << {off})")
        elif isinstance(ft, Bits) and ft.signed:
            h = 1 << (w - 1)
            un.append(f"((({x}) + {h}) & {m}) - {h}")
            pk.append(f"((v[{i}] & {m}) << {off})")
        else:
            un.append(x)
            pk.append(f"(v[{i}] << {off})" if off else f"v[{i}]")
    unpack = eval(f"lambda n: [{', '.join(un)}]", env)          # noqa: S307 - generated here
    pack = eval(f"lambda v: {' | '.join(pk) or '0'}", env)      # noqa: S307
    return unpack, pack


def packed(p, b0: int, cur: list, pack: Callable, nb: int) -> bytes:
    """The bytes of header values *cur* (validity slot *b0*): the bytes its parser
    extracted when the values are still those (``p.ext``; packing them again gives the
    same bytes), else packed."""
    ext = p.ext
    if ext is not None:
        e = ext.get(b0)
        if e is not None and e[0] == cur:
            return e[1]
    return pack(cur).to_bytes(nb, "big")


class PipelineCompiler(Compiler):
    """:class:`~.control.Compiler` plus the packet_in / packet_out methods."""

    # -- parser ----------------------------------------------------------------------------
    def compile_parser(self, decl: A.ParserDecl, bindings: dict) -> Callable:
        run = self._parser_run(decl, (decl.name,), bindings)
        name = decl.name
        on_reject, on_error = self.parser_outcomes()

        def parse(p):
            tr = p.tr
            tr.append(("parser_start", name))
            try:
                if run(p) == "reject":
                    raise ParserReject()
            except ParserReject:
                on_reject(tr)
            except ParserError as e:
                p.parser_error = e.code
                tr.append(("note", on_error(e.code)))
            tr.append(("parser_done", name, p.parser_error))
        return parse

    def _parser_run(self, decl: A.ParserDecl, path: tuple[str, ...], bindings: dict) -> Callable:
        """``run(p) -> "accept" | "reject"``: the parser's locals and states (errors raise
        :class:`ParserError`)."""
        sc = Scope(self.global_scope, dict(bindings))
        self._sites = _apply_sites(decl)
        init = seq(self.compile_locals(decl.locals, sc, path))
        states: dict[str, Callable] = {}
        for st in decl.states:
            states[st.name] = self._state(st, sc)
        if "start" not in states:
            raise self.error(f"parser {decl.name} has no start state", decl)

        def run(p):
            init(p)
            state = "start"
            n = 0
            while state != "accept" and state != "reject":
                n += 1
                if n > MAX_PARSER_STATES:
                    raise ParserError("ParserTimeout")
                state = states[state](p)
            return state
        return run

    def instance_body(self, inst, bindings: dict) -> Callable:
        if not isinstance(inst.decl, A.ParserDecl):
            return super().instance_body(inst, bindings)
        run = self._parser_run(inst.decl, inst.path, bindings)
        name = ".".join(inst.path)

        def subparser(p):                # p4c inlines it: a reject rejects the whole parse
            p.tr.append(("parser_state", f"{name} (sub-parser)"))
            if run(p) == "reject":
                raise ParserReject()
        return subparser

    def parser_outcomes(self) -> tuple[Callable, Callable]:
        """``(on_reject(tr), on_error(code) -> note)`` for the parser being compiled:
        BMv2's (``transition reject`` ends parsing as ``accept`` does, and an error lets
        the packet go on); an architecture with other rules overrides this."""
        def on_reject(tr):
            tr.append(("note", "transition reject: BMv2 (p4c's v1model back end) ends parsing "
                               "as if accepted, with no error"))

        def on_error(code):
            return (f"parser error {code}: parsing stopped, the packet goes on to ingress "
                    f"(v1model does not drop it)")
        return on_reject, on_error

    def _state(self, st: A.ParserState, sc: Scope) -> Callable:
        """A parser state as one generated function: its trace event, its statements in
        order, then its transition (a one-key select of exact values is a dict lookup,
        written inline)."""
        inner = sc.child()
        ops = fused([self.stmt(s, inner, f"parser state {st.name}") for s in st.stmts])
        env: dict = {"EVENT": ("parser_state", st.name), "ParserError": ParserError}
        lines = ["def state(p):", "    p.tr.append(EVENT)"]
        for i, op in enumerate(ops):
            env[f"O{i}"] = op
            lines.append(f"    O{i}(p)")
        if isinstance(st.transition, str):
            env["NXT"] = st.transition
            lines.append("    return NXT")
        else:
            one = self._select_one(st.transition, inner)
            if one is None:
                env["SEL"] = self._select(st.transition, inner)
                lines.append("    return SEL(p)")
            else:
                key, table, default = one
                env["TABLE"], env["DEFAULT"] = table, default
                if key.slot is not None:
                    lines.append(f"    x = p.v[{key.slot}]")
                else:
                    env["KEY"] = key.fn
                    lines.append("    x = KEY(p)")
                lines += ["    st = TABLE.get(int(x) if x.__class__ is bool else x, DEFAULT)",
                          "    if st is None:",
                          "        raise ParserError('NoMatch')",
                          "    return st"]
        exec("\n".join(lines) + "\n", env)                   # noqa: S102 - generated here
        return env["state"]

    def _select_one(self, s: A.Select, sc: Scope) -> tuple[CE, dict, str | None] | None:
        """``(key, value -> state, default state)`` for a select on one key whose cases are
        exact values (or default); None for any other select."""
        if len(s.exprs) != 1:
            return None
        key = self.expr(s.exprs[0], sc)
        t = key.t
        w = (t.width if isinstance(t, Bits) else 1 if isinstance(t, BoolT) else
             t.underlying.width if isinstance(t, EnumT) and t.underlying else 0)
        full = (1 << w) - 1 if w else -1
        table: dict = {}
        for c in s.cases:
            ks = c.keys[0]
            if isinstance(ks, (A.Default, A.DontCare)):
                return key, table, c.state
            if isinstance(ks, (A.Mask, A.Range)) or not w:
                return None
            if isinstance(ks, A.Name) and getattr(sc.get(ks.name), "kind", "") == "value_set":
                return None
            v = self.expr(ks, sc, t if isinstance(t, Bits) else None)
            if v.const is NOCONST:
                return None                 # _select says what is wrong
            val = v.const if not isinstance(v.const, bool) else int(v.const)
            table.setdefault(val & full if isinstance(val, int) else val, c.state)
        return key, table, None

    def _select(self, s: A.Select, sc: Scope) -> Callable:
        keys = [self.expr(e, sc) for e in s.exprs]
        widths = []
        for k in keys:
            t = k.t
            widths.append(t.width if isinstance(t, Bits) else 1 if isinstance(t, BoolT) else
                          t.underlying.width if isinstance(t, EnumT) and t.underlying else 0)
        cases = []
        for c in s.cases:
            tests = []
            for ks, k, w in zip(c.keys, keys, widths):
                full = (1 << w) - 1 if w else -1
                if isinstance(ks, (A.Default, A.DontCare)):
                    tests.append(None)
                elif isinstance(ks, A.Mask):
                    m = self.const_int(ks.mask, sc) & full
                    tests.append((0, self.const_int(ks.value, sc) & m, m))
                elif isinstance(ks, A.Range):
                    tests.append((1, self.const_int(ks.lo, sc), self.const_int(ks.hi, sc)))
                elif isinstance(ks, A.Name) and getattr(sc.get(ks.name), "kind", "") == "value_set":
                    tests.append((2, sc.get(ks.name).state, None))   # its members, as set now
                else:
                    v = self.expr(ks, sc, k.t if isinstance(k.t, Bits) else None)
                    if v.const is NOCONST:
                        raise self.error(f"select case {expr_p4(ks)} is not a constant", ks)
                    val = v.const if not isinstance(v.const, bool) else int(v.const)
                    tests.append((0, val & full if isinstance(val, int) else val, full))
            cases.append((tuple(tests), c.state))
        readers = [k.fn for k in keys]
        if len(readers) == 1 and all(t[0] is None or t[0][0] == 0 and t[0][2] == (1 << widths[0]) - 1
                                     for t, _ in cases):
            table: dict = {}
            default = None
            for (t,), st in cases:
                if t is None:
                    default = st if default is None else default
                    break
                table.setdefault(t[1], st)
            r0 = readers[0]

            def sel1(p):
                x = r0(p)
                st = table.get(int(x) if isinstance(x, bool) else x, default)
                if st is None:
                    raise ParserError("NoMatch")
                return st
            return sel1

        def sel(p):
            vals = [r(p) for r in readers]
            for tests, st in cases:
                for x, t in zip(vals, tests):
                    if t is None:
                        continue
                    if isinstance(x, bool):
                        x = int(x)
                    if t[0] == 0:
                        if isinstance(x, int) and t[2] != -1:
                            if x & t[2] != t[1]:
                                break
                        elif x != t[1]:
                            break
                    elif t[0] == 2:
                        if not any(x & m == v for v, m in t[1]):
                            break
                    elif not t[1] <= x <= t[2]:
                        break
                else:
                    return st
            raise ParserError("NoMatch")
        return sel

    def verify(self, e: A.Call, sc: Scope) -> Callable:
        cond = self.expr(e.args[0], sc).fn
        err = self.expr(e.args[1], sc).fn

        def verify(p):
            if not cond(p):
                raise ParserError(err(p))
        return verify

    def packet_method(self, io: PacketIO, m: str, e: A.Call, sc: Scope) -> Callable:
        if io.kind == "in" and m == "extract":
            if isinstance(e.args[0], A.DontCare):
                return self._skip(e)
            nbits = self.expr(e.args[1], sc).fn if len(e.args) == 2 else None
            return self._extract(self.path(e.args[0], sc), e, nbits)
        if io.kind == "in" and m == "advance":
            n = self.expr(e.args[0], sc).fn

            def advance(p):
                nbytes = n(p) // 8
                if len(p.data) - p.pos < nbytes:
                    raise ParserError("PacketTooShort")
                p.pos += nbytes
            return advance
        if io.kind == "out" and m == "emit":
            return self._emit(self.path(e.args[0], sc), e)
        raise self.error(f"packet.{m} is not supported by the model", e)

    def _skip(self, e: A.Call) -> Callable:
        """``extract<T>(_)``: the bytes of a T, read and thrown away."""
        if not e.type_args:
            raise self.error("extract(_) needs the header type: extract<T>(_)", e)
        t = self.env.resolve(e.type_args[0])
        if not isinstance(t, HeaderT) or t.nbits % 8 or t.varbit is not None:
            raise self.error(f"extract<{expr_p4(e.type_args[0])}>(_) needs a header of whole "
                             f"bytes", e)
        nb = t.nbytes

        def skip(p):
            if len(p.data) - p.pos < nb:
                raise ParserError("PacketTooShort")
            p.pos += nb
            p.tr.append(("extract", f"_ ({t.name})"))
        return skip

    def _extract_union_next(self, dh: DynHeader, member: str, e: A.Call) -> Callable:
        """``extract(stack.next.member)`` on a stack of header unions."""
        st = dh.stack
        union = st.type.elem
        offsets, off = {}, 0
        for name, h in union.fields:
            offsets[name] = (off, h)
            off += len(h.fields) + 1
        if member not in offsets:
            raise self.error(f"{union.name} has no member {member!r}", e)
        moff, t = offsets[member]
        others = [o for n, (o, _) in offsets.items() if n != member]
        if t.nbits % 8 or t.varbit is not None:
            raise self.error(f"header {t.name} is not a whole number of bytes", e)
        unpack, _ = _field_codec(t)
        nb, k = t.nbytes, len(t.fields)
        nslot, size, stride, first = st.base, st.type.size, st.stride, st.base + 1
        short = st.path.split(".", 1)[-1]

        def extract_union(p):
            v = p.v
            i = v[nslot]
            if i >= size:
                raise ParserError("StackOutOfBounds")
            pos, data = p.pos, p.data
            if len(data) - pos < nb:
                raise ParserError("PacketTooShort")
            b = first + i * stride
            v[b + moff + 1:b + moff + 1 + k] = unpack(int.from_bytes(data[pos:pos + nb], "big"))
            v[b + moff] = True
            for o in others:
                v[b + o] = False
            v[nslot] = i + 1
            p.pos = pos + nb
            p.tr.append(("extract", f"{short}[{i}].{member}"))
        return extract_union

    def _extract(self, r, e: A.Call, nbits=None) -> Callable:
        if (isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], DynHeader)
                and r[0].what == "next" and isinstance(r[0].stack.type.elem, UnionT)):
            return self._extract_union_next(r[0], r[1], e)
        if isinstance(r, HeaderRef):
            t, b0, path, dyn = r.type, r.base, r.path, None
        elif isinstance(r, DynHeader) and r.what == "next":
            t, b0, path, dyn = r.stack.type.elem, None, r.stack.path, r.stack
        else:
            raise self.error(f"cannot extract into {expr_p4(e.args[0])}", e)
        if (t.varbit is None) != (nbits is None):
            raise self.error(f"extract({expr_p4(e.args[0])}) takes "
                             + ("the varbit field's length in bits as its second argument"
                                if nbits is None else "one argument: the header has no varbit "
                                                      "field"), e)
        if nbits is not None:
            return self._extract_varbit(r, t, nbits, path, dyn)
        siblings = r.siblings if isinstance(r, HeaderRef) else ()
        if t.nbits % 8:
            raise self.error(f"header {t.name} is {t.nbits} bits, not a whole number of bytes", e)
        nb, k = t.nbytes, len(t.fields)
        unpack, _ = _field_codec(t)
        short = path.split(".", 1)[-1]
        if dyn is None:
            lo, hi, event, tname = b0 + 1, b0 + 1 + k, ("extract", short), t.name
            if not siblings:
                def extract(p):
                    pos = p.pos
                    end = pos + nb
                    data = p.data
                    if len(data) < end:
                        raise ParserError("PacketTooShort")
                    raw = data[pos:end]
                    memo = p.memo
                    if memo is None:
                        vals = unpack(int.from_bytes(raw, "big"))
                    else:                       # the same bytes unpack to the same values
                        key = (tname, raw)
                        vals = memo.get(key)
                        if vals is None:
                            vals = memo[key] = unpack(int.from_bytes(raw, "big"))
                        p.ext[b0] = (vals, raw)
                    v = p.v
                    v[lo:hi] = vals             # a copy: vals itself is never changed
                    v[b0] = True
                    p.pos = end
                    p.tr.append(event)
                return extract

            def extract_member(p):                  # a header union's member
                pos = p.pos
                data = p.data
                if len(data) - pos < nb:
                    raise ParserError("PacketTooShort")
                v = p.v
                v[lo:hi] = unpack(int.from_bytes(data[pos:pos + nb], "big"))
                v[b0] = True
                for s in siblings:
                    v[s] = False
                p.pos = pos + nb
                p.tr.append(event)
            return extract_member
        nslot, size, stride, first = dyn.base, dyn.type.size, dyn.stride, dyn.base + 1

        def extract_next(p):
            v = p.v
            i = v[nslot]
            if i >= size:
                raise ParserError("StackOutOfBounds")
            pos = p.pos
            data = p.data
            if len(data) - pos < nb:
                raise ParserError("PacketTooShort")
            b = first + i * stride
            v[b + 1:b + 1 + k] = unpack(int.from_bytes(data[pos:pos + nb], "big"))
            v[b] = True
            v[nslot] = i + 1
            p.pos = pos + nb
            p.tr.append(("extract", f"{short}[{i}]"))
        return extract_next

    def _extract_varbit(self, r, t: HeaderT, nbits, path: str, dyn) -> Callable:
        read, _ = varbit_codec(t)
        k = len(t.fields)
        short = path.split(".", 1)[-1]
        siblings = r.siblings if isinstance(r, HeaderRef) else ()

        def into(p, b, label):
            try:
                values, used = read(p.data, p.pos, nbits(p))
            except VarbitError as err:
                raise ParserError(err.code) from None
            v = p.v
            v[b + 1:b + 1 + k] = values
            v[b] = True
            for s in siblings:
                v[s] = False
            p.pos += used
            p.tr.append(("extract", label))
        if dyn is None:
            b0 = r.base
            return lambda p: into(p, b0, short)
        nslot, size, stride, first = dyn.base, dyn.type.size, dyn.stride, dyn.base + 1

        def extract_next(p):
            i = p.v[nslot]
            if i >= size:
                raise ParserError("StackOutOfBounds")
            into(p, first + i * stride, f"{short}[{i}]")
            p.v[nslot] = i + 1
        return extract_next

    def lookahead(self, e: A.Call) -> CE:
        if not e.type_args:
            raise self.error("lookahead needs a type argument", e)
        t = self.env.resolve(e.type_args[0])
        if isinstance(t, HeaderT) and t.varbit is None and not t.nbits % 8:
            return self._lookahead_header(t)
        if not isinstance(t, Bits):
            raise self.error("the model supports lookahead<T>() of a bit<W> or of a header "
                             "of whole bytes", e)
        w = t.width
        nb = (w + 7) // 8
        shift = nb * 8 - w
        m = t.mask

        def look(p):
            if len(p.data) - p.pos < nb:
                raise ParserError("PacketTooShort")
            return (int.from_bytes(p.data[p.pos:p.pos + nb], "big") >> shift) & m
        return CE(look, t)

    def _lookahead_header(self, t: HeaderT) -> CE:
        """``lookahead<H>()``: the next bytes as a valid header H (the parser stays put)."""
        self._tmp += 1
        ref = self.layout.build(t, f"$lookahead#{self._tmp}")
        unpack, _ = _field_codec(t)
        nb, k, b0 = t.nbytes, len(t.fields), ref.base

        def fill(p):
            if len(p.data) - p.pos < nb:
                raise ParserError("PacketTooShort")
            v = p.v
            v[b0 + 1:b0 + 1 + k] = unpack(int.from_bytes(p.data[p.pos:p.pos + nb], "big"))
            v[b0] = True
        return CE(None, t, ref=ref, pre=fill)

    def call_value(self, e, sc):
        if isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "lookahead":
            base = self.path(e.func.expr, sc)
            if isinstance(base, PacketIO):
                return self.lookahead(e)
        return super().call_value(e, sc)

    # -- deparser --------------------------------------------------------------------------
    def _emit(self, r, e: A.Call) -> Callable:
        if isinstance(r, HeaderRef) and r.type.varbit is not None:
            _, write = varbit_codec(r.type)
            b0, k = r.base, len(r.type.fields)
            short = r.path.split(".", 1)[-1]

            def emit_varbit(p):
                v = p.v
                if v[b0]:
                    p.emitted.append(write(v[b0 + 1:b0 + 1 + k]))
                    p.tr.append(("deparser_emit", short))
            return emit_varbit
        if isinstance(r, HeaderRef):
            t, b0 = r.type, r.base
            if t.nbits % 8:
                raise self.error(f"header {t.name} is not a whole number of bytes", e)
            nb, k = t.nbytes, len(t.fields)
            _, pack = _field_codec(t)
            short = r.path.split(".", 1)[-1]

            lo, hi, event = b0 + 1, b0 + 1 + k, ("deparser_emit", short)

            def emit(p):
                v = p.v
                if v[b0]:
                    p.emitted.append(packed(p, b0, v[lo:hi], pack, nb))
                    p.tr.append(event)
            return emit
        if isinstance(r, StackRef):
            return seq([self._emit(x, e) for x in r.elems])
        if isinstance(r, StructRef):
            return seq([self._emit(x, e) for x in r.members.values()
                        if not isinstance(x, ScalarRef)])
        raise self.error(f"cannot emit {expr_p4(e.args[0])}", e)

