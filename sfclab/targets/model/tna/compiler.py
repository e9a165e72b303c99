"""TNA's blocks and externs compiled to closures: the v1model compiler with
Tofino's externs, functions and parser errors in place of v1model's.

:class:`TnaCompiler` extends :class:`~sfclab.targets.model.parser_rt.PipelineCompiler`
(expressions, statements, tables, parsers, deparsers are P4's, the same on both
architectures) with each extern of ``tofino1_base.p4`` that sfclab's NFs use, as
``tna.p4`` declares it:

* ``Register<T, I>(size[, initial])`` and ``RegisterAction<T, I, U>(reg)`` whose
  ``apply(inout T value[, out U rv])`` runs on the cell ``execute(index)``
  addresses (the index taken modulo the size, as the chip keeps the address's
  low bits); ``Register.read`` / ``write`` too;
* ``Counter<W, I>(size, type).count(index[, adjust])``, ``DirectCounter<W>(type)``
  (its table counts every hit), ``Meter<I>(size, type[, red, yellow, green])`` and
  ``DirectMeter(type[, …])`` with TNA's colours (GREEN 0, YELLOW 1, RED 3, or the
  ones given), two-rate three-colour markers as the v1model model's;
* ``Hash<W>(algo).get(data)`` (:data:`~.externs.HASH_ALGORITHMS`), ``Random<W>().get()``;
* ``Checksum()``: ``add`` / ``subtract`` / ``subtract_all_and_deposit`` / ``verify`` /
  ``get`` in a parser, ``update(data[, zeros_as_ones])`` in a deparser, ones'-complement
  sums over the fields' 16-bit words (a field of an invalid header counts as zeros);
* in the ingress deparser ``Digest<T>.pack``, ``Mirror.emit`` and ``Resubmit.emit``
  (the egress deparser's ``Mirror.emit`` too), recorded for the traffic manager;
* ``min`` / ``max``, ``sizeInBits`` / ``sizeInBytes``, and ``port_metadata_unpack``
  (a port's metadata: zeros, the model configures none).

Everything else of ``tna.p4`` (``ActionSelector``, ``Lpf``, ``Wred``,
``DirectRegister``, ``MathUnit``, ``ParserCounter``, a ``CRCPolynomial`` hash, a
colour-aware meter …) and v1model's externs raise :class:`ModelCompileError` at
load, with the line.

A parser error (``PacketTooShort``, ``NoMatch``, a failed ``verify``, ``transition
reject``) sets ``parser_err`` (``PARSER_ERROR_PARTIAL_HDR``, ``PARSER_ERROR_NO_MATCH``);
Tofino drops the packet unless the program reads its gress's ``parser_err``, in which
case it goes on with the headers extracted so far (``bf-p4c`` then writes the error
to a PHV container: ``parser_error:`` in the ``.bfa``).
"""

from __future__ import annotations

from collections.abc import Callable

from ....p4 import ast as A
from ....p4.printer import expr_p4
from ..assign import seq
from ..calls import ExternObj, _width
from ..expr import CE, Scope
from ..externs import CounterArray, MeterArray, RegisterArray
from ..control import PacketIO
from ..parser_rt import ParserError, PipelineCompiler, _field_codec
from ..storage import HeaderRef, ScalarRef, StackRef, StructRef, scalars
from ..types import BOOL, Bits, BoolT, HeaderT, StructT
from .externs import PerPipe, sum16, tna_hash

__all__ = ["TnaCompiler", "RegisterActionObj", "PARSER_ERR_FLAGS", "TNA_EXTERNS", "reads_parser_err"]

#: A P4 error's ``parser_err`` flag (``tofino1_base.p4``'s ``PARSER_ERROR_*``).
PARSER_ERR_FLAGS = {"NoMatch": 0x1, "PacketTooShort": 0x2, "HeaderTooShort": 0x2,
                    "StackOutOfBounds": 0x4, "ParserTimeout": 0x8}

#: The externs the model runs (the others of tna.p4 are refused at load).
TNA_EXTERNS = ("Register", "RegisterAction", "Counter", "DirectCounter", "Meter", "DirectMeter",
               "Hash", "Random", "Checksum", "Digest", "Mirror", "Resubmit")

