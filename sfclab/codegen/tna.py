"""The TNA emitter: the composed program for Tofino (``bf-p4c``), a ``Pipeline`` per pipe.

The placement pass puts the NFs on the pipelets of every pipe — the ingress and the
egress of each (Dejavu §3.3) — and :mod:`sfclab.passes.pipelets` plans how each
service path's packets cross them.  The program has one ``Pipeline`` per pipe, each with
its own ingress and egress controls holding that pipe's NF slots around sfclab's lean
core (:mod:`.tna_pipes`), and ``Switch(pipe0, pipe1, …) main``; the parsers and the egress
deparser are shared.  What crosses pipelets:

* ingress → egress of any pipe: the traffic manager (``ig_tm_md.ucast_egress_port``);
  the SFC header stays on the packet, with the token of the egress visit, and a
  ``bridge_t`` header bridges the ingress port, the path id and why a packet goes to
  the CPU;
* egress → the same pipe's ingress: its recirculation port (``68 + 128 * pipe`` on a
  Tofino 1), chosen by the ingress before;
* drops set ``ig_dprsr_md.drop_ctl`` / ``eg_dprsr_md.drop_ctl``; the CPU port's egress
  takes the SFC header off and adds ``packet_in``.

Besides, as before: the state API lowers to ``Register`` + ``RegisterAction`` (an NF's
``SfcRegisterAction`` as it is; one per read, per distinct write and per distinct add,
each declared after the variables its body reads), ``Counter``, ``DirectCounter``
(every action of its table counts), ``Meter`` (TNA's RED, 3, becomes ``SFC_RED``),
``Hash``; a digest is packed by the ingress deparser (``digest_type`` says which), so
NFs that emit digests run in an ingress pipelet; the IPv4 checksum (and TCP/UDP's, when
an NF asks) is recomputed with TNA's ``Checksum`` in the deparsers; the packet-out
branch's field has a PHV container of its own (``@pa_no_overlay``), which
``p4c-barefoot`` 9.13.4 needs not to crash ("Metadata initialization analysis
incorrect" when it overlays that field with an NF local).

Tofino gives a register one access per packet: an NF that may touch a register
twice on one packet path (a read and a write) is refused, naming the register and
the lines (use one ``SfcRegisterAction`` that computes the new value and the
result).
"""

from __future__ import annotations

from typing import ClassVar

from ..errors import CompileError, P4Error
from ..p4 import ast as A
from ..p4.catalog import NFDefinition, nf_includes
from ..p4.check import widths_of
from ..p4.paths import PORTABLE, check_one_access
from ..p4.tofino_rules import check_tofino
from ..passes.pipelets import recirculation_port
from ..passes.placement import TNA_CORE_STAGES, Pipelet, tna_extra_stages
from .compose import PARSER_GRAPH, TERMINALS, Composition, Slot
from .emitter import EmittedProgram, P4Emitter, Use
from .tna_pipes import TERM_VIA, egress_control, ingress_control, token_copy
from .v1model import _PACKET_IN, _PACKET_OUT, parser_states

__all__ = ["TnaEmitter", "TNA_CPU_PORT", "TOFINO_PIPE_STAGES", "pipelet_estimates"]

#: Match-action stages of each gress of a Tofino 1 pipe.
TOFINO_PIPE_STAGES = 12


def pipelet_estimates(comp: Composition) -> dict[Pipelet, int]:
    """The stages each pipelet of a TNA composition needs by the catalogue: sfclab's core
    (:data:`~sfclab.passes.placement.TNA_CORE_STAGES`) plus its NF slots' ``stages`` and
    their extra stages (:func:`~sfclab.passes.placement.tna_extra_stages`), a side-by-side
    group counting its largest (what placement adds up)."""
    cat = comp.compiled.catalog
    out: dict[Pipelet, int] = {}
    lay = comp.pipelets.layout
    extra = tna_extra_stages(cat, comp.compiled.paths)
    for pl in lay.pipelets():
        core = TNA_CORE_STAGES.ingress if pl.gress == "ingress" else TNA_CORE_STAGES.egress
        out[pl] = core + sum(max((cat.get(s.nf).stages if s.nf in cat else 0)
                                 + extra.get(s.nf, 0) for s in g) for g in lay.groups(pl))
    return out

