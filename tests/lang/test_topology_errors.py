"""Malformed topologies: each gives a TopologyError with the line, a caret on the token at
fault (its width too), the start of the message and the start of the hint.

The comment after each row shows the text the caret covers.
"""

from __future__ import annotations

import pytest

from sfclab.errors import TopologyError
from sfclab.lang import parse_topology

# (text, line, column, caret width, start of the message, start of the hint)
BAD = [
    ('swich s1',
     1, 1, 5, "unexpected 'swich'; expected `host`, `link`, `se", "did you mean 'switch'?"),  # [swich]
    ('switch s1 stgaes 12',
     1, 11, 6, "switch has no property 'stgaes'", "did you mean 'stages' or 'tables'?"),  # [stgaes]
    ('switch s1 stages twelve',
     1, 18, 6, "stages takes a whole number, not 'twelve'", 'e.g. `stages 8`'),  # [twelve]
    ('switch s1 stages 8 stages 9',
     1, 20, 6, "'stages' is given twice", 'keep one `stages`'),  # [stages]
    ('switch s1 stages 8, 9',
     1, 21, 1, "'stages' takes one value", 'remove the extra values after `stage'),  # [9]
    ('switch s1 arch v1modle',
     1, 16, 7, "switch 's1': unknown architecture 'v1modle'", "did you mean 'v1model'?"),  # [v1modle]
    ('switch s1 ports 600',
     1, 17, 3, "switch 's1': 600 ports do not fit a 9-bit port n", 'use ports 510 or fewer'),  # [600]
    ('switch s1 ports 0',
     1, 17, 1, "switch 's1': ports must be a whole number ≥ 1, n", 'e.g. `ports 4`'),  # [0]
    ('switch s1, s1',
     1, 12, 2, "'s1' is defined twice", 'give each switch, host and server it'),  # [s1]
    ('switch s1 s2',
     1, 11, 2, 'the line ends too early; expected a value (8, v1', 'separate names with commas: `switch '),  # [s2]
    ('switch s1 stages',
     1, 17, 1, 'the line ends too early; expected a value (8, v1', '`stages` needs a value, e.g. `stages'),  # []
    ('switch s1 stages=8',
     1, 17, 1, "unexpected '='; expected a value (8, v1model, 0.", 'a property is a name and a value, wi'),  # [=]
    ('switch "a b"',
     1, 8, 5, "bad node name 'a b'", 'names start with a letter and use le'),  # ["a b"]
    ('switch s1\nhost h1 10.0.0.300',
     2, 9, 10, "host 'h1': '10.0.0.300' is not an IPv4 address", 'write it like 10.0.0.1'),  # [10.0.0.300]
    ('host h1 mac 0:0:0:0:0:1',
     1, 13, 11, "'0:0:0:0:0:1' is not a MAC address", 'a MAC address is six pairs of hex di'),  # [0:0:0:0:0:1]
    ('host h1 10.0.0.1\nhost h2 10.0.0.1',
     2, 9, 8, "host 'h2': address 10.0.0.1 is already 'h1''s", 'give each host its own address'),  # [10.0.0.1]
    ('host h1 mac 00:00:00:00:00:01\nhost h2 mac 00:00:00:00:00:01',
     2, 13, 17, "host 'h2': MAC 00:00:00:00:00:01 is already 'h1'", 'give each host its own MAC address'),  # [00:00:00:00:00:01]
    ('host h1 10.0.0.1 ip 10.0.0.2',
     1, 18, 2, 'the address is given twice', 'keep `host h1 10.0.0.1` or `ip …`'),  # [ip]
    ('host h1, h2 10.0.0.1',
     1, 13, 8, 'an address is for one host, and this line names ', 'write one `host` line per address'),  # [10.0.0.1]
    ('switch s1\nhost h1, h2 at s1:3',
     2, 19, 1, 'port 3 takes one of the 2 hosts of this line', '`at s1` gives each the next free por'),  # [3]
    ('host h1 at 10.0.0.1',
     1, 12, 8, "`at` names a switch or a switch port, not '10.0.", 'e.g. `at s1` (the next free port) or'),  # [10.0.0.1]
    ('host h1 at s9',
     1, 12, 2, "unknown node 's9' in a link", 'define the switch, host or server be'),  # [s9]
    ('host h1 ports 3',
     1, 9, 5, "host has no property 'ports'", 'a host takes: ip, mac, at'),  # [ports]
    ('server srv1 runs ipz',
     1, 18, 3, "unknown NF 'ipz'", "did you mean 'ips'?"),  # [ipz]
    ('server srv1 runs 3',
     1, 18, 1, "'3' is not an NF name", 'e.g. `runs ips, dpi`'),  # [3]
    ('switch s1\nlink s1 -- s2',
     2, 12, 2, "unknown node 's2' in a link", 'define the switch, host or server be'),  # [s2]
    ('switch s1, s2\nlink s1:70 -- s2',
     2, 9, 2, "switch 's1' has ports 1..64, not 70", 'raise its ports (ports 70) or pick a'),  # [70]
    ('switch s1, s2\nlink s1 - s2',
     2, 9, 1, "unexpected character '-'", 'a link is `link A -- B`, with two da'),  # [-]
    ('switch s1, s2\nlink s1 : 3 -- s2',
     2, 9, 1, "unexpected character ':'", 'write a port right after its node, w'),  # [:]
    ('switch s1, s2\nlink s1 -- s2 latency 0.5 ms',
     2, 27, 2, 'the line ends too early; expected a value (8, v1', 'write the unit right after the numbe'),  # [ms]
    ('switch s1, s2\nlink s1 -- s2 latency 0.5',
     2, 23, 3, 'latency 0.5 needs a unit', 'write the unit right after the numbe'),  # [0.5]
    ('switch s1, s2\nlink s1 -- s2 latency 5mss',
     2, 24, 3, "unknown latency unit 'mss'", "did you mean 'ms'?"),  # [mss]
    ('switch s1, s2\nlink s1 -- s2 bandwidth 10Gbs',
     2, 27, 3, "unknown bandwidth unit 'Gbs'", "did you mean 'Gbps' or 'bps'?"),  # [Gbs]
    ('switch s1, s2\nlink s1 -- s2 bandwidth 0Gbps',
     2, 25, 5, 'link s1 -- s2: bandwidth must be > 0, not 0.0', 'e.g. `bandwidth 10Gbps`'),  # [0Gbps]
    ('switch s1, s2\nlink s1 -- s2 speed 10Gbps',
     2, 15, 5, "link has no property 'speed'", 'a link takes: latency, bandwidth'),  # [speed]
    ('switch s1\nlink s1 -- s1',
     2, 12, 2, "a link from 's1' to itself", 'a link joins two different nodes'),  # [s1]
    ('switch s1\nhost h1\nhost h2\nlink h1 -- h2',
     4, 12, 2, 'link h1 -- h2: hosts and servers attach to switc', 'link h1 to a switch: `link h1 -- s1`'),  # [h2]
    ('switch s1, s2\nlink s1:1 -- s2:1\nlink s1:1 -- s2:2',
     3, 14, 2, "'s1' and 's2' are already linked (s1:1 -- s2:1)", 'one link per pair of nodes'),  # [s2]
    ('switch s1, s2, s3\nlink s1:1 -- s2\nlink s3 -- s1:1',
     3, 15, 1, "port 1 of 's1' is already linked to 's2'", 'each port takes one link; free ports'),  # [1]
    ('switch s1 ports 2\nhost a, b at s1\nhost c at s1',
     3, 11, 2, "switch 's1' has ports 1..2, not 3 (all its ports", 'raise its ports (ports 3) or pick a '),  # [s1]
    ('link',
     1, 5, 1, 'the line ends too early; expected a name, a swit', '`link` needs a name, e.g. `link h1 -'),  # []
    ('link s1',
     1, 8, 1, 'the line ends too early; expected `--`', 'a link joins two nodes: `link A -- B'),  # []
    ('topology a\ntopology b',
     2, 10, 1, "the topology is already named 'a' (line 1)", 'keep one `topology` line'),  # [b]
    ('use fat_tree(3)',
     1, 14, 1, 'fat_tree(): k must be even, not 3', 'k = 2, 4, 6, 8 …'),  # [3]
    ('use fat_tre(4)',
     1, 5, 7, "no topology generator 'fat_tre'", "did you mean 'fat_tree'?"),  # [fat_tre]
    ('use fat_tree 4',
     1, 14, 1, "unexpected '4'; expected `(`", 'call a generator with parentheses: `'),  # [4]
    ('use fat_tree(4, stages=0)',
     1, 24, 1, "switch 'c1': stages must be a whole number ≥ 1, ", 'e.g. `stages 4`'),  # [0]
    ('use fat_tree(4, hosts=2)',
     1, 17, 5, "fat_tree() has no argument 'hosts'", "did you mean 'ports'? use fat_tree(k"),  # [hosts]
    ('use leaf_spine(2)',
     1, 5, 10, 'leaf_spine() needs leaves', 'use leaf_spine(spines, leaves, hosts'),  # [leaf_spine]
    ('use ring(2)',
     1, 10, 1, 'ring(): a ring needs at least 3 switches, not 2', 'use line(n) for 1 or 2 switches'),  # [2]
    ('use line(2, host=1)',
     1, 13, 4, "line() has no argument 'host'", "did you mean 'hosts'? use line(n, ho"),  # [host]
    ('use line(2',
     1, 11, 1, 'the line ends too early; expected `,`, `)`', 'close the generator call: `use line('),  # []
    ('use line(2,)',
     1, 12, 1, "unexpected ')'; expected a value (8, v1model, 0.", 'an argument is missing after the las'),  # [)]
    ('use line(n=2, 3)',
     1, 15, 1, 'a plain argument after a named one', 'put it first: line(3, …)'),  # [3]
    ('use line(2, n=3)',
     1, 13, 1, "'n' is given twice", 'keep one `n=…`'),  # [n]
    ('use line(2, 3)',
     1, 13, 1, 'line() takes 1 plain argument', 'use line(n, hosts=1[, arch=…, pipes='),  # [3]
    ('use line(2.5)',
     1, 10, 3, 'line(): n must be a whole number ≥ 1, not 2.5', 'use line(n, hosts=1[, arch=…, pipes='),  # [2.5]
    ('use line(2, arch=tnx)',
     1, 18, 3, "switch 's1': unknown architecture 'tnx'", "did you mean 'tna'?"),  # [tnx]
    ('switch h1\nuse line(2)',
     2, 5, 4, "line(…) makes 'h1', which is already defined", 'it makes 2 switches (s1 … s2), 2 hos'),  # [line]
    ('switch s1 (8)',
     1, 11, 1, "unexpected '('; expected `,`, a name, the end of", 'only a generator takes parentheses: '),  # [(]
    ('switch s1 stages 8 $',
     1, 20, 1, "unexpected character '$'", "'$' cannot appear here: names are le"),  # [$]
    ('use line(2, hosts=2.0)',
     1, 19, 3, "line(): hosts must be a whole number ≥ 0, not 2.0", 'use line(n, hosts=1['),  # [2.0]
    ('use line(2, arch=5)',
     1, 18, 1, "switch 's1': unknown architecture 5", 'use one of v1model, tna'),  # [5]
    ('use fat_tree(88)',
     1, 14, 2, "fat_tree(): k=88 makes 180,048 nodes, more than", 'use a smaller network'),  # [88]
    ('use ring(3, hosts=-1)',
     1, 19, 1, "unexpected character '-'", 'numbers here are whole and not negat'),  # [-]
    ('switch leaf-1',
     1, 12, 1, "unexpected character '-'", 'quote a name with \'-\' in it: "leaf-1"'),  # [-]
    # issue 19.8: numbers longer than Python converts reached a traceback
    ('use line(' + '9' * 5000 + ')',
     1, 10, 20, 'a number of 5,000 digits is longer than sfclab r', 'no count, port, width or value needs'),  # [9999…]
    ('switch s1 ports ' + '9' * 4301,
     1, 17, 20, 'a number of 4,301 digits is longer than sfclab r', 'no count, port, width or value needs'),  # [9999…]
    ('switch s1\nswitch s2\nlink s1:' + '9' * 4400 + ' -- s2',
     3, 9, 20, 'a number of 4,400 digits is longer than sfclab r', 'no count, port, width or value needs'),  # [9999…]
]


def test_the_table_is_large_enough():
    assert len(BAD) >= 50


@pytest.mark.parametrize("text,line,column,width,message,hint", BAD)
def test_bad_topology(text, line, column, width, message, hint):
    with pytest.raises(TopologyError) as info:
        parse_topology(text, source="lab.topo")
    e = info.value
    assert (e.line, e.column, e.width) == (line, column, width)
    assert e.message.startswith(message)
    assert e.hint.startswith(hint) and e.hint, "every error carries a hint"
    rendered = str(e).splitlines()
    assert rendered[0].startswith(f"lab.topo:{line}:{column}: ")
    assert rendered[1] == "    " + text.splitlines()[line - 1]
    assert rendered[2] == " " * (4 + column - 1) + "^" * width
