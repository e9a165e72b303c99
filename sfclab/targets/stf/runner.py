"""Run a v1model program's STF test (p4c's simple test framework) on a target.

:func:`run_stf` plays an STF file's commands (:mod:`sfclab.targets.stf.script`) on an
:class:`StfDriver` — the embedded model (:class:`ModelDriver`) or a real BMv2
(:class:`~sfclab.targets.stf.bmv2.Bmv2Driver`) — and checks its expectations as p4c's
``bmv2stf.py`` does: the packets out of each port, in order, against that port's
``expect`` lines (``*`` any nibble, a packet longer than its pattern matches unless
the pattern ends with ``$``); a port named in a ``packet`` or ``expect`` line that
sends more packets than expected fails; ``expect PORT`` alone takes any packets on
that port; ports no line names are not watched (BMv2 has no interface there).
A command the target refuses (an unknown table, a bad value) is a failure with its
line, not an exception.  ``sfclab stf PROGRAM.p4 [TEST.stf]`` is the command line.

>>> prog = '''
... #include <core.p4>
... #include <v1model.p4>
... header h_t { bit<8> a; bit<8> b; }
... struct hs { h_t h; }
... struct m_t { }
... parser P(packet_in pk, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
...     state start { pk.extract(hdr.h); transition accept; } }
... control V(inout hs hdr, inout m_t m) { apply { } }
... control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
...     action set(bit<8> v, bit<9> port) { hdr.h.b = v; sm.egress_spec = port; }
...     table t { key = { hdr.h.a : exact; } actions = { set; NoAction; } }
...     apply { t.apply(); } }
... control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
... control C(inout hs hdr, inout m_t m) { apply { } }
... control D(packet_out pk, in hs hdr) { apply { pk.emit(hdr.h); } }
... V1Switch(P(), V(), I(), E(), C(), D()) main;
... '''
>>> from sfclab.targets.model import ModelSwitch
>>> report = run_stf(ModelDriver(ModelSwitch(prog)), '''
... add t hdr.h.a:1 set(v:7, port:2)
... packet 0 01 00
... expect 2 01 07$''')
>>> report.ok, report.passed, report.summary()
(True, 1, 'model: 1 of 1 expectation(s) met')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ...errors import SfclabError
from .script import Add, CheckCounter, Direct, Expect, Multicast, Packet, Remove, SetDefault, StfCommand, Unknown, Wait, compare_packet, key_value, parse_number, parse_stf, resolve_key

__all__ = ["StfDriver", "ModelDriver", "Check", "PacketRun", "StfReport", "run_stf",
           "stf_test", "load_model", "resolve_key", "Multicast"]

_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, ">": int.__gt__,
    "<=": int.__le__, ">=": int.__ge__}


class StfDriver(Protocol):
    """What :func:`run_stf` needs of a target."""

    name: str

    def add(self, cmd: Add) -> None: ...

    def set_default(self, cmd: SetDefault) -> None: ...

    def direct(self, cmd: Direct) -> str: ...

    def remove_all(self) -> None: ...

    def counter(self, name: str, index: int) -> tuple[int, int]: ...

    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]: ...


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation (or refusal) and how it went; ``line`` is the STF line."""

    line: int
    ok: bool
    what: str
    why: str = ""


@dataclass(frozen=True, slots=True)
class PacketRun:
    """A ``packet`` line and what came out of the target for it (every port)."""

    line: int
    port: int
    data: bytes
    outputs: tuple[tuple[int, bytes], ...]


