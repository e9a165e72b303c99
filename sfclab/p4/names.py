"""Control-plane names of a whole program's tables, actions and extern instances.

P4Runtime knows a program's objects by fully qualified names, which p4c
derives from where each object lives: a table ``acl`` declared in control type
``firewall``, instantiated as ``slot0_firewall`` inside the control
``SfcIngress`` that the package ``main`` uses, is ``SfcIngress.slot0_firewall.acl``;
a top-level action is its bare name (``NoAction``).  An ``@name("x")``
annotation renames the last part (on a control instance, the part it adds);
``@name(".x")`` makes the name absolute.  On TNA, bf-p4c puts the pipeline
instance's name in front of tables and extern instances
(``pipe.SfcIngress.rewinder``), not of actions.
P4Info, the embedded switch model and the runtime all use these names.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''
... action NoAction() { }
... control inner() { action a() { } table t { actions = { a; NoAction; } size = 4; } apply { t.apply(); } }
... control Outer() { inner() slot0; apply { slot0.apply(); } }
... control Other() { apply { } }
... V1Switch(Outer(), Other()) main;''', types=["V1Switch"])
>>> [(o.kind, o.name) for o in qualified_objects(prog)]
[('action', 'NoAction'), ('action', 'Outer.slot0.a'), ('table', 'Outer.slot0.t')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from . import ast as A

__all__ = ["QualifiedObject", "qualified_objects", "local_name", "control_instances"]


@dataclass(frozen=True, slots=True)
class QualifiedObject:
    """A table, action or extern instance with its fully qualified name.

    ``path`` is the chain of control instances from the package's control down
    to the one declaring it (``("SfcIngress", "slot0_firewall")``), ``control``
    that control's declaration (None for top-level actions)."""

    kind: str                   # "table", "action" or "extern"
    name: str
    decl: A.Node
    path: tuple[str, ...]
    control: A.ControlDecl | None
    #: The declared instance path (``path`` may differ where ``@name`` renames an instance).
    instances: tuple[str, ...] = ()


def local_name(decl: A.Node) -> str:
    """The declared name, or the one its ``@name`` annotation gives."""
    for a in getattr(decl, "annotations", ()):
        if a.name == "name" and a.body:
            return a.body.strip().strip('"')
    return decl.name  # type: ignore[attr-defined]


def _qualify(prefix: tuple[str, ...], decl: A.Node) -> str:
    n = local_name(decl)
    if n.startswith("."):
        return n[1:]
    return ".".join((*prefix, n))


def _control_walk(prog: A.Program):
    """(name path, declared path, control, pipeline prefix) of every running control."""
    controls = {c.name: c for c in prog.controls()}
    seen: set[tuple[str, ...]] = set()

    def walk_ctor(call: A.Node, pipe: str):
        if not (isinstance(call, A.Call) and isinstance(call.func, A.TypeName)):
            return
        c = controls.get(call.func.name)
        if c is not None:
            yield from walk(c, (c.name,), (c.name,), pipe)
        for arg in call.args:
            yield from walk_ctor(arg, pipe)

    def walk(c: A.ControlDecl, path: tuple[str, ...], declared: tuple[str, ...], pipe: str):
        if declared in seen:
            return
        seen.add(declared)
        yield path, declared, c, pipe
        for inst in c.instances():
            t = inst.type
            inner = controls.get(t.name) if isinstance(t, A.NamedType) else None
            if inner is not None:
                yield from walk(inner, (*path, local_name(inst)), (*declared, inst.name), pipe)

    packages = [i for i in prog.find(A.Instance)
                if isinstance(i.type, A.NamedType) and i.type.name not in controls]
    instances = {i.name: i for i in prog.find(A.Instance)}
    inner = {a.name for i in packages for a in i.args if isinstance(a, A.Name)}
    for pkg in (p for p in packages if p.name not in inner):   # `main`, not TNA's `pipe`
        for arg in pkg.args:
            if isinstance(arg, A.Name) and arg.name in instances:   # TNA: Pipeline(...) pipe;
                for a2 in instances[arg.name].args:
                    yield from walk_ctor(a2, f"{arg.name}.")
            else:
                yield from walk_ctor(arg, "")


def control_instances(prog: A.Program) -> Iterator[tuple[tuple[str, ...], A.ControlDecl]]:
    """Every control the package runs, with its instance path, outermost first.

    The package instance's arguments (``V1Switch(P(), I(), …) main``, or TNA's
    ``Pipeline(…)`` inside ``Switch(…)``) name the top controls; a control's
    local instances of other controls nest below it."""
    for path, _declared, c, _pipe in _control_walk(prog):
        yield path, c


def qualified_objects(prog: A.Program) -> list[QualifiedObject]:
    """Top-level actions, then each running control's actions, tables and extern
    instances, in declaration order, with their P4Runtime names."""
    out = [QualifiedObject("action", _qualify((), a), a, (), None) for a in prog.find(A.ActionDecl)]
    control_names = {c.name for c in prog.controls()}
    for path, declared, c, pipe in _control_walk(prog):
        for d in c.locals:
            if isinstance(d, A.ActionDecl):
                out.append(QualifiedObject("action", _qualify(path, d), d, path, c, declared))
            elif isinstance(d, A.TableDecl):
                out.append(QualifiedObject("table", pipe + _qualify(path, d), d, path, c,
                                           declared))
            elif isinstance(d, A.Instance) and not (isinstance(d.type, A.NamedType)
                                                     and d.type.name in control_names):
                out.append(QualifiedObject("extern", pipe + _qualify(path, d), d, path, c,
                                           declared))
    return out
