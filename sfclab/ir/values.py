"""Values as people write them: IPv4 and IPv6 addresses, MACs, prefixes, ports.

Table entries, traces and table reads hold plain integers.  Printed raw they
say ``167772160&&&0xFF000000`` or ``dmac=257``; printed here they say
``10.0.0.0/8`` and ``dmac=00:00:00:00:01:01``.  A value's *kind* comes from
where it lives:

* a header field: the chain language's fields (:data:`~sfclab.ir.fields.FIELDS`,
  by their user name ``ipv4.dst`` or their P4 name ``hdr.ipv4.dst_addr``), or
  the type the program declares for it (``ipv4_addr_t dst_addr;``);
* an action parameter: its P4 type (``mac_addr_t dmac``, ``port_t port``), read
  from the program's AST (:meth:`ValueKinds.of_program`) or, for a name alone,
  from the NF library's P4 (:meth:`ValueKinds.library`);
* a name ending in ``port`` (``ingress_port``, ``egress_spec``) is a port.

Kinds: ``int``, ``port`` (decimal), ``ipv4``, ``ipv6``, ``mac`` and ``bits``
(a bitmap, in binary).

>>> format_value(3405803786, "ipv4"), format_value(257, "mac")
('203.0.113.10', '00:00:00:00:01:01')
>>> k = ValueKinds()
>>> k.ternary("hdr.ipv4.dst_addr", 0x0A000000, 0xFF000000), k.ternary("hdr.tcp.dst_port", 80, 0xFFFF)
('10.0.0.0/8', '80')
>>> k.described("hdr.ipv4.dst_addr=0x0a000100/24 priority=2")
'hdr.ipv4.dst_addr=10.0.1.0/24 priority=2'
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from .fields import FIELDS

__all__ = ["KINDS", "TYPE_KINDS", "format_value", "prefix_len", "field_kind", "implied_keys",
           "ValueKinds"]

KINDS = ("int", "port", "ipv4", "ipv6", "mac", "bits")
#: P4 type names (sfclab's headers and the usual ones of v1model / TNA programs) -> kind.
TYPE_KINDS: Mapping[str, str] = {
    "mac_addr_t": "mac", "macAddr_t": "mac", "mac_addr": "mac", "EthernetAddress": "mac",
    "ipv4_addr_t": "ipv4", "ip4Addr_t": "ipv4", "ipv4_addr": "ipv4", "IPv4Address": "ipv4",
    "ipv6_addr_t": "ipv6", "ip6Addr_t": "ipv6", "ipv6_addr": "ipv6", "IPv6Address": "ipv6",
    "port_t": "port", "PortId_t": "port", "egressSpec_t": "port", "PortId": "port",
}
_WIDTHS = {"ipv4": 32, "ipv6": 128, "mac": 48}
#: Parameter names that are bitmaps of NF slots (shown in binary, as the fsm tab does).
_BITS_NAMES = frozenset({"bitmap"})
_P4_FIELDS = {f.p4: f.literal for f in FIELDS.values()}
_P4_WIDTHS = {f.p4: f.width for f in FIELDS.values()}
_USER_FIELDS = {name: f.literal for name, f in FIELDS.items()}


def format_value(value: int, kind: str = "int") -> str:
    """*value* the way it is written for its *kind*.

    >>> format_value(0x20010db8 << 96 | 1, "ipv6"), format_value(5, "bits"), format_value(2, "port")
    ('2001:db8::1', '0b101', '2')
    """
    if kind == "ipv4":
        return str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if kind == "ipv6":
        return str(ipaddress.IPv6Address(value & ((1 << 128) - 1)))
    if kind == "mac":
        return ":".join(f"{b:02x}" for b in (value & ((1 << 48) - 1)).to_bytes(6, "big"))
    if kind == "bits":
        return bin(value)
    return str(value)


def prefix_len(mask: int, width: int) -> int | None:
    """The prefix length *mask* stands for in a *width*-bit field, or None.

    >>> prefix_len(0xFFFFFF00, 32), prefix_len(0xFF00FF00, 32), prefix_len(0, 32)
    (24, None, 0)
    """
    full = (1 << width) - 1
    inv = ~mask & full
    if mask & ~full or inv & (inv + 1):
        return None
    return width - inv.bit_length()


def _is_port(name: str) -> bool:
    last = name.rpartition(".")[2].lower()
    return last == "port" or last.endswith(("_port", "_spec")) or last in ("port_id", "portid")


def field_kind(name: str) -> str:
    """The kind of a header field or metadata named as the chain language (``ipv4.dst``)
    or P4 (``hdr.ipv4.dst_addr``, ``meta.sfc.ingress_port``) names it.

    >>> field_kind("hdr.ipv4.src_addr"), field_kind("eth.dst"), field_kind("sfc.ingress_port")
    ('ipv4', 'mac', 'port')
    """
    kind = _P4_FIELDS.get(name) or _USER_FIELDS.get(name) or "int"
    if kind == "int" and name.startswith("meta.") and "hdr." + name[5:] in _P4_FIELDS:
        kind = _P4_FIELDS["hdr." + name[5:]]
    return "port" if kind == "int" and _is_port(name) else kind


def implied_keys(names: Iterable[str]) -> set[str]:
    """The validity keys (``hdr.tcp.$valid$``) among *names* that another key of the
    same header implies (``hdr.tcp.dst_port``): left out when an entry is printed.

    >>> sorted(implied_keys(["hdr.tcp.$valid$", "hdr.tcp.dst_port", "hdr.vlan.$valid$"]))
    ['hdr.tcp.$valid$']
    """
    names = list(names)
    headers = {n.rpartition(".")[0] for n in names if not n.endswith(".$valid$")}
    return {n for n in names if n.endswith(".$valid$") and n[:-len(".$valid$")] in headers}


_DESCRIBED = re.compile(r"(?P<name>[^\s=]+)=(?P<value>\S+)")
_HEX = r"(?:0[xX][0-9a-fA-F]+|\d+)"
_TERNARY = re.compile(rf"({_HEX})&&&({_HEX})")
_LPM = re.compile(rf"({_HEX})/(\d+)")
_RANGE = re.compile(rf"({_HEX})\.\.({_HEX})")


class ValueKinds:
    """The kinds of one program's fields and action parameters, and how to print them.

    *fields* maps field names (P4 expressions) to kinds; *params* maps action
    names (fully qualified, or short), and struct names (a digest's), to
    ``{parameter or field: kind}``.  Names it does
    not know fall back to :func:`field_kind`, then to the NF library's
    declarations (*library*), then to the rules above.
    """

    def __init__(self, fields: Mapping[str, str] | None = None,
                 params: Mapping[str, Mapping[str, str]] | None = None, *,
                 library: bool = True) -> None:
        self.fields = dict(fields or {})
        self.params = {a: dict(p) for a, p in (params or {}).items()}
        self._short: dict[str, dict[str, str] | None] = {}
        for action, p in self.params.items():
            short = action.rpartition(".")[2]
            self._short[short] = p if self._short.get(short, p) == p else None  # None: ambiguous
        self._library = library

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def of_program(cls, program: Any) -> ValueKinds:
        """The kinds a P4 program (a :class:`sfclab.p4.ast.Program`) declares: action
        parameters by their types, header fields (``hdr.ipv4.dst_addr``) by theirs."""
        from ..p4 import ast as A
        from ..p4.names import qualified_objects

        params: dict[str, dict[str, str]] = {}
        for obj in qualified_objects(program):
            if obj.kind == "action":
                params[obj.name] = {p.name: _type_kind(p.type, p.name)
                                    for p in obj.decl.params}
        types = {d.name: d for d in program.decls if isinstance(d, (A.HeaderDecl, A.StructDecl))}
        for name, decl in types.items():       # a digest's fields print as its struct says
            params.setdefault(name, {f.name: _type_kind(f.type, f.name) for f in decl.fields})
        fields: dict[str, str] = {}

        def visit(prefix: str, decl: Any, depth: int) -> None:
            for f in decl.fields:
                tname = getattr(f.type, "name", "")
                if tname in types and depth < 4:
                    visit(f"{prefix}.{f.name}", types[tname], depth + 1)
                else:
                    kind = _type_kind(f.type, f.name)
                    if kind != "int":
                        fields[f"{prefix}.{f.name}"] = kind

        for root, tname in (("hdr", "headers_t"), ("meta", "metadata_t"), ("sfc", "sfc_meta_t")):
            if tname in types:
                visit(root, types[tname], 0)
        return cls(fields, params)

    @classmethod
    def library(cls) -> ValueKinds:
        """Kinds from the NF library alone (for entries and traces printed without
        their program): parameters of ``…slotN_NF.action`` by that NF's P4."""
        return _LIBRARY

    # -- kinds --------------------------------------------------------------------------------
    def field(self, name: str) -> str:
        """The kind of the field (or match key) *name*."""
        base = name.partition("[")[0]
        return self.fields.get(base) or field_kind(base)

    def param(self, action: str, name: str) -> str:
        """The kind of parameter *name* of *action* (``SfcIngress.slot3_l3fwd.route``)."""
        known = self.params.get(action) or self._short.get(action.rpartition(".")[2])
        if known and name in known:
            return known[name]
        if self._library:
            kind = _library_param(action, name)
            if kind is not None:
                return kind
        if name in _BITS_NAMES:
            return "bits"
        return "port" if _is_port(name) else "int"

    # -- printing -----------------------------------------------------------------------------
    def value(self, field: str, value: int) -> str:
        return format_value(value, self.field(field))

    def lpm(self, field: str, value: int, plen: int) -> str:
        kind = self.field(field)
        if kind in _WIDTHS:
            return f"{format_value(value, kind)}/{plen}"
        return f"{value:#x}/{plen}"

    def ternary(self, field: str, value: int, mask: int, width: int | None = None) -> str:
        """A value/mask: the value when the mask is all ones, a prefix for an address
        whose mask is one, ``*`` for a zero mask, else ``value &&& mask``."""
        kind = self.field(field)
        width = (width or _WIDTHS.get(kind) or _P4_WIDTHS.get(field)
                 or max(mask.bit_length(), 1))
        if mask == 0:
            return "*"
        if mask == (1 << width) - 1:
            return format_value(value, kind)
        plen = prefix_len(mask, width)
        if kind in _WIDTHS and plen is not None:
            return f"{format_value(value & mask, kind)}/{plen}"
        if kind in _WIDTHS:
            return f"{format_value(value, kind)} &&& {format_value(mask, kind)}"
        return f"{value:#x} &&& {mask:#x}"

    def range(self, field: str, low: int, high: int) -> str:
        kind = self.field(field)
        return f"{format_value(low, kind)}..{format_value(high, kind)}"

    def match(self, field: str, m: Any) -> str:
        """One key of an entry (:mod:`sfclab.codegen.entries`' Exact, Lpm, Ternary, Range)."""
        if hasattr(m, "prefix_len"):
            return self.lpm(field, m.value, m.prefix_len)
        if hasattr(m, "mask"):
            return self.ternary(field, m.value, m.mask)
        if hasattr(m, "low"):
            return self.range(field, m.low, m.high)
        return self.value(field, m.value)

    def args(self, action: str, args: Iterable[tuple[str, int]]) -> str:
        """``dmac=00:00:00:00:01:01, port=2``: an action's arguments, each by its kind."""
        return ", ".join(f"{n}={format_value(v, self.param(action, n))}" for n, v in args)

    def described(self, text: str) -> str:
        """A switch's description of a matched entry (``hdr.ipv4.dst_addr=0x0a000100/24
        priority=2``) with each value printed by its kind; other text stays as it is."""
        hide = implied_keys(m["name"] for m in _DESCRIBED.finditer(text))

        def one(m: re.Match[str]) -> str:
            name, raw = m["name"], m["value"]
            if name in hide:
                return ""
            if name == "priority":
                return m.group()
            try:
                if t := _TERNARY.fullmatch(raw):
                    shown = self.ternary(name, int(t[1], 0), int(t[2], 0))
                    if " &&& " in shown and self.field(name) == "int":
                        return m.group()                    # as the switch wrote it
                elif t := _LPM.fullmatch(raw):
                    if self.field(name) == "int":
                        return m.group()
                    shown = self.lpm(name, int(t[1], 0), int(t[2]))
                elif t := _RANGE.fullmatch(raw):
                    shown = self.range(name, int(t[1], 0), int(t[2], 0))
                elif re.fullmatch(_HEX, raw):
                    shown = self.value(name, int(raw, 0))
                else:
                    return m.group()
            except ValueError:
                return m.group()
            return f"{name}={shown}"

        return re.sub(r"  +", " ", _DESCRIBED.sub(one, text)).strip()


def _type_kind(t: Any, name: str) -> str:
    kind = TYPE_KINDS.get(getattr(t, "name", ""))
    if kind is not None:
        return kind
    if name in _BITS_NAMES:
        return "bits"
    return "port" if _is_port(name) else "int"


_SLOT = re.compile(r"(?:^|\.)slot\d+_([A-Za-z0-9_]+?)(?:_\d+)?\.([A-Za-z_]\w*)$")


@lru_cache(maxsize=512)
def _library_param(action: str, name: str) -> str | None:
    """A parameter's kind from the NF library's P4 (``…slot3_l3fwd.route``'s ``dmac``)."""
    m = _SLOT.search(action)
    if m is None:
        return None
    from ..errors import SfclabError
    from ..p4.catalog import load_default

    try:
        control = load_default().definition(m[1]).control
    except (SfclabError, KeyError):
        return None
    decl = next((a for a in control.actions() if a.name == m[2]), None) if control else None
    param = next((p for p in decl.params if p.name == name), None) if decl else None
    return None if param is None else _type_kind(param.type, name)


_LIBRARY = ValueKinds()
