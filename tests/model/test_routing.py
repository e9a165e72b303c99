"""LPM routing with TTL decrement, IPv4 checksum verification and update."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from sfclab.targets.model import InvalidValueError, ModelSwitch

from .conftest import ETH_IPV4, v1model

FIELDS = """{ hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst }"""

ROUTER = v1model(
    ETH_IPV4,
    """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
    """,
    """
    action drop() { mark_to_drop(sm); }
    action route(bit<9> port, bit<48> dmac) {
        sm.egress_spec = port;
        hdr.ethernet.src = hdr.ethernet.dst;
        hdr.ethernet.dst = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst : lpm; }
        actions = { route; drop; }
        default_action = drop();
    }
    apply {
        if (sm.checksum_error == 1) {
            drop();
        } else if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
    """,
    headers="ethernet_t ethernet; ipv4_t ipv4;",
    verify=f"apply {{ verify_checksum(hdr.ipv4.isValid(), {FIELDS}, hdr.ipv4.checksum, "
           f"HashAlgorithm.csum16); }}",
    compute=f"apply {{ update_checksum(hdr.ipv4.isValid(), {FIELDS}, hdr.ipv4.checksum, "
            f"HashAlgorithm.csum16); }}",
)

ROUTER_MAC = "00:00:00:00:00:aa"


@pytest.fixture
def sw() -> ModelSwitch:
    s = ModelSwitch(ROUTER)
    s.insert("I.ipv4_lpm", [("10.0.0.0", 8)], "I.route", [1, 0x111111111111])
    s.insert("I.ipv4_lpm", [("10.1.0.0", 16)], "I.route", [2, 0x222222222222])
    s.insert("I.ipv4_lpm", {"hdr.ipv4.dst": ("10.1.2.0", 24)}, "I.route", [3, 0x333333333333])
    return s


def packet(dst: str, ttl: int = 64):
    return (Ether(dst=ROUTER_MAC, src="00:00:00:00:00:01")
            / IP(src="192.168.0.1", dst=dst, ttl=ttl) / TCP(sport=1234, dport=80) / b"payload")


def expected(dst: str, dmac: str, ttl: int = 63) -> bytes:
    p = packet(dst)
    p[Ether].src, p[Ether].dst = ROUTER_MAC, dmac
    p[IP].ttl = ttl
    del p[IP].chksum            # scapy recomputes it
    return bytes(p)


@pytest.mark.parametrize("dst,port,dmac", [
    ("10.1.2.3", 3, "33:33:33:33:33:33"),
    ("10.1.9.9", 2, "22:22:22:22:22:22"),
    ("10.9.9.9", 1, "11:11:11:11:11:11"),
])
def test_longest_prefix_wins_and_ttl_and_checksum_are_rewritten(sw, dst, port, dmac):
    r = sw.process(5, packet(dst))
    assert r.outputs == [(port, expected(dst, dmac))]
    assert Ether(r.outputs[0][1])[IP].chksum == Ether(expected(dst, dmac))[IP].chksum
    checks = [e for e in r.trace.events if e.kind == "checksum"]
    assert [c.value for c in checks][0] == "ok"


def test_no_route_drops(sw):
    r = sw.process(5, packet("11.0.0.1"))
    assert r.dropped and r.trace.drop_reason == "mark_to_drop() in action I.drop"


def test_ttl_1_is_dropped_and_the_condition_is_traced(sw):
    r = sw.process(5, packet("10.1.2.3", ttl=1))
    assert r.dropped
    conds = [(e.name, e.value) for e in r.trace.events if e.kind == "condition"]
    assert conds == [("sm.checksum_error == 1", False),
                     ("hdr.ipv4.isValid() && hdr.ipv4.ttl > 1", False)]


def test_bad_checksum_sets_checksum_error(sw):
    p = packet("10.1.2.3")
    p[IP].chksum = 0x1234
    r = sw.process(5, p)
    assert r.dropped
    check = next(e for e in r.trace.events if e.kind == "checksum")
    assert check.value.startswith("bad")


def test_prefix_with_host_bits_is_refused(sw):
    with pytest.raises(InvalidValueError, match="bits set beyond the prefix"):
        sw.insert("I.ipv4_lpm", [("10.1.2.3", 24)], "I.drop")
    with pytest.raises(InvalidValueError, match="prefix length 33"):
        sw.insert("I.ipv4_lpm", [("10.0.0.0", 33)], "I.drop")


def test_default_route_and_delete(sw):
    sw.insert("I.ipv4_lpm", [("0.0.0.0", 0)], "I.route", [9, 0x999999999999])
    assert sw.process(5, packet("11.0.0.1")).ports == [9]
    sw.delete("I.ipv4_lpm", [("10.1.2.0", 24)])
    assert sw.process(5, packet("10.1.2.3")).ports == [2]


def test_non_ipv4_is_dropped_without_checksum(sw):
    r = sw.process(5, Ether(dst=ROUTER_MAC, type=0x86DD) / (b"\x60" + bytes(39)))
    assert r.dropped
    assert not [e for e in r.trace.events if e.kind == "checksum"]