_V1MODEL_FUNCTIONS = {"mark_to_drop": "set ig_dprsr_md.drop_ctl = 1 (or eg_dprsr_md.drop_ctl)",
                      "recirculate": "send the packet to its pipe's recirculation port "
                                     "(68 + 128 * pipe) with ig_tm_md.ucast_egress_port",
                      "resubmit": "set ig_dprsr_md.resubmit_type and call Resubmit.emit() in "
                                  "the ingress deparser",
                      "clone": "use a Mirror in the deparser", "clone3": "use a Mirror in the "
                                                                         "deparser",
                      "digest": "use a Digest in the ingress deparser",
                      "hash": "use a Hash<W> extern", "random": "use a Random<W> extern",
                      "update_checksum": "use a Checksum in the deparser",
                      "verify_checksum": "use a Checksum in the parser"}


#: sum16 of field lists already summed, by (value, nbits): every gress of every pass sums
#: the same field lists again (the parsers' checksum subtracts, the deparsers' updates),
#: and the packets of a flow carry the same ones.  A pure function's results: emptied when
#: full.
_SUMS: dict[tuple[int, int], int] = {}
_SUMS_LIMIT = 8192
#: The most packed headers a deparser's emit of one header remembers (then it starts again).
_PACKED_LIMIT = 4096


def _packet_sum16(p, bits: tuple[int, int]) -> int:
    """``sum16(*bits)``, remembered (:data:`_SUMS`)."""
    w = _SUMS.get(bits)
    if w is None:
        if len(_SUMS) >= _SUMS_LIMIT:
            _SUMS.clear()
        w = _SUMS[bits] = sum16(*bits)
    return w

class RegisterActionObj:
    """A ``RegisterAction``: its register, the slots of ``value`` and ``rv``, and its body."""

    __slots__ = ("reg", "value", "rv", "body", "name")

    def __init__(self, reg: PerPipe, value: ScalarRef, rv: ScalarRef | None,
                 body: Callable, name: str) -> None:
        self.reg, self.value, self.rv, self.body, self.name = reg, value, rv, body, name


def _const_name(e: A.Node) -> str | None:
    """``MeterType_t.BYTES`` -> ``BYTES`` (None for anything else)."""
    if isinstance(e, A.Member) and isinstance(e.expr, (A.TypeName, A.Name)):
        return e.name
    return None


