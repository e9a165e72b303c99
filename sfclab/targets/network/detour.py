"""The server behind a one-switch target's server port, played by sfclab.

A program whose paths detour through a server (:mod:`sfclab.codegen.detour`)
sends those packets out of its server port with the SFC header on.  The
embedded model and BMv2 have no server there, so the target plays it:
:class:`ServerLoop` takes what left the server port, runs the server's NFs on it
(a :class:`~.server.ServerStandIn`, as in the embedded network: bytes left as
they are, the next-NF index set) and sends it back in on the same port, as
many times as the packet goes out there.  A packet's visits to the switch and
the server become one result (:class:`DetourResult`): the outputs of every
visit but those to the server, and one trace — the
switch's events of each visit, passes numbered on, with a ``server`` event
between visits naming the NFs the server ran.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> from sfclab.targets.model import ModelTarget
>>> gen = generate(sfclab.compile("chain web match tcp.dport == 443: firewall -> ips -> monitor"))
>>> from scapy.all import Ether, IP, TCP
>>> with ModelTarget() as t:
...     n = t.push(gen)
...     r = t.send(1, Ether() / IP(dst="10.0.0.1") / TCP(dport=443))
>>> r.ports, r.trace.nfs(), r.passes
([1], ['firewall', 'ips', 'monitor'], 2)
>>> [e.text() for e in r.trace.events if e.kind == "server"]
['out on port 8 to its server, which ran ips; back with next NF 2']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...codegen import Generated
from ...errors import TargetError
from ..traces.trace import Event, Outputs, PacketTrace
from .server import MAX_HOPS, ServerStandIn
from .trace import Hop

__all__ = ["ServerLoop", "DetourResult", "server_loop", "check_server_port", "merge_visits",
           "for_targets"]

#: One batch of ``(port, bytes)`` into the switch -> one result each, in order.
SendBatch = Callable[[list[tuple[int, bytes]]], Sequence[Any]]


class ServerLoop:
    """What comes out of *detour*'s server port runs the server's NFs and goes back in."""

    def __init__(self, detour, *, max_visits: int = MAX_HOPS) -> None:
        self.detour = detour
        self.port = detour.port
        self.server = ServerStandIn("server", detour.tasks)
        self.max_visits = max_visits

    def run(self, send: SendBatch, items: Iterable[tuple[int, bytes]]) -> list:
        """Send *items* with *send*; send every packet that goes out of the server port
        back in after the server (in further batches); one result per item: the
        switch's own when the packet never went to the server, else the merged one."""
        results = list(send(list(items)))
        visits = [[r] for r in results]
        steps: list[list[Hop]] = [[] for _ in results]
        todo = [i for i, r in enumerate(results) if self._to_server(r)]
        while todo:
            batch, owners = [], []
            for i in todo:
                hop, back = self.server.process(self.port, visits[i][-1].output(self.port))
                steps[i].append(hop)
                if back is None:
                    continue
                if len(visits[i]) >= self.max_visits:
                    hop.dropped = f"more than {self.max_visits} visits to the server: a loop"
                    continue
                batch.append((self.port, back[1]))
                owners.append(i)
            again = list(send(batch)) if batch else []
            for i, r in zip(owners, again, strict=True):
                visits[i].append(r)
            todo = [i for i, r in zip(owners, again) if self._to_server(r)]
        return [merge_visits(v, s, self.port) if s else v[0] for v, s in zip(visits, steps)]

    def _to_server(self, result) -> bool:
        return any(p == self.port for p, _ in result.outputs)


def server_loop(gen: Generated | None, loop: ServerLoop | None) -> ServerLoop | None:
    """The :class:`ServerLoop` the program *gen* (the one on a switch) needs: *loop* when
    it serves *gen*'s server already; None when *gen* has no server."""
    detour = gen.detour if gen is not None else None
    if detour is None:
        return None
    return loop if loop is not None and loop.detour is detour else ServerLoop(detour)


