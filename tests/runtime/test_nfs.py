"""Every NF of the library on the embedded model, one behaviour per test (dpi, ips and
ipsec have no P4: they run on a server only).

Each test composes a small chain (the NF alone, or with a forwarder or the branch
that exposes its metadata), pushes it with empty NF tables
(``CodegenOptions(nf_entries="none")``), writes the entries it needs over
P4Runtime (``Session.entry`` / ``insert``, as a user would) and checks
what comes out to the byte: outputs and ports, drops, the branch the NF's
metadata picks, registers, counters, digests and packet-ins.  Expected packets
are built with scapy, which also recomputes every checksum.
"""

from __future__ import annotations

import pytest
from scapy.contrib.mpls import MPLS
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN

import sfclab
from sfclab.codegen import CodegenOptions, generate
from sfclab.runtime.encode import multicast_update
from sfclab.runtime.replication import FLOOD_GROUP_BASE
from sfclab.targets.model import ModelTarget

from nf_packets import assert_checksums_valid, crc16, crc32, flow_key

CPU = 255                                   # ModelTarget's CPU port
HOST_MAC, SWITCH_MAC = "00:00:00:00:00:01", "00:00:00:00:00:02"
NEXT_HOP_MAC, OUR_MAC = "00:00:00:00:01:01", "00:00:00:00:00:fe"


# --- set-up ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def target():
    with ModelTarget() as t:
        yield t


class Rig:
    """A chain set pushed with empty NF tables, and entries by NF type."""

    def __init__(self, target: ModelTarget, text: str, **compile_options) -> None:
        self.target = target
        self.compiled = sfclab.compile(text, **compile_options)
        self.gen = generate(self.compiled, options=CodegenOptions(nf_entries="none"))
        target.push(self.gen)
        self.sw = target.switch

    def instances(self, nf: str) -> list[str]:
        """``SfcIngress.slotN_nf`` for every slot running *nf*."""
        out = [f"SfcIngress.{s.instance}" for s in self.gen.composition.slots if s.nf == nf]
        assert out, f"no slot runs {nf}"
        return out

    def add(self, nf: str, table: str, match, action: str, params=None, *, priority=None):
        """Write the entry over P4Runtime in every slot of *nf* (fully qualified names;
        values as a user writes them: ``("0.0.0.0", 0)`` is a don't care, left out)."""
        session = self.target.session
        session.insert(*(session.entry(f"{inst}.{table}", match, f"{inst}.{action}", params,
                                       priority) for inst in self.instances(nf)))

    def name(self, nf: str, obj: str) -> str:
        """The fully qualified name of a register, counter or meter of *nf*'s only slot."""
        (inst,) = self.instances(nf)
        return f"{inst}.{obj}"

    def send(self, packet, port: int = 1):
        return self.target.send(port, packet)

    def path(self, result) -> str | None:
        """The service path the packet took (``f/0``)."""
        return self.target.session.path_of(result.trace)


# --- packets ----------------------------------------------------------------------------------

def eth(dst_mac: str = SWITCH_MAC, src_mac: str = HOST_MAC) -> Ether:
    return Ether(dst=dst_mac, src=src_mac)


def tcp(src="10.0.0.1", dst="10.0.1.5", sport=1234, dport=80, flags="S", ttl=64, **eth_kw):
    """A TCP segment with a payload; scapy fills in lengths and checksums."""
    return eth(**eth_kw) / IP(src=src, dst=dst, ttl=ttl) / TCP(sport=sport, dport=dport,
                                                              flags=flags) / b"hello"


def udp(src="10.0.0.1", dst="10.0.1.5", sport=1234, dport=53, tos=0, **eth_kw):
    return eth(**eth_kw) / IP(src=src, dst=dst, tos=tos) / UDP(sport=sport, dport=dport) / \
        b"hello"


def test_the_reference_hashes_are_the_standard_ones():
    assert crc16(b"123456789") == 0xBB3D and crc32(b"123456789") == 0xCBF43926
    p = tcp(src="1.2.3.4", dst="5.6.7.8", sport=0x0A0B, dport=0x0C0D)
    assert flow_key(p) == bytes([1, 2, 3, 4, 5, 6, 7, 8, 6, 0x0A, 0x0B, 0x0C, 0x0D])


# --- nat --------------------------------------------------------------------------------------

