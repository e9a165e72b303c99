"""The driver: every input form, every pass's output, the text views."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.compiler import CompiledChains, compile
from sfclab.errors import CompileError
from sfclab.ir.model import linear_chain
from sfclab.passes import PASSES
from sfclab.passes.generate import random_chains

TEXT = """chain web match tcp.dport == 80 weight 0.6 {
    input => firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt { input => l2fwd => output; }
"""


def test_accepts_text_chainset_and_list():
    a = compile(TEXT)
    b = compile(sfclab.parse(TEXT))
    c = compile(list(sfclab.parse(TEXT)))
    assert isinstance(a, CompiledChains)
    assert a.pipeline.slots == b.pipeline.slots == c.pipeline.slots
    assert [p.id for p in a.paths] == ["web/0", "web/1", "mgmt/0"]


def test_every_pass_ran():
    out = compile(TEXT, arch="tna")
    assert out.merge and out.pipeline and out.fsm and out.placement and out.offload
    assert [n for n, _ in out.timings] == [p.__name__.removesuffix("_pass") for p in PASSES]
    assert compile(TEXT).placement is None                 # v1model: one pipe
    assert compile(TEXT, placement=True).placement is not None


def test_summary_and_explain():
    out = compile(TEXT, arch="tna", dup_slots=1)
    s = out.summary()
    assert s.splitlines()[0] == "2 chains, 3 service paths (tna)"
    e = out.explain()
    for word in ("merged IR", "pipelines", "rewinder:", "branches:", "placement", "offload",
                 "slot 0:", "web/1 #2"):
        assert word in e


def test_options_reach_the_passes():
    out = compile(TEXT, pipeline="naive")
    assert out.pipeline.chosen.method == "naive"
    from sfclab.passes import TokenWidths
    with pytest.raises(CompileError, match="bitmap field"):
        compile(TEXT, widths=TokenWidths(bitmap=2))


def test_bad_arch_and_option():
    with pytest.raises(CompileError, match="unknown architecture") as e:
        compile(TEXT, arch="v1modle")
    assert "v1model" in e.value.hint
    with pytest.raises(CompileError, match="unknown compile option 'pipline'") as e:
        compile(TEXT, pipline="naive")
    assert "pipeline" in e.value.hint


def test_twenty_random_chains_compile():
    out = compile(random_chains(20, seed=4))
    assert len(out.fsm.paths) == len(out.paths)
    assert out.fsm.widths.bitmap <= 32


def test_linear_chain_input():
    out = compile([linear_chain("c", ["l3fwd", "firewall"])])
    assert out.pipeline.slots == ("l3fwd", "firewall")
