"""sfclab's embedded switch model: a v1model interpreter of sfclab's own P4 AST.

The program is compiled once into Python closures (:mod:`.expr`,
:mod:`.control`, :mod:`.parser_rt`); packets then run through parser,
verify-checksum, ingress, the traffic manager (unicast, multicast groups,
clone sessions, resubmit, the CPU port), egress, compute-checksum and
deparser with BMv2 ``simple_switch`` semantics (:mod:`.switch`).  The
control plane (:mod:`.runtime`) speaks P4Runtime's names and values; every
packet leaves a :class:`~sfclab.targets.traces.trace.PacketTrace`.

Typical use::

    sw = ModelSwitch("router.p4")
    sw.insert("MyIngress.ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)},
              "MyIngress.forward", {"port": 2})
    r = sw.process(1, Ether() / IP(dst="10.1.2.3"))
    r.outputs, print(r.trace.text())

As a target: :func:`start` runs a P4Runtime server for a model switch
(:mod:`.p4rt`; any P4Runtime client can push a program and entries to it), and
:class:`ModelTarget` (:mod:`.target`) is that server with sfclab's session on
it, the default target of ``sfclab.Lab``.
"""

from .errors import (ControlPlaneError, EntryExistsError, EntryNotFoundError, InvalidValueError,
                     ModelCompileError, ModelError, ReadOnlyError, TableFullError,
                     UnknownNameError)
from .result import Digest, PacketIn, ProcessResult
from .runtime import EntryView
from .switch import CPU_PORT, DROP_PORT, INSTANCE_TYPES, ModelSwitch
from .p4rt import P4RuntimeModelServer, start
from .target import ModelTarget

__all__ = ["ModelSwitch", "start", "P4RuntimeModelServer", "ModelTarget", "ProcessResult", "PacketIn", "Digest", "EntryView", "CPU_PORT",
           "DROP_PORT", "INSTANCE_TYPES", "ModelError", "ModelCompileError",
           "ControlPlaneError", "UnknownNameError", "InvalidValueError", "EntryExistsError",
           "EntryNotFoundError", "TableFullError", "ReadOnlyError"]
