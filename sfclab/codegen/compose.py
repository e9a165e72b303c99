"""What the composed data plane is made of, whatever the architecture.

:func:`compose` turns the passes' result into a :class:`Composition`: the NF
slots of the default pipeline (``slot3_firewall`` runs NF type ``firewall`` when
bit 3 of the token's bitmap is set), the slots followed by a branch table, the
headers the parser must extract (what the NFs and the classifiers use, with
what those need below them: Dejavu's merged generic parser), and the keys of
the initializer (the union of the chains' classifier fields).

The ingress *core* — initializer, token load, slots with their token checks,
save and branch tables, rewinder, token store — is the same P4 on v1model and
TNA; it is written here once (:func:`core_locals`, :func:`core_apply`) and each
emitter wraps it with its architecture's prologue and epilogue.

A branch table keys on the metadata value the NF it follows left.  A condition on
an NF *before* that one (FlexMesh Fig. 9: ``QoS => (output : Flood ? flood_flag
== 0)`` tests l2fwd's flag after QoS) reads a *saved metadata* field of the SFC
header instead, ``hdr.sfc.saved_md<k>``: the FSM pass gives each such NF a field
(:attr:`~sfclab.passes.fsm.FSMPlan.saved`), a ``slot<i>_save`` table after the
NF's slot copies its value there, and the branch table of the testing slot keys
on it.  The fields exist only when a chain needs one (:attr:`Composition.saved`),
so programs without such conditions are as before.

>>> from sfclab.compiler import compile
>>> comp = compose(compile("chain a match tcp.dport == 80: firewall -> nat"))
>>> [s.instance for s in comp.slots], comp.headers
(['slot0_firewall', 'slot1_nat'], ('ethernet', 'sfc', 'ipv4', 'tcp', 'udp'))
>>> [(k.expr, k.kind) for k in comp.init_keys]
[('hdr.tcp.isValid()', 'ternary'), ('hdr.tcp.dst_port', 'ternary')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import CompileError
from ..ir.fields import FIELDS
from ..p4 import ast as A
from ..p4.catalog import NFDefinition, P4Catalog, load_default
from ..p4.tofino_rules import RANGE_KEY_BITS
from ..passes.fsm import FSMPlan, cond_source
from ..passes.pipelets import PipeletPlan, layout_of, plan_pipelets
from ..passes.placement import Pipelet, place_for

__all__ = ["CodegenOptions", "Slot", "InitKey", "Composition", "compose", "core_locals",
           "core_apply", "headers_of", "saved_field", "TERMINALS", "PARSER_GRAPH", "SAVED_WIDTH",
           "RANGE_BITS"]

#: Width of a saved metadata field of the SFC header (an NF's ``sfc.metadata``).
SAVED_WIDTH = 32


def saved_field(k: int) -> str:
    """The SFC header's field that keeps saved metadata value *k*.

    >>> saved_field(0)
    'saved_md0'
    """
    return f"saved_md{k}"


#: The widest range key each architecture takes (None: any width).  Tofino matches a
#: range on at most 5 nibbles (20 bits); a wider key of the composed program is a
#: ``ternary`` key there, and each range entry becomes the value/mask entries that cover
#: it (:func:`sfclab.codegen.entries.range_to_ternary`).
RANGE_BITS: dict[str, int | None] = {"v1model": None, "tna": RANGE_KEY_BITS}

#: The rewinder's ``finish(terminal, port)`` codes.
TERMINALS = {"output": 0, "drop": 1, "cpu": 2}

#: Parser states: header -> (the headers it can follow, how it is reached).
#: Order is the deparser's emit order as well.
PARSER_GRAPH: dict[str, tuple[str, ...]] = {
    "ethernet": (),
    "sfc": ("ethernet",),
    "vlan": ("ethernet",),
    "mpls": ("ethernet", "vlan"),
    "ipv4": ("ethernet", "vlan", "mpls"),
    "ipv6": ("ethernet", "vlan"),
    "tcp": ("ipv4", "ipv6"),
    "udp": ("ipv4", "ipv6"),
    "icmp": ("ipv4",),
    "vxlan": ("udp",),
    "inner_ethernet": ("vxlan",),
    "inner_ipv4": ("inner_ethernet",),
}
_ALWAYS = ("ethernet", "sfc")
#: A header's parser needs these first (a transport needs its IP, VXLAN needs UDP …).
_NEEDS = {"tcp": ("ipv4",), "udp": ("ipv4",), "icmp": ("ipv4",), "vxlan": ("udp", "ipv4"),
          "inner_ethernet": ("vxlan", "udp", "ipv4"), "inner_ipv4": ("inner_ethernet", "vxlan",
                                                                     "udp", "ipv4"),
          "mpls": ("ipv4",)}


@dataclass(frozen=True, slots=True, kw_only=True)
class CodegenOptions:
    """Knobs of the composed program.

    * ``cpu_port``: the port packets to and from the controller use (BMv2's
      ``--cpu-port``; 255 by default on v1model, 192 on Tofino's pipe 0);
    * ``default_port``: where a path ending in ``output`` goes when no NF asked
      for a port;
    * ``recirc_port``: TNA's recirculation port (68: pipe 0 on Tofino 1);
    * ``*_size``: sizes of the control tables (grown to fit the entries, with room
      for four times as many so chains can be added at run time);
    * ``nf_entries``: ``"examples"`` installs each NF manifest's example entries
      in every slot of that NF, ``"none"`` leaves NF tables empty;
    * ``bindings``: values of run-time symbols used as multibranch cases;
    * ``keep_keys``, ``keep_headers``, ``keep_branches``, ``keep_loops``: initializer
      keys, parsed headers and slots' branch and loop tables to keep even if no
      chain needs them (those of the program on a switch, so a changed
      chain set compiles to the same program when it can: an update by entries);
    * ``keep_saves``, ``keep_saved_keys``: slots' save tables, and the saved
      metadata fields each slot's branch table keys on (``(slot, (k, …))``), to keep;
    * ``saved_fields``: saved metadata fields the SFC header holds at least (the
      switches of a network agree on one header);
    * ``network``: the program is one switch of a network (:mod:`.network`): an
      ``arrival`` table takes packets that come in with the SFC header from
      another switch or a server, and the rewinder can ``forward`` a packet with
      its header kept or ``deliver`` it to its egress port (:func:`core_locals`);
    * ``server_port``: where a one-switch program's chains with NFs that run on a
      server only (P4SFC) reach that server (:mod:`.detour`; None: a free data port);
    * ``network_ingress``: (network programs) the classifier's entry, not the
      switch's ingress port, says where the packet entered the network:
      ``set_token`` takes the ingress's *network port* (``ingress_port``, one number
      per point where a chain enters: ``NetworkProgram.ingress_ports``), which the
      SFC header carries to every switch, so an NF reading ``sfc.ingress_port``
      sees the same number wherever it runs.
    """

    cpu_port: int | None = None
    default_port: int = 1
    recirc_port: int = 68
    initializer_size: int = 1024
    branch_size: int = 256
    rewinder_size: int = 1024
    nf_entries: str = "examples"
    bindings: dict[str, int] = field(default_factory=dict)
    keep_keys: tuple["InitKey", ...] = ()
    keep_headers: tuple[str, ...] = ()
    keep_branches: tuple[int, ...] = ()
    keep_loops: tuple[int, ...] = ()
    keep_saves: tuple[int, ...] = ()
    keep_saved_keys: tuple[tuple[int, tuple[int, ...]], ...] = ()
    saved_fields: int = 0
    network: bool = False
    server_port: int | None = None
    network_ingress: bool = False

    @classmethod
    def keeping(cls, comp: "Composition", **kw) -> "CodegenOptions":
        """These options for a chain set that must fit the program *comp* describes."""
        import dataclasses

        kept = dict(keep_keys=comp.init_keys, keep_headers=comp.headers,
                    keep_branches=tuple(s.index for s in comp.slots if s.branches),
                    keep_loops=tuple(s.index for s in comp.slots if s.loops),
                    keep_saves=tuple(s.index for s in comp.slots if s.saves),
                    keep_saved_keys=tuple((s.index, s.saved_keys) for s in comp.slots
                                          if s.saved_keys),
                    saved_fields=comp.saved)
        return dataclasses.replace(comp.options, **{**kept, **kw})


@dataclass(frozen=True, slots=True)
class Slot:
    """Position ``index`` of the default pipeline, running NF type ``nf``."""

    index: int
    nf: str
    branches: bool
    loops: bool = False
    #: A save table follows the NF (it keeps the NF's value for a later branch).
    saves: bool = False
    #: The saved metadata fields (``hdr.sfc.saved_md<k>``) the branch table keys on.
    saved_keys: tuple[int, ...] = ()
    #: TNA: the pipelet that runs the slot, and its group there (slots of one group run
    #: side by side: :mod:`sfclab.passes.pipelets`); None on one pipeline (v1model).
    pipelet: Pipelet | None = None
    group: int = 0

    @property
    def instance(self) -> str:
        return f"slot{self.index}_{self.nf}"

    @property
    def save_table(self) -> str:
        return f"slot{self.index}_save"

    @property
    def branch_table(self) -> str:
        return f"slot{self.index}_branch"

    @property
    def loop_table(self) -> str:
        return f"slot{self.index}_loop"


@dataclass(frozen=True, slots=True)
class InitKey:
    """One key of the initializer table."""

    field: str          # classifier field ("tcp.dport") or "<header>.$valid$"
    expr: str           # P4 expression
    kind: str           # "ternary" or "range"
    width: int

    @property
    def name(self) -> str:
        """The P4Runtime match field name (what p4c calls it)."""
        return self.expr.replace(".isValid()", ".$valid$")


@dataclass(frozen=True, slots=True)
class Composition:
    """Everything an emitter needs besides the architecture."""

    compiled: object                    # sfclab.compiler.CompiledChains
    slots: tuple[Slot, ...]
    nfs: tuple[NFDefinition, ...]       # one per NF type, in slot order
    headers: tuple[str, ...]
    init_keys: tuple[InitKey, ...]
    options: CodegenOptions
    #: What the compiler puts before table names in P4Info ("pipe." for bf-p4c).
    table_prefix: str = ""
    #: Saved metadata fields in the SFC header (``saved_md0`` …; 0: the library's header).
    saved: int = 0
    #: The widest range key the architecture takes (:data:`RANGE_BITS`; None: any).
    range_bits: int | None = None
    #: TNA: the slots on the pipelets of every pipe and each path's visits of them
    #: (:mod:`sfclab.passes.pipelets`); None on one pipeline (v1model).
    pipelets: PipeletPlan | None = None

    def control(self, pipelet: Pipelet | None = None) -> str:
        """The control a table of *pipelet* lives in (None: where packets enter):
        ``SfcIngress`` on one pipeline, ``SfcIngress0``, ``SfcEgress1`` … per pipe on TNA."""
        if self.pipelets is None:
            return "SfcIngress"
        pl = pipelet or Pipelet(self.pipelets.layout.entry_pipe, "ingress")
        return f"Sfc{'Ingress' if pl.gress == 'ingress' else 'Egress'}{pl.pipe}"

    def table(self, name: str, pipelet: Pipelet | None = None) -> str:
        """A table's P4Runtime name (bf-p4c puts the pipeline's name in front on TNA:
        ``pipe0.SfcIngress0.rewinder``)."""
        if self.pipelets is None:
            return f"{self.table_prefix}{self.control()}.{name}"
        pl = pipelet or Pipelet(self.pipelets.layout.entry_pipe, "ingress")
        return f"pipe{pl.pipe}.{self.control(pl)}.{name}"

    def action(self, name: str, pipelet: Pipelet | None = None) -> str:
        """An action's P4Runtime name (no pipeline in front, on TNA either)."""
        return f"{self.control(pipelet)}.{name}"

    @property
    def token_keys(self) -> tuple[str, str]:
        """The control tables' keys for the path id and the state: the SFC header's on one
        pipeline, their copies the parser made on TNA (``meta.tok.state``)."""
        if self.pipelets is None:
            return ("hdr.sfc.path_id", "hdr.sfc.state")
        return ("meta.sfc.path_id", "meta.tok.state")

    @property
    def fsm(self) -> FSMPlan:
        """The plan the entries drive: a state per pipelet visit on TNA, a state per pass
        of the one pipeline on v1model (the compiled chains' ``fsm``)."""
        return self.pipelets.fsm if self.pipelets is not None else self.compiled.fsm

    def key_kind(self, kind: str, width: int) -> str:
        """The match kind the program gives a control-table key of *kind* and *width*
        bits: a range wider than :attr:`range_bits` is matched as ``ternary`` (its
        entries are the value/mask entries covering each range).

        >>> from sfclab.compiler import compile
        >>> c = compose(compile("chain a match tcp.dport == 80: firewall"), arch="tna")
        >>> c.key_kind("range", 32), c.key_kind("range", 9), c.key_kind("ternary", 32)
        ('ternary', 'range', 'ternary')
        """
        if kind == "range" and self.range_bits is not None and width > self.range_bits:
            return "ternary"
        return kind

    def sizes(self) -> dict[str, int]:
        """Sizes of the control tables, grown to hold the plan's entries four times."""
        fsm = self.fsm
        n_init = max(1, len(fsm.initializer)) * 4
        for k in self.init_keys:      # a range key matched as ternary: 2W entries a range
            if k.kind == "range" and self.key_kind(k.kind, k.width) == "ternary":
                n_init *= 2 * k.width
        n_branch = max([max(sum(self._branch_rows(b) for b in fsm.branches
                                if b.slot == s.index),
                            sum(1 for e in fsm.saves if e.slot == s.index)) * 4
                        for s in self.slots], default=0)
        n_rew = len(fsm.rewinder) * 4
        o = self.options
        return {"initializer": max(o.initializer_size, _pow2(n_init)),
                "branch": max(o.branch_size, _pow2(n_branch)),
                "rewinder": max(o.rewinder_size, _pow2(n_rew))}

    def _branch_rows(self, b) -> int:
        """Table entries branch *b* is counted as: one (the 4-fold room covers a
        multibranch's values and a `!=`'s two ranges) where every key takes ranges; where
        a range is matched as ternary (:meth:`key_kind`), the value/mask entries of its
        ranges: ``2 * W`` at most."""
        if self.range_bits is None:
            return 1
        if b.kind == "case":
            return max(1, len(b.cases))
        if b.cond is None or (b.kind == "then" and b.cond.op == "=="):
            return 1
        width = {"ingress_port": 9, "counter": 8}.get(cond_source(b.cond), SAVED_WIDTH)
        if self.key_kind("range", width) != "ternary":
            return 2
        return 2 * width      # one range: 2W - 2 at most; a range's complement: 2W


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _headers_used(nodes: Iterable[A.Node]) -> set[str]:
    out = set()
    for root in nodes:
        for n in A.walk(root):
            if (isinstance(n, A.Member) and isinstance(n.expr, A.Name) and n.expr.name == "hdr"):
                out.add(n.name)
    return out


