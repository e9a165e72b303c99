"""The TNA programs the Tofino-compiler tests and ``benchmarks/bench_tofino.py`` compile,
and a runner that compiles each distinct program once (keyed by its text's hash), a few at
a time, longest first, timing each compile (wall and CPU seconds of the compiler process).

Two sweeps:

* **the full sweep** (``SFCLAB_TOFINO_SWEEP=full``, and ``benchmarks/bench_tofino.py``
  always): each library NF alone and mid-chain, every example in every pipeline mode on
  the default 2 pipes and (auto) on 1 and 4 pipes where placement takes it, the Tofino
  switches' programs of the example networks — some 80 programs, half an hour of
  compiler time on 2 cores;
* **the CI sweep** (the default): programs that can still fail for issue 31's claim (no
  table past stage 11, the core's 2 + 1 stages, P4Info as the compiler's) at about three
  minutes of compiler CPU: three examples in the ``auto`` mode on 2 pipes
  (:data:`CI_EXAMPLES`: every library NF, a server detour, checksum NFs in an egress) and
  three NF programs of the risky kinds (:data:`CI_NF_PROGRAMS`: an entry ingress with no
  NF slot, a full ingress, a digest and the port); networks through the CLI's
  ``--topology --p4c`` test only.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.p4c import P4C_BAREFOOT, find_compiler, run_p4c
from sfclab.api.network import Network
from sfclab.errors import CompileError
from sfclab.lang import parse_file, parse_topology_file
from sfclab.p4.catalog import load_default

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NFS = tuple(sorted(load_default().names()))
#: ``SFCLAB_TOFINO_SWEEP=full``: the tests compile the full sweep, not CI's.
FULL = os.environ.get("SFCLAB_TOFINO_SWEEP", "") == "full"
SWEEP = "full" if FULL else "ci"
#: How to run the full sweep (the tests' messages and the docs say so).
FULL_COMMAND = ("SFCLAB_TOFINO_SWEEP=full python -m pytest tests/targets/test_tofino.py "
                "tests/targets/test_tofino_stages.py")
PIPELINES = ("auto", "mafsa", "optimal", "naive")
#: The NF programs CI compiles: ``dpi`` alone (a server NF: the entry ingress holds no NF
#: slot, 3 core stages before issue 31's fix), ``qos`` between firewall and l3fwd (2 + 5 +
#: 3 of an ingress's 10 free stages: a full pipelet) and ``mac_learning`` alone (a digest
#: and the port).  every_nf.sfc (CI's examples) holds every library NF besides.
CI_NF_PROGRAMS = ("dpi alone", "qos mid-chain", "mac_learning alone")
#: The examples CI compiles (auto, 2 pipes): every library NF on four pipelets; a detour
#: through a server with pipe 0's ingress full; TCP/UDP checksum NFs in an egress.
CI_EXAMPLES = ("every_nf.sfc", "p4sfc_mixed.sfc", "datacenter.sfc")
EXAMPLE_FILES = tuple(sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".sfc", ".json")))
#: Values of the run-time names an example's multibranch cases use.
BINDINGS = {"flexmesh_fig9.sfc": {"p1": 1, "p2": 2, "p3": 3}}
#: The Tofino's pipes an example's chains need where placement refuses them on the default 2
#: (every_nf.sfc's 18 NFs, 54 stages, needed 4 before the lean core and side-by-side NFs).
PIPES: dict[str, int] = {}
#: The other numbers of pipes the full sweep compiles every example for (auto pipeline;
#: where placement refuses one, that is the test's check instead).
OTHER_PIPES = (1, 4)
#: (topology, chains) of the networks whose Tofino switches' programs are compiled (the
#: examples that place on campus.topo's switches: every_nf.sfc's NFs do not fit its four
#: switches with the measured stage estimates, and placement says so).
NETWORKS = (("campus.topo", "p4sc_table3.sfc"), ("campus.topo", "p4sfc_mixed.sfc"),
            ("campus.topo", "web.sfc"))
#: The networks CI compiles here: none (CI compiles campus.topo's Tofino switches with
#: p4sfc_intent.json through ``sfclab compile --topology --p4c``, whose switches run
#: ``arrival`` and ``forward`` as these do).
CI_NETWORKS: tuple[tuple[str, str], ...] = ()


def swept_networks() -> tuple[tuple[str, str], ...]:
    """The networks of this run's sweep."""
    return NETWORKS if FULL else CI_NETWORKS


