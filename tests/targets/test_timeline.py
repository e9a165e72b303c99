"""A packet's per-pass timeline (sfclab.targets.traces.timeline) from real traces of the model."""

from __future__ import annotations

import pytest

from sfclab import Lab
from sfclab.targets.traces.timeline import timeline, timeline_text

CHAINS = """chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain sr match tcp.dport == 443 { input => sr_encap => (self : l3fwd ? sr_encap.global_counter < 3); l3fwd => output; }
"""


@pytest.fixture(scope="module")
def lab():
    lab = Lab(pipeline="naive")
    lab.add(CHAINS)
    yield lab
    lab.close()


def took(lab, chain: str, path: str):
    """The trace of a packet of *chain* that took *path*."""
    before = len(lab.traces)
    lab.send(chain, 2)
    return next(t.trace for t in lab.traces[before:] if t.path == path)


def test_one_pass_blocks_tables_entries_actions(lab):
    t = took(lab, "web", "web/0")
    (p,) = timeline(t, lab.value_kinds())
    assert [b.title for b in p.blocks] == ["classifier", "NF firewall", "branch after slot 0",
                                           "NF nat", "NF lb", "NF l3fwd", "rewinder"]
    cls = p.blocks[0].steps[0]
    assert (cls.table, cls.hit) == ("initializer", True)
    assert cls.entry == "hdr.ipv4.dst_addr=10.0.1.0/24 hdr.tcp.dst_port=80 priority=2"
    assert cls.action.startswith("set_token(path_id=1, bitmap=0b")
    route = p.blocks[5].steps[0]
    assert route.entry == "hdr.ipv4.dst_addr=10.0.1.0/24"
    assert route.action == "route(dmac=00:00:00:00:01:01, smac=00:00:00:00:00:fe, port=1)"
    assert (p.end, p.detail, p.end_text) == ("out", "1", "out on port 1")


def test_recirculations_end_a_pass_with_the_next_token(lab):
    t = took(lab, "sr", "sr/0")
    passes = timeline(t, lab.value_kinds())
    assert [p.end for p in passes] == ["recirculate"] * 3 + ["out"]
    assert passes[0].end_text == ("recirculate -> pass 1 (path_id=2, state=1, bitmap=0b10000, "
                                  "counter=1)").replace("path_id=2", f"path_id={_pid(passes)}")
    assert [b.title for b in passes[1].blocks] == ["NF sr_encap", "loop counter", "rewinder"]
    assert [b.title for b in passes[3].blocks] == ["NF l3fwd", "rewinder"]
    text = timeline_text(t, lab.value_kinds(), path="sr/0")
    assert text.splitlines()[0] == (f"packet {t.packet_id} [sr] sr/0: in on port 1, 4 passes, "
                                    "NFs sr_encap -> sr_encap -> sr_encap -> l3fwd, out on port 1")
    assert text.count("\npass ") == 4 and "  -> out on port 1" in text


def _pid(passes) -> str:
    first = passes[0].blocks[0].steps[0].action          # set_token(path_id=N, …)
    return first.split("path_id=")[1].split(",")[0]


def test_a_drop_ends_the_last_pass(lab):
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether

    r = lab.send_packet(Ether() / IP(dst="192.0.2.1") / TCP(dport=9), port=1)   # no class
    (p,) = timeline(r.trace)
    assert p.end == "drop" and p.end_text.startswith("dropped: ")
    assert p.blocks[0].steps[0].hit is False                   # the classifier missed


def test_the_rewinder_port_is_not_shown_as_where_the_packet_left():
    """Issue 22.4: a VLAN packet's trace showed the rewinder's `finish(terminal=0, port=1)`
    while the packet left on port 2 (l2fwd picked it). The rewinder's port is the chain's
    exit when no NF picks one: the timeline says so, and who picked the port."""
    from scapy.all import ARP, Dot1Q, Ether

    lab = Lab()
    lab.add("chain vlan match vlan.vid == 100: l2fwd -> qos -> monitor\n"
            "chain web match tcp.dport == 80: firewall -> l3fwd")
    try:
        lab.push()
        t = lab.send("vlan", 1)[0].trace
        (p,) = timeline(t, lab.value_kinds())
        (finish,) = [s for b in p.blocks if b.title == "rewinder" for s in b.steps]
        assert finish.action == "finish(terminal=0, port=1)" and t.egress_port == 2
        assert finish.text == "port 1 is the chain's exit when no NF picks one; l2fwd picked port 2"
        assert "l2fwd picked port 2" in timeline_text(t, lab.value_kinds())
        # where the rewinder's port is the one the packet leaves on, nothing is added
        web = lab.send("web", 1)[0].trace
        (p,) = timeline(web, lab.value_kinds())
        assert web.egress_port == 1 and not any(
            s.text for b in p.blocks if b.title == "rewinder" for s in b.steps)
        # issue 22.4: qos showed "no table" for a packet it applied no table to: say why
        arp = lab.send_packet(Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=100) / ARP()).trace
        (p,) = timeline(arp, lab.value_kinds())
        blocks = {b.title: b.steps for b in p.blocks}
        assert [str(s) for s in blocks["NF qos"]] == [
            "applied no table: hdr.ipv4.isValid() is false"]
        assert "(no table)" not in timeline_text(arp, lab.value_kinds())
    finally:
        lab.close()
