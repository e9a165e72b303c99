"""The stages the Tofino compiler used, per pipe and gress, read from its ``.bfa`` files.

``p4c-barefoot`` writes one ``.bfa`` (the Tofino assembly) per ``Pipeline``:
``<out>/tofino/pipe0/program.bfa``, ``pipe1/…``.  Each lists, per ``stage N ingress:`` /
``stage N egress:``, the match tables and gateways placed there.  A Tofino 1 has stages
0–11 per gress, and the compiler does not refuse a table placed past them (its table
placement only logs a dependency chain longer than the device; the SDE's assembler is
what refuses it), so sfclab reads every ``.bfa`` and refuses a program with a table in
stage 12 or later (:func:`over_the_chip`).

Every table is some pipelet's: an NF slot's (a table named ``slot<i>_…`` that is not the
slot's branch, save or loop table; a table or gateway the compiler made of statements
that touches the slot's fields, or whose line is in the slot's NF's control), else
sfclab's core.  :func:`pipelet_stages` says per pipelet which stages the NF slots and
the core used; a stage that holds the core's tables and no NF's is the core's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TOFINO1_STAGES", "bfa_tables", "bfa_files", "SlotStages", "PipeletStages",
           "pipelet_stages", "slot_stages", "over_the_chip", "check_stages", "stage_report",
           "stage_table", "ingress_stages"]

#: Match-action stages per gress of a Tofino 1 pipe.
TOFINO1_STAGES = 12
_BFA_STAGE = re.compile(r"^stage (\d+) (ingress|egress):")
_BFA_TABLE = re.compile(r"^  ([a-z_]+) (\S+) \d+:")
_SLOT_NAME = re.compile(r"^slot(\d+)_(?!save\b|branch\b|loop\b)")
_PROGRAM_LINE = re.compile(r"^tbl_program(\d+)")
_PIPE = re.compile(r"^pipe(\d+)$")


def bfa_tables(text: str) -> list[tuple[str, int, str, str]]:
    """Every match table and gateway of a ``.bfa`` (the Tofino compiler's assembly):
    ``(gress, stage, name, the table's lines)``, in the file's order."""
    out: list[tuple[str, int, str, str]] = []
    gress, stage, cur = "", -1, None
    for line in text.splitlines():
        if m := _BFA_STAGE.match(line):
            gress, stage, cur = m[2], int(m[1]), None
            continue
        if not line.startswith("  ") and line.strip():
            gress, cur = "", None         # a top-level section other than a stage
            continue
        if gress and (m := _BFA_TABLE.match(line)) and not m[2].endswith(("$tind", "$action_data")):
            cur = [gress, stage, m[2], []]
            out.append(cur)  # type: ignore[arg-type]
        elif cur is not None:
            cur[3].append(line)
    return [(g, st, n, "\n".join(body)) for g, st, n, body in out]


def bfa_files(tofino_dir: str | Path) -> dict[int, Path]:
    """Pipe number -> its ``.bfa`` under the compiler's output (``tofino/pipe1/x.bfa``;
    a one-pipeline program's ``tofino/pipe/x.bfa`` is pipe 0)."""
    out: dict[int, Path] = {}
    for bfa in sorted(Path(tofino_dir).glob("*/*.bfa")):
        name = bfa.parent.name
        m = _PIPE.match(name)
        out[int(m[1]) if m else 0 if name == "pipe" else len(out)] = bfa
    return out


@dataclass(frozen=True, slots=True)
class SlotStages:
    """One NF slot: the stages its tables, gateways and statements use in the compiled
    program, and what placement counts for it: the catalogue's estimate, and a stage more
    for a branch table after it and one for a TCP/UDP checksum-update condition
    (:func:`~sfclab.passes.placement.tna_extra_stages`)."""

    slot: int
    nf: str
    stages: tuple[int, ...]
    estimate: int

    @property
    def span(self) -> int:
        """Stages from its first to its last (what the NF holds of the pipeline)."""
        return self.stages[-1] - self.stages[0] + 1 if self.stages else 0


@dataclass(frozen=True, slots=True)
class PipeletStages:
    """One pipelet (``pipe``, ``gress``) of the compiled program: the stages with tables,
    each NF slot's, the core's own (no NF table there), the plan's estimate, and the
    stages that hold only the compiler's TCP/UDP checksum-update conditions."""

    pipe: int
    gress: str
    used: tuple[int, ...]
    slots: tuple[SlotStages, ...]
    core: tuple[int, ...]
    plan: int
    #: Stages holding nothing but the deparser's TCP/UDP checksum-update conditions.
    conditions: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"{'I' if self.gress == 'ingress' else 'E'}{self.pipe}"

    @property
    def stages(self) -> int:
        """How many stages it uses (its last used stage + 1)."""
        return self.used[-1] + 1 if self.used else 0

    @property
    def spread(self) -> int:
        """Stages at the pipelet's end that hold only the checksum-update conditions: with
        room, p4c-barefoot 9.13.4 gives the TCP and the UDP condition a stage each after
        the other tables; in a full pipe it puts both beside the last stage's tables
        (measured: three pipelets filled to the 12 stages placement counts, each compiled
        in 12, the conditions in stage 11 with the core's tables)."""
        run = 0
        for st in reversed(self.used):
            if st not in self.conditions:
                break
            run += 1
        return run

    @property
    def need(self) -> int:
        """The stages it uses, the conditions' stages of their own at the end aside: what
        placement's count must hold."""
        return self.stages - self.spread


def _owners(name: str, body: str, slots: Sequence[Any], controls) -> set[int]:
    mentioned = {s.index for s in slots      # its fields; the digest buffer is the core's
                 if re.search(rf"\b{s.instance}(\.|_(?!dg\b))", body)}
    if m := _SLOT_NAME.match(name):
        return {int(m[1])} & {s.index for s in slots}
    if mentioned:
        return mentioned
    if m := _PROGRAM_LINE.match(name):
        line = int(m[1])
        nf = next((c for ln, c in controls if ln <= line), None)
        runs = [s.index for s in slots if s.nf == nf]
        return set(runs) if len(runs) == 1 else set()
    return set()


def _controls(generated) -> list[tuple[int, str]]:
    from ...p4 import ast as A

    prog = generated.program.program
    return sorted(((d.pos.line, d.name) for d in prog.decls
                   if isinstance(d, A.ControlDecl) and d.pos), reverse=True)


def _updates_l4(comp, nf: str) -> bool:
    from ...p4 import ast as A

    d = next((d for d in comp.nfs if d.name == nf), None)
    return d is not None and any(isinstance(n, A.NamedType) and n.name == "SfcL4Checksum"
                                 for n in A.walk(d.control))


def _estimate(cat, nf: str, extra: Mapping[str, int]) -> int:
    return (cat.get(nf).stages if nf in cat else 0) + extra.get(nf, 0)


_CONDITION = "checksum_encode_update_condition"


def pipelet_stages(bfa: Mapping[int, str], generated) -> list[PipeletStages]:
    """Per pipelet of *generated* (a TNA program), the stages the compiler gave it: *bfa*
    maps a pipe to its ``.bfa`` text."""
    from ...codegen.tna import pipelet_estimates
    from ...passes.placement import Pipelet, tna_extra_stages

    comp = generated.composition
    cat = comp.compiled.catalog
    controls = _controls(generated)
    plan = pipelet_estimates(comp)
    extra = tna_extra_stages(cat, comp.compiled.paths)
    out = []
    for pipe, text in sorted(bfa.items()):
        tables = bfa_tables(text)
        for gress in ("ingress", "egress"):
            pl = Pipelet(pipe, gress)
            slots = [s for s in comp.slots if s.pipelet == pl]
            used: dict[int, set[int]] = {s.index: set() for s in slots}
            stages: dict[int, bool] = {}          # stage -> holds an NF's table
            other: set[int] = set()               # stages with a table besides conditions
            l4 = any(_updates_l4(comp, s.nf) for s in slots)
            for g, st, name, body in tables:
                if g != gress:
                    continue
                owners = _owners(name, body, slots, controls)
                for i in owners:
                    used[i].add(st)
                # the compiler's condition for an NF's TCP/UDP checksum update is the NF's
                nf = bool(owners) or (l4 and _CONDITION in name)
                stages[st] = stages.get(st, False) or nf
                if _CONDITION not in name:
                    other.add(st)
            out.append(PipeletStages(
                pipe, gress, tuple(sorted(stages)),
                tuple(SlotStages(s.index, s.nf, tuple(sorted(used[s.index])),
                                 _estimate(cat, s.nf, extra)) for s in slots),
                tuple(st for st, nf in sorted(stages.items()) if not nf), plan.get(pl, 0),
                tuple(st for st in sorted(stages) if st not in other)))
    return out


def slot_stages(bfa_text: str, generated, pipe: int = 0,
                gress: str = "ingress") -> list[SlotStages]:
    """The stages each NF slot of one pipelet uses (default: pipe 0's ingress)."""
    for p in pipelet_stages({pipe: bfa_text}, generated):
        if p.gress == gress:
            return list(p.slots)
    return []


def ingress_stages(bfa_text: str, gress: str = "ingress") -> int:
    """How many stages of *gress* (default ingress) one ``.bfa`` uses."""
    return max((st for g, st, _, _ in bfa_tables(bfa_text) if g == gress), default=-1) + 1


def over_the_chip(bfa: Mapping[int, str], limit: int = TOFINO1_STAGES
                  ) -> list[tuple[int, str, int, str]]:
    """``(pipe, gress, stage, table)`` of every table placed past a Tofino 1's last stage."""
    return [(pipe, g, st, name) for pipe, text in sorted(bfa.items())
            for g, st, name, _ in bfa_tables(text) if st >= limit]


def check_stages(bfa: Mapping[int, str], generated, *, where: str | Path = "program.p4") -> None:
    """A :class:`~sfclab.errors.CompileError` when the compiler placed a table of *generated*
    (a TNA program, *where* it was written) past a Tofino 1's last stage: it names the
    pipe, the gress, the stages and the tables (and the NF slots they belong to)."""
    from ...errors import CompileError

    over = over_the_chip(bfa)
    if not over:
        return
    rows = {(p.pipe, p.gress): p for p in pipelet_stages(bfa, generated)}
    parts = []
    for (pipe, gress) in dict.fromkeys((p, g) for p, g, _, _ in over):
        mine = [(st, n) for p, g, st, n in over if (p, g) == (pipe, gress)]
        row = rows.get((pipe, gress))
        late = [f"slot{s.slot}_{s.nf}" for s in (row.slots if row else ())
                if s.stages and s.stages[-1] >= TOFINO1_STAGES]
        parts.append(f"pipe {pipe} {gress}: stages {mine[0][0]}-{mine[-1][0]} "
                     f"({', '.join(n for _, n in mine[:4])}{', …' if len(mine) > 4 else ''}"
                     + (f"; of {', '.join(late)}" if late else "") + ")")
    raise CompileError(f"{where}: the Tofino compiler placed tables past a Tofino 1's last "
                       f"stage ({TOFINO1_STAGES - 1}): " + "; ".join(parts) + " — the SDE's "
                       f"assembler writes no binary for it",
                       hint="compile for more pipes (--pipes 4), put fewer NFs on this switch "
                            "or spread the chains over switches (--topology); the stage "
                            "estimates in p4/nf/<nf>.json may be too low (report it)")


def stage_table(rows: Sequence[SlotStages], total: int | None = None) -> str:
    """A pipelet's NF slots: the stages each used, its span and what placement counts for it."""
    lines = [f"    {'slot':<6}{'NF':<20}{'stages used':<16}{'span':>5}{'estimate':>10}"]
    for r in rows:
        used = (f"{r.stages[0]}-{r.stages[-1]}" if len(r.stages) > 1 else
                str(r.stages[0]) if r.stages else "-")
        flag = "" if r.span <= r.estimate else "  (more than the estimate)"
        lines.append(f"    {r.slot:<6}{r.nf:<20}{used:<16}{r.span:>5}{r.estimate:>10}{flag}")
    if total is not None:
        lines.append(f"    the pipelet uses {total} of {TOFINO1_STAGES} stages; the slots' "
                     f"estimates add up to {sum(r.estimate for r in rows)}")
    return "\n".join(lines)


def _stages_text(stages: Sequence[int]) -> str:
    return ", ".join(map(str, stages)) or "none"


def stage_report(rows: Sequence[PipeletStages]) -> str:
    """What ``sfclab compile --arch tna --p4c`` prints: per pipe and gress the NF slots,
    the stages used against the plan, and the core's stages."""
    lines = []
    for p in rows:
        names = ", ".join(f"slot{s.slot}_{s.nf}" for s in p.slots) or "no NF slots"
        over = "  PAST THE CHIP'S LAST STAGE" if p.stages > TOFINO1_STAGES else ""
        lines.append(f"pipe {p.pipe} {p.gress}: {names}; stages used {p.stages} of "
                     f"{TOFINO1_STAGES} (plan {p.plan}); sfclab's core: {len(p.core)} "
                     f"stage(s) of its own ({_stages_text(p.core)}){over}")
        if p.spread:
            lines.append(f"    the TCP and UDP checksum-update conditions took stage(s) "
                         f"{_stages_text(p.conditions[-p.spread:])} of their own at the end, "
                         f"where a full pipe puts them beside its last tables: {p.need} "
                         f"stages without them (plan {p.plan})")
        if p.slots:
            lines.append(stage_table(p.slots))
    return "\n".join(lines)
