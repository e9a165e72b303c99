"""The ``sfclab`` command line.

``sfclab check FILE…`` parses and validates chain files (``.sfc`` text or
``.json`` P4SFC intents) and topology files (``.topo``) and prints each chain's
NFs, edges and service paths, or each topology's switches, hosts, servers and
links, or the errors (exit status 1); a chain no packet can reach (earlier chains
take its whole class) gets a warning on standard error, located at its name;
``--topology FILE.topo`` also checks the chains' ``from`` / ``to`` against that network.
``sfclab compile FILE… [--arch] [-o DIR] [--explain] [--p4c]`` runs the compiler passes and the code generator;
with ``--topology FILE.topo`` it places the chains across the network's switches,
prints the placement table and writes one program (P4, P4Info, entries, plan)
per switch;
``sfclab demo`` compiles, pushes and runs a realistic chain set on the embedded
model; ``sfclab model-switch`` serves the model over P4Runtime; ``sfclab stf PROGRAM.p4
[TEST.stf] [--target model|bmv2] [-D NAME=V] [-I DIR]`` runs a v1model program's STF test
(:mod:`sfclab.targets.stf.runner`) and prints each expectation with its line; ``sfclab lite build OUT``
builds the labs as a JupyterLite site (:mod:`.lite`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._version import __version__
from ..errors import SfclabError
from ..ir.model import Chain, ChainSet
from ..ir.topology import Topology

__all__ = ["main", "describe_chain", "describe_topology"]


def describe_chain(chain: Chain, weight: float) -> str:
    """A plain-text summary of one chain: NFs, edges and service paths."""
    g = chain.graph
    lines = [f"chain {chain.name}"]
    if chain.match:
        lines.append(f"  match   {chain.match}")
    lines.append(f"  weight  {weight:.4g}" + ("" if chain.weight is not None else " (default)"))
    if chain.ingress is not None or chain.egress is not None:
        lines.append(f"  from    {chain.ingress or '(not said)'} to {chain.egress or '(not said)'}")
    nfs = chain.nf_nodes()
    lines.append(f"  NFs     {len(nfs)}: " + ", ".join(
        n if g.nodes[n]["label"].lower() == n else f"{n} ({g.nodes[n]['label']})" for n in nfs))
    lines.append(f"  edges   {g.number_of_edges()}")
    for u, v, d in g.edges(data=True):
        extra = ""
        if d["kind"] == "case":
            extra = f"  {d['cond'].field} in {{{', '.join(map(str, d['cases']))}}}"
        elif d["kind"] in ("then", "else", "loop", "exit"):
            extra = f"  {'' if d['kind'] in ('then', 'loop') else 'not '}{d['cond']}"
            if d["kind"] == "loop":
                extra += f"  ({d['bound']} runs)"
        lines.append(f"    {u} => {v}  [{d['kind']}]{extra}")
    paths = chain.paths(weight)
    lines.append(f"  paths   {len(paths)}")
    lines += [f"    {p.describe()}" for p in paths]
    return "\n".join(lines)


def describe_topology(topo: Topology) -> str:
    """A plain-text summary of a topology: switches, hosts, servers, links."""
    lines = [f"topology {topo.name}"]
    for sw in topo.switches.values():
        used = len(topo.ports_used(sw.name))
        lines.append(f"  switch  {sw.name}: {sw.arch}, {sw.pipes} pipe(s), {sw.stages} stages, "
                     f"{sw.tables} tables, {used}/{sw.ports} ports linked")
    for kind, nodes in (("host", topo.hosts), ("server", topo.servers)):
        for n, obj in nodes.items():
            links = topo.graph[n]
            at = ", ".join(f"{nb}:{d['link'].port_of(nb)}" for nb, d in links.items()) or \
                "not linked"
            what = f"{obj.ip} {obj.mac_text}" if kind == "host" else \
                f"runs {', '.join(obj.nfs) or 'any NF'}"
            lines.append(f"  {kind:<7} {n}: {what}, at {at}")
    lines.append(f"  links   {topo.graph.number_of_edges()}")
    lines += [f"    {k}" for k in topo.links if topo.kind(k.a) == topo.kind(k.b) == "switch"]
    return "\n".join(lines)


def _check(args: argparse.Namespace) -> int:
    status = 0
    topology = None
    if args.topology:
        try:
            topology = _load_topology(Path(args.topology))
        except (SfclabError, OSError) as e:
            return _failed(e)
    for name in args.files:
        path = Path(name)
        try:
            loaded = _load_topology(path) if path.suffix == ".topo" else _load(path)
            if topology is not None and not isinstance(loaded, Topology):
                from ..lang.endpoints import check_endpoints

                check_endpoints(path.read_bytes(), topology, source=str(path))
        except SfclabError as e:
            print(e, file=sys.stderr)
            status = 1
            continue
        except OSError as e:
            print(f"{name}: cannot read: {e.strerror}", file=sys.stderr)
            status = 1
            continue
        if isinstance(loaded, Topology):
            print(f"{path}: {loaded.summary()}, OK")
            if not args.quiet:
                print(describe_topology(loaded))
            continue
        warnings = _warnings(loaded, path)
        for w in warnings:
            print(w, file=sys.stderr)
        weights = loaded.weights()
        tail = f" ({len(warnings)} warning{'s' * (len(warnings) != 1)})" if warnings else ""
        on = f", endpoints on {topology.name}" if topology is not None else ""
        print(f"{path}: {len(loaded)} chain(s){on}, OK{tail}")
        if not args.quiet:
            for c in loaded:
                print(describe_chain(c, weights[c.name]))
    return status


def _warnings(chains: ChainSet, path: Path) -> list:
    """The chains no packet reaches, with carets in *path*'s text."""
    from ..ir.validate import program_headers, shadowed
    from ..lang import default_catalog

    text = path.read_text(errors="replace")
    return shadowed(chains, parsed=program_headers(chains, default_catalog()), text=text)


