"""The embedded network: model switches, stand-in servers and hosts, linked in one process.

Every switch of the topology is a :class:`~sfclab.targets.model.ModelTarget`
— an embedded switch behind its own P4Runtime server on 127.0.0.1 — pushed
over P4Runtime like a real one.  A packet sent from a host enters its switch
on the port the topology says (or on a free switch port, ``s1:7``); each output
leaves on a link to the next node: a switch (which processes it in turn), a
server (which runs its NFs: see :class:`ServerStandIn`) or a host (it is
delivered) — or, on a free port, leaves the network there (``s3:7``).  The walk records a
:class:`~sfclab.targets.traces.trace.NetworkTrace` with every hop.

Nothing here is specific to the model but the two calls that run a packet on
a switch; a network of real switch processes reuses the programs
(:class:`~sfclab.codegen.network.NetworkProgram`), the sessions and the
consistent update (:mod:`.update`) and the trace objects (:mod:`sfclab.targets.traces.trace`).
"""

from __future__ import annotations

import threading
from collections import deque

from ...codegen.network import NetworkProgram
from ...errors import SfclabError, TargetError, did_you_mean
from ...ir.topology import Topology
from .push import push_network
from .server import MAX_HOPS, ServerStandIn
from .trace import Hop, NetworkTrace, switch_hop
from .update import NetworkUpdatePlan, plan_update, update_network

__all__ = ["EmbeddedNetwork", "ServerStandIn", "MAX_HOPS"]

class EmbeddedNetwork:
    """A :class:`Topology` of embedded model switches, run in this process."""

    kind = "model-network"

    def __init__(self, topology: Topology, *, max_hops: int = MAX_HOPS) -> None:
        self.topology = topology
        self.max_hops = max_hops
        self.switches: dict = {}
        self.servers: dict[str, ServerStandIn] = {}
        self.program: NetworkProgram | None = None
        self._flight = threading.Condition()
        self._epoch = 0
        self._in_flight: dict[int, int] = {}          # packet -> epoch it started in
        self._next = 0
        self._links = _Links(topology)
        self._entries: dict[str, tuple[str, int]] = {}

    def __repr__(self) -> str:
        return f"<EmbeddedNetwork {self.topology.summary().removeprefix('topology ')}>"

    # -- programs --------------------------------------------------------------------------
    def _target(self, switch: str):
        t = self.switches.get(switch)
        if t is None:
            from ..model import ModelTarget

            t = self.switches[switch] = ModelTarget()
        return t

    def push(self, program: NetworkProgram) -> dict[str, int]:
        """Push every switch's program and entries over P4Runtime, as one transaction
        (:mod:`.push`: a switch that fails has the others taken back); returns the entry
        count per switch."""
        self._check_archs(program)
        counts = push_network({s: self._target(s) for s in program.switches},
                              {s: sp.generated for s, sp in program.switches.items()})
        self.adopt(program)
        return counts

    def adopt(self, program: NetworkProgram) -> None:
        """Run *program*, whose switches are pushed already (a network of switch
        processes pushes them all at once)."""
        self.servers = {srv: ServerStandIn(srv, tasks) for srv, tasks in program.servers.items()}
        self.program = program

    def _check_archs(self, program: NetworkProgram) -> None:
        bad = [s for s, sp in program.switches.items() if sp.generated.arch != "v1model"]
        if bad:
            raise TargetError(f"the embedded network runs v1model switches; {', '.join(bad)} "
                              f"are {program.switches[bad[0]].generated.arch}",
                              hint="give those switches arch v1model in the topology")

    def sessions(self) -> dict:
        return {s: t.session for s, t in self.switches.items()}

    def plan(self, program: NetworkProgram) -> NetworkUpdatePlan:
        return plan_update(self.sessions(), {s: sp.generated
                                             for s, sp in program.switches.items()})

    def update(self, program: NetworkProgram, *, allow_reload: bool = False,
               moves: list | None = None) -> NetworkUpdatePlan:
        """Move the network to *program* consistently (:mod:`.update`), carrying the
        register cells of the NFs *moves* carries (:mod:`.moves`)."""
        if self.program is None:
            raise TargetError("nothing is pushed yet", hint="push the network first")
        self._check_archs(program)
        plan = update_network(self.sessions(), {s: sp.generated
                                                for s, sp in program.switches.items()},
                              allow_reload=allow_reload, drain=self.drain, moves=moves)
        self.servers = {srv: ServerStandIn(srv, tasks) for srv, tasks in program.servers.items()}
        self.program = program
        return plan

    def drain(self, timeout: float = 10.0) -> None:
        """Wait until every packet that entered the network before now has left it."""
        with self._flight:
            self._epoch += 1
            now = self._epoch
            self._flight.wait_for(lambda: all(e >= now for e in self._in_flight.values()),
                                  timeout)

    # -- packets ---------------------------------------------------------------------------
    def send(self, host: str, packet, *, label: str = "") -> NetworkTrace:
        """Send *packet* (bytes or scapy) from *host* — a host, a server or a free
        switch port (``s1:7``: the packet arrives on that port); returns the
        network-wide trace."""
        if self.program is None:
            raise TargetError("nothing is pushed yet", hint="push the network first")
        self.entry(host)
        with self._flight:
            self._next += 1
            pid = self._next
            self._in_flight[pid] = self._epoch
        try:
            return self._walk(host, bytes(packet), label)
        finally:
            with self._flight:
                del self._in_flight[pid]
                self._flight.notify_all()

    def entry(self, source: str) -> tuple[str, int]:
        """``(switch, port)`` where a packet sent from *source* (a host, a server or a
        free ``SWITCH:PORT``) enters the network; a TargetError if it cannot."""
        known = self._entries.get(source)
        if known is not None:
            return known
        self._entries[source] = out = self._entry(source)
        return out

    def _entry(self, source: str) -> tuple[str, int]:
        topo = self.topology
        if ":" in source:
            try:
                return topo.endpoint(source)
            except SfclabError as e:
                raise TargetError(f"cannot send from {source!r}: {e.message}",
                                  hint=e.hint) from None
        if source not in topo.hosts and source not in topo.servers:
            raise TargetError(f"no host {source!r} in topology {topo.name!r}",
                              hint=did_you_mean(source, topo.hosts)
                              or f"hosts: {', '.join(list(topo.hosts)[:12])}; or a free "
                                 f"switch port (SWITCH:PORT)")
        return topo.attachment(source)

    def _walk(self, host: str, data: bytes, label: str) -> NetworkTrace:
        topo = self._links
        nt = NetworkTrace(source=host, label=label)
        sw, port = self.entry(host)
        queue = deque([(sw, port, data)])
        while queue:
            node, port, data = queue.popleft()
            if len(nt.hops) >= self.max_hops:
                nt.hops.append(Hop(node=node, kind=topo.kind(node), in_port=port,
                                   dropped=f"more than {self.max_hops} hops: a forwarding loop"))
                break
            kind = topo.kind(node)
            if kind == "host":
                nt.hops.append(Hop(node=node, kind="host", in_port=port))
                nt.delivered.append((node, data))
                continue
            if kind == "server":
                hop, out = self.servers.get(node, ServerStandIn(node, ())).process(port, data)
                if out is not None:
                    peer = topo.peer(node, out[0])
                    hop.out = ((out[0], *peer),) if peer else ()
                    queue.append((*peer, out[1]))
                nt.hops.append(hop)
                continue
            r = self.switches[node].send(port, data)
            hop = switch_hop(topo, node, port, r.outputs, r)
            nt.hops.append(hop)
            for p, out in r.outputs:
                peer = topo.peer(node, p)
                if peer is not None:
                    queue.append((peer[0], peer[1], out))
                elif p in hop.exits:                   # a free port: it leaves the network
                    nt.hops.append(Hop(node=f"{node}:{p}", kind="port", in_port=None))
                    nt.delivered.append((f"{node}:{p}", out))
        nt.path = self.path_of(nt)
        return nt

    def path_of(self, nt: NetworkTrace) -> str | None:
        """The service path (``web/0``) a packet ended on: the last switch that knows
        (its token names a part of a path, after any branch).  A switch whose trace
        has no action arguments (BMv2's event logger) knows it only from the NFs it
        ran; one that ran none tells nothing, and the SFC header the packet left the
        switch before it with names the path (its spi)."""
        for h in reversed(nt.hops):
            if h.kind == "switch" and h.source is not None and h.node in self.switches:
                part, exact = _part_of(self.switches[h.node].session, h)
                name = self.program.switches[h.node].paths.get(part) if part else None
                if name is not None and (exact or h.nfs):
                    return name
                if h.header is not None and not exact:
                    return self.program.path_of_spi(h.header[0])
        return None

    def occupancy(self, switch: str):
        return self.switches[switch].occupancy()

    def close(self) -> None:
        for t in self.switches.values():
            t.close()
        self.switches.clear()


