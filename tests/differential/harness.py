"""The differential harness: one program and STF test on the embedded model and on BMv2.

:func:`compare` runs the STF commands on both (the model from sfclab's own front
end, BMv2 from p4c-bm2-ss's JSON and P4Info) and lists every difference: a packet
whose outputs differ (port and bytes; a drop is no output), a command one target
refused and the other took.  :func:`compile_all` compiles many programs with p4c
at once (two at a time: the machine has two cores).  The tests here and
``benchmarks/fuzz_model.py`` use it.
"""

from __future__ import annotations

import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sfclab.errors import SfclabError
from sfclab.targets.model import ModelSwitch
from sfclab.targets.stf.runner import ModelDriver, StfReport, run_stf
from sfclab.targets.stf.bmv2 import Bmv2Program, StfBmv2, compile_bmv2
from sfclab.targets.stf.script import parse_stf

__all__ = ["Outcome", "compare", "compile_all", "describe"]


@dataclass
class Outcome:
    """How one program went: ``differences`` empty when the model agrees with BMv2."""

    name: str
    differences: list[str] = field(default_factory=list)
    model: StfReport | None = None
    bmv2: StfReport | None = None

    @property
    def same(self) -> bool:
        return not self.differences


def _outs(outputs) -> list[tuple[int, str]]:
    return sorted((p, d.hex().upper()) for p, d in outputs)


def compare(name: str, program: Path, stf: str, build: Bmv2Program, bmv2: StfBmv2) -> Outcome:
    """Run *stf* for *program* on the model and on *bmv2* (with *build*); the differences."""
    out = Outcome(name)
    script = parse_stf(stf, source=f"{name}.stf")
    try:
        sw = ModelSwitch(program)
        out.model = run_stf(ModelDriver(sw), script, source=f"{name}.stf")
    except SfclabError as e:
        out.differences.append(f"the model refused the program: {e}")
        return out
    except Exception:                               # a model bug: report it, whole
        out.differences.append("the model raised:\n" + traceback.format_exc())
        return out
    out.bmv2 = run_stf(bmv2.load(build), script, source=f"{name}.stf")
    for m, b in zip(out.model.packets, out.bmv2.packets):
        if _outs(m.outputs) != _outs(b.outputs):
            out.differences.append(
                f"line {m.line}: packet on port {m.port} {m.data.hex().upper()}:\n"
                f"    model: {_show(m.outputs)}\n    bmv2:  {_show(b.outputs)}")
    refused_m = {c.line: c.why for c in out.model.checks if "refused" in c.why}
    # p4c drops tables no packet can reach from what it compiles: their entries are
    # refused by BMv2 only, and no packet can tell
    refused_b = {c.line: c.why for c in out.bmv2.checks if "refused" in c.why
                 and not ("no table is named" in c.why and c.line not in refused_m)}
    for line in sorted(set(refused_m) ^ set(refused_b)):
        who = "model" if line in refused_m else "bmv2"
        out.differences.append(f"line {line}: only the {who} refused it: "
                               f"{refused_m.get(line) or refused_b.get(line)}")
    return out


def _show(outputs) -> str:
    return ", ".join(f"{p}:{d}" for p, d in _outs(outputs)) or "dropped"


def compile_all(programs: dict[str, Path], out_dir: Path, *, workers: int = 2
                ) -> dict[str, Bmv2Program | SfclabError]:
    """p4c-bm2-ss on every program (*workers* at a time): a build, or p4c's refusal."""
    def one(item):
        name, path = item
        try:
            return name, compile_bmv2(path, out_dir / name)
        except SfclabError as e:
            return name, e
    with ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(one, programs.items()))


def describe(outcomes: list[Outcome]) -> str:
    """The differences of every outcome that has some, for an assertion message."""
    return "\n\n".join(f"{o.name}:\n" + "\n".join(o.differences) for o in outcomes
                       if not o.same)
