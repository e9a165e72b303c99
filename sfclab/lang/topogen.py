"""``use GENERATOR(ARGS)`` in the topology language: call a generator, merge what it makes.

The generators are :data:`sfclab.ir.topology.GENERATORS` (``line``, ``ring``,
``leaf_spine``, ``fat_tree``); their Python signature is the language's, and
switch properties (``stages=8``, ``arch=tna`` …) pass through to every switch.
Errors point at the argument at fault.

>>> from sfclab.lang.topology import parse_topology
>>> parse_topology("use leaf_spine(2, 4, hosts=1, stages=8)").summary()
'topology leaf_spine2x4: 6 switches, 4 hosts, 0 servers, 12 links'
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from lark import Token

from ..errors import TopologyError, did_you_mean
from ..ir.topology import GENERATORS, Host, Switch, Topology
from .ast import Pos

__all__ = ["generate", "merge", "SWITCH_KEYS", "tok_pos", "tok_text"]

#: A switch's properties: in a ``switch`` line and as a generator's keyword arguments.
SWITCH_KEYS = ("arch", "pipes", "stages", "tables", "ports")
#: Builds a located error: ``err(message, pos, hint)``.
ErrorAt = Callable[[str, Pos, str], TopologyError]


def tok_pos(tok: Token) -> Pos:
    return Pos(tok.line or 0, tok.column or 0, max(1, len(tok)))


def tok_text(tok: Token) -> str:
    """A name as written, without the quotes of a quoted one."""
    return tok[1:-1] if tok.type == "STRING" else str(tok)


def _value(tok: Token) -> int | float | str:
    if tok.type == "INT":
        return int(tok)
    if tok.type == "NUMBER":
        return float(tok)
    return tok_text(tok)


def signature(name: str, fn: Callable[..., Topology], *, doc: bool = True) -> str:
    """How to call generator *name*, and (*doc*) what it makes.

    >>> from sfclab.ir.topology import ring
    >>> signature("ring", ring, doc=False)
    'use ring(n, hosts=1[, arch=…, pipes=…, stages=…, tables=…, ports=…])'
    """
    params = ", ".join(p.name + ("" if p.default is p.empty else f"={p.default}")
                       for p in inspect.signature(fn).parameters.values()
                       if p.kind is not p.VAR_KEYWORD)
    usage = f"use {name}({params}[, {', '.join(f'{k}=…' for k in SWITCH_KEYS)}])"
    if not doc:
        return usage
    what = (fn.__doc__ or "").split("\n\n")[0].replace("``", "").replace("*", "")
    return f"{usage}: {' '.join(what.split())}"


def generate(name: Token, args: list[tuple[Token | None, Token]], err: ErrorAt) -> Topology:
    """Call the generator *name* with *args* (``(keyword or None, value)`` tokens)."""
    fn = GENERATORS.get(str(name))
    if fn is None:
        raise err(f"no topology generator {str(name)!r}", tok_pos(name),
                  did_you_mean(str(name), GENERATORS)
                  or f"generators: {', '.join(f'{g}(…)' for g in GENERATORS)}")
    params = inspect.signature(fn).parameters
    ordered = [p.name for p in params.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    known = [*ordered, *(p.name for p in params.values() if p.kind is p.KEYWORD_ONLY),
             *SWITCH_KEYS]
    values: dict[str, Any] = {}
    where: dict[str, Pos] = {}
    plain = 0
    for key, tok in args:
        if key is None:
            if len(values) > plain:
                raise err("a plain argument after a named one", tok_pos(tok),
                          f"put it first: {name}({tok}, …)")
            if plain == len(ordered):
                raise err(f"{name}() takes {len(ordered)} plain argument"
                          f"{'s' if len(ordered) != 1 else ''}", tok_pos(tok),
                          signature(str(name), fn))
            k, at = ordered[plain], tok_pos(tok)
            plain += 1
        else:
            k, at = str(key), tok_pos(key)
            if k not in known:
                raise err(f"{name}() has no argument {k!r}", at, " ".join(filter(None, [
                    did_you_mean(k, known), signature(str(name), fn, doc=False)])))
            if k in values:
                raise err(f"{k!r} is given twice", at, f"keep one `{k}=…`")
        values[k], where[k] = _value(tok), tok_pos(tok)
    missing = [k for k in ordered if k not in values]
    if missing:
        raise err(f"{name}() needs {', '.join(missing)}", tok_pos(name), signature(str(name), fn))
    try:
        return fn(**values)
    except TopologyError as e:
        said = [k for k in where if _names(e.message, k)] or \
            [k for k in where if re.search(rf"(?<![\w.']){re.escape(repr(values[k]))}(?![\w.'])",
                                           e.message)]
        at = where[said[0]] if said else tok_pos(name)
        raise err(e.message, at, e.hint or signature(str(name), fn)) from None


def _names(message: str, word: str) -> bool:
    """Does a generator's error *message* name argument *word* (``k must be even``)?"""
    return re.search(rf"(^|[ :(]){re.escape(word)}([ =]|$)", message) is not None


def _span(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"


def merge(topo: Topology, made: Topology, name: Token, err: ErrorAt) -> None:
    """Add a generated topology's nodes and links to *topo*, positioned at the
    generator's name (its hosts take the next free addresses)."""
    pos = tok_pos(name)
    clash = [n for n in made if n in topo]
    if clash:
        makes = ", ".join(f"{len(group)} {kind} ({_span(list(group))})"
                          for kind, group in (("switches", made.switches), ("hosts", made.hosts))
                          if group)
        raise err(f"{name}(…) makes {clash[0]!r}, which is already defined", pos,
                  f"it makes {makes}: give your own nodes other names")
    where: dict[str, Any] = {"line": pos.line, "column": pos.column,
                             "at": {"name": pos, "a": pos, "b": pos}}
    for obj in (d["obj"] for _, d in made.graph.nodes(data=True)):
        if isinstance(obj, Switch):
            topo.add_switch(obj.name, arch=obj.arch, pipes=obj.pipes, stages=obj.stages,
                            tables=obj.tables, ports=obj.ports, **where)
        elif isinstance(obj, Host):
            topo.add_host(obj.name, **where)
        else:
            topo.add_server(obj.name, nfs=obj.nfs, **where)
    for k in made.links:
        topo.add_link(k.a, k.b, a_port=k.a_port, b_port=k.b_port, latency_ms=k.latency_ms,
                      bandwidth_gbps=k.bandwidth_gbps, **where)
