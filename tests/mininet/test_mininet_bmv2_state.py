"""On Mininet with real BMv2 switches, an NF that an update moves to another switch takes
its register state along: BMv2's P4Runtime server answers register reads and writes
UNIMPLEMENTED, so sfclab reads and writes them over each switch's Thrift runtime, from
inside the switch's own network namespace.  A heavy_hitter's counts move from s1 to s3
and the sketch counts on from them there.  Needs root, Mininet, p4c-bm2-ss and
simple_switch_grpc (it skips, naming what is missing)."""

from __future__ import annotations

import uuid

import pytest
from mnsupport import interfaces_named, needs_network_chains


def _counts(lab, switch: str) -> dict[str, int]:
    """The sum of each heavy_hitter sketch row on *switch*."""
    from sfclab.runtime.migrate import read_registers, register_names

    s = lab.network.target.views[switch].session
    return {n.rsplit(".", 1)[1]: sum(v)
            for n, v in read_registers(s, register_names(s, "heavy_hitter")).items()}


def test_a_moved_heavy_hitter_takes_its_counts_along_on_bmv2(mininet):
    needs_network_chains()
    from sfclab import Lab
    from sfclab.ir.topology import line
    from sfclab.targets.bmv2.target import missing_tools

    missing = missing_tools()
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (BMv2 in Mininet needs both)")
    prefix = "t" + uuid.uuid4().hex[:3]
    lab = Lab()
    lab.set_topology(line(3, stages=7))
    lab.add("chain web match tcp.dport == 80: heavy_hitter -> nat")
    try:
        lab.connect(f"mininet?switch=bmv2&prefix={prefix}")
        lab.push()
        assert lab.network.placement.chains["web"].node("heavy_hitter") == "s1"
        lab.send("web", 4)
        before = _counts(lab, "s1")
        assert before == {f"sketch_row{i}": 4 for i in range(3)}
        lab.add("chain web match tcp.dport == 80: nat -> heavy_hitter")
        plan = lab.update(allow_reload=True)
        assert lab.network.placement.chains["web"].node("heavy_hitter") == "s3"
        assert [str(m) for m in plan.moved] == [
            "web's heavy_hitter moves s1 -> s3 (carried its registers: 3 registers, "
            "3072 cells)"]
        assert _counts(lab, "s3") == before
        lab.send("web", 2)
        assert _counts(lab, "s3") == {f"sketch_row{i}": 6 for i in range(3)}
    finally:
        lab.close()
    assert interfaces_named(prefix) == []
