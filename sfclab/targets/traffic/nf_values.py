"""The values an NF can give its metadata field, from its P4 and the installed entries.

A chain branches on an NF's metadata (``firewall.verdict``, ``lb.backend``): the
NF's control writes ``sfc.metadata``.  :func:`metadata_values` reads where it
does: a constant (``sfc.metadata = 1`` in ``deny``), an action parameter (the
values the installed entries give it), or something computed (a register, a
meter colour, a hash): then the value is not known without running packets,
and the answer is ``None``.  Only actions an installed entry or a table's default
uses count, so "the firewall's entries never set verdict 1" can be said.

>>> import sfclab
>>> from sfclab.codegen import generate
>>> gen = generate(sfclab.compile("chain w: firewall -> lb -> heavy_hitter"))
>>> sorted(metadata_values(gen, "firewall")), sorted(metadata_values(gen, "lb"))
([0, 1], [0, 1, 2])
>>> metadata_values(gen, "heavy_hitter") is None
True
"""

from __future__ import annotations

from ...codegen import Generated
from ...errors import SfclabError
from ...p4 import ast as A

__all__ = ["metadata_values"]


def _is_metadata(e: A.Node) -> bool:
    return (isinstance(e, A.Member) and e.name == "metadata" and isinstance(e.expr, A.Name)
            and e.expr.name == "sfc")


def _value(e: A.Node, params: set[str]) -> int | str | None:
    """A constant, the name of an action parameter, or None (computed)."""
    while isinstance(e, A.Cast):
        e = e.expr
    if isinstance(e, A.Const):
        return e.value
    if isinstance(e, A.Name) and e.name in params:
        return e.name
    return None


def _control(gen: Generated, nf: str) -> A.ControlDecl:
    for d in gen.composition.nfs:
        if d.name == nf and d.control is not None:
            return d.control
    raise SfclabError(f"NF {nf!r} is not in the program")


def metadata_values(gen: Generated, nf: str) -> set[int] | None:
    """Every value NF type *nf* can write to its metadata in program *gen* with its
    installed entries, or None when one is computed at run time."""
    control = _control(gen, nf)
    actions = {d.name: d for d in control.locals if isinstance(d, A.ActionDecl)}
    used: dict[str, list[dict[str, int]]] = {}     # action -> param values of each use
    instances = {s.instance for s in gen.composition.slots if s.nf == nf}
    for e in gen.entries:
        parts = e.table.split(".")
        if len(parts) >= 3 and parts[-2] in instances:
            used.setdefault(e.action.rpartition(".")[2], []).append(dict(e.params))
    for t in control.locals:
        if isinstance(t, A.TableDecl) and t.default_action is not None:
            act = actions.get(t.default_action.name)
            args = t.default_action.args or ()
            names = [p.name for p in act.params] if act else []
            used.setdefault(t.default_action.name, []).append(
                {n: a.value for n, a in zip(names, args) if isinstance(a, A.Const)})
    out: set[int] = set()
    for name, act in actions.items():
        writes = [s for s in A.walk(act.body) if isinstance(s, A.Assign) and _is_metadata(s.lhs)]
        if not writes or name not in used:
            continue
        params = {p.name for p in act.params}
        for w in writes:
            v = _value(w.rhs, params)
            if v is None:
                return None
            if isinstance(v, int):
                out.add(v)
            else:
                out.update(u[v] for u in used[name] if v in u)
    for s in A.walk(control.apply):
        if isinstance(s, A.Assign) and _is_metadata(s.lhs):
            v = _value(s.rhs, set())
            if v is None:
                return None
            out.add(v)
    return out
