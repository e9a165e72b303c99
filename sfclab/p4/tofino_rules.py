"""Tofino's hardware rules that the Tofino compiler (``p4c-barefoot`` / ``bf-p4c``)
enforces and a P4 front end does not, checked on a TNA program or on an NF before
it is lowered for TNA.  Each refusal is a located :class:`~sfclab.errors.P4Error`:

* **one ALU operation per field per action** — a VLIW action writes each field
  with one instruction, so an assignment whose value needs two operations
  (``c = (c & 0xffff) + (c >> 16)``) or an action that writes a field and then
  reads it (a second, dependent instruction; a plain copy or constant is
  propagated instead) needs two stages for one action;
  the compiler says ``action spanning multiple stages``.  A slice, a cast, a
  constant, ``~a & b`` (one ``andca``) count as nothing extra;
* **a gateway compares a field with a constant** — ``if (a < b)`` with two
  fields is ``condition too complex, one operand … must be constant``: compare
  inside a ``RegisterAction`` (the stateful ALU), returning a flag;
* **a direct resource acts in every hit action** — a table with ``counters =
  d`` (or a direct meter) whose action list has an action that does not count,
  such as ``NoAction`` (mark it ``@defaultonly``), is refused (``direct attached
  objects must be enabled in all hit actions``);
* **a range key is at most 20 bits wide** — Tofino matches a range on at most five
  4-bit nibbles (``cannot perform a range match on key … as the key does not fit in
  under 5 PHV nibbles``): match a wider field as ``ternary`` and write each range as
  the value/mask entries that cover it (what sfclab's composed program does:
  :func:`sfclab.codegen.entries.range_to_ternary`); checked where the key's width is
  known (*width_of*);
* one access per register per packet is :mod:`.paths`' check.

Bodies of ``RegisterAction`` instances run on the stateful ALU and follow its
rules, not these.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''control c(inout bit<32> a, inout bit<32> b) {
...     apply { if (a < b) { a = 0; } }
... }''')
>>> try:
...     check_tofino(prog.controls()[0])
... except P4Error as e:
...     print(e.line, e.message[:70])
2 control 'c': condition too complex, one operand of `a < b` must be con
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import P4Error
from . import ast as A
from .printer import expr_p4

__all__ = ["check_tofino", "alu_ops", "RANGE_KEY_BITS"]

#: The widest range key Tofino matches (five 4-bit nibbles).
RANGE_KEY_BITS = 20

#: Operators that take one ALU instruction each.
_ALU = frozenset({"+", "-", "&", "|", "^", "<<", ">>", "|+|", "|-|", "*"})
_ORDER = frozenset({"<", ">", "<=", ">="})
_DIRECT = ("counters", "meters")


def alu_ops(e: A.Node) -> int:
    """How many ALU instructions computing *e* takes (slices, casts, constants: none;
    ``~a & b`` is one ``andca``; an expression of constants folds away).

    >>> from sfclab.p4.parser import parse_p4
    >>> prog = parse_p4("const bit<32> x = (c & 0xffff) + (c >> 16);")
    >>> alu_ops(prog.decls[0].value)
    3
    """
    if isinstance(e, (A.Cast, A.Slice)):
        return alu_ops(e.expr)
    if isinstance(e, A.Unary):
        return (0 if isinstance(e.expr, A.Const) else 1) + alu_ops(e.expr)
    if isinstance(e, A.Binary) and e.op in _ALU:
        if _constant(e.left) and _constant(e.right):
            return 0
        own = 1
        inner = 0
        for side in (e.left, e.right):
            if e.op in ("&", "|") and isinstance(side, A.Unary) and side.op == "~":
                inner += alu_ops(side.expr)          # andca / orca: the complement is free
            else:
                inner += alu_ops(side)
        return own + inner
    return 0


def _constant(e: A.Node) -> bool:
    while isinstance(e, (A.Cast, A.Unary)):
        e = e.expr
    return isinstance(e, (A.Const, A.BoolLit)) or (
        isinstance(e, A.Binary) and _constant(e.left) and _constant(e.right))


def _field(e: A.Node) -> str | None:
    """The field an expression names (``hdr.ipv4.ttl``, ``x``), slices and casts aside."""
    while isinstance(e, (A.Slice, A.Cast)):
        e = e.expr
    if isinstance(e, (A.Name, A.Member)):
        return expr_p4(e)
    return None


def _reads(e: A.Node) -> set[str]:
    out: set[str] = set()
    for n in A.walk(e):
        if isinstance(n, (A.Name, A.Member)) and (f := _field(n)) is not None:
            out.add(f)
    return out


def _refuse(node: A.Node, msg: str, hint: str) -> P4Error:
    return P4Error(msg, hint=hint, **A.error_at(node))


_ONE_STAGE = ("Tofino runs an action in one stage, one ALU instruction per field: compute "
              "the value in steps on separate statements outside the action, in a "
              "RegisterAction, or (a TCP/UDP checksum) with SfcL4Checksum / TNA's Checksum in "
              "the deparser")


def _check_assign(a: A.Assign, where: str) -> None:
    if isinstance(a.rhs, A.Call):
        return
    n = alu_ops(a.rhs)
    if n > 1:
        raise _refuse(a, f"{where}: action spanning multiple stages: "
                         f"`{expr_p4(a.lhs)} = {expr_p4(a.rhs)}` needs {n} dependent ALU "
                         f"operations on one field", _ONE_STAGE)


def _stmts(s: A.Node):
    """The statements of *s* in order, ``if`` bodies included (their conditions aside)."""
    if isinstance(s, A.Block):
        for x in s.stmts:
            yield from _stmts(x)
    elif isinstance(s, A.If):
        yield s
        yield from _stmts(s.then)
        if s.other is not None:
            yield from _stmts(s.other)
    else:
        yield s


def _check_action(act: A.ActionDecl, where: str) -> None:
    written: dict[str, A.Assign] = {}
    for s in _stmts(act.body):
        if isinstance(s, A.Assign):
            _check_assign(s, f"{where}, action '{act.name}'")
            used = _reads(s.rhs) | ({_field(s.lhs)} if isinstance(s.lhs, A.Slice) else set())
            dep = next((f for f in used if f in written), None)
            if dep is not None and not isinstance(s.rhs, A.Call):
                raise _refuse(s, f"{where}, action '{act.name}': action spanning multiple "
                                 f"stages: `{dep}` is written (line "
                                 f"{getattr(written[dep].pos, 'line', '?')}) and then read in "
                                 f"the same action", _ONE_STAGE)
            if (f := _field(s.lhs)) is not None:
                if alu_ops(s.rhs) or isinstance(s.rhs, A.Call):
                    written[f] = s        # computed: a later read needs its result
                else:
                    written.pop(f, None)  # a copy or a constant: the compiler propagates it


def _check_conditions(node: A.Node, where: str) -> None:
    for n in A.walk(node):
        if isinstance(n, A.Instance):
            continue
        if isinstance(n, A.If):
            for c in A.walk(n.cond):
                if (isinstance(c, A.Binary) and c.op in _ORDER and not _constant(c.left)
                        and not _constant(c.right)):
                    raise _refuse(n.cond, f"{where}: condition too complex, one operand of "
                                          f"`{expr_p4(c)}` must be constant (a Tofino gateway "
                                          f"compares a field with a constant)",
                                  "compare inside a RegisterAction (SfcRegisterAction) and "
                                  "return a flag, or test a flag / a constant")


def _check_direct(control: A.ControlDecl, where: str, lowered: bool) -> None:
    actions = {d.name: d for d in control.locals if isinstance(d, A.ActionDecl)}
    for t in control.tables():
        for prop in _DIRECT:
            d = t.property(prop)
            if not isinstance(d, A.Name):
                continue
            for ref in t.actions:
                if any(a.name == "defaultonly" for a in ref.annotations):
                    continue
                act = actions.get(ref.name)
                counts = act is not None and (not lowered or any(
                    isinstance(c, A.Call) and isinstance(c.func, A.Member)
                    and isinstance(c.func.expr, A.Name) and c.func.expr.name == d.name
                    for c in A.walk(act.body)))
                if not counts:
                    raise _refuse(ref if getattr(ref, "pos", None) else t,
                                  f"{where}: table '{t.name}': its direct {prop[:-1]} "
                                  f"'{d.name}' is not used in action '{ref.name}'; Tofino "
                                  f"needs a direct resource in every hit action",
                                  f"mark '{ref.name}' @defaultonly (`@defaultonly "
                                  f"{ref.name};`) or use the resource in it (an NF's own "
                                  f"actions count by themselves on TNA)")


def _check_range_keys(control: A.ControlDecl, where: str,
                      width_of: Callable[[A.Node], int | None]) -> None:
    for t in control.tables():
        for k in t.keys:
            if k.match_kind != "range":
                continue
            w = width_of(k.expr)
            if w is not None and w > RANGE_KEY_BITS:
                raise _refuse(k if getattr(k, "pos", None) else t,
                              f"{where}: table '{t.name}': cannot perform a range match on key "
                              f"`{expr_p4(k.expr)}` ({w} bits): Tofino's range keys are at most "
                              f"{RANGE_KEY_BITS} bits (5 nibbles)",
                              f"match `{expr_p4(k.expr)}` as ternary and write each range as "
                              f"the value/mask entries that cover it "
                              f"(sfclab.codegen.entries.range_to_ternary), or range-match a "
                              f"slice of at most {RANGE_KEY_BITS} bits")


def check_tofino(control: A.ControlDecl, *, what: str = "", lowered: bool = True,
                 width_of: Callable[[A.Node], int | None] | None = None) -> None:
    """Refuse in *control* what Tofino's compiler refuses (the module's doc).  *lowered*:
    the control is TNA code (its direct counters count where ``d.count()`` is called);
    else an NF in the portable API (TNA's emitter makes each of its own actions count).
    *width_of* gives an expression's width in bits (None: not known), for the range
    keys' rule."""
    where = what or f"control '{control.name}'"
    if width_of is not None:
        _check_range_keys(control, where, width_of)
    _check_conditions(control.apply, where)
    for d in control.locals:
        if isinstance(d, A.ActionDecl):
            _check_conditions(d.body, where)
            _check_action(d, where)
    for s in A.walk(control.apply):
        if isinstance(s, A.Assign):
            _check_assign(s, where)
    _check_direct(control, where, lowered)