@dataclass(eq=False)
class DetourResult(Outputs):
    """A packet's visits to the switch (its *visits*' results) and the server's *steps*
    between them, as one result: the outputs of every visit but those to the server,
    and one trace, merged when first read (see the module docstring)."""

    outputs: list[tuple[int, bytes]]
    visits: list
    steps: list[Hop]
    port: int
    packet_ins: list = field(default_factory=list)
    digests: list = field(default_factory=list)
    _trace: PacketTrace | None = field(default=None, repr=False)

    @property
    def passes(self) -> int:
        return sum(v.passes for v in self.visits)

    @property
    def trace(self) -> PacketTrace:
        if self._trace is None:
            self._trace = self._merge()
        return self._trace

    def _merge(self) -> PacketTrace:
        first = self.visits[0].trace
        t = PacketTrace(packet_id=first.packet_id, ingress_port=first.ingress_port,
                        label=first.label)
        offset = 0
        for k, v in enumerate(self.visits):
            tr = v.trace
            t.events += tr.events if not offset else [
                Event(kind=e.kind, name=e.name, pass_no=e.pass_no + offset, entry=e.entry,
                      args=e.args, value=e.value) for e in tr.events]
            offset += max(tr.passes, 1)
            if k < len(self.steps):
                t.add(_server_event(self.steps[k], self.port, offset - 1))
        if self.outputs:
            t.finish(egress_port=self.outputs[0][0], output=self.outputs[0][1])
        else:
            back = len(self.steps) < len(self.visits)
            why = (self.visits[-1].trace.drop_reason if back else
                   f"the server did not send it back: {self.steps[-1].dropped}")
            t.finish(drop_reason=why or "no output")
        return t


def merge_visits(visits: list, steps: list[Hop], port: int) -> DetourResult:
    """One result for a packet's *visits* to the switch with the server's *steps*
    between them."""
    return DetourResult([(p, b) for v in visits for p, b in v.outputs if p != port],
                        visits, steps, port,
                        [p for v in visits for p in getattr(v, "packet_ins", ())],
                        [d for v in visits for d in getattr(v, "digests", ())])


def _server_event(hop: Hop, port: int, pass_no: int) -> Event:
    args = (("port", port),)
    if hop.header is not None and not hop.dropped:
        args += (("spi", hop.header[0]), ("si", hop.header[1]))
    return Event(kind="server", name=hop.node, pass_no=pass_no, value=tuple(hop.ran), args=args)


def check_server_port(gen: Generated, *, declared: int | None = None,
                      ports: Iterable[int] | None = None) -> None:
    """Refuse to push *gen* where its server cannot be reached: its server port is
    not the one the target's URL declares (*declared*), or not one of the target's
    data ports (*ports*, when they are known and few)."""
    d = gen.detour
    if d is None:
        return
    if declared is not None and d.port != declared:
        raise TargetError(f"the program sends packets to its server out of port {d.port}, but "
                          f"this target's server is behind port {declared} (server_port= in "
                          "its URL)", hint=f"generate it with CodegenOptions(server_port="
                                           f"{declared})")
    have = sorted(set(ports or ()))
    if have and d.port not in have:
        raise TargetError(f"the program sends packets to its server out of port {d.port}, "
                          f"which this switch does not have (its ports: "
                          f"{', '.join(map(str, have))})",
                          hint="generate it with CodegenOptions(server_port=N) for a port it "
                               f"has and nothing else uses, or give it port {d.port}")


def for_targets(gen: Generated, *targets) -> Generated:
    """*gen*, generated again for the server port its *targets* declare
    (``server_port=`` in their URLs) when that is not its own; *gen* itself when
    it has no server or they declare none."""
    declared = {p for p in (getattr(t, "server_port", None) for t in targets) if p is not None}
    if gen.detour is None or not declared:
        return gen
    if len(declared) > 1:
        raise TargetError(f"the targets declare different server ports "
                          f"({', '.join(map(str, sorted(declared)))})",
                          hint="give both the same server_port= in their URLs")
    port = declared.pop()
    if port == gen.detour.port:
        return gen
    from ...codegen import generate

    return generate(gen.compiled, arch=gen.arch,
                    options=dataclasses.replace(gen.composition.options, server_port=port))
