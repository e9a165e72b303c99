"""Where a packet ran on the TNA model, read back from its trace: the pipelets in order,
how it came back between them, and how often it went round.

A TNA trace's ``pipeline_start`` events name the pipelet (``pipe 1 egress``) and its
``recirculate`` / ``resubmit`` events how the packet came back (``recirculated on port
196``); :func:`route` lists them, :func:`ran_by_path` sums them per service path for the
live view's placement tab, beside the placement's plan.

>>> from sfclab.targets.traces.trace import Event, PacketTrace
>>> t = PacketTrace(packet_id=1, ingress_port=1)
>>> for e in [Event(kind="pipeline_start", name="pipe 0 ingress"),
...           Event(kind="pipeline_start", name="pipe 1 egress"),
...           Event(kind="recirculate", name="recirculated on port 196"),
...           Event(kind="pipeline_start", name="pipe 1 ingress", pass_no=1),
...           Event(kind="pipeline_start", name="pipe 0 egress", pass_no=1)]:
...     t.add(e)
>>> t.finish(egress_port=3)
>>> " → ".join(route(t)), recirculations(t), is_tna_trace(t)
('pipe 0 ingress → pipe 1 egress → recirculated on port 196 → pipe 1 ingress → pipe 0 egress → out on port 3', 1, True)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["route", "recirculations", "is_tna_trace", "RanPath", "ran_by_path"]

_PIPELET = re.compile(r"^pipe \d+ (ingress|egress)$")


def is_tna_trace(trace) -> bool:
    """Whether *trace* comes from the TNA model (its pipelets are named ``pipe N …``)."""
    return any(e.kind == "pipeline_start" and _PIPELET.match(e.name) for e in trace.events)


def recirculations(trace) -> int:
    """How often the packet went round (recirculation or loopback ports)."""
    return sum(1 for e in trace.events if e.kind == "recirculate")


def route(trace) -> tuple[str, ...]:
    """The pipelets *trace* ran in and how it moved between them, then its outcome."""
    out: list[str] = []
    for e in trace.events:
        if e.kind == "pipeline_start":
            out.append(e.name)
        elif e.kind in ("recirculate", "resubmit"):
            out.append(e.name or e.kind)
    out.append(f"out on port {trace.egress_port}" if not trace.dropped else "dropped")
    return tuple(out)


@dataclass
class RanPath:
    """What the packets of one service path did on the TNA model."""

    packets: int = 0
    #: recirculations -> packets that went round that often
    recirculations: Counter = field(default_factory=Counter)
    #: route (:func:`route`) -> packets that took it
    routes: Counter = field(default_factory=Counter)

    def recirculations_text(self) -> str:
        """``1`` or ``0 (2 packets), 1 (3 packets)``."""
        if len(self.recirculations) == 1:
            return str(next(iter(self.recirculations)))
        return ", ".join(f"{k} ({n} packets)" for k, n in sorted(self.recirculations.items()))

    def route_text(self) -> str:
        """The route most packets took (``pipe 0 ingress → …``)."""
        if not self.routes:
            return ""
        r, n = self.routes.most_common(1)[0]
        more = f" ({n} of {self.packets} packets)" if n != self.packets else ""
        return " → ".join(r) + more


def ran_by_path(records: Iterable[tuple[str | None, object]]) -> dict[str, RanPath]:
    """``(service path, trace)`` pairs of TNA traces, summed per path (others skipped)."""
    out: dict[str, RanPath] = {}
    for path, trace in records:
        if path is None or not is_tna_trace(trace):
            continue
        ran = out.setdefault(path, RanPath())
        ran.packets += 1
        ran.recirculations[recirculations(trace)] += 1
        ran.routes[route(trace)] += 1
    return out
