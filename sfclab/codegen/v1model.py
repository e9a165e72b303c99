"""The v1model emitter: the composed program for BMv2 (``p4c-bm2-ss``, ``simple_switch_grpc``).

Layout of the program it writes::

    #include <core.p4> / #define V1MODEL_VERSION 20200408 / #include <v1model.p4>
                       (the define selects v1model.p4's register<T, I>, counter<I>,
                       meter<I>: index-typed, as the NFs' state API is)
    headers (p4/include/sfc_headers.p4) + packet_in / packet_out controller headers
    NF controls, their state API lowered to v1model externs
    meta_t             sfc_meta_t, the core's sfc_ctl_t, a digest buffer per slot whose
                       NF packs digests (after the NFs: it holds their digest types)
    SfcParser          Dejavu-style merged parser: only the headers the NFs and classifiers use
    SfcIngress         packet-out, then the core (initializer, slots, branch tables, rewinder),
                       then the requests: drop > to-CPU > next pass > multicast > NF port > default
    SfcEgress          recirculate_preserving_field_list(0) for another pass (the deparsed
                       packet goes round with the token in its SFC header, so NF header
                       rewrites survive); packet_in header towards the CPU
    SfcComputeChecksum IPv4 header checksum
    SfcDeparser        every header, in parse order
    V1Switch(...) main;
"""

from __future__ import annotations

from typing import ClassVar

from ..p4 import ast as A
from ..p4.catalog import NFDefinition
from .compose import PARSER_GRAPH, TERMINALS, Composition, core_apply, core_locals
from .emitter import EmittedProgram, P4Emitter, Use
from .rewrite import rewrite

__all__ = ["V1ModelEmitter", "CPU_PORT"]

#: BMv2's CPU port in sfclab's programs (``simple_switch_grpc --cpu-port 255``).
CPU_PORT = 255

_V1_HASH = {"CRC16": "crc16", "CRC32": "crc32", "IDENTITY": "identity", "CSUM16": "csum16"}
_V1_COUNTER = {"PACKETS": "packets", "BYTES": "bytes", "PACKETS_AND_BYTES": "packets_and_bytes"}


def _member(obj: str, name: str) -> A.Member:
    return A.Member(A.TypeName(obj), name)