def headers_of(nfs: Iterable[NFDefinition]) -> tuple[str, ...]:
    """The headers a parser must extract for NFs *nfs* (and what they need below them)."""
    return _closure(_headers_used(d.control for d in nfs if d.has_p4))


def _closure(used: set[str]) -> tuple[str, ...]:
    need = set(used) | set(_ALWAYS)
    for h in list(need):
        need.update(_NEEDS.get(h, ()))
    unknown = need - PARSER_GRAPH.keys()
    if unknown:
        raise CompileError(f"no parser state for header(s) {', '.join(sorted(unknown))}",
                           hint="an NF uses a header that is not in p4/include/sfc_headers.p4")
    return tuple(h for h in PARSER_GRAPH if h in need)


def _init_keys(chains, keep: tuple[InitKey, ...] = ()) -> tuple[InitKey, ...]:
    kinds: dict[str, str] = {k.field: k.kind for k in keep if not k.field.endswith(".$valid$")}
    for c in chains:
        for t in (c.match.terms if c.match else ()):
            k = "range" if t.kind == "range" or t.negate else "ternary"
            kinds[t.field] = "range" if kinds.get(t.field) == "range" else k
    keys: list[InitKey] = []
    valid_done: set[str] = set()
    for name, kind in kinds.items():
        f = FIELDS[name]
        if f.header and f.header not in ("ethernet",) and f.header not in valid_done:
            valid_done.add(f.header)
            keys.append(InitKey(f"{f.header}.$valid$", f"hdr.{f.header}.isValid()", "ternary", 1))
        expr = "meta.sfc.ingress_port" if name == "std.ingress_port" else f.p4
        keys.append(InitKey(name, expr, kind, f.width))
    if keep and keys != list(keep) and {k.field for k in keys} <= {k.field for k in keep}:
        keys = list(keep)          # same fields, kept in the installed order
    if not keys:   # a keyless table only runs its default action: give entries a key
        keys.append(InitKey("std.ingress_port", "meta.sfc.ingress_port", "ternary", 9))
    return tuple(keys)


