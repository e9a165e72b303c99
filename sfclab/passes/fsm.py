"""FSM pass: the recirculation plan of every service path on the pipeline.

The data plane carries a *token* (FlexMesh §IV): the service path id, the state
id, a bitmap of the slots to run in this pass, and a loop counter.  Slot ``i``
of the pipeline is bit ``1 << i`` of the bitmap (slot 0 is the least
significant bit).  For each path this pass computes:

* ``states``: one :class:`PassState` per pass (state ids ``0, 1, …``), with the
  bitmap of slots that pass runs and the loop counter at its start;
* ``rewinder`` entries ``(path, state) → (next state, bitmap, counter)`` or
  *done* (with the terminal: output, drop or cpu);
* ``branches`` entries ``(path, state, outcome of the branching NF) → other
  path``: the initializer gives a chain's packets its first path; after an NF
  with branches the packet moves to the path of the outcome it took (the state
  and the slots already run are the same on both paths);
* ``initializer`` entries: chain → first path, state 0, bitmap, counter 0;
* ``saves``: where a branch tests the field of an NF *before* the branching
  one (FlexMesh Fig. 9's ``QoS => (output : Flood ? flood_flag == 0)`` tests
  l2fwd's flag after QoS set its colour), the NFs in between overwrite the
  metadata value the branch table would read; so each such NF keeps its value in
  a *saved metadata* field of the token (``saved_md<k>``, allocated per chain,
  only when a condition needs one), written by a save entry after every run of
  that NF, and the branch entry tests that field (:attr:`BranchEntry.saved`).
  The token carries it across recirculations and between switches;
* the token's bit widths, checked against the SFC header's.

Loops are unrolled on the service paths; the counter holds the loop rounds the
packet has completed (reset when it leaves the loop), so the rewinder sets it
for the next pass.

>>> from sfclab.ir.model import linear_chain
>>> plan = build_fsm(("l3fwd", "firewall", "nat"), linear_chain("r", ["l3fwd", "nat", "firewall"]).paths())
>>> [(s.state, bin(s.bitmap)) for s in plan.paths[0].states]
[(0, '0b101'), (1, '0b10')]
>>> [str(e) for e in plan.rewinder]
['(r/0 #1, state 0) -> state 1, bitmap 0b10, counter 0', '(r/0 #1, state 1) -> done: output']
>>> import sfclab
>>> edge = sfclab.parse("chain e { input => l2fwd => qos; "
...                     "qos => (output : flood ? l2fwd.flood_flag == 0); flood => output; }")
>>> plan = build_fsm(("l2fwd", "qos", "flood"), edge.paths())
>>> plan.saved, [str(e) for e in plan.saves]
((('e', ('l2fwd',)),), ['(e/0 #1, state 0, slot 0) after l2fwd -> saved_md0', '(e/1 #2, state 0, slot 0) after l2fwd -> saved_md0'])
>>> str(plan.branches[0])
'(e/0 #1, state 0, not (l2fwd.flood_flag == 0) -> e/1) -> e/1 #2, bitmap 0b111, tests saved_md0'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import ChainValidationError, CompileError
from ..ir.model import Chain, Condition, Decision, ServicePath
from .common import embed

__all__ = [
    "TokenWidths",
    "PassState",
    "PathFSM",
    "RewinderEntry",
    "BranchEntry",
    "InitEntry",
    "SaveEntry",
    "FSMPlan",
    "MAX_SAVED",
    "cond_source",
    "saved_nfs",
    "chain_saved_nfs",
    "build_fsm",
    "replay",
    "fsm_pass",
]

_BRANCH_KINDS = ("then", "else", "case")
#: Fields a condition names that are the loop counter, not an NF's metadata value.
_COUNTER_FIELDS = ("global_counter", "counter")
#: Saved metadata fields the SFC header may hold (32 bits each): a chain tests the
#: fields of at most this many NFs after other NFs ran.
MAX_SAVED = 8


def cond_source(cond: Condition) -> str:
    """What a branch condition reads from the token: ``"ingress_port"``, ``"counter"``
    (the loop counter) or ``"metadata"`` (the value of the NF it names).

    >>> cond_source(Condition("l2fwd.flood_flag", "==", 0))
    'metadata'
    """
    if cond.field == "std.ingress_port":
        return "ingress_port"
    return "counter" if cond.name in _COUNTER_FIELDS else "metadata"


def saved_nfs(conditions: Iterable[tuple[str, str, Condition | None]]) -> tuple[str, ...]:
    """The NF instances whose metadata a branch tests after another NF ran, in the
    order first met: *conditions* are ``(branching node, edge kind, condition)``.
    NF ``k`` of the result keeps its value in the token's ``saved_md<k>``.

    >>> saved_nfs([("qos", "then", Condition("l2fwd.flood_flag", "==", 0)),
    ...            ("qos", "else", Condition("l2fwd.flood_flag", "==", 0)),
    ...            ("firewall", "then", Condition("firewall.verdict", "==", 0))])
    ('l2fwd',)
    """
    out: list[str] = []
    for node, kind, cond in conditions:
        if kind in _BRANCH_KINDS and _tests_earlier(node, cond) and cond.nf not in out:
            out.append(cond.nf)
    return tuple(out)


def _tests_earlier(node: str, cond: Condition | None) -> bool:
    """Whether a branch at *node* on *cond* tests the metadata of another NF."""
    return (cond is not None and cond_source(cond) == "metadata" and bool(cond.nf)
            and cond.nf != node)


def chain_saved_nfs(chain: Chain) -> tuple[str, ...]:
    """:func:`saved_nfs` of a chain's graph: the same on every switch that runs a part
    of it (a network's parts share the chain's graph), so the index a save entry
    writes on one switch is the one a branch entry tests on the next."""
    return saved_nfs((u, d.get("kind", "seq"), d.get("cond"))
                     for u, _, d in chain.graph.edges(data=True))


@dataclass(frozen=True, slots=True)
class TokenWidths:
    """Bit widths of the token's fields."""

    path_id: int = 16
    state: int = 8
    bitmap: int = 32
    counter: int = 8


