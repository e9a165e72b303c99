"""IR back to chain text (FlexMesh style), so that ``parse(format(x)) == x``.

>>> from sfclab.lang import parse
>>> print(format_chains(parse("chain web match tcp.dport == 80: firewall -> nat")))
chain web match tcp.dport == 80 {
    input => firewall;
    firewall => nat;
    nat => output;
}
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..ir.model import Chain, ChainSet
from .parser import KEYWORDS

__all__ = ["format_chains", "format_chain"]

_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _name(name: str) -> str:
    return name if _BARE.match(name) and name not in KEYWORDS else f'"{name}"'


def _endpoint(spec: str) -> str:
    """``h1``, ``s1:3`` bare; anything else (``"leaf-1"``) quoted."""
    name, colon, port = spec.partition(":")
    return spec if _name(name) == name and (not colon or port.isdigit()) else f'"{spec}"'


def format_chain(chain: Chain) -> str:
    g = chain.graph
    head = f"chain {_name(chain.name)}"
    if chain.match:
        head += f" match {chain.match}"
    if chain.weight is not None:
        head += f" weight {chain.weight!r}"
    if chain.ingress is not None:
        head += f" from {_endpoint(chain.ingress)}"
    if chain.egress is not None:
        head += f" to {_endpoint(chain.egress)}"
    lines = [head + " {"]
    order = (["input"] if "input" in g else []) + chain.nf_nodes()
    for u in order:
        succ = g.succ[u]
        kinds = {d["kind"] for d in succ.values()}
        me = lambda v: "self" if v == u else v  # noqa: E731
        if "loop" in kinds:
            back = next(v for v, d in succ.items() if d["kind"] == "loop")
            out = next(v for v, d in succ.items() if d["kind"] != "loop")
            lines.append(f"    {u} => ({me(back)} : {me(out)} ? {succ[back]['cond']});")
        elif "then" in kinds:
            t = next(v for v, d in succ.items() if d["kind"] == "then")
            e = next(v for v, d in succ.items() if d["kind"] == "else")
            lines.append(f"    {u} => ({t} : {e} ? {succ[t]['cond']});")
        elif "case" in kinds:
            cases = [(c, v) for v, d in succ.items() for c in d["cases"]]
            f = next(iter(succ.values()))["cond"].field
            body = " : ".join(f"{c}@{v}" for c, v in cases)
            lines.append(f"    {u} => ({body} # {f});")
        else:
            for v in succ:
                lines.append(f"    {u} => {v};")
    lines.append("}")
    return "\n".join(lines)


def format_chains(chains: ChainSet | Iterable[Chain]) -> str:
    """Every chain as a ``chain NAME { … }`` block, one after another."""
    return "\n\n".join(format_chain(c) for c in chains)
