"""Smaller facts about the chain language a user relies on."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.errors import ChainError
from sfclab.ir import Condition


def nfs(text: str) -> list[tuple[str, ...]]:
    return [p.nfs for p in sfclab.parse(text).paths()]


def test_names_are_case_insensitive_and_aliases_resolve():
    assert nfs("chain a: FW -> l3_sw -> Nat") == [("firewall", "l3fwd", "nat")]
    assert nfs('chain a: "Heavy Hitter" -> "MAC Learning"') == [("heavy_hitter", "mac_learning")]


def test_serial_numbers_make_separate_instances():
    (p,) = sfclab.parse("chain a: nat -> firewall -> nat#2").paths()
    assert p.nodes == ("nat", "firewall", "nat#2")
    assert p.nfs == ("nat", "firewall", "nat")


def test_sequence_shorthand_in_blocks():
    assert nfs("chain a { input => l2fwd => firewall => output; }") == [("l2fwd", "firewall")]


def test_if_else_semantics_then_first():
    chain = sfclab.parse("chain a { input => ids => (drop : l3fwd ? ids.verdict == 1); "
                         "l3fwd => output; }")["a"]
    then = chain.graph.edges["ids", "drop"]
    other = chain.graph.edges["ids", "l3fwd"]
    assert (then["kind"], other["kind"]) == ("then", "else")
    assert then["cond"] == other["cond"] == Condition("ids.verdict", "==", 1)


def test_multibranch_shares_follow_case_counts():
    chain = sfclab.parse("chain a { input => lb => (0@l3fwd : 1@nat : 2@nat # lb.backend); "
                         "l3fwd => output; nat => output; }")["a"]
    assert chain.graph.edges["lb", "nat"]["cases"] == (1, 2)
    assert [round(p.weight, 3) for p in chain.paths()] == [0.333, 0.667]


def test_loop_forms():
    for text in ("chain a { input => sr_encap => (self : output ? sr_encap.global_counter < 4); }",
                 "chain a { input => sr_encap => (sr_encap : output ? sr_encap.counter <= 3); }",
                 "chain a { input => sr_encap => (output : self ? sr_encap.global_counter >= 4); }"):
        assert nfs(text) == [("sr_encap",) * 4], text


def test_loop_back_to_an_earlier_nf():
    text = "chain a { input => monitor => sr_encap => (monitor : output ? sr_encap.global_counter < 2); }"
    assert nfs(text) == [("monitor", "sr_encap", "monitor", "sr_encap")]


def test_bare_field_comes_from_an_earlier_nf():
    chain = sfclab.parse("chain a { input => l2fwd => qos => (output : flood ? flood_flag == 0); "
                         "flood => output; }")["a"]
    assert chain.graph.edges["qos", "output"]["cond"].field == "l2fwd.flood_flag"


def test_classifier_forms():
    c = sfclab.parse("chain a match ipv4.src == 10.0.0.0/8 && tcp.dport == 1000..2000 && "
                     "eth.dst == aa:bb:cc:dd:ee:ff && ipv4.proto != 6 && "
                     "vlan.vid == 0x10 &&& 0xff0 && ipv6.dst == 2001:db8::1: l2fwd")["a"]
    kinds = [(t.field, t.kind, t.negate) for t in c.match.terms]
    assert kinds == [("ipv4.src", "lpm", False), ("tcp.dport", "range", False),
                     ("eth.dst", "exact", False), ("ipv4.proto", "exact", True),
                     ("vlan.vid", "ternary", False), ("ipv6.dst", "exact", False)]
    pkt = {"ipv4.src": 0x0A010203, "tcp.dport": 1500, "eth.dst": 0xAABBCCDDEEFF,
           "ipv4.proto": 17, "vlan.vid": 0x01F, "ipv6.dst": 0x20010DB8 << 96 | 1}
    assert c.match.matches(pkt)
    assert not c.match.matches({**pkt, "ipv4.proto": 6})
    assert not c.match.matches({**pkt, "tcp.dport": 999})


@pytest.mark.parametrize("literal, value, plen", [
    ("2001:db8:5::/48", 0x20010DB80005 << 80, 48),        # ends in `::` after 3 groups
    ("2001:db8:0:5::/64", 0x20010DB800000005 << 64, 64),
    ("2001:db8::5", 0x20010DB8 << 96 | 5, 128),
    ("::1", 1, 128),
])
def test_ipv6_literals_of_every_compressed_form(literal, value, plen):
    for text in (f"chain a match ipv6.dst == {literal}: l3fwd",
                 f"chain a match ipv6.dst == {literal} {{ input => l3fwd => output }}"):
        c = sfclab.parse(text)["a"]
        hit = {"ipv6.dst": value | ((1 << (128 - plen)) - 1)}
        assert c.match.matches(hit), text
        assert not c.match.matches({"ipv6.dst": value ^ (1 << (128 - plen))}), text


def test_weights_default_to_an_equal_split_of_the_rest():
    chains = sfclab.parse("chain a weight 0.5: l2fwd\nchain b: l3fwd\nchain c: nat")
    assert chains.weights() == {"a": 0.5, "b": 0.25, "c": 0.25}


def test_comments():
    text = """
    // a comment
    chain a {   # another
        input => firewall => (0@nat : 1@lb # firewall.verdict);  # after a multibranch
        nat#2 => output;  nat => nat#2; lb => output;
    }"""
    assert nfs(text) == [("firewall", "nat", "nat"), ("firewall", "lb")]


def test_into_adds_and_keeps_names_unique():
    chains = sfclab.parse("chain a: l2fwd")
    sfclab.parse("chain b: l3fwd", into=chains)
    assert chains.names() == ["a", "b"]
    with pytest.raises(ChainError, match="duplicate chain name 'a'"):
        sfclab.parse("chain a: nat", into=chains)


def test_bytes_and_empty_input():
    assert len(sfclab.parse(b"chain a: l2fwd")) == 1
    assert len(sfclab.parse("")) == 0
    with pytest.raises(ChainError, match="not UTF-8"):
        sfclab.parse(b"\xff\xfe")


def test_user_catalogue():
    from sfclab.nfinfo import NFInfo
    from sfclab.p4.catalog import load_default

    cat = load_default().copy()
    cat.add(NFInfo(name="dpi_lite", layer=7, aliases=("DPIL",), fields={"score": 8}))
    chains = sfclab.parse("chain a { input => DPIL => (drop : output ? dpi_lite.score > 200); }",
                          catalog=cat)
    assert [p.terminal for p in chains.paths()] == ["drop", "output"]
    with pytest.raises(ChainError, match="unknown NF 'DPIL'"):
        sfclab.parse("chain a: DPIL", catalog=load_default())


@pytest.mark.parametrize("text", [
    "chain web match tcp.dport == 80 weight 0.5 from h1 to s4:7 { input => nat => output; }",
    "chain web to s4:7 weight 0.5 from h1 match tcp.dport == 80 { input => nat => output; }",
    "chain web match tcp.dport == 80 weight 0.5 from h1 to s4:7: nat",
    "request web match tcp.dport == 80 weight 0.5 from h1 to s4:7:\nNAT first\nNAT last",
    '{"name": "web", "NFs": [{"name": "n", "type": "NAT"}], "Links": [], '
    '"Route": {"match": "tcp.dport == 80", "weight": 0.5, "from": "h1", "to": "s4:7"}}',
])
def test_ingress_and_egress_in_every_style(text):
    chains = sfclab.parse(text)
    web = chains["web"]
    assert (web.ingress, web.egress) == ("h1", "s4:7")
    assert [p.nfs for p in chains.paths()] == [("nat",)]
    assert sfclab.parse(sfclab.format(chains)) == chains
    assert "from h1 to s4:7" in sfclab.format(chains)


def test_ingress_and_egress_are_optional_and_part_of_equality():
    plain = sfclab.parse("chain a: nat")["a"]
    assert (plain.ingress, plain.egress) == (None, None)
    assert sfclab.parse("chain a to h2: nat")["a"].egress == "h2"
    assert sfclab.parse("chain a from h1: nat")["a"] != plain
    quoted = sfclab.parse('chain a from "leaf-1" to "spine.2:12": nat')
    assert (quoted["a"].ingress, quoted["a"].egress) == ("leaf-1", "spine.2:12")
    assert sfclab.parse(sfclab.format(quoted)) == quoted


def test_from_and_to_are_keywords_but_quoted_names_still_work():
    chain = sfclab.parse('chain "to": nat')["to"]
    assert sfclab.format(sfclab.parse('chain "to": nat')).startswith('chain "to" {')
    assert chain.nf_nodes() == ["nat"]


def test_the_weight_error_says_what_is_left():
    with pytest.raises(ChainError) as info:
        sfclab.parse("chain a weight 0.7: nat\nchain b weight 0.6: lb")
    assert "give this chain at most 0.3" in info.value.hint
