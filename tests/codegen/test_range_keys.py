"""Tofino range-matches keys of at most 20 bits (issue 24): on TNA the composed program
matches a wider range key (the 32-bit NF value a branch tests, a saved value, a wide
classifier field) as ternary, and each range entry becomes the value/mask entries that
cover it, so the table picks what the range entry picked; v1model keeps its range keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.entries import Exact, Range, Ternary, canonical, p4info_fields, range_to_ternary
from sfclab.codegen.p4info import build_p4info
from sfclab.errors import CompileError
from sfclab.lang import parse_file
from sfclab.p4 import ast as A
from sfclab.runtime.encode import P4InfoIndex

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: The examples whose chains branch on an NF's value (their branch tables key on it).
BRANCHING = ("web.sfc", "p4sc_table3.sfc", "p4sfc_mixed.sfc", "flexmesh_fig9.sfc")
BINDINGS = {"flexmesh_fig9.sfc": {"p1": 1, "p2": 2, "p3": 3}}


def _hits(t: Ternary, v: int) -> bool:
    return v & t.mask == t.value


@st.composite
def _ranges(draw):
    w = draw(st.integers(1, 32))
    a, b = sorted(draw(st.lists(st.integers(0, (1 << w) - 1), min_size=2, max_size=2)))
    return w, a, b


@given(_ranges(), st.data())
def test_the_prefixes_of_a_range_match_exactly_its_values_once_each(r, data):
    w, lo, hi = r
    ts = range_to_ternary(lo, hi, w)
    top = (1 << w) - 1
    assert 1 <= len(ts) <= max(1, 2 * w - 2)
    assert all(t.value & ~t.mask == 0 and t.mask <= top for t in ts)
    probes = {lo, hi, lo - 1, hi + 1, data.draw(st.integers(lo, hi)),
              data.draw(st.integers(0, top))}
    for v in probes:
        if 0 <= v <= top:
            assert sum(_hits(t, v) for t in ts) == (1 if lo <= v <= hi else 0), v


def test_range_to_ternary_small_widths_exhaustively():
    for w in range(1, 7):
        for lo in range(1 << w):
            for hi in range(lo, 1 << w):
                ts = range_to_ternary(lo, hi, w)
                assert len(ts) <= max(1, 2 * w - 2)
                assert [sum(_hits(t, v) for t in ts) for v in range(1 << w)] == \
                    [int(lo <= v <= hi) for v in range(1 << w)]
    assert len(range_to_ternary(1, (1 << 32) - 2, 32)) == 62        # the worst case, 2W - 2


def test_a_bad_range_is_refused():
    with pytest.raises(CompileError, match="not within 0..255"):
        range_to_ternary(5, 256, 8)
    with pytest.raises(CompileError):
        range_to_ternary(6, 5, 8)


def _generate(name: str, arch: str):
    return generate(sfclab.compile(parse_file(EXAMPLES / name), arch=arch),
                    options=CodegenOptions(bindings=BINDINGS.get(name, {})))


def _key_kinds(gen) -> dict[str, set[tuple[str, int]]]:
    """Each control-table key field's kinds and widths, over every table that has it."""
    fields = p4info_fields(build_p4info(gen.program.program, arch=gen.arch))
    out: dict[str, set[tuple[str, int]]] = {}
    for t, fs in fields.items():
        if t.endswith(("_branch", ".initializer")):
            for f, kw in fs.items():
                out.setdefault(f, set()).add(kw)
    return out


@pytest.mark.parametrize("name", BRANCHING)
def test_tna_range_keys_are_at_most_20_bits_and_v1model_keeps_its_ranges(name):
    tna, v1 = _generate(name, "tna"), _generate(name, "v1model")
    kinds = _key_kinds(tna)
    assert all(w <= 20 for ks in kinds.values() for k, w in ks if k == "range")
    v1_kinds = _key_kinds(v1)
    wide = {f for f, ks in v1_kinds.items() for k, w in ks if k == "range" and w > 20}
    assert "meta.sfc.metadata" in wide, "v1model range-matches the NF value"
    assert {f: kinds[f] for f in wide} == {f: {("ternary", w) for _, w in v1_kinds[f]}
                                           for f in wide}
    # the entries are in the P4Info's forms (canonical() refuses a range on a ternary field),
    # and the runtime encodes each as a P4Runtime update against it
    info = build_p4info(tna.program.program, arch="tna")
    fields, index = p4info_fields(info), P4InfoIndex(info)
    for e in tna.entries:
        canonical(e, fields[e.table])
        index.update("INSERT", e)


def _matches(e, values: dict[str, int]) -> bool:
    for name, m in e.match:
        v = values.get(name, 0)
        if isinstance(m, Exact) and v != m.value or isinstance(m, Ternary) and not _hits(m, v) \
                or isinstance(m, Range) and not m.low <= v <= m.high:
            return False
    return True


def _picks(gen, values_of) -> dict:
    """What the initializer and branch entries pick, per (table kind, NF of the slot,
    source path) and sampled value of the ranged keys: (action, target path, priority)."""
    comp = gen.composition
    nf_of = {s.branch_table: s.nf for s in comp.slots}
    pid_key = comp.token_keys[0]
    out: dict = {}
    for e in gen.entries:
        short = e.table.rsplit(".", 1)[1]
        if short != "initializer" and not short.endswith("_branch"):
            continue
        exact = dict((k, m.value) for k, m in e.match if isinstance(m, Exact))
        where = ("init", None, None) if short == "initializer" else \
            ("branch", nf_of[short], exact.get(pid_key))
        for key, vals in values_of.items():
            for v in vals:
                values = {**exact, key: v}
                if _matches(e, values):
                    pick = (e.action.rsplit(".", 1)[1], dict(e.params)["path_id"], e.priority or 0)
                    out.setdefault((where, key, v, tuple(sorted(exact.items()))
                                    if where[0] == "init" else ()), set()).add(pick)
    return out


@pytest.mark.parametrize("name", BRANCHING)
def test_tna_branch_and_initializer_entries_pick_what_v1models_pick(name):
    """For every value at and around each range's ends, the TNA entries that match give the
    same outcomes (action, target path, priority) as the v1model ones, per NF and path (the
    slots and states differ: on TNA a state is a pipelet visit)."""
    tna, v1 = _generate(name, "tna"), _generate(name, "v1model")
    rename = {"hdr.sfc.path_id": "meta.sfc.path_id"}
    values: dict[str, set[int]] = {}
    for e in v1.entries:
        for k, m in e.match:
            if isinstance(m, Range):
                values.setdefault(rename.get(k, k), set()).update(
                    x for x in (m.low - 1, m.low, m.high, m.high + 1, 0) if 0 <= x < 2**32)
    v1_picks = _picks(v1, values)
    tna_picks = _picks(tna, values)
    assert values and v1_picks == tna_picks
