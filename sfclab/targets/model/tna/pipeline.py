"""One TNA ``Pipeline``, compiled: its six blocks as closures over one packet layout.

``Pipeline(IngressParser(), Ingress(), IngressDeparser(), EgressParser(), Egress(),
EgressDeparser()) pipe;`` becomes a :class:`CompiledPipeline`.  A block's first
parameters (``packet_in`` / ``packet_out``, the headers, the metadata) are bound by
position; the intrinsic metadata after them, which ``tna.p4`` declares
``@optional``, by their type (``in ingress_intrinsic_metadata_t ig_intr_md`` …),
whatever the program calls them and however many it takes.  The ingress and egress
gresses keep their own headers and metadata (``IH``/``IM``, ``EH``/``EM``): what
egress knows of ingress is what the ingress deparser emitted (bridged metadata)
and the egress intrinsic metadata.

Control-plane names are the pipeline's: ``pipe.SfcIngress.rewinder`` (bf-p4c puts
the ``Pipeline`` instance's name in front of tables and externs, not of actions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ....p4 import ast as A
from ..control import PacketIO
from ..errors import ModelCompileError
from ..expr import ConstVal, Scope
from ..storage import HeaderRef, Layout, StructRef
from ..types import Bits, HeaderT, StructT, TypeEnv
from .compiler import TnaCompiler, reads_parser_err
from .parse_cache import ParseCache, cacheable
from .prelude import INTRINSIC_TYPES

__all__ = ["CompiledPipeline", "Gress", "compile_pipeline", "pipeline_blocks", "UNSET",
           "Unset"]

#: tna.p4's names for the intrinsic metadata (what traces call them).
_SHORT = {"ingress_intrinsic_metadata_t": "ig_intr_md",
          "ingress_intrinsic_metadata_for_tm_t": "ig_intr_md_for_tm",
          "ingress_intrinsic_metadata_from_parser_t": "ig_intr_md_from_prsr",
          "ingress_intrinsic_metadata_for_deparser_t": "ig_intr_md_for_dprsr",
          "egress_intrinsic_metadata_t": "eg_intr_md",
          "egress_intrinsic_metadata_from_parser_t": "eg_intr_md_from_prsr",
          "egress_intrinsic_metadata_for_deparser_t": "eg_intr_md_for_dprsr",
          "egress_intrinsic_metadata_for_output_port_t": "eg_intr_md_for_oport"}

_BLOCKS = ("ingress parser", "ingress", "ingress deparser", "egress parser", "egress",
           "egress deparser")


class Unset(int):
    """``ucast_egress_port`` before a program writes it: reads as 0, but the traffic
    manager can tell (a TNA field with validity: unwritten, the packet has no unicast
    destination)."""

    __slots__ = ()


UNSET = Unset(0)


@dataclass(eq=False)
class Gress:
    """One gress of a pipeline: parser, control, deparser and their storage."""

    parse: Callable
    control: Callable
    deparse: Callable
    hdr: StructRef
    meta: StructRef
    intrinsic: dict[str, HeaderRef | StructRef]
    keeps_parser_err: bool
    names: tuple[str, str, str]                  # the blocks' control/parser names
    #: The parser's runs remembered by the bytes they read (:mod:`.parse_cache`), or None
    #: when its runs depend on more than those bytes (``uncached`` says why).
    cache: ParseCache | None = None
    uncached: str | None = None
    tstamp_mask: int = 0                         # the intrinsic timestamp field's mask

    def slot(self, struct: str, fname: str) -> int:
        """The slot of intrinsic field *struct*.*fname* (``ingress_intrinsic_metadata_for_tm_t``)."""
        r = self.intrinsic[struct]
        return (r.fields if isinstance(r, HeaderRef) else r.members)[fname].slot


@dataclass(eq=False)
class CompiledPipeline:
    """A ``Pipeline`` instance ready to run packets (in every pipe that uses it)."""

    name: str
    ingress: Gress
    egress: Gress
    template: list
    layout: Layout
    token: Callable | None = None                 # the SFC token of an egress packet
    ig_token: Callable | None = None              # … of an ingress packet
    s: dict = field(default_factory=dict)          # the slots the switch reads
    eg_prefix: Callable = field(default=lambda port, rid, length, ns, memo: b"")
    ig_prefix: Callable = field(default=lambda resubmitted, port, ns, memo: b"")


def pipeline_blocks(inst: A.Instance) -> list[str]:
    """The six block type names of ``Pipeline(...) name;``."""
    names = []
    for arg in inst.args:
        if not (isinstance(arg, A.Call) and isinstance(arg.func, A.TypeName)):
            raise ModelCompileError(f"{_pos(inst)}Pipeline {inst.name}'s arguments must be "
                                    f"constructor calls (Pipeline(IngressParser(), …) "
                                    f"{inst.name};)")
        names.append(arg.func.name)
    if len(names) != 6:
        raise ModelCompileError(f"{_pos(inst)}Pipeline {inst.name} takes 6 blocks, got "
                                f"{len(names)}")
    return names


def _pos(node: A.Node) -> str:
    pos = getattr(node, "pos", None)
    return f"{pos}: " if pos else ""


def compile_pipeline(sw, prog: A.Program, env: TypeEnv, inst: A.Instance, *,
                     npipes: int) -> CompiledPipeline:
    """Compile ``Pipeline`` instance *inst* of the (prelude-merged) program *prog*."""
    names = pipeline_blocks(inst)
    parsers = {p.name: p for p in prog.find(A.ParserDecl)}
    controls = {c.name: c for c in prog.controls()}
    decls = []
    for i, (what, n) in enumerate(zip(_BLOCKS, names)):
        pool = parsers if i in (0, 3) else controls
        d = pool.get(n)
        if d is None:
            raise ModelCompileError(f"{_pos(inst)}Pipeline {inst.name}: the {what} {n} is not "
                                    f"declared" + (" as a parser" if i in (0, 3) else
                                                   " as a control"))
        decls.append(d)
    layout = Layout()
    c = TnaCompiler(sw, env, layout, _naming_program(prog, inst), npipes=npipes)
    env.const_eval = env.const_eval or (lambda e: c.const_int(e, c.global_scope))
    _globals(c, prog, sw)
    gresses = []
    for g, (parser, control, deparser) in (("ingress", decls[:3]), ("egress", decls[3:])):
        hdr_t, meta_t = (env.resolve(parser.params[k].type) for k in (1, 2))
        if not isinstance(hdr_t, StructT) or not isinstance(meta_t, StructT):
            raise ModelCompileError(f"{_pos(parser)}parser {parser.name}: the headers and the "
                                    f"metadata must be structs")
        start = len(layout.template)             # the gress's slots begin
        hdr, meta = layout.build(hdr_t, "hdr"), layout.build(meta_t, "meta")
        intr = {t: layout.build(env.named(t), _SHORT[t]) for t in INTRINSIC_TYPES
                if t.startswith(g)}
        c.gress = g
        c.keeps_err = reads_parser_err(control)
        pin, pout = PacketIO("in"), PacketIO("out")
        parse = c.compile_parser(parser, _bind(parser, [pin, hdr, meta], intr, env, g))
        body = c.control_body(control, (control.name,), _bind(control, [hdr, meta], intr, env, g))
        dep = c.control_body(deparser, (deparser.name,),
                             _bind(deparser, [pout, hdr, meta], intr, env, g))
        gress = Gress(parse, body, dep, hdr, meta, intr, c.keeps_err,
                      (parser.name, control.name, deparser.name))
        _parse_cache(gress, parser, g, (start, len(layout.template)))
        gresses.append(gress)
    ig, eg = gresses
    tpl = list(layout.template)
    out = CompiledPipeline(inst.name, ig, eg, tpl, layout)
    out.token, out.ig_token = _sfc_token(eg.hdr), _sfc_token(ig.hdr)
    out.eg_prefix = _eg_prefix(env.named("egress_intrinsic_metadata_t"))
    out.ig_prefix = _ig_prefix(env.named("ingress_intrinsic_metadata_t"))
    return out


#: Per gress: the intrinsic metadata the switch puts in front of the packet, and its field
#: that differs in every packet (the timestamp).
_STAMPED = {"ingress": ("ingress_intrinsic_metadata_t", "ingress_mac_tstamp"),
            "egress": ("egress_intrinsic_metadata_t", "enq_tstamp")}


def _parse_cache(gress: Gress, parser: A.ParserDecl, g: str, region: tuple[int, int]) -> None:
    """Give *gress* (its slots: *region*) a :class:`ParseCache` when its parser qualifies."""
    tname, fname = _STAMPED[g]
    ref = gress.intrinsic.get(tname)
    if not isinstance(ref, HeaderRef) or fname not in ref.fields:
        gress.uncached = f"{tname} is not a header with {fname}"
        return
    why = cacheable(parser, tname, fname)
    if why is not None:
        gress.uncached = f"parser {parser.name}: {why}"
        return
    f = ref.fields[fname]
    stamp = gress.slot(f"{g}_intrinsic_metadata_from_parser_t", "global_tstamp")
    gress.cache = ParseCache(gress.parse, f.slot, ref.base, region, frozenset({stamp}))
    gress.tstamp_mask = _field_at(ref.type)[fname][1]


def _bind(decl, fixed: list, intr: dict, env: TypeEnv, gress: str) -> dict:
    """A block's parameters: the first by position, the intrinsic metadata by type."""
    out = {}
    for i, prm in enumerate(decl.params):
        if i < len(fixed):
            out[prm.name] = fixed[i]
            continue
        t = prm.type.name if isinstance(prm.type, A.NamedType) else None
        if t not in intr:
            other = "egress" if gress == "ingress" else "ingress"
            what = (f"it is {other} metadata" if t in INTRINSIC_TYPES else
                    "the model binds the intrinsic metadata of tna.p4 only")
            raise ModelCompileError(f"{_pos(prm)}{decl.name}: parameter {prm.name} of type "
                                    f"{t or prm.type} has no place in the {gress} ({what})")
        out[prm.name] = intr[t]
    if len(decl.params) < len(fixed):
        raise ModelCompileError(f"{_pos(decl)}{decl.name} takes at least {len(fixed)} "
                                f"parameters as a TNA {gress} block")
    return out


