"""Every switch NF of the library, pushed the way a user pushes it: ``Lab().push()``
(program, the manifests' example entries, flood's replication groups, all over
P4Runtime to the embedded model), then the chain's class traffic
(:func:`~sfclab.runtime.traffic.packets_for`) checked against what the NF's P4
documents, with its example entries: forwarded with the right rewrite, dropped,
flooded to every port but the ingress, digested, sent to the CPU.

Each NF runs alone and in the middle of a chain (``l2fwd -> NF -> l3fwd`` or
whatever shows its effect); ``test_nfs.py`` checks each NF in depth with entries
written for the purpose.  Expected frames are built with scapy, which recomputes
every checksum.
"""

from __future__ import annotations

from socket import inet_aton

import pytest
from scapy.contrib.mpls import MPLS
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

import sfclab
from sfclab.runtime.traffic import packets_for

from nf_packets import crc16, flow_key, with_checksums_recomputed

CPU = 255
PORTS = range(1, 9)                  # the model's ports
OUR_MAC = "00:00:00:00:00:fe"        # l3fwd's and router's example source / next-hop MAC
L3_NEAR = ("00:00:00:00:01:01", 1)   # l3fwd's example routes: 10.0.1.0/24
L3_FAR = ("00:00:00:00:02:01", 2)    #                         10.0.0.0/8


# --- expected frames ----------------------------------------------------------------------------

def fixed(p) -> bytes:
    """*p* as bytes with its checksums recomputed."""
    return with_checksums_recomputed(bytes(p))


def routed(p, hop=L3_NEAR, smac: str = OUR_MAC):
    """*p* after an l3fwd route (or, with *smac* None, the router's next hop)."""
    q = Ether(bytes(p))
    q[Ether].dst = hop[0]
    if smac is not None:
        q[Ether].src = smac
        q[IP].ttl -= 1
    return q


def backend(p) -> str:
    """lb's example pool: buckets 0..127 -> 10.0.1.1, 128..255 -> 10.0.1.2."""
    return "10.0.1.1" if crc16(flow_key(p)) % 256 <= 127 else "10.0.1.2"


# --- what the NF's P4 says happens to each class packet -----------------------------------------

def outputs(expect):
    """Each packet leaves as *expect(p, port)* says: [(port, frame or scapy)]."""
    def check(sent, lab):
        for p, port, r in sent:
            want = [(q, f if isinstance(f, bytes) else fixed(f)) for q, f in expect(p, port)]
            assert sorted(r.outputs) == sorted(want), r.trace.text()
    return check


def unchanged(port: int = 1):
    return outputs(lambda p, _: [(port, bytes(p))])


def dropped(*nfs: str):
    def check(sent, lab):
        for _, _, r in sent:
            assert r.dropped and r.outputs == [], r.trace.text()
            assert r.trace.nfs() == list(nfs)
    return check


def to_cpu(*nfs: str):
    """Sent to the controller as a packet-in carrying the ingress port; *nfs* ran."""
    def check(sent, lab):
        for p, port, r in sent:
            assert r.ports == [CPU], r.trace.text()
            (pin,) = r.packet_ins
            assert pin.payload == bytes(p) and pin.metadata["ingress_port"] == port
            assert r.trace.nfs() == list(nfs)
    return check


def digests(name: str, data):
    def check(sent, lab):
        for p, port, r in sent:
            assert [(d.name, d.data) for d in r.digests] == [(name, data(p, port))]
    return check


def no_digest(sent, lab):
    assert all(r.digests == [] for _, _, r in sent)


def flooded(frame=lambda p: p):
    """Out of every port of the switch but the one the packet came in on."""
    return outputs(lambda p, port: [(q, frame(p)) for q in PORTS if q != port])


def both(*checks):
    def check(sent, lab):
        for c in checks:
            c(sent, lab)
    return check


def counted(counter: str, n: int):
    """The NF's indirect counter *counter* counted *n* packets in all."""
    def check(sent, lab):
        (cells,) = [v for k, v in lab.counters().items() if k.endswith(counter)]
        assert sum(pk for _, pk, _ in cells) == n
    return check


def decapsulated(p):
    return p[VXLAN].payload


def mpls(p, *labels):
    """*p* with *labels* pushed (the first the bottom of the stack)."""
    q = Ether(bytes(p))
    ip = q[IP]
    stack = None
    for i, label in enumerate(labels):
        m = MPLS(label=label, s=1 if i == 0 else 0, ttl=64)
        stack = m if stack is None else m / stack
    return Ether(dst=q.dst, src=q.src) / stack / ip


def _with_dst(p, dst: str):
    q = Ether(bytes(p))
    q[IP].dst = dst
    return q


