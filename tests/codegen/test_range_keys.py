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


def _key_kinds(gen) -> dict[tuple[str, str], tuple[str, int]]:
    fields = p4info_fields(build_p4info(gen.program.program, arch=gen.arch))
    return {(t.removeprefix("pipe."), f): kw for t, fs in fields.items() for f, kw in fs.items()}


@pytest.mark.parametrize("name", BRANCHING)
def test_tna_range_keys_are_at_most_20_bits_and_v1model_keeps_its_ranges(name):
    tna, v1 = _generate(name, "tna"), _generate(name, "v1model")
    kinds = _key_kinds(tna)
    assert all(w <= 20 for k, w in kinds.values() if k == "range")
    v1_kinds = _key_kinds(v1)
    wide = {f for f, (k, w) in v1_kinds.items() if k == "range" and w > 20}
    assert any(f == "meta.sfc.metadata" for _, f in wide), "v1model range-matches the NF value"
    assert {f: kinds[f] for f in wide} == {f: ("ternary", v1_kinds[f][1]) for f in wide}
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


@pytest.mark.parametrize("name", BRANCHING)
def test_tna_branch_and_initializer_entries_pick_what_v1models_pick(name):
    """For every value at and around each range's ends, the TNA entries that match give the
    same outcomes (action, parameters, priority) as the v1model ones."""
    tna, v1 = _generate(name, "tna"), _generate(name, "v1model")
    for table in {e.table for e in v1.entries
                  if e.table.endswith(("_branch", ".initializer"))}:
        mine = [e for e in v1.entries if e.table == table]
        theirs = [e for e in tna.entries if e.table == "pipe." + table]
        ranged = {(k, m) for e in mine for k, m in e.match if isinstance(m, Range)}
        assert ranged or len(mine) == len(theirs)
        exact = {tuple((k, m.value) for k, m in e.match if isinstance(m, Exact)) for e in mine}
        for fixed in exact:
            for key, r in ranged:
                for v in {x for x in (r.low - 1, r.low, r.high, r.high + 1, 0) if 0 <= x < 2**32}:
                    values = {**dict(fixed), key: v}

                    def outcome(es):
                        return sorted((e.action, e.params, e.priority or 0) for e in es
                                      if _matches(e, values))

                    assert outcome(mine) == outcome(theirs), (table, values)


def test_a_wide_classifier_range_is_written_as_prefixes_on_tna():
    text = "chain a match ipv4.src != 10.0.0.1 && tcp.dport == 80: firewall"
    tna = generate(sfclab.compile(text, arch="tna"))
    v1 = generate(sfclab.compile(text))
    init = [e for e in tna.entries if e.table.endswith("initializer")]
    assert [m for e in v1.entries if e.table.endswith("initializer") for _, m in e.match
            if isinstance(m, Range)] == [Range(0, 0x0A000000), Range(0x0A000002, 2**32 - 1)]
    src = [dict(e.match)["hdr.ipv4.src_addr"] for e in init]
    assert all(isinstance(m, Ternary) for m in src) and len(src) == 32
    for v in (0, 0x0A000000, 0x0A000001, 0x0A000002, 2**32 - 1):
        assert sum(_hits(m, v) for m in src) == (v != 0x0A000001)
    (table,) = [t for t in A.walk(tna.program.program)
                if isinstance(t, A.TableDecl) and t.name == "initializer"]
    assert [k.match_kind for k in table.keys if getattr(k.expr, "name", "") == "src_addr"] \
        == ["ternary"]
    # the table has room for the expanded entries (four times)
    assert tna.composition.sizes()["initializer"] >= 4 * len(init)