@pytest.fixture()
def nat(target):
    rig = Rig(target, "chain n: nat")
    rig.add("nat", "src_nat", {"hdr.ipv4.src_addr": "192.168.1.10"}, "translate",
            {"new_src": "203.0.113.10"}, priority=1)
    rig.add("nat", "src_nat", {"hdr.ipv4.src_addr": "192.168.1.11", "l4_sport": 8080},
            "translate_port", {"new_src": "203.0.113.10", "new_port": 40080}, priority=10)
    return rig


def test_nat_rewrites_the_tcp_source_address_and_keeps_the_checksum_valid(nat):
    r = nat.send(tcp(src="192.168.1.10", sport=5555))
    assert r.ports == [1]
    out = r.output()
    assert out == bytes(tcp(src="203.0.113.10", sport=5555))
    assert_checksums_valid(out)


@pytest.mark.parametrize("make", [tcp, udp], ids=["tcp", "udp"])
def test_nat_translate_port_rewrites_address_and_port(nat, make):
    r = nat.send(make(src="192.168.1.11", sport=8080))
    out = r.output()
    assert out == bytes(make(src="203.0.113.10", sport=40080))
    assert_checksums_valid(out)
    # the ternary port key: another source port of that host is not translated
    assert nat.send(make(src="192.168.1.11", sport=8081)).output() == \
        bytes(make(src="192.168.1.11", sport=8081))


def test_nat_leaves_a_udp_checksum_of_zero_alone(nat):
    p = udp(src="192.168.1.10")
    p[UDP].chksum = 0
    out = nat.send(p).output()
    expected = udp(src="203.0.113.10")
    expected[UDP].chksum = 0
    assert out == bytes(expected)


def test_nat_passes_untranslated_sources_unchanged(nat):
    p = tcp(src="192.168.1.99")
    assert nat.send(p).outputs == [(1, bytes(p))]


# --- firewall ---------------------------------------------------------------------------------

def test_firewall_deny_drops_the_denied_five_tuple_only(target):
    rig = Rig(target, "chain f: firewall")
    rig.add("firewall", "acl",
            {"hdr.ipv4.src_addr": ("10.0.0.1", 0xFFFFFFFF), "hdr.ipv4.dst_addr": "10.0.1.5",
             "hdr.ipv4.protocol": 6, "l4_sport": 1234, "l4_dport": 22}, "deny", priority=10)
    denied = tcp(src="10.0.0.1", dst="10.0.1.5", sport=1234, dport=22)
    r = rig.send(denied)
    assert r.dropped and r.trace.nfs() == ["firewall"]
    for other in (tcp(src="10.0.0.1", dst="10.0.1.5", sport=1234, dport=23),
                  tcp(src="10.0.0.2", dst="10.0.1.5", sport=1234, dport=22),
                  udp(src="10.0.0.1", dst="10.0.1.5", sport=1234, dport=22)):
        assert rig.send(other).outputs == [(1, bytes(other))]


def test_firewall_mark_sets_the_verdict_the_chain_branches_on(target):
    rig = Rig(target, "chain f { input => firewall => (l3fwd : drop ? firewall.verdict == 0);"
                      " l3fwd => output; }")
    rig.add("firewall", "acl", {"hdr.ipv4.protocol": 17, "l4_dport": 53}, "mark", priority=10)
    rig.add("l3fwd", "ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)}, "route",
            {"dmac": NEXT_HOP_MAC, "smac": OUR_MAC, "port": 2})
    marked = rig.send(udp(dport=53))
    assert marked.dropped and marked.trace.nfs() == ["firewall"]
    ok = rig.send(udp(dport=54))
    assert ok.trace.nfs() == ["firewall", "l3fwd"] and ok.ports == [2]
    assert rig.path(marked) != rig.path(ok)


# --- l3fwd ------------------------------------------------------------------------------------

@pytest.fixture()
def l3(target):
    rig = Rig(target, "chain r: l3fwd")
    rig.add("l3fwd", "ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)}, "route",
            {"dmac": "00:00:00:00:08:08", "smac": OUR_MAC, "port": 2})
    rig.add("l3fwd", "ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.1.0", 24)}, "route",
            {"dmac": "00:00:00:00:24:24", "smac": OUR_MAC, "port": 3})
    return rig


@pytest.mark.parametrize("dst, port, dmac", [("10.0.1.5", 3, "00:00:00:00:24:24"),
                                             ("10.0.2.5", 2, "00:00:00:00:08:08")])