#: The actions of a composed program that set the path id a packet runs on.
_TOKEN_ACTIONS = ("set_token", "take_branch", "enter")


def _part_of(session, hop: Hop) -> tuple[str | None, bool]:
    """The part of a path a switch's hop ran on, and whether the switch said so (its
    token's path id) rather than sfclab telling it from the NFs it ran: from the
    model's raw events when the hop has them (no trace is built), else from its trace."""
    facts = getattr(hop.source, "facts", None)
    if facts is not None:
        dp, _ = facts()
        if dp is not None:
            return session.path_of_id(dp), True
    trace = hop.trace
    if trace is None:
        return None, False
    exact = any(e.kind == "action" and e.args and e.name.rsplit(".", 1)[-1] in _TOKEN_ACTIONS
                for e in trace.events)
    found = session.path_of(trace)
    if found is None and hop.dropped:
        found = _dropped_part(session, trace)
    return found, exact


def _dropped_part(session, trace) -> str | None:
    """The part a packet dropped part-way ran on, from a trace without action
    arguments (BMv2's event logger): the one part path of the switch whose NFs start
    with the NFs the trace shows, if only one does (a linear chain's, say)."""
    gen = session.generated
    if gen is None:
        return None
    seen = tuple(trace.nfs_seen())
    found = {f"{p.chain}/{p.index}" for p in gen.compiled.paths
             if seen and seen in (tuple(p.nodes[:len(seen)]), tuple(p.nfs[:len(seen)]))}
    return found.pop() if len(found) == 1 else None


class _Links:
    """A topology's links and node kinds, looked up once each (a packet's walk asks
    for them at every hop)."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.switches = topology.switches
        self._peers: dict[tuple[str, int], tuple[str, int] | None] = {}
        self._kinds: dict[str, str] = {}

    def peer(self, node: str, port: int) -> tuple[str, int] | None:
        key = (node, port)
        try:
            return self._peers[key]
        except KeyError:
            out = self._peers[key] = self.topology.peer(node, port)
            return out

    def kind(self, node: str) -> str:
        out = self._kinds.get(node)
        if out is None:
            out = self._kinds[node] = self.topology.kind(node)
        return out
