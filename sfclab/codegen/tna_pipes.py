"""The per-pipe controls of the TNA program: each pipelet's NF slots around sfclab's lean core.

Every pipe ``p`` of the Tofino gets its own ``SfcIngress<p>`` and ``SfcEgress<p>`` (and
``SfcIngressDeparser<p>``, for the digests of its slots), holding the slots the
placement put on that pipelet (:mod:`sfclab.passes.pipelets`).  The core is made to
take as few stages as possible and to share them with the NFs' tables:

* the parser copies the token (path id, state, bitmap, loop counter, the NF requests
  carried from earlier visits) from the SFC header into ``meta``, so a packet that
  comes back from a recirculation runs its first NF in stage 0;
* the ingress of the entry pipe classifies new packets (``initializer``, stage 0; on a
  network also ``arrival`` for packets from another switch); other pipes take only
  packets that carry the SFC header; where that ingress holds no NF slot, the
  classifier's action also ends the first visit (the rewinder's work, see
  :mod:`.tna_entries`) and the rewinder runs only for packets that come back, beside
  it in stage 0: the core's two stages, not three;
* the ``rewinder`` (keyed on path and state) writes only what the *next* visit reads —
  the SFC header's state, bitmap and loop counter — and the verdict of this one, so it
  shares stages with the NFs; a branch table that moves a packet to another path sets
  that path's verdict as well (it runs after the rewinder);
* the pass's end is one table, ``pass_end``, over the NFs' requests and the verdict:
  drop, to the CPU, to the port the rewinder named (the next pipelet, or a network's
  route), to the multicast group or the port an NF asked for, or to the path's exit
  port (constant entries; the first that matches wins);
* the egress ``rewinder`` keeps the SFC header for the recirculation into its pipe's
  ingress (``next_pipelet``), takes it off when the packet leaves, drops it, or (a
  network) forwards it to the next switch with the header on; an egress NF's drop is
  applied after the NFs.

The EtherType is the SFC header's while the packet crosses pipelets; a pipelet whose NFs
read or write ``hdr.ethernet.ether_type`` (vgw, sr_encap) gets the real one at its start
and puts the SFC header's back at its end.  Slots of one group run side by side: ``if``
on the first one's bit, ``else if`` on the next's (no path runs two of them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import CompileError
from ..p4 import ast as A
from ..passes.placement import Pipelet, asks_port
from .compose import (BRANCH_KEY_WIDTHS, SAVED_WIDTH, Composition, Slot, saved_field)
from .tna_entries import TERM_VIA, VERDICT_PARAMS, bare_entry

__all__ = ["ingress_control", "egress_control", "uses_ether_type", "token_copy",
           "TOKEN_FIELDS", "TERM_VIA"]

#: What the parser copies from the SFC header into ``meta`` (field, expression).
TOKEN_FIELDS = (("sfc.path_id", "hdr.sfc.path_id"), ("tok.state", "hdr.sfc.state"),
                ("tok.bitmap", "hdr.sfc.bitmap"), ("sfc.counter", "hdr.sfc.counter"),
                ("sfc.metadata", "hdr.sfc.metadata"),
                ("sfc.ingress_port", "(bit<9>) hdr.sfc.ingress_port"),
                ("sfc.egress_valid", "hdr.sfc.egress_valid"),
                ("sfc.egress_port", "hdr.sfc.egress_port"), ("sfc.mcast_grp", "hdr.sfc.mcast_grp"))


def token_copy(hdr: str = "hdr", meta: str = "meta") -> list[str]:
    """The parser statements that copy the token (after ``extract(hdr.sfc)``)."""
    return [f"        {meta}.{f} = {e.replace('hdr.', hdr + '.')};" for f, e in TOKEN_FIELDS]


def uses_ether_type(comp: Composition, slots: Sequence[Slot]) -> bool:
    """Whether an NF of *slots* reads or writes the EtherType."""
    defs = {d.name: d for d in comp.nfs}
    for s in slots:
        d = defs[s.nf]
        for n in A.walk(d.control):
            if (isinstance(n, A.Member) and n.name == "ether_type"
                    and isinstance(n.expr, A.Member) and n.expr.name == "ethernet"):
                return True
    return False


def _reads_timestamp(comp: Composition, slots: Sequence[Slot]) -> bool:
    defs = {d.name: d for d in comp.nfs}
    return any(isinstance(n, A.Member) and n.name == "timestamp"
               for s in slots for n in A.walk(defs[s.nf].control))


def _slots(comp: Composition, pl: Pipelet) -> list[Slot]:
    return [s for s in comp.slots if s.pipelet == pl]


def _groups(slots: Sequence[Slot]) -> list[list[Slot]]:
    out: dict[int, list[Slot]] = {}
    for s in slots:
        out.setdefault(s.group, []).append(s)
    return [g for _, g in sorted(out.items())]


def _indent(lines: Sequence[str], n: int) -> str:
    return "\n".join((" " * n + line) if line else "" for line in lines)


# --- the slots ----------------------------------------------------------------------------------

def _slot_runs(comp: Composition, slots: Sequence[Slot], extra: Mapping[int, str]) -> list[str]:
    """The slots' gates and calls: groups back to back, a group's slots side by side."""
    lines: list[str] = []
    for group in _groups(slots):
        for k, s in enumerate(group):
            gate = (f"meta.sfc.drop == 0 && meta.sfc.to_cpu == 0 && "
                    f"meta.tok.bitmap & 32w0x{1 << s.index:X} != 0")
            lines.append(f"{'if' if k == 0 else '} else if'} ({gate}) {{")
            if s.branches or s.saves:
                lines.append("    meta.sfc.metadata = 0;")
            lines.append(f"    {s.instance}.apply(hdr, meta.sfc"
                         + (f", {extra[s.index]}" if s.index in extra else "") + ");")
            for flag, table in ((s.saves, s.save_table), (s.loops, s.loop_table),
                                (s.branches, s.branch_table)):
                if flag:
                    lines.append(f"    {table}.apply();")
        lines.append("}")
    return lines


def _control_table(name: str, keys: Sequence[str], actions: Sequence[str], size: int) -> str:
    key_lines = "".join(f"\n            {k};" for k in keys)
    action_lines = "".join(f"\n            {a};" for a in actions)
    return f"""
    table {name} {{
        key = {{{key_lines}
        }}
        actions = {{{action_lines}
            @defaultonly NoAction;
        }}
        size = {size};
        const default_action = NoAction();
    }}"""


def _slot_tables(comp: Composition, slots: Sequence[Slot], gress: str) -> list[str]:
    """The save, loop and branch tables after the slots, with their actions."""
    sizes = comp.sizes()
    token = (f"{comp.token_keys[0]} : exact", f"{comp.token_keys[1]} : exact")
    out: list[str] = []
    saves = [f"save_md{k}" for k in range(comp.saved)]
    if any(s.saves for s in slots):
        out += [f"""
    action {a}() {{
        hdr.sfc.{saved_field(k)} = meta.sfc.metadata;
    }}""" for k, a in enumerate(saves)]
    out += [_control_table(s.save_table, token, saves, sizes["branch"]) for s in slots if s.saves]
    if any(s.loops for s in slots):
        out.append("""
    /* After a loop's run: the loop counter for the next run in this visit (the next
     * visit's comes from the rewinder). */
    action count_loop(bit<8> loops) {
        meta.sfc.counter = loops;
    }""")
    out += [_control_table(s.loop_table, token, ("count_loop",), sizes["branch"])
            for s in slots if s.loops]
    branching = [s for s in slots if s.branches]
    if branching and gress != "ingress":
        raise CompileError(f"slot {branching[0].instance} branches in an egress pipelet",
                           hint="report this as a bug in sfclab: placement keeps branching "
                                "NFs in an ingress pipelet")
    if branching:
        out.append("""
    /* After an NF with branches: move the packet to the service path of the outcome, and
     * end the visit as that path does (the rewinder ran before the slots). */
    action take_branch(bit<16> path_id, bit<32> bitmap, bit<2> terminal, bit<9> port,
                       bit<8> state, bit<32> next_bitmap, bit<8> loops) {
        meta.sfc.path_id = path_id;
        hdr.sfc.path_id = path_id;
        meta.tok.bitmap = bitmap;
        meta.ctl.terminal = terminal;
        meta.ctl.out_port = port;
        hdr.sfc.state = state;
        hdr.sfc.bitmap = next_bitmap;
        hdr.sfc.counter = loops;
    }""")
    for s in branching:
        keys = [*token]
        for k in ("meta.sfc.metadata", "meta.sfc.counter", "meta.sfc.ingress_port"):
            keys.append(f"{k} : {comp.key_kind('range', BRANCH_KEY_WIDTHS[k])}")
        keys += [f"hdr.sfc.{saved_field(k)} : {comp.key_kind('range', SAVED_WIDTH)}"
                 for k in s.saved_keys]
        out.append(_control_table(s.branch_table, keys, ("take_branch",), sizes["branch"]))
    return out


# --- the ingress ----------------------------------------------------------------------------------

_VERDICT_LINES = "".join(f"\n        {line}" for line in (
    "meta.ctl.terminal = terminal;", "meta.ctl.out_port = port;", "hdr.sfc.state = state;",
    "hdr.sfc.bitmap = next_bitmap;", "hdr.sfc.counter = loops;"))


def _entry_tables(comp: Composition, restore: bool) -> list[str]:
    """The initializer (and, on a network, arrival) of the entry pipe's ingress; with no
    NF slot there, their actions end the first visit too."""
    sizes = comp.sizes()
    bare = bare_entry(comp)
    vparams = "".join(f", {t} {n}" for n, t in VERDICT_PARAMS) if bare else ""
    vlines = _VERDICT_LINES if bare else ""
    keys = "".join(f"\n            {k.expr} : {comp.key_kind(k.kind, k.width)} @name(\"{k.name}\");"
                   for k in comp.init_keys)
    network_in = comp.options.network and comp.options.network_ingress
    param = ", bit<16> ingress_port" if network_in else ""
    port16, port9 = (("ingress_port", "(bit<9>) ingress_port") if network_in else
                     ("(bit<16>) ig_intr_md.ingress_port", "ig_intr_md.ingress_port"))
    swap = "" if restore else """
        hdr.sfc.next_proto = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_SFC;"""
    saved = "".join(f"\n        hdr.sfc.{saved_field(k)} = 0;" for k in range(comp.saved))
    out = [f"""
    /* Initializer: the chain classifiers give a new packet its token. */
    action set_token(bit<16> path_id, bit<32> bitmap{param}{vparams}) {{
        hdr.sfc.setValid();
        hdr.sfc.path_id = path_id;
        hdr.sfc.metadata = 0;
        hdr.sfc.version = 0;
        hdr.sfc.flags = 0;{swap}
        hdr.sfc.egress_port = 0;
        hdr.sfc.egress_valid = 0;
        hdr.sfc.reserved = 0;
        hdr.sfc.mcast_grp = 0;
        hdr.sfc.ingress_port = {port16};{saved}
        meta.sfc.path_id = path_id;
        meta.tok.state = 0;
        meta.tok.bitmap = bitmap;
        meta.sfc.counter = 0;
        meta.sfc.metadata = 0;
        meta.sfc.egress_valid = 0;
        meta.sfc.egress_port = 0;
        meta.sfc.mcast_grp = 0;
        meta.sfc.ingress_port = {port9};{vlines}
    }}

    action unclassified() {{
        ig_dprsr_md.drop_ctl = 1;
    }}

    table initializer {{
        key = {{{keys}
        }}
        actions = {{
            set_token;
            unclassified;
        }}
        size = {sizes['initializer']};
        default_action = unclassified();
    }}"""]
    if comp.options.network:
        out.append(f"""
    /* Arrival: a packet from another switch (or a server) carries its service path (spi)
     * and the index of its next NF (si, in hdr.sfc.state): this switch's token for what
     * is left.  NFs keep seeing the port it entered the network on. */
    action enter(bit<16> path_id, bit<32> bitmap{vparams}) {{
        meta.sfc.path_id = path_id;
        hdr.sfc.path_id = path_id;
        meta.tok.state = 0;
        meta.tok.bitmap = bitmap;
        hdr.sfc.flags = 0;
        meta.sfc.counter = 0;
        meta.sfc.egress_valid = 0;
        meta.sfc.egress_port = 0;
        meta.sfc.mcast_grp = 0;{vlines}
    }}

    action unknown_path() {{
        ig_dprsr_md.drop_ctl = 1;
    }}

    table arrival {{
        key = {{
            hdr.sfc.path_id : exact @name("spi");
            hdr.sfc.state : exact @name("si");
        }}
        actions = {{
            enter;
            unknown_path;
        }}
        size = {sizes['initializer']};
        default_action = unknown_path();
    }}""")
    return out


_INGRESS_END = """
    /* Rewinder: the end of this visit — the next visit's token in the SFC header, and
     * where the packet goes: the port named (the next pipelet's pipe, a network's
     * route), or the path's end (output, drop, CPU). */
    action next_pipelet(bit<8> state, bit<32> bitmap, bit<8> loops, bit<9> port) {{
        hdr.sfc.state = state;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = loops;
        meta.ctl.terminal = TERM_VIA;
        meta.ctl.out_port = port;
    }}

    action finish(bit<2> terminal, bit<9> port, bit<8> state, bit<32> bitmap, bit<8> loops) {{
        hdr.sfc.state = state;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = loops;
        meta.ctl.terminal = terminal;
        meta.ctl.out_port = port;
    }}

    table rewinder {{
        key = {{
            meta.sfc.path_id : exact;
            meta.tok.state : exact;
        }}
        actions = {{
            next_pipelet;
            finish;
        }}
        size = {size};
        default_action = finish(TERM_DROP, 0, 0, 0, 0);
    }}

    /* The pass's end: the NFs' requests and the rewinder's verdict, in one table.  Each
     * way out bridges what the egress needs (its ingress port, path, why to the CPU). */
    action drop_packet() {{
        ig_dprsr_md.drop_ctl = 1;
    }}

    action to_cpu_nf() {{
        ig_tm_md.ucast_egress_port = CPU_PORT;{bridge_nf}
    }}

    action to_cpu() {{
        ig_tm_md.ucast_egress_port = CPU_PORT;{bridge}
    }}

    action to_port() {{
        ig_tm_md.ucast_egress_port = meta.ctl.out_port;{bridge}
    }}

    action to_nf_port() {{
        ig_tm_md.ucast_egress_port = meta.sfc.egress_port;{bridge}
    }}

    action to_group() {{
        ig_tm_md.mcast_grp_a = meta.sfc.mcast_grp;{bridge}
    }}

    table pass_end {{
        key = {{
            hdr.sfc.isValid() : exact @name("hdr.sfc.$valid$");
            meta.sfc.drop : ternary;
            meta.sfc.to_cpu : ternary;
            meta.ctl.terminal : ternary;
            meta.sfc.mcast_grp : ternary;
            meta.sfc.egress_valid : ternary;
        }}
        actions = {{
            drop_packet;
            to_cpu_nf;
            to_cpu;
            to_port;
            to_nf_port;
            to_group;
        }}
        const entries = {{
            (false, _, _, _, _, _) : drop_packet();   /* no token: chains enter on pipe {entry} */
            (true, 1, _, _, _, _) : drop_packet();
            (true, _, _, TERM_DROP, _, _) : drop_packet();
            (true, _, 1, _, _, _) : to_cpu_nf();
            (true, _, _, TERM_CPU, _, _) : to_cpu();
            (true, _, _, TERM_VIA, _, _) : to_port();
            (true, _, _, _, 0, 1) : to_nf_port();
            (true, _, _, _, 0, _) : to_port();
        }}
        size = 16;
        const default_action = to_group();
    }}"""

def _bridge(reason: str) -> str:
    """An action's lines that bridge the ingress port, the path and why to the CPU."""
    return "".join(f"\n        {line}" for line in (
        "hdr.bridge.setValid();", "hdr.bridge.ingress_port = hdr.sfc.ingress_port;",
        "hdr.bridge.path_id = meta.sfc.path_id;",
        f"hdr.bridge.cpu_reason = CPU_REASON_{reason};"))


