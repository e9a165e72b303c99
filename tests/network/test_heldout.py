"""The held-out kinds of network of issue 21, on the embedded network: every class
packet of every chain end to end, against the chain alone on one switch
(:func:`heldout.check_every_class`), and what makes each network what it is."""

from __future__ import annotations

import pytest
from heldout import NETWORKS, check_every_class, enough_delivered, load

from sfclab.network import Network


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_every_class_packet_end_to_end(name):
    topo, chains = load(name)
    with Network(topo, chains) as net:
        delivered = check_every_class(net)
        assert enough_delivered(delivered), delivered
        pl = net.placement.chains
        where = {c: {n for _, _, n in pl[c].where} for c in pl}
        if name == "leaf_spine":        # the server on its fixed port, for ips and dpi
            assert topo.attachment("insp") == ("spine2", 9)
            assert "insp" in where["web"] and "insp" in where["dns"]
        if name == "small_switches":    # a chain split over three switches
            assert len(where["long"]) >= 3 and len(where["guard"]) >= 2
        if name == "ring":              # across the ring, out to the server and back
            assert "box" in where["across"] and "box" in where["back"]
            assert len(pl["across"].route) >= 3
        if name == "campus":            # fixed ports kept; printer takes a port no line names
            assert topo.attachment("alice") == ("bld1", 3)
            assert topo.attachment("insp") == ("core_b", 7)
            assert topo.attachment("printer") == ("bld2", 3)
            assert "insp" in where["scan"] and "ipsg" not in pl["print"].describe().split()[0]
        if name == "fat_tree":          # the server on a core switch detours some chains
            assert topo.attachment("dpi1")[0] == "c1"
            assert any("dpi1" in w for w in where.values())