@dataclass(frozen=True, slots=True)
class PassState:
    """One pass of a path: the slots it runs (``bitmap``) and the NF instances."""

    state: int
    bitmap: int
    slots: tuple[int, ...]
    nodes: tuple[str, ...]
    counter: int = 0


@dataclass(frozen=True, slots=True)
class RewinderEntry:
    """``(path, state)`` at the end of the pipeline: go round again, or finish."""

    path: str
    path_num: int
    state: int
    next_state: int | None
    bitmap: int | None
    counter: int | None
    terminal: str | None

    @property
    def done(self) -> bool:
        return self.next_state is None

    def __str__(self) -> str:
        key = f"({self.path} #{self.path_num}, state {self.state})"
        if self.done:
            return f"{key} -> done: {self.terminal}"
        return f"{key} -> state {self.next_state}, bitmap {bin(self.bitmap or 0)}, counter {self.counter}"


@dataclass(frozen=True, slots=True)
class BranchEntry:
    """After ``node`` (in ``slot``, pass ``state``) of path ``path``: when the
    outcome is ``kind`` (``then``: ``cond`` holds, ``else``: it fails, ``case``:
    the field is one of ``cases``), continue as path ``target`` with ``bitmap``."""

    path: str
    path_num: int
    state: int
    slot: int
    node: str
    kind: str
    cond: Condition | None
    cases: tuple[int | str, ...]
    target: str
    target_num: int
    bitmap: int
    #: The token's saved metadata field the condition tests (its NF ran before
    #: ``node``), or None: the metadata value ``node`` left.
    saved: int | None = None

    def __str__(self) -> str:
        d = Decision(self.node, self.kind, self.target, self.cond, self.cases)
        return (f"({self.path} #{self.path_num}, state {self.state}, {d}) -> "
                f"{self.target} #{self.target_num}, bitmap {bin(self.bitmap)}"
                + (f", tests saved_md{self.saved}" if self.saved is not None else ""))


@dataclass(frozen=True, slots=True)
class SaveEntry:
    """After ``node`` (in ``slot``, pass ``state``) of path ``path``: keep its
    metadata value in the token's ``saved_md<index>``, which a later branch tests."""

    path: str
    path_num: int
    state: int
    slot: int
    node: str
    index: int

    def __str__(self) -> str:
        return (f"({self.path} #{self.path_num}, state {self.state}, slot {self.slot}) "
                f"after {self.node} -> saved_md{self.index}")


