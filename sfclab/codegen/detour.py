"""One switch and a server behind one of its ports: P4SFC's pre-server / server / post-server split, run.

An NF a switch cannot run (offload class ``non``: ``ips``, ``dpi``, ``ipsec``)
runs on a server (P4SFC §III-D).  The offload pass splits every service path
into the NFs before the first such NF (*pre-server*), those from it to the
last one (*server*) and the rest (*post-server*).  The switch runs the
pre-server NFs, then sends the packet out of its **server port** with the SFC
header on — the service path id (*spi*) and the index of the next NF (*si*), as
between the switches of a network; the server runs its NFs and sends the packet
back on the same port with the index past them; the switch's ``arrival`` table
recognises it and runs the post-server NFs; then the packet leaves as from any
one-switch program (the port an NF asked for, else the default port).

The program is the network code generator's (:mod:`.network`) for one switch
with the server linked at the server port: the same parts, ``arrival`` and
``forward``.  Two things differ from a network switch: a chain's classifier
takes packets on any port, and a path's last part finishes as on one switch
(``finish``, not ``deliver``), so NFs' port requests after the server hold.  An
NF's port or multicast request made *before* the server does not survive the
detour (as between switches).

The server port is ``CodegenOptions.server_port``, by default the highest data
port (1..8) that nothing else uses (:func:`ports_in_use`); a port in use is
refused.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> gen = generate(sfclab.compile("chain web match tcp.dport == 443: firewall -> nat -> ips -> monitor"))
>>> d = gen.detour
>>> d.port, [(s.kind, s.nfs, s.exit) for s in d.journeys["web/0"]]
(8, [('switch', ('firewall', 'nat'), ('forward', 'server', 8)), ('server', ('ips',), ('return', 8)), ('switch', ('monitor',), ('end', 'output'))])
>>> print(d.text())
server behind port 8: service path 1, next NF 2: run ips, back with next NF 3
>>> d.paths["web@3/0"], d.passes["web/0"]
('web/0', 2)
"""

from __future__ import annotations

import dataclasses

from ..errors import CompileError
from ..ir.model import ServicePath
from ..p4.catalog import P4Catalog, load_default
from ..passes.fsm import chain_saved_nfs
from ..passes.offload import OffloadSplit, split_paths
from .generated import Generated, emitter_for
from .compose import CodegenOptions
from .entries import parse_value
from .journeys import SERVER, SWITCH, Segment, ServerDetour, ServerTask
from .network import build_switch, part_headers, route_path, service_path_ids

__all__ = ["ServerDetour", "generate_detour", "needs_server", "ports_in_use", "choose_server_port",
           "DATA_PORTS", "SWITCH", "SERVER"]

#: The data ports every sfclab target has (the model's and BMv2's 1..8,
#: ``runtime.replication.DEFAULT_PORTS``): the default server port is the highest free one.
DATA_PORTS = tuple(range(1, 9))
#: TNA's recirculation port (``CodegenOptions.recirc_port``) is in use on TNA.
_ARCH_PORTS = {"tna": "TNA's recirculation port (CodegenOptions.recirc_port)"}


def needs_server(compiled) -> bool:
    """Whether some service path of *compiled* runs an NF on a server (P4SFC)."""
    return any(s.server for s in _splits(compiled).paths)


def _splits(compiled):
    return compiled.offload or split_paths(compiled.paths, compiled.catalog)


def generate_detour(compiled, *, arch: str, options: CodegenOptions | None = None,
                    catalog=None) -> Generated:
    """The one-switch program of *compiled*, whose paths detour through the server
    (see the module docstring); its :attr:`~sfclab.codegen.Generated.detour` says how."""
    options = options or CodegenOptions()
    cat = catalog or (compiled.catalog if isinstance(compiled.catalog, P4Catalog)
                      else load_default())
    port = choose_server_port(compiled, cat, options, arch)
    offload = _splits(compiled)
    spis = service_path_ids(list(compiled.paths), {})
    parts: dict = {}
    servers: dict[str, list[ServerTask]] = {}
    journeys: dict[str, tuple[Segment, ...]] = {}
    for chain in compiled.chains:
        rep: dict[tuple, int] = {}
        saved = chain_saved_nfs(chain)
        for path in (p for p in compiled.paths if p.chain == chain.name):
            segs = _segments(path, offload.split(path.id), port)
            journeys[path.id] = route_path(chain, path, segs, spis[path.id], rep, parts,
                                           servers, in_port=None, saved=saved)
    mine = list(parts.get(SWITCH, {}).values())
    pipeline = compiled.options.pipeline
    if isinstance(pipeline, tuple):                # a fixed pipeline: the NFs a switch can run
        pipeline = tuple(nf for nf in pipeline if cat.definition(nf).has_p4)
    keep = tuple(dict.fromkeys(options.keep_headers + part_headers(mine, cat)))
    sp = build_switch(SWITCH, mine, cat, arch=arch,
                      compile_options=dataclasses.replace(compiled.options, pipeline=pipeline),
                      options=dataclasses.replace(options, keep_headers=keep, server_port=port))
    fsm = {f.path.id: f.passes for f in sp.generated.composition.compiled.fsm.paths}
    passes = {pid: sum(fsm[sp.segments[pid, s.start]] for s in segs if s.kind == "switch")
              for pid, segs in journeys.items()}
    detour = ServerDetour(port, tuple(servers.get(SERVER, ())), compiled, dict(sp.paths),
                          journeys, spis, passes)
    return dataclasses.replace(sp.generated, detour=detour)