class TnaCompiler(PipelineCompiler):
    """Compiles one ``Pipeline``'s blocks for a :class:`~.switch.TnaSwitch`.

    *npipes* is how many pipes run this pipeline (its state is kept per pipe);
    *reads_err* whether each gress's control reads ``parser_err``."""

    def __init__(self, sw, env, layout, prog: A.Program, *, npipes: int) -> None:
        super().__init__(sw, env, layout, prog)
        self.npipes = npipes
        self._scope: Scope | None = None
        self.meter_colors: dict[str, tuple[int, int, int]] = {}     # direct meters' colours
        self.gress = "ingress"
        self.keeps_err = False          # the gress being compiled reads parser_err

    # -- declarations ------------------------------------------------------------------------
    def compile_locals(self, decls, sc: Scope, path: tuple[str, ...]) -> list[Callable]:
        outer, self._scope = self._scope, sc
        try:
            return super().compile_locals(decls, sc, path)
        finally:
            self._scope = outer

    def make_extern(self, inst: A.Instance, qname: str) -> ExternObj:
        t = inst.type
        kind = t.name if isinstance(t, A.NamedType) else ""
        targs = [self.env.resolve(x) for x in t.args] if isinstance(t, A.NamedType) else []
        make = getattr(self, f"_new_{kind}", None)
        if make is None:
            hint = ("the model runs these TNA externs: " + ", ".join(TNA_EXTERNS))
            if kind in ("register", "counter", "meter", "direct_counter", "direct_meter"):
                hint = f"{kind} is v1model's; a TNA program uses {kind.title().replace('_', '')}"
            err = self.error(f"extern {kind} ({qname}) is not modelled for TNA", inst)
            err.hint = hint
            raise err
        if inst.body is not None and kind != "RegisterAction":
            raise self.error(f"{kind} {qname} cannot have an initializer block", inst)
        ext = ExternObj(kind, qname, make(inst, qname, targs), tuple(targs))
        if kind == "DirectCounter":
            ext.kind = "direct_counter"         # the table compiler counts its hits
        elif kind == "DirectMeter":
            ext.kind = "direct_meter"
        self.sw.externs[qname] = ext
        return ext

    def _args(self, inst: A.Instance, lo: int, hi: int) -> list:
        if not lo <= len(inst.args) <= hi:
            raise self.error(f"{inst.type.name} {inst.name} takes {lo}..{hi} constructor "
                             f"arguments, not {len(inst.args)}", inst)
        return list(inst.args)

    def _size(self, e: A.Node) -> int:
        n = self.const_int(e, self.global_scope)
        if n <= 0:
            raise self.error(f"size {n} is not positive", e)
        return n

    def _per_pipe(self, make) -> PerPipe:
        return PerPipe(make, self.npipes)

    def _new_Register(self, inst, qname, targs):
        args = self._args(inst, 1, 2)
        t = targs[0] if targs else Bits(32)
        if not isinstance(t, (Bits, BoolT)):
            raise self.error(f"Register {qname}: cells of type {getattr(t, 'name', t)} are not "
                             "modelled (bit<W> or int<W> cells only)", inst)
        size = self._size(args[0])
        init = self.const_int(args[1], self.global_scope) if len(args) > 1 else 0
        w, signed = _width(t), isinstance(t, Bits) and t.signed

        def make():
            r = RegisterArray(qname, size, w, signed)
            if init:
                r.cells[:] = [init & ((1 << w) - 1) if not signed else init] * size
            return r
        return self._per_pipe(make)

    def _new_RegisterAction(self, inst, qname, targs):
        (reg_e,) = self._args(inst, 1, 1)
        reg = self.path(reg_e, self._scope) if self._scope is not None else None
        if not (isinstance(reg, ExternObj) and reg.kind == "Register"):
            raise self.error(f"RegisterAction {qname}: {expr_p4(reg_e)} is not a Register "
                             f"declared before it", inst)
        fns = [f for f in (inst.body or ()) if f.name == "apply"]
        if len(fns) != 1 or len(inst.body) != 1:
            raise self.error(f"RegisterAction {qname} needs one apply function (the model runs "
                             f"no other)", inst)
        fn = fns[0]
        if not 1 <= len(fn.params) <= 2:
            raise self.error(f"RegisterAction {qname}: apply takes (inout T value[, out U rv])",
                             fn)
        inner = Scope(self._scope)
        refs = []
        for prm in fn.params:
            ref = self.layout.build(self.env.resolve(prm.type), f"{qname}.{prm.name}")
            if not isinstance(ref, ScalarRef):
                raise self.error(f"RegisterAction {qname}: {prm.name} must be a bit<W> value",
                                 prm)
            inner.names[prm.name] = ref
            refs.append(ref)
        body = self.block(fn.body.stmts, inner, f"RegisterAction {qname}")
        return RegisterActionObj(reg.state, refs[0], refs[1] if len(refs) > 1 else None, body,
                                 qname)

    def _kind(self, e: A.Node, allowed: tuple[str, ...]) -> str:
        k = _const_name(e)
        if k not in allowed:
            raise self.error(f"{expr_p4(e)} is not one of {', '.join(allowed)}", e)
        return k.lower()

    def _new_Counter(self, inst, qname, targs):
        size_e, kind_e = self._args(inst, 2, 2)
        size = self._size(size_e)
        kind = self._kind(kind_e, ("PACKETS", "BYTES", "PACKETS_AND_BYTES"))
        return self._per_pipe(lambda: CounterArray(qname, size, kind))

    def _new_DirectCounter(self, inst, qname, targs):
        (kind_e,) = self._args(inst, 1, 1)
        return self._kind(kind_e, ("PACKETS", "BYTES", "PACKETS_AND_BYTES"))

    def _colors(self, inst, args: list) -> tuple[int, int, int]:
        """(green, yellow, red) a meter reports: TNA's 0, 1, 3 unless the constructor says."""
        if len(args) == 3:
            red, yellow, green = (self.const_int(a, self.global_scope) for a in args)
            return green, yellow, red
        return 0, 1, 3

    def _new_Meter(self, inst, qname, targs):
        args = self._args(inst, 2, 5)
        if len(args) not in (2, 5):
            raise self.error(f"Meter {qname} takes (size, type) or (size, type, red, yellow, "
                             f"green)", inst)
        size = self._size(args[0])
        kind = self._kind(args[1], ("PACKETS", "BYTES"))
        colors = self._colors(inst, args[2:])
        arrays = self._per_pipe(lambda: MeterArray(qname, size, kind))
        arrays.colors = colors
        return arrays

    def _new_DirectMeter(self, inst, qname, targs):
        args = self._args(inst, 1, 4)
        if len(args) not in (1, 4):
            raise self.error(f"DirectMeter {qname} takes (type) or (type, red, yellow, green)",
                             inst)
        self.meter_colors[qname] = self._colors(inst, args[1:])
        return self._kind(args[0], ("PACKETS", "BYTES"))

    def _new_Hash(self, inst, qname, targs):
        args = self._args(inst, 1, 2)
        if len(args) == 2:
            raise self.error(f"Hash {qname}: a CRCPolynomial (a custom CRC) is not modelled",
                             inst)
        algo = _const_name(args[0])
        if algo == "RANDOM":
            return ("RANDOM", None)
        try:
            return (algo, tna_hash(algo or expr_p4(args[0])))
        except Exception as e:                       # the algorithm, located
            raise self.error(f"Hash {qname}: {e}", inst) from None

    def _new_Random(self, inst, qname, targs):
        self._args(inst, 0, 0)
        return None

    def _new_Checksum(self, inst, qname, targs):
        self._args(inst, 0, 0)
        return self.layout.alloc(0, f"{qname}$sum")        # the running sum, per packet

    def _new_Digest(self, inst, qname, targs):
        self._args(inst, 0, 1)
        return None

    def _new_Mirror(self, inst, qname, targs):
        self._args(inst, 0, 1)
        return None

    def _new_Resubmit(self, inst, qname, targs):
        self._args(inst, 0, 1)
        return None

    # -- deparsers: a run of emits in one closure ---------------------------------------------
    def block(self, stmts, sc: Scope, where: str) -> Callable:
        """As :meth:`Compiler.block`, with each run of ``pkt.emit(…)`` statements (a
        deparser's body: thirty headers, twice a pass on TNA) as one closure."""
        inner = sc.child()
        fns: list = []
        run: list = []
        for s in stmts:
            hdrs = self._emitted(s, inner)
            if hdrs is not None:
                run += hdrs
                continue
            if run:
                fns.append(self._emit_run(run))
                run = []
            fns.append(self.stmt(s, inner, where))
        if run:
            fns.append(self._emit_run(run))
        return seq(fns)

    def _emitted(self, s: A.Node, sc: Scope) -> list[HeaderRef] | None:
        """The headers ``pkt.emit(x);`` emits, in order (None: *s* is something else)."""
        if not (isinstance(s, A.CallStmt) and isinstance(s.call.func, A.Member)
                and s.call.func.name == "emit" and len(s.call.args) == 1):
            return None
        io = self.path(s.call.func.expr, sc)
        if not (isinstance(io, PacketIO) and io.kind == "out"):
            return None
        out: list[HeaderRef] = []

        def walk(r) -> bool:
            if isinstance(r, HeaderRef):
                if r.type.nbits % 8:
                    return False
                out.append(r)
                return True
            if isinstance(r, StackRef):
                return all(walk(x) for x in r.elems)
            if isinstance(r, StructRef):
                return all(walk(x) for x in r.members.values() if not isinstance(x, ScalarRef))
            return False
        return out if walk(self.path(s.call.args[0], sc)) else None

    @staticmethod
    def _emit_run(hdrs: list[HeaderRef]) -> Callable:
        """``emit(a); emit(b); …`` as one generated function, a straight line per header:
        a valid header's bytes are those its parser extracted while its values are unchanged
        (packing them again gives the same bytes), else packed (remembered by the values,
        across packets: a flow's packets change their headers alike, at most
        :data:`_PACKED_LIMIT` a header); and the packet's memo learns
        what packed bytes unpack to (the next gress's parser extracts them again), for
        header types whose fields unpack to exactly the stored values (unsigned bits)."""
        env: dict = {}
        lines = ["def emit_all(p):", "    v, out, tr, ext, memo = p.v, p.emitted, p.tr, p.ext, "
                 "p.memo"]
        for i, r in enumerate(hdrs):
            _, pack = _field_codec(r.type)
            b0, end, nb = r.base, r.base + 1 + len(r.fields), r.type.nbytes
            env[f"P{i}"] = pack
            env[f"B{i}"] = {}                # values -> bytes, across packets
            env[f"E{i}"] = ("deparser_emit", r.path.split(".", 1)[-1])
            env[f"T{i}"] = r.type.name
            exact = all(isinstance(ft, Bits) and not ft.signed for _, ft in r.type.fields)
            lines += [f"    if v[{b0}]:",
                      f"        cur = v[{b0 + 1}:{end}]",
                      f"        e = ext.get({b0})",
                      "        if e is not None and e[0] == cur:",
                      "            out.append(e[1])",
                      "        else:",
                      "            k = tuple(cur)",
                      f"            raw = B{i}.get(k)",
                      "            if raw is None:",
                      f"                raw = P{i}(cur).to_bytes({nb}, 'big')",
                      f"                if len(B{i}) >= {_PACKED_LIMIT}:",
                      f"                    B{i}.clear()",
                      f"                B{i}[k] = raw",
                      "            out.append(raw)"]
            if exact:
                lines.append(f"            memo[(T{i}, raw)] = cur")
            lines.append(f"        tr.append(E{i})")
        exec("\n".join(lines) + "\n", env)                   # noqa: S102 - generated here
        return env["emit_all"]

    # -- field lists ---------------------------------------------------------------------------
    def bits_of(self, e: A.Node, sc: Scope) -> Callable:
        """A closure giving ``(value, nbits)`` of a field list, fields of invalid headers as
        zeros (their place kept: the checksum units and the hash crossbar read fixed bits).
        Generated once as one expression, a header's fields under one test of its validity
        (``((v[12] << 144 | v[13] << 128 | …) if v[10] else 0) | …``)."""
        items = self._slot_items(e, sc)
        total = sum(w for _, _, w, _ in items)
        groups: list[tuple[int | None, list[str]]] = []     # runs of one header's fields
        fns, shift = [], total
        for slot, fn, w, valid in items:
            shift -= w
            if slot is not None:
                x = f"v[{slot}]"
            else:
                fns.append(fn)
                x = f"F[{len(fns) - 1}](p)"
            term = f"({x} << {shift})" if shift else x
            if groups and valid is not None and groups[-1][0] == valid:
                groups[-1][1].append(term)
            else:
                groups.append((valid, [term]))
        terms = [" | ".join(ts) if valid is None else f"(({' | '.join(ts)}) if v[{valid}] else 0)"
                 for valid, ts in groups]
        env = {"F": tuple(fns)}
        exec(f"def bits(p):\n    v = p.v\n    return ({' | '.join(terms) or '0'}), {total}\n",
             env)                                                # noqa: S102 - generated here
        return env["bits"]

    def values_of(self, e: A.Node, sc: Scope) -> Callable:
        """A closure giving what :meth:`bits_of` of the same field list reads, as a tuple
        (each field, and each header's validity): equal tuples, equal bits."""
        items = self._slot_items(e, sc)
        reads, fns, valids = [], [], []
        for slot, fn, _, valid in items:
            if slot is not None:
                reads.append(f"v[{slot}]")
            else:
                fns.append(fn)
                reads.append(f"F[{len(fns) - 1}](p)")
            if valid is not None and valid not in valids:
                valids.append(valid)
        reads += [f"v[{valid}]" for valid in valids]
        env = {"F": tuple(fns)}
        exec(f"def values(p):\n    v = p.v\n    return ({', '.join(reads)},)\n",
             env)                                                # noqa: S102 - generated here
        return env["values"]

    def _slot_items(self, e: A.Node, sc: Scope) -> list[tuple]:
        """A field list as ``(slot or None, read or None, width, valid slot or None)``."""
        if isinstance(e, A.ListExpr):
            return [i for x in e.items for i in self._slot_items(x, sc)]
        r = self.path(e, sc) if isinstance(e, (A.Name, A.Member, A.Index)) else None
        if isinstance(r, HeaderRef):
            return [(f.slot, None, _width(f.type), r.base) for f in r.fields.values()]
        if isinstance(r, ScalarRef) and isinstance(r.type, Bits) and not r.type.signed:
            valid = None
            if isinstance(e, A.Member):
                base = self.path(e.expr, sc)
                valid = base.base if isinstance(base, HeaderRef) else None
            return [(r.slot, None, r.type.width, valid)]
        return [(None, read, w, valid) for read, w, valid in self.field_items(e, sc)]

    def _value_bytes(self, e: A.Node, sc: Scope) -> Callable:
        """A header's or struct's fields (or a list of fields) packed into bytes: what
        ``Mirror.emit`` / ``Resubmit.emit`` put in front of the packet (nothing for an
        invalid header)."""
        r = self.path(e, sc) if not isinstance(e, A.ListExpr) else None
        bits = self.bits_of(e, sc)
        valid = r.base if isinstance(r, HeaderRef) else None

        def pack(p):
            if valid is not None and not p.v[valid]:
                return b""
            n, w = bits(p)
            pad = (-w) % 8
            return (n << pad).to_bytes((w + pad) // 8, "big")
        return pack

    # -- methods ------------------------------------------------------------------------------
    def method_call(self, obj: ExternObj, method: str, e: A.Call, sc: Scope):
        m = getattr(self, f"_call_{obj.kind}_{method}", None)
        if m is not None:
            return m(obj, e, sc)
        ce = self._method_value(obj, method, e, sc)     # a value method used as a statement
        f = ce.fn
        return lambda p: f(p)

    def call_value(self, e, sc):
        if isinstance(e, A.Call) and isinstance(e.func, A.Member):
            base = self.path(e.func.expr, sc)
            if isinstance(base, ExternObj):
                return self._method_value(base, e.func.name, e, sc)
        if isinstance(e, A.Call) and isinstance(e.func, A.Name) and \
                not isinstance(sc.get(e.func.name), ScalarRef):
            return self._function_value(e.func.name, e, sc)
        return super().call_value(e, sc)

    def _method_value(self, obj: ExternObj, method: str, e: A.Call, sc: Scope) -> CE:
        m = getattr(self, f"_value_{obj.kind}_{method}", None)
        if m is None:
            raise self.error(f"{obj.kind} {obj.name}: method {method} is not modelled", e)
        return m(obj, e, sc)

    def _index(self, e: A.Node, sc: Scope) -> Callable:
        return self.expr(e, sc).fn

    # Register / RegisterAction
    def _value_RegisterAction_execute(self, obj, e, sc) -> CE:
        if len(e.args) != 1:
            raise self.error(f"{obj.name}.execute takes one index", e)
        ra: RegisterActionObj = obj.state
        idx = self._index(e.args[0], sc)
        body, vs = ra.body, ra.value.slot
        rvs = ra.rv.slot if ra.rv is not None else None
        arrays = ra.reg.pipes
        size, m, signed = arrays[0].size, (1 << arrays[0].width) - 1, arrays[0].signed
        rv_t = ra.rv.type if ra.rv is not None else Bits(32)

        def execute(p):
            cells = arrays[p.pipe].cells
            i = idx(p) % size
            v = p.v
            v[vs] = cells[i]
            if rvs is not None:
                v[rvs] = 0
            body(p)
            cells[i] = v[vs] if signed else v[vs] & m
            return v[rvs] if rvs is not None else 0
        return CE(execute, rv_t)

    def _value_Register_read(self, obj, e, sc) -> CE:
        arrays = obj.state.pipes
        idx = self._index(e.args[0], sc)
        size = arrays[0].size
        return CE(lambda p: arrays[p.pipe].cells[idx(p) % size], Bits(arrays[0].width,
                                                                      arrays[0].signed))

    def _call_Register_write(self, obj, e, sc):
        arrays = obj.state.pipes
        idx = self._index(e.args[0], sc)
        a0 = arrays[0]
        val = self.expr(e.args[1], sc, Bits(a0.width, a0.signed)).fn
        size, m = a0.size, (1 << a0.width) - 1

        def write(p):
            arrays[p.pipe].cells[idx(p) % size] = val(p) if a0.signed else val(p) & m
        return write

    # Counter / DirectCounter
    def _call_Counter_count(self, obj, e, sc):
        if not 1 <= len(e.args) <= 2:
            raise self.error(f"{obj.name}.count takes (index[, adjust_byte_count])", e)
        arrays = obj.state.pipes
        idx = self._index(e.args[0], sc)
        adj = self.expr(e.args[1], sc).fn if len(e.args) > 1 else (lambda p: 0)
        return lambda p: arrays[p.pipe].count(idx(p), p.ingress_len + adj(p))

    def _call_direct_counter_count(self, obj, e, sc):
        return lambda p: None          # the table counts the entry that hit

    # Meter / DirectMeter
    def _value_Meter_execute(self, obj, e, sc) -> CE:
        if len(e.args) != 1:
            raise self.error(f"{obj.name}.execute: a colour-aware meter or an adjusted byte "
                             f"count is not modelled (execute(index) only)", e)
        arrays = obj.state.pipes
        green, yellow, red = obj.state.colors
        idx = self._index(e.args[0], sc)
        size = arrays[0].size
        colors = (green, yellow, red)

        def execute(p):
            i = idx(p)
            if not 0 <= i < size:
                return green
            return colors[arrays[p.pipe].meters[i].execute(p.ingress_len, p.now)]
        return CE(execute, Bits(8))

    def _value_direct_meter_execute(self, obj, e, sc) -> CE:
        if e.args:
            raise self.error(f"{obj.name}.execute: a colour-aware meter or an adjusted byte "
                             f"count is not modelled (execute() only)", e)
        colors = self.meter_colors.get(obj.name, (0, 1, 3))
        return CE(lambda p: colors[p.color], Bits(8))

    # Hash / Random
    def _value_Hash_get(self, obj, e, sc) -> CE:
        if len(e.args) != 1:
            raise self.error(f"{obj.name}.get takes one field list", e)
        t = obj.type_args[0] if obj.type_args else Bits(32)
        w = _width(t)
        m = (1 << w) - 1
        algo, f = obj.state
        if algo == "RANDOM":
            rng = self.sw.rng
            return CE(lambda p: rng.getrandbits(w), Bits(w))
        bits = self.bits_of(e.args[0], sc)

        def get(p):
            return f(*bits(p)) & m
        return CE(get, Bits(w))

    def _value_Random_get(self, obj, e, sc) -> CE:
        t = obj.type_args[0] if obj.type_args else Bits(32)
        w = _width(t)
        rng = self.sw.rng
        return CE(lambda p: rng.getrandbits(w), Bits(w))

    # Checksum
    def _call_Checksum_add(self, obj, e, sc, sign: int = 1):
        slot = obj.state
        bits = self.bits_of(e.args[0], sc)

        flip = 0 if sign > 0 else 0xFFFF

        def add(p):                      # ones_sum((v[slot], word)), inline
            v = p.v
            s = v[slot] + (_packet_sum16(p, bits(p)) ^ flip)
            v[slot] = (s & 0xFFFF) + (s >> 16)  # two 16-bit words: one carry folds it
        return add

    def _call_Checksum_subtract(self, obj, e, sc):
        return self._call_Checksum_add(obj, e, sc, -1)

    def _call_Checksum_subtract_all_and_deposit(self, obj, e, sc):
        slot = obj.state
        return self.store(self.lvalue(e.args[0], sc), CE(lambda p: p.v[slot], Bits(16)))

    def _value_Checksum_get(self, obj, e, sc) -> CE:
        slot = obj.state
        return CE(lambda p: ~p.v[slot] & 0xFFFF, Bits(16))

    def _value_Checksum_verify(self, obj, e, sc) -> CE:
        slot = obj.state
        return CE(lambda p: p.v[slot] == 0xFFFF, BOOL)

    def _value_Checksum_update(self, obj, e, sc) -> CE:
        if not 1 <= len(e.args) <= 2:
            raise self.error(f"{obj.name}.update takes (data[, zeros_as_ones])", e)
        bits = self.bits_of(e.args[0], sc)
        values = self.values_of(e.args[0], sc)
        ones = self.expr(e.args[1], sc).fn if len(e.args) > 1 else None
        done: dict[tuple, int] = {}     # the field list's values -> the checksum, bounded

        def update(p):
            k = values(p)
            c = done.get(k)
            if c is None:
                c = ~sum16(*bits(p)) & 0xFFFF
                if len(done) >= _SUMS_LIMIT:
                    done.clear()
                done[k] = c
            if c == 0 and ones is not None and ones(p):
                return 0xFFFF
            return c
        return CE(update, Bits(16))

    # Digest / Mirror / Resubmit (deparser)
    def _call_Digest_pack(self, obj, e, sc):
        self._deparser_only(obj, e, "ingress")
        t = obj.type_args[0] if obj.type_args else None
        label = t.name if isinstance(t, (StructT, HeaderT)) else obj.name.rsplit(".", 1)[-1]
        arg = e.args[0]
        if isinstance(arg, A.ListExpr):              # {a, b}: named by T's fields, in order
            names = [n for n, _ in t.fields] if isinstance(t, (StructT, HeaderT)) else []
            if len(names) != len(arg.items):
                raise self.error(f"{obj.name}.pack: {len(arg.items)} values for the "
                                 f"{len(names)} fields of {label}", e)
            reads = [(n, self.expr(x, sc).fn) for n, x in zip(names, arg.items)]

            def pack_list(p):
                p.digests.append((label, {n: f(p) for n, f in reads}))
            return pack_list
        r = self.path(arg, sc)
        if isinstance(r, StructRef):
            items = [(n if isinstance(sub, ScalarRef) else s.path, s.slot)
                     for n, sub in r.members.items() for s in scalars(sub)]
        elif isinstance(r, HeaderRef):
            items = [(n, f.slot) for n, f in r.fields.items()]
        else:
            raise self.error(f"{obj.name}.pack takes a struct, a header or a list of fields", e)

        def pack(p):
            v = p.v
            p.digests.append((label, {n: v[s] for n, s in items}))
        return pack

    def _call_Mirror_emit(self, obj, e, sc):
        if not 1 <= len(e.args) <= 2:
            raise self.error(f"{obj.name}.emit takes (session_id[, header])", e)
        sess = self.expr(e.args[0], sc).fn
        data = self._value_bytes(e.args[1], sc) if len(e.args) > 1 else (lambda p: b"")
        gress = self.gress

        def mirror(p):
            p.clone = (gress, sess(p) & 0x3FF, data(p))
        return mirror

    def _call_Resubmit_emit(self, obj, e, sc):
        self._deparser_only(obj, e, "ingress")
        data = self._value_bytes(e.args[0], sc) if e.args else (lambda p: b"")

        def resubmit(p):
            p.resubmit = data(p)
        return resubmit

    def _deparser_only(self, obj, e, gress: str) -> None:
        if self.gress != gress:
            raise self.error(f"{obj.kind} {obj.name}: {e.func.name}() runs in the {gress} "
                             f"deparser only", e)

    # -- functions ----------------------------------------------------------------------------
    def _function_value(self, name: str, e: A.Call, sc: Scope) -> CE:
        if name in ("min", "max") and len(e.args) == 2:
            a, b = self.expr(e.args[0], sc), self.expr(e.args[1], sc)
            a, b, t = self._unify(a, b)
            fa, fb = a.fn, b.fn
            pick = min if name == "min" else max
            return self._fold(CE(lambda p: pick(fa(p), fb(p)), t), a, b)
        if name in ("sizeInBits", "sizeInBytes") and len(e.args) == 1:
            r = self.path(e.args[0], sc)
            t = getattr(r, "type", None)
            if isinstance(t, HeaderT):
                n = t.nbits if name == "sizeInBits" else t.nbytes
                return CE(lambda p: n, Bits(32), const=n)
        if name in _V1MODEL_FUNCTIONS:
            err = self.error(f"{name}() is v1model's, not TNA's", e)
            err.hint = _V1MODEL_FUNCTIONS[name]
            raise err
        raise self.error(f"{name}() is not modelled for TNA", e)

    def extern_call(self, name: str, e: A.Call, sc: Scope, where: str):
        if name in ("min", "max", "sizeInBits", "sizeInBytes"):
            self._function_value(name, e, sc)
            return None
        return self._function_value(name, e, sc)            # raises, located

    def stmt(self, s, sc, where):
        if isinstance(s, A.Assign) and isinstance(s.rhs, A.Call) and \
                isinstance(s.rhs.func, A.Name) and s.rhs.func.name == "port_metadata_unpack":
            return self._port_metadata(s, sc)
        return super().stmt(s, sc, where)

    def _port_metadata(self, s: A.Assign, sc: Scope) -> Callable:
        """``x = port_metadata_unpack<T>(pkt)``: the port's metadata (zeros: the model
        configures none) into *x*, and the parser moves past it."""
        dst = self.lvalue(s.lhs, sc)
        zero = [f for f in scalars(dst)] if not isinstance(dst, ScalarRef) else [dst]
        slots = [z.slot for z in zero]
        from .prelude import PORT_METADATA_BYTES

        def unpack(p):
            if len(p.data) - p.pos < PORT_METADATA_BYTES:
                raise ParserError("PacketTooShort")
            v = p.v
            for sl in slots:
                v[sl] = 0
            if isinstance(dst, HeaderRef):
                v[dst.base] = True
            p.pos += PORT_METADATA_BYTES
        return unpack

    # -- parsers (Tofino's errors) --------------------------------------------------------------
    def parser_outcomes(self):
        keeps = self.keeps_err

        def on_reject(tr):
            raise ParserError("NoMatch")          # Tofino: a parser error like any other

        def on_error(code):
            return f"parser error {code}: " + (
                "the packet goes on with parser_err set (the program reads it)" if keeps
                else "Tofino drops the packet (the program does not read parser_err)")
        return on_reject, on_error


def reads_parser_err(control: A.ControlDecl | None) -> bool:
    """Whether *control* reads a ``parser_err`` field (then Tofino keeps a packet with a
    parser error)."""
    if control is None:
        return False
    return any(isinstance(n, A.Member) and n.name == "parser_err" for n in A.walk(control))