def compose(compiled, *, catalog: P4Catalog | None = None,
            options: CodegenOptions | None = None, arch: str | None = None) -> Composition:
    """The :class:`Composition` of a compiled chain set (for *arch*, by default the
    one it was compiled for)."""
    if compiled.fsm is None or compiled.pipeline is None:
        raise CompileError("the chains were compiled without the pipeline and fsm passes",
                           hint="use sfclab.compile(chains) with the default passes")
    cat = catalog or (compiled.catalog if isinstance(compiled.catalog, P4Catalog)
                      else load_default())
    options = options or CodegenOptions()
    arch = arch or compiled.arch
    plan = _pipelet_plan(compiled, cat) if arch == "tna" else None
    fsm = plan.fsm if plan is not None else compiled.fsm
    if plan is not None:           # slot numbers are the placement's: keep nothing by index
        options = dataclasses.replace(options, keep_branches=(), keep_loops=(), keep_saves=(),
                                      keep_saved_keys=())
    branching = {b.slot for b in fsm.branches} | {
        i for i in options.keep_branches if i < len(fsm.slots)}
    looping = {slot for f in fsm.paths for _, slot, _ in f.loop_counts} | {
        i for i in options.keep_loops if i < len(fsm.slots)}
    saving = {e.slot for e in fsm.saves} | {i for i in options.keep_saves if i < len(fsm.slots)}
    keys: dict[int, set[int]] = {i: set(ks) for i, ks in options.keep_saved_keys
                                 if i < len(fsm.slots)}
    for b in fsm.branches:
        if b.saved is not None:
            keys.setdefault(b.slot, set()).add(b.saved)
    where = ({s.index: (s.pipelet, s.group) for s in plan.layout.slots} if plan is not None
             else {})
    slots = tuple(Slot(i, nf, i in branching, i in looping, i in saving,
                       tuple(sorted(keys.get(i, ()))), *where.get(i, (None, 0)))
                  for i, nf in enumerate(fsm.slots))
    defs: dict[str, NFDefinition] = {}
    for s in slots:
        d = cat.definition(s.nf)
        if not d.has_p4:
            raise CompileError(
                f"NF {s.nf!r} has no P4: it runs on a server only (P4SFC: not offloadable)",
                hint="the offload pass lists what must run on a server; keep such NFs out of "
                     "the switch's chains, or give the NF a P4 implementation")
        defs[s.nf] = d
    used = _headers_used(d.control for d in defs.values())
    chains = list(compiled.chains)
    used |= {FIELDS[t.field].header for c in chains for t in (c.match.terms if c.match else ())
             if FIELDS[t.field].header}
    used |= set(options.keep_headers)
    saved = max(fsm.n_saved, options.saved_fields,
                max((k + 1 for s in slots for k in s.saved_keys), default=0))
    return Composition(compiled, slots, tuple(defs.values()), _closure(used),
                       _init_keys(chains, options.keep_keys), options,
                       "pipe." if arch == "tna" else "", saved, RANGE_BITS.get(arch), plan)


