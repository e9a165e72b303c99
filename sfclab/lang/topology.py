"""The topology language: switches, hosts, servers and links as text.

What users write in a ``%%topology`` cell or a ``.topo`` file, lowered to a
:class:`~sfclab.ir.topology.Topology`::

    >>> t = parse_topology('''
    ... topology lab
    ... switch s1, s2 stages 8
    ... host h1 10.0.0.1 at s1
    ... host h2 10.0.0.2 at s2:5
    ... link s1 -- s2 latency 0.5ms bandwidth 10Gbps
    ... ''')
    >>> t.summary()
    'topology lab: 2 switches, 2 hosts, 0 servers, 3 links'
    >>> t.switch_route("h1", "h2"), str(t.link("s1", "s2"))
    (['s1', 's2'], 's1:2 -- s2:1 latency 0.5ms bandwidth 10Gbps')

One statement a line: ``topology NAME``, ``switch NAMES [PROPS]``, ``host NAMES
[ADDRESS] [PROPS]``, ``server NAMES [PROPS]``, ``link A -- B [-- C …] [PROPS]``,
``use GENERATOR(ARGS)``.  Bad input raises :class:`~sfclab.errors.TopologyError`
with the line, a caret under the token at fault and a hint; :func:`format_topology`
prints a topology back (``parse_topology(format_topology(t))`` equals ``t``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from ..errors import CatalogError, TopologyError, did_you_mean
from ..ir.topology import Topology
from .ast import Pos
from .text import source_text
from .topoerrors import syntax_error
from .topoformat import format_topology
from .topogen import SWITCH_KEYS, generate, merge
from .topogen import tok_pos as _pos
from .topogen import tok_text as _text

__all__ = ["parse_topology", "parse_topology_file", "format_topology", "STATEMENTS",
           "PROPERTIES", "UNITS"]

#: Statement keywords (a node with one of these names is written in quotes).
STATEMENTS = ("topology", "switch", "host", "server", "link", "use")
#: Properties each statement takes.
PROPERTIES = {
    "switch": SWITCH_KEYS,
    "host": ("ip", "mac", "at"),
    "server": ("runs", "at"),
    "link": ("latency", "bandwidth"),
}
#: Units of ``latency`` (to ms) and ``bandwidth`` (to Gbps); case does not matter.
UNITS = {
    "latency": {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3},
    "bandwidth": {"bps": 1e-9, "Kbps": 1e-6, "Mbps": 1e-3, "Gbps": 1.0, "Tbps": 1e3},
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("topology.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=False, transformer=_ToStatements())


class _End(NamedTuple):
    """A link end as written: the node and, if given, the port."""

    name: str
    pos: Pos
    port: int | None = None
    port_pos: Pos = Pos()


def _end(tok: Token) -> _End:
    """A node (``s1``, ``"leaf-1"``) or a port (``s1:3``, ``"leaf-1":3``) as written."""
    if tok.type not in ("PORTREF", "QPORT"):
        return _End(_text(tok), _pos(tok))
    name, _, port = tok.rpartition(":")
    return _End(name.strip('"'), Pos(tok.line, tok.column, len(name)), int(port),
                Pos(tok.line, tok.column + len(name) + 1, len(port)))


class _Stmt(NamedTuple):
    keyword: Token
    names: list[Token]
    props: list[tuple[Token, list[Token]]]
    address: Token | None = None
    ends: list[_End] = []
    args: list[tuple[Token | None, Token]] = []


class _ToStatements(Transformer):
    """Statements as :class:`_Stmt` tuples of tokens, built while the parser runs."""

    def start(self, c):
        return c

    def names(self, c):
        return c

    def prop(self, c):
        return (c[0], c[1:])

    def endpoint(self, c):
        return _end(c[0])

    def arg(self, c):
        return (None, c[0])

    def kwarg(self, c):
        return (c[0], c[1])

    def topology_stmt(self, c):
        return _Stmt(c[0], [c[1]], [])

    def switch_stmt(self, c):
        return _Stmt(c[0], c[1], c[2:])

    server_stmt = switch_stmt

    def host_stmt(self, c):
        kw, names, *rest = c
        address = rest.pop(0) if rest and isinstance(rest[0], Token) else None
        return _Stmt(kw, names, rest, address)

    def link_stmt(self, c):
        ends = [x for x in c[1:] if isinstance(x, _End)]
        props = [x for x in c[1:] if isinstance(x, tuple) and not isinstance(x, _End)]
        return _Stmt(c[0], [], props, ends=ends)

    def use_stmt(self, c):
        return _Stmt(c[0], [c[1]], [], args=list(c[2:]))


def parse_topology(text: str | bytes, *, source: str = "<topology>",
                   catalog: Any = None) -> Topology:
    """Parse topology text into a :class:`~sfclab.ir.topology.Topology`.

    *catalog* resolves the NF names a server ``runs`` (default: sfclab's NF
    library); they are stored by their canonical names.
    """
    text = source_text(text, source=source, error=TopologyError)
    try:
        stmts = _parser().parse(text)
    except UnexpectedInput as e:
        raise syntax_error(e, text, source, _parser()) from None
    return _Builder(text, source, catalog).run(stmts)


def parse_topology_file(path: str | Path, *, catalog: Any = None) -> Topology:
    """Parse a ``.topo`` file."""
    p = Path(path)
    return parse_topology(p.read_bytes(), source=str(p), catalog=catalog)


class _Builder:
    """Runs the statements in order against one :class:`Topology`."""

    def __init__(self, text: str, source: str, catalog: Any) -> None:
        self.topo = Topology(source=source, text=text)
        self.catalog = catalog
        self.named: Token | None = None
        #: Node -> the ports some statement names (``at s1:3``, ``link s1:1 -- …``): a
        #: port left out is the lowest free one that no statement names, wherever it is.
        self.named_ports: dict[str, set[int]] = {}

    def err(self, message: str, pos: Pos, hint: str) -> TopologyError:
        return self.topo._error(message, line=pos.line, column=pos.column, width=pos.width,
                                hint=hint)

    def run(self, stmts: list[_Stmt]) -> Topology:
        for s in stmts:
            ends = list(s.ends) if str(s.keyword) == "link" else []
            if str(s.keyword) in ("host", "server"):
                at = dict((str(k), v) for k, v in s.props).get("at")
                if at and at[0].type in ("NAME", "STRING", "PORTREF", "QPORT"):
                    ends.append(_end(at[0]))
            for e in ends:
                if e.port is not None:
                    self.named_ports.setdefault(e.name, set()).add(e.port)
        for s in stmts:
            getattr(self, str(s.keyword))(s)
        return self.topo

    def implicit_port(self, node: str) -> int | None:
        """The port a link takes on *node* when its statement names none: the lowest
        free one that no statement names (None: let the topology choose, and say
        why there is none)."""
        if node not in self.topo or node not in self.named_ports:
            return None
        used, named = self.topo.ports_used(node), self.named_ports[node]
        obj = self.topo.node(node)
        top = getattr(obj, "ports", 10_000)
        return next((p for p in range(self.topo._first_port(node), top + 1)
                     if p not in used and p not in named), None)

    # -- properties ---------------------------------------------------------------------------
    def props(self, s: _Stmt) -> dict[str, tuple[Token, list[Token]]]:
        what = str(s.keyword)
        known = PROPERTIES[what]
        out: dict[str, tuple[Token, list[Token]]] = {}
        for key, values in s.props:
            k = str(key)
            if k not in known:
                raise self.err(f"{what} has no property {k!r}", _pos(key),
                               did_you_mean(k, known) or f"a {what} takes: {', '.join(known)}")
            if k in out:
                raise self.err(f"{k!r} is given twice", _pos(key), f"keep one `{k}`")
            if len(values) > 1 and k != "runs":
                raise self.err(f"{k!r} takes one value", _pos(values[1]),
                               f"remove the extra values after `{k} {values[0]}`")
            out[k] = (key, values)
        return out

    def whole(self, key: str, tok: Token) -> int:
        if tok.type != "INT":
            raise self.err(f"{key} takes a whole number, not {str(tok)!r}", _pos(tok),
                           f"e.g. `{key} 8`")
        return int(tok)

    def quantity(self, key: str, tok: Token) -> float:
        units = UNITS[key]
        example = "0.5ms" if key == "latency" else "10Gbps"
        if tok.type in ("INT", "NUMBER"):
            raise self.err(f"{key} {tok} needs a unit", _pos(tok),
                           f"write the unit right after the number, e.g. `{key} {example}` "
                           f"(units: {', '.join(units)})")
        if tok.type != "QUANTITY":
            raise self.err(f"{key} takes an amount such as {example}, not {str(tok)!r}",
                           _pos(tok), f"units: {', '.join(units)}")
        i = next(i for i, ch in enumerate(tok) if ch.isalpha())
        number, unit = float(tok[:i]), tok[i:]
        factor = {u.lower(): f for u, f in units.items()}.get(unit.lower())
        if factor is None:
            raise self.err(f"unknown {key} unit {unit!r}",
                           Pos(tok.line, tok.column + i, len(unit)),
                           did_you_mean(unit, units) or f"units: {', '.join(units)}")
        return number * factor

    def end(self, tok: Token) -> _End:
        """An ``at`` value: a switch, or a switch port."""
        if tok.type not in ("NAME", "STRING", "PORTREF", "QPORT"):
            raise self.err(f"`at` names a switch or a switch port, not {str(tok)!r}", _pos(tok),
                           "e.g. `at s1` (the next free port) or `at s1:3`")
        return _end(tok)

    # -- statements ---------------------------------------------------------------------------
    def topology(self, s: _Stmt) -> None:
        tok = s.names[0]
        if self.named is not None:
            raise self.err(f"the topology is already named {self.topo.name!r} "
                           f"(line {self.named.line})", _pos(tok), "keep one `topology` line")
        self.named, self.topo.name = tok, _text(tok)

    def switch(self, s: _Stmt) -> None:
        props = self.props(s)
        kw: dict[str, Any] = {}
        at: dict[str, tuple[int, int, int]] = {}
        for key, (_, (tok, *_)) in props.items():
            kw[key] = _text(tok) if key == "arch" else self.whole(key, tok)
            at[key] = _pos(tok)
        for name in s.names:
            p = _pos(name)
            self.topo.add_switch(_text(name), **kw, line=p.line, column=p.column,
                                 at={**at, "name": p})

    def host(self, s: _Stmt) -> None:
        props = self.props(s)
        ip = s.address
        if "ip" in props:
            if ip is not None:
                raise self.err("the address is given twice", _pos(props["ip"][0]),
                               f"keep `host {s.names[0]} {ip}` or `ip …`")
            ip = props["ip"][1][0]
        mac = props["mac"][1][0] if "mac" in props else None
        where = self.attach_point(s, props)
        for what, tok in (("an address", ip), ("a MAC address", mac)):
            if tok is not None and len(s.names) > 1:
                raise self.err(f"{what} is for one host, and this line names {len(s.names)}",
                               _pos(tok), "write one `host` line per address")
        for name in s.names:
            p = _pos(name)
            at = {"name": p, **({"ipv4": _pos(ip)} if ip is not None else {}),
                  **({"mac": _pos(mac)} if mac is not None else {})}
            self.topo.add_host(_text(name), ipv4=_address(ip), mac=_address(mac), line=p.line,
                               column=p.column, at=at)
            self.attach(name, where)

    def server(self, s: _Stmt) -> None:
        props = self.props(s)
        nfs = tuple(self.nf(tok) for tok in props["runs"][1]) if "runs" in props else ()
        where = self.attach_point(s, props)
        for name in s.names:
            p = _pos(name)
            self.topo.add_server(_text(name), nfs=nfs, line=p.line, column=p.column,
                                 at={"name": p})
            self.attach(name, where)

    def nf(self, tok: Token) -> str:
        if tok.type not in ("NAME", "STRING"):
            raise self.err(f"{str(tok)!r} is not an NF name", _pos(tok),
                           "e.g. `runs ips, dpi`")
        if self.catalog is None:
            from ..p4.catalog import load_default     # lang.default_catalog(), from below

            self.catalog = load_default()
        try:
            return self.catalog.resolve(_text(tok)).name
        except CatalogError as e:
            raise self.err(f"unknown NF {_text(tok)!r}", _pos(tok), e.hint) from None

    def attach_point(self, s: _Stmt, props: dict) -> _End | None:
        if "at" not in props:
            return None
        where = self.end(props["at"][1][0])
        if where.port is not None and len(s.names) > 1:
            raise self.err(f"port {where.port} takes one of the {len(s.names)} "
                           f"{s.keyword}s of this line", where.port_pos,
                           f"`at {where.name}` gives each the next free port")
        return where

    def attach(self, name: Token, where: _End | None) -> None:
        if where is None:
            return
        p = _pos(name)
        port = where.port if where.port is not None else self.implicit_port(where.name)
        self.topo.add_link(_text(name), where.name, b_port=port, line=p.line,
                           column=p.column, at={"a": p, "b": where.pos, "b_port": where.port_pos})

    def link(self, s: _Stmt) -> None:
        props = self.props(s)
        kw: dict[str, Any] = {}
        at: dict[str, tuple[int, int, int]] = {}
        for key, field in (("latency", "latency_ms"), ("bandwidth", "bandwidth_gbps")):
            if key in props:
                tok = props[key][1][0]
                kw[field], at[field] = self.quantity(key, tok), _pos(tok)
        for a, b in zip(s.ends, s.ends[1:]):
            a_port = a.port if a.port is not None else self.implicit_port(a.name)
            b_port = b.port if b.port is not None else self.implicit_port(b.name)
            self.topo.add_link(a.name, b.name, a_port=a_port, b_port=b_port, **kw,
                               line=a.pos.line, column=a.pos.column,
                               at={**at, "a": a.pos, "b": b.pos, "a_port": a.port_pos,
                                   "b_port": b.port_pos})

    def use(self, s: _Stmt) -> None:
        name = s.names[0]
        made = generate(name, s.args, self.err)
        merge(self.topo, made, name, self.err)
        if self.named is None and len(self.topo) == len(made):
            self.topo.name = made.name


def _address(tok: Token | None) -> str | None:
    return None if tok is None else str(tok)
