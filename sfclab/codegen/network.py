"""One program per switch of a network: each runs the parts of the chains placed on it.

Given a network placement (:mod:`sfclab.passes.netplace`), every service path
becomes a *journey*: the :class:`Segment` it runs on each switch (and server)
of its route, in order — transit switches get an empty one.  A switch's chain
set is its *parts*: a part is one chain entered at one point (its NFs up to
there being the same for every path through it), and its service paths are the
distinct segments that follow.  Each switch's program is then the one-switch
program (:func:`~.compose.compose`, the same initializer / slots / rewinder
model) with ``CodegenOptions(network=True)``, and its entries
(:func:`~.entries.network_entries`):

* the part that starts a chain (on its ingress switch) is classified by the
  chain's ``match`` and the ingress port;
* where a packet entered the network travels with it: every point where a
  chain enters (a host, a server, a free ``SWITCH:PORT``) has a *network port*
  (:attr:`NetworkProgram.ingress_ports`, 1, 2, … network-wide), which the
  classifier's entry writes into the SFC header; NFs read it as
  ``sfc.ingress_port`` on every switch, the ingress switch included, so an NF
  that checks where a packet came from (``ipsg``, ``mac_learning``) may run on
  any switch.  Their library entries come from the topology
  (:func:`entries_from_topology`: one per host that enters a chain through
  them, on its network port, with its address and MAC);
* across links the SFC header carries the service path id (*spi*, one per
  service path of the network) and the index of the next NF (*si*), NSH-style
  (Dejavu Fig. 3): the ``arrival`` table maps them to the switch's own token;
* a segment that ends before its path does is ``forward``-ed with the header
  kept, to the next switch or to a server (which runs its NFs and sends the
  packet back with the next index: :class:`ServerTask`); the last one is
  ``deliver``-ed to the egress port with the header removed;
* before a branch is taken a packet carries the spi of the first path that
  agrees with the decisions so far, as the one-switch token does;
* a value a branch tests after other NFs ran (``saved_md<k>``, see
  :mod:`.compose`) crosses links in the SFC header: every switch's header has the
  same saved fields (the most any chain needs), and a chain's NF keeps the same
  field on every switch (:func:`~sfclab.passes.fsm.chain_saved_nfs`).

Each switch's pipeline has one slot per NF type placed on it, in the
placement's canonical order, so the recirculations the placement counted are
the ones the programs make.

One switch with a server behind one of its ports (P4SFC's split of a one-switch
chain set) is built from the same pieces (:func:`route_path`,
:func:`build_switch`): :mod:`.detour`.

>>> from sfclab.ir.topology import line
>>> from sfclab.ir.model import ChainSet, linear_chain
>>> from sfclab.passes.netplace import place_network
>>> chains = ChainSet.of([linear_chain("c", ["heavy_hitter", "nat"])])
>>> prog = generate_network(place_network(line(3, stages=8), chains), chains)
>>> [(s.node, s.nodes, s.exit) for s in prog.journeys["c/0"]]
[('s1', ('heavy_hitter',), ('forward', 's2', 2)), ('s2', ('nat',), ('forward', 's3', 2)), ('s3', (), ('deliver', 1))]
>>> [str(e) for e in prog.switches["s2"].generated.entries if e.group == "chain:c@1"]
['SfcIngress.arrival: spi=1 si=1 -> enter(path_id=1, bitmap=0b1)  [chain:c@1]', 'SfcIngress.rewinder: hdr.sfc.path_id=1 hdr.sfc.state=0 -> forward(spi=1, si=2, port=2)  [chain:c@1]']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..compiler import CompiledChains
from ..errors import CompileError
from ..ir.classifier import Classifier, FieldMatch
from ..ir.fields import FIELDS
from ..ir.model import Chain, ChainSet, ServicePath
from ..passes import CompileOptions
from ..passes.fsm import _decision_positions, chain_saved_nfs, fsm_pass
from ..passes.netplace import ChainPlacement, NetworkPlacement
from ..passes.pipeline import pipeline_pass
from .generated import Generated, emitter_for
from .compose import CodegenOptions, compose, headers_of
from .entries import Exact, Lpm, Range, TableEntry, Ternary, network_entries, nf_entries
from .journeys import Segment, ServerTask

__all__ = ["Segment", "ServerTask", "SwitchProgram", "NetworkProgram", "generate_network",
           "route_path", "build_switch", "part_headers", "service_path_ids",
           "write_network_outputs", "network_ports", "entries_from_topology", "MAX_SPI",
           "MAX_SI", "MAX_NETWORK_PORT"]

#: The SFC header's path id and state fields: 16 and 8 bits.
MAX_SPI = (1 << 16) - 1
MAX_SI = (1 << 8) - 1
#: The highest network port: NFs read ``sfc.ingress_port`` as a 9-bit port.
MAX_NETWORK_PORT = (1 << 9) - 1


@dataclass(frozen=True, slots=True)
class SwitchProgram:
    """One switch's program and entries, and the parts of chains it runs."""

    switch: str
    generated: Generated
    parts: tuple[str, ...]
    #: Part path id (``web@2/0``) -> the network's path it belongs to (``web/0``).
    paths: Mapping[str, str] = field(default_factory=dict)
    #: (the network's path, index of a segment's first NF) -> the part path that runs it.
    segments: Mapping[tuple[str, int], str] = field(default_factory=dict)

    @property
    def slots(self) -> tuple[str, ...]:
        return tuple(s.nf for s in self.generated.composition.slots)