def test_l3fwd_takes_the_longest_prefix_rewrites_macs_and_decrements_ttl(l3, dst, port, dmac):
    r = l3.send(tcp(dst=dst, ttl=64))
    assert r.ports == [port]
    out = r.output()
    assert out == bytes(tcp(dst=dst, ttl=63, dst_mac=dmac, src_mac=OUR_MAC))
    assert_checksums_valid(out)


def test_l3fwd_drops_without_a_route(l3):
    assert l3.send(tcp(dst="192.168.0.1")).dropped


@pytest.mark.parametrize("ttl, leaves", [(0, False), (1, False), (2, True)])
def test_l3fwd_drops_a_ttl_that_would_expire(l3, ttl, leaves):
    r = l3.send(tcp(dst="10.0.1.5", ttl=ttl))
    assert r.dropped is not leaves
    if leaves:
        assert Ether(r.output())[IP].ttl == ttl - 1
        assert_checksums_valid(r.output())


# --- l2fwd and flood --------------------------------------------------------------------------

@pytest.fixture()
def l2(target):
    rig = Rig(target, "chain s { input => l2fwd => (output : flood ? l2fwd.flood_flag == 0);"
                      " flood => output; }")
    rig.add("l2fwd", "mac_table", {"hdr.ethernet.dst_addr": "00:00:00:00:00:0b"}, "forward",
            {"port": 2})
    return rig


def test_l2fwd_forwards_a_known_mac_out_of_its_port(l2):
    p = eth(dst_mac="00:00:00:00:00:0b") / IP(dst="10.0.0.2") / b"x"
    r = l2.send(p, port=4)
    assert r.outputs == [(2, bytes(p))]
    assert r.trace.nfs() == ["l2fwd"]


@pytest.mark.parametrize("ingress", [1, 4, 8])
def test_l2fwd_miss_floods_out_of_every_port_but_the_ingress_port(l2, ingress):
    """Push wrote the flood groups: the model's ports are 1..8."""
    p = eth(dst_mac="00:00:00:00:00:0c") / IP(dst="10.0.0.2") / b"x"
    r = l2.send(p, port=ingress)
    assert r.trace.nfs() == ["l2fwd", "flood"]
    assert sorted(r.outputs) == [(q, bytes(p)) for q in range(1, 9) if q != ingress]


def test_flood_from_a_port_outside_the_port_set_takes_the_all_ports_group(l2):
    p = eth(dst_mac="00:00:00:00:00:0c") / IP(dst="10.0.0.2") / b"x"
    assert sorted(l2.send(p, port=20).ports) == list(range(1, 9))


def test_flood_floods_out_of_the_ports_the_target_has():
    with ModelTarget(ports=[2, 5, 7]) as t:
        Rig(t, "chain f: flood")
        r = t.send(5, tcp())
        assert sorted(r.ports) == [2, 7]
        assert [(g.id, g.ports) for g in t.session.read_groups()] == \
            [(1, (2, 5, 7)), (FLOOD_GROUP_BASE + 2, (5, 7)), (FLOOD_GROUP_BASE + 5, (2, 7)),
             (FLOOD_GROUP_BASE + 7, (2, 5))]


def test_flood_picks_the_group_of_the_vlan_over_the_port_default(l2):
    l2.add("flood", "flood_groups", {"vlan_id": 10}, "set_mcast_grp", {"grp": 10}, priority=10)
    l2.target.client.write([multicast_update("INSERT", 10, [5, 6])])
    tagged = eth(dst_mac="00:00:00:00:00:0c") / Dot1Q(vlan=10) / IP(dst="10.0.0.2") / b"x"
    assert sorted(l2.send(tagged, port=4).outputs) == [(5, bytes(tagged)), (6, bytes(tagged))]
    other = eth(dst_mac="00:00:00:00:00:0c") / Dot1Q(vlan=11) / IP(dst="10.0.0.2") / b"x"
    assert sorted(l2.send(other, port=4).ports) == [1, 2, 3, 5, 6, 7, 8]


# --- heavy_hitter -----------------------------------------------------------------------------

HH_CHAIN = ("chain hh { input => heavy_hitter => (cpu : l3fwd ? heavy_hitter.hitter_value >= 4);"
            " l3fwd => output; }")


