"""Code generation: the composed P4 program for a chain set, per architecture.

:func:`generate` runs the whole back end on the passes' result: it composes the
data plane (:mod:`.compose`), emits it for the architecture (one
:class:`~.emitter.P4Emitter` subclass per architecture, listed in
:data:`EMITTERS`), and derives the table entries (:mod:`.entries`).

>>> import sfclab
>>> out = generate(sfclab.compile("chain web match tcp.dport == 80: firewall -> l3fwd"))
>>> out.program.text.splitlines()[0]
'/* sfclab: the composed service-function-chain program for v1model (BMv2).'
>>> sorted(out.groups())
['chain:web', 'nf:slot0_firewall', 'nf:slot1_l3fwd']

A chain set whose paths run an NF on a server (P4SFC: not offloadable) gets the
program of :mod:`.detour` instead: the switch sends those packets to the server
behind its server port and runs the rest when they come back
(:attr:`Generated.detour`).
"""

from __future__ import annotations

from .compose import CodegenOptions, compose
from .entries import all_entries
from .generated import EMITTERS, Generated, emitter_for, write_outputs

__all__ = ["generate", "Generated", "CodegenOptions", "EMITTERS", "emitter_for", "write_outputs"]


def generate(compiled, *, arch: str | None = None,
             options: CodegenOptions | None = None) -> Generated:
    """Compose, emit and derive entries for *compiled* (an ``sfclab.compile`` result);
    *arch* defaults to the one it was compiled for."""
    arch = arch or compiled.arch
    from .detour import generate_detour, needs_server

    if needs_server(compiled):
        return generate_detour(compiled, arch=arch, options=options)
    comp = compose(compiled, options=options, arch=arch)
    emitter = emitter_for(arch)(comp)
    program = emitter.program()
    if comp.pipelets is not None:             # TNA: a state per pipelet visit
        from .tna_entries import tna_entries

        return Generated(comp, program, tuple(tna_entries(comp)))
    return Generated(comp, program, tuple(all_entries(comp)))