_PRAGMA = '@pa_no_overlay("ingress", "hdr.packet_out.egress_port")'
_INGRESS_PARAMS = ("inout headers_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t "
                   "ig_intr_md, in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, inout "
                   "ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md, inout "
                   "ingress_intrinsic_metadata_for_tm_t ig_tm_md")
_EGRESS_PARAMS = ("inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t "
                  "eg_intr_md, in egress_intrinsic_metadata_from_parser_t eg_prsr_md, inout "
                  "egress_intrinsic_metadata_for_deparser_t eg_dprsr_md, inout "
                  "egress_intrinsic_metadata_for_output_port_t eg_oport_md")


def _asks_port(comp: Composition, slots: Sequence[Slot]) -> bool:
    defs = {d.name: d for d in comp.nfs}
    return any(asks_port(defs[s.nf].control) for s in slots)


def ingress_control(comp: Composition, pipe: int, extra_args: Mapping[int, str],
                    digest_flags: str) -> str:
    """``SfcIngress<pipe>``: its slots and the ingress core."""
    pl = Pipelet(pipe, "ingress")
    slots = _slots(comp, pl)
    entry = pipe == comp.pipelets.layout.entry_pipe
    restore = uses_ether_type(comp, slots)
    locals_ = [f"    {s.nf}() {s.instance};" for s in slots]
    if entry:
        locals_ += _entry_tables(comp, restore)
    locals_ += _slot_tables(comp, slots, "ingress")
    locals_.append(_INGRESS_END.format(size=comp.sizes()["rewinder"], bridge=_bridge("CHAIN"),
                                       bridge_nf=_bridge("NF"),
                                       entry=comp.pipelets.layout.entry_pipe))
    start: list[str] = []
    if _reads_timestamp(comp, slots):
        start.append("meta.sfc.timestamp = ig_intr_md.ingress_mac_tstamp >> 10;")
    arrive = (["    if (hdr.sfc.flags[2:2] == 1) {", "        arrival.apply();", "    }"]
              if entry and comp.options.network else [])
    restore_lines = ["    hdr.ethernet.ether_type = hdr.sfc.next_proto;"] if restore else []
    bare = entry and bare_entry(comp)
    if bare:                # the rewinder only for packets that come back: beside the others
        start += ["if (!hdr.sfc.isValid()) {", "    initializer.apply();",
                  *(["} else if (hdr.sfc.flags[2:2] == 1) {", "    arrival.apply();"]
                    if comp.options.network else []),
                  "} else {", "    rewinder.apply();", "}"]
    elif entry:
        start += ["if (!hdr.sfc.isValid()) {", "    initializer.apply();",
                  *(["} else {", *restore_lines, *arrive] if restore_lines or arrive else []),
                  "}"]
    elif restore_lines:     # (a packet without the SFC header: pass_end drops it)
        start += ["if (hdr.sfc.isValid()) {", *restore_lines, "}"]
    end: list[str] = []
    if slots:
        end.append("hdr.sfc.metadata = meta.sfc.metadata;")
    if _asks_port(comp, slots):
        # the NFs' requests, for a later visit's pass_end: the port with its valid bit and
        # the reserved bits beside it in one write (Tofino: one PHV source and a constant)
        end += ["if (meta.sfc.egress_valid == 1) {", "    hdr.sfc.reserved = 0;",
                "    hdr.sfc.egress_valid = 1;", "    hdr.sfc.egress_port = meta.sfc.egress_port;",
                "}", "hdr.sfc.mcast_grp = meta.sfc.mcast_grp;"]
    if restore:
        end += ["hdr.sfc.next_proto = hdr.ethernet.ether_type;",
                "hdr.ethernet.ether_type = ETHERTYPE_SFC;"]
    body = [*start, *([] if bare else ["rewinder.apply();"]),
            *_slot_runs(comp, slots, extra_args), *end, "pass_end.apply();"]
    return f"""{_PRAGMA}
control SfcIngress{pipe}({_INGRESS_PARAMS}) {{
{chr(10).join(locals_)}

    apply {{
        if (hdr.packet_out.isValid()) {{
            /* the controller's packet: out of the port it names (the deparser does not
             * emit packet_out) */
            ig_tm_md.ucast_egress_port = (bit<9>) hdr.packet_out.egress_port;
            hdr.bridge.setValid();
            hdr.bridge.ingress_port = (bit<16>) ig_intr_md.ingress_port;
            hdr.bridge.path_id = 0;
            hdr.bridge.cpu_reason = CPU_REASON_CHAIN;
        }} else {{
{_indent(body, 12)}
        }}{digest_flags}
    }}
}}
"""


