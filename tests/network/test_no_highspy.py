"""Without highspy (Pyodide: JupyterLite's kernel) the exact network placement says it needs
highspy and the heuristic's placement is the network's; asking for the exact one alone is
refused, saying the same."""

from __future__ import annotations

import pytest

import sfclab
import sfclab.passes.netplace as netplace
from sfclab.errors import CompileError
from sfclab.ir.topology import fat_tree

WEB = "chain web match tcp.dport == 80 from h1 to h16: firewall -> nat -> lb -> l3fwd"


@pytest.fixture
def no_highspy(monkeypatch):
    monkeypatch.setattr(netplace, "exact_available", lambda: False)


@pytest.mark.parametrize("solver", ["auto", "both"])
def test_the_heuristic_places_and_the_exact_solver_says_why_not(no_highspy, solver):
    pl = sfclab.Network(fat_tree(4, stages=12), WEB, solver=solver).placement
    assert pl.exact.status == "skipped"
    assert pl.exact.reason.startswith("the exact network placement needs highspy")
    assert pl.chosen is pl.heuristic and pl.gap(pl.heuristic) is None
    table = pl.table()
    assert "exact      skipped" in table and "pip install highspy" in table
    assert "chosen: heuristic" in table


def test_the_exact_solver_alone_is_refused(no_highspy):
    with pytest.raises(CompileError, match="needs highspy") as info:
        sfclab.Network(fat_tree(4, stages=12), WEB, solver="exact").placement
    assert "solver='heuristic'" in info.value.hint
