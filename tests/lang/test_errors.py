"""Malformed chain inputs: each gives the right error class, place, caret width, message and hint.

The caret must sit on the token at fault and cover it: the field name that does
not exist (``colour`` in ``firewall.colour``), the whole unknown header field
(``ip.dest``), the value that does not fit (``99999999999``), the weight that
takes the sum of weights past 1.  The comment after each row shows the text
the caret covers.
"""

from __future__ import annotations

import pytest

import sfclab
from sfclab.errors import ChainError, ChainSyntaxError, ChainValidationError

# (text, error class, line, column, caret width, start of the message, start of the hint)
BAD = [
    ('chain a { input => firewal => output; }',
     ChainValidationError, 1, 20, 7, "unknown NF 'firewal'", "did you mean 'firewall'?"),  # [firewal]
    ('chain a { input -> firewall -> output; }',
     ChainSyntaxError, 1, 17, 2, "unexpected '->'; expected a name, `}`, `;`, a", 'inside { } write `a => b;` (`-'),  # [->]
    ('chain a { input => firewall => output; ',
     ChainSyntaxError, 1, 39, 1, 'the text ends too early; expected a name, `}`', 'close the chain with `}`'),  # [ ]
    ('chain a { input => (nat : drop ? firewall.verdict = 0); }',
     ChainSyntaxError, 1, 51, 1, "unexpected '='; expected a comparison (== != ", 'compare with `==`'),  # [=]
    ('chain a { input => firewall => (nat : drop ? firewall.verdit == 0); nat => output; }',
     ChainValidationError, 1, 55, 6, "NF 'firewall' does not set a field 'verdit'", "did you mean 'verdict'?"),  # [verdit]
    ('chain a { firewall => (0@nat : 0@lb # firewall.global_metadata); }',
     ChainValidationError, 1, 32, 1, 'case 0 is given twice', 'give each case its own value'),  # [0]
    ('chain a { firewall => (nat : nat ? firewall.verdict == 0); }',
     ChainValidationError, 1, 24, 9, "both branches go to 'nat'", 'write `firewall => nat;`'),  # [nat : nat]
    ('chain a { input => nat; nat => firewall; firewall => nat; }',
     ChainValidationError, 1, 54, 3, "chain 'a' has a cycle that is not a declared ", 'repeat an NF with a serial num'),  # [nat]
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_counter > 0); }',
     ChainValidationError, 1, 49, 27, "the loop at 'sr_encap' never ends: sr_encap.g", 'the counter counts runs upward'),  # [sr_encap.global_counter > 0]
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_counter >= 3); }',
     ChainValidationError, 1, 49, 28, "the loop at 'sr_encap' never repeats: sr_enca", 'to run it n times write sr_enc'),  # [sr_encap.global_counter >= 3]
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_metadata < 3); }',
     ChainValidationError, 1, 49, 24, "a loop from 'sr_encap' must test sr_encap.glo", '`sr_encap => (self : … ? sr_en'),  # [sr_encap.global_metadata]
    ('chain a { input => nat => output; lb => output; }',
     ChainValidationError, 1, 35, 2, "'lb' cannot be reached from input", 'connect it, e.g. `input => lb;'),  # [lb]
    ('chain a { input => nat; lb => output; }',
     ChainValidationError, 1, 20, 3, "'nat' leads nowhere: packets stop after it", 'add `nat => output;` (or drop '),  # [nat]
    ('chain a: nat\nchain a: lb',
     ChainValidationError, 2, 7, 1, "duplicate chain name 'a'", 'give each chain its own name'),  # [a]
    ('chain a weight 1.5 { input => nat => output; }',
     ChainValidationError, 1, 16, 3, 'weight 1.5 is outside (0, 1]', "a weight is the chain's share "),  # [1.5]
    ('chain a weight 0 { input => nat => output; }',
     ChainValidationError, 1, 16, 1, 'weight 0 is outside (0, 1]', "a weight is the chain's share "),  # [0]
    ('chain a match ipv4.dts == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 15, 8, "unknown header field 'ipv4.dts'", "did you mean 'ipv4.dst' or 'ip"),  # [ipv4.dts]
    ('chain a match vlan.vid == 5000 { input => nat => output; }',
     ChainValidationError, 1, 27, 4, '5000 does not fit in vlan.vid (12 bits)', 'the largest value is 4095'),  # [5000]
    ('chain a match ipv4.dst == 10.0.0.0/40 { input => nat => output; }',
     ChainValidationError, 1, 36, 2, 'prefix /40 is longer than ipv4.dst (32 bits)', 'use a prefix length of at most'),  # [40]
    ('chain a match tcp.dport == 2000..1000 { input => nat => output; }',
     ChainValidationError, 1, 28, 10, 'empty range 2000..1000', 'write the low end first'),  # [2000..1000]
    ('chain a match ipv4.dst == 10.0.0.300 { input => nat => output; }',
     ChainValidationError, 1, 27, 10, "'10.0.0.300' is not a valid address", 'IPv4 is a.b.c.d with each part'),  # [10.0.0.300]
    ('chain a match eth.dst == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 26, 8, "eth.dst takes a MAC value, not '10.0.0.1'", 'write it as aa:bb:cc:dd:ee:ff'),  # [10.0.0.1]
    ('chain a match tcp.dport == 80 and tcp.sport == 1 { input => nat => output; }',
     ChainSyntaxError, 1, 31, 3, "unexpected keyword 'and'; expected `:`, `from", 'join classifier terms with `&&'),  # [and]
    ('chain a { input => nat => output => lb; }',
     ChainValidationError, 1, 37, 2, "'output' is an end point: nothing can follow ", 'remove `output => …`'),  # [lb]
    ('chain a { nat => input; }',
     ChainValidationError, 1, 18, 5, "nothing can lead into 'input'", '`input` starts a chain'),  # [input]
    ('chain a { input => nat => (lb : drop ? nat.verdict == 1); lb => output; }',
     ChainValidationError, 1, 44, 7, "NF 'nat' does not set a field 'verdict'", 'nat sets: global_metadata, glo'),  # [verdict]
    ('chain a { input => nat => (lb : drop ? nat.translated == 7); lb => output; }',
     ChainValidationError, 1, 58, 1, '7 does not fit in nat.translated (1 bit)', 'the largest value is 1'),  # [7]
    ('chain a { input => nat; nat; }',
     ChainValidationError, 1, 25, 3, "'nat' alone is not a statement", 'connect it: `nat => output;`'),  # [nat]
    ('IDS before Firewall before IDS',
     ChainValidationError, 1, 28, 3, "chain 'sfc1' has a cycle that is not a declar", 'repeat an NF with a serial num'),  # [IDS]
    ('SR_ENCAP loop',
     ChainValidationError, 1, 10, 4, "the loop at 'sr_encap' has no bound", 'say how many runs in all: `SR_'),  # [loop]
    ('Firewall then NAT',
     ChainSyntaxError, 1, 18, 1, 'the text ends too early; expected `or`', 'a P4SC branch is `A then B or '),  # []
    ('chain { input => nat => output; }',
     ChainSyntaxError, 1, 7, 1, "unexpected '{'; expected a name, a quoted nam", 'a chain needs a name: `chain N'),  # [{]
    ('chain a { input => nat => output; } }',
     ChainSyntaxError, 1, 37, 1, "unexpected '}'; expected a name, a quoted nam", 'this `}` closes nothing: is th'),  # [}]
    ('chain a { input => @ => output; }',
     ChainSyntaxError, 1, 20, 1, "unexpected '@'; expected `(`, a name, a quote", 'see the chain language in the manual'),  # [@]
    ('{"NFs": [{"name": "f", "type": "Firewal"}], "Links": [], "Route": {}}',
     ChainValidationError, 1, 32, 9, "unknown NF 'Firewal'", "did you mean 'firewall'?"),  # ["Firewal"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [["f", "g"]], "Route": {}}',
     ChainValidationError, 1, 62, 3, "link names unknown NF 'g'", 'links name NFs by their "name"'),  # ["g"]
    ('{"NFs": [], "Links": [] "Route": {}}',
     ChainSyntaxError, 1, 25, 1, "invalid JSON: Expecting ',' delimiter", 'check quotes, commas and brack'),  # ["]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Route": {}}',
     ChainValidationError, 1, 2, 5, 'intent 1 lacks Links', 'an intent has "NFs", "Links" a'),  # ["NFs"]
    ('chain a { input => l2fwd => (ipsg : qos ? colour == 1); ipsg => output; qos => output; }',
     ChainValidationError, 1, 43, 6, "no NF up to 'l2fwd' sets a field 'colour'", 'name it as NF.field, e.g. l2fw'),  # [colour]
    ('chain a { input => firewall => (nat : drop ? firewall.colour == 0); nat => output; }',
     ChainValidationError, 1, 55, 6, "NF 'firewall' does not set a field 'colour'", 'firewall sets: global_metadata'),  # [colour]
    ('chain a match ip.dest == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 15, 7, "unknown header field 'ip.dest'", "did you mean 'ip.dst' or 'ipv6"),  # [ip.dest]
    ('chain a { input => firewall => (nat : drop ? firewall.verdict == 99999999999); nat => output; }',
     ChainValidationError, 1, 66, 11, '99999999999 does not fit in firewall.verdict ', 'the largest value is 1'),  # [99999999999]
    ('chain a match tcp.dport == 99999999999 { input => nat => output; }',
     ChainValidationError, 1, 28, 11, '99999999999 does not fit in tcp.dport (16 bit', 'the largest value is 65535'),  # [99999999999]
    ('chain a { input => nat => (lb : drop ? firwall.verdict == 1); lb => output; }',
     ChainValidationError, 1, 40, 7, "unknown NF 'firwall'", "did you mean 'firewall'?"),  # [firwall]
    ('chain a { input => nat => (lb : drop ? output.verdict == 1); lb => output; }',
     ChainValidationError, 1, 40, 6, "'output' is an end point and has no fields", 'test a field of an NF, e.g. na'),  # [output]
    ('chain a { input => nat => (lb : drop ? std.ingress_prt == 1); lb => output; }',
     ChainValidationError, 1, 44, 11, 'unknown standard field std.ingress_prt', "did you mean 'std.ingress_port"),  # [ingress_prt]
    ('firewall -> nat -> l3fwd',
     ChainSyntaxError, 1, 1, 8, '`firewall -> nat -> l3fwd` is not a chain on ', 'write the one-line form `chain'),  # [firewall]
    ('chain a: nat; firewall => nat => l3fwd;',
     ChainSyntaxError, 1, 15, 8, '`firewall => nat => l3fwd` is not a chain on ', 'write the one-line form `chain'),  # [firewall]
    ('chain web firewall -> nat',
     ChainSyntaxError, 1, 11, 8, "unexpected 'firewall'; expected `:`, `from`, ", 'put a `:` before the NFs: `cha'),  # [firewall]
    ('chain a weight 0.7: nat\nchain b weight 0.6: lb',
     ChainValidationError, 2, 16, 3, 'the chain weights add up to 1.3, more than al', 'a weight is a share of all tra'),  # [0.6]
    ('chain a weight 0.5: nat\nchain b: lb\nchain c weight 0.5: l2fwd\nchain d weight 0.25: l3fwd',
     ChainValidationError, 4, 16, 4, 'the chain weights add up to 1.25, more than a', 'the chains before take all the'),  # [0.25]
    ('SR_ENCAP loop 300',
     ChainValidationError, 1, 15, 3, "the loop at 'sr_encap' runs 300 times in all:", 'the loop counter is 8 bits wid'),  # [300]
    ('SR_ENCAP loop 1',
     ChainValidationError, 1, 15, 1, "the loop at 'sr_encap' runs only once: a loop", '`SR_ENCAP loop 2` runs it twic'),  # [1]
    ('chain a weight 0.5 weight 0.2: nat',
     ChainSyntaxError, 1, 20, 6, "`weight` is given twice in chain 'a'", 'keep one `weight` clause'),  # [weight]
    ('chain a from h1 from h2: nat',
     ChainSyntaxError, 1, 17, 4, "`from` is given twice in chain 'a'", 'keep one `from` clause'),  # [from]
    ('chain a from s4:0: nat',
     ChainValidationError, 1, 14, 4, "'s4:0' is not a host, server or switch port: ", 'write a name (`from h1`) or a '),  # [s4:0]
    ('chain a to "h 1": nat',
     ChainValidationError, 1, 12, 5, "'h 1' is not a host, server or switch port: n", 'write a name (`from h1`) or a '),  # ["h 1"]
    ('chain a from: nat',
     ChainSyntaxError, 1, 13, 1, "unexpected ':'; expected a name, a switch por", 'after `from` and `to` name a h'),  # [:]
    ('chain a from h1 h2: nat',
     ChainSyntaxError, 1, 17, 2, "unexpected 'h2'; expected `:`, `from`, `{`, `", 'a chain head is `chain NAME [m'),  # [h2]
    ('chain a { input => sr_encap => (self : nat ? sr_encap.global_counter < x); nat => output; }',
     ChainValidationError, 1, 72, 1, 'a loop bound must be a number', 'e.g. `sr_encap.global_counter '),  # [x]
    ('chain a match tcp.dport == 80 && ip.dest == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 34, 7, "unknown header field 'ip.dest'", "did you mean 'ip.dst' or 'ipv6"),  # [ip.dest]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"match": "ip.dest == 1.2.3.4"}}',
     ChainValidationError, 1, 79, 7, "unknown header field 'ip.dest'", "did you mean 'ip.dst' or 'ipv6"),  # [ip.dest]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"match": "tcp.dport = 80"}}',
     ChainSyntaxError, 1, 89, 1, 'in "match": unexpected \'=\'; expected == or !=', 'compare with `==`'),  # [=]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"from": "h1", "to": "s9:600"}}',
     ChainValidationError, 1, 89, 8, "'s9:600' is not a host, server or switch port", 'write a name (`from h1`) or a '),  # ["s9:600"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"from": 3}}',
     ChainValidationError, 1, 77, 1, 'intent \'intent1\': "from" names a host or a sw', '"Route": {"from": "h1", "to": '),  # [3]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"weight": 2}}',
     ChainValidationError, 1, 79, 1, 'weight 2 is outside (0, 1]', "a weight is the chain's share "),  # [2]
    ('chain a { input => sr_encap => (output : self ? sr_encap.global_counter < 3); }',
     ChainValidationError, 1, 49, 27, "the loop at 'sr_encap' never repeats: sr_enca", 'to run it n times write sr_enc'),  # [sr_encap.global_counter < 3]
    ('chain a { input => nat => (lb : drop ? nat.translated == 1); lb => (self : nat ? lb.global_counter < 3); }',
     ChainValidationError, 1, 69, 10, 'a loop needs a way out: both branches go back', 'leave the loop on one side: `l'),  # [self : nat]
    # issue 22.4: `=>` in the one-line form (it said "expected $END, `chain`, …")
    ('chain web: firewall => nat => l3fwd',
     ChainSyntaxError, 1, 21, 2, "unexpected '=>': in the one-line form NFs are", 'write `chain web: firewall -> n'),  # [=>]
    ('chain a: nat; chain b match tcp.dport == 22: lb => nat',
     ChainSyntaxError, 1, 49, 2, "unexpected '=>': in the one-line form NFs are", 'write `chain b match tcp.dport '),  # [=>]
    # issue 19.8: JSON of the wrong shape and numbers longer than Python converts
    ('{"NFs": {"name": "f"}, "Links": [], "Route": {}}',
     ChainValidationError, 1, 2, 5, 'intent \'intent1\': "NFs" must be a list, not a', '"NFs": [{"name": "fw1", "type"'),  # ["NFs"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": "f", "Route": {}}',
     ChainValidationError, 1, 46, 7, 'intent \'intent1\': "Links" must be a list, not', '"Links": [["input", "fw1"], ["'),  # ["Links"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [[]], "Route": {}}',
     ChainValidationError, 1, 46, 7, "intent 'intent1': a link is a pair of NF names, not []", '"Links": [["input", "fw1"], ["'),  # ["Links"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [[{}, "output"]], "Route": {}}',
     ChainValidationError, 1, 46, 7, "intent 'intent1': a link is a pair of NF name", '"Links": [["input", "fw1"], ["'),  # ["Links"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": [["f"]]}',
     ChainValidationError, 1, 59, 7, 'intent \'intent1\': "Route" is an object or a l', '"Route": {"match": "tcp.dport '),  # ["Route"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": {"weight": 1' + '0' * 4400 + '}}',
     ChainSyntaxError, 1, 79, 20, 'a number of 4,401 digits is longer than sfcla', 'no count, port, width or value'),  # [1000…]
    ('chain a { input => sr_encap => (self : nat ? sr_encap.global_counter < ' + '9' * 4301 + '); nat => output; }',
     ChainSyntaxError, 1, 72, 20, 'a number of 4,301 digits is longer than sfcla', 'no count, port, width or value'),  # [9999…]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": ["g", "f"]}',
     ChainValidationError, 1, 69, 3, 'intent \'intent1\': "Route" names unknown NF \'g\'', 'a "Route" list names NFs by th'),  # ["g"]
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [], "Route": [""]}',
     ChainValidationError, 1, 59, 7, 'intent \'intent1\': "Route" names unknown NF \'\'', 'a "Route" list names NFs by th'),  # ["Route"]
]