def sketch_cells(p) -> list[int]:
    """The flow's cell in each row: CRC32, CRC16, and CRC32 of the reversed key + salt."""
    key = flow_key(p)
    reversed_key = key[11:13] + key[9:11] + key[8:9] + key[4:8] + key[0:4] + \
        (0x9E3779B9).to_bytes(4, "big")
    return [crc32(key) % 1024, crc16(key) % 1024, crc32(reversed_key) % 1024]


@pytest.fixture()
def hh(target):
    rig = Rig(target, HH_CHAIN)
    rig.add("heavy_hitter", "thresholds", {"hdr.ipv4.dst_addr": ("10.0.1.0", 24)},
            "set_threshold", {"packets": 4})
    rig.add("l3fwd", "ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)}, "route",
            {"dmac": NEXT_HOP_MAC, "smac": OUR_MAC, "port": 2})
    return rig


def test_heavy_hitter_branch_flips_at_the_threshold_with_one_digest(hh):
    p = tcp(src="10.0.0.1", dst="10.0.1.5", sport=1000, dport=80)
    results = [hh.send(p) for _ in range(6)]
    assert [r.ports for r in results] == [[2], [2], [2], [CPU], [CPU], [CPU]]
    assert [r.trace.nfs() for r in results[2:4]] == [["heavy_hitter", "l3fwd"], ["heavy_hitter"]]
    assert results[3].packet_ins[0].payload == bytes(p)
    digests = [d for r in results for d in r.digests]
    assert len(digests) == 1 and results[3].digests == digests      # exactly at the threshold
    assert digests[0].name == "heavy_hitter_digest_t"
    assert digests[0].data == {"src_addr": 0x0A000001, "dst_addr": 0x0A000105, "protocol": 6,
                               "src_port": 1000, "dst_port": 80, "estimate": 4}


def test_heavy_hitter_digests_only_at_the_threshold_of_the_destination(hh):
    """The branch is the chain's (>= 4 for every flow); the digest is the NF's, at the
    threshold its table gives the destination: HH_THRESHOLD (1000) without an entry."""
    p = tcp(src="10.0.0.1", dst="10.0.2.5")
    results = [hh.send(p) for _ in range(6)]
    assert [r.ports for r in results] == [[2], [2], [2], [CPU], [CPU], [CPU]]
    assert all(r.digests == [] for r in results)


@pytest.mark.parametrize("clean_row", [0, 1, 2])
def test_heavy_hitter_estimate_is_the_minimum_of_the_rows(hh, clean_row):
    """Other flows' counts in two rows (collisions) do not inflate the estimate."""
    p = tcp(src="10.0.0.1", dst="10.0.1.5", sport=1000, dport=80)
    for row, index in enumerate(sketch_cells(p)):
        if row != clean_row:
            hh.sw.write_register(hh.name("heavy_hitter", f"sketch_row{row}"), index, 50)
    results = [hh.send(p) for _ in range(4)]
    assert [r.ports for r in results] == [[2], [2], [2], [CPU]]
    assert [d.data["estimate"] for r in results for d in r.digests] == [4]


def test_heavy_hitter_sketch_rows_count_the_flow_in_its_hashed_cells(hh):
    p = tcp(src="10.0.0.1", dst="10.0.1.5", sport=1000, dport=80)
    for _ in range(3):
        hh.send(p)
    for row, index in enumerate(sketch_cells(p)):
        cells = hh.sw.read_register(hh.name("heavy_hitter", f"sketch_row{row}"))
        assert {i: v for i, v in enumerate(cells) if v} == {index: 3}, row


# --- stateful_firewall ------------------------------------------------------------------------

def test_stateful_firewall_drops_over_the_per_window_limit(target):
    rig = Rig(target, "chain s: stateful_firewall")
    rig.add("stateful_firewall", "limits", {"hdr.ipv4.src_addr": ("10.0.0.1", 0xFFFFFFFF)},
            "set_limit", {"limit": 3}, priority=10)
    p = tcp(src="10.0.0.1")
    t0 = 5_000_000                                   # µs; the window is 1 s

    def at(us):
        return rig.sw.process(1, p, now_us=us)

    assert [at(t0 + k).dropped for k in range(5)] == [False, False, False, True, True]
    index = crc32(flow_key(p)) % 4096
    assert rig.sw.read_register(rig.name("stateful_firewall", "window_start"), index) == t0
    assert rig.sw.read_register(rig.name("stateful_firewall", "window_count"), index) == 5
    assert at(t0 + 999_999).dropped                  # still the same window
    assert at(t0 + 1_000_000).outputs == [(1, bytes(p))]   # a new window
    assert rig.sw.read_register(rig.name("stateful_firewall", "window_count"), index) == 1
    other = tcp(src="10.0.0.2")                      # default limit (1000)
    assert not any(rig.sw.process(1, other, now_us=t0 + 1_000_000 + k).dropped
                   for k in range(5))


