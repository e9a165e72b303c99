"""Minimal acyclic finite-state automata (MA-FSA), built incrementally.

Daciuk, Mihov, Watson and Watson's algorithm for sorted input: words are added
in lexicographic order; after each word, the states of the previous word that
are no longer on the common prefix are replaced by an equivalent registered
state (same finality, same outgoing transitions) or registered themselves.
The result is the minimal deterministic automaton accepting exactly the words.

FlexMesh §V builds this automaton over the chains' NF sequences: a minimal DAG
of NFs in which every chain can be found.

>>> a = build_mafsa([("l3fwd", "firewall", "nat"), ("l3fwd", "nat", "firewall")])
>>> a.n_states, len(a.transitions)
(5, 5)
>>> a.accepts(("l3fwd", "nat", "firewall")), a.accepts(("nat",))
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Automaton", "build_mafsa"]


class _State:
    __slots__ = ("edges", "final", "num")

    def __init__(self) -> None:
        self.edges: dict[Hashable, _State] = {}
        self.final = False
        self.num = -1

    def signature(self) -> tuple:
        return (self.final, tuple(sorted(((k, c.num) for k, c in self.edges.items()),
                                         key=lambda e: (str(e[0]), e[1]))))


@dataclass(frozen=True, slots=True)
class Automaton:
    """A DFA as plain data: states ``0..n_states-1``, ``start`` state 0."""

    n_states: int
    finals: frozenset[int]
    transitions: tuple[tuple[int, str, int], ...]

    start: int = 0

    def accepts(self, word: Sequence[str]) -> bool:
        delta = {(s, a): t for s, a, t in self.transitions}
        state = self.start
        for a in word:
            if (state, a) not in delta:
                return False
            state = delta[state, a]
        return state in self.finals


def build_mafsa(words: Iterable[Sequence[str]],
                rank: Callable[[str], Hashable] | None = None) -> Automaton:
    """The minimal acyclic automaton of *words*; *rank* orders the alphabet
    (words are sorted with it before the incremental construction)."""
    key = rank or (lambda a: a)
    ordered = sorted({tuple(w) for w in words}, key=lambda w: tuple(key(a) for a in w))
    root = _State()
    register: dict[tuple, _State] = {}
    unchecked: list[tuple[_State, str, _State]] = []
    counter = [1]

    def minimize(down_to: int) -> None:
        while len(unchecked) > down_to:
            parent, label, child = unchecked.pop()
            sig = child.signature()
            same = register.get(sig)
            if same is not None:
                parent.edges[label] = same
            else:
                child.num = counter[0]
                counter[0] += 1
                register[sig] = child

    prev: tuple[str, ...] = ()
    for word in ordered:
        common = 0
        while common < min(len(word), len(prev)) and word[common] == prev[common]:
            common += 1
        minimize(common)
        node = unchecked[-1][2] if unchecked else root
        for a in word[common:]:
            child = _State()
            node.edges[a] = child
            unchecked.append((node, a, child))
            node = child
        node.final = True
        prev = word
    minimize(0)
    root.num = 0

    finals: set[int] = set()
    trans: list[tuple[int, str, int]] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        s = stack.pop()
        if s.num in seen:
            continue
        seen.add(s.num)
        if s.final:
            finals.add(s.num)
        for a, c in s.edges.items():
            trans.append((s.num, a, c.num))
            stack.append(c)
    # Renumber densely (registered states may have been discarded).
    nums = sorted(seen)
    dense = {n: i for i, n in enumerate(nums)}
    return Automaton(
        n_states=len(nums),
        finals=frozenset(dense[f] for f in finals),
        transitions=tuple(sorted((dense[s], a, dense[t]) for s, a, t in trans)),
    )
