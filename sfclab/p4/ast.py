"""The P4_16 AST sfclab reads, prints, composes and runs.

Frozen dataclasses, one per construct of the subset (see :mod:`sfclab.p4`).
Every node carries its source position in ``pos`` (file, line, column), which
is left out of equality: two programs are equal when they say the same thing,
wherever it was written.  The printer (:mod:`sfclab.p4.printer`) turns any
node back into P4 text.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4("const bit<16> ETHERTYPE_IPV4 = 0x0800;")
>>> c = prog.decls[0]
>>> c.name, c.type, c.value.value, c.pos.line
('ETHERTYPE_IPV4', BitType(width=16, signed=False), 2048, 1)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any, Union

__all__ = [
    "Pos", "Node", "error_at",
    # types
    "Type", "BitType", "BoolType", "NamedType", "StackType", "VoidType", "VarbitType",
    "TupleType",
    # expressions
    "Expr", "Const", "BoolLit", "StringLit", "Name", "TypeName", "Member", "Index", "Slice",
    "Call", "Unary", "Binary", "Ternary", "Cast", "ListExpr", "Mask", "Range", "Default",
    "DontCare", "StructExpr", "InvalidExpr", "NamedArg",
    # statements
    "Stmt", "Block", "Assign", "CallStmt", "If", "SwitchCase", "Switch", "Exit", "Return",
    "Empty", "VarDecl", "For", "ForIn", "Break", "Continue",
    # declarations
    "Decl", "Annotation", "Include", "Define", "ConstDecl", "Typedef", "Field", "HeaderDecl",
    "HeaderUnionDecl", "BlockTypeDecl",
    "StructDecl", "EnumDecl", "ErrorDecl", "MatchKindDecl", "Param", "MethodDecl",
    "ExternDecl", "Instance", "FunctionDecl", "ActionDecl", "ActionRef", "KeyElement",
    "TableEntry", "TableProperty", "TableDecl", "ControlDecl", "SelectCase", "Select",
    "ParserState", "ParserDecl", "Program",
    "walk",
]


@dataclass(frozen=True, slots=True)
class Pos:
    """Where a node was written: file (or ``<string>``), line and column (1-based), and
    the text of that file as it was read (for the caret under an error; None when the
    node was not parsed from text)."""

    file: str
    line: int
    column: int = 1
    text: str | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def error_at(node: object) -> dict[str, Any]:
    """Where *node* was written, as a :class:`~sfclab.errors.SourceError`'s keyword
    arguments: ``line``, ``column``, ``source`` and the ``text`` of the file the position
    is in (an ``#include``-d file's own, so the caret is drawn on the right line; empty
    when not known); zeros and empty strings when *node* has no position."""
    pos = getattr(node, "pos", None)
    if pos is None:
        return {"line": 0, "column": 0, "source": "", "text": ""}
    return {"line": pos.line, "column": pos.column, "source": pos.file, "text": pos.text or ""}


def _pos() -> Pos | None:
    return field(default=None, compare=False, repr=False)


class Node:
    """Base of every AST node."""

    __slots__ = ()

    def children(self) -> Iterator[Node]:
        """The nodes directly below this one, in source order."""
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, Node):
                yield v
            elif isinstance(v, tuple):
                for x in v:
                    if isinstance(x, Node):
                        yield x


def walk(node: Node) -> Iterator[Node]:
    """*node* and every node below it, depth first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(n.children())))


# --- types -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class BitType(Node):
    """``bit<W>`` (``signed``: ``int<W>``); ``width`` 0 is the unbounded ``int``."""

    width: int
    signed: bool = False


@dataclass(frozen=True, slots=True)
class BoolType(Node):
    pass


@dataclass(frozen=True, slots=True)
class VoidType(Node):
    pass


@dataclass(frozen=True, slots=True)
class NamedType(Node):
    """A declared type by name, with type arguments (``SfcRegister<bit<32>, bit<12>>``)."""

    name: str
    args: tuple[Type, ...] = ()