def _naming_program(prog: A.Program, inst: A.Instance) -> A.Program:
    """*prog* with only *inst* in its ``Switch``: bf-p4c's control-plane names for this
    pipeline (its name in front of tables and externs)."""
    keep = [d for d in prog.decls if not (isinstance(d, A.Instance) and isinstance(d.type, A.NamedType)
                                           and d.type.name in ("Pipeline", "Switch"))]
    main = A.Instance(A.NamedType("Switch"), (A.Name(inst.name),), "main")
    return A.Program(tuple(keep) + (inst, main), prog.source)


def _globals(c: TnaCompiler, prog: A.Program, sw) -> None:
    """Constants, enums and top-level actions in the compiler's global scope."""
    sc: Scope = c.global_scope
    for d in prog.decls:
        if isinstance(d, A.ConstDecl):
            t = c.env.resolve(d.type)
            sc.names[d.name] = ConstVal(c.const_value(d.value, sc, t), t)
        elif isinstance(d, A.EnumDecl):
            c.env.named(d.name)
        elif isinstance(d, A.Instance) and isinstance(d.type, A.NamedType) and \
                d.type.name not in ("Pipeline", "Switch"):
            raise ModelCompileError(f"{_pos(d)}{d.type.name} {d.name}: the model runs externs "
                                    f"declared inside a control or parser only")
    if not any(isinstance(d, A.ActionDecl) and d.name == "NoAction" for d in prog.decls):
        noa = c.compile_action(A.ActionDecl("NoAction", (), A.Block()), sc, "NoAction")
        sc.names["NoAction"] = noa
        sw.actions["NoAction"] = noa.info
    for d in prog.find(A.ActionDecl):
        qn = c.qnames.get(((), id(d)), d.name)
        a = c.compile_action(d, sc, qn)
        sc.names[d.name] = a
        sw.actions[qn] = a.info


