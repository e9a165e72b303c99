"""``bmv2?veth=1@A,2@B`` (root): the switch runs in a network namespace of its own, so its
ends of the veth pairs go in with it while it runs and come back -- up, IPv6 as they
were -- when it stops; packets still go in and out on the other ends.  Needs root, real
veth pairs, p4c-bm2-ss and simple_switch_grpc (skips, naming what is missing)."""

from __future__ import annotations

import os

import pytest


def test_bmv2_on_veth_pairs_takes_its_ends_into_its_namespace_and_gives_them_back(veths):
    from sfclab.lab import Lab
    from sfclab.targets.bmv2.target import missing_tools

    missing = missing_tools()
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed")
    (sw1, h1), (sw2, h2) = veths
    lab = Lab()
    lab.add("chain w match tcp.dport == 80: firewall -> l3fwd")
    try:
        lab.connect(f"bmv2?veth=1@{sw1},2@{sw2}")
        here = set(os.listdir("/sys/class/net"))
        assert {h1, h2} <= here and not {sw1, sw2} & here       # the switch's ends: inside
        lab.push()
        sent = lab.send("w", 2)
        assert [r.trace.nfs() for r in sent] == [["firewall", "l3fwd"]] * 2
        assert all(r.outputs for r in sent)
        for sock in lab.target.bmv2.listening():
            assert not sock.beyond_loopback(), sock
    finally:
        lab.close()
    for name in (sw1, sw2):
        assert open(f"/sys/class/net/{name}/operstate").read().strip() == "up"
        assert open(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").read().strip() == "1"