def _pipelet_plan(compiled, catalog) -> PipeletPlan:
    """Where the NFs run on a Tofino's pipelets and how each path crosses them: the
    placement pass's plan, or (a network's switch, compiled without it) one made here."""
    o = compiled.options
    result = compiled.placement
    if result is None:
        result = place_for(compiled.paths, catalog, "tna", o, orders=[compiled.fsm.slots])
    layout = layout_of(result, entry_pipe=o.entry_pipe, exit_pipe=o.exit_pipe)
    return plan_pipelets(layout, compiled.paths, limits=o.widths, saved=dict(compiled.fsm.saved))


# --- the shared ingress core (P4 text) ---------------------------------------------------------

def core_locals(comp: Composition) -> list[str]:
    """Declarations of the ingress core: NF instances, the control tables and their actions."""
    sizes = comp.sizes()
    out = [f"{s.nf}() {s.instance};" for s in comp.slots]
    keys = "".join(f"\n            {k.expr} : {comp.key_kind(k.kind, k.width)} @name(\"{k.name}\");"
                   for k in comp.init_keys)
    key_prop = f"""
        key = {{{keys}
        }}"""
    saved_init = "".join(f"\n        hdr.sfc.{saved_field(k)} = 0;" for k in range(comp.saved))
    ingress = comp.options.network and comp.options.network_ingress
    param, ingress_value = ((", bit<16> ingress_port", "ingress_port") if ingress else
                            ("", "(bit<16>) meta.sfc.ingress_port"))
    out.append(f"""
    /* Initializer: the chain classifiers give a packet its token{_INGRESS_NOTE if ingress else "."} */
    action set_token(bit<16> path_id, bit<32> bitmap{param}) {{
        hdr.sfc.setValid();
        hdr.sfc.path_id = path_id;
        hdr.sfc.state = 0;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = 0;
        hdr.sfc.metadata = 0;
        hdr.sfc.version = 0;
        hdr.sfc.flags = 0;
        hdr.sfc.next_proto = hdr.ethernet.ether_type;
        hdr.sfc.egress_port = 0;
        hdr.sfc.egress_valid = 0;
        hdr.sfc.reserved = 0;
        hdr.sfc.mcast_grp = 0;
        hdr.sfc.ingress_port = {ingress_value};{saved_init}
    }}

    action unclassified() {{
        meta.ctl.terminal = TERM_DROP;
    }}

    table initializer {{{key_prop}
        actions = {{
            set_token;
            unclassified;
        }}
        size = {sizes['initializer']};
        default_action = unclassified();
    }}""")
    saves = tuple(f"save_md{k}" for k in range(comp.saved))      # save_md<k>: into saved_md<k>
    if any(s.saves for s in comp.slots):
        out.append("""
    /* After an NF whose value a later branch tests: keep it in the token (its saved
     * metadata field), since the NFs in between set their own. */""" + "".join(f"""
    action {a}() {{
        hdr.sfc.{saved_field(k)} = meta.sfc.metadata;
    }}""" for k, a in enumerate(saves)))
    for s in comp.slots:
        if s.saves:
            out.append(_slot_table(s.save_table, _BRANCH_KEYS[:2], saves, sizes["branch"]))
    if any(s.branches for s in comp.slots):
        out.append("""
    /* After an NF with branches: move the packet to the service path of the outcome. */
    action take_branch(bit<16> path_id, bit<32> bitmap) {
        hdr.sfc.path_id = path_id;
        hdr.sfc.bitmap = bitmap;
        meta.sfc.path_id = path_id;
    }""")
    for s in comp.slots:
        if s.branches:
            keys = _branch_keys(comp) + tuple(
                f"hdr.sfc.{saved_field(k)} : {comp.key_kind('range', SAVED_WIDTH)}"
                for k in s.saved_keys)
            out.append(_slot_table(s.branch_table, keys, ("take_branch",), sizes["branch"]))
    if any(s.loops for s in comp.slots):
        out.append("""
    /* After a loop's run: the loop counter (runs so far) for the next run in this pass. */
    action count_loop(bit<8> loops) {
        meta.sfc.counter = loops;
        hdr.sfc.counter = loops;
    }""")
    for s in comp.slots:
        if s.loops:
            out.append(_slot_table(s.loop_table, _BRANCH_KEYS[:2], ("count_loop",),
                                   sizes["branch"]))
    if comp.options.network:
        out.append(_ARRIVAL.format(size=sizes["initializer"]))
    steering = _STEERING_ACTIONS if comp.options.network else ""
    out.append(f"""{steering}
    /* Rewinder: at the end of a pass, go round again with the next state, or finish. */
    action next_pass(bit<8> state, bit<32> bitmap, bit<8> loops) {{
        hdr.sfc.state = state;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = loops;
        meta.ctl.recirculate = 1;
    }}

    action finish(bit<2> terminal, bit<9> port) {{
        meta.ctl.terminal = terminal;
        meta.ctl.out_port = port;
    }}

    table rewinder {{
        key = {{
            hdr.sfc.path_id : exact;
            hdr.sfc.state : exact;
        }}
        actions = {{
            next_pass;
            finish;{_STEERING_REFS if comp.options.network else ""}
        }}
        size = {sizes['rewinder']};
        default_action = finish(TERM_DROP, 0);
    }}""")
    return out


