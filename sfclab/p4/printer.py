"""P4 AST back to P4_16 text.

The output re-parses to an equal AST (print → parse → print is stable, which
the property tests check); parentheses are added only where precedence needs
them, and integers keep the base they were written in.

>>> from sfclab.p4 import parse_p4
>>> print(to_p4(parse_p4("const bit<8> X = (1 + 2) * 3;")), end="")
const bit<8> X = (1 + 2) * 3;
"""

from __future__ import annotations

from functools import singledispatch

from . import ast as A

__all__ = ["to_p4", "expr_p4", "type_p4", "PRECEDENCE"]

INDENT = "    "

#: Binding strength of the binary operators (p4c's grammar; higher binds tighter).
PRECEDENCE = {
    "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, ">": 5, "<=": 5, ">=": 5,
    "|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9,
    "++": 10, "+": 10, "-": 10, "|+|": 10, "|-|": 10, "*": 11, "/": 11, "%": 11,
}
_TERNARY, _UNARY, _POSTFIX = 1, 12, 13


def _prec(e: A.Node) -> int:
    if isinstance(e, A.Binary):
        return PRECEDENCE[e.op]
    if isinstance(e, A.Ternary):
        return _TERNARY
    if isinstance(e, (A.Unary, A.Cast)):
        return _UNARY
    if isinstance(e, (A.Mask, A.Range)):
        return 0
    return _POSTFIX


def _wrap(e: A.Node, min_prec: int) -> str:
    s = expr_p4(e)
    return f"({s})" if _prec(e) < min_prec else s


# --- types ---------------------------------------------------------------------------------

def type_p4(t: A.Node) -> str:
    """``bit<8>``, ``SfcRegister<bit<32>, bit<12>>``, ``mpls_t[4]`` …"""
    if isinstance(t, A.BitType):
        kw = "int" if t.signed else "bit"
        if t.width == 0:
            return "int"
        return f"{kw}<{t.width}>"
    if isinstance(t, A.BoolType):
        return "bool"
    if isinstance(t, A.VoidType):
        return "void"
    if isinstance(t, A.NamedType):
        if t.args:
            return f"{t.name}<{', '.join(type_p4(a) for a in t.args)}>"
        return t.name
    if isinstance(t, A.StackType):
        return f"{type_p4(t.elem)}[{t.size}]"
    if isinstance(t, A.VarbitType):
        return f"varbit<{t.width}>"
    if isinstance(t, A.TupleType):
        return f"tuple<{', '.join(type_p4(e) for e in t.elems)}>"
    raise TypeError(f"not a P4 type: {t!r}")


# --- expressions ---------------------------------------------------------------------------

#: Constants wider than this are printed in hex (decimal would pass Python's 4,300-digit limit).
_DECIMAL_BITS = 14_000


def _const(c: A.Const) -> str:
    if c.text is not None:
        return c.text
    if c.base == 16:
        digits = f"0x{c.value:X}"
    elif c.base == 2:
        digits = f"0b{c.value:b}"
    elif c.base == 8:
        digits = f"0o{c.value:o}"
    elif c.value.bit_length() > _DECIMAL_BITS:        # Python prints at most 4,300 digits
        digits = f"0x{c.value:X}"
    else:
        digits = str(c.value)
    if c.width is not None:
        return f"{c.width}{'s' if c.signed else 'w'}{digits}"
    return digits


def _args(args: tuple[A.Node, ...]) -> str:
    return ", ".join(expr_p4(a) for a in args)


def expr_p4(e: A.Node) -> str:
    """One expression as P4 text."""
    if isinstance(e, A.Const):
        return _const(e)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.StringLit):
        return f'"{e.value}"'
    if isinstance(e, (A.Name, A.TypeName)):
        return e.name
    if isinstance(e, A.Member):
        return f"{_wrap(e.expr, _POSTFIX)}.{e.name}"
    if isinstance(e, A.Index):
        return f"{_wrap(e.expr, _POSTFIX)}[{expr_p4(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{_wrap(e.expr, _POSTFIX)}[{expr_p4(e.hi)}:{expr_p4(e.lo)}]"
    if isinstance(e, A.Call):
        targs = f"<{', '.join(type_p4(t) for t in e.type_args)}>" if e.type_args else ""
        return f"{_wrap(e.func, _POSTFIX)}{targs}({_args(e.args)})"
    if isinstance(e, A.Unary):
        return f"{e.op}{_wrap(e.expr, _UNARY)}"
    if isinstance(e, A.Cast):
        return f"({type_p4(e.type)}) {_wrap(e.expr, _UNARY)}"
    if isinstance(e, A.Binary):
        p = PRECEDENCE[e.op]
        return f"{_wrap(e.left, p)} {e.op} {_wrap(e.right, p + 1)}"
    if isinstance(e, A.Ternary):
        return f"{_wrap(e.cond, _TERNARY + 1)} ? {expr_p4(e.then)} : {_wrap(e.other, _TERNARY)}"
    if isinstance(e, A.ListExpr):
        return "{" + _args(e.items) + "}"
    if isinstance(e, A.Mask):
        return f"{expr_p4(e.value)} &&& {expr_p4(e.mask)}"
    if isinstance(e, A.Range):
        return f"{expr_p4(e.lo)} .. {expr_p4(e.hi)}"
    if isinstance(e, A.Default):
        return "default"
    if isinstance(e, A.DontCare):
        return "_"
    if isinstance(e, A.StructExpr):
        rest = ", ..." if e.rest else ""
        return "{" + ", ".join(f"{n} = {expr_p4(v)}" for n, v in e.items) + rest + "}"
    if isinstance(e, A.InvalidExpr):
        return "{#}"
    if isinstance(e, A.NamedArg):
        return f"{e.name} = {expr_p4(e.value)}"
    raise TypeError(f"not a P4 expression: {e!r}")