def _with_src(p, src: str):
    q = Ether(bytes(p))
    q[IP].src = src
    return q


def _with_dscp(p, dscp: int):
    q = Ether(bytes(p))
    q[IP].tos = dscp << 2 | (q[IP].tos & 3)
    return q


def _learned(p, port):
    return {"mac": int(p[Ether].src.replace(":", ""), 16), "port": port}


def _vxlan(p):
    """vgw's example encapsulation of *p* (VNI 5000, 192.0.2.1 -> 192.0.2.2)."""
    ip = p[IP]
    entropy = crc16(inet_aton(ip.src) + inet_aton(ip.dst) + bytes([ip.proto])) | 0xC000
    return Ether(dst="00:00:00:00:02:01", src=OUR_MAC) / \
        IP(src="192.0.2.1", dst="192.0.2.2", id=0, ttl=64) / \
        UDP(sport=entropy, dport=4789, chksum=0) / VXLAN(flags=0x08, vni=5000) / p


VIP = "ipv4.dst == 10.0.0.100"
FLOW = "ipv4.src == 10.0.0.1 && ipv4.dst == 10.0.1.5 && tcp.sport == 1000 && tcp.dport == 80"
TUNNEL = "vxlan.vni == 5000 && ipv4.dst == 192.0.2.1"