def _sfc_token(hdr: StructRef) -> Callable | None:
    """sfclab's SFC header fields (path id, state …) of a packet, for recirculate events."""
    sfc = hdr.members.get("sfc")
    if not isinstance(sfc, HeaderRef):
        return None
    want = [n for n in ("path_id", "state", "bitmap", "counter") if n in sfc.fields]
    want += [n for n in sfc.fields if n.startswith("saved_md")]
    if not {"path_id", "state"} <= set(want):
        return None
    valid = sfc.base
    slots = [(n, sfc.fields[n].slot) for n in want]
    return lambda v: {n: v[s] for n, s in slots} if v[valid] else None


def _field_at(t: HeaderT) -> dict[str, tuple[int, int, int]]:
    """Field name -> (bit offset from the right, mask, index) in header type *t*."""
    off, at = t.nbits, {}
    for i, (n, ft) in enumerate(t.fields):
        w = ft.width if isinstance(ft, Bits) else ft.underlying.width
        off -= w
        at[n] = (off, (1 << w) - 1, i)
    return at


def _ig_prefix(t: HeaderT) -> Callable[[bool, int, int, dict], bytes]:
    """``prefix(resubmitted, port, ns, memo)``: the ingress intrinsic metadata in front of
    a packet entering an ingress parser (8 bytes on Tofino 1): the resubmit flag, the
    port and the MAC timestamp, every other field 0.  *memo* (the packet's
    :attr:`TnaPkt.memo`) learns what the bytes unpack to: these values."""
    at = _field_at(t)
    (sf, _, i_f), (sp, mp, ip), (st, mt, it) = (at[n] for n in (
        "resubmit_flag", "ingress_port", "ingress_mac_tstamp"))
    nbytes, zeros, tname = t.nbytes, [0] * len(at), t.name

    def prefix(resubmitted: bool, port: int, ns: int, memo: dict) -> bytes:
        flag, port, ns = 1 if resubmitted else 0, port & mp, ns & mt
        raw = (flag << sf | port << sp | ns << st).to_bytes(nbytes, "big")
        vals = list(zeros)
        vals[i_f], vals[ip], vals[it] = flag, port, ns
        memo[(tname, raw)] = vals
        return raw
    return prefix