def _print_warnings(compiled, files: Sequence[str]) -> None:
    """The compiled chains' warnings, with carets in the *files* they came from."""
    from ..ir.validate import program_headers, shadowed

    if not compiled.warnings:
        return
    texts = {str(Path(n)): Path(n).read_text(errors="replace") for n in files}
    for w in shadowed(compiled.chains, parsed=program_headers(compiled.chains, compiled.catalog),
                      text=texts):
        print(w, file=sys.stderr)


def _compile(args: argparse.Namespace) -> int:
    from ..compiler import compile
    from ..lang import parse_file

    if args.pipes is not None and (args.topology or args.arch != "tna"):
        print("--pipes is the Tofino's pipes for the placement of --arch tna"
              + (" (a topology's switches say their own `pipes`)" if args.topology else
                 "; BMv2 (v1model) has no pipes to plan"), file=sys.stderr)
        return 2
    try:
        chains = ChainSet()
        for name in args.files:
            parse_file(name, into=chains)
        if args.topology:
            return _compile_network(args, chains)
        extra = {} if args.pipes is None else {"pipes": args.pipes}
        compiled = compile(chains, arch=args.arch, pipeline=args.pipeline, **extra)
        _print_warnings(compiled, args.files)
        if args.explain:
            print(compiled.explain())
        if args.output is None and not args.p4c:
            return 0
        from ..codegen import generate, write_outputs

        gen = generate(compiled)
        out = Path(args.output or "sfclab-out")
        for path in write_outputs(gen, out):
            print(f"wrote {path}")
        if args.p4c:
            return _run_p4c(gen, out)
    except (SfclabError, OSError) as e:
        return _failed(e)
    return 0


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def _failed(e: SfclabError | OSError) -> int:
    """Print *e* as a user should see it (no traceback); returns the exit status, 1."""
    if isinstance(e, OSError):
        print(f"{e.filename}: cannot read: {e.strerror}", file=sys.stderr)
    else:
        print(e, file=sys.stderr)
    return 1