_INGRESS_NOTE = """, and the
     * network port of the point where the packet entered the network (the same
     * number on every switch: what NFs read as sfc.ingress_port)."""

#: Network programs only (``CodegenOptions.network``): packets from other switches.
_ARRIVAL = """
    /* Arrival: a packet that comes in with the SFC header from another switch (or
     * a server) carries its service path (spi) and the index of its next NF (si,
     * in hdr.sfc.state), NSH-style; this switch's token for what is left.  NFs keep
     * seeing the port the packet entered the network on (hdr.sfc.ingress_port). */
    const bit<2> TERM_FORWARD = 3;

    action enter(bit<16> path_id, bit<32> bitmap) {{
        hdr.sfc.path_id = path_id;
        hdr.sfc.state = 0;
        hdr.sfc.bitmap = bitmap;
        hdr.sfc.counter = 0;
        hdr.sfc.flags = 0;
        hdr.sfc.egress_valid = 0;
        hdr.sfc.egress_port = 0;
        hdr.sfc.mcast_grp = 0;
    }}

    action unknown_path() {{
        meta.ctl.terminal = TERM_DROP;
        hdr.sfc.setInvalid();
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
        size = {size};
        default_action = unknown_path();
    }}"""

_STEERING_ACTIONS = """
    /* Leave for the next switch (or a server) with the SFC header on: the path and
     * the index of the next NF; the route decides the port, not an NF's request. */
    action forward(bit<16> spi, bit<8> si, bit<9> port) {
        hdr.sfc.path_id = spi;
        hdr.sfc.state = si;
        hdr.sfc.bitmap = 0;
        meta.ctl.terminal = TERM_FORWARD;
        meta.ctl.out_port = port;
        meta.sfc.egress_valid = 0;
        meta.sfc.mcast_grp = 0;
    }

    /* The path is done: the header comes off and the packet leaves to its egress. */
    action deliver(bit<9> port) {
        meta.ctl.terminal = TERM_OUTPUT;
        meta.ctl.out_port = port;
        meta.sfc.egress_valid = 0;
        meta.sfc.mcast_grp = 0;
    }
"""
_STEERING_REFS = """
            forward;
            deliver;"""