def _keyset(keys: tuple[A.Node, ...]) -> str:
    if len(keys) == 1:
        return expr_p4(keys[0])
    return "(" + ", ".join(expr_p4(k) for k in keys) + ")"


# --- statements and declarations -----------------------------------------------------------

def _annots(annots: tuple[A.Annotation, ...], sep: str = " ") -> str:
    return "".join(_annot(a) + ("\n" if a.name == "pragma" else sep) for a in annots)


def _annot(a: A.Annotation) -> str:
    """``@name(body)``; ``@pragma body`` takes the rest of its line (a new line follows it)."""
    if a.name == "pragma" and a.body is not None:
        return f"@pragma {a.body}"
    return f"@{a.name}" + (f"({a.body})" if a.body is not None else "")


def _params(params: tuple[A.Param, ...]) -> str:
    out = []
    for p in params:
        d = f"{p.direction} " if p.direction else ""
        default = f" = {expr_p4(p.default)}" if p.default is not None else ""
        out.append(f"{_annots(p.annotations)}{d}{type_p4(p.type)} {p.name}{default}")
    return ", ".join(out)


def _tparams(tp: tuple[str, ...]) -> str:
    return f"<{', '.join(tp)}>" if tp else ""


@singledispatch
def _lines(node: A.Node, ind: str) -> list[str]:
    raise TypeError(f"cannot print {type(node).__name__}")


def _block(b: A.Block, ind: str, head: str) -> list[str]:
    if not b.stmts:
        return [f"{ind}{head}{{ }}"]
    out = [f"{ind}{head}{{"]
    for s in b.stmts:
        out += _lines(s, ind + INDENT)
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.Block, ind: str) -> list[str]:
    return _block(n, ind, "")


@_lines.register
def _(n: A.Assign, ind: str) -> list[str]:
    return [f"{ind}{expr_p4(n.lhs)} = {expr_p4(n.rhs)};"]


@_lines.register
def _(n: A.CallStmt, ind: str) -> list[str]:
    return [f"{ind}{expr_p4(n.call)};"]


def _as_block(s: A.Node) -> A.Block:
    return s if isinstance(s, A.Block) else A.Block((s,))


@_lines.register
def _(n: A.If, ind: str) -> list[str]:
    out = _block(_as_block(n.then), ind, f"if ({expr_p4(n.cond)}) ")
    other = n.other
    while other is not None:
        if isinstance(other, A.If):
            tail = _block(_as_block(other.then), ind, f"else if ({expr_p4(other.cond)}) ")
            other = other.other
        else:
            tail = _block(_as_block(other), ind, "else ")
            other = None
        out[-1] += " " + tail[0].lstrip()
        out += tail[1:]
    return out


@_lines.register
def _(n: A.Switch, ind: str) -> list[str]:
    out = [f"{ind}switch ({expr_p4(n.expr)}) {{"]
    for c in n.cases:
        if c.body is None:
            out.append(f"{ind}{INDENT}{c.label}:")
        else:
            out += _block(c.body, ind + INDENT, f"{c.label}: ")
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.Exit, ind: str) -> list[str]:
    return [f"{ind}exit;"]


@_lines.register
def _(n: A.Return, ind: str) -> list[str]:
    return [f"{ind}return {expr_p4(n.value)};" if n.value is not None else f"{ind}return;"]


@_lines.register
def _(n: A.Break, ind: str) -> list[str]:
    return [f"{ind}break;"]


@_lines.register
def _(n: A.Continue, ind: str) -> list[str]:
    return [f"{ind}continue;"]


def _simple(s: A.Node) -> str:
    """A statement of a ``for`` head, without its ``;``."""
    return "".join(_lines(s, "")).rstrip(";")


