"""What service paths do on the nodes they cross: the data the network and detour code
generators build (:mod:`.network`, :mod:`.detour`) and :class:`~.generated.Generated`
carries.  A module of its own, below all three, so none of them imports another in a
circle (issue 31)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Segment", "ServerTask", "ServerDetour", "SWITCH", "SERVER"]

#: The node names of the one-switch network: the switch, and the server behind its server port.
SWITCH, SERVER = "switch", "server"


@dataclass(frozen=True, slots=True)
class Segment:
    """What one service path does on one node: the NF instances ``nodes`` (from
    index ``start`` of the path) on a switch or a server, then ``exit``:
    ``("forward", node, port)``, ``("deliver", port)``, ``("end", terminal)`` (drop
    or cpu on that switch) or ``("return", port)`` (a server sends it back)."""

    path: str
    kind: str
    node: str
    position: int
    start: int
    nodes: tuple[str, ...]
    nfs: tuple[str, ...]
    exit: tuple
    part: str = ""


@dataclass(frozen=True, slots=True)
class ServerTask:
    """What a server does with a packet of service path ``spi`` whose next NF is
    ``si``: run ``nfs`` (NF types; instances ``nodes``), set the index to
    ``next_si`` and send it back out of ``port`` (its link to the switch)."""

    spi: int
    si: int
    nodes: tuple[str, ...]
    nfs: tuple[str, ...]
    next_si: int
    port: int
    path: str


@dataclass(frozen=True, slots=True)
class ServerDetour:
    """What a one-switch program with server NFs needs besides its P4: the port its
    server is behind, what the server does per (spi, si) (:class:`ServerTask`), and
    how the switch's service paths map to the chain set's."""

    port: int
    tasks: tuple[ServerTask, ...]
    #: The chain set as compiled (its paths, with the server NFs, are the user's).
    source: object
    #: The switch's path id (``web@3/0``) -> the chain set's (``web/0``).
    paths: Mapping[str, str]
    #: The chain set's path id -> its segments (switch, server, switch).
    journeys: Mapping[str, tuple[Segment, ...]]
    spis: Mapping[str, int]
    #: The chain set's path id -> passes through the switch's pipeline, detour included.
    passes: Mapping[str, int]

    def path_name(self, switch_path: str) -> str:
        """The chain set's path that the switch's path *switch_path* belongs to."""
        return self.paths.get(switch_path, switch_path)

    def server_paths(self) -> tuple[str, ...]:
        """The chain set's paths whose packets go to the server."""
        return tuple(p for p, segs in self.journeys.items()
                     if any(s.kind == "server" for s in segs))

    def text(self) -> str:
        """What the server does, a line per task (``servers.txt``)."""
        return "\n".join(f"{SERVER} behind port {self.port}: service path {t.spi}, next NF "
                         f"{t.si}: run {', '.join(t.nfs)}, back with next NF {t.next_si}"
                         for t in self.tasks)
