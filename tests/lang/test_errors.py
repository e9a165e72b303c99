"""Malformed chain inputs: each gives the right error class, place, message and hint."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.errors import ChainError, ChainSyntaxError, ChainValidationError

# (text, error class, line, column, part of the message, part of the hint)
BAD = [
    ('chain a { input => firewal => output; }',
     ChainValidationError, 1, 20, "unknown NF 'firewal'", "did you mean 'firewall'?"),
    ('chain a { input -> firewall -> output; }',
     ChainSyntaxError, 1, 17, "unexpected '->'", 'inside { } write `a => b;` (`-'),
    ('chain a { input => firewall => output; ',
     ChainSyntaxError, 1, 39, 'the text ends too early', 'close the chain with `}`'),
    ('chain a { input => (nat : drop ? firewall.verdict = 0); }',
     ChainSyntaxError, 1, 51, "unexpected '='", 'compare with `==`'),
    ('chain a { input => firewall => (nat : drop ? firewall.verdit == 0); nat => output; }',
     ChainValidationError, 1, 46, "NF 'firewall' does not set a field 'verdit'", "did you mean 'verdict'?"),
    ('chain a { firewall => (0@nat : 0@lb # firewall.global_metadata); }',
     ChainValidationError, 1, 32, 'case 0 is given twice', 'give each case its own value'),
    ('chain a { firewall => (nat : nat ? firewall.verdict == 0); }',
     ChainValidationError, 1, 24, "both branches go to 'nat'", 'write `firewall => nat;`'),
    ('chain a { input => nat; nat => firewall; firewall => nat; }',
     ChainValidationError, 1, 54, "chain 'a' has a cycle that is not a declared ", 'repeat an NF with a serial num'),
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_counter > 0); }',
     ChainValidationError, 1, 49, "the loop at 'sr_encap' never ends: sr_encap.g", 'the counter counts runs upward'),
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_counter >= 3); }',
     ChainValidationError, 1, 49, "the loop at 'sr_encap' never repeats: sr_enca", 'to run it n times write sr_enc'),
    ('chain a { input => sr_encap => (self : output ? sr_encap.global_metadata < 3); }',
     ChainValidationError, 1, 49, "a loop from 'sr_encap' must test sr_encap.glo", '`sr_encap => (self '),
    ('chain a { input => nat => output; lb => output; }',
     ChainValidationError, 1, 35, "'lb' cannot be reached from input", 'connect it, e.g. `input => lb;'),
    ('chain a { input => nat; lb => output; }',
     ChainValidationError, 1, 20, "'nat' leads nowhere: packets stop after it", 'add `nat => output;` (or drop '),
    ('chain a: nat\nchain a: lb',
     ChainValidationError, 2, 7, "duplicate chain name 'a'", 'give each chain its own name'),
    ('chain a weight 1.5 { input => nat => output; }',
     ChainValidationError, 1, 16, 'weight 1.5 is outside (0, 1]', "a weight is the chain's share "),
    ('chain a weight 0 { input => nat => output; }',
     ChainValidationError, 1, 16, 'weight 0 is outside (0, 1]', "a weight is the chain's share "),
    ('chain a match ipv4.dts == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 15, "unknown header field 'ipv4.dts'", "did you mean 'ipv4.dst' or 'ip"),
    ('chain a match vlan.vid == 5000 { input => nat => output; }',
     ChainValidationError, 1, 27, '5000 does not fit in vlan.vid (12 bits)', 'the largest value is 4095'),
    ('chain a match ipv4.dst == 10.0.0.0/40 { input => nat => output; }',
     ChainValidationError, 1, 36, 'prefix /40 is longer than ipv4.dst (32 bits)', 'use a prefix length of at most'),
    ('chain a match tcp.dport == 2000..1000 { input => nat => output; }',
     ChainValidationError, 1, 28, 'empty range 2000..1000', 'write the low end first'),
    ('chain a match ipv4.dst == 10.0.0.300 { input => nat => output; }',
     ChainValidationError, 1, 27, "'10.0.0.300' is not a valid address", 'IPv4 is a.b.c.d with each part'),
    ('chain a match eth.dst == 10.0.0.1 { input => nat => output; }',
     ChainValidationError, 1, 26, "eth.dst takes a MAC value, not '10.0.0.1'", 'write it as aa'),
    ('chain a match tcp.dport == 80 and tcp.sport == 1 { input => nat => output; }',
     ChainSyntaxError, 1, 31, "unexpected keyword 'and'", 'join classifier terms with `&&'),
    ('chain a { input => nat => output => lb; }',
     ChainValidationError, 1, 37, "'output' is an end point: nothing can follow ", 'remove `output => …`'),
    ('chain a { nat => input; }',
     ChainValidationError, 1, 18, "nothing can lead into 'input'", '`input` starts a chain'),
    ('chain a { input => nat => (lb : drop ? nat.verdict == 1); lb => output; }',
     ChainValidationError, 1, 40, "NF 'nat' does not set a field 'verdict'", 'nat sets'),
    ('chain a { input => nat => (lb : drop ? nat.translated == 7); lb => output; }',
     ChainValidationError, 1, 40, '7 does not fit in nat.translated (1 bit)', 'the largest value is 1'),
    ('chain a { input => nat; nat; }',
     ChainValidationError, 1, 25, "'nat' alone is not a statement", 'connect it'),
    ('IDS before Firewall before IDS',
     ChainValidationError, 1, 28, "chain 'sfc1' has a cycle that is not a declar", 'repeat an NF with a serial num'),
    ('SR_ENCAP loop',
     ChainValidationError, 1, 1, "the loop at 'sr_encap' has no bound", 'say how many runs in all'),
    ('Firewall then NAT',
     ChainSyntaxError, 1, 18, 'the text ends too early', 'a P4SC branch is `A then B or '),
    ('chain { input => nat => output; }',
     ChainSyntaxError, 1, 7, "unexpected '{'", 'a chain needs a name'),
    ('chain a { input => nat => output; } }',
     ChainSyntaxError, 1, 37, "unexpected '}'", 'this `}` closes nothing'),
    ('chain a { input => @ => output; }',
     ChainSyntaxError, 1, 20, "unexpected '@'", 'see the chain language referen'),
    ('{"NFs": [{"name": "f", "type": "Firewal"}], "Links": [], "Route": {}}',
     ChainValidationError, 1, 32, "unknown NF 'Firewal'", "did you mean 'firewall'?"),
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Links": [["f", "g"]], "Route": {}}',
     ChainValidationError, 1, 62, "link names unknown NF 'g'", 'links name NFs by their "name"'),
    ('{"NFs": [], "Links": [] "Route": {}}',
     ChainSyntaxError, 1, 25, "invalid JSON: Expecting ',' delimiter", 'check quotes, commas and brack'),
    ('{"NFs": [{"name": "f", "type": "Firewall"}], "Route": {}}',
     ChainValidationError, 1, 2, 'intent 1 lacks Links', 'an intent has "NFs", "Links" a'),
    ('chain a { input => l2fwd => (ipsg : qos ? colour == 1); ipsg => output; qos => output; }',
     ChainValidationError, 1, 43, "no NF up to 'l2fwd' sets a field 'colour'", 'name it as NF.field, e.g. l2fw'),
]


def test_the_table_is_large_enough():
    assert len(BAD) >= 30


@pytest.mark.parametrize("text,cls,line,column,message,hint", BAD)
def test_bad_input(text, cls, line, column, message, hint):
    with pytest.raises(ChainError) as info:
        sfclab.parse(text)
    e = info.value
    assert type(e) is cls
    assert (e.line, e.column) == (line, column)
    assert message in e.message
    assert hint in e.hint and e.hint, "every error carries a hint"
    # The rendered error shows the offending line and a caret under the column.
    rendered = str(e)
    src = text.splitlines()[line - 1]
    assert src.strip() in rendered
    caret_line = rendered.splitlines()[2]
    assert caret_line.index("^") == 4 + column - 1


def test_bad_input_changes_nothing():
    chains = sfclab.parse("chain a: l2fwd")
    with pytest.raises(ChainError):
        sfclab.parse("chain b: nat\nchain a: lb", into=chains)
    assert chains.names() == ["a"]