@dataclass(frozen=True, slots=True)
class NetworkProgram:
    """Everything a network target needs: per switch its program and entries, per
    server its tasks, per service path its spi and its journey."""

    placement: NetworkPlacement
    switches: Mapping[str, SwitchProgram]
    servers: Mapping[str, tuple[ServerTask, ...]]
    spis: Mapping[str, int]
    journeys: Mapping[str, tuple[Segment, ...]]
    #: Where a chain enters (``alice``, ``s3:7``) -> its network port: what NFs read as
    #: ``sfc.ingress_port`` for the packets that enter there, on every switch.
    ingress_ports: Mapping[str, int] = field(default_factory=dict)

    @property
    def topology(self):
        return self.placement.problem.topology

    def path_of_spi(self, spi: int) -> str | None:
        return next((p for p, i in self.spis.items() if i == spi), None)

    def summary(self) -> str:
        lines = [f"{len(self.switches)} switch programs, {len(self.spis)} service paths"]
        if self.ingress_ports:
            lines.append("  network ports (sfc.ingress_port): " + ", ".join(
                f"{p} {x}" for x, p in sorted(self.ingress_ports.items(), key=lambda i: i[1])))
        for s, sp in self.switches.items():
            if sp.parts:
                lines.append(f"  {s}: slots {' | '.join(sp.slots) or '(none)'}; "
                             f"{len(sp.generated.entries)} entries; parts {', '.join(sp.parts)}")
        for srv, tasks in self.servers.items():
            lines.append(f"  {srv}: " + "; ".join(f"spi {t.spi} si {t.si}: {', '.join(t.nodes)}"
                                                   for t in tasks))
        return "\n".join(lines)


# --- journeys ---------------------------------------------------------------------------------

def _journey(path: ServicePath, pl: ChainPlacement, egress_port: int, topology) -> list[Segment]:
    """The segments of *path* along its chain's route (see the module docstring)."""
    loc = {i: (q, n) for i, q, n in pl.where}
    route, nodes, n = pl.route, path.nodes, len(path.nodes)
    raw: list[tuple[str, str, int, int, int]] = []
    i = 0
    for q, s in enumerate(route):
        while True:
            start = i
            while i < n and loc[nodes[i]] == (q, s):
                i += 1
            raw.append(("switch", s, q, start, i))
            if i < n and loc[nodes[i]][0] == q:
                srv, start = loc[nodes[i]][1], i
                while i < n and loc[nodes[i]] == (q, srv):
                    i += 1
                raw.append(("server", srv, q, start, i))
                continue
            break
        if i == n and path.terminal != "output":
            break
    if i != n:                                        # the placement broke monotonicity
        raise CompileError(f"path {path.id}: its NFs are not in route order on "
                           f"{' '.join(route)}", hint="report this as a bug in sfclab")
    out = []
    for k, (kind, node, q, a, b) in enumerate(raw):
        if kind == "server":
            ex: tuple = ("return", topology.port(node, route[q]))
        elif k + 1 < len(raw):
            nxt = raw[k + 1][1]
            ex = ("forward", nxt, topology.port(node, nxt))
        elif path.terminal == "output":
            ex = ("deliver", egress_port)
        else:
            ex = ("end", path.terminal)
        out.append(Segment(path.id, kind, node, q, a, nodes[a:b], path.nfs[a:b], ex))
    return out


# --- spis -------------------------------------------------------------------------------------

