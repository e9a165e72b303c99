"""STF tests on a real BMv2: p4c-bm2-ss compiles, ``simple_switch_grpc`` runs.

:class:`StfBmv2` starts one ``simple_switch_grpc`` in a network namespace of its
own (``unshare --net``: the namespace has no interface but a loopback that is
down, so BMv2's Thrift server, which always listens on ``0.0.0.0:9090``, is
reachable from nowhere), with its P4Runtime server and its packet socket
(``--packet-in``) on Unix sockets in a working directory, and its log at debug
level in a file there.  Programs are pushed over P4Runtime with p4c's P4Info
(several programs, one after the other, on one switch: :meth:`StfBmv2.load`);
:class:`Bmv2Driver` plays STF commands on it (entries, default actions,
multicast groups and clone sessions over P4Runtime).

A packet's outputs are known when BMv2 is done with it, which its log says
without any waiting on time: ``simple_switch`` logs every copy's end
(``Transmitting packet of size N out of port P``, ``Dropping packet at the end of
ingress`` / ``of egress``) and every new copy (``Multicast requested``, ``number of
packets replicated : N``, ``Cloning packet to egress port P``); packets go in one
at a time, and one is done when every copy has ended and every transmitted frame
has come out of the packet socket.  :func:`compile_bmv2` runs ``p4c-bm2-ss`` with
``-D`` / ``-I`` as p4c takes them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from finsy.proto import p4r

from ...errors import SfclabError, TargetError
from ..bmv2.target import BMV2_ENV, INSTALL_BMV2, SWITCH
from .script import Add, Direct, Multicast, SetDefault, key_value, parse_number, resolve_key
from ..process.tools import ManagedProcess, require_executable, wait_for_port

__all__ = ["Bmv2Program", "compile_bmv2", "StfBmv2", "Bmv2Driver", "missing_stf_tools"]


def missing_stf_tools() -> list[str]:
    """What running STF tests on BMv2 needs and this machine lacks (empty: nothing)."""
    from ...codegen.p4c import find_compiler
    from ..bmv2.target import find_switch

    out = []
    if find_compiler("v1model") is None:
        out.append("p4c-bm2-ss (p4c)")
    if find_switch() is None:
        out.append("simple_switch_grpc (BMv2 with PI)")
    if shutil.which("unshare") is None:
        out.append("unshare (util-linux), to give BMv2 a network namespace of its own")
    return out


class Bmv2Program:
    """A program p4c-bm2-ss compiled: the BMv2 JSON's bytes and p4c's P4Info."""

    def __init__(self, json_path: Path, p4info_path: Path) -> None:
        from ...codegen.p4c import compiler_p4info
        from ...runtime.encode import P4InfoIndex

        self.json_path, self.p4info_path = json_path, p4info_path
        self.config = json_path.read_bytes()
        self.p4info = compiler_p4info(p4info_path)
        self.index = P4InfoIndex(self.p4info)


def compile_bmv2(program: str | os.PathLike, out_dir: str | os.PathLike, *,
                 defines: Mapping[str, str] | Sequence[str] = (),
                 includes: Sequence[str | os.PathLike] = (), timeout: float = 120) -> Bmv2Program:
    """Compile *program* with ``p4c-bm2-ss`` (``-D NAME=VALUE``, ``-I DIR``) into
    *out_dir*; :class:`TargetError` with p4c's messages if it refuses it."""
    from ...codegen.p4c import COMPILERS, find_compiler

    exe = find_compiler("v1model")
    if exe is None:
        _, name, how = COMPILERS["v1model"]
        raise TargetError(f"{name} is not installed", hint=how)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    defs = [f"{k}={v}" for k, v in defines.items()] if isinstance(defines, Mapping) else defines
    cmd = [exe, "--arch", "v1model", "--std", "p4-16", *(f"-D{d}" for d in defs),
           *(f"-I{i}" for i in includes), "-o", str(out / "program.json"),
           "--p4runtime-files", str(out / "p4info.txt"), str(program)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise TargetError(f"p4c-bm2-ss did not finish {program} in {timeout:.0f} s") from None
    if done.returncode != 0:
        text = (done.stderr + done.stdout).strip()
        raise TargetError(f"p4c-bm2-ss refused {program}:\n{text[-3000:]}",
                          hint="command: " + " ".join(cmd))
    return Bmv2Program(out / "program.json", out / "p4info.txt")


class StfBmv2:
    """One ``simple_switch_grpc`` in a network namespace of its own (see the module
    docstring); a context manager that stops it."""

    def __init__(self, workdir: str | os.PathLike | None = None, *, timeout: float = 20) -> None:
        from ...runtime.client import Client
        from ..ports.packet_io import NanomsgPorts

        missing = missing_stf_tools()
        if missing:
            raise TargetError(f"STF tests on BMv2 need {', '.join(missing)}",
                              hint=INSTALL_BMV2)
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="sfclab-stf-")
        self.workdir = Path(workdir or self._tmp.name)
        self.workdir.mkdir(parents=True, exist_ok=True)
        exe = require_executable(SWITCH, env=BMV2_ENV, install=INSTALL_BMV2)
        grpc = self.workdir / "grpc.sock"
        self.log_path = self.workdir / "bmv2.log.txt"
        ns = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--user",
                                                            "--map-root-user", "--net"]
        cmd = [*ns, exe, "--device-id", "0", "--packet-in", f"ipc://{self.workdir}/packets.ipc",
               "--log-file", str(self.workdir / "bmv2.log"), "--log-flush", "--log-level",
               "debug", "--no-p4", "--", "--grpc-server-addr", f"unix://{grpc}"]
        self.process = ManagedProcess.start(cmd, log_path=self.workdir / "switch.out",
                                            extra_logs=[self.log_path], name=SWITCH)
        try:
            wait_for_port(f"unix:{grpc}", None, timeout=timeout, process=self.process,
                          what=SWITCH)
            self.client = Client(f"unix://{grpc}", device_id=0).connect()
            self.ports = NanomsgPorts(f"ipc://{self.workdir}/packets.ipc")
        except BaseException:
            self.process.stop()
            raise
        self.log = _LogReader(self.log_path)
        self.program: Bmv2Program | None = None
        #: multicast groups and clone sessions written (deleted by the next :meth:`load`)
        self.pre_written: list[p4r.Entity] = []

    def load(self, program: Bmv2Program) -> Bmv2Driver:
        """Push *program* (replacing the one before, and its entries); a driver for it.
        BMv2 keeps multicast groups and clone sessions over a new pipeline: the ones
        the program before wrote are deleted first."""
        self._clear_pre()
        self.client.set_pipeline(program.p4info, program.config)
        self.program = program
        self.log.skip()
        self.ports.poll()
        return Bmv2Driver(self, program)

    def _clear_pre(self) -> None:
        for entity in self.pre_written:
            u = p4r.Update(type=p4r.Update.DELETE)
            u.entity.CopyFrom(entity)
            try:
                self.client.write([u])
            except SfclabError:
                pass                    # gone already
        self.pre_written = []

    def close(self) -> None:
        for part in (getattr(self, "ports", None), getattr(self, "client", None)):
            if part is not None:
                part.close()
        self.process.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> StfBmv2:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _LogReader:
    """The new lines of BMv2's log file since the last read."""

    def __init__(self, path: Path) -> None:
        self.path, self.pos, self.rest = path, 0, b""

    def skip(self) -> None:
        self.lines()

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return []
        self.pos += len(data)
        data = self.rest + data
        *whole, self.rest = data.split(b"\n")
        return [w.decode("utf-8", "replace") for w in whole]


