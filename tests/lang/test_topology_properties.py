"""Property tests: random topologies survive format -> parse; random input raises only TopologyError."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfclab.errors import TopologyError
from sfclab.ir.topology import Topology
from sfclab.lang import format_topology, parse_topology
from sfclab.p4.catalog import load_default

NF_NAMES = sorted(i.name for i in load_default())
ROOT = Path(__file__).parent.parent.parent
SEEDS = [text for p in sorted((ROOT / "tests" / "fixtures" / "lang" / "topo").glob("*.topo"))
         + sorted((ROOT / "examples").glob("*.topo"))
         if "fat_tree(8" not in (text := p.read_text())]    # big: slow to mutate 300 times
NAMES = ["s1", "s2", "leaf1", "spine_2", "leaf-1", "core.a", "host", "link", "_x", "h1", "h2",
         "web", "db-1", "srv1", "srv.2", "n9"]
amounts = st.floats(min_value=0, max_value=1e4, allow_nan=False, allow_infinity=False)


@st.composite
def topologies(draw) -> Topology:
    """A random topology built through the Python API (what any front end may produce)."""
    names = draw(st.permutations(NAMES))
    n_sw, n_host, n_srv = draw(st.integers(1, 5)), draw(st.integers(0, 4)), draw(st.integers(0, 2))
    t = Topology(name=draw(st.sampled_from(["net", "campus", "lab-3", "use"])))
    for name in names[:n_sw]:
        t.add_switch(name, arch=draw(st.sampled_from(["v1model", "tna"])),
                     pipes=draw(st.integers(1, 4)), stages=draw(st.integers(1, 20)),
                     tables=draw(st.integers(1, 128)), ports=draw(st.integers(2, 12)))
    for name in names[n_sw:n_sw + n_host]:
        try:
            t.add_host(name, ipv4=draw(st.none() | st.integers(0, 2**32 - 1)),
                       mac=draw(st.none() | st.integers(0, 2**48 - 1)))
        except TopologyError:              # an address drawn twice
            pass
    for name in names[n_sw + n_host:n_sw + n_host + n_srv]:
        t.add_server(name, nfs=draw(st.lists(st.sampled_from(NF_NAMES), unique=True, max_size=3)))
    nodes = list(t)
    for _ in range(draw(st.integers(0, 10))):
        a, b = draw(st.sampled_from(nodes)), draw(st.sampled_from(nodes))
        try:
            t.add_link(a, b, a_port=draw(st.none() | st.integers(0, 12)),
                       b_port=draw(st.none() | st.integers(0, 12)),
                       latency_ms=draw(st.just(0.0) | amounts),
                       bandwidth_gbps=draw(st.none() | amounts.filter(lambda x: x > 0)))
        except TopologyError:              # a port taken, a pair linked twice, host to host …
            pass
    return t


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topologies())
def test_format_then_parse_gives_an_equal_topology(topo: Topology):
    text = format_topology(topo)
    again = parse_topology(text)
    assert again.signature() == topo.signature()
    assert format_topology(again) == text


VOCABULARY = ["topology", "switch", "host", "server", "link", "use", "--", "-", ",", ";", "\n",
              ":", "(", ")", "=", " ", "s1", "s2", "h1", '"x-1"', "arch", "tna", "ports", "stages",
              "8", "0", "99999", "runs", "ips", "at", "mac", "00:00:00:00:00:01", "10.0.0.1",
              "latency", "bandwidth", "0.5ms", "10Gbps", "3xb", "fat_tree", "line", "ring",
              "leaf_spine", "k=", "hosts=", "arch=", "stages=", "ports=", "n=", "spines=", "#",
              "//", "s1:3", '"x":2', "1.5", "4", "2", "use line(", "use fat_tree(", "5ms"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=40).map("".join))
def test_topology_like_noise_raises_only_topology_errors(text: str):
    try:
        parse_topology(text)
    except TopologyError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_topology_errors(data: bytes):
    try:
        parse_topology(data)
    except TopologyError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS), st.data())
def test_mutated_fixtures_raise_only_topology_errors(seed: str, data):
    i = data.draw(st.integers(0, len(seed)))
    j = data.draw(st.integers(i, min(len(seed), i + 12)))
    insert = data.draw(st.text(max_size=6) | st.sampled_from(VOCABULARY))
    try:
        parse_topology(seed[:i] + insert + seed[j:])
    except TopologyError:
        pass



MAX_DIGITS = 4300                # Python converts no longer decimal string to an int
HUGE = st.integers(MAX_DIGITS + 1, MAX_DIGITS + 400).map(lambda n: "9" * n)
HUGE_SEEDS = SEEDS + ["use line(4)", "switch s1 ports 8\nswitch s2\nlink s1:3 -- s2:1 latency 2ms"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(HUGE_SEEDS), st.data())
def test_a_huge_number_anywhere_is_a_located_topology_error(seed: str, data):
    """Numbers longer than Python converts (``use line(9999…)``, ports, latencies) are
    refused where they are written, not with a Python traceback (issue 19.8)."""
    runs = [m.span() for m in re.finditer(r"\d+", seed)]
    i, j = data.draw(st.sampled_from(runs)) if data.draw(st.booleans()) else \
        (k := data.draw(st.integers(0, len(seed))), k)
    with pytest.raises(TopologyError) as e:
        parse_topology(seed[:i] + data.draw(HUGE) + seed[j:])
    assert e.value.line >= 1 and "digits" in e.value.message