def service_path_ids(paths: list[ServicePath], keep: Mapping[str, int],
                     avoid: Iterable[int] = ()) -> dict[str, int]:
    """A service path id for every path: *keep*'s where given, else one that is
    neither kept nor in *avoid* (the ids the network runs now: a changed path gets a
    new id, so no packet can take an old entry for a new one)."""
    out = {p.id: keep[p.id] for p in paths if p.id in keep}
    used = set(out.values()) | set(avoid)
    nxt = max(used, default=0) % MAX_SPI + 1
    for p in paths:
        if p.id in out:
            continue
        for _ in range(MAX_SPI):
            if nxt not in used:
                break
            nxt = nxt % MAX_SPI + 1
        else:
            raise CompileError(f"no free service path id: the SFC header's path id has 16 bits "
                               f"and {len(used)} are in use", hint="use fewer chains or branches, "
                               "or push the network again (a fresh start)")
        out[p.id] = nxt
        used.add(nxt)
    return out


# --- parts per switch ---------------------------------------------------------------------------

@dataclass
class _Part:
    name: str
    chain: Chain
    classified: bool
    spi: int                                    # the spi packets arrive with (not classified)
    start: int
    ingress: str = ""                           # where the chain enters (host, SWITCH:PORT)
    #: (path, its segment here, the spi it leaves with)
    segments: list[tuple[ServicePath, Segment, int]] = field(default_factory=list)


def _prefix(path: ServicePath, where: list[int], end: int) -> tuple:
    return (tuple(path.nodes[:end]), tuple(d for d, k in zip(path.decisions, where) if k < end))


def generate_network(placement: NetworkPlacement, chains: ChainSet, *, catalog=None,
                     bindings: Mapping[str, int] | None = None,
                     previous: NetworkProgram | None = None,
                     keep_chains: Iterable[str] = ()) -> NetworkProgram:
    """Per-switch programs and entries, server tasks and journeys for *placement*.

    With *previous* (the program the network runs), the chains named in
    *keep_chains* keep their service path ids, and a switch whose NF types are
    among the slots it runs keeps its program (so the change is entries only)."""
    problem = placement.problem
    topo = problem.topology
    keep_spi = {p: i for p, i in (previous.spis.items() if previous else ())
                if p.rpartition("/")[0] in set(keep_chains)}
    all_paths = [p for c in problem.chains for p in c.paths]
    spis = service_path_ids(all_paths, keep_spi, previous.spis.values() if previous else ())
    ports = network_ports([c.ingress for c in problem.chains],
                          previous.ingress_ports if previous else {})
    saved = {cp.name: chain_saved_nfs(chains[cp.name]) for cp in problem.chains}
    # one SFC header on every link: it never shrinks under a running network
    n_saved = max([len(v) for v in saved.values()]
                  + [sp.generated.composition.saved for sp in
                     (previous.switches.values() if previous else ())], default=0)
    parts: dict[str, dict[tuple, _Part]] = {s: {} for s in topo.switches}
    servers: dict[str, list[ServerTask]] = {}
    journeys: dict[str, tuple[Segment, ...]] = {}
    for cp in problem.chains:
        chain, pl = chains[cp.name], placement.chains[cp.name]
        in_switch, in_port = topo.endpoint(cp.ingress)
        egress_port = topo.endpoint(cp.egress)[1]
        rep: dict[tuple, int] = {}                   # prefix -> spi of its first path
        for path in cp.paths:
            journeys[path.id] = route_path(chain, path, _journey(path, pl, egress_port, topo),
                                           spis[path.id], rep, parts, servers, in_port=in_port,
                                           saved=saved[cp.name], ingress=cp.ingress)
    programs = {}
    for s in topo.switches:
        old = previous.switches.get(s) if previous else None
        programs[s] = _switch_program(s, list(parts[s].values()), placement, catalog,
                                      bindings or {}, old, n_saved, ports)
    return NetworkProgram(placement, programs, {k: tuple(v) for k, v in servers.items()},
                          spis, journeys, ports)


