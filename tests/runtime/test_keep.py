"""A program reload keeps the entries sfclab did not generate -- the user's own
(``session.insert``) and what a controller learned (written straight to the switch, as
mac_learning's controller writes ``known_macs``) -- in the new program, under their
slots' new names; those that cannot go there are dropped, and the reload names each and
says why.  A plain push replaces everything, as before."""

from __future__ import annotations

import pytest
from scapy.all import IP, TCP, Ether

from sfclab.lab import Lab

FIRST = ("chain m match udp.dport == 53: mac_learning -> l3fwd\n"
         "chain f match tcp.dport == 443: firewall -> l3fwd")
#: vgw takes slot 1: firewall moves from slot 1 to slot 2 (mac_learning stays in 0)
RENUMBER = "chain v match udp.dport == 54: vgw -> l3fwd"
WEB = Ether(src="00:00:00:00:00:0a", dst="00:00:00:00:00:02") / \
    IP(src="192.168.1.11", dst="10.0.1.5") / TCP(sport=999, dport=443)


@pytest.fixture
def lab():
    lab = Lab()
    lab.add(FIRST)
    lab.push()
    s = lab.target.session
    # the user's own: deny 192.168.1.11 -> 10.0.1.5 in firewall's ACL
    s.insert(s.entry("SfcIngress.slot1_firewall.acl",
                     {"hdr.ipv4.src_addr": "192.168.1.11 &&& 255.255.255.255",
                      "hdr.ipv4.dst_addr": "10.0.1.5 &&& 255.255.255.255"},
                     "SfcIngress.slot1_firewall.deny", priority=10))
    # a controller's: a learned (MAC, port) pair, written past the session
    learned = s.entry("SfcIngress.slot0_mac_learning.known_macs",
                      {"hdr.ethernet.src_addr": 0x0A, "sfc.ingress_port": 1},
                      "SfcIngress.slot0_mac_learning.known")
    s.client.write([s.index.update("INSERT", learned)])
    assert not lab.send_packet(WEB).outputs                 # the user's deny holds
    yield lab
    lab.close()


def _mine(lab) -> list[tuple[str, str]]:
    """(table, action) of the switch's entries sfclab did not generate."""
    s = lab.target.session
    return sorted((e.table, e.action) for e in s.read_entries()
                  if (e.table, e.match, e.priority) not in s.installed)


def test_a_reload_keeps_your_entries_and_the_learned_ones_under_their_new_slots(lab):
    lab.add(RENUMBER)
    plan = lab.update(allow_reload=True)
    assert plan.done and plan.kind == "reload"
    assert _mine(lab) == [
        ("SfcIngress.slot0_mac_learning.known_macs", "SfcIngress.slot0_mac_learning.known"),
        ("SfcIngress.slot2_firewall.acl", "SfcIngress.slot2_firewall.deny")]
    assert ("kept 1 entry of your own and 1 learned entry (SfcIngress.slot2_firewall.acl, "
            "SfcIngress.slot0_mac_learning.known_macs)") in str(plan)
    assert not lab.send_packet(WEB).outputs                 # still denied after the reload
    s = lab.target.session
    assert [e.table for e in s.own.values()] == ["SfcIngress.slot2_firewall.acl"]


def test_a_reload_names_each_entry_it_drops_and_why(lab):
    import sfclab
    from sfclab.codegen import generate

    s = lab.target.session                   # firewall's slot is gone from the new program
    gen = generate(sfclab.compile(FIRST.splitlines()[0] + "\n" + RENUMBER))
    plan = s.update(gen, allow_reload=True)
    assert ("dropped 1: your entry SfcIngress.slot1_firewall.acl: "
            "hdr.ipv4.src_addr=") in str(plan)
    assert ("(its table SfcIngress.slot1_firewall.acl is not in the new program; no slot of "
            "the new program runs firewall as slot1_firewall did)") in str(plan)
    assert "kept 1 learned entry (SfcIngress.slot0_mac_learning.known_macs)" in str(plan)
    assert _mine(lab) == [("SfcIngress.slot0_mac_learning.known_macs",
                           "SfcIngress.slot0_mac_learning.known")]
    assert s.own == {}


def test_an_entry_whose_table_changed_its_key_is_dropped_saying_so(lab):
    """firewall redefined without l4_dport in its ACL's key: the user's ACL entry no
    longer fits, and the reload says which table's key changed."""
    from pathlib import Path

    import sfclab

    src = (Path(sfclab.__file__).parent / "_p4" / "nf" / "firewall.p4")
    if not src.exists():
        src = Path(sfclab.__file__).parents[1] / "p4" / "nf" / "firewall.p4"
    text = src.read_text().replace("l4_dport : ternary;", "")
    lab.add_nf(text, replace=True)
    plan = lab.update(allow_reload=True)
    assert "(the key of SfcIngress.slot1_firewall.acl changed)" in str(plan)
    assert "kept 1 learned entry" in str(plan)


def test_a_plain_push_still_replaces_everything(lab):
    lab.push()
    assert _mine(lab) == [] and lab.target.session.own == {}
    assert not lab.target.session.kept


def test_a_tna_reload_leaves_the_programs_const_entries_alone():
    """The TNA program's ``pass_end`` tables (one per pipe) hold const entries, which a
    read returns too: a reload took them for learned ones and reported 16 "dropped …
    PERMISSION_DENIED … is a const table" (found by the held-out probes, h-unseen3)."""
    lab = Lab(arch="tna")
    try:
        lab.set_chains("chain a match tcp.dport == 80: firewall -> l3fwd\n"
                       "chain b match udp.dport == 53: monitor -> l3fwd\n")
        lab.push()
        lab.add("chain c match tcp.dport == 8080: monitor -> firewall -> l3fwd")
        said = str(lab.update(allow_reload=True))
        assert said.startswith("reloaded the program") and "dropped" not in said, said
        lab.send("c", 1)
        assert lab.traces[-1].path == "c/0" and lab.traces[-1].result.outputs
    finally:
        lab.close()
