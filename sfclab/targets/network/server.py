"""A server of a network, played by sfclab (:class:`ServerStandIn`), and the hop limit: used
by the embedded network (:mod:`.embedded`) and by a one-switch target's server loop
(:mod:`.detour`), below both."""

from __future__ import annotations

from ...codegen.network import ServerTask
from .trace import Hop, sfc_header, set_si

__all__ = ["ServerStandIn", "MAX_HOPS"]

#: A packet that has visited this many nodes is dropped (a forwarding loop).
MAX_HOPS = 64


class ServerStandIn:
    """A server of the embedded network: for a packet of service path *spi* whose
    next NF is *si*, it runs its task's NFs (recorded in the trace; their bytes
    are left as they are — a stand-in for the software NFs a switch cannot run),
    sets the next-NF index and sends the packet back to its switch."""

    def __init__(self, name: str, tasks: tuple[ServerTask, ...]) -> None:
        self.name = name
        self.tasks = {(t.spi, t.si): t for t in tasks}

    def process(self, port: int, data: bytes) -> Hop:
        h = sfc_header(data)
        task = self.tasks.get((h["spi"], h["si"])) if h else None
        if task is None:
            why = ("no SFC header" if h is None else
                   f"no task for service path {h['spi']}, next NF {h['si']}")
            return Hop(node=self.name, kind="server", in_port=port, dropped=why), None
        out = set_si(data, task.next_si)
        return Hop(node=self.name, kind="server", in_port=port, ran=task.nfs,
                   header=(task.spi, task.next_si)), (task.port, out)