#: The CPU (PCIe) port of pipe 0 on a Tofino 1.
TNA_CPU_PORT = 192
#: A VXLAN tunnel's headers: an egress parser extracts them only for an egress NF that
#: reads them (:meth:`TnaEmitter._parsed_headers`).
_TUNNEL = frozenset({"vxlan", "inner_ethernet", "inner_ipv4"})

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
        self._l4_nfs: set[str] = set()                  # which NFs do

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
            raise CompileError(f"tna cannot express this: {e.message} ({e.location})"
                               + (f"\n{e.context}" if e.context else ""), hint=e.hint) from None

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
        self._l4_nfs.add(use.nf)
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
        plan = comp.pipelets
        nf = self.nf_decls()                      # fills self._digests
        digests = self._digest_slots()
        parts = self.preamble()
        parts.append(self.print_decls(self._headers()))
        parts.append(self.print_decls(self.api_consts()))
        parts.append(self.print_decls(nf) if nf else "")
        parts.append(_TYPES.format(cpu=self.cpu_port, via=TERM_VIA,
                                   dg=self.digest_meta_fields()
                                   + ("    bit<16> l4_residual;\n" if self._l4_checksum else ""),
                                   **{f"T_{k}": v for k, v in TERMINALS.items()}))
        parts.append(self._parser("SfcIngressParser", "ingress"))
        parts.append(self._parser("SfcEgressParser", "egress"))
        pipes = plan.layout.pipes
        args = self.digest_args()
        for p in range(pipes):
            mine = [d for d in digests if d[1].pipelet.pipe == p]
            # one chain of exclusive conditions: a packet packs one digest (digest_type)
            flags = "".join(f"\n        {'if' if n == 0 else '} else if'} "
                            f"(meta.{s.instance}_dg.{i.name}_valid == 1) {{\n"
                            f"            ig_dprsr_md.digest_type = {k};"
                            for n, (k, s, i) in enumerate(mine)) + ("\n        }" if mine else "")
            parts.append(ingress_control(comp, p, args, flags))
            parts.append(self._ingress_deparser(p, mine))
            parts.append(egress_control(comp, p))
            parts.append(self._egress_deparser(p))
        parts.append("".join(f"Pipeline(SfcIngressParser(), SfcIngress{p}(), SfcIngressDeparser{p}(), "
                             f"SfcEgressParser(), SfcEgress{p}(), SfcEgressDeparser{p}()) pipe{p};\n"
                             for p in range(pipes))
                     + f"\nSwitch({', '.join(f'pipe{p}' for p in range(pipes))}) main;\n")
        self._notes(digests)
        return self._finish("\n".join(p for p in parts if p))

    def _notes(self, digests) -> None:
        comp, plan = self.comp, self.comp.pipelets
        lay = plan.layout
        self.notes.append(f"tna: {lay.pipes} pipe(s), {len(comp.slots)} NF slots on their "
                          f"pipelets; packets enter pipe {lay.entry_pipe} and leave through "
                          f"pipe {lay.exit_pipe}'s egress; CPU port {self.cpu_port}; "
                          f"{len(digests)} digest(s)")
        for pl in lay.pipelets():
            groups = lay.groups(pl)
            if groups:
                self.notes.append(f"  {pl}: " + " -> ".join(
                    " | ".join(s.instance for s in g) for g in groups))
        self.notes.append(f"tna: {plan.weighted_recirculations():.4g} weighted recirculations "
                          f"(egress -> the same pipe's ingress through its recirculation port "
                          f"{', '.join(str(recirculation_port(p)) for p in range(lay.pipes))}), "
                          f"as placement planned")
        est = pipelet_estimates(comp)
        self.notes.append("tna: stages by the estimates (sfclab's core + the NF slots): "
                          + ", ".join(f"{pl} {n}" for pl, n in est.items() if n))

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

    def _parser(self, name: str, gress: str) -> str:
        """The ingress or egress parser (shared by every pipe): intrinsic metadata (port
        metadata skipped, or the bridged header), then the packet; the SFC header's token
        is copied into ``meta`` where it is extracted."""
        init = "\n".join(f"        meta.{f} = 0;" for f in (
            "sfc.drop", "sfc.to_cpu", "ctl.terminal", "ctl.out_port", "ctl.keep")
            + (("sfc.l4_checksum", "l4_residual") if self._l4_checksum else ()))
        if gress == "ingress":
            init += "".join(f"\n        meta.{s.instance}_dg.{i.name}_valid = 0;"
                            for _, s, i in self.digest_slots())
            intr = ("out ingress_intrinsic_metadata_t ig_intr_md",
                    ["        pkt.extract(ig_intr_md);", "        pkt.advance(PORT_METADATA_SIZE);"],
                    ["        transition select(ig_intr_md.ingress_port) {",
                     "            CPU_PORT : parse_packet_out;",
                     "            default : parse_ethernet;", "        }", "    }",
                     "    state parse_packet_out {", "        pkt.extract(hdr.packet_out);",
                     "        transition parse_ethernet;"])
        else:
            intr = ("out egress_intrinsic_metadata_t eg_intr_md",
                    ["        pkt.extract(eg_intr_md);", "        pkt.extract(hdr.bridge);"],
                    ["        transition parse_ethernet;"])
        lines = [f"parser {name}(packet_in pkt, out headers_t hdr, out meta_t meta, {intr[0]}) {{",
                 "    state start {", *intr[1], init, *intr[2], "    }"]
        states = []
        for line in parser_states(self._parsed_headers(gress), "pkt", "hdr"):
            states.append(line)
            if line.strip() == "pkt.extract(hdr.sfc);":
                states += token_copy()
        if self._l4_checksum:
            lines.insert(1, "    Checksum() l4_checksum;")
            states = _subtract_l4(states)
        return "\n".join(lines + states) + "\n}\n"

    def _parsed_headers(self, gress: str) -> set[str]:
        """The headers a *gress* parser extracts: all the program's in ingress; in egress
        the tunnel's (VXLAN and the inner frame) only where an egress NF reads them, so that
        a VLAN, SFC, IPv6 and VXLAN packet stays within the Tofino parser's 160 bytes (the
        egress parser reads the intrinsic metadata and the bridged header first; past the
        outer transport the packet is payload, deparsed as it came)."""
        hs = set(self.comp.headers)
        if gress == "ingress":
            return hs
        egress_nfs = {s.nf for s in self.comp.slots if s.pipelet.gress == "egress"}
        used = {n.name for d in self.comp.nfs if d.name in egress_nfs and d.has_p4
                for n in A.walk(d.control) if isinstance(n, A.Member)
                and isinstance(n.expr, A.Name) and n.expr.name == "hdr"}
        if used & _TUNNEL:
            return hs
        return hs - _TUNNEL

    def _checksums(self, pipelet: Pipelet) -> tuple[str, str]:
        """A deparser's checksum declarations and updates: IPv4, and TCP/UDP when an NF of
        *pipelet* asks (the compiler computes each update's condition in the pipelet's
        last stages: none where no NF needs it)."""
        decl = "    Checksum() ipv4_checksum;\n" if "ipv4" in self.comp.headers else ""
        update = ("        if (hdr.ipv4.isValid()) {\n"
                  "            hdr.ipv4.hdr_checksum = ipv4_checksum.update({hdr.ipv4.version, "
                  "hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len, "
                  "hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, "
                  "hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});\n        }\n"
                  if decl else "")
        if any(s.nf in self._l4_nfs for s in self.comp.slots if s.pipelet == pipelet):
            decl += "    Checksum() tcp_checksum;\n    Checksum() udp_checksum;\n"
            update += "        if (meta.sfc.l4_checksum == 1) {\n" + "".join(
                f"            hdr.{h}.checksum = {h}_checksum.update({{hdr.ipv4.src_addr, "
                f"hdr.ipv4.dst_addr, hdr.{h}.src_port, hdr.{h}.dst_port, meta.l4_residual}}"
                f"{', true' if h == 'udp' else ''});\n" for h in ("tcp", "udp")) + "        }\n"
        return decl, update

    def _ingress_deparser(self, pipe: int, digests) -> str:
        decl = "".join(f"    Digest<{i.type.args[0].name}>() {s.instance}_{i.name};\n"
                       for _, s, i in digests)
        packs = "".join(f"        if (ig_dprsr_md.digest_type == {k}) {{\n"
                        f"            {s.instance}_{i.name}.pack(meta.{s.instance}_dg.{i.name});\n"
                        f"        }}\n" for k, s, i in digests)
        csum, update = self._checksums(Pipelet(pipe, "ingress"))
        return self._deparser(f"SfcIngressDeparser{pipe}", "inout headers_t hdr, in meta_t meta, "
                              "in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md",
                              ("bridge", *PARSER_GRAPH), decl + csum, update + packs)

    def _egress_deparser(self, pipe: int) -> str:
        csum, update = self._checksums(Pipelet(pipe, "egress"))
        return self._deparser(f"SfcEgressDeparser{pipe}", "inout headers_t hdr, in meta_t meta, "
                              "in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md",
                              ("packet_in", *PARSER_GRAPH), csum, update)

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