@dataclass(frozen=True, slots=True)
class InitEntry:
    """The initializer's token for a chain's packets."""

    chain: str
    path: str
    path_num: int
    bitmap: int
    state: int = 0
    counter: int = 0


@dataclass(frozen=True, slots=True)
class PathFSM:
    """The plan of one service path."""

    path: ServicePath
    num: int
    states: tuple[PassState, ...]
    placement: tuple[tuple[int, int], ...]   # (pass, slot) per node of the path
    #: (pass, slot, counter) after each loop decision: the loop counter's value once
    #: that run is done (the data plane sets it there, so later runs in the same
    #: pass see it; the rewinder carries it to the next pass).
    loop_counts: tuple[tuple[int, int, int], ...] = ()

    @property
    def passes(self) -> int:
        return len(self.states)

    @property
    def transitions(self) -> tuple[tuple[int, int], ...]:
        return tuple((s.state, s.state + 1) for s in self.states[:-1])


@dataclass(frozen=True, slots=True)
class FSMPlan:
    """Everything a code generator needs to drive packets over the pipeline."""

    slots: tuple[str, ...]
    paths: tuple[PathFSM, ...]
    initializer: tuple[InitEntry, ...]
    rewinder: tuple[RewinderEntry, ...]
    branches: tuple[BranchEntry, ...]
    widths: TokenWidths
    limits: TokenWidths
    saves: tuple[SaveEntry, ...] = ()
    #: Per chain, the NFs whose values it saves (NF ``k``: ``saved_md<k>``).
    saved: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def path(self, pid: str) -> PathFSM:
        return next(p for p in self.paths if p.path.id == pid)

    @property
    def n_saved(self) -> int:
        """Saved metadata fields the token needs (0: none, the header as it is)."""
        return max((len(nfs) for _, nfs in self.saved), default=0)


def _bits(n: int) -> int:
    return max(1, n.bit_length())


def _decision_positions(p: ServicePath) -> list[int]:
    """Index in ``p.nodes`` of the visit at which each decision is taken."""
    out, cur = [], 0
    for d in p.decisions:
        i = cur
        while i < len(p.nodes):
            nxt = p.nodes[i + 1] if i + 1 < len(p.nodes) else p.terminal
            if p.nodes[i] == d.node and nxt == d.to:
                break
            i += 1
        if i == len(p.nodes):      # not found in order: the last visit of the node
            i = max((k for k, n in enumerate(p.nodes) if n == d.node), default=0)
        out.append(i)
        cur = i + 1
    return out


def _plan_path(p: ServicePath, num: int, slots: Sequence[str],
               walker: Callable[[ServicePath], tuple[list[tuple[int, int]], int]] | None = None
               ) -> tuple[PathFSM, list[int]]:
    placed, n_states = walker(p) if walker is not None else (embed(slots, p.nfs), 0)
    where = _decision_positions(p)
    counter_after = []
    c = 0
    loop_at = {i: d.kind for d, i in zip(p.decisions, where)}
    for i in range(len(p.nodes)):
        if loop_at.get(i) == "loop":
            c += 1
        elif loop_at.get(i) == "exit":
            c = 0
        counter_after.append(c)
    n_passes = max(n_states, placed[-1][0] + 1 if placed else 1)
    states = []
    for s in range(n_passes):
        idx = [i for i, (ps, _) in enumerate(placed) if ps == s]
        sl = tuple(placed[i][1] for i in idx)
        before = idx[0] if idx else sum(1 for ps, _ in placed if ps < s)
        start = counter_after[before - 1] if before > 0 else 0
        states.append(PassState(s, sum(1 << k for k in sl), sl,
                                tuple(p.nodes[i] for i in idx), start))
    loops = tuple((*placed[i], counter_after[i]) for i, kind in sorted(loop_at.items())
                  if kind in ("loop", "exit") and i < len(placed))
    return PathFSM(p, num, tuple(states), tuple(placed), loops), where


