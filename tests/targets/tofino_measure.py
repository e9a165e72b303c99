"""The stages the Tofino compiler gives each library NF and sfclab's core, and the table of
them kept in the repository (``tofino_measured.json``): what the tests check the catalogue's
estimates (``stages`` in ``p4/nf/<nf>.json``) and placement's core (``TNA_CORE_STAGES``)
against, with the compiler (``test_tofino_stages.py``) and without it (from the table).

A program is measured per pipelet (pipe and gress, from each pipe's ``.bfa``): the stages it
uses, each NF slot's span, and the stages that hold sfclab's tables and no NF's (the core's
own).  ``python benchmarks/bench_tofino.py --only nfs --record`` measures and rewrites the
table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sfclab.targets.tofino.target import PipeletStages, bfa_files, over_the_chip, pipelet_stages

RECORD = Path(__file__).with_name("tofino_measured.json")


@dataclass(frozen=True)
class Measured:
    """One compiled program, per pipelet."""

    pipelets: tuple[PipeletStages, ...]
    #: (pipe, gress, stage, table) of every table past a Tofino 1's stage 11.
    over: tuple[tuple[int, str, int, str], ...] = ()

    @property
    def spans(self) -> tuple[tuple[str, int], ...]:
        """(NF, span) per slot, over every pipelet."""
        return tuple((s.nf, s.span) for p in self.pipelets for s in p.slots)

    def core(self, gress: str) -> int:
        """The most stages of a *gress* pipelet that are sfclab's core's own."""
        return max((len(p.core) for p in self.pipelets if p.gress == gress), default=0)

    def stages(self, gress: str) -> int:
        """The most stages a *gress* pipelet uses."""
        return max((p.stages for p in self.pipelets if p.gress == gress), default=0)


def bfa_of(out: Path) -> dict[int, Path]:
    """The ``.bfa`` per pipe the Tofino compiler wrote under *out* (empty when none)."""
    return bfa_files(out / "tofino")


def measure(out: Path, generated) -> Measured | None:
    """The stages of the program compiled into *out* (None without a ``.bfa``)."""
    files = bfa_of(out)
    if not files:
        return None
    texts = {pipe: f.read_text() for pipe, f in files.items()}
    return Measured(tuple(pipelet_stages(texts, generated)), tuple(over_the_chip(texts)))


def load_record(path: Path = RECORD) -> dict:
    """The recorded table: ``compiler``, ``command``, ``core`` (ingress, egress) and per NF
    its span alone (``nfs``)."""
    return json.loads(path.read_text())


def record(alone: dict[str, Measured], compiler: str, path: Path = RECORD) -> dict:
    """Write the table from each library NF's program alone (``{nf: Measured}``)."""
    table = {
        "compiler": compiler,
        "command": "python benchmarks/bench_tofino.py --only nfs --record",
        "what": "per library NF: the span of its stages compiled alone (chain c match "
                "ipv4.dst == 10.0.1.0/24 { input => NF => output; }, default 2 pipes); core: "
                "the most stages of an ingress and of an egress pipelet of those programs that "
                "hold sfclab's tables and no NF's",
        "core": {"ingress": max(m.core("ingress") for m in alone.values()),
                 "egress": max(m.core("egress") for m in alone.values())},
        "nfs": {nf: max((s for n, s in m.spans if n == nf), default=0)
                for nf, m in sorted(alone.items())},
    }
    path.write_text(json.dumps(table, indent=2) + "\n")
    return table


__all__ = ["RECORD", "Measured", "bfa_of", "measure", "load_record", "record"]
