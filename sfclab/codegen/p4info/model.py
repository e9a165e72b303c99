"""The program as p4c's front end leaves it: the running controls, the tables and
actions that survive (applied tables, actions not inlined away), the calls p4c
analyses, v1model's digests, and the controller headers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ...errors import CompileError
from ...p4 import ast as A
from ...p4.names import QualifiedObject, control_instances, local_name, qualified_objects
from .astutil import _annotation, _calls_in, _names_in, _where
from .types import _Scope, _Types

__all__ = [
    "_Ctl", "_Model", "_Digest", "_model", "_unpiped", "_resolve_action", "_extern",
    "_decl_name", "_extern_type", "_ctl_calls", "_controller_headers",
]

_NOACTION_ANNOTATIONS = ("@corelib", '@noWarn("unused")')


@dataclass
class _Ctl:
    """One running control: where it is, what it declares, what survives the front end."""

    path: tuple[str, ...]
    decl: A.ControlDecl
    objects: list[QualifiedObject] = field(default_factory=list)
    tables: list[QualifiedObject] = field(default_factory=list)
    actions: list[tuple[str, A.ActionDecl]] = field(default_factory=list)


@dataclass
class _Model:
    arch: str
    prog: A.Program
    types: _Types
    ctls: list[_Ctl]
    globals: dict[str, tuple[str, A.ActionDecl]]
    main: A.Instance
    digests: dict[tuple[str, ...], list[_Digest]] = field(default_factory=dict)


def _noaction() -> A.ActionDecl:
    annots = (A.Annotation("corelib"), A.Annotation("noWarn", '"unused"'))
    return A.ActionDecl("NoAction", (), A.Block(), annots)


def _find_main(prog: A.Program) -> A.Instance:
    controls = {c.name for c in prog.controls()}
    externs = {d.name for d in prog.decls if isinstance(d, A.ExternDecl)}
    packages = [i for i in prog.find(A.Instance)
                if isinstance(i.type, A.NamedType) and i.type.name not in controls | externs]
    main = next((i for i in packages if i.name == "main"), None)
    if main is None:
        raise CompileError("the program has no 'main' package instance (V1Switch(...) main; or "
                           "Switch(pipe) main;), so it has no control-plane API",
                           hint="add the architecture's package instance named 'main'")
    return main


def _model(prog: A.Program, arch: str) -> _Model:
    main = _find_main(prog)
    types = _Types(prog, arch)
    objects = qualified_objects(prog)       # p4c's names, TNA's pipeline prefix included
    ctls = {path: _Ctl(path, decl) for path, decl in control_instances(prog)}
    for obj in objects:
        if obj.control is not None and obj.path in ctls:
            ctls[obj.path].objects.append(obj)
    globals_ = {_decl_name(o): (o.name, o.decl) for o in objects
                if o.kind == "action" and o.control is None}
    globals_.setdefault("NoAction", ("NoAction", _noaction()))
    model = _Model(arch, prog, types, list(ctls.values()), globals_, main)
    for ctl in model.ctls:
        _survivors(model, ctl)
    if arch == "v1model":
        model.digests = _v1_digests(model)
    return model


def _unpiped(obj: QualifiedObject) -> str:
    """The name without bf-p4c's pipeline prefix (a register's data field is named so)."""
    if obj.path and not obj.name.startswith(obj.path[0] + "."):
        return obj.name[obj.name.find(obj.path[0] + "."):]
    return obj.name


def _survivors(model: _Model, ctl: _Ctl) -> None:
    """The tables p4c keeps (applied ones) and the actions that survive inlining."""
    applied = _names_in(ctl.decl.apply)
    ctl.tables = [o for o in ctl.objects if o.kind == "table" and _decl_name(o) in applied]
    refs: list[str] = []
    for t in ctl.tables:
        refs += _action_refs(t.decl)  # type: ignore[arg-type]
    refs += [c.func.name for c in _calls_in(ctl.decl.apply) if isinstance(c.func, A.Name)]
    local = {_decl_name(o): o for o in ctl.objects if o.kind == "action"}
    wanted = set(refs)
    used_globals = [r for r in dict.fromkeys(refs) if r not in local and r in model.globals]
    ctl.actions = [model.globals[r] for r in used_globals]
    ctl.actions += [(o.name, o.decl) for n, o in local.items() if n in wanted]  # type: ignore[misc]


def _action_refs(t: A.TableDecl) -> list[str]:
    refs = [r.name for r in t.actions]
    if t.default_action is not None:
        refs.append(t.default_action.name)
    refs += [e.action.name for e in t.entries or ()]
    return refs


def _resolve_action(model: _Model, ctl: _Ctl, name: str, where: str) -> tuple[str, A.ActionDecl]:
    for qname, decl in ctl.actions:
        if decl.name == name:
            return qname, decl
    raise CompileError(f"{where}: unknown action '{name}'")


def _extern(ctl: _Ctl, name: str) -> QualifiedObject | None:
    return next((o for o in ctl.objects if o.kind == "extern" and _decl_name(o) == name), None)


def _decl_name(obj: QualifiedObject) -> str:
    return obj.decl.name  # type: ignore[attr-defined]


def _extern_type(obj: QualifiedObject) -> str:
    t = obj.decl.type  # type: ignore[attr-defined]
    return t.name if isinstance(t, A.NamedType) else ""


def _expanded_calls(block: A.Node, ctl: _Ctl, model: _Model,
                    seen: frozenset[str] = frozenset()) -> Iterator[A.Call]:
    """Calls in *block*, following calls of actions into their bodies (p4c inlines them)."""
    local = {_decl_name(o): o.decl for o in ctl.objects if o.kind == "action"}
    for call in _calls_in(block):
        yield call
        if isinstance(call.func, A.Name) and call.func.name not in seen:
            callee = local.get(call.func.name) or model.globals.get(call.func.name, (0, None))[1]
            if isinstance(callee, A.ActionDecl):
                yield from _expanded_calls(callee.body, ctl, model, seen | {call.func.name})


def _ctl_calls(ctl: _Ctl, model: _Model) -> Iterator[tuple[A.Call, A.ActionDecl | None]]:
    """Every call p4c's ``analyzeControl`` sees: in surviving actions (with the actions
    they call inlined), then in the apply block (whose action calls stay calls)."""
    for _, action in ctl.actions:
        for call in _expanded_calls(action.body, ctl, model, frozenset({action.name})):
            yield call, action
    for call in _calls_in(ctl.decl.apply):
        yield call, None


# --- v1model's digest() calls -----------------------------------------------------------------

@dataclass
class _Digest:
    name: str
    type_arg: A.Node | None
    items: tuple[A.Node, ...]
    where: str


def _v1_digests(model: _Model) -> dict[tuple[str, ...], list[_Digest]]:
    """The ``digest<T>()`` calls of every running control, once per data type; a digest
    of a list without a named type is ``digest_N`` as p4c calls it."""
    out: dict[tuple[str, ...], list[_Digest]] = {}
    unnamed = 0
    for ctl in model.ctls:
        found: dict[str, _Digest] = {}
        for call, action in _ctl_calls(ctl, model):
            if not (isinstance(call.func, A.Name) and call.func.name == "digest"):
                continue
            d = _v1_digest(model, ctl, call, action)
            if not d.name:
                d.name, unnamed = f"digest_{unnamed}", unnamed + 1
            found.setdefault(d.name, d)
        out[ctl.path] = list(found.values())
    return out


def _v1_digest(model: _Model, ctl: _Ctl, call: A.Call, action: A.ActionDecl | None) -> _Digest:
    where = _where(call, "digest()")
    if len(call.args) != 2:
        raise CompileError(f"{where}: digest takes a receiver and the data")
    scope = _Scope.of(model.types, ctl.decl, action)
    data = call.args[1]
    t = call.type_args[0] if call.type_args else None
    if t is None and not isinstance(data, A.ListExpr):
        t = scope.type_of(data)
    decl = model.types.decl(t) if t is not None else None
    if isinstance(decl, (A.StructDecl, A.HeaderDecl)):
        return _Digest(local_name(decl), t, (), where)
    if t is not None:
        return _Digest("", None, (t,), where)
    items = data.items if isinstance(data, A.ListExpr) else (data,)
    return _Digest("", None, tuple(scope.type_of(x) for x in items), where)


def _controller_headers(prog: A.Program) -> list[A.HeaderDecl]:
    return [h for h in prog.find(A.HeaderDecl) if _annotation(h, "controller_header")]
