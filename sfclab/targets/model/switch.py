"""The embedded switch: a v1model program compiled once, then packets through it.

:class:`ModelSwitch` compiles the program's ``V1Switch(...) main`` package
(parser, verify-checksum, ingress, egress, compute-checksum, deparser) into
closures and runs each packet as BMv2's ``simple_switch`` does:

* after ingress, in this order: an ingress clone (the packet as it entered
  ingress, parsed again, metadata reset but for the clone's field list); a
  digest; a resubmit (back to ingress with the original bytes); else a
  multicast (``mcast_grp != 0``, one copy per replica, instance type 5);
  else a drop when ``egress_spec`` is 511; else one copy to port ``egress_spec``
  (a port that ingress never set is port 0, as in BMv2);
* after egress: an egress clone; a drop when ``egress_spec`` is 511 (so
  ``mark_to_drop`` in egress drops); the compute-checksum control and the
  deparser; then a recirculation (back to ingress with the deparsed bytes and
  all metadata reset but the field list's) or the packet leaves.

Resubmits and recirculations are bounded (``max_passes``); a packet that
exceeds the bound is dropped and its trace says so.  Instance types follow
BMv2: 0 normal, 1 ingress clone, 2 egress clone, 4 recirculated, 5 replica,
6 resubmitted.  ``ingress_port`` is 0 in a recirculated or resubmitted pass
unless a field list preserves it (BMv2 resets all metadata).

Not modelled (a :class:`~.errors.ModelCompileError` names the construct when
a program uses it): ``action_profile`` / ``action_selector`` tables,
a ``value_set``'s entries, sfclab's portable ``Sfc*`` externs before lowering, the ``crc16_custom``
/ ``crc32_custom`` / ``random`` hash algorithms, queueing metadata other than
timestamps (queue depths are 0), priority queues, and BMv2's parallel threads
(copies leave in a fixed order: egress clones after the packet that made them).
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from ...p4 import ast as A
from ...p4.parser import parse_p4, parse_p4_file
from ...p4.preprocess import BMV2_DEFINES
from .control import ActionObj, ExitSignal, PacketIO
from .errors import InvalidValueError, ModelCompileError, UnknownNameError
from .expr import ConstVal, Scope
from .functions import FunctionObj
from .parser_rt import PipelineCompiler, _field_codec
from .result import Digest, PacketIn, ProcessResult
from .runtime import ControlPlane
from .storage import HeaderRef, Layout, Pkt
from .types import STANDARD_METADATA, StructT, TypeEnv, annotation, flatten

__all__ = ["ModelSwitch", "INSTANCE_TYPES", "DROP_PORT", "CPU_PORT"]

#: BMv2's ``standard_metadata.instance_type`` values.
INSTANCE_TYPES = {"NORMAL": 0, "INGRESS_CLONE": 1, "EGRESS_CLONE": 2, "COALESCED": 3,
                  "RECIRC": 4, "REPLICATION": 5, "RESUBMIT": 6}
DROP_PORT = 511
CPU_PORT = 255


def _header_fields(ref) -> list[tuple[int, int]]:
    """The slot ranges ``(start, end)`` of the header fields under *ref* (a header's
    fields follow its validity slot; validity bits and stack indexes are not in them)."""
    if isinstance(ref, HeaderRef):
        slots = [f.slot for f in ref.fields.values()]
        return [(min(slots), max(slots) + 1)] if slots else []
    subs = getattr(ref, "elems", None) or getattr(ref, "members", {}).values()
    return [r for sub in subs for r in _header_fields(sub)]


def _stale_span(ranges: list[tuple[int, int]], template: list) -> tuple[int, int, list]:
    """*ranges* as one span ``(lo, hi)`` and the slots inside it that are no header field
    (validity, stack indexes) with their fresh values, to put back after copying the span."""
    if not ranges:
        return 0, 0, []
    lo, hi = min(a for a, _ in ranges), max(b for _, b in ranges)
    inside = set()
    for a, b in ranges:
        inside.update(range(a, b))
    return lo, hi, [(s, template[s]) for s in range(lo, hi) if s not in inside]


def _load(program) -> A.Program:
    """*program* parsed as p4c-bm2-ss reads it (``__TARGET_BMV2__`` defined)."""
    if isinstance(program, A.Program):
        return program
    if isinstance(program, Path) or (isinstance(program, str) and "\n" not in program
                                     and program.endswith(".p4")):
        return parse_p4_file(program, defines=BMV2_DEFINES)
    if isinstance(program, str):
        return parse_p4(program, defines=BMV2_DEFINES)
    raise TypeError(f"expected a Program, P4 text or a .p4 path, got {type(program).__name__}")


class ModelSwitch(ControlPlane):
    """A v1model program running on sfclab's embedded switch model.

    *program* is a parsed :class:`~sfclab.p4.ast.Program`, P4 text, or a path
    to a ``.p4`` file.  ``cpu_port`` is where packet-ins leave and packet-outs
    enter; ``max_passes`` bounds resubmits plus recirculations; ``ports``
    (optional) lists the ports that exist (a packet sent elsewhere is lost);
    ``seed`` makes ``random()`` reproducible."""

    def __init__(self, program, *, cpu_port: int = CPU_PORT, drop_port: int = DROP_PORT,
                 max_passes: int = 16, ports: Iterable[int] | None = None, seed: int = 0) -> None:
        self.program = flatten(_load(program))
        self.cpu_port, self.drop_port, self.max_passes = cpu_port, drop_port, max_passes
        self.ports = set(ports) if ports is not None else None
        self.rng = random.Random(seed)
        self.tables: dict = {}
        self.actions: dict = {}
        self.externs: dict = {}
        self.direct_counters: dict = {}
        self.direct_meters: dict = {}
        self.mc_groups: dict[int, list[tuple[int, int]]] = {}
        self.clone_sessions: dict[int, list[tuple[int, int]]] = {}
        self.pending_digests: list[Digest] = []
        self._packet_id = 0
        self._t0 = time.monotonic()
        self._compile()

    # -- compilation ---------------------------------------------------------------------
    def _compile(self) -> None:
        prog = self.program
        env = self.env = TypeEnv(prog)
        layout = self.layout = Layout()
        c = self.compiler = PipelineCompiler(self, env, layout, prog)
        env.const_eval = lambda e: c.const_int(e, c.global_scope)
        main = self._main()
        blocks = []
        for arg in main.args:
            if not (isinstance(arg, A.Call) and isinstance(arg.func, A.TypeName)):
                raise ModelCompileError("V1Switch's arguments must be constructor calls "
                                        "(V1Switch(MyParser(), ...) main;)")
            blocks.append(arg.func.name)
        if len(blocks) != 6:
            raise ModelCompileError(f"V1Switch takes 6 blocks, got {len(blocks)}")
        parsers = {p.name: p for p in prog.find(A.ParserDecl)}
        controls = {k.name: k for k in prog.controls()}
        parser = parsers.get(blocks[0])
        if parser is None:
            raise ModelCompileError(f"parser {blocks[0]} is not declared")
        for b in blocks[1:]:
            if b not in controls:
                raise ModelCompileError(f"control {b} is not declared")
        htype = env.resolve(parser.params[1].type)
        mtype = env.resolve(parser.params[2].type)
        if not isinstance(htype, StructT) or not isinstance(mtype, StructT):
            raise ModelCompileError("the parser's headers and metadata must be structs")
        self.hdr_ref = layout.build(htype, "hdr")
        self.hdr_slots = (0, len(layout.template))
        self.meta_ref = layout.build(mtype, "meta")
        self.sm_ref = layout.build(STANDARD_METADATA, "standard_metadata")
        self._sm = {n: r.slot for n, r in self.sm_ref.members.items()}
        self._globals(c)
        hdr, meta, sm = self.hdr_ref, self.meta_ref, self.sm_ref

        def bind(decl, values):
            return {prm.name: v for prm, v in zip(decl.params, values)}
        pin, pout = PacketIO("in"), PacketIO("out")
        self._parse = c.compile_parser(parser, bind(parser, [pin, hdr, meta, sm]))
        names = blocks[1:]
        self._verify = c.control_body(controls[names[0]], (names[0],),
                                      bind(controls[names[0]], [hdr, meta]))
        self._ingress = c.control_body(controls[names[1]], (names[1],),
                                       bind(controls[names[1]], [hdr, meta, sm]))
        self._egress = c.control_body(controls[names[2]], (names[2],),
                                      bind(controls[names[2]], [hdr, meta, sm]))
        self._compute = c.control_body(controls[names[3]], (names[3],),
                                       bind(controls[names[3]], [hdr, meta]))
        self._deparse = c.control_body(controls[names[4]], (names[4],),
                                       bind(controls[names[4]], [pout, hdr]))
        self.template = list(layout.template)
        self._stale = _stale_span(_header_fields(self.hdr_ref), self.template)
        self._last_v: list | None = None
        self._token = self._sfc_token()
        self._controller = {k: self._controller_header(k) for k in ("packet_in", "packet_out")}

    def _main(self) -> A.Instance:
        for d in self.program.find(A.Instance):
            if isinstance(d.type, A.NamedType) and d.type.name == "V1Switch":
                return d
        raise ModelCompileError("the program has no V1Switch(...) main; package instance",
                                hint="the embedded model runs v1model programs")

    def _globals(self, c: PipelineCompiler) -> None:
        sc: Scope = c.global_scope
        for d in self.program.find(A.FunctionDecl):
            sc.names[d.name] = FunctionObj(d)
        for d in self.program.decls:
            if isinstance(d, A.ConstDecl):
                t = self.env.resolve(d.type)
                sc.names[d.name] = ConstVal(c.const_value(d.value, sc, t), t)
            elif isinstance(d, A.EnumDecl):
                self.env.named(d.name)
        if not any(isinstance(d, A.ActionDecl) and d.name == "NoAction" for d in self.program.decls):
            noa = A.ActionDecl("NoAction", (), A.Block())
            a = c.compile_action(noa, sc, "NoAction")
            sc.names["NoAction"] = a
            self.actions["NoAction"] = a.info
        for d in self.program.find(A.ActionDecl):
            qn = c.qnames.get(((), id(d)), d.name)
            a: ActionObj = c.compile_action(d, sc, qn)
            sc.names[d.name] = a
            self.actions[qn] = a.info
        for d in self.program.find(A.Instance):
            if isinstance(d.type, A.NamedType) and d.type.name in ("register", "counter", "meter"):
                sc.names[d.name] = c.make_extern(d, d.name)

    def _sfc_token(self):
        sfc = self.hdr_ref.members.get("sfc")
        if not isinstance(sfc, HeaderRef):
            return None
        want = [n for n in ("path_id", "state", "bitmap", "counter") if n in sfc.fields]
        want += [n for n in sfc.fields if n.startswith("saved_md")]     # saved NF values
        if not {"path_id", "state"} <= set(want):
            return None
        valid = sfc.base
        slots = [(n, sfc.fields[n].slot) for n in want]
        return lambda v: {n: v[s] for n, s in slots} if v[valid] else None

    def _controller_header(self, kind: str):
        for d in self.program.find(A.HeaderDecl):
            body = annotation(d.annotations, "controller_header")
            if body is not None and body.strip().strip('"') == kind:
                t = self.env.named(d.name)
                return t, _field_codec(t)
        return None

    def sm_slot(self, name: str) -> int:
        return self._sm[name]

    # -- packets ---------------------------------------------------------------------------
    def process(self, port: int, data, *, now_us: int | None = None) -> ProcessResult:
        """Run one packet that arrives on *port*; *data* is bytes or a scapy packet."""
        if not isinstance(port, int) or not 0 <= port < 512:
            raise InvalidValueError(f"ingress port {port!r} is not in 0..511",
                                    hint="the model has ports 0..511; send on one of them")
        data = bytes(data)
        self._packet_id += 1
        now = int((time.monotonic() - self._t0) * 1e6) if now_us is None else now_us
        tr: list = []
        res = ProcessResult([], packet_id=self._packet_id, ingress_port=port, _raw=tr)
        ingress_q = deque([(data, port, 0, None, 0)])
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
            eg_tasks = self._ingress_pass(task, passes, now, tr, ingress_q, res, drops)
            passes += 1
            eq = deque(eg_tasks)
            while eq:
                self._egress_pass(eq.popleft(), now, tr, ingress_q, eq, res, drops, passes)
        res.passes = passes
        res.drop_reason = "" if res.outputs else (drops[-1] if drops else "no output")
        self._keep_fields()
        return res

    def _keep_fields(self) -> None:
        """BMv2 reuses a packet's header storage for the next packet and resets only the
        headers' validity: the next packet reads an invalid header's fields as this one
        left them (extract or setValid overwrite them; metadata starts at 0)."""
        v, t = self._last_v, self.template
        if v is not None:
            lo, hi, gaps = self._stale
            t[lo:hi] = v[lo:hi]             # one copy of the span, then its other slots back
            for s, x in gaps:
                t[s] = x
            self._last_v = None

    def packet_out(self, payload, **metadata) -> ProcessResult:
        """Send *payload* from the controller: the ``@controller_header("packet_out")``
        header, its fields from *metadata*, is put in front and the packet enters
        on the CPU port (as simple_switch_grpc does)."""
        ch = self._controller["packet_out"]
        if not isinstance(payload, (bytes, bytearray)):
            payload = bytes(payload)
        if ch is None:
            if metadata:
                raise ModelCompileError("the program has no @controller_header(\"packet_out\") "
                                        "header for packet-out metadata")
            return self.process(self.cpu_port, payload)
        t, (_, pack) = ch
        names = [n for n, _ in t.fields]
        unknown = set(metadata) - set(names)
        if unknown:
            raise UnknownNameError(f"packet_out header {t.name} has no field "
                                   f"{sorted(unknown)[0]!r}; its fields: {', '.join(names)}")
        head = pack([metadata.get(n, 0) for n in names]).to_bytes(t.nbytes, "big")
        return self.process(self.cpu_port, head + bytes(payload))

    def _fresh(self, port: int, length: int, itype: int, now: int) -> list:
        v = list(self.template)
        sm = self._sm
        v[sm["ingress_port"]] = port
        v[sm["packet_length"]] = length
        v[sm["instance_type"]] = itype
        v[sm["ingress_global_timestamp"]] = now & 0xFFFFFFFFFFFF
        return v

    def _ingress_pass(self, task, pass_no, now, tr, ingress_q, res, drops) -> list:
        data, port, itype, preserved, _ = task
        v = self._last_v = self._fresh(port if itype == 0 else 0, len(data), itype, now)
        if preserved:
            for s, x in preserved:
                v[s] = x
        p = Pkt(v, data, tr, now)
        tr.append(("pass", pass_no))
        if pass_no == 0:
            tr.append(("packet_in", port))
        self._parse(p)
        p.payload = data[p.pos:]
        sm = self._sm
        v[sm["parser_error"]] = p.parser_error
        self._verify(p)
        tr.append(("pipeline_start", "ingress"))
        try:
            self._ingress(p)
        except ExitSignal:
            tr.append(("note", "exit: the rest of ingress was skipped"))
        tr.append(("pipeline_done", "ingress"))
        out = []
        if p.clone is not None:
            out += self._ingress_clone(p, data, port, now, tr)
        if p.digests:
            for name, items, pre in p.digests:
                d = Digest(name, {n: (pre[n] if n in pre else f(p)) for n, f, _ in items})
                self.pending_digests.append(d)
                res.digests.append(d)
                tr.append(("digest", name, d.data))
        if p.resubmit is not None:
            keep = [(s, v[s]) for s in p.resubmit]
            tr.append(("resubmit", self._token(v) if self._token else None))
            ingress_q.append((data, 0, INSTANCE_TYPES["RESUBMIT"], keep, pass_no + 1))
            return out
        mgid = v[sm["mcast_grp"]]
        if mgid:
            v[sm["instance_type"]] = INSTANCE_TYPES["REPLICATION"]
            group = self.mc_groups.get(mgid)
            if not group:
                why = (f"multicast group {mgid} has no replicas" if group is not None
                       else f"multicast group {mgid} is not configured")
                tr.append(("drop", why))
                drops.append(why)
                return out
            for eport, rid in group:
                w = list(v)
                w[sm["egress_rid"]] = rid
                out.append((w, p.payload, eport, None, None, p.plen, p.ingress_len))
            return out
        spec = v[sm["egress_spec"]]
        if spec == self.drop_port:
            why = p.marked_drop or f"egress_spec is {self.drop_port} (the drop port) when ingress ended"
            tr.append(("drop", why))
            drops.append(why)
            return out
        v[sm["instance_type"]] = 0
        out.append((v, p.payload, spec, p.recirculate, p.truncate, p.plen, p.ingress_len))
        return out

    def _ingress_clone(self, p: Pkt, data: bytes, port: int, now: int, tr) -> list:
        kind, session, slots = p.clone
        replicas = self.clone_sessions.get(session)
        if not replicas:
            tr.append(("note", f"clone to session {session} ignored: the session is not configured"))
            return []
        tr.append(("clone", f"ingress-to-egress, session {session}"))
        cv = self._fresh(port, len(data), 0, now)
        cp = Pkt(cv, data, [], now)
        self._parse(cp)
        fresh = list(self.template)
        a, b = self.hdr_slots
        fresh[a:b] = cv[a:b]
        for s in slots:
            fresh[s] = p.v[s]
        fresh[self._sm["instance_type"]] = INSTANCE_TYPES["INGRESS_CLONE"]
        fresh[self._sm["packet_length"]] = len(data)
        return [(list(fresh), data[cp.pos:], eport, None, None, len(data), len(data))
                for eport, _ in replicas]

    def _egress_pass(self, task, now, tr, ingress_q, eq, res, drops, passes) -> None:
        v, payload, eport, recirc, trunc, plen, ilen = task
        self._last_v = v
        sm = self._sm
        v[sm["egress_port"]] = eport
        v[sm["egress_spec"]] = 0
        v[sm["packet_length"]] = plen
        v[sm["egress_global_timestamp"]] = now & 0xFFFFFFFFFFFF
        v[sm["enq_timestamp"]] = now & 0xFFFFFFFF
        p = Pkt(v, b"", tr, now)
        p.payload, p.plen, p.ingress_len = payload, plen, ilen
        p.recirculate, p.truncate, p.in_egress = recirc, trunc, True
        tr.append(("pipeline_start", "egress"))
        try:
            self._egress(p)
        except ExitSignal:
            tr.append(("note", "exit: the rest of egress was skipped"))
        tr.append(("pipeline_done", "egress"))
        if p.digests:
            tr.append(("note", "digest() in egress is ignored (BMv2 sends digests after ingress)"))
        if p.resubmit is not None:
            tr.append(("note", "resubmit in egress is ignored (BMv2 acts on it after ingress)"))
        if p.clone is not None:
            self._egress_clone(p, eq, tr)
        if v[sm["egress_spec"]] == self.drop_port:
            why = p.marked_drop or f"egress_spec is {self.drop_port} (the drop port) when egress ended"
            tr.append(("drop", why))
            drops.append(why)
            return
        self._compute(p)
        p.emitted = []
        self._deparse(p)
        tr.append(("deparser_done", ""))
        out = b"".join(p.emitted) + payload
        if p.truncate is not None and p.truncate < len(out):
            out = out[:p.truncate]
        if p.recirculate is not None:
            keep = [(s, v[s]) for s in p.recirculate]
            tr.append(("recirculate", self._token(v) if self._token else None))
            ingress_q.append((out, 0, INSTANCE_TYPES["RECIRC"], keep, passes))
            return
        if self.ports is not None and eport not in self.ports and eport != self.cpu_port:
            why = f"port {eport} is not a port of the switch"
            tr.append(("drop", why))
            drops.append(why)
            return
        tr.append(("packet_out", eport))
        res.outputs.append((eport, out))
        if eport == self.cpu_port:
            res.packet_ins.append(self._decode_packet_in(out))

    def _egress_clone(self, p: Pkt, eq, tr) -> None:
        kind, session, slots = p.clone
        replicas = self.clone_sessions.get(session)
        if not replicas:
            tr.append(("note", f"clone to session {session} ignored: the session is not configured"))
            return
        tr.append(("clone", f"egress-to-egress, session {session}"))
        fresh = list(self.template)
        a, b = self.hdr_slots
        fresh[a:b] = p.v[a:b]
        for s in slots:
            fresh[s] = p.v[s]
        fresh[self._sm["instance_type"]] = INSTANCE_TYPES["EGRESS_CLONE"]
        for eport, _ in replicas:
            eq.append((list(fresh), p.payload, eport, None, None, p.plen, p.ingress_len))

    def _decode_packet_in(self, out: bytes) -> PacketIn:
        ch = self._controller["packet_in"]
        if ch is None:
            return PacketIn({}, out)
        t, (unpack, _) = ch
        nb = t.nbytes
        if len(out) < nb:
            return PacketIn({}, out)
        vals = unpack(int.from_bytes(out[:nb], "big"))
        return PacketIn({n: x for (n, _), x in zip(t.fields, vals)}, out[nb:])