def tofino_compiler() -> str | None:
    """bf-p4c or p4c-barefoot, as ``sfclab compile --arch tna --p4c`` finds it."""
    return find_compiler("tna")


#: Skips a test that runs the Tofino compiler where it is not installed, saying so.
needs_tofino_compiler = pytest.mark.skipif(
    tofino_compiler() is None,
    reason="the Tofino compiler (bf-p4c or p4c-barefoot) is not installed; "
           "../shared/p4-tools/install.sh gives p4c-barefoot")


def alone(nf: str) -> str:
    return f"chain c match ipv4.dst == 10.0.1.0/24 {{ input => {nf} => output; }}\n"


def mid_chain(nf: str) -> str:
    before = "firewall" if nf != "firewall" else "classifier"
    after = "l3fwd" if nf != "l3fwd" else "router"
    return (f"chain c match ipv4.dst == 10.0.1.0/24 {{ input => {before} => {nf} => {after} "
            f"=> output; }}\n")


#: The pipes the NF programs are compiled for: one chain's NFs sit in pipe 0 (the default 2
#: pipes would add a second pipe with sfclab's core only, which doubled each compile's time
#: for nothing the NF tests check; the examples keep the default 2 pipes).
NF_PIPES = 1


@functools.cache
def nf_programs(nf: str) -> dict[str, object]:
    return {f"{nf} alone": generate(sfclab.compile(alone(nf), arch="tna", pipes=NF_PIPES)),
            f"{nf} mid-chain": generate(sfclab.compile(mid_chain(nf), arch="tna",
                                                       pipes=NF_PIPES))}


def all_nf_programs(full: bool = True) -> dict[str, object]:
    """Every library NF alone and mid-chain (not *full*: CI's, :data:`CI_NF_PROGRAMS`)."""
    programs: dict[str, object] = {}
    for nf in NFS:
        programs.update(nf_programs(nf))
    return programs if full else {w: programs[w] for w in CI_NF_PROGRAMS}


def swept_nf_programs() -> dict[str, object]:
    """The NF programs of this run's sweep."""
    return all_nf_programs(FULL)


@functools.cache
def example_programs(path: Path, full: bool = True) -> dict[str, object]:
    """*path*'s TNA programs: in every pipeline mode, and (auto) on the other numbers of
    pipes placement takes it for (*full*), or in the auto mode only (CI)."""
    chains = parse_file(path)
    opts = CodegenOptions(bindings=BINDINGS.get(path.name, {}))
    out = {f"{path.name} --pipeline {mode}":
           generate(sfclab.compile(chains, arch="tna", pipeline=mode,
                                   pipes=PIPES.get(path.name, 2)), options=opts)
           for mode in (PIPELINES if full else ("auto",))}
    for pipes in OTHER_PIPES if full else ():
        try:
            compiled = sfclab.compile(chains, arch="tna", pipes=pipes)
        except CompileError as e:       # too many NFs for one pipe: refused, saying so
            assert pipes < PIPES.get(path.name, 2) and "--pipes" in (e.hint or ""), e
            continue
        out[f"{path.name} --pipes {pipes}"] = generate(compiled, options=opts)
    return out


def swept_examples() -> tuple[Path, ...]:
    """The examples of this run's sweep."""
    return EXAMPLE_FILES if FULL else tuple(p for p in EXAMPLE_FILES if p.name in CI_EXAMPLES)


def swept_example_programs(path: Path) -> dict[str, object]:
    """*path*'s programs of this run's sweep."""
    return example_programs(path, FULL)


@functools.cache
def network_programs(topology: str, chains: str) -> dict[str, object]:
    """The TNA switches' programs of *chains* placed on *topology* (files in examples/), as
    ``sfclab compile --topology`` writes them."""
    net = Network(parse_topology_file(EXAMPLES / topology), parse_file(EXAMPLES / chains))
    return {f"{chains} on {topology}: {s}": sp.generated
            for s, sp in net.program.switches.items() if sp.generated.arch == "tna"}


