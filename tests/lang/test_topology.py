"""The topology language: every generator's fixture, the statements' meaning, format round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.cli import main
from sfclab.errors import TopologyError
from sfclab.ir.topology import fat_tree, leaf_spine, line, ring
from sfclab.lang import format_topology, parse_topology, parse_topology_file

FIXTURES = Path(__file__).parent.parent / "fixtures" / "lang" / "topo"
CASES = sorted(FIXTURES.glob("*.topo"))
EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples").glob("*.topo"))


def test_every_generator_has_a_fixture():
    used = {line.split("(")[0].split()[-1] for p in CASES for line in p.read_text().splitlines()
            if line.startswith("use ")}
    assert used == {"line", "ring", "leaf_spine", "fat_tree"}


def _check(topo, fact: list[str]) -> None:
    key, *rest = fact
    if key == "name":
        assert topo.name == rest[0]
    elif key in ("switches", "hosts", "servers"):
        assert len(getattr(topo, key)) == int(rest[0])
    elif key == "links":
        assert len(topo.links) == int(rest[0])
    elif key == "port":
        node, neighbour, port = rest
        assert topo.port(node, neighbour) == int(port), fact
        assert topo.peer(node, int(port))[0] == neighbour
    elif key == "route":
        a, b, *switches = rest
        assert topo.switch_route(a, b) == switches, fact
    elif key == "switch":
        name, prop, value = rest
        assert str(getattr(topo.switches[name], prop)) == value, fact
    elif key == "host":
        assert topo.hosts[rest[0]].ip == rest[2]
    elif key == "server":
        assert sorted(topo.servers[rest[0]].nfs) == rest[2:]
    else:
        raise AssertionError(f"unknown fact {fact}")


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_fixture(path: Path):
    topo = parse_topology_file(path)
    facts = [ln.split() for ln in path.with_suffix(".expect").read_text().splitlines() if ln]
    for fact in facts:
        _check(topo, fact)
    assert topo.source == str(path)


@pytest.mark.parametrize("path", CASES + EXAMPLES, ids=lambda p: p.name)
def test_format_round_trip(path: Path):
    topo = parse_topology_file(path)
    text = format_topology(topo)
    again = parse_topology(text)
    assert again.signature() == topo.signature()
    assert format_topology(again) == text


@pytest.mark.parametrize("make,text", [
    (lambda: line(3), "use line(3)"),
    (lambda: ring(4, hosts=2), "use ring(4, hosts=2)"),
    (lambda: leaf_spine(2, 3, stages=8), "use leaf_spine(spines=2, leaves=3, stages=8)"),
    (lambda: fat_tree(4, arch="tna"), "use fat_tree(4, arch=tna)"),
])
def test_use_gives_what_the_python_generator_gives(make, text):
    assert parse_topology(text).signature() == make().signature()


def test_the_example_from_the_issue():
    topo = parse_topology("""
        topology campus
        switch s1 arch v1model stages 12 tables 64 ports 32
        switch s2, s3                       // defaults
        host h1 10.0.0.1 mac 00:00:00:00:00:01
        server srv1 runs ips, dpi
        link h1 -- s1:1
        link s1:2 -- s2:1 latency 0.5ms bandwidth 10Gbps
        link srv1 -- s3
        link s2 -- s3
    """)
    assert topo.summary() == "topology campus: 3 switches, 1 hosts, 1 servers, 4 links"
    s1 = topo.switches["s1"]
    assert (s1.arch, s1.stages, s1.tables, s1.ports) == ("v1model", 12, 64, 32)
    assert topo.switches["s3"].ports == 64
    k = topo.link("s1", "s2")
    assert (k.port_of("s1"), k.port_of("s2"), k.latency_ms, k.bandwidth_gbps) == (2, 1, 0.5, 10.0)
    assert topo.endpoint("h1") == ("s1", 1)
    assert topo.servers["srv1"].nfs == ("ips", "dpi")
    assert (topo.switches["s1"].line, topo.switches["s1"].column) == (3, 16)


def test_units_convert_to_ms_and_gbps():
    topo = parse_topology("switch a, b, c, d\nlink a -- b latency 250us bandwidth 100Mbps\n"
                          "link b -- c latency 2s bandwidth 1Tbps\nlink c -- d latency 40ns")
    assert topo.link("a", "b").latency_ms == pytest.approx(0.25)
    assert topo.link("a", "b").bandwidth_gbps == pytest.approx(0.1)
    assert (topo.link("b", "c").latency_ms, topo.link("b", "c").bandwidth_gbps) == (2000, 1000)
    assert topo.link("c", "d").latency_ms == pytest.approx(4e-5)
    assert "latency 250us bandwidth 100Mbps" in format_topology(topo)


def test_hosts_without_addresses_take_the_lowest_free_ones():
    topo = parse_topology("switch s1\nhost a 10.0.0.2 mac 00:00:00:00:00:02 at s1\n"
                          "host b, c at s1")
    assert [topo.hosts[n].ip for n in "abc"] == ["10.0.0.2", "10.0.0.1", "10.0.0.3"]
    assert [topo.hosts[n].mac for n in "abc"] == [2, 1, 3]
    assert [topo.endpoint(n) for n in "abc"] == [("s1", 1), ("s1", 2), ("s1", 3)]


def test_a_chain_of_links_and_later_lines_adding_to_a_generator():
    topo = parse_topology("use line(2)\nswitch s3\nlink s2 -- s3 -- s1 bandwidth 40Gbps")
    assert topo.switch_route("h1", "h2") == ["s1", "s2"]
    assert {topo.link("s2", "s3").bandwidth_gbps, topo.link("s3", "s1").bandwidth_gbps} == {40.0}
    assert topo.name == "line2"


def test_quoted_names_keywords_comments_semicolons_and_crlf():
    topo = parse_topology('switch "leaf-1", host; switch link  # names that need care\r\n'
                          'host "h.1" at "leaf-1":7 // comment\r\nlink host -- link\r\n')
    assert list(topo.switches) == ["leaf-1", "host", "link"]
    assert topo.endpoint("h.1") == ("leaf-1", 7)
    text = format_topology(topo)
    assert 'switch "leaf-1", "host", "link"' in text
    assert parse_topology(text).signature() == topo.signature()


def test_server_nfs_use_the_given_catalogue():
    from sfclab.nfinfo import NFCatalog, NFInfo

    cat = NFCatalog([NFInfo(name="my_nf", layer=3, aliases=("MyNF",))])
    assert parse_topology("server x runs MyNF", catalog=cat).servers["x"].nfs == ("my_nf",)
    with pytest.raises(TopologyError, match="unknown NF 'ips'"):
        parse_topology("server x runs ips", catalog=cat)


def test_bytes_nul_and_empty_input():
    assert parse_topology(b"switch s1").summary().startswith("topology net: 1 switches")
    assert len(parse_topology("")) == 0
    assert len(parse_topology("\n\n  // nothing\n;;\n")) == 0
    with pytest.raises(TopologyError, match="not UTF-8"):
        parse_topology(b"switch \xff")
    with pytest.raises(TopologyError, match="NUL"):
        parse_topology("switch s1\nhost \x00")


def test_exported_from_sfclab():
    assert sfclab.parse_topology is parse_topology
    assert sfclab.format_topology is format_topology
    assert sfclab.parse_topology_file is parse_topology_file


def test_cli_check_prints_a_summary(capsys):
    path = FIXTURES / "fat_tree4.topo"
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: topology fat_tree4: 20 switches, 17 hosts, 1 servers, 51 links, OK" in out
    assert "  switch  c1: v1model, 1 pipe(s), 12 stages, 64 tables, 5/64 ports linked" in out
    assert "  host    h17: 10.0.9.17 00:00:00:00:00:11, at e1_1:5" in out
    assert "  server  srv1: runs ips, heavy_hitter, at c1:5" in out
    assert "    e4_2:5 -- c4:5 latency 0.002ms" in out


def test_cli_check_reports_topology_errors(tmp_path, capsys):
    bad = tmp_path / "bad.topo"
    bad.write_text("switch s1 ports 8\nhost h1 at s1:9\n")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:15: switch 's1' has ports 1..8, not 9" in err
    assert "    host h1 at s1:9\n                  ^" in err
    assert "Traceback" not in err


def test_a_port_left_out_is_one_no_later_line_names():
    """`host printer … at bld2` before `link bld2:1 -- core_a`: the host does not take
    port 1 (which the link then could not have), nor does an implicit link end."""
    t = parse_topology("""
switch bld2, core_a, core_b ports 8
host printer 10.2.0.50 at bld2
server box at bld2
link bld2:1 -- core_a
link bld2 -- core_b:1
link core_b -- core_a:1
""")
    assert t.attachment("printer") == ("bld2", 2) and t.attachment("box") == ("bld2", 3)
    assert t.port("bld2", "core_a") == 1 and t.port("core_a", "bld2") == 2
    assert t.port("bld2", "core_b") == 4 and t.port("core_b", "core_a") == 2
    assert t.port("core_a", "core_b") == 1
    # a named port already taken is still refused, at its line
    with pytest.raises(TopologyError) as e:
        parse_topology("switch s1\nhost a at s1:1\nhost b at s1:1\n")
    assert e.value.line == 3 and "already linked" in e.value.message