_BRANCH_KEYS = ("hdr.sfc.path_id : exact", "hdr.sfc.state : exact", "meta.sfc.metadata : range",
                "meta.sfc.counter : range", "meta.sfc.ingress_port : range")
#: The width of each branch key a condition tests (the NF's value, the loop counter, the port).
BRANCH_KEY_WIDTHS = {"meta.sfc.metadata": 32, "meta.sfc.counter": 8, "meta.sfc.ingress_port": 9}


def _branch_keys(comp: Composition) -> tuple[str, ...]:
    """The branch table's keys, in the kinds the architecture takes
    (:meth:`Composition.key_kind`)."""
    out = []
    for k in _BRANCH_KEYS:
        expr, _, kind = k.partition(" : ")
        out.append(f"{expr} : {comp.key_kind(kind, BRANCH_KEY_WIDTHS.get(expr, 0))}")
    return tuple(out)


def _slot_table(name: str, keys: tuple[str, ...], actions: tuple[str, ...], size: int) -> str:
    """A control table after a slot: keyed on the token, one of *actions* or nothing."""
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


def core_apply(comp: Composition, extra_args: dict[int, str] | None = None) -> list[str]:
    """Statements of the ingress core.  Before them the emitter sets
    ``meta.sfc.ingress_port`` and ``meta.sfc.timestamp``; after them it applies
    the requests (``meta.sfc.drop`` … and ``meta.ctl``).  *extra_args* adds an
    argument to a slot's NF call (an NF that packs digests gets its buffer)."""
    extra_args = extra_args or {}
    network = comp.options.network
    arrive = ["    if (hdr.sfc.flags[2:2] == 1) {", "        arrival.apply();", "    }"] \
        if network else []
    lines = ["if (!hdr.sfc.isValid()) {", "    initializer.apply();", "} else {",
             "    /* NFs see the real EtherType while the SFC header is on */",
             "    hdr.ethernet.ether_type = hdr.sfc.next_proto;", *arrive, "}",
             "if (hdr.sfc.isValid()) {",
             "    meta.sfc.path_id = hdr.sfc.path_id;",
             "    meta.sfc.counter = hdr.sfc.counter;",
             "    meta.sfc.metadata = hdr.sfc.metadata;",
             "    meta.sfc.ingress_port = (bit<9>) hdr.sfc.ingress_port;",
             "    meta.sfc.drop = hdr.sfc.flags[0:0];",
             "    meta.sfc.to_cpu = hdr.sfc.flags[1:1];",
             "    meta.sfc.egress_valid = hdr.sfc.egress_valid;",
             "    meta.sfc.egress_port = hdr.sfc.egress_port;",
             "    meta.sfc.mcast_grp = hdr.sfc.mcast_grp;"]
    for s in comp.slots:
        lines.append(f"    if (meta.sfc.drop == 0 && meta.sfc.to_cpu == 0 && "
                     f"hdr.sfc.bitmap & 32w0x{1 << s.index:X} != 0) {{")
        if s.branches or s.saves:
            # what the branch (or save) reads is this NF's value: 0 if it sets none
            lines.append("        meta.sfc.metadata = 0;")
        lines += [f"        {s.instance}.apply(hdr, meta.sfc"
                  + (f", {extra_args[s.index]}" if s.index in extra_args else "") + ");"]
        if s.saves:
            lines.append(f"        {s.save_table}.apply();")
        if s.loops:
            lines.append(f"        {s.loop_table}.apply();")
        if s.branches:
            lines.append(f"        {s.branch_table}.apply();")
        lines.append("    }")
    keep = " || meta.ctl.terminal == TERM_FORWARD" if network else ""
    lines += ["    rewinder.apply();",
              f"    if (meta.ctl.recirculate == 1{keep}) {{",
              "        hdr.sfc.metadata = meta.sfc.metadata;",
              "        hdr.sfc.flags = 2w0 ++ meta.sfc.to_cpu ++ meta.sfc.drop;",
              "        hdr.sfc.egress_valid = meta.sfc.egress_valid;",
              "        hdr.sfc.egress_port = meta.sfc.egress_port;",
              "        hdr.sfc.mcast_grp = meta.sfc.mcast_grp;",
              "        hdr.sfc.next_proto = hdr.ethernet.ether_type;",
              "        hdr.ethernet.ether_type = ETHERTYPE_SFC;",
              *(["        if (meta.ctl.terminal == TERM_FORWARD) {",
                 "            hdr.sfc.flags[2:2] = 1;      /* in transit: the next switch "
                 "looks it up in arrival */",
                 "        }"] if network else []),
              "    } else {",
              "        hdr.sfc.setInvalid();",
              "    }",
              "}"]
    return lines