def build_fsm(slots: Sequence[str], paths: Sequence[ServicePath], *,
              limits: TokenWidths = TokenWidths(),
              saved: Mapping[str, tuple[str, ...]] | None = None,
              walker: Callable[[ServicePath], tuple[list[tuple[int, int]], int]] | None = None
              ) -> FSMPlan:
    """The FSM plan of *paths* on the pipeline *slots* (path numbers from 1).

    *saved* gives each chain's saved NFs (:func:`chain_saved_nfs`); by default
    they come from the paths' decisions.  *walker* places a path's NFs instead of
    :func:`~sfclab.passes.common.embed`: ``(state, slot)`` per node and how many
    states the path has (a pipelet visit of a multi-pipe switch is a state:
    :mod:`sfclab.passes.pipelets`)."""
    slots = tuple(slots)
    if saved is None:
        saved = {c: saved_nfs((d.node, d.kind, d.cond) for p in paths if p.chain == c
                              for d in p.decisions) for c in dict.fromkeys(p.chain for p in paths)}
    saved = {c: nfs for c, nfs in saved.items() if nfs}
    plans: list[PathFSM] = []
    wheres: list[list[int]] = []
    for num, p in enumerate(paths, 1):
        plan, where = _plan_path(p, num, slots, walker)
        plans.append(plan)
        wheres.append(where)

    rewinder = []
    for f in plans:
        for s in f.states[:-1]:
            nxt = f.states[s.state + 1]
            rewinder.append(RewinderEntry(f.path.id, f.num, s.state, nxt.state, nxt.bitmap,
                                          nxt.counter, None))
        rewinder.append(RewinderEntry(f.path.id, f.num, f.states[-1].state, None, None, None,
                                      f.path.terminal))

    # first path per (chain, decisions so far, outcome)
    first: dict[tuple, int] = {}
    for k, f in enumerate(plans):
        dec = f.path.decisions
        for j in range(len(dec)):
            first.setdefault((f.path.chain, dec[:j], _outcome(dec[j])), k)
    branches = []
    for f, where in zip(plans, wheres):
        dec = f.path.decisions
        for j, d in enumerate(dec):
            if d.kind not in _BRANCH_KINDS:
                continue
            alts = {o: k for (ch, pre, o), k in first.items()
                    if ch == f.path.chain and pre == dec[:j] and o != _outcome(d)}
            i = where[j]
            pas, slot = f.placement[i]
            for o, k in sorted(alts.items(), key=lambda e: e[1]):
                g = plans[k]
                if g.placement[: i + 1] != f.placement[: i + 1]:
                    raise CompileError(f"paths {f.path.id} and {g.path.id} differ before their "
                                       f"branch at {d.node!r}", hint="report this as a bug")
                od = g.path.decisions[j]
                mine = saved.get(f.path.chain, ())
                index = mine.index(od.cond.nf) if _tests_earlier(d.node, od.cond) \
                    and od.cond.nf in mine else None
                branches.append(BranchEntry(f.path.id, f.num, pas, slot, d.node, od.kind,
                                            od.cond, od.cases, g.path.id, g.num,
                                            g.states[pas].bitmap, index))

    init, seen = [], set()
    for f in plans:
        if f.path.chain not in seen:
            seen.add(f.path.chain)
            init.append(InitEntry(f.path.chain, f.path.id, f.num, f.states[0].bitmap))

    widths = TokenWidths(
        path_id=_bits(len(plans)),
        state=_bits(max((f.passes - 1 for f in plans), default=0)),
        bitmap=max(1, len(slots)),
        counter=_bits(max((s.counter for f in plans for s in f.states), default=0)
                      if plans else 0),
    )
    _check(widths, limits, plans)
    return FSMPlan(slots, tuple(plans), tuple(init), tuple(rewinder), tuple(branches),
                   widths, limits, _saves(plans, saved), tuple(saved.items()))


def _saves(plans: Sequence[PathFSM], saved: Mapping[str, tuple[str, ...]]) -> tuple[SaveEntry, ...]:
    """A save entry after every run of a saved NF, on every path of its chain (the
    packet may still be on any path that agrees with it so far)."""
    out = []
    for f in plans:
        mine = saved.get(f.path.chain, ())
        for node, (pas, slot) in zip(f.path.nodes, f.placement):
            if node in mine:
                out.append(SaveEntry(f.path.id, f.num, pas, slot, node, mine.index(node)))
    return tuple(out)