def test_the_table_is_large_enough():
    assert len(BAD) >= 60


@pytest.mark.parametrize("text,cls,line,column,width,message,hint", BAD)
def test_bad_input(text, cls, line, column, width, message, hint):
    with pytest.raises(ChainError) as info:
        sfclab.parse(text)
    e = info.value
    assert type(e) is cls
    assert (e.line, e.column, e.width) == (line, column, width)
    assert e.message.startswith(message)
    assert e.hint.startswith(hint) and e.hint, "every error carries a hint"
    # The rendered error shows the offending line and a caret under the token at fault.
    rendered = str(e)
    src = text.splitlines()[line - 1]
    assert src.strip() in rendered
    caret_line = rendered.splitlines()[2]
    assert caret_line == " " * (4 + column - 1) + "^" * width


def test_bad_input_changes_nothing():
    chains = sfclab.parse("chain a: l2fwd")
    with pytest.raises(ChainError):
        sfclab.parse("chain b: nat\nchain a: lb", into=chains)
    assert chains.names() == ["a"]


def test_weights_are_checked_against_the_chains_already_there():
    chains = sfclab.parse("chain a weight 0.75: l2fwd")
    with pytest.raises(ChainError) as info:
        sfclab.parse("chain b weight 0.5: nat", into=chains)
    assert "add up to 1.25" in info.value.message
    assert chains.names() == ["a"]
    sfclab.parse("chain b weight 0.25: nat", into=chains)
    assert chains.weights() == {"a": 0.75, "b": 0.25}