# --- lb ---------------------------------------------------------------------------------------

@pytest.fixture()
def lb(target):
    rig = Rig(target, "chain l { input => lb => (output : cpu ? lb.backend != 0); }")
    for lo, hi, ip, bid in ((0, 127, "10.0.1.1", 1), (128, 255, "10.0.1.2", 2)):
        rig.add("lb", "backends", {"hdr.ipv4.dst_addr": "10.0.0.100", "bucket": (lo, hi)},
                "set_backend", {"backend_ip": ip, "backend_id": bid}, priority=1)
    return rig


@pytest.mark.parametrize("make", [tcp, udp], ids=["tcp", "udp"])
def test_lb_spreads_flows_by_their_hash_and_rewrites_the_destination(lb, make):
    seen = set()
    for sport in range(1000, 1016):
        p = make(dst="10.0.0.100", sport=sport)
        bucket = crc16(flow_key(p)) % 256
        backend = "10.0.1.1" if bucket <= 127 else "10.0.1.2"
        outs = [lb.send(p).output() for _ in range(2)]           # same flow, same backend
        assert outs[0] == outs[1] == bytes(make(dst=backend, sport=sport))
        assert_checksums_valid(outs[0])
        seen.add(backend)
    assert seen == {"10.0.1.1", "10.0.1.2"}


def test_lb_leaves_other_destinations_with_backend_zero(lb):
    p = tcp(dst="10.0.0.101")
    r = lb.send(p)
    assert r.ports == [CPU] and r.packet_ins[0].payload == bytes(p)


# --- ids --------------------------------------------------------------------------------------

@pytest.fixture()
def ids(target):
    rig = Rig(target, "chain i { input => ids => (cpu : output ? ids.verdict == 1); }")
    rig.add("ids", "signatures", {"hdr.ipv4.protocol": 6, "l4_dport": 23,
                                  "tcp_flags": (0x02, 0x12), "hdr.ipv4.total_len": (0, 65535)},
            "alert", priority=10)
    rig.add("ids", "signatures", {"hdr.ipv4.protocol": 1, "hdr.ipv4.total_len": (1500, 65535)},
            "alert_drop", priority=20)
    return rig


def test_ids_signature_hit_sets_the_verdict(ids):
    syn = tcp(dport=23, flags="S")
    r = ids.send(syn, port=3)
    assert r.ports == [CPU] and r.packet_ins[0].payload == bytes(syn)
    for benign in (tcp(dport=23, flags="SA"), tcp(dport=24, flags="S")):
        assert ids.send(benign).outputs == [(1, bytes(benign))]


def test_ids_alert_drop_drops_oversized_icmp(ids):
    big = eth() / IP(dst="10.0.1.5") / ICMP() / bytes(1500)
    small = eth() / IP(dst="10.0.1.5") / ICMP() / bytes(100)
    assert ids.send(big).dropped
    assert ids.send(small).outputs == [(1, bytes(small))]


# --- ipsg -------------------------------------------------------------------------------------

def test_ipsg_drops_a_source_not_bound_to_the_ingress_port(target):
    rig = Rig(target, "chain g: ipsg")
    rig.add("ipsg", "bindings", {"sfc.ingress_port": 1, "hdr.ipv4.src_addr": "10.0.0.1"},
            "allowed")
    good = tcp(src="10.0.0.1")
    assert rig.send(good, port=1).outputs == [(1, bytes(good))]
    assert rig.send(good, port=2).dropped                       # right address, wrong port
    assert rig.send(tcp(src="10.0.0.9"), port=1).dropped        # unbound address
    arp = eth(dst_mac="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.9")
    assert rig.send(arp, port=2).outputs == [(1, bytes(arp))]   # not IPv4: not guarded


# --- mac_learning -----------------------------------------------------------------------------