def network_ports(ingresses: Iterable[str], keep: Mapping[str, int] | None = None
                  ) -> dict[str, int]:
    """A network port for every point in *ingresses*: *keep*'s where given (the
    ones a running network uses), else the lowest one from 1 that *keep* does not
    use either (a packet still in flight from a point no chain enters any more
    cannot pass for one from a new point), in order.

    >>> network_ports(["alice", "bob", "alice", "s3:7"], {"bob": 1, "carol": 2})
    {'bob': 1, 'alice': 3, 's3:7': 4}
    """
    keep = keep or {}
    ingresses = list(ingresses)
    out = {x: keep[x] for x in ingresses if x in keep}
    used = set(keep.values())
    for x in ingresses:
        if x in out:
            continue
        n = next(i for i in range(1, MAX_NETWORK_PORT + 2) if i not in used)
        if n > MAX_NETWORK_PORT:
            raise CompileError(f"more than {MAX_NETWORK_PORT} points where chains enter the "
                               f"network: NFs read where a packet entered as a 9-bit port "
                               f"(sfc.ingress_port)", hint="let chains share ingress points")
        out[x] = n
        used.add(n)
    return out


def route_path(chain: Chain, path: ServicePath, segments: Iterable[Segment], spi: int,
               rep: dict[tuple, int], parts: dict[str, dict[tuple, _Part]],
               servers: dict[str, list[ServerTask]], *, in_port: int | None,
               saved: tuple[str, ...] = (), ingress: str = "") -> tuple[Segment, ...]:
    """Give each of *path*'s segments to the part of its switch that runs it (in
    *parts*, per switch) or to its server's tasks; returns the segments named by
    their parts.  *spi* is the path's service path id; *rep* (per chain: prefix ->
    spi of the first path with it) makes paths that agree so far carry one id;
    *in_port*: the port a chain's packets enter on (None: any port); *saved*: the
    chain's NFs whose value a later branch tests (none may run on a server);
    *ingress*: where the chain enters the network (a key of the network ports)."""
    where = _decision_positions(path)
    named = []
    for seg in segments:
        pre = _prefix(path, where, seg.start)
        post = _prefix(path, where, seg.start + len(seg.nodes))
        rep.setdefault(pre, spi)
        rep.setdefault(post, spi)
        if seg.kind == "server":
            _server_task(servers, seg, path, where, rep[pre], saved)
            named.append(seg)
            continue
        part = _part_of(parts.setdefault(seg.node, {}), chain, pre, seg, in_port, rep[pre])
        part.ingress = ingress
        named.append(dataclasses.replace(seg, part=part.name))
        part.segments.append((path, seg, rep[post]))
    return tuple(named)


def _part_of(parts: dict[tuple, _Part], chain: Chain, pre: tuple, seg: Segment,
             in_port: int | None, spi: int) -> _Part:
    key = (chain.name, pre)
    part = parts.get(key)
    if part is None:
        classified = seg.start == 0 and seg.position == 0 and not pre[0]
        same = sum(1 for (c, p) in parts if c == chain.name and len(p[0]) == seg.start)
        name = chain.name if classified else (f"{chain.name}@{seg.start}"
                                              + (f".{same}" if same else ""))
        match = chain.match if classified else None
        if classified and in_port is not None:
            port = FieldMatch.exact(FIELDS["std.ingress_port"], in_port)
            match = Classifier(((chain.match.terms if chain.match else ()) + (port,)))
        sub = Chain(name, chain.graph, match=match, line=chain.line, column=chain.column,
                    source=chain.source)
        part = parts[key] = _Part(name, sub, classified, spi, seg.start)
    return part


def _server_task(servers: dict[str, list[ServerTask]], seg: Segment, path: ServicePath,
                 where: list[int], spi: int, saved: tuple[str, ...] = ()) -> None:
    tested = [n for n in seg.nodes if n in saved]
    if tested:
        raise CompileError(f"path {path.id}: a branch tests a field of {tested[0]!r}, which runs "
                           f"on server {seg.node}", hint="test the field of an NF that runs on a "
                           "switch: a server does not write an NF's value into the SFC header")
    end = seg.start + len(seg.nodes)
    if any(seg.start <= k < end and d.kind in ("then", "else", "case")
           for d, k in zip(path.decisions, where)):
        raise CompileError(f"path {path.id}: a branch is decided by an NF on server {seg.node} "
                           f"({', '.join(seg.nodes)})", hint="branch on an NF that runs on a "
                           "switch: servers run NFs in sequence only")
    tasks = servers.setdefault(seg.node, [])
    if not any(t.spi == spi and t.si == seg.start for t in tasks):
        tasks.append(ServerTask(spi, seg.start, seg.nodes, seg.nfs, end, seg.exit[1], path.id))


