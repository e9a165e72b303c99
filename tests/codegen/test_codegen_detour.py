"""One-switch programs whose paths detour through a server (P4SFC's split, sfclab.codegen.detour)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.cli import main
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.detour import ports_in_use
from sfclab.errors import CompileError
from sfclab.lang import parse_file
from sfclab.p4 import check_program, parse_p4

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
P4SFC = "chain web match tcp.dport == 443: firewall -> nat -> ips -> monitor"


def _rewinder(gen, note: str) -> str:
    return next(e.action.rpartition(".")[2] + str(dict(e.params)) for e in gen.entries
                if e.table.endswith("rewinder") and note in e.note)


def test_the_switch_runs_pre_and_post_server_nfs_and_forwards_to_the_server_between():
    gen = generate(sfclab.compile(P4SFC))
    d = gen.detour
    assert d is not None and d.port == 8
    pre, srv, post = d.journeys["web/0"]
    assert (pre.kind, pre.nodes, pre.exit) == ("switch", ("firewall", "nat"), ("forward", "server", 8))
    assert (srv.kind, srv.nodes, srv.exit) == ("server", ("ips",), ("return", 8))
    assert (post.kind, post.nodes, post.exit) == ("switch", ("monitor",), ("end", "output"))
    # the switch has no slot for ips; its program steers like a network switch's
    assert sorted(s.nf for s in gen.composition.slots) == ["firewall", "monitor", "nat"]
    assert "table arrival" in gen.program.text and "action forward(" in gen.program.text
    (task,) = d.tasks
    assert (task.spi, task.si, task.nfs, task.next_si) == (1, 2, ("ips",), 3)
    # pre-server part: forward with the header on, next NF 2 (ips), out of the server port
    assert _rewinder(gen, "web/0") == "forward{'spi': 1, 'si': 2, 'port': 8}"
    # back from the server with next NF 3: enter the post-server part, which finishes as on
    # one switch (an NF's port request holds, else the default port)
    arrival = [e for e in gen.entries if e.table.endswith("arrival")]
    assert [(dict(e.match)["spi"].value, dict(e.match)["si"].value) for e in arrival] == [(1, 3)]
    assert _rewinder(gen, "web@3/0") == "finish{'terminal': 0, 'port': 1}"
    assert d.paths["web@3/0"] == "web/0" and d.passes == {"web/0": 2}
    assert gen.compiled.paths[0].nfs == ("firewall", "nat", "ips", "monitor")
    assert gen.path_name("web@3/0") == "web/0" and gen.path_name("web/0") == "web/0"


def test_chain_sets_without_server_nfs_keep_the_one_switch_program():
    text = "chain a match tcp.dport == 80: firewall -> nat"
    gen = generate(sfclab.compile(text))
    assert gen.detour is None and "table arrival" not in gen.program.text
    assert gen.compiled is gen.composition.compiled


def test_a_mixed_set_detours_only_its_server_paths():
    d = generate(sfclab.compile((EXAMPLES / "p4sfc_mixed.sfc").read_text())).detour
    assert d.server_paths() == ("guarded/0", "voip/0")
    assert [s.kind for s in d.journeys["guarded/1"]] == ["switch"]
    assert d.passes == {"guarded/0": 2, "guarded/1": 1, "plain/0": 1, "voip/0": 2}


def test_a_path_of_server_nfs_only_still_enters_and_leaves_through_the_switch():
    d = generate(sfclab.compile("chain a: ips -> dpi")).detour
    pre, srv, post = d.journeys["a/0"]
    assert pre.nodes == () and srv.nfs == ("ips", "dpi") and post.nodes == ()


def test_a_branch_decided_on_the_server_is_refused():
    text = """chain c {
    input => ips => (monitor : drop ? ips.verdict == 0);
    monitor => output;
}"""
    with pytest.raises(CompileError, match="a branch is decided by an NF on server"):
        generate(sfclab.compile(text))


@pytest.mark.parametrize("port, why", [
    (1, "the default output port"),
    (2, "l3fwd's entries send packets out of it"),
    (3, "chain web's classifier takes packets that enter on it"),
    (255, "the CPU port"),
])
def test_a_server_port_in_use_is_refused(port, why):
    text = "chain web match std.ingress_port == 3 && tcp.dport == 443: l3fwd -> ips"
    compiled = sfclab.compile(text)
    with pytest.raises(CompileError, match=f"server port {port} is in use: {why}") as e:
        generate(compiled, options=CodegenOptions(server_port=port))
    assert "free data ports: 4, 5, 6, 7, 8" in e.value.hint


def test_the_server_port_is_an_option_and_the_default_avoids_ports_in_use():
    compiled = sfclab.compile("chain web match std.ingress_port == 8: firewall -> ips")
    assert generate(compiled).detour.port == 7            # 8 takes the chain's packets
    gen = generate(compiled, options=CodegenOptions(server_port=5))
    assert gen.detour.port == 5 and _rewinder(gen, "web/0").endswith("'port': 5}")
    with pytest.raises(CompileError, match="not a switch port"):
        generate(compiled, options=CodegenOptions(server_port=600))


def test_a_multibranch_on_the_ingress_port_keeps_its_ports_from_the_server():
    compiled = sfclab.compile("""chain e {
    input => l2fwd => (1@ipsg : 2@qos : 8@ips # input_port);
    ipsg => output;  qos => output;  ips => output;
}""")
    used = ports_in_use(compiled, None, CodegenOptions(), "v1model")
    assert {1, 2, 8} <= set(used) and "tests it as the ingress port" in used[8]
    assert generate(compiled).detour.port == 7


@pytest.mark.parametrize("arch", ["v1model", "tna"])
def test_compile_writes_a_program_the_architecture_checks_accept(tmp_path, capsys, arch):
    out = tmp_path / arch
    assert main(["compile", str(EXAMPLES / "p4sfc_intent.json"), "--arch", arch,
                 "-o", str(out)]) == 0, capsys.readouterr().err
    text = (out / "program.p4").read_text()
    env = check_program(parse_p4(text, source=str(out / "program.p4")), text=text)
    assert env.arch == arch
    assert "table arrival" in text
    assert (out / "servers.txt").read_text() == (
        "server behind port 8: service path 1, next NF 2: run ips, back with next NF 3\n")
    plan = (out / "plan.txt").read_text()
    assert "1 service path(s) detour through the server behind port 8:" in plan


def test_the_p4sfc_intent_example_detours_ips_and_monitors_after():
    gen = generate(sfclab.compile(parse_file(EXAMPLES / "p4sfc_intent.json")))
    (path,) = gen.compiled.paths
    assert [(s.kind, s.nfs) for s in gen.detour.journeys[path.id]] == [
        ("switch", ("firewall", "nat")), ("server", ("ips",)), ("switch", ("monitor",))]