_TAG = re.compile(r"\[thread (\d+)\] (?:\[(\d+)\.(\d+)\] \[cxt \d+\] )?(.*)")


class _Fate:
    """How many copies of the packet in flight are still alive, from BMv2's log."""

    def __init__(self) -> None:
        self.alive, self.sent, self.waiting = 1, 0, False
        self.last_thread_tagged: dict[str, bool] = {}

    def line(self, text: str) -> None:
        m = _TAG.search(text)
        if not m:
            return
        thread, msg = m[1], m[4]
        if msg.startswith("Transmitting packet of size"):
            self.alive -= 1
            self.sent += 1
        elif msg.startswith(("Dropping packet at the end of", "Priority out of range")):
            self.alive -= 1
        elif msg.startswith("Multicast requested for packet"):
            self.alive -= 1
            self.waiting = True
        elif msg.startswith("Cloning packet to MGID"):
            self.waiting = True
        elif msg.startswith("number of packets replicated"):
            n = re.search(r": (\d+)", msg)
            self.alive += int(n[1]) if n else 0
            self.waiting = False
        elif msg.startswith("Replication requested for mgid"):
            self.waiting = False
        elif msg.startswith("Cloning packet to egress port"):
            self.alive += 1

    @property
    def done(self) -> bool:
        return self.alive <= 0 and not self.waiting