#: NF -> {"alone" / "mid": (chain set, {chain: check of its class traffic})}
CASES = {
    "classifier": {
        "alone": ("chain web match tcp.dport == 80 {"
                  " input => classifier => (1@output : 2@cpu # classifier.class_id); }\n"
                  "chain lab match ipv4.src == 10.0.2.0/24 && udp.dport == 53 {"
                  " input => classifier => (1@output : 2@cpu # classifier.class_id); }",
                  {"web": unchanged(), "lab": to_cpu("classifier")}),
        "mid": ("chain web match tcp.dport == 80 { input => l2fwd => classifier =>"
                " (1@l3fwd : 2@cpu # classifier.class_id); l3fwd => output; }",
                {"web": outputs(lambda p, _: [(1, routed(p))])}),
    },
    "firewall": {
        "alone": ("chain bad match ipv4.src == 10.0.0.0/8 && ipv4.proto == 6: firewall\n"
                  "chain ok: firewall",
                  {"bad": dropped("firewall"), "ok": unchanged()}),
        "mid": ("chain bad match ipv4.src == 10.0.0.0/8 && ipv4.proto == 6:"
                " l2fwd -> firewall -> l3fwd\n"
                "chain dns match udp.dport == 53 { input => l2fwd => firewall =>"
                " (cpu : l3fwd ? firewall.verdict == 1); l3fwd => output; }",
                {"bad": dropped("l2fwd", "firewall"), "dns": to_cpu("l2fwd", "firewall")}),
    },
    "flood": {
        "alone": ("chain five match std.ingress_port == 5: flood\nchain f: flood",
                  {"five": flooded(), "f": flooded()}),
        "mid": ("chain f: l2fwd -> flood -> l3fwd", {"f": flooded(routed)}),
    },
    "heavy_hitter": {
        "alone": (f"chain hh match {FLOW} {{ input => heavy_hitter =>"
                  " (cpu : output ? heavy_hitter.hitter_value >= 200); }",
                  {"hh": None}),                      # test_heavy_hitter_threshold
        "mid": (f"chain hh match {FLOW}: l2fwd -> heavy_hitter -> l3fwd",
                {"hh": both(outputs(lambda p, _: [(1, routed(p))]), no_digest)}),
    },
    "ids": {
        "alone": ("chain telnet match tcp.dport == 23 {"
                  " input => ids => (cpu : output ? ids.verdict == 1); }\n"
                  "chain web match tcp.dport == 80 {"
                  " input => ids => (cpu : output ? ids.verdict == 1); }",
                  {"telnet": to_cpu("ids"), "web": unchanged()}),
        "mid": ("chain telnet match tcp.dport == 23 { input => l2fwd => ids =>"
                " (cpu : l3fwd ? ids.verdict == 1); l3fwd => output; }",
                {"telnet": to_cpu("l2fwd", "ids")}),
    },
    "ipsg": {
        "alone": ("chain spoof match ipv4.src == 10.0.0.1 && std.ingress_port == 3: ipsg\n"
                  "chain bound match ipv4.src == 10.0.0.1: ipsg",
                  {"spoof": dropped("ipsg"), "bound": unchanged()}),
        "mid": ("chain spoof match ipv4.src == 10.0.0.1 && std.ingress_port == 3:"
                " l2fwd -> ipsg -> l3fwd\n"
                "chain bound match ipv4.src == 10.0.0.1: l2fwd -> ipsg -> l3fwd",
                {"spoof": dropped("l2fwd", "ipsg"),
                 "bound": outputs(lambda p, _: [(1, routed(p))])}),
    },
    "l2fwd": {
        "alone": ("chain unknown match eth.dst == 00:00:00:00:00:0c: l2fwd\nchain c: l2fwd",
                  {"c": unchanged(2), "unknown": unchanged(1)}),      # miss: the chain's port
        "mid": ("chain c: firewall -> l2fwd -> monitor", {"c": unchanged(2)}),
    },
    "l3fwd": {
        "alone": ("chain far match ipv4.dst == 10.2.0.0/16: l3fwd\nchain near: l3fwd",
                  {"far": outputs(lambda p, _: [(2, routed(p, L3_FAR))]),
                   "near": outputs(lambda p, _: [(1, routed(p))])}),
        "mid": ("chain far match ipv4.dst == 10.2.0.0/16: l2fwd -> l3fwd -> monitor",
                {"far": outputs(lambda p, _: [(2, routed(p, L3_FAR))])}),
    },
    "lb": {
        "alone": (f"chain vip match {VIP}: lb",
                  {"vip": outputs(lambda p, _: [(1, _with_dst(p, backend(p)))])}),
        "mid": (f"chain vip match {VIP}: l2fwd -> lb -> l3fwd",
                {"vip": outputs(lambda p, _: [(1, routed(_with_dst(p, backend(p))))])}),
    },
    "mac_learning": {
        "alone": ("chain known match eth.src == 00:00:00:00:00:01: mac_learning\n"
                  "chain new: mac_learning",
                  {"known": both(unchanged(), no_digest),
                   "new": both(unchanged(), digests("mac_learn_digest_t", _learned))}),
        "mid": ("chain new: l2fwd -> mac_learning -> monitor",
                {"new": both(unchanged(2), digests("mac_learn_digest_t", _learned))}),
    },
    "monitor": {
        "alone": ("chain lab match ipv4.src == 10.0.0.0/16: monitor",
                  {"lab": both(unchanged(), counted("flow_buckets", 3))}),
        "mid": ("chain lab match ipv4.src == 10.0.0.0/16: l2fwd -> monitor -> l3fwd",
                {"lab": both(outputs(lambda p, _: [(1, routed(p))]),
                             counted("flow_buckets", 3))}),
    },
    "nat": {
        "alone": ("chain n match ipv4.src == 192.168.1.10: nat",
                  {"n": outputs(lambda p, _: [(1, _with_src(p, "203.0.113.10"))])}),
        "mid": ("chain n match ipv4.src == 192.168.1.10: l2fwd -> nat -> l3fwd",
                {"n": outputs(lambda p, _: [(1, routed(_with_src(p, "203.0.113.10")))])}),
    },
    "qos": {
        "alone": ("chain rtp match udp.dport == 5004: qos",
                  {"rtp": outputs(lambda p, _: [(1, _with_dscp(p, 46))])}),
        "mid": ("chain rtp match udp.dport == 5004: l2fwd -> qos -> l3fwd",
                {"rtp": outputs(lambda p, _: [(1, routed(_with_dscp(p, 46)))])}),
    },
    "reporter": {
        "alone": ("chain ssh match tcp.dport == 22: reporter", {"ssh": to_cpu("reporter")}),
        "mid": ("chain ssh match tcp.dport == 22: l2fwd -> reporter -> l3fwd",
                {"ssh": to_cpu("l2fwd", "reporter")}),             # l3fwd does not run
    },
    "router": {                 # its example entry is the default route 0.0.0.0/0
        "alone": ("chain r: router",
                  {"r": outputs(lambda p, _: [(1, routed(p, (OUR_MAC, 1), smac=None))])}),
        "mid": ("chain r: l2fwd -> router -> monitor",            # router's port beats l2fwd's
                {"r": outputs(lambda p, _: [(1, routed(p, (OUR_MAC, 1), smac=None))])}),
    },
    "sr_encap": {               # its example entries: path 1, runs 0 and 1
        "alone": ("chain sr { input => sr_encap =>"
                  " (self : output ? sr_encap.global_counter < 2); }",
                  {"sr": outputs(lambda p, _: [(1, mpls(p, 16001, 16002))])}),
        "mid": ("chain sr: l2fwd -> sr_encap -> l3fwd",
                {"sr": outputs(lambda p, _: [(1, mpls(routed(p), 16001))])}),
    },
    "stateful_firewall": {
        "alone": (f"chain s match {FLOW}: stateful_firewall", {"s": None}),
        # test_stateful_firewall_limit
        "mid": (f"chain s match {FLOW}: l2fwd -> stateful_firewall -> l3fwd",
                {"s": outputs(lambda p, _: [(1, routed(p))])}),
    },
    "vgw": {
        "alone": (f"chain tunnel match {TUNNEL}: vgw\n"
                  "chain tenant match ipv4.dst == 172.16.5.0/24 && ipv4.proto == 253: vgw",
                  {"tunnel": outputs(lambda p, _: [(1, bytes(decapsulated(p)))]),
                   "tenant": outputs(lambda p, _: [(1, _vxlan(p))])}),
        "mid": (f"chain tunnel match {TUNNEL}: l2fwd -> vgw -> l3fwd",
                {"tunnel": outputs(lambda p, _: [(1, routed(decapsulated(p)))])}),
    },
}


