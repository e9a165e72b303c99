"""A Lab's network side: its topology, and the :class:`~sfclab.network.Network` of its chains.

When a Lab has a topology (:meth:`sfclab.lab.Lab.set_topology`, a ``%%topology``
cell), its chains run on that network instead of one switch: ``push`` pushes
every switch, ``send`` goes from host to host, ``tables`` reads one switch.
:class:`LabNetwork` keeps the :class:`~sfclab.network.Network` for that:

* before a push, the network follows the Lab's chains (placement and programs
  are made again when they are next read);
* once pushed, the network runs what was pushed; a change of the chains is
  applied by :meth:`LabNetwork.update` (entries only where the slots stay,
  consistently on every switch) and :meth:`LabNetwork.stale` says that one is due.

>>> from sfclab.ir.topology import line
>>> from sfclab.lang import parse
>>> side = LabNetwork(line(3, stages=8))
>>> chains = parse("chain web match tcp.dport == 80: heavy_hitter -> nat")
>>> side.push(chains)["s1"] > 0
True
>>> sent = side.send(chains, chain="web", n=2)
>>> print(sent.summary())
2 packets of web from h1 to h2: 2 delivered to h2, 0 dropped
>>> side.close()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ChainError, SfclabError
from ..ir.model import ChainSet
from ..ir.topology import Topology
from .network import Network
from ..nfinfo import NFCatalog

__all__ = ["LabNetwork", "NetworkSendResult", "NetworkState", "topology_changes"]


@dataclass(frozen=True, slots=True)
class NetworkState:
    """What a topology view shows: the topology, the network of the chains (the running
    one once pushed), whether the chains or NF code changed since the push (``stale``),
    the NFs redefined since (``redefined``: the switches run their old code), and after a
    failed push what each switch holds (``holding``, :meth:`LabNetwork.holding`)."""

    topology: Topology
    network: Network
    chains: ChainSet
    stale: bool
    redefined: tuple[str, ...] = ()
    #: Nothing is pushed, but a failed push left programs on switches: what each holds.
    holding: str = ""
    #: The topology changed while a network ran (``%%topology`` re-run): what changed; the
    #: network that ran was stopped, until the next push.
    stopped: str = ""

    @property
    def warnings(self) -> list[str]:
        """The chains whose ``from`` / ``to`` the topology has no place for."""
        return [f"chain {c.name!r} ({what} {spec}): {message}; {hint}"
                for c, what, spec, (message, hint) in _endpoint_problems(self.chains,
                                                                         self.topology)]


def _endpoint_problems(chains: ChainSet, topology: Topology):
    """``(chain, "from" or "to", endpoint, (message, hint))`` for every ``from`` / ``to``
    of *chains* that *topology* has no place for."""
    from ..lang.endpoints import endpoint_problem

    for c in chains:
        for what, spec in (("from", c.ingress), ("to", c.egress)):
            problem = spec and endpoint_problem(spec, topology)
            if problem:
                yield c, what, spec, problem


class NetworkSendResult(list):
    """The network traces of one send (:class:`~sfclab.targets.network.NetworkTrace`),
    with what was asked: ``chain`` (or None: a packet), ``src`` and ``dst``."""

    def __init__(self, traces, *, chain: str | None, src: str, dst: str | None,
                 sent: int | None = None, egress: Mapping[str | None, int] | None = None
                 ) -> None:
        """*traces*: the ones kept whole; *sent* and *egress* (host -> packets, None:
        dropped) count every packet of the send when more were sent than kept."""
        super().__init__(traces)
        self.chain, self.src, self.dst = chain, src, dst
        self.sent = len(self) if sent is None else sent
        self.egress = dict(egress) if egress is not None else None

    def summary(self) -> str:
        """``2 packets of web from h1 to h2: 2 delivered to h2, 0 dropped`` (and a line
        when older traces were dropped)."""
        counts = self.egress
        if counts is None:
            counts = {}
            for t in self:
                counts[t.egress] = counts.get(t.egress, 0) + 1
        dropped = counts.get(None, 0)
        where = ", ".join(f"{k} delivered to {h}" for h, k in counts.items()
                          if h is not None) or "none delivered"
        what = f" of {self.chain}" if self.chain else ""
        n = self.sent
        line = (f"{n} packet{'s' * (n != 1)}{what} from {self.src}"
                + (f" to {self.dst}" if self.dst else "") + f": {where}, {dropped} dropped")
        if n > len(self):
            line += (f"\nthe last {len(self):,} are kept whole; {n - len(self):,} older traces "
                     "were dropped (net.traces.keep = N keeps more)")
        return line


def topology_changes(old: Topology, new: Topology) -> str:
    """What differs from *old* to *new*: nodes and links removed, then added.

    >>> from sfclab.ir.topology import line
    >>> topology_changes(line(3), line(2))
    'switch s3 removed; link s2 -- s3 removed; host h2 moved'
    """
    def nodes(t: Topology) -> dict[str, tuple[str, Any]]:
        return {n: (t.kind(n), t.attachment(n) if t.kind(n) != "switch" else None)
                for n in t.graph.nodes}

    def links(t: Topology) -> set[str]:
        return {" -- ".join(sorted((lk.a, lk.b))) for lk in t.links
                if t.kind(lk.a) == t.kind(lk.b) == "switch"}
    a, b = nodes(old), nodes(new)
    out = [f"{a[n][0]} {n} removed" for n in a if n not in b]
    out += [f"link {lk} removed" for lk in sorted(links(old) - links(new))]
    out += [f"{b[n][0]} {n} added" for n in b if n not in a]
    out += [f"link {lk} added" for lk in sorted(links(new) - links(old))]
    out += [f"{a[n][0]} {n} moved" for n in a if n in b and a[n] != b[n]]
    return "; ".join(out) or "ports or link properties changed"


def _same(a: ChainSet, b: ChainSet) -> bool:
    return [c.signature() for c in a] == [c.signature() for c in b]


class LabNetwork:
    """The topology of a Lab and the network running its chains on it."""

    def __init__(self, topology: Topology, *, catalog: NFCatalog | None = None,
                 bindings: Mapping[str, int] | None = None, url: str | None = None) -> None:
        self.topology = topology
        self.catalog = catalog
        self.bindings = bindings
        self.url = url
        self._net: Network | None = None
        #: The topology whose running network this one's replaced (stopped), until a push.
        self.ran: Topology | None = None

    def network(self, chains: ChainSet) -> Network:
        """The network of *chains* with the NFs of :attr:`catalog` (the Lab's: it sets it
        after a ``%%nf``) — or, once pushed, the one running (see :meth:`stale`)."""
        net = self._net
        if net is None:
            net = self._net = Network(self.topology, chains, catalog=self.catalog,
                                      bindings=self.bindings, target=self.url)
        elif not net.pushed:
            if self.catalog is not None and net.catalog is not self.catalog:
                net.set_catalog(self.catalog)
            if not _same(net.chains, chains):
                net.set_chains(chains)
        return net

    def state(self, chains: ChainSet) -> NetworkState:
        return NetworkState(self.topology, self.network(chains), chains, self.stale(chains),
                            self.redefined(), self.holding(), self.stopped)

    def check_endpoints(self, given: Any, new: ChainSet, source: str) -> None:
        """The ``from`` / ``to`` of chains *new* against the topology; located in
        *given* when it is the chains' text."""
        from ..lang.endpoints import check_endpoints

        if isinstance(given, (str, bytes)):
            check_endpoints(given, self.topology, source=source)
            return
        for c, _, _, (message, hint) in _endpoint_problems(new, self.topology):
            raise ChainError(f"chain {c.name!r}: {message}", source=source, hint=hint)

    @property
    def running(self) -> Network | None:
        """The network if it was pushed (and runs), else None."""
        return self._net if self._net is not None and self._net.pushed else None

    def stale(self, chains: ChainSet) -> bool:
        """Whether the network runs other chains than *chains*, or NF code redefined
        since (``%%nf``): an update is due."""
        net = self.running
        return net is not None and (not _same(net.chains, chains) or bool(self.redefined()))

    @property
    def stopped(self) -> str:
        """When this topology replaced one whose network ran (stopped; nothing pushed
        since): what changed (:func:`topology_changes`); else ''."""
        if self.ran is None or self.running is not None:
            return ""
        if self.ran.signature() == self.topology.signature():
            return "the topology that ran, written again"
        return topology_changes(self.ran, self.topology)

    def holding(self) -> str:
        """After a failed push that left programs on switches, what each holds
        (:meth:`Network.holding`); '' otherwise."""
        return self._net.holding() if self._net is not None else ""

    def redefined(self) -> tuple[str, ...]:
        """The NFs of the running chains redefined in :attr:`catalog` since the push: the
        switches run their old code."""
        from .drift import changed_definitions

        net = self.running
        if net is None or self.catalog is None or net.catalog is self.catalog:
            return ()
        types = {t for c in net.chains for t in c.nf_types()}
        return changed_definitions(types, net.catalog, self.catalog)

    def push(self, chains: ChainSet) -> dict[str, int]:
        """Push every switch the program of *chains*; returns the entries per switch."""
        net = self.network(chains)
        if net.pushed and (not _same(net.chains, chains) or self.redefined()):
            net.close()                # start over with the new chains (and NF code)
        counts = self.network(chains).push()
        self.ran = None
        return counts

    def update(self, chains: ChainSet, *, allow_reload: bool = False):
        """Move the running network to *chains* (:meth:`Network.update`); before any
        push, push them."""
        net = self.network(chains)
        if not net.pushed:
            from ..runtime.session import UpdatePlan

            net.push()
            return UpdatePlan("reload", reason="nothing was pushed before: pushed every switch")
        return net.update(chains, allow_reload=allow_reload, catalog=self.catalog)

    def send(self, chains: ChainSet, src: str | None = None, dst: str | None = None,
             chain: str | None = None, *, n: int = 1, packet: Any = None,
             seed: int | None = None) -> NetworkSendResult:
        """Send *n* packets from host *src*: of *chain*'s class (from its ingress to its
        egress when *src* is None), the class of the chain from *src* to *dst* (no
        *chain*), or *packet* (scapy or bytes)."""
        net = self.network(chains)
        if chain is not None and chain not in net.chains:
            if chain in chains:
                raise SfclabError(f"chain {chain!r} is not on the network yet",
                                  hint="bring the network up to date: %sfc update "
                                       "(lab.update())")
            net.endpoints(chain)                        # says "no chain …, did you mean"
        if src is None:
            if chain is None:
                raise SfclabError("say where the packets come from: a host, or a chain",
                                  hint="%sfc send h1 h16 [CHAIN] [N], or %sfc send CHAIN [N]")
            src, dst = net.endpoints(chain)
        if n < 1:
            raise SfclabError(f"send at least one packet, not {n}")
        what = packet if packet is not None else chain
        out = net.send(src, dst, what, n=n, seed=seed)
        traces = list(out) if n > 1 else [out]             # the last ones kept whole
        label = chain or (traces[0].label if traces else None) or None
        return NetworkSendResult(traces, chain=label, src=src, dst=dst, sent=n,
                                 egress=out.egress if n > 1 else None)

    @property
    def traces(self) -> list:
        """Every packet sent on the network since its last push."""
        return self._net.traces if self._net is not None else []

    def tables(self, chains: ChainSet, switch: str | None):
        """One switch's tables: entries / size, hits and misses of the packets sent."""
        net = self.network(chains)
        if switch is None:
            busy = [s for s, sp in net.program.switches.items() if sp.parts]
            raise SfclabError("name a switch: a network has one set of tables per switch",
                              hint=f"%sfc tables SWITCH; switches running chains: "
                                   f"{', '.join(busy[:12]) or 'none'}")
        return net.tables(switch)

    def connect(self, chains: ChainSet, url: str | None) -> Any:
        """Run *chains* on the network target *url* names (nothing pushed yet)."""
        net = self.network(chains)
        target = net.connect(url)                  # closes the old one: nothing runs now
        if not _same(net.chains, chains):
            net.set_chains(chains)
        self.url = url
        return target

    def close(self) -> None:
        self.ran = None
        if self._net is not None:
            self._net.close()
            self._net = None
