"""Per-switch programs of a network: what each switch runs, the SFC header's
steering entries, and the same rules the one-switch program obeys (it parses back,
every entry resolves in its P4Info and fits its table)."""

from __future__ import annotations

import pytest
from netsupport import fat_tree_example

import sfclab
from sfclab.codegen import generate
from sfclab.codegen.network import generate_network, write_network_outputs
from sfclab.codegen.p4info import build_p4info
from sfclab.errors import CompileError
from sfclab.ir.model import ChainSet, linear_chain
from sfclab.ir.topology import fat_tree, line
from sfclab.p4 import parse_p4
from sfclab.passes.netplace import place_network
from sfclab.runtime.encode import P4InfoIndex


def _program(topo, chains, **kw):
    return generate_network(place_network(topo, chains, **kw), chains)


def _check_like_the_one_switch_program(gen):
    """What p4c and a P4Runtime server check: the text is the AST, entries encode
    against the P4Info, match kinds and priorities agree, tables hold the entries."""
    assert parse_p4(gen.program.text) == gen.program.program
    info = build_p4info(gen.program.program, arch=gen.arch)
    index = P4InfoIndex(info)
    tables = {t.preamble.name: t for t in info.tables}
    counts: dict[str, int] = {}
    for e in gen.entries:
        index.update("INSERT", e)                         # raises on any mismatch
        t = tables[e.table]
        fields = {f.name: type(f).MatchType.Name(f.match_type).lower() for f in t.match_fields}
        for name, m in e.match:
            assert type(m).__name__.lower() == fields[name], (e, fields[name])
        ranged = any(k in ("ternary", "range", "optional") for k in fields.values())
        assert (e.priority is not None and e.priority > 0) == ranged, e
        counts[e.table] = counts.get(e.table, 0) + 1
    for name, n in counts.items():
        assert n <= tables[name].size, (name, n)


@pytest.fixture(scope="module")
def fat_tree_program():
    topo, chains = fat_tree_example()
    return topo, chains, _program(topo, chains)


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_every_switch_program_obeys_the_one_switch_rules(arch):
    topo, chains = fat_tree_example()
    if arch == "tna":
        topo = fat_tree(4, stages=8, arch="tna")
    prog = _program(topo, chains)
    assert set(prog.switches) == set(topo.switches)
    for s, sp in prog.switches.items():
        assert sp.generated.arch == arch
        _check_like_the_one_switch_program(sp.generated)


def test_a_switch_runs_only_the_nfs_placed_on_it(fat_tree_program):
    topo, chains, prog = fat_tree_program
    usage = prog.placement.usage()
    for s, sp in prog.switches.items():
        want = usage[s].types if s in usage else ()
        assert sp.slots == want, s
        assert [x.nf for x in sp.generated.composition.slots] == list(want)
        # slots in the canonical (layer, name) order the placement counted recirculations on
        ranks = [prog.placement.problem.rank[t] for t in sp.slots]
        assert ranks == sorted(ranks)


def test_ingress_switches_classify_and_the_others_look_up_arrivals(fat_tree_program):
    topo, chains, prog = fat_tree_program
    for cp in prog.placement.problem.chains:
        route = prog.placement.chains[cp.name].route
        port = topo.endpoint(cp.ingress)[1]
        first = prog.switches[route[0]].generated.entries
        init = [e for e in first if e.table.endswith("initializer")
                and e.group == f"chain:{cp.name}"]
        assert init and all(dict(e.match)["meta.sfc.ingress_port"].value == port for e in init)
        for s in route[1:]:
            es = prog.switches[s].generated.entries
            assert not [e for e in es if e.table.endswith("initializer")
                        and e.group.startswith(f"chain:{cp.name}")]
            assert [e for e in es if e.table.endswith(".arrival")
                    and e.group.startswith(f"chain:{cp.name}@")], (cp.name, s)


def test_journeys_forward_with_service_path_and_next_nf_then_deliver(fat_tree_program):
    topo, chains, prog = fat_tree_program
    web = prog.journeys["web/0"]
    pl = prog.placement.chains["web"]
    assert [s.node for s in web] == list(pl.route)
    assert [nf for s in web for nf in s.nfs] == ["firewall", "nat", "lb", "l3fwd"]
    for a, b in zip(web, web[1:]):
        assert a.exit == ("forward", b.node, topo.port(a.node, b.node))
        assert b.start == a.start + len(a.nodes)
    assert web[-1].exit == ("deliver", topo.endpoint("h16")[1])
    # the forward entries carry the path's spi and the index of the next NF
    for seg, nxt in zip(web, web[1:]):
        sp = prog.switches[seg.node]
        fw = [e for e in sp.generated.entries if e.action.endswith(".forward")
              and e.group == f"chain:{seg.part}"]
        assert (prog.spis["web/0"], nxt.start, topo.port(seg.node, nxt.node)) in \
            {tuple(dict(e.params)[k] for k in ("spi", "si", "port")) for e in fw}
    # the drop branch ends on the firewall's switch
    drop = prog.journeys["web/1"]
    assert drop[-1].exit == ("end", "drop") and drop[-1].node == pl.node("firewall")


def test_transit_switches_have_no_slots_and_only_forward(fat_tree_program):
    topo, chains, prog = fat_tree_program
    transit = [s for s, sp in prog.switches.items() if sp.parts and not sp.slots]
    assert transit
    for s in transit:
        es = prog.switches[s].generated.entries
        assert {e.table.rsplit(".", 1)[1] for e in es} <= {"arrival", "rewinder", "initializer"}
        assert all(dict(e.params)["bitmap"] == 0 for e in es if e.action.endswith(".enter"))


def test_a_one_switch_program_is_unchanged_by_the_network_options():
    one = generate(sfclab.compile("chain a match tcp.dport == 80: firewall -> nat"))
    assert "arrival" not in one.program.text and "forward" not in one.program.text


def test_server_tasks_send_packets_back_with_the_next_index():
    t = line(3)
    t.add_server("srv1", nfs=("dpi",))
    t.add_link("srv1", "s2")
    prog = _program(t, ChainSet.of([linear_chain("c", ["firewall", "dpi", "nat"])]))
    (task,) = prog.servers["srv1"]
    assert (task.spi, task.si, task.nfs, task.next_si) == (prog.spis["c/0"], 1, ("dpi",), 2)
    assert task.port == t.port("srv1", "s2")
    kinds = [(s.kind, s.node) for s in prog.journeys["c/0"]]
    assert ("server", "srv1") in kinds and kinds.count(("switch", "s2")) == 2


def test_a_branch_decided_on_a_server_is_refused():
    t = line(2)
    t.add_server("srv1", nfs=("dpi",))
    t.add_link("srv1", "s1")
    chains = sfclab.parse("chain c { input => dpi; dpi => (nat : drop ? dpi.global_metadata "
                          "== 0); nat => output; }")
    with pytest.raises(CompileError, match="a branch is decided by an NF on server srv1"):
        _program(t, chains)


def test_per_switch_outputs_are_written(tmp_path, fat_tree_program):
    topo, chains, prog = fat_tree_program
    written = write_network_outputs(prog, tmp_path)
    for s in topo.switches:
        for f in ("program.p4", "p4info.txt", "entries.json", "plan.txt"):
            assert (tmp_path / s / f).is_file()
    assert "network placement" in (tmp_path / "placement.txt").read_text()
    assert len(written) == 4 * len(topo.switches) + 1
