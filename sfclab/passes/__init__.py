"""Compiler passes: pure functions ``pass(state, *, options) -> state``, run in order.

Each pass lives in its own module and adds one field to the compile state
(:class:`sfclab.compiler.CompiledChains`); the algorithms themselves are plain
functions on chains and service paths, usable on their own.

========== ============================================ ==============================
pass       what                                         adds
========== ============================================ ==============================
merge      P4SC Algorithm 1 (LCS merge) vs parallelism  ``merge``: :class:`MergedIR`
pipeline   FlexMesh MA-FSA pipeline, naive, optimal     ``pipeline``: :class:`PipelineResult`
fsm        token states, rewinder and branch entries    ``fsm``: :class:`FSMPlan`
placement  Dejavu pipelet placement, throughput         ``placement``: :class:`PlacementResult`
offload    P4SFC pre-server / server / post-server      ``offload``: :class:`OffloadResult`
========== ============================================ ==============================

A new pass is a new module and one line in :data:`PASSES`.
"""

from __future__ import annotations

from .fsm import FSMPlan, TokenWidths, build_fsm, fsm_pass, replay
from .merge import MergedIR, merge_chains, merge_pass
from .offload import OffloadResult, split_paths, offload_pass
from .options import CompileOptions
from .pipeline import Pipeline, PipelineResult, build_pipelines, pipeline_pass
from .placement import PlacementResult, place, placement_pass, recirculation_throughput

__all__ = [
    "PASSES", "CompileOptions", "TokenWidths",
    "MergedIR", "PipelineResult", "Pipeline", "FSMPlan", "PlacementResult", "OffloadResult",
    "merge_chains", "build_pipelines", "build_fsm", "replay", "place",
    "recirculation_throughput", "split_paths",
    "merge_pass", "pipeline_pass", "fsm_pass", "placement_pass", "offload_pass",
]

#: The passes in the order the driver runs them.
PASSES = (merge_pass, pipeline_pass, fsm_pass, placement_pass, offload_pass)