class Bmv2Driver:
    """:class:`~sfclab.targets.stf.runner.StfDriver` for a program loaded on an :class:`StfBmv2`."""

    name = "bmv2"
    #: Seconds to wait for BMv2 to finish one packet before giving up on it.
    timeout = 10.0

    def __init__(self, switch: StfBmv2, program: Bmv2Program) -> None:
        self.sw, self.prog, self.ix = switch, program, program.index
        self.mc = Multicast()
        self._groups: set[int] = set()

    # -- names ---------------------------------------------------------------------------------
    def _table(self, name: str):
        tables = self.ix.tables
        if name in tables:
            return tables[name]
        ends = [t for n, t in tables.items() if n.endswith(name)]
        if len(ends) != 1:
            dotted = [t for n, t in tables.items() if n.endswith("." + name)]
            if len(dotted) == 1:
                return dotted[0]
            what = "more than one table ends with" if dotted else "no table is named"
            raise SfclabError(f"in the program as p4c compiled it, {what} {name!r} (p4c "
                              f"removes tables no packet reaches); its tables: "
                              f"{', '.join(tables) or '(none)'}")
        return ends[0]

    def _action(self, table, name: str):
        ids = [r.id for r in table.action_refs]
        acts = [a for a in self.ix.info.actions if a.preamble.id in ids]
        for pick in (lambda n: n == name, lambda n: n.endswith("." + name),
                     lambda n: n.endswith(name)):
            found = [a for a in acts if pick(a.preamble.name)]
            if len(found) == 1:
                return found[0]
        raise SfclabError(f"table {table.preamble.name} has no action {name!r}; its actions: "
                          f"{', '.join(a.preamble.name for a in acts)}")

    # -- entries -------------------------------------------------------------------------------
    def _entry(self, table, keys, action, args, priority: int | None) -> p4r.TableEntry:
        te = p4r.TableEntry(table_id=table.preamble.id)
        fields = list(table.match_fields)
        names = [f.name for f in fields]
        given = {}
        for stf_name, text in keys:
            n = resolve_key(stf_name, names)
            if n is None:
                raise SfclabError(f"table {table.preamble.name} has no key {stf_name!r}; its "
                                  f"keys: {', '.join(names)}")
            given[n] = text
        for f in fields:
            kind = _KINDS.get(f.match_type, "exact")
            if f.name not in given and kind != "exact":
                continue
            v = key_value(kind, given.get(f.name, "0"), f.bitwidth)
            _field(te, f, kind, v)
        if any(_KINDS.get(f.match_type) in ("ternary", "range", "optional") for f in fields):
            te.priority = priority or 1
        a = self._action(table, action)
        te.action.action.action_id = a.preamble.id
        by_name = {p.name: p for p in a.params}
        for n, v in args:
            p = by_name.get(n)
            if p is None:
                raise SfclabError(f"action {a.preamble.name} has no parameter {n!r}")
            te.action.action.params.add(param_id=p.id, value=_bytes(parse_number(v), p.bitwidth))
        return te

    def add(self, cmd: Add) -> None:
        t = self._table(cmd.table)
        u = p4r.Update(type=p4r.Update.INSERT)
        u.entity.table_entry.CopyFrom(self._entry(t, cmd.keys, cmd.action, cmd.args, cmd.priority))
        self.sw.client.write([u])

    def set_default(self, cmd: SetDefault) -> None:
        t = self._table(cmd.table)
        te = self._entry(t, (), cmd.action, cmd.args, None)
        del te.match[:]
        te.ClearField("priority")
        te.is_default_action = True
        u = p4r.Update(type=p4r.Update.MODIFY)
        u.entity.table_entry.CopyFrom(te)
        self.sw.client.write([u])

    def remove_all(self) -> None:
        for t in self.ix.info.tables:
            ents = self.sw.client.read([p4r.Entity(table_entry=p4r.TableEntry(
                table_id=t.preamble.id))])
            ups = []
            for e in ents:
                if e.table_entry.is_default_action:
                    continue
                u = p4r.Update(type=p4r.Update.DELETE)
                u.entity.table_entry.CopyFrom(e.table_entry)
                ups.append(u)
            if ups:
                self.sw.client.write(ups)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        cs = [c for c in self.ix.info.counters if c.preamble.name == name
              or c.preamble.name.endswith("." + name)]
        if len(cs) != 1:
            raise SfclabError(f"no counter {name!r} (or more than one)")
        ent = p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cs[0].preamble.id))
        ent.counter_entry.index.index = index
        got = self.sw.client.read([ent])
        d = got[0].counter_entry.data if got else None
        return (d.packet_count, d.byte_count) if d else (0, 0)

    def direct(self, cmd: Direct) -> str:
        if cmd.name.startswith("mc_"):
            answer, group = self.mc.apply(cmd)
            if group is not None:
                self._write_group(group, self.mc.groups[group])
            return answer
        if cmd.name in ("mirroring_add", "mirroring_add_mc"):
            w = [parse_number(x) for x in cmd.words]
            reps = [(w[1], 0)] if cmd.name == "mirroring_add" else self.mc.groups.get(w[1], [])
            u = p4r.Update(type=p4r.Update.INSERT)
            cs = u.entity.packet_replication_engine_entry.clone_session_entry
            cs.session_id = w[0]
            for port, rid in reps:
                cs.replicas.add(egress_port=port, instance=rid)
            self.sw.client.write([u])
            self._written(u.entity, "clone_session_entry")
            return "ok"
        if cmd.name in ("register_read", "counter_read", "mirroring_get", "meter_get_rates"):
            return "read"
        raise SfclabError(f"{cmd.name} is not supported by sfclab's STF runner on BMv2 "
                          "(P4Runtime has no call for it)")

    def _write_group(self, group: int, replicas: list[tuple[int, int]]) -> None:
        u = p4r.Update(type=p4r.Update.MODIFY if group in self._groups else p4r.Update.INSERT)
        g = u.entity.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = group
        for port, rid in replicas:
            g.replicas.add(egress_port=port, instance=rid)
        if replicas:
            self.sw.client.write([u])
            if group not in self._groups:
                self._written(u.entity, "multicast_group_entry")
            self._groups.add(group)

    def _written(self, entity: p4r.Entity, kind: str) -> None:
        """Remember a PRE entity (its key only) for :meth:`StfBmv2.load` to delete."""
        key = p4r.Entity()
        src = getattr(entity.packet_replication_engine_entry, kind)
        dst = getattr(key.packet_replication_engine_entry, kind)
        if kind == "clone_session_entry":
            dst.session_id = src.session_id
        else:
            dst.multicast_group_id = src.multicast_group_id
        self.sw.pre_written.append(key)

    # -- packets -------------------------------------------------------------------------------
    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Send one packet and return what came out, once BMv2's log says it is done."""
        sw = self.sw
        sw.log.skip()
        sw.ports.poll()
        fate = _Fate()
        sw.ports.send(port, data)
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + self.timeout
        while True:
            for line in sw.log.lines():
                fate.line(line)
            out += sw.ports.poll()
            if fate.done and len(out) >= fate.sent:
                return out
            if time.monotonic() > deadline:
                raise TargetError(f"BMv2 did not finish the packet in {self.timeout:g} s "
                                  f"({fate.alive} copies still alive, {len(out)} of "
                                  f"{fate.sent} frames out)" + sw.process.log_excerpt(30))
            if not sw.process.running:
                raise TargetError("BMv2 exited while running a packet" +
                                  sw.process.log_excerpt(30))
            time.sleep(0.0005)