def _eg_prefix(t: HeaderT) -> Callable[[int, int, int, int, dict], bytes]:
    """``prefix(port, rid, length, ns, memo)``: the egress intrinsic metadata in front of a
    packet entering an egress parser (27 bytes on Tofino 1; queue depths 0): the four
    fields the traffic manager sets, shifted into place, every other field 0.  *memo*
    (the packet's :attr:`TnaPkt.memo`) learns what the bytes unpack to: these values."""
    off, at, names = t.nbits, {}, []
    for i, (n, ft) in enumerate(t.fields):
        w = ft.width if isinstance(ft, Bits) else ft.underlying.width
        off -= w
        at[n] = (off, (1 << w) - 1, i)
        names.append(n)
    (sp, mp, ip), (sr, mr, ir), (sl, ml, il), (st, mt, it) = (at[n] for n in (
        "egress_port", "egress_rid", "pkt_length", "enq_tstamp"))
    nbytes, zeros, tname = t.nbytes, [0] * len(names), t.name

    def prefix(port: int, rid: int, length: int, ns: int, memo: dict) -> bytes:
        port, rid, length, ns = port & mp, rid & mr, length & ml, ns & mt
        raw = (port << sp | rid << sr | length << sl | ns << st).to_bytes(nbytes, "big")
        vals = list(zeros)
        vals[ip], vals[ir], vals[il], vals[it] = port, rid, length, ns
        memo[(tname, raw)] = vals
        return raw
    return prefix