class V1ModelEmitter(P4Emitter):
    """sfclab's composed program for v1model."""

    arch = "v1model"
    includes = ("core.p4", "v1model.p4")
    RECIRCULATES_DEPARSED = True
    METER_BYTES_AND_PACKETS = False
    TRANSFORMS: ClassVar[dict[str, str]] = {
        "SfcRegister": "register_decl", "SfcRegister.read": "register_read",
        "SfcRegister.write": "keep_use", "SfcRegister.add": "register_add",
        "SfcRegisterAction": "register_action_decl",
        "SfcRegisterAction.execute": "register_action_execute",
        "SfcCounter": "counter_decl", "SfcCounter.count": "keep_use",
        "SfcDirectCounter": "direct_counter_decl",
        "SfcMeter": "meter_decl", "SfcMeter.execute": "meter_execute",
        "SfcHash": "drop_decl", "SfcHash.get": "hash_get",
        "SfcDigest": "digest_decl", "SfcDigest.pack": "digest_pack",
        "SfcL4Checksum": "l4_checksum_decl", "SfcL4Checksum.update": "l4_checksum_update",
    }
    ENUMS: ClassVar[dict[tuple[str, str], str]] = {
        **{("SfcHashAlgorithm", k): f"HashAlgorithm.{v}" for k, v in _V1_HASH.items()},
        **{("SfcCounterType", k): f"CounterType.{v}" for k, v in _V1_COUNTER.items()},
    }

    #: v1model.p4 declares register<T, I>, counter<I> and meter<I> from this version on.
    DEFINES: ClassVar[dict[str, int]] = {"V1MODEL_VERSION": 20200408}

    DEFAULT_CPU_PORT = CPU_PORT
    LABEL = "v1model (BMv2)"

    def __init__(self, comp: Composition) -> None:
        super().__init__(comp)
        self._index_temp: set[str] = set()     # register actions whose index is copied first

    def prepare(self, control: A.ControlDecl, nf: NFDefinition,
                insts: dict[str, A.Instance]) -> None:
        """Which register actions need their index kept in a variable: one that is not
        a plain name or constant, or that the action's body assigns."""
        self._index_temp = set()
        self._hdr = control.params[0].name
        for n in A.walk(control):
            if (isinstance(n, A.Call) and isinstance(n.func, A.Member)
                    and isinstance(n.func.expr, A.Name) and n.func.name == "execute"
                    and (ra := insts.get(n.func.expr.name)) is not None and n.args):
                idx = n.args[0]
                written = {to_text(a.lhs) for a in A.walk(ra) if isinstance(a, A.Assign)}
                if not isinstance(idx, (A.Name, A.Const)) or to_text(idx) in written:
                    self._index_temp.add(ra.name)

    # -- lowering the state API (see p4/README.md) -----------------------------------------
    def _retyped(self, use: Use, name: str, args: tuple[A.Node, ...] | None = None) -> A.Instance:
        t = use.inst.type
        return A.Instance(A.NamedType(name, t.args), args if args is not None else use.inst.args,
                          use.inst.name, None, use.inst.annotations, use.inst.pos)

    def register_decl(self, use: Use):
        return self._retyped(use, "register")

    def register_read(self, use: Use):
        return A.CallStmt(A.Call(A.Member(A.Name(use.inst.name), "read"),
                                 (use.lhs, *use.call.args)), use.stmt.pos)

    def register_add(self, use: Use):
        reg = A.Name(use.inst.name)
        index, delta = use.call.args
        return (A.CallStmt(A.Call(A.Member(reg, "read"), (use.lhs, index)), use.stmt.pos),
                A.Assign(use.lhs, A.Binary("+", use.lhs, delta)),
                A.CallStmt(A.Call(A.Member(reg, "write"), (index, use.lhs))))

    def register_action_decl(self, use: Use):
        """The action's cell, result (and index) as variables of the NF's control."""
        ra = use.inst
        t, i, u = ra.type.args  # type: ignore[union-attr]
        (fn,) = ra.body or (None,)
        out = [A.VarDecl(t, f"{ra.name}_value", None, (), ra.pos)]
        if fn is not None and len(fn.params) > 1:
            out.append(A.VarDecl(u, f"{ra.name}_rv"))
        if ra.name in self._index_temp:
            out.append(A.VarDecl(i, f"{ra.name}_index"))
        return tuple(out)

    def register_action_execute(self, use: Use):
        """``x = ra.execute(i);`` -> read the cell, run the body, write the cell back."""
        ra = use.inst
        reg = ra.args[0]
        (fn,) = ra.body or (None,)
        value = A.Name(f"{ra.name}_value")
        names = {fn.params[0].name: value.name}
        if len(fn.params) > 1:
            names[fn.params[1].name] = f"{ra.name}_rv"
        body = rewrite(fn.body, lambda n: A.Name(names[n.name], n.pos)
                       if isinstance(n, A.Name) and n.name in names else None)
        index = use.call.args[0]
        out: list[A.Node] = []
        if ra.name in self._index_temp:
            out.append(A.Assign(A.Name(f"{ra.name}_index"), index, use.stmt.pos))
            index = A.Name(f"{ra.name}_index")
        out += [A.CallStmt(A.Call(A.Member(reg, "read"), (value, index)), use.stmt.pos),
                A.Block(body.stmts),
                A.CallStmt(A.Call(A.Member(reg, "write"), (index, value)))]
        if use.lhs is not None:
            out.append(A.Assign(use.lhs, A.Name(f"{ra.name}_rv")))
        return tuple(out)

    def l4_checksum_decl(self, use: Use):
        """The update's two sums, as variables of the NF's control."""
        return (A.VarDecl(A.BitType(32), f"{use.inst.name}_delta", None, (), use.inst.pos),
                A.VarDecl(A.BitType(32), f"{use.inst.name}_sum"))

    def l4_checksum_update(self, use: Use):
        """RFC 1624 eqn. 3 in the NF: ``HC' = ~(~HC + ~m + m')`` for the valid TCP or UDP
        header, ones'-complement sums folded twice (a UDP checksum of 0 stays 0, one that
        comes out 0 is sent as 0xffff)."""
        old, new = use.call.args
        if not (isinstance(old, A.ListExpr) and isinstance(new, A.ListExpr)
                and len(old.items) == len(new.items) and old.items):
            self.unsupported("an L4 checksum update whose arguments are not two lists of "
                             "16-bit words of the same length", use.stmt, nf=use.nf)
        hdr = self._hdr
        delta, total = A.Name(f"{use.inst.name}_delta"), A.Name(f"{use.inst.name}_sum")
        terms = [A.Cast(A.BitType(32), A.Unary("~", w)) for w in old.items]
        terms += [A.Cast(A.BitType(32), w) for w in new.items]
        expr = terms[0]
        for t in terms[1:]:
            expr = A.Binary("+", expr, t)

        def fix(l4: str) -> list[A.Node]:
            csum = A.Member(A.Member(A.Name(hdr), l4), "checksum")
            low = A.Binary("&", total, A.Const(0xffff, base=16, text="0xffff"))
            fold = A.Assign(total, A.Binary("+", low, A.Binary(">>", total, A.Const(16))))
            return [A.Assign(total, A.Binary("+", A.Cast(A.BitType(32), A.Unary("~", csum)),
                                              delta)),
                    fold, fold,
                    A.Assign(csum, A.Unary("~", A.Slice(total, A.Const(15), A.Const(0))))]

        udp_csum = A.Member(A.Member(A.Name(hdr), "udp"), "checksum")
        udp = A.If(A.Binary("!=", udp_csum, A.Const(0)), A.Block(tuple(fix("udp") + [
            A.If(A.Binary("==", udp_csum, A.Const(0)),
                 A.Block((A.Assign(udp_csum, A.Const(0xffff, base=16, text="0xffff")),)))])))
        valid = lambda h: A.Call(A.Member(A.Member(A.Name(hdr), h), "isValid"))  # noqa: E731
        return (A.Assign(delta, expr, use.stmt.pos),
                A.If(valid("tcp"), A.Block(tuple(fix("tcp"))),
                     A.If(valid("udp"), A.Block((udp,)))))

    def drop_decl(self, use: Use):
        return self.remove()

    def counter_decl(self, use: Use):
        size, kind = use.inst.args
        return self._retyped(use, "counter", (size, self._enum(kind, "CounterType", use)))

    def direct_counter_decl(self, use: Use):
        (kind,) = use.inst.args
        return A.Instance(A.NamedType("direct_counter"), (self._enum(kind, "CounterType", use),),
                          use.inst.name, None, use.inst.annotations, use.inst.pos)

    def meter_decl(self, use: Use):
        size, kind = use.inst.args
        if isinstance(kind, A.Member) and kind.name == "PACKETS_AND_BYTES":
            self.unsupported("a meter on packets and bytes at once", use.inst, nf=use.nf,
                             hint="meter PACKETS or BYTES")
        return self._retyped(use, "meter", (size, self._enum(kind, "MeterType", use)))

    def meter_execute(self, use: Use):
        return A.CallStmt(A.Call(A.Member(A.Name(use.inst.name), "execute_meter"),
                                 (*use.call.args, use.lhs)), use.stmt.pos)

    def hash_get(self, use: Use):
        out = use.type_arg(0)
        if not isinstance(out, A.BitType):
            self.unsupported("a hash whose result is not bit<W>", use.inst, nf=use.nf)
        (algo,) = use.inst.args
        return A.CallStmt(A.Call(A.Name("hash"), (
            use.lhs, self._enum(algo, "HashAlgorithm", use),
            A.Cast(A.BitType(out.width), A.Const(0)), *use.call.args,
            A.Cast(A.BitType(64), A.Const(1 << out.width)))), use.stmt.pos)

    def digest_pack(self, use: Use):
        """``dg.d = data; digest<T>(1, dg.d);``: BMv2 reads a digest's fields when ingress
        ends, so digest the copy in the slot's buffer, which nothing after the call writes
        (p4c copies the fields into temporaries at the call too; the copy keeps the
        program's meaning from resting on that)."""
        copy = self.digest_copy(use)
        return (copy, A.CallStmt(A.Call(A.Name("digest"), (A.Const(1, 32), copy.lhs),
                                        (use.type_arg(0),))))

    def _enum(self, e: A.Node, target: str, use: Use) -> A.Node:
        if isinstance(e, A.Member) and isinstance(e.expr, A.TypeName):
            table = _V1_HASH if target == "HashAlgorithm" else _V1_COUNTER
            if e.name.upper() in table:       # SfcCounterType.BYTES, or already CounterType.bytes
                return _member(target, table[e.name.upper()])
        self.unsupported(f"{to_text(e)} as a {target}", use.inst, nf=use.nf)

    # -- the program -------------------------------------------------------------------------
    def program(self) -> EmittedProgram:
        comp = self.comp
        parts = self.preamble()
        parts.append(self.print_decls(self._headers()))
        parts.append(self.print_decls(self.api_consts()))
        nf = self.nf_decls()
        if nf:
            parts.append(self.print_decls(nf))
        parts.append(_CONTROL_TYPES.format(cpu=self.cpu_port, dg=self.digest_meta_fields(),
                                           **{f"TERM_{k.upper()}": v
                                              for k, v in TERMINALS.items()}))
        parts.append(self._parser())
        parts.append("control SfcVerifyChecksum(inout headers_t hdr, inout meta_t meta) {\n"
                     "    apply { }\n}\n")
        parts.append(self._ingress())
        parts.append(_EGRESS)
        parts.append(_CHECKSUM if "ipv4" in comp.headers else
                     "control SfcComputeChecksum(inout headers_t hdr, inout meta_t meta) {\n"
                     "    apply { }\n}\n")
        parts.append(self._deparser())
        parts.append("V1Switch(SfcParser(), SfcVerifyChecksum(), SfcIngress(), SfcEgress(), "
                     "SfcComputeChecksum(), SfcDeparser()) main;\n")
        self.notes.append(f"v1model: {len(comp.slots)} NF slots, parser extracts "
                          f"{', '.join(comp.headers)}; CPU port {self.cpu_port}; extra passes "
                          f"recirculate the deparsed packet")
        return self._finish("\n".join(parts))

    def _headers(self) -> list[A.Node]:
        out = []
        for d in self.header_decls():
            if isinstance(d, A.StructDecl) and d.name == "headers_t":
                ctl = (A.Field(A.NamedType("packet_in_t"), "packet_in"),
                       A.Field(A.NamedType("packet_out_t"), "packet_out"))
                out += [_PACKET_IN, _PACKET_OUT]
                d = A.StructDecl(d.name, ctl + d.fields, d.annotations, d.pos)
            out.append(d)
        return out

    def _parser(self) -> str:
        hs = set(self.comp.headers)
        lines = ["parser SfcParser(packet_in packet, out headers_t hdr, inout meta_t meta, "
                 "inout standard_metadata_t standard_metadata) {",
                 "    state start {",
                 "        transition select(standard_metadata.ingress_port) {",
                 f"            {self.cpu_port} : parse_packet_out;",
                 "            default : parse_ethernet;", "        }", "    }",
                 "    state parse_packet_out {", "        packet.extract(hdr.packet_out);",
                 "        transition parse_ethernet;", "    }"]
        lines += parser_states(hs, "packet", "hdr")
        lines.append("}\n")
        return "\n".join(lines)

    def _ingress(self) -> str:
        locals_ = "\n".join("    " + line if not line.startswith("\n") else line
                            for line in core_locals(self.comp))
        core = "\n".join(f"        {line}" for line in core_apply(self.comp,
                                                                 self.digest_args()))
        return _INGRESS.format(locals=locals_, core=core)

    def _deparser(self) -> str:
        emits = "\n".join(f"        packet.emit(hdr.{h});" for h in
                          ("packet_in", *[h for h in PARSER_GRAPH]))
        return ("control SfcDeparser(packet_out packet, in headers_t hdr) {\n    apply {\n"
                f"{emits}\n    }}\n}}\n")


