"""The embedded Tofino: a TNA program's pipes, their traffic manager and ports.

:class:`TnaSwitch` loads ``Switch(pipe0[, pipe1, …]) main;`` and runs each packet as
a Tofino 1 does, pass by pass:

1. **ingress** of the pipe the packet came in on (``port >> 7``): the ingress parser
   reads ``ig_intr_md`` (8 bytes: resubmit flag, port, MAC timestamp in ns) and
   then 8 bytes of port metadata (zeros) or, for a resubmitted packet, its resubmit
   header, then the packet; the ingress control; the ingress deparser (its emits,
   ``Checksum.update``, ``Digest.pack``, ``Mirror.emit``, ``Resubmit.emit``);
2. the **traffic manager**: a ``Digest`` goes to the controller; a ``Mirror`` sends
   the packet as it came in, behind the mirror header, to the session's port; a
   ``Resubmit`` sends the packet as it came in back to the same ingress (once: a
   resubmitted packet is not resubmitted again); else, unless ``drop_ctl`` bit 0
   drops it, a copy to ``ucast_egress_port`` when the program wrote it, one per
   replica of ``mcast_grp_a`` and ``mcast_grp_b``, and with ``copy_to_cpu`` (unless
   ``drop_ctl`` bit 1) one to the CPU port; a packet with none of these is dropped;
3. **egress** of each copy's port's pipe: the egress parser reads
   ``eg_intr_md`` (27 bytes) and then what the ingress deparser emitted (bridged
   metadata first), the egress control and deparser (``bypass_egress`` skips all
   three); ``drop_ctl`` bit 0 drops, a ``Mirror`` sends the deparsed packet to a
   session's port;
4. out of the port, or, for a pipe's recirculation port (``68 + 128 * pipe``) or a
   port set to loopback, back into step 1 on that port.

Recirculations and resubmits together are bounded (``max_passes``).  A pipe the
program gives no ``Pipeline`` (``Switch(a, b)`` on a 4-pipe model) drops what
reaches it.  Each trace event belongs to a pass; ``pipeline_start`` events say
where the pass ran (``pipe 1 egress``) and a ``recirculate`` event how the packet
came back (``recirculated on port 196``).

A ``Pipeline`` given for several pipes (``Switch(pipe)`` runs ``pipe`` on every pipe
of the model) has one set of tables, as P4Runtime writes them (symmetric), and its
registers, counters and meters once per pipe, as the chip has them.  Not modelled
(refused at load, with the line; :mod:`.compiler`): the externs sfclab's NFs do not
use, ``MultiParserSwitch``, a ``Switch`` given pipelines by anything but their
instance names; and queues (depths are 0), priorities, ``deflect_on_drop``,
exclusion ids, the egress ``coalesce_*`` and packet generation.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Iterable

from ....p4 import ast as A
from ..control import ExitSignal
from ..errors import InvalidValueError, ModelCompileError
from ..result import Digest, ProcessResult
from ..runtime import ControlPlane, _resolve
from ..storage import Pkt
from ..switch import ModelSwitch, _load
from ..types import TypeEnv, flatten
from .compiler import PARSER_ERR_FLAGS
from .externs import PerPipe
from .pipeline import UNSET, CompiledPipeline, Unset, compile_pipeline
from .ports import DEFAULT_PIPES, TNA_CPU_PORT, TofinoPorts
from .prelude import PORT_METADATA_BYTES, with_prelude

__all__ = ["TnaSwitch", "TnaPkt", "is_tna", "switch_pipelines"]

_NO_PORT_METADATA = bytes(PORT_METADATA_BYTES)     # port metadata: zeros (none configured)


class TnaPkt(Pkt):
    """A packet in one pipelet: :class:`~..storage.Pkt`, the pipe it runs in, and the
    header bytes its parsers and deparsers remember: ``memo`` for the whole packet (every
    pass and copy: each gress parses the same headers again), ``ext`` for this gress."""

    __slots__ = ("pipe", "memo", "ext")


def is_tna(prog: A.Program) -> bool:
    """Whether *prog*'s package is TNA's ``Switch`` (else it is v1model's, or none)."""
    return any(isinstance(d, A.Instance) and isinstance(d.type, A.NamedType)
               and d.type.name in ("Switch", "MultiParserSwitch") for d in prog.decls)


def switch_pipelines(prog: A.Program) -> list[A.Instance]:
    """The ``Pipeline`` instances ``Switch(...) main;`` names, pipe 0 first."""
    pipes = {d.name: d for d in prog.decls if isinstance(d, A.Instance)
             and isinstance(d.type, A.NamedType) and d.type.name == "Pipeline"}
    mains = [d for d in prog.decls if isinstance(d, A.Instance) and isinstance(d.type, A.NamedType)
             and d.type.name in ("Switch", "MultiParserSwitch")]
    if not mains:
        raise ModelCompileError("the program has no Switch(...) main; package instance",
                                hint="a TNA program ends with Pipeline(...) pipe; Switch(pipe) "
                                     "main;")
    main = mains[0]
    where = f"{main.pos}: " if main.pos else ""
    if main.type.name == "MultiParserSwitch":
        raise ModelCompileError(f"{where}MultiParserSwitch is not modelled",
                                hint="use Switch with one ingress and one egress parser per "
                                     "Pipeline")
    out = []
    for arg in main.args:
        if not isinstance(arg, A.Name) or arg.name not in pipes:
            raise ModelCompileError(f"{where}Switch takes Pipeline instances by name "
                                    f"(Pipeline(...) pipe0; Switch(pipe0, ...) main;)")
        out.append(pipes[arg.name])
    if not 1 <= len(out) <= 4:
        raise ModelCompileError(f"{where}Switch takes 1 to 4 pipelines, not {len(out)}")
    return out


class TnaSwitch(ControlPlane):
    """A TNA program on sfclab's embedded Tofino 1 model.

    *program*: a parsed :class:`~sfclab.p4.ast.Program`, P4 text or a ``.p4`` path;
    *pipes*: the model's pipes (1, 2 or 4); *loopback*: ports set to loopback;
    *cpu_port*: the CPU's PCIe port (where packet-ins leave, packet-outs enter);
    ``max_passes`` bounds recirculations plus resubmits; ``seed`` makes ``Random``
    reproducible."""

    arch = "tna"

    def __init__(self, program, *, pipes: int = DEFAULT_PIPES, loopback: Iterable[int] = (),
                 cpu_port: int = TNA_CPU_PORT, max_passes: int = 16, seed: int = 0) -> None:
        self.ports = TofinoPorts.of(pipes, cpu_port, loopback)
        self.cpu_port, self.max_passes = cpu_port, max_passes
        self.program = flatten(_load(program))
        self.rng = random.Random(seed)
        self.tables: dict = {}
        self.actions: dict = {}
        self.externs: dict = {}
        self.direct_counters: dict = {}
        self.direct_meters: dict = {}
        self.mc_groups: dict[int, list[tuple[int, int]]] = {}
        self.clone_sessions: dict[int, list[tuple[int, int]]] = {}
        self.pending_digests: list[Digest] = []
        #: Which pipe's registers, counters and meters the control-plane API reads and
        #: writes (None: counters summed over the pipes, registers and meters pipe 0's).
        self.control_pipe: int | None = None
        self._packet_id = 0
        self._t0 = time.monotonic()
        self._spare = None            # the last ingress pass's values, for its first egress
        self._memo: dict = {}          # the packet's header bytes -> values (TnaPkt.memo)
        #: per pipe, the trace's names of its ingress and egress (``pipe 1 egress``)
        self._where = [(f"pipe {k} ingress", f"pipe {k} egress") for k in range(self.ports.pipes)]
        self._how: dict[int, str] = {}   # port -> ``recirculated on port 196``
        ports = self.ports               # per 9-bit port: its pipe (-1: not a port), re-entry
        self._pipe_at = [ports.pipe_of(k) if ports.exists(k) else -1 for k in range(512)]
        self._reenters = [ports.reenters(k) for k in range(512)]
        self._compile()

    # -- compilation ---------------------------------------------------------------------------
    def _compile(self) -> None:
        prog = with_prelude(self.program)
        self.env = env = TypeEnv(prog)
        insts = switch_pipelines(self.program)
        if len(insts) > self.ports.pipes:
            raise ModelCompileError(
                f"the program's Switch has {len(insts)} pipelines; this model has "
                f"{self.ports.pipes} pipe(s)",
                hint=f"use a model with more pipes: model?arch=tna&pipes="
                     f"{4 if len(insts) > 2 else 2}")
        uses: dict[str, list[int]] = {}
        if len(insts) == 1:
            uses[insts[0].name] = list(range(self.ports.pipes))
        else:
            for k, inst in enumerate(insts):
                uses.setdefault(inst.name, []).append(k)
        compiled: dict[str, CompiledPipeline] = {}
        for inst in insts:
            if inst.name not in compiled:
                compiled[inst.name] = compile_pipeline(self, prog, env, inst,
                                                       npipes=self.ports.pipes)
        self.pipelines = compiled
        self.by_pipe: list[CompiledPipeline | None] = [None] * self.ports.pipes
        for name, pipes in uses.items():
            for k in pipes:
                self.by_pipe[k] = compiled[name]
        self.pipe_names = {k: cp.name for k, cp in enumerate(self.by_pipe) if cp is not None}
        for cp in compiled.values():
            self._slots(cp)
        self._controller = {k: self._controller_header(k) for k in ("packet_in", "packet_out")}

    def _slots(self, cp: CompiledPipeline) -> None:
        ig, eg = cp.ingress, cp.egress
        tm, dp = "ingress_intrinsic_metadata_for_tm_t", "ingress_intrinsic_metadata_for_deparser_t"
        cp.s = {
            "ig_md": ig.intrinsic["ingress_intrinsic_metadata_t"].base,
            "ucast": ig.slot(tm, "ucast_egress_port"), "bypass": ig.slot(tm, "bypass_egress"),
            "copy_cpu": ig.slot(tm, "copy_to_cpu"), "grp_a": ig.slot(tm, "mcast_grp_a"),
            "grp_b": ig.slot(tm, "mcast_grp_b"), "rid": ig.slot(tm, "rid"),
            "ig_drop": ig.slot(dp, "drop_ctl"),
            "ig_tstamp": ig.slot("ingress_intrinsic_metadata_from_parser_t", "global_tstamp"),
            "ig_err": ig.slot("ingress_intrinsic_metadata_from_parser_t", "parser_err"),
            "eg_drop": eg.slot("egress_intrinsic_metadata_for_deparser_t", "drop_ctl"),
            "eg_tstamp": eg.slot("egress_intrinsic_metadata_from_parser_t", "global_tstamp"),
            "eg_err": eg.slot("egress_intrinsic_metadata_from_parser_t", "parser_err"),
        }
        cp.template[cp.s["ucast"]] = UNSET

    # -- the control plane (per-pipe state) -----------------------------------------------------
    def _extern(self, name: str, cls, what: str):
        pool = {}
        for n, e in self.externs.items():
            st = e.state
            if isinstance(st, PerPipe):
                st = st.of(self.control_pipe or 0)
            if isinstance(st, cls):
                pool[n] = st
        return _resolve(what, name, pool)

    def _each_pipe(self, call):
        """*call()* once per pipe, :attr:`control_pipe` set to each (then None again)."""
        out = []
        for k in range(self.ports.pipes):
            self.control_pipe = k
            try:
                out.append(call())
            finally:
                self.control_pipe = None
        return out

    def read_counter(self, name: str, index: int | None = None):
        """As :meth:`ControlPlane.read_counter`, summed over the pipes (a controller adds
        the pipes' counts up); with :attr:`control_pipe` set, that pipe's."""
        if self.control_pipe is not None:
            return super().read_counter(name, index)
        per_pipe = self._each_pipe(lambda: ControlPlane.read_counter(self, name, index))
        if index is not None:
            return tuple(map(sum, zip(*per_pipe)))
        return [tuple(map(sum, zip(*cells))) for cells in zip(*per_pipe)]

    def _write_all(name: str):
        """A control-plane write that, with no :attr:`control_pipe`, writes every pipe
        (P4Runtime writes a symmetric pipeline's state so)."""
        base = getattr(ControlPlane, name)

        def write(self, *args, **kwargs):
            if self.control_pipe is not None:
                return base(self, *args, **kwargs)
            self._each_pipe(lambda: base(self, *args, **kwargs))
        write.__name__, write.__doc__ = name, (base.__doc__ or "") + " (every pipe)"
        return write

    write_register = _write_all("write_register")
    reset_register = _write_all("reset_register")
    reset_counter = _write_all("reset_counter")
    set_meter = _write_all("set_meter")
    reset_meter = _write_all("reset_meter")
    del _write_all

    def pipe_tables(self) -> dict[int, list[str]]:
        """Pipe -> the names of the tables its pipeline holds (a pipeline run on several
        pipes lists its tables under each)."""
        out: dict[int, list[str]] = {}
        for k, cp in enumerate(self.by_pipe):
            if cp is not None:
                out[k] = [n for n in self.tables if n.startswith(cp.name + ".")]
        return out

    # -- packets -------------------------------------------------------------------------------
    def process(self, port: int, data, *, now_us: int | None = None) -> ProcessResult:
        """Run one packet that arrives on *port*; *data* is bytes or a scapy packet."""
        if not isinstance(port, int) or not 0 <= port < 512 or not self.ports.exists(port):
            raise InvalidValueError(
                f"ingress port {port!r} is not a port of this {self.ports.pipes}-pipe Tofino",
                hint=f"send on a port of pipes 0..{self.ports.pipes - 1} (pipe = port >> 7)")
        data = bytes(data)
        self._packet_id += 1
        self._memo = {}                  # header bytes -> values, for this packet only
        now = int((time.monotonic() - self._t0) * 1e6) if now_us is None else now_us
        tr: list = []
        res = ProcessResult([], packet_id=self._packet_id, ingress_port=port, _raw=tr)
        ingress_q = deque([(port, data, None)])
        passes = 0
        drops: list[str] = []
        while ingress_q:
            task = ingress_q.popleft()
            if passes >= self.max_passes:
                why = (f"dropped after {self.max_passes} passes: the recirculation/resubmit limit "
                       f"(max_passes) was reached")
                tr.append(("drop", why))
                drops.append(why)
                break
            eg = self._ingress(task, passes, now, tr, ingress_q, res, drops)
            passes += 1
            i = 0
            while i < len(eg):           # an egress mirror adds copies to eg
                self._egress(eg[i], now, tr, ingress_q, eg, res, drops)
                i += 1
        res.passes = passes
        res.drop_reason = "" if res.outputs else (drops[-1] if drops else "no output")
        return res

    # packet-out and packet-in as on the v1model switch (the controller headers are the
    # program's @controller_header ones, whatever the architecture)
    packet_out = ModelSwitch.packet_out
    _decode_packet_in = ModelSwitch._decode_packet_in
    _controller_header = ModelSwitch._controller_header

    def _drop(self, tr, drops, why: str) -> None:
        tr.append(("drop", why))
        drops.append(why)

    def _ingress(self, task, pass_no, now, tr, ingress_q, res, drops) -> list:
        port, data, resubmitted = task
        pipe = self._pipe_at[port]       # a port of the model: process() checked it
        tr.append(("pass", pass_no))
        if pass_no == 0:
            tr.append(("packet_in", port))
        cp = self.by_pipe[pipe]
        if cp is None:
            self._drop(tr, drops, f"pipe {pipe} runs no program (the Switch gives "
                                  f"{len(self.pipe_names)} pipeline(s))")
            return []
        s = cp.s
        ns = now * 1000
        v = list(cp.template)
        v[s["ig_tstamp"]] = ns & 0xFFFFFFFFFFFF
        p = TnaPkt(v, data, tr, now)
        p.pipe, p.memo, p.ext = pipe, self._memo, {}
        g = cp.ingress
        resub = (None if resubmitted is None
                 else resubmitted[:PORT_METADATA_BYTES].ljust(PORT_METADATA_BYTES, b"\0"))
        key = (port, resub)              # with the timestamp: the intrinsic metadata
        self._parse(g, p, key, ns, self._ig_head, cp, port, resub, ns)
        out = self._run(g, p, self._where[pipe][0], s["ig_err"], tr, drops)
        if out is None:
            return []
        # ingress writes ingress slots only: the first egress copy of a pipeline that runs
        # in the same pipeline's egress can start from this list (its egress slots untouched)
        self._spare = (cp, v)
        return self._traffic_manager(cp, p, port, data, out, resubmitted, ingress_q, res, tr,
                                     drops)

    @staticmethod
    def _parse(g, p: TnaPkt, key: tuple, ns: int, prefix: Callable, *args) -> None:
        """Gress *g*'s parser on *p* (``p.data``: the packet's bytes): the run its cache
        remembers for these bytes and *key* (what the intrinsic metadata depends on but
        the timestamp), else the parser, on the packet behind ``prefix(*args)`` (the
        intrinsic metadata: made only then)."""
        cache = g.cache
        if cache is not None and cache.hit(p, key, ns & g.tstamp_mask):
            return
        head = prefix(*args)
        p.data = head + p.data
        if cache is None:
            g.parse(p)
        else:
            cache.miss(p, key, len(head))

    def _ig_head(self, cp: CompiledPipeline, port: int, resub: bytes | None, ns: int) -> bytes:
        """What precedes a packet entering *cp*'s ingress parser on *port*: the intrinsic
        metadata, then the port metadata (zeros) or the resubmit header *resub*."""
        head = cp.ig_prefix(resub is not None, port, ns, self._memo)
        return head + (_NO_PORT_METADATA if resub is None else resub)

    def _run(self, g, p: TnaPkt, where: str, err_slot: int, tr, drops) -> bytes | None:
        """One gress (``where``: ``pipe 1 egress``) after its parser ran: control,
        deparser; the bytes the deparser sends on, or None when a parser error dropped
        the packet."""
        if p.parser_error != "NoError":
            p.v[err_slot] = PARSER_ERR_FLAGS.get(p.parser_error, 0x1)
            if not g.keeps_parser_err:
                self._drop(tr, drops, f"parser error {p.parser_error} in {where}'s parser")
                return None
        p.payload = p.data[p.pos:]
        tr.append(("pipeline_start", where))
        try:
            g.control(p)
        except ExitSignal:
            tr.append(("note", f"exit: the rest of {where} was skipped"))
        tr.append(("pipeline_done", where))
        g.deparse(p)                     # into p.emitted (a new packet's: empty)
        tr.append(("deparser_done", ""))
        out = p.emitted
        out.append(p.payload)
        return b"".join(out)

    def _traffic_manager(self, cp, p, port, data, out, resubmitted, ingress_q, res, tr,
                         drops) -> list:
        v, s = p.v, cp.s
        drop_ctl = v[s["ig_drop"]]
        copies: list = []
        for label, d in p.digests:
            dg = Digest(label, d)
            self.pending_digests.append(dg)
            res.digests.append(dg)
            tr.append(("digest", label, dg.data))
        if p.clone is not None:
            if drop_ctl & 4:
                tr.append(("note", "mirror not made: drop_ctl bit 2 disables mirroring"))
            else:
                copies += self._mirror(p.clone, data, tr)
        if p.resubmit is not None and not drop_ctl & 1:
            if resubmitted is None:
                tr.append(("resubmit", cp.ig_token(v) if cp.ig_token else None,
                           f"resubmitted on port {port}"))
                ingress_q.append((port, data, p.resubmit))
                return copies
            tr.append(("note", "a resubmitted packet is not resubmitted again"))
        ucast = v[s["ucast"]]
        grp_a, grp_b = v[s["grp_a"]], v[s["grp_b"]]
        bypass = bool(v[s["bypass"]])
        if drop_ctl & 1:
            self._drop(tr, drops, f"ig_dprsr_md.drop_ctl is {drop_ctl} when ingress ended")
        else:
            if type(ucast) is not Unset:
                copies.append((ucast, out, 0, bypass, port))
            for grp in (grp_a, grp_b):
                if grp:
                    copies += self._group_copies(grp, out, bypass, port, tr, drops)
            if type(ucast) is Unset and not grp_a and not grp_b and not v[s["copy_cpu"]]:
                self._drop(tr, drops, "no destination: ingress wrote no ucast_egress_port and "
                                      "no multicast group")
        if v[s["copy_cpu"]]:
            if drop_ctl & 2:
                tr.append(("note", "copy_to_cpu not made: drop_ctl bit 1 disables it"))
            else:
                copies.append((self.cpu_port, out, 0, bypass, port))
        return copies

    def _group_copies(self, grp: int, out: bytes, bypass: bool, port: int, tr, drops) -> list:
        group = self.mc_groups.get(grp)
        if not group:
            why = (f"multicast group {grp} has no replicas" if group is not None
                   else f"multicast group {grp} is not configured")
            self._drop(tr, drops, why)
            return []
        return [(eport, out, rid, bypass, port) for eport, rid in group]

    def _mirror(self, clone, body: bytes, tr) -> list:
        gress, session, head = clone
        replicas = self.clone_sessions.get(session)
        if not replicas:
            tr.append(("note", f"mirror to session {session} not made: the session is not "
                               f"configured"))
            return []
        tr.append(("clone", f"{gress} mirror, session {session}"))
        return [(eport, head + body, 0, False, None) for eport, _ in replicas]

    def _egress(self, task, now, tr, ingress_q, eq, res, drops) -> None:
        eport, data, rid, bypass, _ = task
        pipe = self._pipe_at[eport] if 0 <= eport < 512 else -1
        if pipe < 0:
            self._drop(tr, drops, f"port {eport} is not a port of this {self.ports.pipes}-pipe "
                                  f"Tofino (pipe {eport >> 7})")
            return
        cp = self.by_pipe[pipe]
        if cp is None:
            self._drop(tr, drops, f"pipe {pipe} runs no program: port {eport}'s egress")
            return
        out, v = data, None
        if bypass:
            tr.append(("note", f"bypass_egress: pipe {pipe}'s egress skipped"))
        else:
            done = self._egress_pass(cp, pipe, eport, data, rid, now, tr, eq, drops)
            if done is None:
                return
            out, v = done
        if self._reenters[eport]:
            token = cp.token(v) if v is not None and cp.token else None
            how = self._how.get(eport)
            if how is None:
                how = self._how[eport] = f"{self.ports.how(eport)} on port {eport}"
            tr.append(("recirculate", token, how))
            ingress_q.append((eport, out, None))
            return
        tr.append(("packet_out", eport))
        res.outputs.append((eport, out))
        if eport == self.cpu_port:
            res.packet_ins.append(self._decode_packet_in(out))

    def _egress_pass(self, cp: CompiledPipeline, pipe: int, eport: int, data: bytes, rid: int,
                     now: int, tr, eq, drops) -> tuple[bytes, list] | None:
        s = cp.s
        ns = now * 1000
        spare, self._spare = self._spare, None
        v = spare[1] if spare is not None and spare[0] is cp else list(cp.template)
        v[s["eg_tstamp"]] = ns & 0xFFFFFFFFFFFF
        p = TnaPkt(v, data, tr, now)
        p.pipe, p.memo, p.ext = pipe, self._memo, {}
        p.in_egress = True
        g = cp.egress
        key = (eport, rid, len(data))    # with the timestamp: the intrinsic metadata
        self._parse(g, p, key, ns, cp.eg_prefix, eport, rid, len(data), ns, self._memo)
        out = self._run(g, p, self._where[pipe][1], s["eg_err"], tr, drops)
        if out is None:
            return None
        drop_ctl = v[s["eg_drop"]]
        if p.clone is not None:
            if drop_ctl & 4:
                tr.append(("note", "mirror not made: drop_ctl bit 2 disables mirroring"))
            else:
                eq.extend(self._mirror(p.clone, out, tr))
        if drop_ctl & 1:
            self._drop(tr, drops, f"eg_dprsr_md.drop_ctl is {drop_ctl} when egress ended")
            return None
        return out, v