def _compile_network(args: argparse.Namespace, chains: ChainSet) -> int:
    """``compile --topology``: the placement table, and one program per switch."""
    from ..lang.endpoints import check_endpoints
    from ..api.network import Network

    topology = _load_topology(Path(args.topology))
    for name in args.files:
        check_endpoints(Path(name).read_bytes(), topology, source=str(name))
    net = Network(topology, chains, solver=args.solver)
    print(net.placement.table())
    if args.explain:
        print(net.program.summary())
    if args.output is None and not args.p4c:
        print("(-o DIR writes one program per switch: DIR/SWITCH/program.p4, p4info.txt, "
              "entries.json, plan.txt)")
        return 0
    out = Path(args.output or "sfclab-out")
    paths = net.export(out)
    print(f"wrote {len(paths)} files to {out}: one folder per switch "
          f"({len(net.program.switches)} switches: program.p4, p4info.txt, entries.json, "
          f"plan.txt), "
          f"placement.txt" + (", servers.txt" if net.program.servers else ""))
    if args.p4c:
        for s, sp in net.program.switches.items():
            print(f"{s}:")
            if _run_p4c(sp.generated, out / s):
                print(f"p4c refused the program of switch {s} ({out / s / 'program.p4'})",
                      file=sys.stderr)
                return 1
    return 0


def _run_p4c(gen, out: Path) -> int:
    from ..codegen.p4c import run_p4c

    res = run_p4c(out / "program.p4", gen.arch, out, gen.program.program)
    print(f"$ {' '.join(res.command)}")
    if not res.ok:
        crash = [line for line in res.output.splitlines()     # an assertion in the compiler
                 if "Compiler Bug" in line or line.startswith(("terminate called", "error:"))]
        for m in [*res.messages, *crash] or [res.output.strip()]:  # error: … has no location
            print(m, file=sys.stderr)
        print(f"{Path(res.command[0]).name} refused the program (exit status {res.returncode})",
              file=sys.stderr)
        return 1
    print(f"{Path(res.command[0]).name}: OK")
    if gen.arch == "tna" and _print_stages(gen, out):
        return 1
    return _check_p4info(gen, out / "p4info.p4c.txt")


def _print_stages(gen, out: Path) -> int:
    """Per pipe and gress: the NF slots, the stages the Tofino compiler used against the
    plan, and the core's; 1 (after a located error) when a table is past the chip's last
    stage."""
    from ..targets.tofino.target import bfa_files, check_stages, pipelet_stages, stage_report

    files = bfa_files(out / "tofino")
    if not files:
        print("(the Tofino compiler wrote no .bfa: no stage table)")
        return 0
    texts = {pipe: f.read_text() for pipe, f in files.items()}
    print(f"stages per pipe and gress ({', '.join(str(f.relative_to(out)) for f in files.values())}), "
          f"against the plan (sfclab's core + the NF slots' estimates):")
    print(stage_report(pipelet_stages(texts, gen)), flush=True)
    try:
        check_stages(texts, gen, where=out / "program.p4")
    except SfclabError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def _check_p4info(gen, theirs_path: Path) -> int:
    """p4c's P4Info is the one to use; say whether sfclab's own agrees with it."""
    from ..codegen.p4info import build_p4info, compare_p4info, p4info_from_text

    if not theirs_path.is_file():
        print(f"(the compiler wrote no {theirs_path.name}: sfclab's p4info.txt stands)")
        return 0
    diffs = compare_p4info(build_p4info(gen.program.program, arch=gen.arch),
                           p4info_from_text(theirs_path.read_text()))
    if not diffs:
        print(f"sfclab's P4Info agrees with the compiler's ({theirs_path.name})")
        return 0
    print(f"sfclab's P4Info differs from the compiler's ({theirs_path.name}), which is the one "
          f"to use; please report:", file=sys.stderr)
    for d in diffs[:20]:
        print(f"  {d}", file=sys.stderr)
    return 1


