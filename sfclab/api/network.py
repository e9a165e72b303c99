"""The :class:`Network`: chains placed across a topology of switches, run as one network.

Two steps, as with a :class:`~sfclab.lab.Lab` on one switch::

    >>> from sfclab.ir.topology import line
    >>> net = Network(line(3, stages=8), "chain web match tcp.dport == 80: heavy_hitter -> nat")
    >>> print(net.placement.chosen.chains["web"].describe())
    s1[heavy_hitter] s2[nat] s3
    >>> counts = net.push()                       # every switch, over P4Runtime
    >>> t = net.send("h1", "h2", "web")            # a packet of web's class, from h1
    >>> t.egress, t.switches(), t.nfs()
    ('h2', ['s1', 's2', 's3'], ['heavy_hitter', 'nat'])
    >>> net.close()

Placement (:mod:`sfclab.passes.netplace`) runs on first use of
:attr:`Network.placement`; the per-switch programs (:mod:`sfclab.codegen.network`)
on first use of :attr:`Network.program`; the embedded network
(:class:`~sfclab.targets.network.EmbeddedNetwork`) starts on :meth:`Network.push`.
A chain without ``ingress`` / ``egress`` runs from the topology's first host to
its last (the placement table says which chains defaulted).

The network runs on the embedded network unless :meth:`Network.connect` names
another network target (:data:`NETWORK_TARGETS`: ``model``; ``mininet`` where
sfclab has its Mininet target), as a Lab's ``connect`` names a switch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import SfclabError, TargetError, did_you_mean
from ..ir.model import Chain, ChainSet
from ..ir.topology import Topology
from ..nfinfo import NFCatalog
from ..targets.network.connect import MININET_OPTIONS, NETWORK_TARGETS, open_network_target
from ..targets.traffic.sending import stream
from ..targets.traces.store import Window

__all__ = ["Network", "NETWORK_TARGETS", "MININET_OPTIONS", "open_network_target"]


class Network:
    """Chains on a topology: their placement, per-switch programs, and a running network.

    *chains*: chain text, a :class:`~sfclab.ir.model.ChainSet` or Chains; *solver*,
    *weights*, *exact_chains*, *time_limit*: see
    :func:`~sfclab.passes.netplace.place_network`; *bindings*: values of run-time
    names in multibranch cases; *target*: the network target's name (:meth:`connect`;
    default: the embedded network), opened on first use."""

    def __init__(self, topology: Topology, chains: str | ChainSet | Iterable[Chain] = (), *,
                 catalog: NFCatalog | None = None, solver: str = "auto", weights=None,
                 exact_chains: int = 40, time_limit: float = 60.0,
                 bindings: Mapping[str, int] | None = None, target: str | None = None) -> None:
        if catalog is None:
            from ..p4.catalog import load_default

            catalog = load_default()
        self.topology = topology
        self.catalog = catalog
        self.options: dict[str, Any] = {"solver": solver, "weights": weights,
                                        "exact_chains": exact_chains, "time_limit": time_limit}
        self.bindings = dict(bindings or {})
        self._chains = self._chainset(chains)
        self._placement = None
        self._program = None
        self._target = None
        self._target_url = target
        self._oracles: dict[str, Any] = {}         # ingress -> its chains on one model switch
        self._plans: dict[tuple, list] = {}        # (chain, seed, …) -> [plan, made, oracle]
        self._warned: set[str] = set()             # address warnings given
        #: Every packet sent, by number (:class:`~sfclab.targets.network.NetworkTrace`): the
        #: last ones whole (:class:`~sfclab.targets.traces.store.Window`; ``len()`` counts all).
        self.traces = Window()

    def __repr__(self) -> str:
        return (f"<Network {self.topology.summary().removeprefix('topology ')}; "
                f"{len(self._chains)} chains>")

    # -- compiled state ------------------------------------------------------------------------
    @property
    def chains(self) -> ChainSet:
        return self._chains

    @property
    def placement(self):
        """Both solvers' placements side by side, and the chosen one
        (:class:`~sfclab.passes.netplace.NetworkPlacement`; ``print`` it for the table)."""
        if self._placement is None:
            from ..passes.netplace import place_network

            self._placement = place_network(self.topology, self._chains, catalog=self.catalog,
                                            **self.options)
        return self._placement

    @property
    def program(self):
        """Per-switch programs and entries (:class:`~sfclab.codegen.network.NetworkProgram`)."""
        if self._program is None:
            from ..codegen.network import generate_network

            self._program = generate_network(self.placement, self._chains, catalog=self.catalog,
                                             bindings=self.bindings)
        return self._program

    def export(self, out_dir: str | Path) -> list[Path]:
        """Write one folder per switch (program, P4Info, entries, plan) and the placement."""
        from ..codegen.network import write_network_outputs

        return write_network_outputs(self.program, out_dir)

    def set_chains(self, chains: str | ChainSet | Iterable[Chain]) -> None:
        """Replace the chains of a network not pushed yet (placement and programs are
        made again on use); a running network changes with :meth:`update`."""
        if self.pushed:
            raise TargetError("the network is running: its chains change by update()",
                              hint="net.update(chains) (%sfc update)")
        self._chains, self._placement, self._program = self._chainset(chains), None, None
        self._close_oracles()

    def set_catalog(self, catalog: NFCatalog) -> None:
        """Use *catalog* (an NF added or redefined since) for a network not pushed yet
        (placement and programs are made again on use); a running network takes it
        with :meth:`update` (``catalog=``): its switches run the old NF code until then."""
        if catalog is self.catalog:
            return
        if self.pushed:
            raise TargetError("the network is running: it takes a new NF catalogue by "
                              "update()", hint="net.update(chains, catalog=…) (%sfc update "
                                               "--reload)")
        self.catalog, self._placement, self._program = catalog, None, None
        self._close_oracles()

    def endpoints(self, chain: str) -> tuple[str, str]:
        """Where *chain*'s traffic enters and leaves (its ``from`` / ``to``, or the
        defaults the placement chose)."""
        if chain not in self._chains:
            raise self._no_chain(chain)
        c = self.placement.problem.chain(chain)
        return c.ingress, c.egress

    def _no_chain(self, name: str) -> SfclabError:
        return SfclabError(f"no chain {name!r} in the network",
                           hint=did_you_mean(name, self._chains.names())
                           or f"chains: {', '.join(self._chains.names()) or 'none'}")

    # -- running -------------------------------------------------------------------------------
    @property
    def target(self):
        """The network target (:meth:`connect`; the embedded network unless told
        otherwise, started on first use)."""
        if self._target is None:
            self._target = open_network_target(self._target_url, self.topology)
        return self._target

    @property
    def pushed(self) -> bool:
        """Whether the network runs a program (pushed, not closed since)."""
        return self._target is not None and self._target.program is not None

    def connect(self, url: str | None = None):
        """Run on the network target *url* names (``model``: the embedded network;
        ``mininet``, ``mininet?switch=bmv2`` where sfclab has its Mininet target); the
        old one is closed.  Nothing is pushed yet."""
        new = open_network_target(url, self.topology)
        self._close_target()
        self._target, self._target_url = new, url
        self.traces.clear()
        return new

    def holding(self) -> str:
        """After a failed push (nothing is pushed), what each switch holds when some
        switch kept the failed push's program (P4Runtime cannot remove one): ``leaf1,
        spine1 hold the program of a failed first push, with no table entries (…); leaf2
        holds no program``; '' otherwise."""
        from ..targets.network.push import holding

        sessions = getattr(self._target, "sessions", None)
        if self.pushed or sessions is None:
            return ""
        sessions = sessions()
        if not any(getattr(s, "stranded", None) is not None for s in sessions.values()):
            return ""
        return holding(sessions)

    def push(self) -> dict[str, int]:
        """Push every switch's program and entries, as one transaction (a switch that
        fails has the others taken back: :mod:`sfclab.targets.network.push`; what each
        then holds: :meth:`holding`); returns the entry count per switch."""
        counts = self.target.push(self.program)
        self.traces.clear()
        return counts

    def send(self, src: str, dst: str | None = None, what=None, *, n: int = 1,
             seed: int | None = None):
        """Send from *src* (a host, a server or a free ``SWITCH:PORT``): *what* is a
        chain name (packets of its class that cover its service paths:
        :meth:`class_traffic`), a packet (scapy or bytes) or None (the class of the
        chain from *src* to *dst*).  Returns the network trace (a list of them when
        *n* > 1)."""
        if self.target.program is None:
            self.push()
        if what is None or isinstance(what, str):
            chain = self._chain_for(src, dst, what)
            packets = self._class_packets(chain.name, n, seed, src, dst)
            label = chain.name
        else:
            packets, label = (bytes(what) for _ in range(n)), ""
        out = Window(self.traces.keep)
        out.egress = Counter()          # every packet's host (None: dropped), kept or not
        target = self.target

        def record(nt, _tag) -> None:
            out.push(nt)
            out.egress[nt.egress] += 1
            self.traces.push(nt)
        stream(_From(target, src, label), ((0, data, None) for data in packets), record,
               total=n, desc=f"sending {label or 'packets'}")
        return out[0] if n == 1 else out

    def _class_packets(self, chain: str, n: int, seed: int | None, src: str,
                       dst: str | None) -> Iterable[bytes]:
        """*n* packets of *chain*'s class from *src* to *dst* (bytes): searched for when
        few, else from a :class:`~sfclab.targets.traffic.plan.TrafficPlan` made once (as
        a Lab's send)."""
        from ..targets.traffic.plan import PER_PATH, TrafficPlan

        if n <= PER_PATH * max(1, len(self.placement.problem.chain(chain).paths)):
            plan = self.class_traffic(chain, n, seed=len(self.traces) if seed is None else seed,
                                      src=src, dst=dst)
            if not plan.packets:
                raise SfclabError(f"no packet of chain {chain!r}'s class takes any of its "
                                  f"service paths", hint=plan.text())
            return [bytes(cp.packet) for cp in plan.packets]
        oracle = self._oracle(self.placement.problem.chain(chain).ingress)
        own, ends = self._addresses(chain, src, dst)
        key = (chain, seed or 0, ends)
        made = self._plans.get(key)
        if made is None or made[2] is not oracle:
            made = self._plans[key] = [TrafficPlan.make(oracle.generated, chain, oracle=oracle,
                                                        seed=seed or 0, own=own, sender=ends[0],
                                                        receiver=ends[1]), 0, oracle]
            self._warn(made[0].coverage)
        plan, start = made[0], made[1]
        if not plan.bases:
            raise SfclabError(f"no packet of chain {chain!r}'s class takes any of its "
                              f"service paths", hint=plan.coverage.text())
        made[1] += n
        return (data for _, data, _ in plan.packets(n, start))

    def _chain_for(self, src: str, dst: str | None, name: str | None) -> Chain:
        if name is not None:
            if name not in self._chains:
                raise self._no_chain(name)
            return self._chains[name]
        for c in self.placement.problem.chains:
            if c.ingress == src and (dst is None or c.egress == dst):
                return self._chains[c.name]
        raise SfclabError(f"no chain runs from {src!r}" + (f" to {dst!r}" if dst else ""),
                          hint="name the chain: net.send(src, dst, 'web')")

    def class_traffic(self, chain: str, n: int, *, seed: int = 0, src: str | None = None,
                      dst: str | None = None):
        """*n* packets of *chain*'s class that cover as many of its service paths as can
        be found, round-robin over them — what a Lab's ``send`` sends on one switch
        (:func:`~sfclab.targets.traffic.coverage.class_traffic`) — as traffic from host *src*
        to host *dst* (default: the chain's ingress and egress): each carries their
        MACs and IPv4 addresses wherever the chain's match allows, and a warning says
        where the match makes it carry others (the packets follow the match).  The
        candidates run on the embedded model with the chains that enter where *chain*
        enters, compiled for one switch (the ingress switch classifies them alike;
        chains entering elsewhere do not compete for its packets).  Returns the
        :class:`~sfclab.targets.traffic.coverage.ClassTraffic`: the packets, the service path
        each takes, and the paths no packet reaches, with the reason."""
        from ..targets.traffic.coverage import class_traffic

        if chain not in self._chains:
            raise self._no_chain(chain)
        oracle = self._oracle(self.placement.problem.chain(chain).ingress)
        own, ends = self._addresses(chain, src, dst)
        plan = class_traffic(oracle.generated, chain, n, seed=seed, oracle=oracle, own=own,
                             sender=ends[0], receiver=ends[1])
        self._warn(plan)
        return plan

    def diff_targets(self, a: Any = "net", b: Any = "mininet?switch=bmv2", *, packets: int = 4,
                     seed: int = 0):
        """Run this network's program on network targets *a* and *b* (URLs: ``net``,
        ``mininet?switch=model``, ``mininet?switch=bmv2``; or target objects), send
        *packets* of every chain's class traffic from its ingress on both, and compare
        each packet's fate, egress, bytes, NFs, switches and service path
        (:func:`~sfclab.targets.network.diff.diff_network_targets`; the network's own
        target is not used).  Returns the report (``.same``, ``.text()``)."""
        from ..runtime.traffic import ClassUnreachable
        from ..targets.traffic.coverage import ClassTraffic
        from ..targets.network.diff import diff_network_targets

        traffic = {}
        for c in self._chains:
            src = self.placement.problem.chain(c.name).ingress
            try:
                plan = self.class_traffic(c.name, packets, seed=seed)
            except ClassUnreachable as e:
                ids = tuple(p.id for p in self.placement.problem.chain(c.name).paths)
                plan = ClassTraffic(c.name, (), (), ids, {p: e.message for p in ids})
            traffic[c.name] = (src, plan)
        return diff_network_targets(self.program, a, b, traffic)

    def _addresses(self, chain: str, src: str | None, dst: str | None
                   ) -> tuple[dict[str, int], tuple[str, str]]:
        """The addresses traffic of *chain* from *src* to *dst* carries (defaults: its
        ingress and egress; a server or a switch port has none), and ``(src, dst)``."""
        from ..runtime.traffic import host_fields

        c = self.placement.problem.chain(chain)
        src, dst = src or c.ingress, dst or c.egress
        hosts = self.topology.hosts
        return host_fields(hosts.get(src), hosts.get(dst)), (src, dst)

    def _warn(self, plan) -> None:
        """Each of *plan*'s address warnings, once per network (a Python warning,
        located at the chain's match)."""
        import warnings

        from ..errors import SourceWarning

        chain = self._chains[plan.chain]
        for text in plan.warnings:
            if text in self._warned:
                continue
            self._warned.add(text)
            w = SourceWarning(text, line=chain.line, column=chain.column, source=chain.source,
                              hint="send from a host the match allows, or widen the match")
            warnings.warn_explicit(w, SourceWarning, chain.source or "<chains>", chain.line,
                                   module="sfclab")

    def _oracle(self, ingress: str):
        """The embedded model running the chains that enter at *ingress*, on one switch,
        as the network runs them: packets arrive on the ingress's network port, and
        the NFs that check where a packet came in have the network's entries."""
        oracle = self._oracles.get(ingress)
        if oracle is None:
            problem = self.placement.problem
            oracle = self._oracles[ingress] = self._one_switch(
                [c.name for c in self._chains if problem.chain(c.name).ingress == ingress])
        return oracle

    def one_switch(self, chain: str):
        """A fresh embedded model running *chain* alone on one switch as the network
        runs it: its packets arrive on the network port of its ingress, and the NFs
        that check where a packet came in have the network's entries — what a packet
        of its class must come out as, wherever the network runs its NFs
        (:class:`~sfclab.targets.traffic.coverage.Oracle`: ``send(packet)``; close it)."""
        if chain not in self._chains:
            raise self._no_chain(chain)
        return self._one_switch([chain])

    def _one_switch(self, names: list[str]):
        import dataclasses

        from ..codegen import CodegenOptions, generate
        from ..codegen.network import entries_from_topology
        from ..compiler import compile as compile_chains
        from ..targets.traffic.coverage import Oracle

        ingress = self.placement.problem.chain(names[0]).ingress
        group = ChainSet.of([self._chains[n] for n in names])
        gen = generate(compile_chains(group, catalog=self.catalog),
                       options=CodegenOptions(bindings=dict(self.bindings)))
        port = self.program.ingress_ports[ingress]
        here = ((port, self.topology.hosts.get(ingress)),)
        gen = dataclasses.replace(gen, entries=tuple(entries_from_topology(
            gen.composition, gen.entries, {s.nf: here for s in gen.composition.slots})))
        return Oracle(gen, port=port)

    def _close_oracles(self) -> None:
        for oracle in self._oracles.values():
            oracle.close()
        self._oracles.clear()

    def tables(self, switch: str):
        """Occupancy of *switch*'s tables (entries / size), with the hits and misses
        of the packets sent through it (:class:`~sfclab.lab.TableUse` rows)."""
        from .values import TableUse

        if switch not in self.topology.switches:
            raise TargetError(f"no switch {switch!r} in topology {self.topology.name!r}",
                              hint=did_you_mean(switch, self.topology.switches)
                              or f"switches: {', '.join(list(self.topology.switches)[:12])}")
        if self.target.program is None and not self.holding():   # a failed push: read it
            self.push()
        seen = self._lookups(switch)
        return [TableUse(o.table, o.entries, o.size, seen.get((o.table, True), 0),
                         seen.get((o.table, False), 0))
                for o in self.target.occupancy(switch)]

    def _lookups(self, switch: str) -> dict[tuple[str, bool], int]:
        """``(table, hit) -> lookups`` of the packets sent through *switch*: the embedded
        model's own counts (every packet since the push), else those of the traces
        kept (:attr:`traces`)."""
        seen: dict[tuple[str, bool], int] = {}
        model = getattr(getattr(self.target, "switches", {}).get(switch), "server", None)
        tables = getattr(getattr(model, "switch", None), "tables", None)
        if tables is not None:
            for name, t in tables.items():
                seen[(name, True)], seen[(name, False)] = t.hits, t.misses
            return seen
        for t in self.traces:
            for h in t.hops:
                if h.node == switch and h.trace is not None:
                    for ev in h.trace.events:
                        if ev.kind in ("table_hit", "table_miss"):
                            key = (ev.name, ev.kind == "table_hit")
                            seen[key] = seen.get(key, 0) + 1
        return seen

    # -- changes -------------------------------------------------------------------------------
    def update(self, chains: str | ChainSet | Iterable[Chain], *, allow_reload: bool = False,
               catalog: NFCatalog | None = None):
        """Move the running network to *chains* (with the NFs of *catalog*, default the
        network's: an NF redefined since the push is reloaded where it runs): unchanged
        chains stay where they are, the others are placed in the room left (new slots on
        a running switch cost a reload, so they are avoided), and the change is written
        consistently on every switch (:mod:`sfclab.targets.network.update`).  Returns the
        plan (None: nothing was pushed, so every switch was pushed)."""
        catalog = catalog if catalog is not None else self.catalog
        if self.target.program is None:
            self.catalog = catalog
            self._chains, self._placement, self._program = self._chainset(chains), None, None
            self._close_oracles()
            self.push()
            return None
        new, placement, program = self._next(chains, catalog)
        plan = self.target.update(program, allow_reload=allow_reload,
                                  moves=self._moved(placement, program))
        self.catalog = catalog
        self._chains, self._placement, self._program = new, placement, program
        self._close_oracles()
        return plan

    def plan_update(self, chains: str | ChainSet | Iterable[Chain], *,
                    catalog: NFCatalog | None = None):
        """What :meth:`update` would do on each switch (nothing is written): a
        :class:`~sfclab.targets.network.update.NetworkUpdatePlan` (``moved``: the NFs the
        new placement runs on other switches).  A change that cannot be placed or
        generated raises its SfclabError."""
        if not self.pushed:
            raise TargetError("nothing is pushed yet", hint="push the network first")
        catalog = catalog if catalog is not None else self.catalog
        new, placement, program = self._next(chains, catalog)
        plan = self.target.plan(program)
        plan.moved = self._moved(placement, program)
        return plan

    def _moved(self, placement, program) -> list:
        """The NFs of chains in both the running placement and *placement* that
        *placement* runs on another node (:class:`~sfclab.targets.network.update.MovedNF`;
        stateful when the old switch's program has registers for the NF's type), each
        stateful one with whether its cells carry to *program*'s switch (:func:`judge_moves
        <sfclab.targets.network.moves.judge_moves>`)."""
        from ..targets.network.moves import judge_moves
        from ..targets.network.update import MovedNF

        old_pl = self.placement
        sessions = self.target.sessions() if hasattr(self.target, "sessions") else {}
        out = []
        for name, new in placement.chains.items():
            old = old_pl.chains.get(name)
            if old is None:
                continue
            kinds = placement.problem.chain(name).nf
            was = {i: n for i, _, n in old.where}
            for i, _, n in new.where:
                if i in was and was[i] != n:
                    index = getattr(sessions.get(was[i]), "index", None)
                    regs = [r.preamble.name for r in index.info.registers] if index else []
                    kind = kinds.get(i, i)
                    out.append(MovedNF(name, i, was[i], n,
                                       any(f"_{kind}." in r for r in regs)))
        return judge_moves(sessions, {s: sp.generated for s, sp in program.switches.items()},
                           out)

    def _next(self, chains, catalog: NFCatalog):
        """``(chains, placement, program)`` the running network moves to for *chains*."""
        import dataclasses

        from ..codegen.network import generate_network
        from ..passes.netplace import Weights, build_problem, solve

        new = self._chainset(chains)
        old_pl, old_prog = self.placement, self.program
        kept = {c.name: old_pl.chains[c.name] for c in new
                if c.name in self._chains and self._chains[c.name] == c}
        weights = self.options["weights"] or Weights()
        weights = dataclasses.replace(weights, new_slots=max(weights.new_slots, 10.0))
        installed = {s: frozenset(sp.slots) for s, sp in old_prog.switches.items()}
        problem = build_problem(self.topology, new, catalog=catalog, weights=weights,
                                installed=installed, preset=kept)
        opts = {k: v for k, v in self.options.items() if k != "weights"}
        placement = solve(problem, **opts)
        program = generate_network(placement, new, catalog=catalog, bindings=self.bindings,
                                   previous=old_prog, keep_chains=kept)
        return new, placement, program

    def close(self) -> None:
        self._close_oracles()
        self._close_target()

    def _close_target(self) -> None:
        if self._target is not None:
            self._target.close()
            self._target = None

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _chainset(self, chains) -> ChainSet:
        if isinstance(chains, (str, bytes)):
            from ..lang import parse

            return parse(chains, catalog=self.catalog)
        if isinstance(chains, ChainSet):
            return chains
        if isinstance(chains, Chain):
            return ChainSet.of([chains])
        return ChainSet.of(chains)


class _From:
    """A network target as :func:`~sfclab.targets.traffic.sending.stream` sends through it: every
    packet from *src*."""

    def __init__(self, target: Any, src: str, label: str) -> None:
        self.target, self.src, self.label = target, src, label

    def send(self, _port: int, data: bytes):
        return self.target.send(self.src, data, label=self.label)