#: What the ingress bridges to the egress, laid out as packet_in's first fields (so the
#: CPU port's egress copies them whole).
_BRIDGE = A.HeaderDecl("bridge_t", (
    A.Field(A.BitType(16), "ingress_port"), A.Field(A.BitType(16), "path_id"),
    A.Field(A.BitType(8), "cpu_reason")))

_TYPES = """const bit<9> CPU_PORT = {cpu};
const bit<2> TERM_OUTPUT = {T_output};
const bit<2> TERM_DROP = {T_drop};
const bit<2> TERM_CPU = {T_cpu};
const bit<2> TERM_VIA = {via};
const bit<8> CPU_REASON_NF = 1;
const bit<8> CPU_REASON_CHAIN = 2;

/* The token of the visit: its state and the slots it runs (copied from the SFC header
 * by the parser, or set by the initializer). */
struct sfc_tok_t {{
    bit<8> state;
    bit<32> bitmap;
}}

/* The end of the visit: the rewinder's verdict, the port it names, and (an egress whose
 * NFs see the real EtherType) whether the SFC header stays on. */
struct sfc_ctl_t {{
    bit<2> terminal;
    bit<9> out_port;
    bit<1> keep;
}}

struct meta_t {{
    sfc_meta_t sfc;
    sfc_tok_t tok;
    sfc_ctl_t ctl;
{dg}}}
"""