_KINDS = {2: "exact", 3: "lpm", 4: "ternary", 5: "range", 6: "optional"}


def _bytes(v: int, width: int) -> bytes:
    if v < 0 or v >> width:
        raise SfclabError(f"{v} does not fit in {width} bits")
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def _field(te: p4r.TableEntry, f, kind: str, v) -> None:
    fm = te.match.add(field_id=f.id)
    w = f.bitwidth
    if kind == "exact":
        fm.exact.value = _bytes(v, w)
    elif kind == "optional":
        fm.optional.value = _bytes(v, w)
    elif kind == "lpm":
        value, plen = v
        if plen == 0:
            te.match.pop()
            return
        # BMv2 (with PI) counts the prefix from the top of the key's bytes: the value's
        # bits past the prefix are those below its top plen - padding bits
        bits = max(0, min(w, plen - (-w % 8)))
        mask = ((1 << bits) - 1) << (w - bits)
        fm.lpm.value, fm.lpm.prefix_len = _bytes(value & mask, w), plen
    elif kind == "ternary":
        value, mask = v
        if mask == 0:
            te.match.pop()
            return
        fm.ternary.value, fm.ternary.mask = _bytes(value & mask, w), _bytes(mask, w)
    elif kind == "range":
        lo, hi = v
        if lo == 0 and hi == (1 << w) - 1:
            te.match.pop()
            return
        fm.range.low, fm.range.high = _bytes(lo, w), _bytes(hi, w)