# --- the egress -----------------------------------------------------------------------------------

def egress_control(comp: Composition, pipe: int) -> str:
    """``SfcEgress<pipe>``: its slots, the egress core and the CPU's ``packet_in`` header."""
    pl = Pipelet(pipe, "egress")
    slots = _slots(comp, pl)
    restore = uses_ether_type(comp, slots)
    keep = "\n        meta.ctl.keep = 1;" if restore else ""
    take_off = ("" if restore else "\n        hdr.ethernet.ether_type = hdr.sfc.next_proto;")
    forward = f"""

    action forward(bit<16> spi, bit<8> si) {{
        hdr.sfc.path_id = spi;
        hdr.sfc.state = si;
        hdr.sfc.bitmap = 0;
        hdr.sfc.flags = 4;      /* in transit: the next switch looks it up in arrival */{keep}
    }}""" if comp.options.network else ""
    locals_ = [f"    {s.nf}() {s.instance};" for s in slots]
    locals_ += _slot_tables(comp, slots, "egress")
    locals_.append(f"""
    /* Rewinder: keep the SFC header for the recirculation into this pipe's ingress (with
     * the next visit's token), take it off as the packet leaves, or drop it. */
    action next_pipelet(bit<8> state, bit<32> bitmap, bit<8> loops) {{
        hdr.sfc.state = state;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = loops;{keep}
    }}

    action take_off() {{{take_off}
        hdr.sfc.setInvalid();
    }}

    action drop_packet() {{
        eg_dprsr_md.drop_ctl = 1;
    }}{forward}

    table rewinder {{
        key = {{
            meta.sfc.path_id : exact;
            meta.tok.state : exact;
        }}
        actions = {{
            next_pipelet;
            take_off;
            drop_packet;{chr(10) + '            forward;' if comp.options.network else ''}
        }}
        size = {comp.sizes()['rewinder']};
        default_action = drop_packet();
    }}""")
    body: list[str] = []
    if restore:
        body.append("hdr.ethernet.ether_type = hdr.sfc.next_proto;")
    if _reads_timestamp(comp, slots):
        body.append("meta.sfc.timestamp = eg_prsr_md.global_tstamp >> 10;")
    body += ["rewinder.apply();", *_slot_runs(comp, slots, {})]
    if slots:
        body += ["hdr.sfc.metadata = meta.sfc.metadata;",
                 "if (meta.sfc.drop == 1) {", "    eg_dprsr_md.drop_ctl = 1;", "}"]
    if restore:
        body += ["if (meta.ctl.keep == 1) {", "    hdr.sfc.next_proto = hdr.ethernet.ether_type;",
                 "    hdr.ethernet.ether_type = ETHERTYPE_SFC;", "}"]
    return f"""control SfcEgress{pipe}({_EGRESS_PARAMS}) {{
{chr(10).join(locals_)}

    apply {{
        if (eg_intr_md.egress_port == CPU_PORT) {{
            /* to the controller: every packet the chains send it carries the SFC header,
             * which comes off; the packet_in header says where it came from and why */
            hdr.ethernet.ether_type = hdr.sfc.next_proto;
            hdr.sfc.setInvalid();
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = hdr.bridge.ingress_port;
            hdr.packet_in.path_id = hdr.bridge.path_id;
            hdr.packet_in.reason = hdr.bridge.cpu_reason;
            hdr.packet_in.pad = 0;
        }} else if (hdr.sfc.isValid()) {{
{_indent(body, 12)}
        }}
    }}
}}
"""