@dataclass(frozen=True, slots=True)
class StackType(Node):
    """A header stack ``mpls_t[4]``."""

    elem: Type
    size: int


@dataclass(frozen=True, slots=True)
class VarbitType(Node):
    """``varbit<W>``: a field of at most W bits whose length a packet gives."""

    width: int


@dataclass(frozen=True, slots=True)
class TupleType(Node):
    """``tuple<T1, T2>``."""

    elems: tuple[Type, ...]


Type = Union[BitType, BoolType, VoidType, NamedType, StackType, VarbitType, TupleType]


# --- expressions ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Const(Node):
    """An integer literal; ``width`` is set for ``8w5`` / ``8s5``, ``base`` is how it was written."""

    value: int
    width: int | None = None
    signed: bool = False
    base: int = 10
    pos: Pos | None = _pos()
    #: The literal as written (``0x0800``), kept for printing; not part of equality.
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class BoolLit(Node):
    value: bool
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class StringLit(Node):
    value: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Name(Node):
    """A variable, parameter, instance, action, table or constant by name."""

    name: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class TypeName(Node):
    """A type used as an expression: an enum or ``error`` (before ``.member``), a constructor."""

    name: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Member(Node):
    """``expr.name``."""

    expr: Expr
    name: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Index(Node):
    """``expr[index]`` on a header stack."""

    expr: Expr
    index: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Slice(Node):
    """``expr[hi:lo]``."""

    expr: Expr
    hi: Expr
    lo: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Call(Node):
    """``func<type_args>(args)``: a method, action, extern function or constructor call."""

    func: Expr
    args: tuple[Expr, ...] = ()
    type_args: tuple[Type, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Unary(Node):
    """``op expr`` with ``op`` one of ``! ~ -``."""

    op: str
    expr: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Binary(Node):
    """``left op right``; ``++`` is concatenation."""

    op: str
    left: Expr
    right: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Ternary(Node):
    cond: Expr
    then: Expr
    other: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Cast(Node):
    type: Type
    expr: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ListExpr(Node):
    """``{a, b, c}``: a field list (hash input, digest data) or a struct value."""

    items: tuple[Expr, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Mask(Node):
    """``value &&& mask`` in a keyset."""

    value: Expr
    mask: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Range(Node):
    """``lo .. hi`` in a keyset."""

    lo: Expr
    hi: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Default(Node):
    """``default`` in a keyset (matches anything)."""

    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class DontCare(Node):
    """``_`` in a keyset (matches anything)."""

    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class StructExpr(Node):
    """``{a = 1, b = 2}``: a struct or header value by field name; ``rest``: ``{a = 1, ...}``,
    the other fields take their default values."""

    items: tuple[tuple[str, Expr], ...]
    pos: Pos | None = _pos()
    rest: bool = False


@dataclass(frozen=True, slots=True)
class InvalidExpr(Node):
    """``{#}``: an invalid header or header union."""

    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class NamedArg(Node):
    """``name = value`` as an argument of a call."""

    name: str
    value: Expr
    pos: Pos | None = _pos()


Expr = Union[Const, BoolLit, StringLit, Name, TypeName, Member, Index, Slice, Call, Unary,
             Binary, Ternary, Cast, ListExpr, Mask, Range, Default, DontCare, StructExpr,
             InvalidExpr, NamedArg]


# --- statements ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Block(Node):
    stmts: tuple[Stmt, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Assign(Node):
    lhs: Expr
    rhs: Expr
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class CallStmt(Node):
    call: Call
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class If(Node):
    cond: Expr
    then: Stmt
    other: Stmt | None = None
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class SwitchCase(Node):
    """``label: body`` (``body`` None: falls through to the next case); label ``default``.
    ``label`` is the label's text (an action's name); ``expr`` the label as an expression
    (a value of a ``switch`` on a value)."""

    label: str
    body: Block | None
    pos: Pos | None = _pos()
    expr: Expr | None = None


@dataclass(frozen=True, slots=True)
class Switch(Node):
    """``switch (expr) { … }`` on ``t.apply().action_run`` or on a value."""

    expr: Expr
    cases: tuple[SwitchCase, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Exit(Node):
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Return(Node):
    """``return;`` or, in a function, ``return value;``."""

    pos: Pos | None = _pos()
    value: Expr | None = None


@dataclass(frozen=True, slots=True)
class For(Node):
    """``for (init; cond; update) body``; ``init`` and ``update`` are statements."""

    init: tuple[Stmt, ...]
    cond: Expr | None
    update: tuple[Stmt, ...]
    body: Stmt
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ForIn(Node):
    """``for (T x in collection) body``: a range ``a .. b`` or a header stack."""

    var: VarDecl
    iterable: Expr
    body: Stmt
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Break(Node):
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Continue(Node):
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Empty(Node):
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Annotation(Node):
    """``@name``, ``@name(body)`` or ``@pragma body`` (name "pragma", the rest of its line);
    the body is kept as written."""

    name: str
    body: str | None = None
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class VarDecl(Node):
    """A local variable (in a control, an action, a block or a parser)."""

    type: Type
    name: str
    init: Expr | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


Stmt = Union[Block, Assign, CallStmt, If, Switch, Exit, Return, Empty, VarDecl, "ConstDecl", For,
             ForIn, Break, Continue]


# --- declarations --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Include(Node):
    """``#include <core.p4>`` (``system``) or ``#include "file.p4"``; ``decls`` are the
    included file's declarations, as the parser read them in place (an architecture
    file's are built in: :mod:`sfclab.p4.arch`)."""

    path: str
    system: bool
    pos: Pos | None = _pos()
    decls: tuple[Decl, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Define(Node):
    """``#define NAME VALUE``: only the macros an architecture file reads
    (``V1MODEL_VERSION`` before ``#include <v1model.p4>`` …), with an integer value."""

    name: str
    value: int
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ConstDecl(Node):
    type: Type
    name: str
    value: Expr
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Typedef(Node):
    """``typedef T name;`` (``new``: ``type T name;``, a new type)."""

    type: Type
    name: str
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()
    new: bool = False


@dataclass(frozen=True, slots=True)
class Field(Node):
    type: Type
    name: str
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class HeaderDecl(Node):
    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class HeaderUnionDecl(Node):
    """``header_union name { h1_t a; h2_t b; }``: at most one member header is valid."""

    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class BlockTypeDecl(Node):
    """``control C<H>(inout H h);``, ``parser P(…);`` or ``package Pkg(…);``: a type of
    blocks (``kind``: ``control``, ``parser`` or ``package``)."""

    kind: str
    name: str
    params: tuple[Param, ...]
    type_params: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class StructDecl(Node):
    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class EnumDecl(Node):
    """``enum E { A, B }`` or a serializable ``enum bit<8> E { A = 1 }``."""

    name: str
    members: tuple[tuple[str, Expr | None], ...]
    type: Type | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ErrorDecl(Node):
    members: tuple[str, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class MatchKindDecl(Node):
    members: tuple[str, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Param(Node):
    """A parameter; ``direction`` is ``in``, ``out``, ``inout`` or ``""`` (directionless)."""

    direction: str
    type: Type
    name: str
    default: Expr | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class MethodDecl(Node):
    """A method or constructor (``ret`` None) of an extern, or an extern function;
    ``abstract``: a method an instance implements in its initializer (TNA's
    ``RegisterAction.apply``)."""

    ret: Type | None
    name: str
    params: tuple[Param, ...]
    type_params: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()
    abstract: bool = False


@dataclass(frozen=True, slots=True)
class ExternDecl(Node):
    """``extern Name<T> { methods }``; an extern function is a lone :class:`MethodDecl`."""

    name: str
    methods: tuple[MethodDecl, ...]
    type_params: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class FunctionDecl(Node):
    """A function: at the top level (``bit<8> f(in bit<8> x) { return x; }``) or inside
    an instance's initializer (TNA's ``RegisterAction`` ``apply``)."""

    ret: Type
    name: str
    params: tuple[Param, ...]
    body: Block
    pos: Pos | None = _pos()
    type_params: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True)
class Instance(Node):
    """``Type(args) name [= { functions }];``: an extern, control or package instance."""

    type: Type
    args: tuple[Expr, ...]
    name: str
    body: tuple[FunctionDecl, ...] | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ActionDecl(Node):
    name: str
    params: tuple[Param, ...]
    body: Block
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ActionRef(Node):
    """An action named in a table (``a``, ``a(1, 2)``), with its annotations."""

    name: str
    args: tuple[Expr, ...] | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class TableEntry(Node):
    """One of a table's ``entries``: a keyset per key, an action, a priority."""

    keys: tuple[Expr, ...]
    action: ActionRef
    priority: int | None = None
    pos: Pos | None = _pos()
    annotations: tuple[Annotation, ...] = ()
    const: bool = False


@dataclass(frozen=True, slots=True)
class TableProperty(Node):
    """A table property other than key/actions/default_action/entries/size."""

    name: str
    value: Expr
    const: bool = False
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class TableDecl(Node):
    name: str
    keys: tuple[KeyElement, ...] = ()
    actions: tuple[ActionRef, ...] = ()
    default_action: ActionRef | None = None
    default_const: bool = False
    size: int | None = None
    entries: tuple[TableEntry, ...] | None = None
    entries_const: bool = True
    properties: tuple[TableProperty, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()

    def property(self, name: str) -> Expr | None:
        """The value of another property (``counters``, ``meters`` …), or None."""
        return next((p.value for p in self.properties if p.name == name), None)


@dataclass(frozen=True, slots=True)
class ControlDecl(Node):
    name: str
    params: tuple[Param, ...]
    locals: tuple[Decl, ...]
    apply: Block
    type_params: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()
    #: constructor parameters: ``control C(inout H h)(bit<8> k, Other o) { … }``
    ctor_params: tuple[Param, ...] = ()

    def tables(self) -> list[TableDecl]:
        return [d for d in self.locals if isinstance(d, TableDecl)]

    def actions(self) -> list[ActionDecl]:
        return [d for d in self.locals if isinstance(d, ActionDecl)]

    def instances(self) -> list[Instance]:
        return [d for d in self.locals if isinstance(d, Instance)]


@dataclass(frozen=True, slots=True)
class SelectCase(Node):
    keys: tuple[Expr, ...]
    state: str
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class Select(Node):
    exprs: tuple[Expr, ...]
    cases: tuple[SelectCase, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ParserState(Node):
    """A state: statements, then ``transition`` to a state name or a :class:`Select`."""

    name: str
    stmts: tuple[Stmt, ...]
    transition: str | Select
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()


@dataclass(frozen=True, slots=True)
class ParserDecl(Node):
    name: str
    params: tuple[Param, ...]
    locals: tuple[Decl, ...]
    states: tuple[ParserState, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = _pos()
    type_params: tuple[str, ...] = ()


Decl = Union[Include, Define, ConstDecl, Typedef, HeaderDecl, StructDecl, EnumDecl, ErrorDecl,
             MatchKindDecl, ExternDecl, MethodDecl, Instance, ActionDecl, TableDecl, ControlDecl,
             ParserDecl, VarDecl, HeaderUnionDecl, BlockTypeDecl, FunctionDecl]


@dataclass(frozen=True, slots=True)
class Program(Node):
    """A whole P4 file: its top-level declarations in order."""

    decls: tuple[Decl, ...]
    source: str = field(default="<string>", compare=False)

    def find(self, kind: type, name: str | None = None) -> list:
        """Top-level declarations of one *kind* (and *name*)."""
        return [d for d in self.decls
                if isinstance(d, kind) and (name is None or getattr(d, "name", None) == name)]

    def controls(self) -> list[ControlDecl]:
        return self.find(ControlDecl)
