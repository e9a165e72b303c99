"""The sweep of ``test_diff_tna.py``: example chain sets, in pipeline modes, on the
embedded v1model model and the embedded Tofino model (``model?arch=tna``), packet by
packet; and, per packet, the recirculations its TNA trace shows against the plan.

CI runs :data:`CI_SWEEP`, a part of it that still holds every library NF, a path that
goes round three times, a server detour and run-time bindings; the Tofino sweep's
switch, ``SFCLAB_TOFINO_SWEEP=full``, runs every example in every pipeline mode
(:func:`sweep_plan`).

:func:`sweep_file` runs in a worker process (the test spreads the files over two), so it
imports what it needs and returns plain data.
"""

from __future__ import annotations

import os
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PIPELINES = ("auto", "mafsa", "optimal", "naive")
#: Values of the run-time names an example's multibranch cases use.
BINDINGS = {"flexmesh_fig9.sfc": {"p1": 1, "p2": 2, "p3": 3}}
#: Pipes the sweep runs a chain set on: every_nf.sfc on 4, the sweep's 4-pipe model (it places
#: on 2 as well, its 18 NFs side by side, and p4c-barefoot 9.13.4 fits that program).
PIPES = {"every_nf.sfc": 4}
#: The sweep CI runs, example -> pipeline modes: every library NF (every_nf.sfc, whose
#: `segments` path goes round three times), p4sc_table3.sfc's reverse-order paths (one
#: goes round three times), p4sfc_mixed.sfc's two TNA programs (the pipeline modes give
#: two; a path detours to a server) and flexmesh_fig9.sfc's run-time bindings.  The rest
#: (every example in every mode) runs with ``SFCLAB_TOFINO_SWEEP=full``.
CI_SWEEP = {"every_nf.sfc": ("auto",), "p4sc_table3.sfc": ("naive",),
            "p4sfc_mixed.sfc": ("auto", "optimal"), "flexmesh_fig9.sfc": ("mafsa",)}


def full_sweep() -> bool:
    """Whether ``SFCLAB_TOFINO_SWEEP=full`` (the Tofino compile sweep's switch, see
    ``tofino_programs.py``) asks for every example in every pipeline mode."""
    return os.environ.get("SFCLAB_TOFINO_SWEEP", "") == "full"


def sweep_plan() -> dict[str, tuple[str, ...]]:
    """Example -> the pipeline modes the sweep runs it in (CI's part, or all)."""
    return {f: PIPELINES for f in example_files()} if full_sweep() else dict(CI_SWEEP)


def example_files() -> list[str]:
    return sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".sfc", ".json"))


def recirculations(trace) -> int:
    return sum(1 for e in trace.events if e.kind == "recirculate")


def off_the_plan(compiled, gen, tna) -> list[str]:
    """The packets *tna* (a ``model?arch=tna`` target) ran whose recirculations differ from
    the plan of *compiled*'s placement, one line each (those that ran their path whole)."""
    off = []
    for r in tna.results:
        path = tna.session.path_of(r.trace)
        if path is None:
            continue
        want = planned_recirculations(compiled, gen, path)
        ran_whole = tuple(r.trace.nfs()) == compiled.fsm.path(path).path.nfs
        if want is not None and ran_whole and recirculations(r.trace) != want:
            off.append(f"{path}: {recirculations(r.trace)} recirculations, the plan {want}")
    return off


def planned_recirculations(compiled, gen, path: str) -> int | None:
    """How often a packet on *path* goes round: the pipelet plan the program was made
    from (placement's NFs on pipelets, :mod:`sfclab.passes.pipelets`), else the FSM
    plan's passes less one (a one-pipe program); None for a path that leaves for a
    server between its passes."""
    plan = getattr(gen.composition, "pipelets", None)
    if plan is not None:
        return plan.recirculations(path) if path in plan.visits else None
    if gen.detour is not None and path in {t.path for t in gen.detour.tasks}:
        return None
    return compiled.fsm.path(path).passes - 1


def sweep_file(name: str, modes: tuple[str, ...] = PIPELINES, packets: int = 2) -> list[dict]:
    """Example *name* in pipeline *modes*: one row per distinct TNA program (modes that
    give the same program share a row), with the divergences diff-targets found and the
    packets whose recirculations differ from the plan."""
    import sfclab
    from sfclab.codegen import CodegenOptions, generate
    from sfclab.lang import parse_file
    from sfclab.targets.connect import open_target
    from sfclab.targets.diff import diff_targets

    chains = parse_file(EXAMPLES / name)
    pipes = PIPES.get(name, 2)
    rows: dict[str, dict] = {}
    for mode in modes:
        compiled = sfclab.compile(chains, arch="tna", pipeline=mode, pipes=pipes)
        gen = generate(compiled, options=CodegenOptions(bindings=BINDINGS.get(name, {})))
        if gen.program.text in rows:
            rows[gen.program.text]["modes"].append(mode)
            continue
        tna = open_target(f"model?arch=tna&pipes={pipes}")
        try:
            report = diff_targets(gen, tna, "model", packets=packets)
            off_plan = off_the_plan(compiled, gen, tna)
        finally:
            tna.close()
        rows[gen.program.text] = {
            "file": name, "modes": [mode], "compared": report.compared,
            "divergences": [f"{c} #{k}: {'; '.join(w)}" for c, k, w, _, _ in report.divergences],
            "off_plan": off_plan, "covered": report.coverage_text().splitlines()[0],
            "multi_pass": sum(1 for p in compiled.paths
                              if (planned_recirculations(compiled, gen, p.id) or 0) > 0)}
    return list(rows.values())
