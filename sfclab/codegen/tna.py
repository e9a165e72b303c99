"""The TNA emitter: the composed program for Tofino (``bf-p4c``), one pipe.

The same core as v1model (:mod:`.compose`), in TNA's shape: ingress parser /
ingress / ingress deparser and egress parser / egress / egress deparser in one
``Pipeline``, ``Switch(pipe) main``.  Differences the emitter handles:

* another pass leaves ingress towards the recirculation port (``recirc_port``,
  68 on pipe 0 of a Tofino 1) and comes back through the ingress parser with the
  SFC header on, so NF header rewrites survive as on v1model;
* drops set ``ig_dprsr_md.drop_ctl``; what egress needs (the original ingress
  port, path id, why a packet goes to the CPU) is bridged in a ``bridge_t``
  header that the egress parser extracts;
* the state API lowers to ``Register`` + ``RegisterAction`` (an NF's
  ``SfcRegisterAction`` as it is; one per read, per distinct write and per
  distinct add, each declared after the variables its body reads, as P4 wants
  names declared before use), ``Counter``, ``DirectCounter`` (every action of
  its table counts), ``Meter`` (TNA's RED, 3, becomes ``SFC_RED``), ``Hash``; a
  digest is packed by the ingress deparser, so an NF that sends digests gets a
  third parameter, a buffer the deparser reads (``digest_type`` says which);
* the IPv4 checksum is recomputed with TNA's ``Checksum`` in the ingress deparser;
* the packet-out branch's field has a PHV container of its own (``@pa_no_overlay``), which
  ``p4c-barefoot`` 9.13.4 needs not to crash (``_NO_OVERLAY`` says why).

Tofino gives a register one access per packet: an NF that may touch a register
twice on one packet path (a read and a write) is refused, naming the register and
the lines (use one ``SfcRegisterAction`` that computes the new value and the
result).  The placement pass's multi-pipe plan is reported; this program uses one
pipe.
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import CompileError, P4Error
from ..p4 import ast as A
from ..p4.catalog import NFDefinition, nf_includes
from ..p4.check import widths_of
from ..p4.paths import PORTABLE, check_one_access
from ..p4.tofino_rules import check_tofino
from .compose import PARSER_GRAPH, TERMINALS, Composition, Slot, core_apply, core_locals
from .emitter import EmittedProgram, P4Emitter, Use
from .v1model import _PACKET_IN, _PACKET_OUT, parser_states

__all__ = ["TnaEmitter", "TNA_CPU_PORT", "TOFINO_PIPE_STAGES", "one_pipe_stages"]

#: Match-action stages of a Tofino 1 pipe's ingress.
TOFINO_PIPE_STAGES = 12


def one_pipe_stages(comp: Composition) -> tuple[int, int]:
    """``(estimate, of it the NF slots')``: the ingress stages this one-pipe program needs by
    the catalogue — sfclab's core (:data:`~sfclab.passes.placement.TNA_CORE_STAGES`) plus
    every NF slot's ``stages``, all in pipe 0's ingress."""
    from ..passes.placement import TNA_CORE_STAGES

    cat = comp.compiled.catalog
    nfs = sum(cat.get(s.nf).stages for s in comp.slots if s.nf in cat)
    return TNA_CORE_STAGES.ingress + nfs, nfs

#: The CPU (PCIe) port of pipe 0 on a Tofino 1.
TNA_CPU_PORT = 192

_HASH = {"CRC16": "CRC16", "CRC32": "CRC32", "IDENTITY": "IDENTITY"}
_COUNTER = {"PACKETS": "PACKETS", "BYTES": "BYTES", "PACKETS_AND_BYTES": "PACKETS_AND_BYTES"}


class TnaEmitter(P4Emitter):
    """sfclab's composed program for TNA (one pipe)."""

    arch = "tna"
    includes = ("core.p4", "tna.p4")
    RECIRCULATES_DEPARSED = True
    METER_BYTES_AND_PACKETS = False
    TRANSFORMS: ClassVar[dict[str, str]] = {
        "SfcRegister": "register_decl", "SfcRegister.read": "register_read",
        "SfcRegister.write": "register_write", "SfcRegister.add": "register_add",
        "SfcRegisterAction": "register_action_decl", "SfcRegisterAction.execute": "keep_use",
        "SfcCounter": "counter_decl", "SfcCounter.count": "keep_use",
        "SfcDirectCounter": "direct_counter_decl",
        "SfcMeter": "meter_decl", "SfcMeter.execute": "meter_execute",
        "SfcHash": "hash_decl", "SfcHash.get": "keep_use",
        "SfcDigest": "digest_decl", "SfcDigest.pack": "digest_pack",
        "SfcL4Checksum": "l4_checksum_decl", "SfcL4Checksum.update": "l4_checksum_update",
    }
    ENUMS: ClassVar[dict[tuple[str, str], str]] = {
        **{("SfcHashAlgorithm", k): f"HashAlgorithm_t.{v}" for k, v in _HASH.items()},
        **{("SfcCounterType", k): f"CounterType_t.{v}" for k, v in _COUNTER.items()},
    }

    DEFAULT_CPU_PORT = TNA_CPU_PORT
    LABEL = "TNA (Tofino)"
    DIGEST_FLAGS = True       # the ingress deparser packs the digest whose flag is set

    def __init__(self, comp: Composition) -> None:
        super().__init__(comp)
        self._writes: dict[str, list[A.Node]] = {}      # register -> written expressions
        self._adds: dict[str, list[A.Node]] = {}        # register -> added deltas
        self._reads: set[str] = set()                   # registers read
        self._actions: list[A.Instance] = []            # register actions sfclab adds
        self._l4_checksum = False                       # an NF updates the TCP/UDP checksum

    # -- lowering the state API ----------------------------------------------------------------
    def prepare(self, control: A.ControlDecl, nf: NFDefinition,
                insts: dict[str, A.Instance]) -> None:
        self._writes = {}
        self._adds: dict[str, list[A.Node]] = {}
        reads: set[str] = set()
        for n in A.walk(control):
            if (isinstance(n, A.Call) and isinstance(n.func, A.Member)
                    and isinstance(n.func.expr, A.Name) and n.func.expr.name in insts):
                inst = n.func.expr.name
                if n.func.name == "write":
                    exprs = self._writes.setdefault(inst, [])
                    if n.args[1] not in exprs:
                        exprs.append(n.args[1])
                elif n.func.name == "read":
                    reads.add(inst)
                elif n.func.name == "add":
                    deltas = self._adds.setdefault(inst, [])
                    if n.args[1] not in deltas:
                        deltas.append(n.args[1])
        self._reads = reads
        self._actions = []
        self._hdr, self._sfc = (p.name for p in control.params[:2])
        try:
            check_one_access(control, nf.program, PORTABLE, what=f"NF {nf.name!r}")
            check_tofino(control, what=f"NF {nf.name!r}", lowered=False,
                         width_of=widths_of(nf.program, control, extra=nf_includes(),
                                            portable=True))
        except P4Error as e:
            raise CompileError(f"tna cannot express this: {e.message} ({e.location})",
                               hint=e.hint) from None

    def register_decl(self, use: Use):
        t, i = use.inst.type.args
        name = use.inst.name
        reg = A.Instance(A.NamedType("Register", (t, i)), use.inst.args, name, None,
                         use.inst.annotations, use.inst.pos)
        out: list[A.Instance] = []      # placed by lower_control, after what they read
        ra = A.NamedType("RegisterAction", (t, i, t))
        if name in self._reads:
            out.append(A.Instance(ra, (A.Name(name),), f"{name}_read", (A.FunctionDecl(
                A.VoidType(), "apply", (A.Param("inout", t, "value"), A.Param("out", t, "result")),
                A.Block((A.Assign(A.Name("result"), A.Name("value")),))),)))
        for k, expr in enumerate(self._writes.get(name, [])):
            out.append(A.Instance(ra, (A.Name(name),), f"{name}_write{k}", (A.FunctionDecl(
                A.VoidType(), "apply", (A.Param("inout", t, "value"),),
                A.Block((A.Assign(A.Name("value"), expr),))),)))
        for k, delta in enumerate(self._adds.get(name, [])):
            out.append(A.Instance(ra, (A.Name(name),), f"{name}_add{k}", (A.FunctionDecl(
                A.VoidType(), "apply", (A.Param("inout", t, "value"), A.Param("out", t, "result")),
                A.Block((A.Assign(A.Name("value"), A.Binary("+", A.Name("value"), delta)),
                         A.Assign(A.Name("result"), A.Name("value"))))),)))
        self._actions += out
        return reg

    def register_action_decl(self, use: Use):
        """An NF's SfcRegisterAction is TNA's RegisterAction."""
        return A.Instance(A.NamedType("RegisterAction", use.inst.type.args), use.inst.args,
                          use.inst.name, use.inst.body, use.inst.annotations, use.inst.pos)

    def register_add(self, use: Use):
        k = self._adds[use.inst.name].index(use.call.args[1])
        return A.Assign(use.lhs, A.Call(A.Member(A.Name(f"{use.inst.name}_add{k}"), "execute"),
                                        (use.call.args[0],)), use.stmt.pos)

    def register_read(self, use: Use):
        return A.Assign(use.lhs, A.Call(A.Member(A.Name(f"{use.inst.name}_read"), "execute"),
                                        (use.call.args[0],)), use.stmt.pos)

    def register_write(self, use: Use):
        k = self._writes[use.inst.name].index(use.call.args[1])
        return A.CallStmt(A.Call(A.Member(A.Name(f"{use.inst.name}_write{k}"), "execute"),
                                 (use.call.args[0],)), use.stmt.pos)

    def _kind(self, e: A.Node, use: Use, enum: str = "CounterType_t") -> A.Node:
        if isinstance(e, A.Member) and e.name in _COUNTER:
            return A.Member(A.TypeName(enum), e.name)
        self.unsupported("this counter type", use.inst, nf=use.nf)

    def counter_decl(self, use: Use):
        size, kind = use.inst.args
        return A.Instance(A.NamedType("Counter", (A.BitType(32), use.type_arg(0))),
                          (size, self._kind(kind, use)), use.inst.name, None,
                          use.inst.annotations, use.inst.pos)

    def direct_counter_decl(self, use: Use):
        (kind,) = use.inst.args
        return A.Instance(A.NamedType("DirectCounter", (A.BitType(32),)),
                          (self._kind(kind, use),), use.inst.name, None, use.inst.annotations,
                          use.inst.pos)

    def meter_decl(self, use: Use):
        size, kind = use.inst.args
        if isinstance(kind, A.Member) and kind.name == "PACKETS_AND_BYTES":
            self.unsupported("a meter on packets and bytes at once", use.inst, nf=use.nf)
        return A.Instance(A.NamedType("Meter", (use.type_arg(0),)),
                          (size, self._kind(kind, use, "MeterType_t")), use.inst.name, None,
                          use.inst.annotations, use.inst.pos)

    def meter_execute(self, use: Use):
        col = use.lhs
        got = A.Cast(A.BitType(2), A.Call(A.Member(A.Name(use.inst.name), "execute"),
                                          use.call.args))
        # TNA's RED is 3: mapped by a comparison with a constant (a gateway), not by
        # arithmetic on the colour, which Tofino cannot chain in one action.
        red = A.If(A.Binary("==", col, A.Const(3)),
                   A.Block((A.Assign(col, A.Name("SFC_RED")),)))
        return (A.Assign(col, got, use.stmt.pos), red)

    def hash_decl(self, use: Use):
        (algo,) = use.inst.args
        if not (isinstance(algo, A.Member) and algo.name in _HASH):
            self.unsupported(f"the hash algorithm {getattr(algo, 'name', algo)}", use.inst,
                             nf=use.nf, hint="TNA hashes: CRC16, CRC32, IDENTITY")
        return A.Instance(A.NamedType("Hash", use.inst.type.args),
                          (A.Member(A.TypeName("HashAlgorithm_t"), _HASH[algo.name]),),
                          use.inst.name, None, use.inst.annotations, use.inst.pos)

    def digest_pack(self, use: Use):
        """Copy the data into the slot's buffer and raise its flag; the ingress deparser
        packs it (``digest_type`` says which)."""
        return (self.digest_copy(use),
                A.Assign(A.Member(A.Name("dg"), f"{use.inst.name}_valid"), A.Const(1)))

    def l4_checksum_decl(self, use: Use):
        """No instance in the NF: the ingress parser and deparser hold the ``Checksum``s."""
        self._l4_checksum = True
        return self.remove()

    def l4_checksum_update(self, use: Use):
        """Raise the pass's flag; the ingress deparser updates the valid TCP/UDP checksum
        from the parser's residual (a UDP checksum of 0 stays 0).  Tofino computes no
        ones'-complement sums in an action (it would chain dependent ALU operations)."""
        old, new = use.call.args
        if not (isinstance(old, A.ListExpr) and isinstance(new, A.ListExpr)
                and len(old.items) == len(new.items) and old.items):
            self.unsupported("an L4 checksum update whose arguments are not two lists of "
                             "16-bit words of the same length", use.stmt, nf=use.nf)
        flag = A.Block((A.Assign(A.Member(A.Name(self._sfc), "l4_checksum"), A.Const(1)),))
        h = self._hdr
        valid = lambda x: A.Call(A.Member(A.Member(A.Name(h), x), "isValid"))  # noqa: E731
        udp_on = A.If(A.Binary("!=", A.Member(A.Member(A.Name(h), "udp"), "checksum"),
                               A.Const(0)), flag)
        return A.If(valid("tcp"), flag, A.If(valid("udp"), A.Block((udp_on,))), use.stmt.pos)

    def lower_control(self, control: A.ControlDecl, nf: NFDefinition) -> A.ControlDecl:
        return _count_direct(_place_actions(super().lower_control(control, nf), self._actions))

    # -- the program ---------------------------------------------------------------------------
    def _digest_slots(self) -> list[tuple[int, Slot, A.Instance]]:
        """(digest_type, slot, digest instance) for every digest, 1-based."""
        out = self.digest_slots()
        if len(out) > 7:
            self.unsupported(f"{len(out)} digests (ig_dprsr_md.digest_type has 3 bits: 7 at most)")
        return out

    def program(self) -> EmittedProgram:
        comp = self.comp
        nf = self.nf_decls()                      # fills self._digests
        digests = self._digest_slots()
        parts = self.preamble()
        parts.append(self.print_decls(self._headers()))
        parts.append(self.print_decls(self.api_consts()))
        parts.append(self.print_decls(nf) if nf else "")
        parts.append(_TYPES.format(cpu=self.cpu_port, recirc=comp.options.recirc_port,
                                   dg=self.digest_meta_fields()
                                   + ("    bit<16> l4_residual;\n" if self._l4_checksum else ""),
                                   **{f"T_{k}": v for k, v in TERMINALS.items()}))
        parts.append(self._ingress_parser())
        parts.append(self._ingress(digests))
        parts.append(self._ingress_deparser(digests))
        parts.append(self._egress_parser())
        parts.append(_EGRESS)
        parts.append(self._deparser("SfcEgressDeparser", "inout headers_t hdr, in eg_meta_t meta, "
                                    "in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md",
                                    ("packet_in", *PARSER_GRAPH), ""))
        parts.append("Pipeline(SfcIngressParser(), SfcIngress(), SfcIngressDeparser(), "
                     "SfcEgressParser(), SfcEgress(), SfcEgressDeparser()) pipe;\n\n"
                     "Switch(pipe) main;\n")
        pl = comp.compiled.placement
        self.notes.append(f"tna: one pipe, {len(comp.slots)} NF slots; extra passes go to "
                          f"recirculation port {comp.options.recirc_port}; CPU port "
                          f"{self.cpu_port}; {len(digests)} digest(s)")
        need, nfs = one_pipe_stages(comp)
        self.notes.append(f"tna: about {need} ingress stages by the estimates (sfclab's core "
                          f"{need - nfs}, the NF slots {nfs}); a Tofino 1 pipe has "
                          f"{TOFINO_PIPE_STAGES}" + (": does not fit one pipe"
                                                     if need > TOFINO_PIPE_STAGES else ""))
        if pl is not None:
            self.notes.append(f"tna: the placement pass planned {pl.pipes} pipes "
                              f"({pl.best.weighted_recirculations:.3g} weighted recirculations); "
                              f"this program runs every slot on pipe 0")
        return self._finish("\n".join(p for p in parts if p))

    def _headers(self) -> list[A.Node]:
        out: list[A.Node] = []
        for d in self.header_decls():
            if isinstance(d, A.StructDecl) and d.name == "headers_t":
                out += [_PACKET_IN, _PACKET_OUT, _BRIDGE]
                d = A.StructDecl(d.name, (A.Field(A.NamedType("bridge_t"), "bridge"),
                                          A.Field(A.NamedType("packet_in_t"), "packet_in"),
                                          A.Field(A.NamedType("packet_out_t"), "packet_out"))
                                 + d.fields, d.annotations, d.pos)
            if isinstance(d, A.StructDecl) and d.name == "sfc_meta_t" and self._l4_checksum:
                d = A.StructDecl(d.name, d.fields + (A.Field(A.BitType(1), "l4_checksum"),),
                                 d.annotations, d.pos)
            out.append(d)
        return out

    def _ingress_parser(self) -> str:
        init = "\n".join(f"        meta.{f} = 0;" for f in (
            "sfc.metadata", "sfc.counter", "sfc.path_id", "sfc.drop", "sfc.to_cpu",
            "sfc.egress_valid", "sfc.egress_port", "sfc.mcast_grp", "ctl.recirculate",
            "ctl.terminal", "ctl.out_port")
            + (("sfc.l4_checksum", "l4_residual") if self._l4_checksum else ()))
        init += "".join(f"\n        meta.{s.instance}_dg.{i.name}_valid = 0;"
                        for _, s, i in self.digest_slots())
        lines = ["parser SfcIngressParser(packet_in pkt, out headers_t hdr, out meta_t meta, "
                 "out ingress_intrinsic_metadata_t ig_intr_md) {",
                 "    state start {", "        pkt.extract(ig_intr_md);",
                 "        pkt.advance(PORT_METADATA_SIZE);", init,
                 "        transition select(ig_intr_md.ingress_port) {",
                 "            CPU_PORT : parse_packet_out;", "            default : parse_ethernet;",
                 "        }", "    }", "    state parse_packet_out {",
                 "        pkt.extract(hdr.packet_out);", "        transition parse_ethernet;", "    }"]
        states = parser_states(set(self.comp.headers), "pkt", "hdr")
        if self._l4_checksum:
            lines.insert(1, "    Checksum() l4_checksum;")
            states = _subtract_l4(states)
        return "\n".join(lines + states) + "\n}\n"

    def _egress_parser(self) -> str:
        lines = ["parser SfcEgressParser(packet_in pkt, out headers_t hdr, out eg_meta_t meta, "
                 "out egress_intrinsic_metadata_t eg_intr_md) {",
                 "    state start {", "        pkt.extract(eg_intr_md);",
                 "        pkt.extract(hdr.bridge);", "        transition parse_ethernet;", "    }"]
        lines += parser_states(set(self.comp.headers), "pkt", "hdr")
        return "\n".join(lines) + "\n}\n"

    def _ingress(self, digests) -> str:
        locals_ = "\n".join("    " + line if not line.startswith("\n") else line
                            for line in core_locals(self.comp))
        core = "\n".join(f"            {line}" for line in core_apply(self.comp,
                                                                     self.digest_args()))
        flags = "".join(f"\n        if (meta.{s.instance}_dg.{i.name}_valid == 1) {{\n"
                        f"            ig_dprsr_md.digest_type = {k};\n        }}"
                        for k, s, i in digests)
        return _INGRESS.format(locals=locals_, core=core, digests=flags)

    def _ingress_deparser(self, digests) -> str:
        decl = "".join(f"    Digest<{i.type.args[0].name}>() {s.instance}_{i.name};\n"
                       for _, s, i in digests)
        packs = "".join(f"        if (ig_dprsr_md.digest_type == {k}) {{\n"
                        f"            {s.instance}_{i.name}.pack(meta.{s.instance}_dg.{i.name});\n"
                        f"        }}\n" for k, s, i in digests)
        csum = ("    Checksum() ipv4_checksum;\n" if "ipv4" in self.comp.headers else "")
        update = ("        if (hdr.ipv4.isValid()) {\n"
                  "            hdr.ipv4.hdr_checksum = ipv4_checksum.update({hdr.ipv4.version, "
                  "hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len, "
                  "hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, "
                  "hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});\n        }\n"
                  if csum else "")
        if self._l4_checksum:
            decl += "    Checksum() tcp_checksum;\n    Checksum() udp_checksum;\n"
            update += "        if (meta.sfc.l4_checksum == 1) {\n" + "".join(
                f"            hdr.{h}.checksum = {h}_checksum.update({{hdr.ipv4.src_addr, "
                f"hdr.ipv4.dst_addr, hdr.{h}.src_port, hdr.{h}.dst_port, meta.l4_residual}}"
                f"{', true' if h == 'udp' else ''});\n" for h in ("tcp", "udp")) + "        }\n"
        return self._deparser("SfcIngressDeparser", "inout headers_t hdr, in meta_t meta, "
                              "in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
                              ("bridge", *PARSER_GRAPH), decl + csum, update + packs)

    @staticmethod
    def _deparser(name: str, params: str, headers, decls: str, body: str = "") -> str:
        emits = "".join(f"        pkt.emit(hdr.{h});\n" for h in headers)
        return (f"control {name}(packet_out pkt, {params}) {{\n{decls}"
                f"    apply {{\n{body}{emits}    }}\n}}\n")


def _subtract_l4(states: list[str]) -> list[str]:
    """The ingress parser's states with the TCP/UDP checksum's residual taken: the old IPv4
    addresses where they are extracted, the old ports and checksum with the TCP or UDP
    header (TNA's ``Checksum`` subtracts fields in the state that extracts them)."""
    out: list[str] = []
    for line in states:
        out.append(line)
        h = line.strip().removeprefix("pkt.extract(hdr.").removesuffix(");")
        if h == "ipv4":
            out.append("        l4_checksum.subtract({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});")
        elif h in ("tcp", "udp"):
            out += [f"        l4_checksum.subtract({{hdr.{h}.src_port, hdr.{h}.dst_port, "
                    f"hdr.{h}.checksum}});",
                    "        l4_checksum.subtract_all_and_deposit(meta.l4_residual);"]
    return out


def _place_actions(control: A.ControlDecl, actions: list[A.Instance]) -> A.ControlDecl:
    """*control* with each register action declared right after the last of its register
    and the locals its body reads (P4: declaration before use).  The NF's own source
    declares those before every action or statement that writes them, so each
    register action still comes before its uses."""
    locals_ = list(control.locals)
    for ra in actions:
        reads = {n.name for n in A.walk(ra) if isinstance(n, A.Name)}
        after = max(i for i, d in enumerate(locals_) if getattr(d, "name", None) in reads)
        locals_.insert(after + 1, ra)
    return A.ControlDecl(control.name, control.params, tuple(locals_), control.apply,
                         control.type_params, control.annotations, control.pos)


def _count_direct(control: A.ControlDecl) -> A.ControlDecl:
    """Add ``d.count();`` to every action of a table whose ``counters`` is ``d`` (TNA's rule)."""
    counted: dict[str, str] = {}
    for t in control.tables():
        d = t.property("counters")
        if isinstance(d, A.Name):
            for a in t.actions:
                counted[a.name] = d.name
    if not counted:
        return control
    locals_ = []
    for d in control.locals:
        if isinstance(d, A.ActionDecl) and d.name in counted:
            call = A.CallStmt(A.Call(A.Member(A.Name(counted[d.name]), "count")))
            d = A.ActionDecl(d.name, d.params, A.Block(d.body.stmts + (call,), d.body.pos),
                             d.annotations, d.pos)
        locals_.append(d)
    return A.ControlDecl(control.name, control.params, tuple(locals_), control.apply,
                         control.type_params, control.annotations, control.pos)


_BRIDGE = A.HeaderDecl("bridge_t", (
    A.Field(A.BitType(7), "pad"), A.Field(A.BitType(9), "ingress_port"),
    A.Field(A.BitType(16), "path_id"), A.Field(A.BitType(8), "cpu_reason")))

_TYPES = """const bit<9> CPU_PORT = {cpu};
const bit<9> RECIRC_PORT = {recirc};
const bit<2> TERM_OUTPUT = {T_output};
const bit<2> TERM_DROP = {T_drop};
const bit<2> TERM_CPU = {T_cpu};
const bit<8> CPU_REASON_NF = 1;
const bit<8> CPU_REASON_CHAIN = 2;

struct sfc_ctl_t {{
    bit<1> recirculate;
    bit<2> terminal;
    bit<9> out_port;
}}

struct meta_t {{
    sfc_meta_t sfc;
    sfc_ctl_t ctl;
{dg}}}

struct eg_meta_t {{
}}
"""

#: The packet-out branch's header field, kept out of shared PHV containers.  It is read only
#: in the branch a controller's packet takes (``if (hdr.packet_out.isValid())``) and never
#: deparsed, so ``p4c-barefoot`` 9.13.4 may overlay its container with an NF local that the
#: other branch zeroes (qos's ``bit<1> remark_red = 0;``); its metadata-initialisation
#: analysis then orders the two mutually exclusive tables and stops with "Compiler Bug:
#: Metadata initialization analysis incorrect.  Live ranges between tbl_programN and
#: tbl_programM overlap" (add_initialization.cpp skips its mutual-exclusion test for a
#: field the program initialises itself).  ``@pa_no_overlay`` costs 16 PHV bits.
_NO_OVERLAY = '@pa_no_overlay("ingress", "hdr.packet_out.egress_port")'

_INGRESS = _NO_OVERLAY + """
control SfcIngress(inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md, in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md, inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{locals}

    apply {{
        hdr.bridge.setValid();
        hdr.bridge.pad = 0;
        hdr.bridge.ingress_port = ig_intr_md.ingress_port;
        hdr.bridge.path_id = 0;
        hdr.bridge.cpu_reason = CPU_REASON_CHAIN;
        if (hdr.packet_out.isValid()) {{
            ig_tm_md.ucast_egress_port = (bit<9>) hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        }} else {{
            meta.sfc.ingress_port = ig_intr_md.ingress_port;
            meta.sfc.timestamp = ig_intr_md.ingress_mac_tstamp >> 10;
{core}
            hdr.bridge.ingress_port = meta.sfc.ingress_port;
            hdr.bridge.path_id = meta.sfc.path_id;
            if (meta.sfc.to_cpu == 1) {{
                hdr.bridge.cpu_reason = CPU_REASON_NF;
            }}
            if (meta.sfc.drop == 1 || meta.ctl.terminal == TERM_DROP) {{
                ig_dprsr_md.drop_ctl = 1;
            }} else if (meta.sfc.to_cpu == 1 || meta.ctl.terminal == TERM_CPU) {{
                ig_tm_md.ucast_egress_port = CPU_PORT;
            }} else if (meta.ctl.recirculate == 1) {{
                ig_tm_md.ucast_egress_port = RECIRC_PORT;
            }} else if (meta.sfc.mcast_grp != 0) {{
                ig_tm_md.mcast_grp_a = meta.sfc.mcast_grp;
            }} else if (meta.sfc.egress_valid == 1) {{
                ig_tm_md.ucast_egress_port = meta.sfc.egress_port;
            }} else {{
                ig_tm_md.ucast_egress_port = meta.ctl.out_port;
            }}
        }}{digests}
    }}
}}
"""

_EGRESS = """control SfcEgress(inout headers_t hdr, inout eg_meta_t meta, in egress_intrinsic_metadata_t eg_intr_md, in egress_intrinsic_metadata_from_parser_t eg_prsr_md, inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md, inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (eg_intr_md.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = (bit<16>) hdr.bridge.ingress_port;
            hdr.packet_in.path_id = hdr.bridge.path_id;
            hdr.packet_in.reason = hdr.bridge.cpu_reason;
            hdr.packet_in.pad = 0;
        }
        hdr.bridge.setInvalid();
    }
}
"""