@dataclass
class StfReport:
    """The checks of one STF run, in line order, and every packet's outputs."""

    target: str
    checks: list[Check] = field(default_factory=list)
    packets: list[PacketRun] = field(default_factory=list)
    source: str = ""
    #: ``(line, text)``: what was not run (commands this runner does not know)
    notes: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def passed(self) -> int:
        return sum(c.ok for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def summary(self) -> str:
        return f"{self.target}: {self.passed} of {len(self.checks)} expectation(s) met"

    def text(self) -> str:
        """One line per check (``file:LINE: ok|FAIL what — why``) and the summary."""
        where = self.source or "stf"
        lines = [f"{where}:{line}: note: {text}" for line, text in self.notes]
        lines += [f"{where}:{c.line}: {'ok  ' if c.ok else 'FAIL'} {c.what}"
                  + (f": {c.why}" if c.why else "") for c in self.checks]
        return "\n".join(lines + [self.summary()])


def run_stf(driver: StfDriver, script: str | list[StfCommand], *,
            source: str = "") -> StfReport:
    """Play *script* (STF text or parsed commands) on *driver*; see the module docstring."""
    cmds = parse_stf(script, source=source) if isinstance(script, str) else script
    report = StfReport(driver.name, source=source)
    expects: dict[int, list[Expect]] = {}
    watched: set[int] = set()
    for c in cmds:
        if isinstance(c, Expect):
            expects.setdefault(c.port, []).append(c)
            watched.add(c.port)
        elif isinstance(c, Packet):
            watched.add(c.port)
    for c in cmds:
        if isinstance(c, Packet):
            outs = _guard(report, c, lambda c=c: driver.send(c.port, c.data))
            report.packets.append(PacketRun(c.line, c.port, c.data, tuple(outs or ())))
        elif isinstance(c, CheckCounter):
            _check_counter(driver, c, report)
        elif isinstance(c, Unknown):
            report.notes.append((c.line, f"unknown command {c.name!r} ignored (as p4c's "
                                         f"bmv2stf ignores it)"))
        elif not isinstance(c, (Expect, Wait)):
            _guard(report, c, lambda c=c: _control(driver, c))
    _check_outputs(report, expects, watched)
    report.checks.sort(key=lambda ch: ch.line)
    return report


def _control(driver: StfDriver, c: StfCommand) -> None:
    if isinstance(c, Add):
        driver.add(c)
    elif isinstance(c, SetDefault):
        driver.set_default(c)
    elif isinstance(c, Remove):
        driver.remove_all()
    elif isinstance(c, Direct):
        driver.direct(c)


def _guard(report: StfReport, c: StfCommand, fn: Callable):
    try:
        return fn()
    except (SfclabError, ValueError, IndexError) as e:
        msg = str(e).replace("\n", " ")
        report.checks.append(Check(c.line, False, c.text.strip(),
                                   f"{report.target} refused it: {msg}"))
        return None


def _check_counter(driver: StfDriver, c: CheckCounter, report: StfReport) -> None:
    got = _guard(report, c, lambda: driver.counter(c.name, c.index))
    if got is None:
        return
    value = got[0] if c.kind == "packets" else got[1]
    ok = _OPS[c.op](value, c.value)
    report.checks.append(Check(c.line, ok, c.text.strip(),
                               "" if ok else f"the counter's {c.kind} are {value}"))


def _check_outputs(report: StfReport, expects: dict[int, list[Expect]], watched: set[int]) -> None:
    by_port: dict[int, list[tuple[int, bytes]]] = {}
    for run in report.packets:
        for port, data in run.outputs:
            by_port.setdefault(port, []).append((run.line, data))
    for port in sorted(watched):
        want = expects.get(port, [])
        got = by_port.get(port, [])
        if any(e.pattern is None for e in want):
            continue
        for i, e in enumerate(want):
            what = f"port {port}: expect {e.pattern}{'$' if e.exact else ''}"
            if i >= len(got):
                report.checks.append(Check(e.line, False, what, f"no packet {i + 1} came out "
                                                                f"of port {port} (only {len(got)})"))
                continue
            why = compare_packet(e.pattern, got[i][1], e.exact)
            report.checks.append(Check(e.line, not why, what, why and
                                       f"got {got[i][1].hex().upper()} (from the packet of "
                                       f"line {got[i][0]}): {why}"))
        for line, data in got[len(want):]:
            report.checks.append(Check(line, False, f"port {port}: no more packets expected",
                                       f"the packet of line {line} also sent "
                                       f"{data.hex().upper()} out of port {port}"))


def load_model(program, *, defines=(), includes=()):
    """A :class:`~sfclab.targets.model.ModelSwitch` running the P4 file *program*, preprocessed as
    p4c-bm2-ss does (its own ``__TARGET_BMV2__``, ``-D NAME[=VALUE]`` *defines*, ``-I``
    *includes*)."""
    from ...p4.parser import parse_p4_file
    from ...p4.preprocess import BMV2_DEFINES
    from ..model import ModelSwitch

    macros = dict(BMV2_DEFINES)
    for d in defines:
        name, _, value = d.partition("=")
        macros[name.strip()] = value if value else "1"
    return ModelSwitch(parse_p4_file(program, include_dirs=includes, defines=macros))


def stf_test(program, test=None, *, target: str = "model", defines=(), includes=(),
             workdir=None) -> StfReport:
    """Run the STF file *test* (default: *program* with ``.stf``) for the v1model P4 file
    *program* on the embedded model (``target="model"``) or on a BMv2 sfclab starts and
    stops (``"bmv2"``: :mod:`sfclab.targets.stf.bmv2`); the report has every expectation's line."""
    from pathlib import Path

    prog = Path(program)
    test = Path(test) if test is not None else prog.with_suffix(".stf")
    try:
        text = test.read_text()
    except OSError as e:
        raise SfclabError(f"cannot read the STF file {test}: {e.strerror}",
                          hint="give it after the program: sfclab stf PROG.p4 TEST.stf") from None
    script = parse_stf(text, source=str(test))
    if target == "model":
        return run_stf(ModelDriver(load_model(prog, defines=defines, includes=includes)),
                       script, source=str(test))
    if target != "bmv2":
        raise SfclabError(f"unknown STF target {target!r}", hint="model or bmv2")
    import tempfile

    from .bmv2 import StfBmv2, compile_bmv2

    with tempfile.TemporaryDirectory(prefix="sfclab-stf-") as tmp:
        build = compile_bmv2(prog, Path(workdir or tmp) / "build", defines=defines,
                             includes=includes)
        with StfBmv2(Path(workdir or tmp) / "switch") as sw:
            return run_stf(sw.load(build), script, source=str(test))


class ModelDriver:
    """:class:`StfDriver` for the embedded model (:class:`~sfclab.targets.model.ModelSwitch`)."""

    name = "model"

    def __init__(self, switch) -> None:
        self.sw = switch
        self.mc = Multicast()

    def _match(self, table, keys, where: str) -> dict:
        names = [k.name for k in table.keys]
        match: dict = {}
        for k in table.keys:        # what bmv2stf leaves unsaid: exact 0, the rest don't care
            match[k.name] = 0 if k.kind == "exact" else None
        for stf_name, text in keys:
            name = resolve_key(stf_name, names)
            if name is None:
                raise SfclabError(f"{where}: table {table.name} has no key {stf_name!r}; its "
                                  f"keys: {', '.join(names) or '(none)'}")
            k = next(k for k in table.keys if k.name == name)
            match[name] = _bmv2_lpm(key_value(k.kind, text, k.width), k) \
                if k.kind == "lpm" and k.width % 8 else key_value(k.kind, text, k.width)
        return match

    def _action(self, table, name: str) -> str:
        acts = list(table.actions)
        if name in acts:
            return name
        ends = [a for a in acts if a.endswith(name)]
        if len(ends) == 1:
            return ends[0]
        exact = [a for a in ends if a.endswith("." + name)]
        if len(exact) == 1:
            return exact[0]
        raise SfclabError(f"table {table.name} has no action {name!r}; its actions: "
                          f"{', '.join(acts)}")

    def _table(self, name: str):
        """The table *name* means: its name, a dotted suffix, or (as p4c's bmv2stf finds
        tables) the one name ending with it."""
        try:
            return self.sw.table(name)
        except SfclabError:
            ends = [t for n, t in self.sw.tables.items() if n.endswith(name)]
            if len(ends) == 1:
                return ends[0]
            raise

    def add(self, cmd: Add) -> None:
        t = self._table(cmd.table)
        prio = cmd.priority
        if t.mode == "priority" and not prio:
            prio = 1
        self.sw.insert(t.name, self._match(t, cmd.keys, "add"), self._action(t, cmd.action),
                       {n: parse_number(v) for n, v in cmd.args},
                       priority=prio if t.mode == "priority" else None)

    def set_default(self, cmd: SetDefault) -> None:
        t = self._table(cmd.table)
        self.sw.set_default(t.name, self._action(t, cmd.action),
                            {n: parse_number(v) for n, v in cmd.args})

    def remove_all(self) -> None:
        for t in self.sw.tables.values():
            if not t.const_entries:
                t.clear()

    def counter(self, name: str, index: int) -> tuple[int, int]:
        return self.sw.read_counter(name, index)

    def direct(self, cmd: Direct) -> str:
        w = cmd.words
        if cmd.name.startswith("mc_"):
            answer, group = self.mc.apply(cmd)
            if group is not None:
                self.sw.mc_groups[group] = list(self.mc.groups[group])
            return answer
        if cmd.name == "mirroring_add":
            self.sw.set_clone_session(parse_number(w[0]), [parse_number(w[1])])
            return "ok"
        if cmd.name == "mirroring_add_mc":
            self.sw.set_clone_session(parse_number(w[0]),
                                      self.mc.groups.get(parse_number(w[1]), []))
            return "ok"
        if cmd.name == "register_write":
            self.sw.write_register(w[0], parse_number(w[1]), parse_number(w[2]))
            return "ok"
        if cmd.name == "register_reset":
            self.sw.reset_register(w[0])
            return "ok"
        if cmd.name in ("meter_set_rates", "meter_array_set_rates"):
            index = parse_number(w[1]) if cmd.name == "meter_set_rates" else None
            rates = w[2:] if index is not None else w[1:]
            (cir, cburst), (pir, pburst) = [_rate(r) for r in rates]
            # BMv2's rates are per microsecond; the model's per second
            self.sw.set_meter(w[0], index, cir=cir * 1e6, cburst=cburst, pir=pir * 1e6,
                              pburst=pburst)
            return "ok"
        if cmd.name in ("register_read", "counter_read", "mirroring_get", "meter_get_rates"):
            return "read"
        raise SfclabError(f"{cmd.name} is not supported by sfclab's STF runner on the model")

    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        return list(self.sw.process(port, data).outputs)


def _rate(text: str) -> tuple[float, int]:
    """``RATE:BURST`` of BMv2's meter commands (units per microsecond, units)."""
    rate, _, burst = text.partition(":")
    return float(rate), int(parse_number(burst))


def _bmv2_lpm(value: tuple[int, int], key) -> tuple[int, int]:
    """An lpm ``(value, prefix)`` as BMv2 takes it for a key that is no whole number of
    bytes: the prefix counts from the top of the key's bytes (``/12`` on a 12-bit key is
    its top 8 bits), where the model (and P4Runtime) count from the top of its bits."""
    v, plen = value
    w = key.width
    plen = max(0, min(w, plen - (-w % 8)))
    return v & (((1 << plen) - 1) << (w - plen)), plen
