"""A table's lookup index, updated entry by entry, is what a full rebuild makes."""

from __future__ import annotations

import random

from sfclab.targets.model.tables import ActionInfo, KeySpec, Table

ACTION = ActionInfo("a", "a", [], lambda p, args: None)

# (name, [(kind, width)]): every index shape — exact (one key, several), lpm (alone, with an
# exact key) and priority-ordered (ternary + range, optional + exact, two lpm keys)
SHAPES = [
    ("exact", [("exact", 4)]),
    ("exact2", [("exact", 3), ("exact", 2)]),
    ("lpm", [("lpm", 6)]),
    ("lpm_exact", [("exact", 2), ("lpm", 5)]),
    ("ternary_range", [("ternary", 4), ("range", 4)]),
    ("optional_exact", [("optional", 3), ("exact", 2)]),
    ("two_lpm", [("lpm", 3), ("lpm", 3)]),
]


def _table(name: str, kinds) -> Table:
    keys = [KeySpec(f"k{i}", kind, w, lambda p, i=i: p[i]) for i, (kind, w) in enumerate(kinds)]
    return Table(name, keys, {"a": ACTION}, (ACTION, ()), size=10_000)


def _match(rng: random.Random, kind: str, w: int):
    full = (1 << w) - 1
    if kind == "exact":
        return rng.randint(0, full)
    if kind == "lpm":
        plen = rng.randint(0, w)
        return (rng.randint(0, full) & (full ^ ((1 << (w - plen)) - 1)), plen)
    if kind == "ternary":
        mask = rng.randint(0, full)
        return (rng.randint(0, full) & mask, mask)
    if kind == "range":
        lo, hi = sorted((rng.randint(0, full), rng.randint(0, full)))
        return (lo, hi)
    return rng.choice([None, rng.randint(0, full)])      # optional


def _shape(t: Table):
    """The index with each entry by identity: dicts compare without order, lists with it."""
    if t.mode == "exact":
        return {k: id(e) for k, e in t.index.items()}
    if t.mode == "lpm":
        return [(li, mask, {k: id(e) for k, e in d.items()}) for li, mask, d in t.index]
    return [id(e) for e in t.index]


def test_the_incremental_index_is_a_full_rebuild():
    """Random inserts and deletes (and entries taken out and put back, as a rolled-back
    P4Runtime batch does) keep the index in place equal to a rebuild from the entries:
    the same keys and levels, priority tables highest priority first, ties by insertion
    order; lookups find the same entries."""
    for name, kinds in SHAPES:
        _check_random_updates(name, kinds)


def _check_random_updates(name: str, kinds) -> None:
    rng = random.Random(f"index-{name}")
    t = _table(name, kinds)
    index, lookup = t.index, t.lookup
    priority = t.mode == "priority"
    taken = []                       # entries removed with remove_entry, to be put back
    most = 0
    for step in range(400):
        where = f"{name}, step {step}"
        op = rng.random()
        if op < 0.55 or not t.entries:
            match = tuple(_match(rng, kind, w) for kind, w in kinds)
            prio = rng.randint(1, 4) if priority else None       # few: many ties
            if t.canonical(match, prio) not in t.entries:
                t.insert(match, "a", priority=prio)
        elif op < 0.8:
            e = rng.choice(list(t.entries.values()))
            assert t.delete(e.match, e.priority if priority else None) is e, where
        elif op < 0.9:
            e = rng.choice(list(t.entries.values()))
            t.remove_entry(e)
            taken.append(e)
        elif taken:
            e = taken.pop(rng.randrange(len(taken)))
            if (e.match, e.priority) not in t.entries:
                t.add_entry(e)
        most = max(most, len(t.entries))
        ref = _table(name, kinds)
        ref.entries = dict(t.entries)
        ref.reindex()
        assert _shape(t) == _shape(ref), where
        assert t.index is index and t.lookup is lookup, where      # updated in place
        if priority:                 # highest priority first, ties by insertion order
            assert all(a.priority > b.priority or (a.priority == b.priority and a.seq < b.seq)
                       for a, b in zip(t.index, t.index[1:])), where
        for _ in range(8):
            p = [rng.randint(0, (1 << w) - 1) for _, w in kinds]
            assert t.lookup(p) is ref.lookup(p), f"{where}, packet {p}"
    assert most >= 12, name               # the table did fill up