@_lines.register
def _(n: A.For, ind: str) -> list[str]:
    head = (f"for ({', '.join(_simple(s) for s in n.init)}; "
            f"{expr_p4(n.cond) if n.cond is not None else ''}; "
            f"{', '.join(_simple(s) for s in n.update)}) ")
    return _block(_as_block(n.body), ind, head)


@_lines.register
def _(n: A.ForIn, ind: str) -> list[str]:
    head = f"for ({type_p4(n.var.type)} {n.var.name} in {expr_p4(n.iterable)}) "
    return _block(_as_block(n.body), ind, head)


@_lines.register
def _(n: A.Empty, ind: str) -> list[str]:
    return [f"{ind};"]


@_lines.register
def _(n: A.VarDecl, ind: str) -> list[str]:
    init = f" = {expr_p4(n.init)}" if n.init is not None else ""
    return [f"{ind}{_annots(n.annotations)}{type_p4(n.type)} {n.name}{init};"]


@_lines.register
def _(n: A.Include, ind: str) -> list[str]:
    return [f"#include <{n.path}>" if n.system else f'#include "{n.path}"']


@_lines.register
def _(n: A.Define, ind: str) -> list[str]:
    return [f"#define {n.name} {n.value}"]


@_lines.register
def _(n: A.ConstDecl, ind: str) -> list[str]:
    return [f"{ind}{_annots(n.annotations)}const {type_p4(n.type)} {n.name} = {expr_p4(n.value)};"]


@_lines.register
def _(n: A.Typedef, ind: str) -> list[str]:
    kw = "type" if n.new else "typedef"
    return [f"{ind}{_annots(n.annotations)}{kw} {type_p4(n.type)} {n.name};"]


def _fields(kw: str, n: A.HeaderDecl | A.StructDecl, ind: str) -> list[str]:
    out = [f"{ind}{_annots(n.annotations)}{kw} {n.name} {{"]
    out += [f"{ind}{INDENT}{_annots(f.annotations)}{type_p4(f.type)} {f.name};" for f in n.fields]
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.HeaderDecl, ind: str) -> list[str]:
    return _fields("header", n, ind)


@_lines.register
def _(n: A.StructDecl, ind: str) -> list[str]:
    return _fields("struct", n, ind)


@_lines.register
def _(n: A.HeaderUnionDecl, ind: str) -> list[str]:
    return _fields("header_union", n, ind)


@_lines.register
def _(n: A.BlockTypeDecl, ind: str) -> list[str]:
    return [f"{ind}{_annots(n.annotations)}{n.kind} {n.name}{_tparams(n.type_params)}"
            f"({_params(n.params)});"]


@_lines.register
def _(n: A.EnumDecl, ind: str) -> list[str]:
    typ = f"{type_p4(n.type)} " if n.type is not None else ""
    members = ", ".join(m if v is None else f"{m} = {expr_p4(v)}" for m, v in n.members)
    return [f"{ind}{_annots(n.annotations)}enum {typ}{n.name} {{ {members} }}"]


@_lines.register
def _(n: A.ErrorDecl, ind: str) -> list[str]:
    return [f"{ind}error {{ {', '.join(n.members)} }}"]


@_lines.register
def _(n: A.MatchKindDecl, ind: str) -> list[str]:
    return [f"{ind}match_kind {{ {', '.join(n.members)} }}"]


def _method(m: A.MethodDecl) -> str:
    ret = f"{type_p4(m.ret)} " if m.ret is not None else ""
    ret = f"abstract {ret}" if m.abstract else ret
    return f"{_annots(m.annotations)}{ret}{m.name}{_tparams(m.type_params)}({_params(m.params)});"


@_lines.register
def _(n: A.MethodDecl, ind: str) -> list[str]:
    return [f"{ind}extern {_method(n)}"]


@_lines.register
def _(n: A.ExternDecl, ind: str) -> list[str]:
    out = [f"{ind}{_annots(n.annotations)}extern {n.name}{_tparams(n.type_params)} {{"]
    out += [f"{ind}{INDENT}{_method(m)}" for m in n.methods]
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.FunctionDecl, ind: str) -> list[str]:
    return _block(n.body, ind, f"{_annots(n.annotations)}{type_p4(n.ret)} {n.name}"
                               f"{_tparams(n.type_params)}({_params(n.params)}) ")


@_lines.register
def _(n: A.Instance, ind: str) -> list[str]:
    head = f"{ind}{_annots(n.annotations)}{type_p4(n.type)}({_args(n.args)}) {n.name}"
    if n.body is None:
        return [head + ";"]
    out = [head + " = {"]
    for f in n.body:
        out += _lines(f, ind + INDENT)
    out.append(f"{ind}}};")
    return out


