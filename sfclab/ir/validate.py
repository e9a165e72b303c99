"""Structural checks on a chain graph, with errors that point at the source.

:func:`validate` rejects what cannot run on a switch: a cycle that is not a
declared loop, an NF that packets cannot reach or that leads nowhere, an NF with
two successors but no condition to choose between them, and a chain without a
way out (``output``, ``drop`` or ``cpu``).

:func:`shadowed` looks at a chain set as the switch's initializer will: a chain
whose every packet is taken by chains written before it gets no traffic, and
gets a :class:`~sfclab.errors.SourceWarning` located at its name (proved by
:mod:`sfclab.ir.solve`, so a chain only partly covered gets none).

>>> from sfclab.ir.model import linear_chain
>>> validate(linear_chain("ok", ["l3fwd", "firewall"]))
>>> import sfclab
>>> cs = sfclab.parse("chain all: l2fwd\\nchain web match tcp.dport == 80: l3fwd")
>>> print(shadowed(cs)[0].message)
chain 'web' gets no packets: chain 'all', written before it, has no match and takes every packet
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..errors import ChainValidationError, SourceWarning
from .graphs import ancestors, descendants, find_cycle
from .graphs import edges as _edges
from .model import TERMINALS, Chain
from .solve import parse_closure, reachable

__all__ = ["validate", "token_width", "shadowed", "program_headers"]


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


# --- chains no packet reaches --------------------------------------------------------------------

def program_headers(chains: Iterable[Chain], catalog) -> frozenset[str] | None:
    """The headers the composed program for *chains* parses: those the chains' NFs
    use (from the catalogue's P4) and the classifiers test, with what they need;
    ``None`` when an NF's P4 is not known."""
    chains = list(chains)
    used = {t.field for c in chains for t in (c.match.terms if c.match else ())}
    headers = {_header(f) for f in used}
    definition = getattr(catalog, "definition", None)
    for nf in sorted({n for c in chains for n in c.nf_types()}):
        try:
            program = definition(nf).program if definition else None
        except Exception:       # an NF the catalogue cannot give P4 for
            program = None
        if program is None:
            return None
        headers |= _program_headers(program)
    return parse_closure(headers)


_HEADERS_SEEN: dict[int, tuple[object, frozenset[str]]] = {}


def _program_headers(program) -> frozenset[str]:
    """The ``hdr.X`` headers an NF's P4 uses (remembered per parsed program)."""
    from ..p4 import ast as A

    hit = _HEADERS_SEEN.get(id(program))
    if hit is not None and hit[0] is program:
        return hit[1]
    found = frozenset(n.name for n in A.walk(program) if isinstance(n, A.Member)
                      and isinstance(n.expr, A.Name) and n.expr.name == "hdr")
    if len(_HEADERS_SEEN) > 256:
        _HEADERS_SEEN.clear()
    _HEADERS_SEEN[id(program)] = (program, found)
    return found


def _header(field: str) -> str:
    from .fields import FIELDS

    return FIELDS[field].header


def shadowed(chains: Iterable[Chain], *, parsed: Iterable[str] | None = None,
             text: str | Mapping[str, str] = "") -> list[SourceWarning]:
    """A warning for every chain no packet can reach: chains written before it (the
    initializer's higher priorities) take every packet of its class.  *parsed*: the
    headers the program parses (:func:`program_headers`; ``None``: any may be);
    *text*: the source, or the source of each file by name, for the caret."""
    chains = list(chains)
    parsed = frozenset(parsed) if parsed is not None else None
    out = []
    for k, chain in enumerate(chains):
        before = chains[:k]
        if not before or reachable(chain.match, [c.match for c in before], parsed=parsed) \
                is not False:
            continue
        out.append(_shadow_warning(chain, _cover(chain, before, parsed),
                                   text if isinstance(text, str) else text.get(chain.source, "")))
    return out


def _cover(chain: Chain, before: list[Chain], parsed) -> list[Chain]:
    """Few earlier chains that together take every packet of *chain*'s class: one
    without a match, else one that covers it alone, else a minimal set of those
    that overlap it."""
    takes_all = next((c for c in before if not c.match), None)
    if takes_all is not None:
        return [takes_all]
    cover = [c for c in before if _overlap(chain, c, parsed)]
    alone = next((c for c in cover if reachable(chain.match, [c.match], parsed=parsed) is False),
                 None)
    if alone is not None:
        return [alone]
    for c in list(cover):
        rest = [x for x in cover if x is not c]
        if reachable(chain.match, [x.match for x in rest], parsed=parsed) is False:
            cover = rest
    return cover


def _overlap(a: Chain, b: Chain, parsed) -> bool:
    """Whether some packet matches both chains' classifiers."""
    both = (*(a.match.terms if a.match else ()), *(b.match.terms if b.match else ()))
    return reachable(both, [], parsed=parsed) is not False


def _shadow_warning(chain: Chain, cover: list[Chain], text: str) -> SourceWarning:
    name = chain.name
    if len(cover) == 1 and not cover[0].match:
        msg = (f"chain {name!r} gets no packets: chain {cover[0].name!r}, written before it, "
               "has no match and takes every packet")
        hint = f"give {cover[0].name!r} a `match`, or write {name!r} before it"
    else:
        what = f"({chain.match})" if chain.match else "(every packet)"
        takers = " and ".join(f"{c.name!r} ({c.match or 'no match'})" for c in cover)
        msg = (f"chain {name!r} gets no packets: every packet of its class {what} is taken by "
               f"{takers}, written before it")
        hint = (f"write {name!r} before {cover[0].name!r}, narrow the earlier classifiers, "
                f"or remove {name!r}")
    return SourceWarning(msg, line=chain.line, column=chain.column, source=chain.source,
                         text=text, hint=hint, width=_name_width(chain, text))


def _name_width(chain: Chain, text: str) -> int:
    lines = text.splitlines()
    if not (0 < chain.line <= len(lines)):       # a name that is not a word was quoted
        return len(chain.name) + (0 if re.fullmatch(r"[A-Za-z_]\w*", chain.name) else 2)
    at = lines[chain.line - 1][max(0, chain.column - 1):]
    if at.startswith(chain.name):
        return len(chain.name)
    if at[:1] in "\"'" and at[1:].startswith(chain.name):
        return len(chain.name) + 2
    return 1
