"""The embedded model's TNA semantics: Tofino 1's pipes, pipelets, traffic manager,
ports and externs, for programs written for ``tna.p4``.

A TNA program (``Pipeline(...) pipe; Switch(pipe) main;``, or one ``Pipeline`` per
pipe) runs on a :class:`TnaSwitch` (:mod:`.switch`: passes, the traffic manager,
recirculation, resubmit, mirrors), each ``Pipeline`` compiled once
(:mod:`.pipeline`: its six blocks, the intrinsic metadata bound by type) by
:class:`~.compiler.TnaCompiler` (the externs of ``tofino1_base.p4``; what it does
not model is refused at load, with the line).  :mod:`.ports` is Tofino 1's port
numbering, :mod:`.prelude` what ``tna.p4`` declares, :mod:`.externs` the extern
state (per pipe), hashes and checksums.  :func:`load_switch` (:mod:`.load`) picks
the v1model or the TNA switch for a program; ``model?arch=tna&pipes=N`` is the
target (:mod:`.target_options`).

>>> ports = TofinoPorts(pipes=4)
>>> [recirc_port(p) for p in range(4)], ports.pipe_of(320)
([68, 196, 324, 452], 2)
"""

from .load import load_switch
from .ports import DEFAULT_PIPES, PIPE_COUNTS, TNA_CPU_PORT, TofinoPorts, pipe_of, recirc_port
from .switch import TnaSwitch, is_tna, switch_pipelines
from .target_options import tna_options

__all__ = ["TnaSwitch", "load_switch", "is_tna", "switch_pipelines", "TofinoPorts", "pipe_of",
           "recirc_port", "DEFAULT_PIPES", "PIPE_COUNTS", "TNA_CPU_PORT", "tna_options"]