def _part_paths(part: _Part) -> list[tuple[ServicePath, Segment, int, ServicePath]]:
    """Every segment of the part with the switch's service path that runs it: (path,
    segment, spi it leaves with, the switch's service path); equal segments share
    one switch path (the first's)."""
    out, seen = [], {}
    for path, seg, spi in part.segments:
        where = _decision_positions(path)
        end = seg.start + len(seg.nodes)
        inside = tuple(d for d, k in zip(path.decisions, where) if seg.start <= k < end)
        key = (seg.nodes, inside, seg.exit[0], path.terminal if seg.exit[0] == "end" else "")
        if key not in seen:
            terminal = seg.exit[1] if seg.exit[0] == "end" else "output"
            seen[key] = ServicePath(part.name, len(seen), seg.nodes, seg.nfs, terminal,
                                    path.weight, inside)
        out.append((path, seg, spi, seen[key]))
    return out


def _switch_program(s: str, parts: list[_Part], placement: NetworkPlacement, catalog,
                    bindings: Mapping[str, int], old: SwitchProgram | None,
                    n_saved: int = 0, ports: Mapping[str, int] | None = None) -> SwitchProgram:
    usage = placement.usage().get(s)
    slots = usage.types if usage else ()
    cat = catalog if catalog is not None else _default_catalog()
    topo = placement.problem.topology
    sources: dict[str, set] = {}
    for part in parts:
        for p, _, _ in part.segments:
            for nf in p.nfs:
                sources.setdefault(nf, set()).add(part.ingress)
    ports = ports or {}
    hosts = {nf: tuple(sorted(((ports[x], topo.hosts.get(x)) for x in xs if x in ports),
                              key=lambda ph: ph[0]))
             for nf, xs in sources.items()}
    options = CodegenOptions(network=True, network_ingress=True, bindings=dict(bindings),
                             keep_headers=part_headers(parts, cat), saved_fields=n_saved)
    if old is not None and set(slots) <= set(old.slots) and \
            set(options.keep_headers) <= set(old.generated.composition.headers):
        slots = old.slots                              # the program the switch runs
        options = CodegenOptions.keeping(old.generated.composition,
                                         bindings=dict(bindings), saved_fields=n_saved)
    return build_switch(s, parts, cat, arch=topo.node(s).arch,
                        compile_options=CompileOptions(pipeline=tuple(slots)), options=options,
                        ports=ports, hosts=hosts)


def part_headers(parts: list[_Part], catalog) -> tuple[str, ...]:
    """What any NF of the chains crossing a switch may have pushed upstream: its
    parser extracts it."""
    nfs = {nf for part in parts for p, _, _ in part.segments for nf in p.nfs}
    return headers_of(catalog.definition(nf) for nf in sorted(nfs))


def build_switch(s: str, parts: list[_Part], catalog, *, arch: str,
                 compile_options: CompileOptions, options: CodegenOptions,
                 ports: Mapping[str, int] | None = None,
                 hosts: Mapping[str, tuple] | None = None) -> SwitchProgram:
    """Switch *s*'s program and entries for its *parts*: their segments are the
    switch's service paths, compiled (pipeline and fsm passes, *compile_options*)
    and composed with *options* (``network`` set).  On a network (*ports*: the
    network ports, ``options.network_ingress``) the classifier's entries set the
    network port of their chain's ingress, and the NFs' library entries keyed on
    the ingress port are the topology's (:func:`entries_from_topology` with
    *hosts*: per NF type, ``(network port, host or None)`` of the chains that run
    it here)."""
    chains, paths, exits, owner, via = [], [], {}, {}, {}
    for part in parts:
        chains.append(part.chain)
        for path, seg, spi, sub in _part_paths(part):
            via[path.id, seg.start] = sub.id
            if sub.id in owner:
                continue
            paths.append(sub)
            owner[sub.id] = path.id
            if seg.exit[0] == "forward":
                exits[sub.id] = ("forward", spi, seg.start + len(seg.nodes), seg.exit[2])
            elif seg.exit[0] == "deliver":
                exits[sub.id] = ("deliver", seg.exit[1])
    state = CompiledChains(ChainSet.of(chains), tuple(paths), catalog, arch, compile_options)
    for run in (pipeline_pass, fsm_pass):
        state = run(state, options=state.options)
    comp = compose(state, options=dataclasses.replace(options, network=True), arch=arch)
    program = emitter_for(arch)(comp).program()
    ingress = ({p.name: ports[p.ingress] for p in parts if p.classified}
               if comp.options.network_ingress and ports is not None else None)
    entry_fn = network_entries
    if comp.pipelets is not None:                       # TNA: a state per pipelet visit
        from .tna_entries import tna_network_entries as entry_fn
    entries = entry_fn(comp, classified=[p.name for p in parts if p.classified],
                       arrivals=[(p.spi, p.start, p.name) for p in parts if not p.classified],
                       exits=exits, ingress=ingress)
    nf = nf_entries(comp)
    if hosts is not None:
        nf = entries_from_topology(comp, nf, hosts)
    gen = Generated(comp, program, tuple(entries + nf))
    return SwitchProgram(s, gen, tuple(p.name for p in parts), owner, via)