def test_mac_learning_digests_an_unknown_source_mac_with_its_port(target):
    rig = Rig(target, "chain m: mac_learning")
    rig.add("mac_learning", "known_macs",
            {"hdr.ethernet.src_addr": "00:00:00:00:00:0a", "sfc.ingress_port": 1}, "known")
    known = eth(src_mac="00:00:00:00:00:0a") / IP() / b"x"
    r = rig.send(known, port=1)
    assert r.digests == [] and r.outputs == [(1, bytes(known))]
    r = rig.send(known, port=3)                                  # known MAC, new port
    assert [(d.name, d.data) for d in r.digests] == \
        [("mac_learn_digest_t", {"mac": 0x00000000000A, "port": 3})]
    unknown = eth(src_mac="00:00:00:00:00:0b") / IP() / b"x"
    r = rig.send(unknown, port=2)
    assert [d.data for d in r.digests] == [{"mac": 0x00000000000B, "port": 2}]
    assert r.outputs == [(1, bytes(unknown))]                    # learning does not divert


# --- reporter ---------------------------------------------------------------------------------

def test_reporter_sends_matching_packets_to_the_cpu_with_the_ingress_port(target):
    rig = Rig(target, "chain r: reporter -> router")
    rig.add("reporter", "report_rules", {"hdr.ipv4.protocol": 6, "l4_dport": 22}, "report",
            priority=10)
    rig.add("router", "routes", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)}, "set_nexthop",
            {"dmac": NEXT_HOP_MAC, "port": 2})
    ssh = tcp(dport=22)
    r = rig.send(ssh, port=3)
    assert r.ports == [CPU] and r.trace.nfs() == ["reporter"]   # diverted: router skipped
    (pin,) = r.packet_ins
    assert pin.payload == bytes(ssh)
    assert pin.metadata["ingress_port"] == 3 and pin.metadata["reason"] == 1   # CPU_REASON_NF
    r = rig.send(tcp(dport=80), port=3)
    assert r.packet_ins == [] and r.outputs == [(2, bytes(tcp(dport=80, dst_mac=NEXT_HOP_MAC)))]


# --- qos --------------------------------------------------------------------------------------

QOS_CHAIN = "chain q { input => qos => (cpu : output ? qos.color == 2); }"
RTP = {"hdr.ipv4.protocol": 17, "l4_dport": 5004}


def test_qos_marks_dscp_and_leaves_unclassified_packets(target):
    rig = Rig(target, QOS_CHAIN)
    rig.add("qos", "dscp_marking", RTP, "set_dscp", {"dscp": 46, "policer": 1}, priority=10)
    p = udp(dport=5004)
    out = rig.send(p).output()
    assert out == bytes(udp(dport=5004, tos=46 << 2))
    assert_checksums_valid(out)
    other = udp(dport=5005)
    assert rig.send(other).outputs == [(1, bytes(other))]


def _tiny_meter(rig, policer: int, nbytes: int) -> None:
    """A byte meter that lets *nbytes* through, then (at 1 B/s) turns red."""
    rig.sw.set_meter(rig.name("qos", "policers"), policer, cir=1, cburst=nbytes, pir=1,
                     pburst=nbytes)


def test_qos_meter_turns_later_packets_red_and_remarks_them(target):
    rig = Rig(target, QOS_CHAIN)
    rig.add("qos", "dscp_marking", RTP, "set_dscp_remark", {"dscp": 46, "policer": 3, "red": 8},
            priority=10)
    p = udp(dport=5004)
    _tiny_meter(rig, 3, len(p))
    first, second, third = (rig.send(p) for _ in range(3))
    assert first.ports == [1] and Ether(first.output())[IP].tos == 46 << 2     # green
    for red in (second, third):                                   # color 2: the cpu branch
        assert red.ports == [CPU]
        assert Ether(red.packet_ins[0].payload)[IP].tos == 8 << 2
        assert_checksums_valid(red.packet_ins[0].payload)


def test_qos_meter_drops_red_packets_without_a_remark_class(target):
    rig = Rig(target, QOS_CHAIN)
    rig.add("qos", "dscp_marking", RTP, "set_dscp", {"dscp": 46, "policer": 3}, priority=10)
    p = udp(dport=5004)
    _tiny_meter(rig, 3, len(p))
    assert [rig.send(p).dropped for _ in range(3)] == [False, True, True]


# --- vgw --------------------------------------------------------------------------------------

