"""p4c's simple test framework (STF) files, read into commands.

An STF file is what p4c's test suite runs next to a program (``prog.p4`` and
``prog.stf``): table entries, packets in, the packets expected out.  One
command a line; ``#`` starts a comment::

    add ingress.t 10 hdr.h.a:0x0a**  hdr.h.b:0x10/4  ingress.set(v:7, port:2)
    setdefault ingress.t ingress.drop()
    mc_mgrp_create 1
    mc_node_create 0 1 2          # rid 0, ports 1 and 2: node handle 0
    mc_node_associate 1 0
    mirroring_add 5 3             # clone session 5 -> port 3
    packet 0 0a0b 0c0d
    expect 2 0a07 ****$           # * any nibble; $ ends an exact-length packet
    expect 3                      # any packet (or none) on port 3
    wait
    check_counter ingress.c(2) packets == 1

``add TABLE [PRIORITY] KEY:VALUE… ACTION(NAME:VALUE, …)``: a key value is a
number (``0x``, ``0b``, ``0o`` or decimal), ``VALUE/LEN`` (lpm), ``VALUE&&&MASK``,
``LO->HI`` (range), or hex/binary digits with ``*`` for any digit (ternary, or
an lpm prefix ending where the stars start).  :func:`parse_stf` reads a file into
:class:`Add`, :class:`SetDefault`, :class:`Packet`, :class:`Expect`,
:class:`CheckCounter`, :class:`Wait`, :class:`Remove` and :class:`Direct`
(the BMv2 runtime commands ``mc_*``, ``mirroring_*``, ``register_*``,
``counter_*``, ``meter_*``), each with its line; a line it cannot read raises
:class:`StfSyntaxError` with the line and a caret.  :func:`resolve_key` finds the
table key an STF key name means, and :class:`Multicast` keeps the groups the ``mc_*``
commands build, for every target alike.

>>> cmds = parse_stf("add t 5 h.a:0x0* a(x:1)\\npacket 1 0a 0b\\nexpect 2 0a**$")
>>> cmds[0].priority, cmds[0].keys, cmds[0].action, cmds[0].args
(5, (('h.a', '0x0*'),), 'a', (('x', '1'),))
>>> cmds[1].data, cmds[2].pattern, cmds[2].exact
(b'\\n\\x0b', '0A**', True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import SfclabError, SourceError

__all__ = ["StfSyntaxError", "StfCommand", "Add", "SetDefault", "Packet", "Expect",
           "CheckCounter", "Wait", "Remove", "Direct", "Unknown", "DIRECT_COMMANDS", "parse_stf",
           "parse_number", "key_value", "compare_packet", "resolve_key", "Multicast"]

#: BMv2 runtime commands an STF file may carry (p4c's bmv2stf passes them to the CLI).
DIRECT_COMMANDS = frozenset({
    "mirroring_add", "mirroring_add_mc", "mirroring_delete", "mirroring_get",
    "mc_mgrp_create", "mc_node_create", "mc_node_update", "mc_node_associate",
    "counter_read", "counter_write", "register_read", "register_write", "register_reset",
    "meter_get_rates", "meter_set_rates", "meter_array_set_rates"})


class StfSyntaxError(SourceError):
    """An STF line that does not follow the format."""


@dataclass(frozen=True, slots=True)
class StfCommand:
    """One command and where it is: ``line`` (1-based) and the ``text`` as written."""

    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Add(StfCommand):
    table: str
    priority: int | None
    keys: tuple[tuple[str, str], ...]
    action: str
    args: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class SetDefault(StfCommand):
    table: str
    action: str
    args: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Packet(StfCommand):
    port: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Expect(StfCommand):
    """``pattern`` is upper-case hex with ``*`` for any nibble; None: any packet, or none."""

    port: int
    pattern: str | None
    exact: bool = False


@dataclass(frozen=True, slots=True)
class CheckCounter(StfCommand):
    name: str
    index: int
    kind: str = "packets"
    op: str = "=="
    value: int = 0


@dataclass(frozen=True, slots=True)
class Wait(StfCommand):
    pass


@dataclass(frozen=True, slots=True)
class Remove(StfCommand):
    pass


@dataclass(frozen=True, slots=True)
class Direct(StfCommand):
    """A BMv2 runtime command (:data:`DIRECT_COMMANDS`) and its words."""

    name: str
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unknown(StfCommand):
    """A command this reader does not know (p4c's bmv2stf ignores those too): noted."""

    name: str


_NAME = r"[A-Za-z_$][\w$.\[\]]*"
_ACTION = re.compile(rf"\s*({_NAME})\s*\((.*)\)\s*(?:=\s*\w+\s*)?$")
_COUNTER = re.compile(rf"\s*({_NAME})\s*\(\s*(\w+)\s*\)\s*(?:(packets|bytes)\s*"
                      rf"(==|!=|<=|>=|<|>)\s*(\w+))?\s*$")
_OPS = ("==", "!=", "<=", ">=", "<", ">")


def parse_number(text: str) -> int:
    """An STF number: ``0x1f``, ``0b101``, ``0o17`` or decimal (``_`` allowed).

    >>> parse_number("0x1F"), parse_number("0b101"), parse_number("42")
    (31, 5, 42)
    """
    t = text.strip().replace("_", "").lower()
    if t.startswith("-"):
        return -parse_number(t[1:])
    base = {"0x": 16, "0b": 2, "0o": 8}.get(t[:2], 10)
    return int(t[2:] if base != 10 else t, base)


def _digits(text: str) -> tuple[str, int] | None:
    """``(digits, bits per digit)`` of a ``0x`` / ``0b`` / ``0o`` literal, else None."""
    t = text.strip().lower()
    bits = {"0x": 4, "0b": 1, "0o": 3}.get(t[:2])
    return (t[2:].replace("_", ""), bits) if bits else None


def key_value(kind: str, text: str, width: int):
    """An STF key value for a key of *kind* and *width*, in the model's terms:
    an int (exact, optional), ``(value, prefix_len)`` (lpm), ``(value, mask)``
    (ternary) or ``(lo, hi)`` (range).  As p4c's bmv2stf reads it: a ternary
    ``0x0a`` masks only the digits written (``0x0a`` on 16 bits is ``0x0a &&& 0xff``),
    ``*`` is any digit, an lpm prefix without ``/`` is as long as the digits written.

    >>> key_value("ternary", "0x0a*", 12), key_value("lpm", "0x0a******", 32)
    ((160, 4080), (167772160, 8))
    >>> key_value("lpm", "0x0a000000/8", 32), key_value("range", "3->7", 8)
    ((167772160, 8), (3, 7))
    """
    full = (1 << width) - 1
    t = text.strip()
    if "&&&" in t:
        v, m = t.split("&&&", 1)
        v, m = parse_number(v), parse_number(m)
        if kind == "lpm":
            return (v & m & full, bin(m & full).count("1"))
        return (v & m & full, m & full) if kind == "ternary" else v & full
    if "->" in t:
        lo, hi = t.split("->", 1)
        return (parse_number(lo) & full, parse_number(hi) & full)
    if "/" in t and kind in ("lpm", "ternary"):
        v, plen = t.split("/", 1)
        plen_i = min(parse_number(plen), width)
        m = full ^ ((1 << (width - plen_i)) - 1)
        return (parse_number(v) & m, m) if kind == "ternary" else (parse_number(v) & m, plen_i)
    dig = _digits(t)
    if kind == "ternary" and dig is not None:
        digits, bits = dig
        one = (1 << bits) - 1
        v = m = 0
        for d in digits:
            v, m = v << bits, m << bits
            if d != "*":
                v, m = v | int(d, 1 << bits), m | one
        return (v & m & full, m & full)
    if kind == "lpm" and dig is not None:
        digits, bits = dig
        value = int(digits.replace("*", "0") or "0", 1 << bits)
        plen = min((len(digits) - digits.count("*")) * bits, width)
        return (value & full & (full ^ ((1 << (width - plen)) - 1)), plen)
    v = parse_number(t)
    if kind == "ternary":
        return (v & full, full)
    if kind == "lpm":
        return (v & full, width)
    if kind == "range":
        return (v & full, v & full)
    return v & full


def compare_packet(pattern: str, got: bytes, exact: bool) -> str:
    """Why *got* does not match an ``expect`` *pattern* (empty: it matches), as p4c's
    test utilities compare: nibble by nibble, ``*`` any, longer packets match unless
    the pattern ends with ``$``.

    >>> compare_packet("0A**", bytes([10, 3, 4]), False), compare_packet("0A**", b"\\x0a", False)
    ('', 'it has 1 byte(s), the pattern 2')
    """
    have = got.hex().upper()
    if len(have) < len(pattern):
        return f"it has {len(got)} byte(s), the pattern {(len(pattern) + 1) // 2}"
    for i, (want, h) in enumerate(zip(pattern, have)):
        if want != "*" and want != h:
            return f"nibble {i} (byte {i // 2}) is {h}, the pattern says {want}"
    if exact and len(have) > len(pattern):
        return f"it has {len(got)} byte(s); the pattern ends with $ at {len(pattern) // 2}"
    return ""


def parse_stf(text: str, *, source: str = "") -> list[StfCommand]:
    """The commands of an STF file (see the module's docstring)."""
    out: list[StfCommand] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word, _, rest = line.partition(" ")
        word = word.lower()
        try:
            cmd = _command(word, rest.strip(), n, raw)
        except (ValueError, IndexError) as e:
            col = raw.find(word) + 1 if word else 1
            raise StfSyntaxError(f"cannot read this {word!r} line: {e}", line=n, column=col,
                                 source=source, text=text, width=max(1, len(word)),
                                 hint=_HINTS.get(word, "see p4c's STF format: add, setdefault, "
                                                       "packet, expect, wait, check_counter, …"))
        if cmd is not None:
            out.append(cmd)
    return out


_HINTS = {
    "add": "add TABLE [PRIORITY] KEY:VALUE … ACTION(ARG:VALUE, …)",
    "setdefault": "setdefault TABLE ACTION(ARG:VALUE, …)",
    "packet": "packet PORT HEX-BYTES",
    "expect": "expect PORT [HEX-BYTES with * for any nibble, $ at the end for an exact length]",
    "check_counter": "check_counter NAME(INDEX) [packets|bytes OP NUMBER]",
}


def _command(word: str, rest: str, n: int, raw: str) -> StfCommand | None:
    if word == "add":
        return _add(rest, n, raw)
    if word == "setdefault":
        table, _, act = rest.partition(" ")
        action, args = _action(act)
        return SetDefault(n, raw, table.strip(), action, args)
    if word == "packet":
        port, _, data = rest.partition(" ")
        hexes = "".join(data.split())
        if not re.fullmatch(r"[0-9a-fA-F]*", hexes):
            raise ValueError(f"the packet must be hex digits, got {data!r}")
        # an odd last digit is a byte of its own (0x0N), as p4c's bmv2stf read it
        tail = bytes([int(hexes[-1], 16)]) if len(hexes) % 2 else b""
        return Packet(n, raw, _port(port), bytes.fromhex(hexes[:len(hexes) - len(tail)]) + tail)
    if word == "expect":
        port, _, data = rest.partition(" ")
        pat = "".join(data.split()).upper()
        exact = pat.endswith("$")
        pat = pat.rstrip("$")
        if not re.fullmatch(r"[0-9A-F*]*", pat):
            raise ValueError(f"the pattern holds something other than hex digits, * and $: {data!r}")
        return Expect(n, raw, _port(port), pat if pat or exact else None, exact)
    if word == "no_packet":
        return None
    if word == "wait":
        return Wait(n, raw)
    if word == "remove":
        return Remove(n, raw)
    if word == "check_counter":
        m = _COUNTER.match(rest)
        if not m:
            raise ValueError("expected NAME(INDEX) [packets|bytes OP NUMBER]")
        return CheckCounter(n, raw, m[1], parse_number(m[2]), m[3] or "packets", m[4] or "==",
                            parse_number(m[5]) if m[5] else 0)
    if word in DIRECT_COMMANDS:
        return Direct(n, raw, word, tuple(rest.split()))
    if re.fullmatch(r"[a-z_]+", word):
        return Unknown(n, raw, word)        # p4c's bmv2stf ignores what it does not know
    raise ValueError(f"unknown command {word!r}")


def _port(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"the port must be a decimal number, got {text!r}")
    return int(text)


def _action(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    m = _ACTION.match(text)
    if not m:
        raise ValueError(f"expected ACTION(ARG:VALUE, …), got {text.strip()!r}")
    args = []
    for item in filter(None, (a.strip() for a in m[2].split(","))):
        name, sep, value = item.partition(":")
        if not sep or not value.strip():
            raise ValueError(f"action argument {item!r} must be NAME:VALUE")
        parse_number(value)
        args.append((name.strip(), value.strip()))
    return m[1], tuple(args)


def _add(rest: str, n: int, raw: str) -> Add:
    body = re.sub(r"\)\s*=\s*\w+\s*$", ")", rest.rstrip())      # "= HANDLE" names the entry
    paren = body.rfind("(")                 # the action's: its arguments hold no parentheses
    if paren < 0 or not body.endswith(")"):
        raise ValueError("no action: expected ACTION(…) at the end")
    head = body[:paren].split()
    if len(head) < 2:
        raise ValueError("expected a table name, keys and an action")
    action_start = body[:paren].rstrip().rfind(head[-1])
    action, args = _action(body[action_start:])
    words = head[:-1]
    table, words = words[0], words[1:]
    prio = None
    if words and re.fullmatch(r"\d+", words[0]):
        prio, words = int(words[0]), words[1:]
    keys = []
    for w in words:
        name, sep, value = w.rpartition(":")
        if not sep or not name or not value:
            raise ValueError(f"key {w!r} must be NAME:VALUE")
        keys.append((name, value))
    return Add(n, raw, table, prio, tuple(keys), action, args)


def resolve_key(name: str, keys: list[str]) -> str | None:
    """The table key an STF key *name* means (as p4c's bmv2stf finds it): the same
    name, with ``$`` or ``.$valid$`` added, a ``.valid`` for ``.$valid$``, a
    ``$N`` for ``[N]``, or the one key ending with ``.name``; ``isValid()`` and
    ``$valid$`` are the same.

    >>> resolve_key("h.valid", ["hdr.h.isValid()", "hdr.h.a"]), resolve_key("a", ["hdr.h.a"])
    ('hdr.h.isValid()', 'hdr.h.a')
    """
    norm = {_norm(k): k for k in keys}
    n = _norm(name)
    cands = [n, n + "$", n + ".$valid$"]
    if n.endswith(".valid"):
        cands.append(n[:-len("valid")] + "$valid$")
    for c in cands:
        if c in norm:
            return norm[c]
    ends = [k for nk, k in norm.items() if any(nk.endswith("." + c) for c in cands)
            or (n == "valid" and nk.endswith(".$valid$"))]
    if len(ends) == 1 or (ends and n == "valid"):
        return ends[0]
    return None


def _norm(name: str) -> str:
    name = re.sub(r"\$(\d+)", r"[\1]", name)
    return name.replace(".isValid()", ".$valid$").replace("isValid()", "$valid$")


@dataclass
class Multicast:
    """BMv2's multicast commands kept as groups of ``(port, rid)`` replicas: nodes
    (``mc_node_create RID PORT…`` returns handles 0, 1, …) joined to groups."""

    nodes: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    groups: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    def apply(self, cmd: Direct) -> tuple[str, int | None]:
        """Play *cmd*; returns its answer and the group it changed (None: none)."""
        w = [parse_number(x) for x in cmd.words]
        if cmd.name == "mc_mgrp_create":
            self.groups.setdefault(w[0], [])
            return f"group {w[0]} created", w[0]
        if cmd.name == "mc_node_create":
            self.nodes.append((w[0], tuple(w[1:])))
            return f"node handle {len(self.nodes) - 1}", None
        if cmd.name == "mc_node_update":
            self.nodes[w[0]] = (self.nodes[w[0]][0], tuple(w[1:]))
            return "node updated", None
        group, handle = w[0], w[1]
        if group not in self.groups:
            raise SfclabError(f"multicast group {group} was not created (mc_mgrp_create)")
        if not 0 <= handle < len(self.nodes):
            raise SfclabError(f"there is no multicast node with handle {handle}")
        rid, ports = self.nodes[handle]
        self.groups[group] += [(p, rid) for p in ports]
        return f"node {handle} joined group {group}", group
