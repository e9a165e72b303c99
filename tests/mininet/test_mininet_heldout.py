"""The held-out kinds of network of issue 21 on Mininet (model switch processes on
real veth links): every class packet of every chain is sent on both the embedded
network and Mininet; each does what the chain alone does on one switch, and the two
agree hop by hop (:func:`heldout.check_every_class`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mnsupport import both_networks, needs_network_chains

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "network"))
from heldout import NETWORKS, check_every_class, enough_delivered, load  # noqa: E402


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_every_class_packet_on_mininet_as_on_the_embedded_network(name):
    needs_network_chains()
    for embedded, real in both_networks(*load(name)):
        assert len(real.emulation.processes) == len(embedded.topology.switches)
        delivered = check_every_class(embedded, also=real)
        assert enough_delivered(delivered), delivered
