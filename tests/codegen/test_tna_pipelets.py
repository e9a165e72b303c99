"""The TNA program's pipelets (issue 31): the recirculations its entries make are the ones
placement planned, NF slots sit where placement put them, and each pipe has its own
``Pipeline`` (no compiler needed; tests/targets/test_tofino.py compiles them)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.codegen.p4info import build_p4info
from sfclab.codegen.tna_entries import TERM_VIA, bare_entry
from sfclab.errors import CompileError
from sfclab.lang import parse_file
from sfclab.p4 import ast as A
from sfclab.passes.pipelets import recirculation_port
from sfclab.targets.connect import open_target
from sfclab.targets.traffic.coverage import all_class_traffic
from sfclab.targets.ports.packet_io import send_many

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".sfc", ".json"))
BINDINGS = {"flexmesh_fig9.sfc": {"p1": 1, "p2": 2, "p3": 3}}


@functools.cache
def _gen(path: Path, pipes: int, mode: str = "auto"):
    return generate(sfclab.compile(parse_file(path), arch="tna", pipes=pipes, pipeline=mode),
                    options=CodegenOptions(bindings=BINDINGS.get(path.name, {})))


def entry_recirculations(gen) -> dict[int, int]:
    """Per path number, the recirculations its rewinder entries make: a visit ends in an
    egress pipelet with ``next_pipelet`` (the SFC header kept for the pipe's ingress),
    after an ingress visit sent it to that pipe's recirculation port.  Followed from
    state 0 until an entry ends the path."""
    comp = gen.composition
    pid, st = comp.token_keys
    rew = {}
    for e in gen.entries:
        if e.table.endswith(".rewinder"):
            m = dict(e.match)
            rew[m[pid].value, m[st].value] = e
        elif e.action.rsplit(".", 1)[-1] in ("set_token", "enter") and "terminal" in dict(e.params):
            rew[dict(e.params)["path_id"], 0] = e     # a bare entry's classifier ends visit 0
    out: dict[int, int] = {}
    for num in sorted({n for n, _ in rew}):
        state, count, port = 0, 0, None
        while (num, state) in rew:
            e = rew[num, state]
            act, params = e.action.rsplit(".", 1)[1], dict(e.params)
            if act in ("set_token", "enter"):
                act = "next_pipelet" if params["terminal"] == TERM_VIA else "finish"
            egress = ".SfcEgress" in e.table
            if egress:
                pipe = int(e.table.split(".")[0].removeprefix("pipe"))
                if act != "next_pipelet":
                    break
                assert port == recirculation_port(pipe), e      # the ingress sent it there
                count += 1
            elif act == "finish" and params["state"] == 0:      # dropped, or to the CPU
                break
            port = params.get("port")
            state = params["state"] if not egress else state + 1
            assert state > 0
        out[num] = count
    return out


@pytest.mark.parametrize("pipes", [1, 2, 4])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_entries_recirculate_as_placement_planned(path, pipes):
    """For every example on 1, 2 and 4 pipes (where it fits): each service path's
    recirculations counted from the generated entries are placement's, and so is their
    weighted sum (Dejavu's objective)."""
    try:
        gen = _gen(path, pipes)
    except CompileError as e:
        assert pipes == 1 and "--pipes" in e.hint, e        # refused where it cannot fit
        return
    comp = gen.composition
    plan = comp.pipelets
    counted = entry_recirculations(gen)
    by_num = {f.num: f.path for f in plan.fsm.paths}
    mine = {by_num[n].id: k for n, k in counted.items()}
    assert mine == {f.path.id: plan.recirculations(f.path.id) for f in plan.fsm.paths}
    weighted = round(sum(by_num[n].weight * k for n, k in counted.items()), 9)
    if gen.detour is None:          # the detour's switch paths are parts of the user's paths
        placed = comp.compiled.placement.best
        assert weighted == round(placed.weighted_recirculations, 9)
        assert mine == dict(placed.recirculations)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_slots_are_where_placement_put_them_a_pipeline_per_pipe(path):
    gen = _gen(path, 2)
    comp, prog = gen.composition, gen.program.program
    if gen.detour is None:
        placed = dict(comp.compiled.placement.best.pipelets)
        assert {s.nf: s.pipelet for s in comp.slots} == {
            nf: pl for pl, nfs in placed.items() for nf in nfs}
    controls = {d.name: d for d in prog.decls if isinstance(d, A.ControlDecl)}
    for s in comp.slots:
        ctl = controls[f"Sfc{s.pipelet.gress.capitalize()}{s.pipelet.pipe}"]
        assert any(isinstance(d, A.Instance) and d.name == s.instance for d in ctl.locals)
    assert "Switch(pipe0, pipe1) main;" in gen.program.text
    names = {t.preamble.name for t in build_p4info(prog, arch="tna").tables}
    assert {"pipe0.SfcIngress0.initializer", "pipe0.SfcIngress0.rewinder",
            "pipe1.SfcEgress1.rewinder", "pipe1.SfcIngress1.pass_end"} <= names
    assert {e.table for e in gen.entries} <= names


def test_ports_nfs_and_branching_nfs_run_in_an_ingress_pipelet():
    """An egress pipelet cannot change the port, send to the CPU or emit a digest, and the
    port after it was chosen before it: such NFs, and those a path branches after, are
    placed in ingress pipelets."""
    gen = _gen(EXAMPLES / "every_nf.sfc", 2)
    where = {s.nf: s.pipelet.gress for s in gen.composition.slots}
    for nf in ("l2fwd", "l3fwd", "router", "flood", "reporter", "mac_learning", "heavy_hitter"):
        assert where[nf] == "ingress", nf
    web = _gen(EXAMPLES / "web.sfc", 2)
    assert {s.nf: s.pipelet.gress for s in web.composition.slots}["firewall"] == "ingress"


def test_side_by_side_slots_share_a_gate_chain():
    """NFs no path runs both of are composed in parallel: ``else if`` on the next one's bit."""
    gen = generate(sfclab.compile("chain a match tcp.dport == 80: firewall -> l3fwd\n"
                                  "chain b match tcp.dport == 81: qos -> l3fwd\n", arch="tna"))
    slots = {s.nf: s for s in gen.composition.slots}
    assert slots["firewall"].pipelet == slots["qos"].pipelet
    assert slots["firewall"].group == slots["qos"].group != slots["l3fwd"].group
    text = gen.program.text
    assert (f"}} else if (meta.sfc.drop == 0 && meta.sfc.to_cpu == 0 && meta.tok.bitmap & "
            f"32w0x{1 << max(slots['firewall'].index, slots['qos'].index):X} != 0) {{") in text


#: Two chains on a Tofino whose pipelets hold 3 stages: every NF goes to an egress, the
#: entry ingress holds none; chain a comes back into it after its first NF (on E0).
TWO_WAYS = ("chain a match udp.dport == 8080 { input => classifier => firewall => output; }\n"
            "chain b match udp.dport == 9090 { input => firewall => classifier => output; }\n")


def test_a_bare_entry_ingress_ends_the_first_visit_in_its_classifier_and_runs_as_v1model():
    """Issue 31: an entry ingress with no NF slot took 3 core stages (initializer, rewinder,
    pass_end, each reading what the one before wrote).  Its classifier's ``set_token`` now
    ends the first visit itself, the rewinder there (beside the initializer, for packets
    that come back) ends the later ones; packets leave as from the v1model program and
    recirculate as placement planned."""
    v1 = generate(sfclab.compile(TWO_WAYS))
    gen = generate(sfclab.compile(TWO_WAYS, arch="tna", pipes=2, stages=3))
    comp = gen.composition
    assert bare_entry(comp) and all(s.pipelet.gress == "egress" for s in comp.slots)
    heads = [dict(e.params) for e in gen.entries if e.action.endswith(".set_token")]
    assert {h["path_id"] for h in heads} == {1, 2} and all("terminal" in h for h in heads)
    back = [dict(e.match)[comp.token_keys[1]].value for e in gen.entries
            if e.table == "pipe0.SfcIngress0.rewinder"]
    assert back and 0 not in back           # only the visits of packets that come back
    ingress = gen.program.text.split("control SfcIngress0(")[1].split("control ")[0]
    assert "} else {\n                rewinder.apply();\n            }\n            pass_end.apply();" \
        in ingress
    plan, outs, wrong = comp.pipelets, {}, []
    for url, g in (("model", v1), ("model?arch=tna", gen)):
        t = open_target(url)
        try:
            t.push(g)
            for traffic in all_class_traffic(v1, 2).values():
                pairs = [(cp.port, cp.packet) for cp in traffic.packets]
                for k, (path, r) in enumerate(zip(traffic.expected, send_many(t, pairs))):
                    outs.setdefault((path, k), []).append(r.outputs)
                    got = sum(1 for e in r.trace.events if e.kind == "recirculate")
                    if url != "model" and got != plan.recirculations(path):
                        wrong.append((path, got, plan.recirculations(path)))
        finally:
            t.close()
    assert {p for p, _ in outs} == {"a/0", "b/0"} and not wrong, wrong
    assert all(a == b and a for a, b in outs.values()), outs
    assert {plan.recirculations("a/0"), plan.recirculations("b/0")} == {2, 1}