VTEP, REMOTE_VTEP = "192.0.2.1", "192.0.2.2"


def test_vgw_decapsulates_vxlan_with_a_known_vni(target):
    rig = Rig(target, "chain v: vgw")
    rig.add("vgw", "vxlan_decap", {"hdr.vxlan.vni": 5000, "hdr.ipv4.dst_addr": VTEP}, "decap")
    inner = Ether(dst="00:00:00:00:0a:01", src="00:00:00:00:0a:02") / \
        IP(src="172.16.5.2", dst="172.16.5.1") / UDP(sport=1000, dport=2000) / b"payload"

    def vxlan(vni):
        return eth(dst_mac=OUR_MAC, src_mac="00:00:00:00:02:01") / \
            IP(src=REMOTE_VTEP, dst=VTEP) / UDP(sport=50000, dport=4789) / VXLAN(vni=vni) / inner

    assert rig.send(vxlan(5000)).outputs == [(1, bytes(inner))]
    unknown = vxlan(5001)
    assert rig.send(unknown).outputs == [(1, bytes(unknown))]


def test_vgw_encapsulates_a_tenant_packet_towards_the_remote_vtep(target):
    rig = Rig(target, "chain v: vgw")
    rig.add("vgw", "vxlan_encap", {"hdr.ipv4.dst_addr": ("172.16.5.0", 24)}, "encap",
            {"vni": 5000, "vtep_src": VTEP, "vtep_dst": REMOTE_VTEP, "outer_smac": OUR_MAC,
             "outer_dmac": "00:00:00:00:02:01"})
    inner = Ether(dst="00:00:00:00:0a:01", src="00:00:00:00:0a:02") / \
        IP(src="10.0.0.7", dst="172.16.5.1", proto=253) / b"payload"   # no L4 header parsed
    out = rig.send(inner).output()
    entropy = crc16(bytes([10, 0, 0, 7, 172, 16, 5, 1, 253])) | 0xC000
    expected = Ether(dst="00:00:00:00:02:01", src=OUR_MAC) / \
        IP(src=VTEP, dst=REMOTE_VTEP, id=0, ttl=64) / \
        UDP(sport=entropy, dport=4789, chksum=0) / VXLAN(flags=0x08, vni=5000) / inner
    assert out == bytes(expected)


# --- sr_encap ---------------------------------------------------------------------------------

SR_CHAIN = ("chain sr { input => sr_encap => (self : l3fwd ? sr_encap.global_counter < 3);"
            " l3fwd => output; }")


@pytest.mark.parametrize("pipeline", ["naive", "mafsa"])   # 3 passes, or 3 slots in one pass
def test_sr_encap_pushes_one_label_per_loop_run(target, pipeline):
    rig = Rig(target, SR_CHAIN, pipeline=pipeline)
    (plan,) = rig.compiled.fsm.paths
    for run in range(3):
        rig.add("sr_encap", "segments", {"sfc.path_id": plan.num, "sfc.counter": run},
                "push_label", {"segment": 16001 + run})
    rig.add("l3fwd", "ipv4_lpm", {"hdr.ipv4.dst_addr": ("10.0.0.0", 8)}, "route",
            {"dmac": NEXT_HOP_MAC, "smac": OUR_MAC, "port": 2})
    p = tcp(dst="10.0.1.5")
    r = rig.send(p)
    assert r.passes == plan.passes
    assert r.trace.nfs() == ["sr_encap"] * 3 + ["l3fwd"]
    routed = p[IP].copy()
    routed.ttl -= 1                                  # l3fwd, after the labels
    expected = Ether(dst=NEXT_HOP_MAC, src=OUR_MAC) / \
        MPLS(label=16003, s=0, ttl=64) / MPLS(label=16002, s=0, ttl=64) / \
        MPLS(label=16001, s=1, ttl=64) / routed
    assert r.outputs == [(2, bytes(expected))]


@pytest.mark.parametrize("tagged", [False, True], ids=["untagged", "vlan"])
def test_sr_encap_first_label_turns_the_ethertype_into_mpls(target, tagged):
    rig = Rig(target, "chain sr: sr_encap")
    (plan,) = rig.compiled.fsm.paths
    rig.add("sr_encap", "segments", {"sfc.path_id": plan.num, "sfc.counter": 0}, "push_label",
            {"segment": 16001})
    ip = tcp()[IP]
    head = eth() / Dot1Q(vlan=7) if tagged else eth()
    out = rig.send(head / ip).output()
    assert out == bytes(head / MPLS(label=16001, s=1, ttl=64) / ip)
    assert (Ether(out)[Dot1Q] if tagged else Ether(out)).type == 0x8847