def _outcome(d: Decision) -> tuple:
    return (d.node, d.kind, d.to, d.cases)


def _check(need: TokenWidths, have: TokenWidths, plans: list[PathFSM]) -> None:
    facts = {
        "path_id": (f"{len(plans)} service paths", "merge or split chains"),
        "state": ("a path needs up to "
                  f"{max((f.passes for f in plans), default=1)} passes", "reorder the pipeline"),
        "bitmap": (f"the pipeline has {need.bitmap} slots", "use pipeline='optimal' (fewer slots)"),
        "counter": ("a loop runs too many rounds", "lower the loop bound"),
    }
    for name in ("path_id", "state", "bitmap", "counter"):
        n, h = getattr(need, name), getattr(have, name)
        if n > h:
            fact, fix = facts[name]
            raise CompileError(
                f"the token's {name} field needs {n} bits but the SFC header has {h}: {fact}",
                hint=fix + ("" if h == getattr(TokenWidths(), name) else
                            f", or allow more bits (widths={name}={n}, at most "
                            f"{getattr(TokenWidths(), name)})"))


def replay(plan: FSMPlan, path: str) -> tuple[list[str], str]:
    """Simulate a packet that ends up on service path *path*: the NF types it runs
    and the terminal it leaves through.

    The packet starts with its chain's initializer token; each pass runs, in slot
    order, the slots whose bit is set; after a slot with branch entries it takes
    the outcome of *path* (the entry whose target agrees with *path* on more
    decisions); the rewinder ends each pass.
    """
    want = plan.path(path).path.decisions

    def agree(f: PathFSM) -> int:
        n = 0
        for a, b in zip(f.path.decisions, want):
            if a != b:
                break
            n += 1
        return n

    chain = plan.path(path).path.chain
    init = next(e for e in plan.initializer if e.chain == chain)
    by_num = {f.num: f for f in plan.paths}
    at: dict[tuple[int, int, int], list[BranchEntry]] = {}
    for e in plan.branches:
        at.setdefault((e.path_num, e.state, e.slot), []).append(e)
    rew = {(e.path_num, e.state): e for e in plan.rewinder}
    f, state, bitmap, out = by_num[init.path_num], init.state, init.bitmap, []
    for _ in range(1 + sum(p.passes for p in plan.paths)):
        for slot, nf in enumerate(plan.slots):
            if not bitmap >> slot & 1:
                continue
            out.append(nf)
            cands = at.get((f.num, state, slot), [])
            best = max(cands, key=lambda e: agree(by_num[e.target_num]), default=None)
            if best is not None and agree(by_num[best.target_num]) > agree(f):
                f, bitmap = by_num[best.target_num], best.bitmap
        e = rew[f.num, state]
        if e.done:
            return out, e.terminal or ""
        state, bitmap = e.next_state or 0, e.bitmap or 0
    raise CompileError(f"replay of {path} does not terminate", hint="report this as a bug")


def _check_saved(chains: Iterable[Chain], saved: Mapping[str, tuple[str, ...]]) -> None:
    """At most :data:`MAX_SAVED` saved NFs per chain; else an error at the condition
    that needs one more."""
    for chain in chains:
        if len(saved.get(chain.name, ())) <= MAX_SAVED:
            continue
        extra = saved[chain.name][MAX_SAVED]
        where = next(d for _, _, d in chain.graph.edges(data=True)
                     if d.get("cond") is not None and d["cond"].nf == extra)
        raise ChainValidationError(
            f"chain {chain.name!r} tests the fields of {len(saved[chain.name])} NFs after "
            f"other NFs ran; the SFC header saves the values of {MAX_SAVED} at most",
            line=where.get("line") or chain.line, column=where.get("column") or chain.column,
            source=chain.source,
            hint=f"branch right after the NF whose field is tested ({extra} => (… ? "
                 f"{where['cond']}))")


def fsm_pass(state, *, options):
    """Driver entry: adds ``fsm`` (:class:`FSMPlan`) for the chosen pipeline."""
    saved = {c.name: chain_saved_nfs(c) for c in state.chains}
    _check_saved(state.chains, saved)
    plan = build_fsm(state.pipeline.slots, state.paths, limits=options.widths, saved=saved)
    return dataclasses.replace(state, fsm=plan)
