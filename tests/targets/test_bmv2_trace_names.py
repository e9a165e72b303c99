"""A real BMv2's traces name what ran as the embedded model's do (issue 33): the same
tables, the same entries described the same way, the same actions with the same
arguments, for the same packets of a generated chain; p4c's actions of plain
statements (``program406``) show the statements, whole.

Needs p4c-bm2-ss and simple_switch_grpc (skips naming them where they are missing)."""

from __future__ import annotations

import pytest
from targets_support import live_skip

from sfclab.targets.bmv2 import target as B

CHAINS = """
chain web match udp.dport == 8080: firewall -> nat -> lb -> l3fwd
chain mgmt match tcp.dport == 22: l2fwd
"""


def _whole(statements: str) -> bool:
    """No statement cut short or run into another's tail: brackets pair up."""
    return all(statements.count(a) == statements.count(b) for a, b in ("()", "{}", "[]"))


@pytest.mark.bmv2
def test_bmv2_trace_names_the_actions_the_model_names():
    live_skip(B.missing_tools())
    import sfclab
    from sfclab.codegen import generate
    from sfclab.targets.connect import open_target
    from sfclab.targets.traffic.coverage import all_class_traffic
    from sfclab.targets.model import ModelTarget
    from sfclab.targets.ports.packet_io import send_many

    gen = generate(sfclab.compile(CHAINS))
    packets = [(cp.port, cp.packet) for plan in all_class_traffic(gen, 2).values()
               for cp in plan.packets]
    with ModelTarget() as model, open_target("bmv2") as bmv2:
        model.push(gen)
        bmv2.push(gen)
        pairs = list(zip(send_many(model, packets), send_many(bmv2, packets), strict=True))
    assert len(pairs) >= 2
    with_args = described = 0
    for want, got in pairs:
        ours, theirs = ([e.text() for e in r.trace.events
                         if e.kind in ("table_hit", "table_miss", "action")] for r in (want, got))
        assert theirs == ours, f"model:\n{want.trace.text()}\nBMv2:\n{got.trace.text()}"
        with_args += sum(1 for e in got.trace.events if e.kind == "action" and e.args)
        described += sum(1 for e in got.trace.events if e.kind == "table_hit" and "=" in e.entry)
        runs = [e.name for e in got.trace.events if e.kind == "statements"]
        assert runs and all(_whole(r) and not r.startswith("program") for r in runs), runs
    assert with_args >= 2 * len(pairs)      # set_token and finish at least, in every packet
    assert described >= 2 * len(pairs)      # the initializer's and the rewinder's entries
