"""Mininet, the network emulator, with sfclab's switches as real processes.

* :class:`MininetNetwork` (:mod:`.network`) — a topology in Mininet whose
  switches are processes on real interfaces (the embedded model as
  ``sfclab model-switch``, or BMv2's ``simple_switch_grpc``), pushed over
  P4Runtime, with network-wide traces like the embedded network's;
* :class:`MininetEmulation` (:mod:`.emulator`) — the Mininet part alone: hosts
  with the topology's addresses, links with its latency and bandwidth, one
  switch node per switch whose process a caller starts;
* :mod:`.switches` — how each kind of switch process is started, pushed to and
  read.

Needs root and Debian's ``mininet`` package (:func:`missing_mininet` says what
is missing).
"""

from .emulator import MininetEmulation, load_mininet, missing_mininet, netns
from .network import MininetNetwork
from .switches import SWITCH_KINDS, Bmv2Switches, ModelSwitches

__all__ = ["MininetNetwork", "MininetEmulation", "missing_mininet", "load_mininet", "netns",
           "ModelSwitches", "Bmv2Switches", "SWITCH_KINDS"]
