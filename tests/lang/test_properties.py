"""Property tests: random chains survive format -> parse; random input raises only ChainError."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sfclab
from sfclab.errors import ChainError
from sfclab.p4.catalog import load_default

NF_NAMES = sorted(i.name for i in load_default())
FIXTURES = Path(__file__).parent.parent / "fixtures" / "lang"
SEEDS = [p.read_text() for p in sorted(FIXTURES.glob("*.sfc"))]
INTENT = json.dumps({"name": "web", "NFs": [{"name": "fw1", "type": "Firewall", "location": "s1"}],
                     "Links": [["input", "fw1"], ["fw1", "output"]],
                     "Route": {"match": "tcp.dport == 80", "weight": 0.5, "from": "h1"}})


@st.composite
def chain_text(draw, name: str) -> str:
    """A random well-formed FlexMesh-style chain over the built-in NFs."""
    k = draw(st.integers(1, 7))
    types = draw(st.lists(st.sampled_from(NF_NAMES), min_size=k, max_size=k))
    nodes, seen = [], {}
    for t in types:
        seen[t] = seen.get(t, 0) + 1
        nodes.append(t if seen[t] == 1 else f"{t}#{seen[t]}")
    ends = ["output", "drop", "cpu"]
    stmts = [f"input => {nodes[0]};"]
    for i, n in enumerate(nodes):
        nxt = nodes[i + 1] if i + 1 < len(nodes) else "output"
        later = nodes[i + 2:] + ends
        info = load_default().resolve(n.split("#")[0])
        kind = draw(st.sampled_from(["seq", "seq", "ifelse", "multi", "loop"]))
        if kind == "ifelse":
            other = draw(st.sampled_from([x for x in later if x != nxt] or ["drop"]))
            f = draw(st.sampled_from([x for x in info.field_names() if x != "global_counter"]))
            w = info.field_width(f)
            op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
            val = draw(st.integers(0, (1 << w) - 1))
            a, b = (nxt, other) if draw(st.booleans()) else (other, nxt)
            stmts.append(f"{n} => ({a} : {b} ? {n}.{f} {op} {val});")
        elif kind == "multi":
            targets = [nxt] + draw(st.lists(st.sampled_from(later), max_size=3))
            vals = draw(st.lists(st.integers(0, 255), min_size=len(targets),
                                 max_size=len(targets), unique=True))
            body = " : ".join(f"{v}@{t}" for v, t in zip(vals, targets))
            stmts.append(f"{n} => ({body} # {n}.global_metadata);")
        elif kind == "loop":
            bound = draw(st.integers(2, 6))
            stmts.append(f"{n} => (self : {nxt} ? {n}.global_counter < {bound});")
        else:
            stmts.append(f"{n} => {nxt};")
    head = f"chain {name}"
    if draw(st.booleans()):
        port = draw(st.integers(0, 65535))
        head += f" match tcp.dport == {port} && ipv4.dst == 10.{draw(st.integers(0, 255))}.0.0/16"
    if draw(st.booleans()):
        head += f" weight {draw(st.sampled_from([0.1, 0.25, 0.3]))}"
    ends = st.sampled_from(["h1", "h9", "srv_2", "s1:3", "s4:7", '"leaf-1"', '"spine.2:12"'])
    clauses = [f" from {draw(ends)}"] if draw(st.booleans()) else []
    clauses += [f" to {draw(ends)}"] if draw(st.booleans()) else []
    head += "".join(draw(st.permutations(clauses)))
    return head + " {\n    " + "\n    ".join(stmts) + "\n}"


@st.composite
def chain_sets(draw) -> str:
    n = draw(st.integers(1, 3))
    return "\n".join(draw(chain_text(f"c{i}")) for i in range(n))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain_sets())
def test_format_then_parse_gives_an_equal_ir(text: str):
    chains = sfclab.parse(text)
    again = sfclab.parse(sfclab.format(chains))
    assert again == chains
    assert [str(p) for p in again.paths()] == [str(p) for p in chains.paths()]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_chain_errors(data: bytes):
    try:
        sfclab.parse(data)
    except ChainError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"chain {}()=>:;?@#.&!<>-0123456789abfx\n\"/,",
                                  "chain", "=>", "self", "before", "then", "or", "match", "weight",
                                  "End_of_Request", "loop", "nat", "firewall", " ", "from", "to",
                                  "s1:3", "h1"]),
                max_size=40).map("".join))
def test_chain_like_noise_raises_only_chain_errors(text: str):
    try:
        sfclab.parse(text)
    except ChainError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SEEDS), st.data())
def test_mutated_fixtures_raise_only_chain_errors(seed: str, data):
    i = data.draw(st.integers(0, len(seed)))
    j = data.draw(st.integers(i, min(len(seed), i + 12)))
    insert = data.draw(st.text(max_size=6))
    try:
        sfclab.parse(seed[:i] + insert + seed[j:])
    except ChainError:
        pass


def _both(text: str):
    from sfclab.lang.fastparse import fast_parse
    from sfclab.lang.parser import fast_literals, parse_decls, strip_comments

    return fast_parse(strip_comments(text), fast_literals()), parse_decls(text, fast=False)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain_sets())
def test_fast_path_reads_chains_exactly_as_lark_does(text: str):
    fast, slow = _both(text)
    assert fast is not None, "well-formed FlexMesh text takes the fast path"
    assert fast == slow


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SEEDS), st.data())
def test_fast_path_never_disagrees_with_lark(seed: str, data):
    i = data.draw(st.integers(0, len(seed)))
    j = data.draw(st.integers(i, min(len(seed), i + 8)))
    text = seed[:i] + data.draw(st.text(alphabet="ab1:.@#=>()\"; ", max_size=5)
                                | st.sampled_from([" from h1", " to s1:3", " from", "to "])) + seed[j:]
    try:
        fast, slow = _both(text)
    except ChainError as e:
        from sfclab.lang.fastparse import fast_parse
        from sfclab.lang.parser import fast_literals, parse_decls, strip_comments

        if fast_parse(strip_comments(text), fast_literals()) is None:
            return
        # read by both paths, refused by the check after reading that both share (two
        # statements on one line without ';'): the fast path refuses it the same way
        with pytest.raises(ChainError) as fast_error:
            parse_decls(text, fast=True)
        assert str(fast_error.value) == str(e), "the fast path accepted bad text"
        return
    assert fast is None or fast == slow


# Numbers longer than Python converts (4,300 digits) and JSON of the wrong shape: a whole
# class of input that used to reach a Python traceback (issue 19.8).
MAX_DIGITS = 4300                # Python converts no longer decimal string to an int
HUGE = st.integers(MAX_DIGITS + 1, MAX_DIGITS + 400).map(lambda n: "9" * n) \
    | st.integers(MAX_DIGITS // 4 + 1, MAX_DIGITS).map(lambda n: "1_234" * n)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS + [INTENT]), st.data())
def test_a_huge_number_anywhere_is_a_located_chain_error(seed: str, data):
    runs = [m.span() for m in re.finditer(r"\d+", seed)]
    i, j = data.draw(st.sampled_from(runs)) if runs and data.draw(st.booleans()) else \
        (k := data.draw(st.integers(0, len(seed))), k)
    text = seed[:i] + data.draw(HUGE) + seed[j:]
    with pytest.raises(ChainError) as e:
        sfclab.parse(text)
    assert e.value.line >= 1 and "digits" in e.value.message


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8) | st.sampled_from(["fw1", "nat1", "input", "output"]),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["name", "type", "from", "to", "match",
                                                       "weight", "location"]), inner, max_size=3),
                    max_leaves=8)


@st.composite
def intents(draw) -> str:
    """A P4SFC intent whose NFs, Links, Route (and their parts) may have any JSON shape."""
    nfs = draw(st.just([{"name": "fw1", "type": "Firewall", "location": "s1"},
                        {"name": "nat1", "type": "NAT", "location": "s1"}]) | JSON)
    links = draw(st.lists(st.sampled_from([["fw1", "nat1"], ["input", "fw1"], ["nat1", "output"],
                                           {"from": "fw1", "to": "nat1"}]) | JSON, max_size=3)
                 | JSON)
    route = draw(st.just({"match": "tcp.dport == 80", "weight": 0.5}) | JSON)
    doc = {"name": draw(st.sampled_from(["c", "web"]) | JSON), "NFs": nfs, "Links": links,
           "Route": route}
    return json.dumps(doc if draw(st.booleans()) else [doc])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(intents())
def test_json_intents_of_any_shape_raise_only_chain_errors(text: str):
    try:
        sfclab.parse(text)
    except ChainError as e:
        assert e.line >= 1 and str(e)
