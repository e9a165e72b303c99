"""`Lab.send` (what `%sfc send CHAIN N` runs): packets that cover the class's service
paths on the Lab's target, and which paths they covered."""

from __future__ import annotations

from pathlib import Path

import pytest

import sfclab
from sfclab.errors import SfclabError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lab():
    lab = sfclab.Lab()
    yield lab
    lab.close()


def test_send_covers_every_path_and_says_so(lab):
    lab.add((ROOT / "examples" / "web.sfc").read_text())
    res = lab.send("web", 4)
    assert len(res) == 4 and res.chain == "web"
    assert res.took == ["web/0", "web/1", "web/0", "web/1"]
    assert res.covered == {"web/0": 2, "web/1": 2} and res.missed == {}
    assert [t.path for t in lab.traces] == res.took
    assert res[1].dropped and not res[0].dropped                  # web/1 is the deny path
    assert res.summary() == "web: 4 packets covered 2 of 2 service paths (web/0 ×2, web/1 ×2)"


def test_send_names_the_paths_it_could_not_cover(lab):
    lab.add((ROOT / "tests" / "fixtures" / "traffic" / "unreached_paths.sfc").read_text())
    res = lab.send("cls", 2)
    assert res.covered == {"cls/0": 2}
    assert "never make classifier.class_id == 7 (it sets 0, 1, 2)" in res.missed["cls/1"]
    assert "cls/1 (not (classifier.class_id != 7) -> nat): no packet found" in res.summary()
    again = lab.send("cls", 1)                      # the search is not repeated
    assert again.plan.tried == 1 and "cls/1" in again.missed


def test_send_to_a_chain_no_packet_reaches_says_why(lab):
    lab.add("chain all: l2fwd\nchain web match tcp.dport == 80: l3fwd")
    assert [w.message.split("'")[1] for w in lab.compiled.warnings] == ["web"]
    with pytest.raises(SfclabError, match="'web' gets no packets.*'all'.*has no match"):
        lab.send("web", 1)
    assert lab.send("all", 2).covered == {"all/0": 2}
