"""The stages the Tofino compiler gives each library NF and sfclab's core, and the table of
them kept in the repository (``tofino_measured.json``): what the tests check the catalogue's
estimates (``stages`` in ``p4/nf/<nf>.json``) and placement's core (``TNA_CORE_STAGES``)
against, with the compiler (``test_tofino_stages.py``) and without it (from the table).

``python benchmarks/bench_tofino.py --only nfs --record`` measures and rewrites the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sfclab.targets.tofino import ingress_stages, slot_stages

RECORD = Path(__file__).with_name("tofino_measured.json")


@dataclass(frozen=True)
class Measured:
    """One compiled program: its ingress and egress stages and each NF slot's span."""

    ingress: int
    egress: int
    spans: tuple[tuple[str, int], ...]          # (NF, span) per slot

    @property
    def core(self) -> int:
        """The ingress stages that are not an NF's span: sfclab's core (at most; the
        compiler may overlap an NF with the core)."""
        return self.ingress - sum(s for _, s in self.spans)


def bfa_of(out: Path) -> Path | None:
    """The ``.bfa`` the Tofino compiler wrote under *out* (None when it wrote none)."""
    return next(iter(sorted((out / "tofino").glob("**/*.bfa"))), None)


def measure(out: Path, generated) -> Measured | None:
    """The stages of the program compiled into *out* (None without a ``.bfa``)."""
    bfa = bfa_of(out)
    if bfa is None:
        return None
    text = bfa.read_text()
    return Measured(ingress_stages(text), ingress_stages(text, "egress"),
                    tuple((r.nf, r.span) for r in slot_stages(text, generated)))


def load_record(path: Path = RECORD) -> dict:
    """The recorded table: ``compiler``, ``command``, ``core`` (ingress, egress) and per NF
    its span alone (``nfs``)."""
    return json.loads(path.read_text())


def record(alone: dict[str, Measured], compiler: str, path: Path = RECORD) -> dict:
    """Write the table from each library NF's program alone (``{nf: Measured}``)."""
    table = {
        "compiler": compiler,
        "command": "python benchmarks/bench_tofino.py --only nfs --record",
        "what": "per library NF: the span of its ingress stages compiled alone (chain c match "
                "ipv4.dst == 10.0.1.0/24 { input => NF => output; }); core: the most ingress "
                "stages of those programs that are no NF's span, and their egress stages",
        "core": {"ingress": max(m.core for m in alone.values()),
                 "egress": max(m.egress for m in alone.values())},
        "nfs": {nf: max((s for n, s in m.spans if n == nf), default=0)
                for nf, m in sorted(alone.items())},
    }
    path.write_text(json.dumps(table, indent=2) + "\n")
    return table


__all__ = ["RECORD", "Measured", "bfa_of", "measure", "load_record", "record"]