def to_text(e: A.Node) -> str:
    from ..p4 import to_p4

    return to_p4(e).strip()


def parser_states(hs: set[str], pkt: str, hdr: str) -> list[str]:
    """The parser states from Ethernet on, for the headers in *hs* (shared with TNA)."""
    def sel(field: str, cases: list[tuple[str, str]]) -> list[str]:
        live = [(v, s) for v, s in cases if s.removeprefix("parse_") in hs]
        if not live:
            return ["        transition accept;"]
        return ([f"        transition select({field}) {{"]
                + [f"            {v} : {s};" for v, s in live]
                + ["            default : accept;", "        }"])

    l3 = [("ETHERTYPE_IPV4", "parse_ipv4"), ("ETHERTYPE_IPV6", "parse_ipv6")]
    after_eth = [("ETHERTYPE_SFC", "parse_sfc"), ("ETHERTYPE_VLAN", "parse_vlan"),
                 ("ETHERTYPE_MPLS", "parse_mpls"), *l3]
    l4 = [("IP_PROTO_TCP", "parse_tcp"), ("IP_PROTO_UDP", "parse_udp"),
          ("IP_PROTO_ICMP", "parse_icmp")]
    out: list[str] = []

    def state(name: str, body: list[str]) -> None:
        out.extend([f"    state parse_{name} {{", f"        {pkt}.extract({hdr}.{name}"
                    + (".next" if name == "mpls" else "") + ");", *body, "    }"])

    state("ethernet", sel(f"{hdr}.ethernet.ether_type", after_eth))
    state("sfc", sel(f"{hdr}.sfc.next_proto", after_eth[1:]))
    if "vlan" in hs:
        state("vlan", sel(f"{hdr}.vlan.ether_type", after_eth[2:]))
    if "mpls" in hs:
        state("mpls", [f"        transition select({hdr}.mpls.last.bos) {{",
                       "            1 : " + ("parse_ipv4" if "ipv4" in hs else "accept") + ";",
                       "            default : parse_mpls;", "        }"])
    if "ipv4" in hs:
        state("ipv4", sel(f"{hdr}.ipv4.protocol", l4))
    if "ipv6" in hs:
        state("ipv6", sel(f"{hdr}.ipv6.next_hdr", l4[:2]))
    for name in ("tcp", "icmp"):
        if name in hs:
            state(name, ["        transition accept;"])
    if "udp" in hs:
        state("udp", sel(f"{hdr}.udp.dst_port", [("UDP_PORT_VXLAN", "parse_vxlan")]))
    if "vxlan" in hs:
        state("vxlan", ["        transition " + ("parse_inner_ethernet" if "inner_ethernet" in hs
                                                 else "accept") + ";"])
    if "inner_ethernet" in hs:
        state("inner_ethernet", sel(f"{hdr}.inner_ethernet.ether_type",
                                    [("ETHERTYPE_IPV4", "parse_inner_ipv4")]))
    if "inner_ipv4" in hs:
        state("inner_ipv4", ["        transition accept;"])
    return out