def _demo(args: argparse.Namespace) -> int:
    from .demo import run

    try:
        result = run(target=args.target, packets=args.packets, html=args.html)
    except SfclabError as e:
        print(e, file=sys.stderr)
        return 1
    return 0 if result.ok else 1


def _diff_targets(args: argparse.Namespace) -> int:
    from ..codegen import CodegenOptions, generate
    from ..compiler import compile
    from ..lang import parse_file
    from ..targets.diff import diff_targets

    try:
        chains = ChainSet()
        for name in args.files:
            parse_file(name, into=chains)
        if args.topology:                    # two network targets: every switch, every hop
            return _diff_network(args, chains)
        gen = generate(compile(chains, arch="v1model", pipeline=args.pipeline),
                       options=CodegenOptions(bindings=dict(_bindings(args.bind))))
        _print_warnings(gen.compiled, args.files)
        report = diff_targets(gen, args.a or "model", args.b or "bmv2", packets=args.packets)
    except SfclabError as e:
        print(e, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{e.filename}: cannot read: {e.strerror}", file=sys.stderr)
        return 1
    print(report.text())
    return 0 if report.same else 1


def _diff_network(args: argparse.Namespace, chains: ChainSet) -> int:
    """``diff-targets --topology``: two network targets, packet by packet, hop by hop."""
    from ..api.network import Network
    from ..lang.endpoints import check_endpoints

    topology = _load_topology(Path(args.topology))
    for name in args.files:
        check_endpoints(Path(name).read_bytes(), topology, source=str(name))
    with Network(topology, chains, bindings=dict(_bindings(args.bind))) as net:
        report = net.diff_targets(args.a or "net", args.b or "mininet?switch=bmv2",
                                  packets=args.packets)
    print(report.text())
    return 0 if report.same else 1


def _bindings(items: list[str]) -> list[tuple[str, int]]:
    out = []
    for item in items or ():
        name, _, value = item.partition("=")
        if not value.strip().isdigit():
            raise SfclabError(f"--bind {item!r}: write NAME=NUMBER (p1=1)")
        out.append((name.strip(), int(value)))
    return out


def _stf(args: argparse.Namespace) -> int:
    from .stf import run_cli

    return run_cli(args.program, args.test, target=args.target, defines=args.define or [],
                   includes=args.include or [], verbose=args.verbose)


def _model_switch(args: argparse.Namespace) -> int:
    from ..targets.model.process import run

    return run(args)


def _load(path: Path) -> ChainSet:
    from ..lang import parse_file

    return parse_file(path)


def _load_topology(path: Path) -> Topology:
    from ..lang import parse_topology_file

    return parse_topology_file(path)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sfclab", description="Service function chains on P4 switches.")
    p.add_argument("--version", action="version", version=f"sfclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    c = sub.add_parser("check", help="parse and validate chain files (.sfc, .json) and "
                                      "topologies (.topo)")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("-q", "--quiet", action="store_true", help="print only OK or the errors")
    c.add_argument("--topology", metavar="FILE.topo",
                   help="also check the chains' from / to against this network")
    c.set_defaults(run=_check)
    k = sub.add_parser("compile", help="compile chain files to a P4 program, P4Info and entries")
    k.add_argument("files", nargs="+", metavar="FILE")
    k.add_argument("--arch", choices=("v1model", "tna"), default="v1model",
                   help="target architecture (default: v1model, for BMv2)")
    k.add_argument("-o", "--output", metavar="DIR",
                   help="write program.p4, p4info.txt, entries.json and plan.txt here")
    k.add_argument("--explain", action="store_true", help="print what every pass decided")
    k.add_argument("--pipeline", choices=("auto", "mafsa", "optimal", "naive"), default="auto",
                   help="how to order the NF slots (default: auto)")
    k.add_argument("--p4c", action="store_true",
                   help="also run p4c-bm2-ss / bf-p4c when installed (output: -o DIR)")
    k.add_argument("--pipes", type=int, choices=(1, 2, 4), default=None,
                   help="pipes of the Tofino the program is for (--arch tna; default 2, "
                        "a 32-port Tofino 1; the 64-port one has 4)")
    k.add_argument("--topology", metavar="FILE.topo",
                   help="place the chains across this network: prints the placement table; "
                        "-o DIR writes one program per switch (each switch's arch)")
    k.add_argument("--solver", choices=("auto", "both", "exact", "heuristic"), default="auto",
                   help="network placement solvers (with --topology; default: auto)")
    k.set_defaults(run=_compile)
    d = sub.add_parser("demo", help="compile, push and run a realistic chain set (embedded model)")
    d.add_argument("--target", default=None, metavar="URL",
                   help="model (default), model://HOST:PORT, bmv2 (a BMv2 sfclab starts), "
                        "bmv2://HOST:PORT?device_id=N")
    d.add_argument("--packets", type=int, default=8, metavar="N", help="packets per class")
    d.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    d.set_defaults(run=_demo)
    x = sub.add_parser("diff-targets", help="run the same program and packets on two targets "
                                             "and compare them packet by packet")
    x.add_argument("files", nargs="+", metavar="FILE")
    x.add_argument("--a", default=None, metavar="URL",
                   help="first target (default: model; with --topology: net)")
    x.add_argument("--b", default=None, metavar="URL",
                   help="second target (default: bmv2, a simple_switch_grpc sfclab starts; "
                        "or bmv2://HOST:PORT?device_id=N&packet_in=…&nanolog=…, model, …; "
                        "with --topology: mininet?switch=bmv2)")
    x.add_argument("--topology", metavar="FILE.topo",
                   help="place the chains on this network and compare two network targets "
                        "(net, mininet?switch=model, mininet?switch=bmv2) hop by hop")
    x.add_argument("--packets", type=int, default=4, metavar="N", help="packets per class")
    x.add_argument("--bind", action="append", metavar="NAME=VALUE",
                   help="value of a run-time name in a multibranch case")
    x.add_argument("--pipeline", choices=("auto", "mafsa", "optimal", "naive"), default="auto",
                   help="how the NF slots are ordered (as for compile)")
    x.set_defaults(run=_diff_targets)
    s = sub.add_parser("stf", help="run a v1model program's STF test (p4c's simple test "
                                    "framework) on the model or on BMv2")
    s.add_argument("program", metavar="PROGRAM.p4")
    s.add_argument("test", nargs="?", metavar="TEST.stf",
                   help="the STF file (default: PROGRAM with .stf for .p4)")
    s.add_argument("--target", choices=("model", "bmv2"), default="model",
                   help="model (default: the embedded model) or bmv2 (p4c-bm2-ss and a "
                        "simple_switch_grpc sfclab starts in a network namespace)")
    s.add_argument("-D", dest="define", action="append", metavar="NAME[=VALUE]",
                   help="a preprocessor definition, as p4c takes it")
    s.add_argument("-I", dest="include", action="append", metavar="DIR",
                   help="a folder #include looks in, as p4c takes it")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="also print every packet sent and what came out")
    s.set_defaults(run=_stf)
    m = sub.add_parser("model-switch", help="run the embedded model switch as a P4Runtime server")
    from ..targets.model.process import add_arguments

    add_arguments(m)
    m.set_defaults(run=_model_switch)
    lite = sub.add_parser("lite", help="the labs as a JupyterLite site that runs in the "
                                       "browser (sfclab lite build OUT)")
    from . import lite as lite_site

    lite_site.add_arguments(lite)
    lite.set_defaults(run=lite_site.run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