# --- the tests ----------------------------------------------------------------------------------

@pytest.fixture()
def lab():
    lab = sfclab.Lab()
    yield lab
    lab.close()


def push(lab, text: str) -> int:
    lab.add(text)
    return lab.push()


def send_class(lab, chain: str, n: int = 3):
    """*n* packets of *chain*'s class, each with the port it came in on and its result."""
    out = []
    for cp in packets_for(lab.chains[chain], n, seed=7, chains=lab.chains):
        out.append((cp.packet, cp.port, lab.send_packet(cp.packet, port=cp.port, label=chain)))
    return out


def test_every_switch_nf_of_the_library_is_covered():
    from sfclab.p4.catalog import load_default

    cat = load_default()
    assert sorted(CASES) == sorted(n for n in cat.names() if cat.definition(n).has_p4)


@pytest.mark.parametrize("where", ["alone", "mid"])
@pytest.mark.parametrize("nf", sorted(CASES))
def test_pushed_nf_does_what_its_p4_documents_to_its_class_traffic(lab, nf, where):
    text, checks = CASES[nf][where]
    assert push(lab, text) > 0
    for chain, check in checks.items():
        if check is not None:
            sent = send_class(lab, chain)
            assert all(nf in r.trace.nfs() for _, _, r in sent)
            check(sent, lab)


def test_heavy_hitter_branches_and_digests_at_its_example_threshold(lab):
    """The example entry puts 10.0.1.0/24's threshold at 200 packets (1000 elsewhere)."""
    push(lab, CASES["heavy_hitter"]["alone"][0])
    ((p, port, _),) = send_class(lab, "hh", 1)
    sw = lab.target.switch
    results = [sw.process(port, p) for _ in range(200)]
    assert [r.ports for r in results[197:]] == [[1], [CPU], [CPU]]      # estimate 1 .. 201
    digests = [(i, d.data["estimate"]) for i, r in enumerate(results) for d in r.digests]
    assert digests == [(198, 200)]                                       # the 200th packet


def test_stateful_firewall_drops_above_its_example_limit(lab):
    """The example entry limits 10.0.0.1 to 500 packets per 1 s window (1000 elsewhere)."""
    push(lab, CASES["stateful_firewall"]["alone"][0])
    ((p, port, first),) = send_class(lab, "s", 1)
    assert first.outputs == [(1, bytes(p))]
    sw = lab.target.switch
    t0 = 10_000_000
    verdicts = [sw.process(port, p, now_us=t0 + k).dropped for k in range(501)]
    assert verdicts == [False] * 500 + [True]


def test_flood_from_each_port_leaves_by_every_other_port(lab):
    push(lab, "chain f: flood")
    p = Ether(dst="00:00:00:00:00:0c") / IP(dst="10.0.1.9") / b"x"
    for port in PORTS:
        assert sorted(lab.send_packet(p, port=port).ports) == [q for q in PORTS if q != port]


def test_what_push_wrote_for_flood_is_listed_with_the_tables(lab):
    push(lab, "chain f: l2fwd -> flood -> l3fwd")
    rows = {r.table: r for r in lab.tables()}
    assert rows["SfcIngress.slot1_flood.flood_groups"].entries == len(PORTS) + 1   # + example
    from sfclab.runtime.session import PRE_GROUPS

    assert rows[PRE_GROUPS].entries == len(PORTS) + 1                 # + "every port"


def test_a_later_nf_does_not_change_what_mac_learning_learned(lab):
    """l3fwd rewrites the source MAC after mac_learning packed it: the digest reports the MAC
    the packet came with (the program digests a copy made at the call)."""
    push(lab, "chain new: l2fwd -> mac_learning -> l3fwd")
    digests("mac_learn_digest_t", _learned)(send_class(lab, "new", 1), lab)