_PACKET_IN = A.HeaderDecl("packet_in_t", (
    A.Field(A.BitType(16), "ingress_port"), A.Field(A.BitType(16), "path_id"),
    A.Field(A.BitType(8), "reason"), A.Field(A.BitType(8), "pad")),
    (A.Annotation("controller_header", '"packet_in"'),))
_PACKET_OUT = A.HeaderDecl("packet_out_t", (
    A.Field(A.BitType(16), "egress_port"), A.Field(A.BitType(16), "pad")),
    (A.Annotation("controller_header", '"packet_out"'),))

_CONTROL_TYPES = """/* The CPU port, and how a packet leaves at the end of its path. */
const bit<9> CPU_PORT = {cpu};
const bit<2> TERM_OUTPUT = {TERM_OUTPUT};
const bit<2> TERM_DROP = {TERM_DROP};
const bit<2> TERM_CPU = {TERM_CPU};
/* packet_in.reason */
const bit<8> CPU_REASON_NF = 1;
const bit<8> CPU_REASON_CHAIN = 2;

/* What the core decides in a pass (never seen by NFs). */
struct sfc_ctl_t {{
    bit<1> recirculate;
    bit<2> terminal;
    bit<9> out_port;
}}

struct meta_t {{
    sfc_meta_t sfc;
    sfc_ctl_t ctl;
{dg}}}
"""

