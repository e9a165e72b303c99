"""Rebuild a P4 AST bottom-up with a function that may replace or remove nodes.

>>> from sfclab.p4 import parse_p4, to_p4
>>> prog = parse_p4("const bit<8> A = 1 + 2;")
>>> def swap(n):
...     return A.Binary("-", n.left, n.right) if isinstance(n, A.Binary) else None
>>> to_p4(rewrite(prog, swap)).strip()
'const bit<8> A = 1 - 2;'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..p4 import ast as A

__all__ = ["rewrite", "REMOVE"]


class _Remove:
    def __repr__(self) -> str:
        return "REMOVE"


#: Return this from the function to drop a node from the tuple that holds it.
REMOVE = _Remove()


def rewrite(node: A.Node, fn: Callable[[A.Node], object]) -> A.Node:
    """*node* with its children rewritten first, then itself: ``fn(n)`` returns a
    replacement node, a tuple of nodes (spliced into the enclosing tuple),
    :data:`REMOVE`, or None to keep ``n``."""
    out = _rewrite(node, fn)
    if isinstance(out, (tuple, _Remove)):
        raise ValueError("the root of a rewrite must stay one node")
    return out


def _rewrite(node: A.Node, fn: Callable[[A.Node], object]):
    changes = {}
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        v = getattr(node, f.name)
        if isinstance(v, A.Node):
            nv = _rewrite(v, fn)
            if isinstance(nv, tuple):
                nv = A.Block(nv)
            if nv is not v:
                changes[f.name] = None if nv is REMOVE else nv
        elif isinstance(v, tuple) and any(isinstance(x, A.Node) for x in v):
            items: list = []
            changed = False
            for x in v:
                nx = _rewrite(x, fn) if isinstance(x, A.Node) else x
                changed |= nx is not x
                if nx is REMOVE:
                    continue
                items.extend(nx if isinstance(nx, tuple) else (nx,))
            if changed:
                changes[f.name] = tuple(items)
    new = dataclasses.replace(node, **changes) if changes else node
    out = fn(new)
    return new if out is None else out