def test_sr_encap_stops_at_four_labels(target):
    rig = Rig(target, "chain sr: sr_encap")
    (plan,) = rig.compiled.fsm.paths
    rig.add("sr_encap", "segments", {"sfc.path_id": plan.num, "sfc.counter": 0}, "push_label",
            {"segment": 99})
    p = tcp()
    stack = eth() / MPLS(label=1, s=0) / MPLS(label=2, s=0) / MPLS(label=3, s=0) / \
        MPLS(label=4, s=1) / p[IP]
    assert rig.send(stack).outputs == [(1, bytes(stack))]
    three = eth() / MPLS(label=2, s=0) / MPLS(label=3, s=0) / MPLS(label=4, s=1) / p[IP]
    assert rig.send(three).output() == bytes(
        eth() / MPLS(label=99, s=0, ttl=64) / three[MPLS])


# --- monitor ----------------------------------------------------------------------------------

def test_monitor_counts_packets_and_bytes_per_entry_and_per_flow_bucket(target):
    rig = Rig(target, "chain m: monitor")
    rig.add("monitor", "flows", {"hdr.ipv4.src_addr": ("10.0.0.0", 0xFFFF0000)}, "count_flow",
            priority=10)
    inside, outside = tcp(src="10.0.3.3"), tcp(src="10.1.0.1", dport=443)
    for p in (inside, inside, outside):
        assert rig.send(p).outputs == [(1, bytes(p))]
    (entry,) = rig.sw.entries(rig.name("monitor", "flows"))
    assert (entry.packets, entry.bytes) == (2, 2 * len(inside))
    buckets = rig.sw.read_counter(rig.name("monitor", "flow_buckets"))
    expected = {crc32(flow_key(inside)) % 1024: (2, 2 * len(inside)),
                crc32(flow_key(outside)) % 1024: (1, len(outside))}
    assert len(expected) == 2
    assert {i: c for i, c in enumerate(buckets) if c != (0, 0)} == expected


# --- classifier and router --------------------------------------------------------------------

def test_classifier_class_picks_the_branch(target):
    rig = Rig(target, "chain c { input => classifier => (1@output : 2@cpu # classifier.class_id);"
                      " }")
    rig.add("classifier", "classes", {"hdr.ipv4.protocol": 6, "l4_dport": 80}, "set_class",
            {"class_id": 1}, priority=10)
    rig.add("classifier", "classes", {"hdr.ipv4.src_addr": ("10.0.2.0", 0xFFFFFF00)},
            "set_class", {"class_id": 2}, priority=5)
    web, from_lab = tcp(dport=80), udp(src="10.0.2.7")
    assert rig.send(web).outputs == [(1, bytes(web))]
    r = rig.send(from_lab)
    assert r.ports == [CPU] and r.packet_ins[0].payload == bytes(from_lab)
    both = tcp(src="10.0.2.7", dport=80)                     # the higher priority wins
    assert rig.send(both).ports == [1]
    assert rig.path(rig.send(web)) != rig.path(r)


def test_router_sets_the_next_hop_mac_and_port_only(target):
    rig = Rig(target, "chain r: router")
    rig.add("router", "routes", {"hdr.ipv4.dst_addr": ("0.0.0.0", 0)}, "set_nexthop",
            {"dmac": "00:00:00:00:00:aa", "port": 4})
    rig.add("router", "routes", {"hdr.ipv4.dst_addr": ("10.0.1.0", 24)}, "set_nexthop",
            {"dmac": "00:00:00:00:00:bb", "port": 5})
    p = tcp(dst="10.0.1.5")
    assert rig.send(p).outputs == [(5, bytes(tcp(dst="10.0.1.5", dst_mac="00:00:00:00:00:bb")))]
    q = tcp(dst="8.8.8.8")
    assert rig.send(q).outputs == [(4, bytes(tcp(dst="8.8.8.8", dst_mac="00:00:00:00:00:aa")))]
    rig.sw.delete(rig.name("router", "routes"), {"hdr.ipv4.dst_addr": ("0.0.0.0", 0)})
    assert rig.send(q).dropped