_INGRESS = """control SfcIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {{
{locals}

    apply {{
        if (hdr.packet_out.isValid()) {{
            standard_metadata.egress_spec = (bit<9>) hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }}
        meta.sfc.ingress_port = standard_metadata.ingress_port;
        meta.sfc.timestamp = standard_metadata.ingress_global_timestamp;
{core}
        if (meta.sfc.drop == 1 || meta.ctl.terminal == TERM_DROP) {{
            mark_to_drop(standard_metadata);
        }} else if (meta.sfc.to_cpu == 1 || meta.ctl.terminal == TERM_CPU) {{
            standard_metadata.egress_spec = CPU_PORT;
        }} else if (meta.ctl.recirculate == 1) {{
            standard_metadata.egress_spec = 0;
        }} else if (meta.sfc.mcast_grp != 0) {{
            standard_metadata.mcast_grp = meta.sfc.mcast_grp;
        }} else if (meta.sfc.egress_valid == 1) {{
            standard_metadata.egress_spec = meta.sfc.egress_port;
        }} else {{
            standard_metadata.egress_spec = meta.ctl.out_port;
        }}
    }}
}}
"""

_EGRESS = """control SfcEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.ctl.recirculate == 1) {
            recirculate_preserving_field_list(0);
        } else if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = (bit<16>) meta.sfc.ingress_port;
            hdr.packet_in.path_id = meta.sfc.path_id;
            hdr.packet_in.reason = meta.sfc.to_cpu == 1 ? CPU_REASON_NF : CPU_REASON_CHAIN;
            hdr.packet_in.pad = 0;
        }
    }
}
"""

_CHECKSUM = """control SfcComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(), {hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr}, hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}
"""
