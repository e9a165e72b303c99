"""Structural checks on a chain graph, with errors that point at the source.

:func:`validate` rejects what cannot run on a switch: a cycle that is not a
declared loop, an NF that packets cannot reach or that leads nowhere, an NF with
two successors but no condition to choose between them, and a chain without a
way out (``output``, ``drop`` or ``cpu``).

>>> from sfclab.ir.model import linear_chain
>>> validate(linear_chain("ok", ["l3fwd", "firewall"]))
"""

from __future__ import annotations

import re

from ..errors import ChainValidationError
from .graphs import ancestors, descendants, find_cycle
from .graphs import edges as _edges
from .model import TERMINALS, Chain

__all__ = ["validate", "token_width"]


_TOKEN = re.compile(r'"[^"\n]*"|[A-Za-z0-9_]+(?:#[0-9]+)?')


def token_width(text: str, line: int, column: int) -> int:
    """The width of the name (or quoted name) written at *line*, *column* of *text*.

    >>> token_width('chain a { input => nat#2 => output; }', 1, 20)
    5
    """
    lines = text.splitlines()
    if not (text and 1 <= line <= len(lines) and column >= 1):
        return 1
    m = _TOKEN.match(lines[line - 1], column - 1)
    return len(m.group()) if m else 1


def _err(chain: Chain, msg: str, where: dict | None, hint: str, text: str) -> ChainValidationError:
    where = where or {}
    line = where.get("line") or chain.line
    column = where.get("column") or chain.column
    return ChainValidationError(msg, line=line, column=column, source=chain.source, text=text,
                                hint=hint, width=token_width(text, line, column))


def validate(chain: Chain, *, text: str = "") -> None:
    """Raise :class:`ChainValidationError` if *chain* cannot run; *text* is the
    source the chain came from, for the caret."""
    g = chain.graph
    nfs = [n for n, a in g._node.items() if a["kind"] == "nf"]
    if not nfs:
        raise _err(chain, f"chain {chain.name!r} has no NF", None,
                   "add at least one NF, e.g. `input => l2fwd => output;`", text)

    cycle = find_cycle(g)
    if cycle:
        names = " => ".join([cycle[0][0], *(v for _, v in cycle)])
        raise _err(chain, f"chain {chain.name!r} has a cycle that is not a declared loop: {names}",
                   g.edges[cycle[-1]],
                   "repeat an NF with a serial number (`nat#2`) or write a bounded loop "
                   "`A => (self : B ? A.global_counter < 3)`", text)

    for u, v, d in _edges(g):
        if d["kind"] == "loop" and u != v and v not in ancestors(g, u, skip_loops=True):
            raise _err(chain, f"loop from {u!r} back to {v!r}, which does not come before it",
                       d, f"a loop must go back to {u!r} itself or to an NF before it", text)

    for n in nfs:
        kinds = [d["kind"] for d in g._succ[n].values()]
        seq = [v for v, d in g._succ[n].items() if d["kind"] == "seq"]
        if len(seq) > 1 or (seq and any(k in ("then", "else", "case") for k in kinds)):
            others = sorted(v for v, d in g._succ[n].items() if d["kind"] != "loop")
            raise _err(chain, f"{n!r} is followed by {' and '.join(map(repr, others))} "
                       "with nothing to choose between them", g._node[n],
                       f"use an if-else `{n} => ({others[0]} : {others[-1]} ? "
                       f"{n}.global_metadata == 1)` or a multibranch, or order them", text)
        if not kinds:
            raise _err(chain, f"{n!r} leads nowhere: packets stop after it", g._node[n],
                       f"add `{n} => output;` (or drop / cpu)", text)

    if "input" in g:
        seen = descendants(g, "input")
        for n in nfs:
            if n not in seen:
                raise _err(chain, f"{n!r} cannot be reached from input", g._node[n],
                           f"connect it, e.g. `input => {n};`, or remove it", text)
    ends = [t for t in TERMINALS if t in g]
    if not ends:
        raise _err(chain, f"chain {chain.name!r} has no way out", None,
                   "end it with `=> output;` (or drop / cpu)", text)
    reach_end = set(ends).union(*(ancestors(g, t) for t in ends))
    if "input" in g and "input" not in reach_end:
        raise _err(chain, f"output is unreachable in chain {chain.name!r}: no path from input "
                   "ends in output, drop or cpu", None, "end the chain with `=> output;`", text)
    for n in nfs:
        if n not in reach_end:
            raise _err(chain, f"no path from {n!r} reaches output, drop or cpu", g._node[n],
                       f"add `{n} => output;`", text)