#: test_tofino_stages.py's chain placed in one ingress pipelet (the default 2 pipes).
PLACED_CHAIN = ("chain c match ipv4.dst == 10.0.1.0/24 "
                "{ input => firewall => l3fwd => output; }")


@functools.cache
def placed_chain() -> tuple[object, object]:
    """:data:`PLACED_CHAIN` compiled for TNA and its program: ``(compiled, generated)``
    (made once, so that the program queued at the session's start is the test's)."""
    compiled = sfclab.compile(PLACED_CHAIN, arch="tna")
    return compiled, generate(compiled)


def longest_first(programs: dict[str, object]) -> dict[str, object]:
    """*programs* ordered by their text's length, longest first: the compile time grows with
    it (minutes for every_nf.sfc, seconds for one NF), so with the longest started first the
    workers finish together instead of one compiling every_nf.sfc alone at the end."""
    return dict(sorted(programs.items(), key=lambda kv: -len(kv[1].program.text)))


@dataclass(frozen=True)
class Build:
    """One compile: the compiler's result, where it wrote, wall and CPU seconds."""

    result: object
    out: Path
    wall: float
    cpu: float


class TofinoBuilds:
    """Compiles TNA programs with the Tofino compiler, each distinct text once, *jobs* at a
    time."""

    def __init__(self, root: Path, exe: str, jobs: int = 2) -> None:
        self.root, self.exe = root, exe
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        self.futures: dict[str, concurrent.futures.Future] = {}
        self.lock = threading.Lock()

    def submit(self, generated) -> concurrent.futures.Future:
        text = generated.program.text
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        with self.lock:
            if key not in self.futures:
                out = self.root / key
                out.mkdir(parents=True, exist_ok=True)
                (out / "program.p4").write_text(text)
                self.futures[key] = self.pool.submit(self._build, out, generated)
            return self.futures[key]

    def _build(self, out: Path, generated) -> Build:
        before = os.times()
        t = time.perf_counter()
        res = run_p4c(out / "program.p4", "tna", out, generated.program.program, exe=self.exe,
                      timeout=1800)
        wall = time.perf_counter() - t
        after = os.times()     # children's CPU (threads share it: exact with one job)
        return Build(res, out, wall, (after.children_user - before.children_user)
                     + (after.children_system - before.children_system))

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


#: The tests that compile every NF program (test_tofino.py, test_tofino_stages.py).
_NF_TESTS = {"test_every_library_nf_alone_and_mid_chain_compiles_for_tofino",
             "test_each_library_nf_alone_spans_at_most_its_estimate",
             "test_placements_budget_holds_what_the_compiler_places"}


def programs_of(item) -> dict[str, object]:
    """The TNA programs a collected test compiles through the ``tofino_builds`` fixture
    (queued at the session's start, the longest first)."""
    name = getattr(item, "originalname", "")
    if name in _NF_TESTS:
        return swept_nf_programs()
    if name == "test_every_example_compiles_for_tofino":
        return swept_example_programs(item.callspec.params["path"])
    if name == "test_a_chain_placement_fits_in_one_ingress_pipelet_fits_a_tofino_pipe":
        return {"firewall => l3fwd placed": placed_chain()[1]}
    if name == "test_every_network_tofino_switch_compiles_for_tofino":
        network = item.callspec.params["network"]       # None: the full sweep's only
        return network_programs(*network) if network is not None else {}
    return {}


__all__ = ["NFS", "NF_PIPES", "PIPELINES", "EXAMPLE_FILES", "PIPES", "OTHER_PIPES", "NETWORKS",
           "CI_NETWORKS", "P4C_BAREFOOT", "FULL", "SWEEP", "FULL_COMMAND", "CI_NF_PROGRAMS", "CI_EXAMPLES", "TofinoBuilds",
           "Build", "nf_programs", "example_programs", "network_programs", "longest_first",
           "tofino_compiler", "needs_tofino_compiler", "alone", "mid_chain", "all_nf_programs",
           "swept_nf_programs", "swept_example_programs", "swept_examples", "swept_networks", "programs_of",
           "PLACED_CHAIN", "placed_chain"]