def _segments(path: ServicePath, split: OffloadSplit, port: int) -> list[Segment]:
    """*path* on the switch, or on the switch, the server and the switch again."""
    nodes, nfs = path.nodes, path.nfs
    if not split.server:
        return [Segment(path.id, "switch", SWITCH, 0, 0, nodes, nfs, ("end", path.terminal))]
    lo = len(split.pre_server)
    hi = lo + len(split.server)
    return [Segment(path.id, "switch", SWITCH, 0, 0, nodes[:lo], nfs[:lo],
                    ("forward", SERVER, port)),
            Segment(path.id, "server", SERVER, 0, lo, nodes[lo:hi], nfs[lo:hi], ("return", port)),
            Segment(path.id, "switch", SWITCH, 0, hi, nodes[hi:], nfs[hi:],
                    ("end", path.terminal))]


# --- the server port ------------------------------------------------------------------------------

def ports_in_use(compiled, catalog, options: CodegenOptions, arch: str) -> dict[int, str]:
    """Ports the program already uses, each with what uses it: the default output
    port, the CPU port (and TNA's recirculation port), the ports the switch NFs'
    example entries send to, and ingress ports the chains' classifiers or branches
    select.

    >>> import sfclab
    >>> from sfclab.codegen import CodegenOptions
    >>> used = ports_in_use(sfclab.compile("chain a match std.ingress_port == 3: l3fwd -> ips"),
    ...                     None, CodegenOptions(), "v1model")
    >>> sorted(used)
    [1, 2, 3, 255]
    >>> used[3]
    "chain a's classifier takes packets that enter on it"
    """
    cat = catalog or load_default()
    cpu = options.cpu_port if options.cpu_port is not None else emitter_for(arch).DEFAULT_CPU_PORT
    used = {options.default_port: "the default output port (CodegenOptions.default_port)",
            cpu: "the CPU port"}
    if arch in _ARCH_PORTS:
        used.setdefault(options.recirc_port, _ARCH_PORTS[arch])
    if options.nf_entries == "examples":
        for nf in sorted({nf for p in compiled.paths for nf in p.nfs}):
            d = cat.definition(nf)
            for e in d.entries if d.has_p4 else ():
                for k, v in (e.params or {}).items():
                    if k == "port":
                        used.setdefault(parse_value(v), f"{nf}'s entries send packets out of it")
    for chain in compiled.chains:
        for t in chain.match.terms if chain.match else ():
            if t.field == "std.ingress_port" and not t.negate:
                for p in DATA_PORTS:
                    if t.matches(p):
                        used.setdefault(p, f"chain {chain.name}'s classifier takes packets "
                                           "that enter on it")
    for path in compiled.paths:
        for d in path.decisions:
            if d.cond is None or d.cond.field != "std.ingress_port":
                continue
            for v in (*d.cases, d.cond.value):
                v = options.bindings.get(v) if isinstance(v, str) else v
                if isinstance(v, int):
                    used.setdefault(v, f"a branch of chain {path.chain} tests it as the "
                                       "ingress port")
    return used


def choose_server_port(compiled, catalog, options: CodegenOptions, arch: str) -> int:
    """``options.server_port``, refused if a port in use (:func:`ports_in_use`); by
    default the highest of :data:`DATA_PORTS` that is free."""
    used = ports_in_use(compiled, catalog, options, arch)
    free = [p for p in DATA_PORTS if p not in used]
    port = options.server_port
    if port is None:
        if not free:
            raise CompileError("no data port is free for the server: ports 1..8 are all in "
                               "use", hint="give CodegenOptions(server_port=N) a port the "
                                           "target has and nothing else uses")
        return free[-1]
    if not isinstance(port, int) or not 1 <= port < 511:
        raise CompileError(f"server port {port!r} is not a switch port (1..510)",
                           hint=f"use a free data port: {_ports_text(free)}")
    if port in used:
        raise CompileError(f"server port {port} is in use: {used[port]}",
                           hint=f"choose another server port (server_port=N); free data ports: "
                                f"{_ports_text(free)}")
    return port


def _ports_text(ports: list[int]) -> str:
    return ", ".join(map(str, ports)) or "none of 1..8"
