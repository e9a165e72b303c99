"""How often one packet can touch each register: the most accesses on any path.

Tofino gives a register one stateful-ALU access per packet, so ``bf-p4c``
refuses a program in which one packet may execute two ``RegisterAction`` s of
the same register (or one of them twice); two actions on branches that exclude
each other are fine.  :func:`register_accesses` counts, per register, the
accesses on the worst path through a control: a sequence adds, ``if`` /
``switch`` / a table's actions take the worst branch, an action call or a
table or control ``apply`` counts what it runs.  :data:`TNA` says what an
access is in a TNA program, :data:`PORTABLE` in an NF written against
``sfc_api.p4``.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''extern R<T> { R(bit<32> n); T read(in bit<8> i);
...                             void write(in bit<8> i, in T v); }
... control c(inout bit<8> x) {
...     R<bit<8>>(4) r;
...     apply { x = r.read(0); if (x == 1) { r.write(0, 2); } }
... }''')
>>> kinds = Accesses(direct={"R": {"read", "write"}})
>>> found = register_accesses(prog.controls()[0], prog, kinds)
>>> [(r, [s.label for s in sites]) for r, sites in found.items()]
[('r', ['r.read', 'r.write'])]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import P4Error
from . import ast as A

__all__ = ["Accesses", "Site", "TNA", "PORTABLE", "register_accesses", "check_one_access"]


@dataclass(frozen=True)
class Accesses:
    """What touches a register: methods of the register itself (``direct``) and methods
    of an action extern whose first constructor argument is the register (``via``)."""

    direct: Mapping[str, set[str]] = field(default_factory=dict)
    via: Mapping[str, set[str]] = field(default_factory=dict)


#: TNA (tofino1_base.p4): Register.read/write, RegisterAction.execute/execute_log.
TNA = Accesses(direct={"Register": {"read", "write"}},
               via={"RegisterAction": {"execute", "execute_log"}})
#: sfclab's portable API (sfc_api.p4).
PORTABLE = Accesses(direct={"SfcRegister": {"read", "write", "add"}},
                    via={"SfcRegisterAction": {"execute"}})


@dataclass(frozen=True, slots=True)
class Site:
    """One access: the call, and what it calls (``r_read.execute``)."""

    label: str
    node: A.Node

    @property
    def line(self) -> int:
        pos = getattr(self.node, "pos", None)
        return pos.line if pos else 0


Summary = dict[str, tuple[Site, ...]]


def _seq(*parts: Summary) -> Summary:
    out: Summary = {}
    for p in parts:
        for k, v in p.items():
            out[k] = out.get(k, ()) + v
    return out


def _alt(*parts: Summary) -> Summary:
    out: Summary = {}
    for p in parts:
        for k, v in p.items():
            if len(v) > len(out.get(k, ())):
                out[k] = v
    return out


class _Paths:
    def __init__(self, control: A.ControlDecl, prog: A.Program, kinds: Accesses,
                 prefix: str = "", stack: tuple[str, ...] = ()) -> None:
        self.prog, self.kinds, self.prefix, self.stack = prog, kinds, prefix, stack
        top = {d.name: d for d in prog.decls if isinstance(d, (A.ActionDecl, A.Instance))}
        self.names = {**top, **{d.name: d for d in control.locals if hasattr(d, "name")}}
        self.control = control

    def run(self) -> Summary:
        return self.stmt(self.control.apply)

    # -- statements
    def stmt(self, s: A.Node | None) -> Summary:
        if s is None:
            return {}
        if isinstance(s, A.Block):
            parts = []
            for x in s.stmts:
                parts.append(self.stmt(x))
                if isinstance(x, (A.Exit, A.Return)):
                    break
            return _seq(*parts)
        if isinstance(s, A.If):
            return _seq(self.expr(s.cond), _alt(self.stmt(s.then), self.stmt(s.other)))
        if isinstance(s, A.Switch):
            return self.switch(s)
        return _seq(*(self.expr(c) for c in s.children()))

    def switch(self, s: A.Switch) -> Summary:
        e = s.expr
        table = None
        if (isinstance(e, A.Member) and e.name == "action_run" and isinstance(e.expr, A.Call)
                and isinstance(e.expr.func, A.Member) and e.expr.func.name == "apply"
                and isinstance(e.expr.func.expr, A.Name)):
            table = self.names.get(e.expr.func.expr.name)
        bodies: dict[str, A.Block | None] = {}
        pending: list[str] = []
        for c in s.cases:                                  # an empty case falls through
            pending.append(c.label)
            if c.body is not None:
                for label in pending:
                    bodies[label] = c.body
                pending = []
        if not isinstance(table, A.TableDecl):
            return _seq(self.expr(e), _alt(*(self.stmt(b) for b in bodies.values())))
        default = bodies.get("default")
        return _alt(*(_seq(self.action(a.name), self.stmt(bodies.get(a.name, default)))
                      for a in self._table_actions(table)))

    # -- expressions
    def expr(self, e: A.Node) -> Summary:
        if not isinstance(e, A.Node):
            return {}
        inner = _seq(*(self.expr(c) for c in e.children()
                       if not (isinstance(e, A.Call) and c is e.func)))
        if isinstance(e, A.Call):
            return _seq(inner, self.call(e))
        return inner

    def call(self, e: A.Call) -> Summary:
        f = e.func
        if isinstance(f, A.Name):
            return self.action(f.name)
        if not (isinstance(f, A.Member) and isinstance(f.expr, A.Name)):
            return self.expr(f)
        d = self.names.get(f.expr.name)
        label = f"{f.expr.name}.{f.name}"
        if isinstance(d, A.TableDecl) and f.name == "apply":
            return _alt(*(self.action(a.name) for a in self._table_actions(d)))
        if not isinstance(d, A.Instance) or not isinstance(d.type, A.NamedType):
            return {}
        ext = d.type.name
        if f.name in self.kinds.direct.get(ext, ()):
            return {self.prefix + d.name: (Site(label, e),)}
        if f.name in self.kinds.via.get(ext, ()) and d.args and isinstance(d.args[0], A.Name):
            return {self.prefix + d.args[0].name: (Site(label, e),)}
        if f.name == "apply":
            sub = next((c for c in self.prog.controls() if c.name == ext), None)
            if sub is not None and ext not in self.stack:
                return _Paths(sub, self.prog, self.kinds, f"{self.prefix}{d.name}.",
                              self.stack + (ext,)).run()
        return {}

    def action(self, name: str) -> Summary:
        d = self.names.get(name)
        return self.stmt(d.body) if isinstance(d, A.ActionDecl) else {}

    @staticmethod
    def _table_actions(t: A.TableDecl) -> list[A.ActionRef]:
        refs = list(t.actions)
        if t.default_action is not None:
            refs.append(t.default_action)
        return refs


def register_accesses(control: A.ControlDecl, prog: A.Program, kinds: Accesses) -> Summary:
    """Register -> the accesses on the path that touches it most (``inst.reg`` for a
    register of a control instance the control applies)."""
    return _Paths(control, prog, kinds).run()


def check_one_access(control: A.ControlDecl, prog: A.Program, kinds: Accesses, *,
                     what: str = "") -> None:
    """:class:`P4Error` if one packet may access a register of *control* more than once.
    *what* names the control in the message (``NF 'stateful_firewall'``)."""
    for reg, sites in register_accesses(control, prog, kinds).items():
        if len(sites) > 1:
            where = ", ".join(f"{s.label} ({_line(s, control)})" for s in sites)
            raise P4Error(
                f"{what or 'control ' + repr(control.name)}: register '{reg}' is accessed "
                f"{len(sites)} times on one packet path: {where}",
                **A.error_at(sites[1].node),
                hint="Tofino allows one access (one RegisterAction) per register per packet, "
                     "and bf-p4c refuses more: compute the new value and the result in one "
                     "read-modify-write (SfcRegisterAction in sfc_api.p4, or r.add) or put the "
                     "accesses on exclusive branches")


def _line(site: Site, control: A.ControlDecl) -> str:
    """``line N``, with the file's name when *site* is in another file than *control*
    (an ``#include``-d one)."""
    pos, home = getattr(site.node, "pos", None), getattr(control, "pos", None)
    if pos is not None and home is not None and pos.file != home.file:
        return f"{pos.file} line {pos.line}"
    return f"line {site.line}"