@_lines.register
def _(n: A.ActionDecl, ind: str) -> list[str]:
    return _block(n.body, ind,
                  f"{_annots(n.annotations)}action {n.name}({_params(n.params)}) ")


def _action_ref(r: A.ActionRef) -> str:
    args = f"({_args(r.args)})" if r.args is not None else ""
    return f"{_annots(r.annotations)}{r.name}{args}"


@_lines.register
def _(n: A.TableDecl, ind: str) -> list[str]:
    i2, i3 = ind + INDENT, ind + 2 * INDENT
    out = [f"{ind}{_annots(n.annotations)}table {n.name} {{"]
    if n.keys:
        out.append(f"{i2}key = {{")
        out += [f"{i3}{expr_p4(k.expr)} : {k.match_kind}"
                + (" " + _annots(k.annotations).strip() if k.annotations else "") + ";"
                for k in n.keys]
        out.append(f"{i2}}}")
    out.append(f"{i2}actions = {{")
    out += [f"{i3}{_action_ref(a)};" for a in n.actions]
    out.append(f"{i2}}}")
    for p in n.properties:
        out.append(f"{i2}{'const ' if p.const else ''}{p.name} = {expr_p4(p.value)};")
    if n.size is not None:
        out.append(f"{i2}size = {n.size};")
    if n.default_action is not None:
        out.append(f"{i2}{'const ' if n.default_const else ''}default_action = "
                   f"{_action_ref(n.default_action)};")
    if n.entries is not None:
        out.append(f"{i2}{'const ' if n.entries_const else ''}entries = {{")
        for e in n.entries:
            prio = f"priority={e.priority}: " if e.priority is not None else ""
            const = "const " if e.const else ""
            annots = (" " + _annots(e.annotations).strip()) if e.annotations else ""
            out.append(f"{i3}{const}{prio}{_keyset(e.keys)} : {_action_ref(e.action)}{annots};")
        out.append(f"{i2}}}")
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.ControlDecl, ind: str) -> list[str]:
    ctor = f"({_params(n.ctor_params)})" if n.ctor_params else ""
    out = [f"{ind}{_annots(n.annotations)}control {n.name}{_tparams(n.type_params)}"
           f"({_params(n.params)}){ctor} {{"]
    prev = None
    for d in n.locals:
        if prev is not None and _spaced(prev, d):
            out.append("")
        out += _lines(d, ind + INDENT)
        prev = d
    if n.locals:
        out.append("")
    out += _block(n.apply, ind + INDENT, "apply ")
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.ParserDecl, ind: str) -> list[str]:
    out = [f"{ind}{_annots(n.annotations)}parser {n.name}{_tparams(n.type_params)}"
           f"({_params(n.params)}) {{"]
    for d in n.locals:
        out += _lines(d, ind + INDENT)
    i2, i3 = ind + INDENT, ind + 2 * INDENT
    for st in n.states:
        out.append(f"{i2}{_annots(st.annotations)}state {st.name} {{")
        for s in st.stmts:
            out += _lines(s, i3)
        if isinstance(st.transition, A.Select):
            sel = st.transition
            out.append(f"{i3}transition select({_args(sel.exprs)}) {{")
            out += [f"{i3}{INDENT}{_keyset(c.keys)} : {c.state};" for c in sel.cases]
            out.append(f"{i3}}}")
        else:
            out.append(f"{i3}transition {st.transition};")
        out.append(f"{i2}}}")
    out.append(f"{ind}}}")
    return out


@_lines.register
def _(n: A.Program, ind: str) -> list[str]:
    out: list[str] = []
    prev = None
    for d in n.decls:
        if prev is not None and _spaced(prev, d):
            out.append("")
        out += _lines(d, ind)
        prev = d
    return out


_ONE_LINERS = (A.Include, A.Define, A.ConstDecl, A.Typedef, A.VarDecl, A.Instance, A.ErrorDecl,
               A.MatchKindDecl, A.MethodDecl)


def _spaced(prev: A.Node, d: A.Node) -> bool:
    """A blank line between two declarations unless both are one-liners of a kind."""
    pre = (A.Include, A.Define)
    if isinstance(prev, pre) and isinstance(d, pre):
        return False
    return not (type(prev) is type(d) and isinstance(d, _ONE_LINERS)
                and not (isinstance(d, A.Instance) and d.body is not None))


def to_p4(node: A.Node) -> str:
    """P4 text of a program, a declaration, a statement or an expression."""
    if isinstance(node, (A.BitType, A.BoolType, A.VoidType, A.NamedType, A.StackType,
                         A.VarbitType, A.TupleType)):
        return type_p4(node)
    try:
        return "\n".join(_lines(node, "")) + "\n"
    except TypeError:
        return expr_p4(node)
