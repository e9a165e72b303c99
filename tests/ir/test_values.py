"""Values as people write them (sfclab.ir.values): entries, switch descriptions, arguments."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.codegen import generate
from sfclab.codegen.entries import Exact, Lpm, Range, TableEntry, Ternary
from sfclab.ir.values import ValueKinds, field_kind, format_value, implied_keys, prefix_len


@pytest.mark.parametrize("value, kind, shown", [
    (0x0A000101, "ipv4", "10.0.1.1"), (3405803786, "ipv4", "203.0.113.10"),
    (0x20010DB8 << 96 | 1, "ipv6", "2001:db8::1"), (257, "mac", "00:00:00:00:01:01"),
    (0xFFFFFFFFFFFF, "mac", "ff:ff:ff:ff:ff:ff"), (80, "port", "80"), (0b1010, "bits", "0b1010"),
    (7, "int", "7"),
])
def test_format_value(value, kind, shown):
    assert format_value(value, kind) == shown


def test_prefix_lengths():
    assert [prefix_len(m, 32) for m in (0xFFFFFFFF, 0xFF000000, 0, 0xFF00FF00)] == [32, 8, 0, None]
    assert prefix_len(0xFFF, 12) == 12 and prefix_len(0x1FFF, 12) is None


def test_field_kinds_by_user_and_p4_names():
    assert [field_kind(n) for n in ("ipv4.dst", "hdr.ipv4.dst_addr", "hdr.ethernet.src_addr",
                                    "ipv6.src", "meta.sfc.ingress_port", "hdr.tcp.dst_port",
                                    "hdr.vlan.vid", "standard_metadata.egress_spec")] == \
        ["ipv4", "ipv4", "mac", "ipv6", "port", "port", "int", "port"]


def test_entries_print_addresses_prefixes_and_ports():
    k = ValueKinds()
    e = TableEntry("SfcIngress.initializer",
                   (("hdr.ipv4.$valid$", Ternary(1, 1)),
                    ("hdr.ipv4.dst_addr", Ternary(167772160, 0xFF000000)),
                    ("hdr.tcp.$valid$", Ternary(1, 1)), ("hdr.tcp.dst_port", Ternary(80, 0xFFFF)),
                    ("hdr.vlan.vid", Range(10, 20))),
                   "SfcIngress.set_token", (("path_id", 1), ("bitmap", 5)), 1, "chain:a")
    assert e.describe(k) == ("SfcIngress.initializer: hdr.ipv4.dst_addr=10.0.0.0/8 "
                             "hdr.tcp.dst_port=80 hdr.vlan.vid=10..20 -> "
                             "set_token(path_id=1, bitmap=0b101) prio 1  [chain:a]")
    nat = TableEntry("SfcIngress.slot1_nat.src_nat", (("hdr.ipv4.src_addr", Lpm(0xC0A80000, 16)),),
                     "SfcIngress.slot1_nat.translate", (("new_src", 3405803786),))
    assert "hdr.ipv4.src_addr=192.168.0.0/16 -> translate(new_src=203.0.113.10)" in str(nat)
    odd = Ternary(0x0A000001, 0xFF0000FF)                     # not a prefix: value &&& mask
    assert k.match("hdr.ipv4.dst_addr", odd) == "10.0.0.1 &&& 255.0.0.255"
    assert k.match("hdr.sfc.path_id", Exact(3)) == "3"


def test_kinds_of_a_generated_program_come_from_its_types():
    gen = generate(sfclab.compile("chain web match tcp.dport == 80: firewall -> nat -> l3fwd"))
    k = ValueKinds.of_program(gen.program.program)
    assert k.params["SfcIngress.slot2_l3fwd.route"] == {"dmac": "mac", "smac": "mac",
                                                        "port": "port"}
    assert k.params["SfcIngress.slot1_nat.translate"] == {"new_src": "ipv4"}
    assert k.fields["hdr.ipv4.dst_addr"] == "ipv4" and k.fields["hdr.ethernet.dst_addr"] == "mac"
    # a user's NF: its types say what its parameters are, whatever their names
    user = ValueKinds({}, {"SfcIngress.slot0_tagger.set": {"next": "ipv4"}}, library=False)
    assert user.args("SfcIngress.slot0_tagger.set", [("next", 167772161), ("x", 3)]) == \
        "next=10.0.0.1, x=3"
    for e in gen.entries:                                  # every entry prints, no raw ints
        text = e.describe(k)
        assert "&&&" not in text and "167772" not in text, text


def test_switch_descriptions_reprinted():
    k = ValueKinds()
    assert k.described("hdr.ipv4.$valid$=0x1&&&0x1 hdr.ipv4.dst_addr=0x0a000100&&&0xffffff00 "
                       "hdr.tcp.$valid$=0x1&&&0x1 hdr.tcp.dst_port=0x0050&&&0xffff priority=2") \
        == "hdr.ipv4.dst_addr=10.0.1.0/24 hdr.tcp.dst_port=80 priority=2"
    assert k.described("hdr.ethernet.dst_addr=0x000000000002") == \
        "hdr.ethernet.dst_addr=00:00:00:00:00:02"
    assert k.described("hdr.x.y=0x0a000000/8") == "hdr.x.y=0x0a000000/8"   # unknown: as written
    assert k.described("entry handle 7") == "entry handle 7"
    assert sorted(implied_keys(["hdr.tcp.$valid$", "hdr.tcp.dst_port", "hdr.vlan.$valid$"])) == \
        ["hdr.tcp.$valid$"]


def test_library_parameters_by_the_nfs_p4():
    k = ValueKinds.library()
    assert k.args("SfcIngress.slot14_l3fwd.route", [("dmac", 513), ("smac", 254), ("port", 2)]) \
        == "dmac=00:00:00:00:02:01, smac=00:00:00:00:00:fe, port=2"
    assert k.args("pipe.SfcIngress.slot3_nat_2.translate", [("new_src", 3405803786)]) == \
        "new_src=203.0.113.10"
    assert k.args("SfcIngress.slot0_nonesuch.go", [("a", 5)]) == "a=5"