#: NF table keys that say where a packet entered, and the keys a host fills in
#: beside them (its address, its MAC), with their widths.
_PORT_KEY = "sfc.ingress_port"
_HOST_KEYS = {"hdr.ipv4.src_addr": ("ipv4", 32), "hdr.ethernet.src_addr": ("mac", 48)}


def _like(m, value: int, width: int):
    """A match of *m*'s kind that matches exactly *value* (a field of *width* bits)."""
    if isinstance(m, Lpm):
        return Lpm(value, width)
    if isinstance(m, Ternary):
        return Ternary(value, (1 << width) - 1)
    if isinstance(m, Range):
        return Range(value, value)
    return Exact(value)


def entries_from_topology(comp, entries: Iterable[TableEntry],
                          hosts: Mapping[str, Iterable[tuple[int, object]]]) -> list[TableEntry]:
    """*entries* (an NF's library entries) with those keyed on the ingress port made
    for the network: each is repeated for every ``(network port, host)`` of
    *hosts* [NF type] — the port in place of its example port, and the host's
    address and MAC in place of a source address or MAC it also matches (an
    ingress that is no host, a server or a free port, gets none of those).  An
    ``ipsg`` binds each host's address to the port it enters on, a
    ``mac_learning`` knows each host's MAC there; entries not keyed on the port
    stay as they are.

    >>> import sfclab
    >>> from sfclab.codegen import generate
    >>> from sfclab.ir.topology import line
    >>> gen = generate(sfclab.compile("chain a: ipsg"))
    >>> [str(e).split("  [")[0] for e in entries_from_topology(
    ...     gen.composition, gen.entries, {"ipsg": [(3, line(1).hosts["h1"])]})
    ...  if "bindings" in e.table]
    ['SfcIngress.slot0_ipsg.bindings: sfc.ingress_port=3 hdr.ipv4.src_addr=10.0.0.1 -> allowed()']
    """
    nf_of = {f"nf:{s.instance}": s.nf for s in comp.slots}
    out, seen = [], set()
    for e in entries:
        nf = nf_of.get(e.group)
        if nf is None or _PORT_KEY not in dict(e.match):
            out.append(e)
            continue
        for port, host in hosts.get(nf, ()):
            match = []
            for k, m in e.match:
                if k == _PORT_KEY:
                    m = _like(m, port, 9)
                elif k in _HOST_KEYS:
                    if host is None:
                        break
                    attr, width = _HOST_KEYS[k]
                    m = _like(m, getattr(host, attr), width)
                match.append((k, m))
            else:
                new = dataclasses.replace(e, match=tuple(match), note=(
                    f"{host.name if host is not None else 'the ingress'} enters the network "
                    f"on network port {port}"))
                key = (new.table, new.match, new.action, new.params)
                if key not in seen:
                    seen.add(key)
                    out.append(new)
    return out


def _default_catalog():
    from ..p4.catalog import load_default

    return load_default()


def write_network_outputs(program: NetworkProgram, out_dir) -> list:
    """One folder per switch (``program.p4``, ``p4info.txt``, ``entries.json``,
    ``plan.txt``, as :func:`~sfclab.codegen.write_outputs`), plus ``placement.txt``
    and ``servers.txt`` at the top; returns the paths written."""
    from pathlib import Path

    from .generated import write_outputs

    out = Path(out_dir)
    written = []
    for s, sp in program.switches.items():
        written += write_outputs(sp.generated, out / s)
    (out / "placement.txt").write_text(program.placement.table() + "\n\n"
                                       + program.summary() + "\n")
    written.append(out / "placement.txt")
    if program.servers:
        lines = [f"{srv}: service path {t.spi}, next NF {t.si}: run {', '.join(t.nfs)}, then "
                 f"next NF {t.next_si}, back out of port {t.port}"
                 for srv, tasks in program.servers.items() for t in tasks]
        (out / "servers.txt").write_text("\n".join(lines) + "\n")
        written.append(out / "servers.txt")
    return written
