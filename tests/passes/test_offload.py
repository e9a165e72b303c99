"""Offload pass: P4SFC's pre-server / server / post-server split."""

from __future__ import annotations

import pytest

from sfclab.passes.offload import split_paths

from passes_support import FIXTURES, check_golden, fixtures, load


@pytest.mark.parametrize("path", fixtures("offload"), ids=lambda p: p.stem)
def test_fixture(path):
    chains, cat = load(path)
    r = split_paths(chains.paths(), cat)
    check_golden(path, "".join(f"{s}\n" for s in r.paths))


def test_partially_offloadable_nfs_run_on_both_sides():
    chains, _ = load(FIXTURES / "offload" / "p4sfc.sfc")
    r = split_paths(chains.paths())
    edge = r.split("edge/0")
    assert edge.pre_server == ("firewall", "nat") and edge.server == ("ips",)
    assert edge.post_server == ("lb", "l3fwd")
    assert edge.on_server == ("nat", "ips", "lb")
    off = r.split("offloaded/0")
    assert off.pre_server == ("firewall", "nat", "l3fwd") and off.server == ()
    assert off.on_server == ("nat",)
    twice = r.split("twice/0")
    assert twice.pre_server == () and twice.server == ("ips", "firewall", "dpi")
    assert twice.post_server == ("lb",)
    assert dict(r.chain_server)["twice"] == ("ips", "firewall", "dpi", "lb")


def test_one_split_per_path_each_nf_once():
    chains, _ = load(FIXTURES / "offload" / "p4sfc.sfc")
    for s in split_paths(chains.paths()).paths:
        placed = s.pre_server + s.server + s.post_server
        path = next(p for p in chains.paths() if p.id == s.path)
        assert placed == path.nodes                       # the path, split once, in order
        assert set(s.partial) <= set(s.pre_server + s.post_server)
        assert set(s.on_server) == set(s.server) | set(s.partial)
        assert "on server" not in str(s)                  # no NF named twice
        for n in placed:
            assert str(s).count(n) == 1, (n, str(s))
    edge = split_paths(chains.paths()).split("edge/0")
    assert [edge.where(n) for n in ("firewall", "nat", "ips")] == [
        "switch", "switch, state on a server", "server"]
