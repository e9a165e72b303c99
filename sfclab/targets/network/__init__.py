"""Network targets: a topology of switches run as one network.

* :class:`EmbeddedNetwork` (:mod:`.embedded`) — embedded model switches, one
  P4Runtime server each, stand-in servers and hosts, linked in one process:
  nothing to install;
* :mod:`.update` — consistent network-wide updates over per-switch sessions;
* :mod:`sfclab.targets.traces.trace` — network-wide traces (per hop: switch, NFs, tables, passes,
  link taken), the same whichever network ran the packet;
* :mod:`.detour` — the server behind a one-switch target's server port
  (:class:`ServerLoop`), played by the model and BMv2 targets.
"""

from .detour import ServerLoop
from .embedded import MAX_HOPS, EmbeddedNetwork, ServerStandIn
from .trace import Hop, NetworkTrace, sfc_header, switch_hop
from .update import NetworkUpdatePlan, plan_update, update_network

__all__ = ["EmbeddedNetwork", "ServerStandIn", "ServerLoop", "MAX_HOPS", "Hop", "NetworkTrace", "sfc_header",
           "switch_hop", "NetworkUpdatePlan", "plan_update", "update_network"]
