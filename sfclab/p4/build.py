"""Parse-tree callbacks that build :mod:`sfclab.p4.ast` nodes (run inline by the LALR parser).

:class:`Builder` turns each grammar rule of ``p4.lark`` into its AST node, with the
position the user wrote it at (through the preprocessor's line map, so a node of an
included file names that file), folds the compile-time integers P4 lets be
expressions (widths, stack sizes, ``size``, priorities: :mod:`.constfold`), and
keeps the declarations of each ``#include "file"`` the driver (:mod:`.parser`)
parsed on its own.

>>> from sfclab.p4 import parse_p4
>>> parse_p4("const bit<8> N = 2; header h_t { bit<(N * 4)> a; }").decls[1].fields[0].type
BitType(width=8, signed=False)
"""

from __future__ import annotations

import re

from lark import Token, Transformer, v_args

from ..errors import P4SyntaxError, UnsupportedP4Error
from . import ast as A
from .arch import DEFINES
from .constfold import fold
from .preprocess import Preprocessed
from .printer import expr_p4

__all__ = ["Builder", "int_literal"]

_INT = re.compile(r"(?:(\d+)([ws]))?(.*)", re.S)


def int_literal(tok: Token) -> tuple[int, int | None, bool, int]:
    """``8w0x0F`` -> (15, 8, False, 16)."""
    width, mark, body = _INT.fullmatch(str(tok).replace("_", "")).groups()
    low = body.lower()
    base = {"0x": 16, "0b": 2, "0o": 8, "0d": 10}.get(low[:2], 10)
    value = int(low[2:] if base != 10 or low.startswith("0d") else low, base)
    return value, (int(width) if width else None), mark == "s", base


@v_args(meta=False, inline=False)
class Builder(Transformer):
    """Parse-tree callbacks (run inline by the LALR parser) that build AST nodes."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        # set for each parse, under _LOCK: the text parsed and the included files' declarations
        self.pp = Preprocessed("", ())
        self.included: dict[int, tuple] = {}
        self.consts: dict[str, int] = {}      # integer constants declared so far (widths)

    def state(self) -> tuple:
        return self.pp, self.included, self.consts

    def begin(self, pp: Preprocessed, included: dict[int, tuple], consts: dict) -> None:
        self.pp, self.included, self.consts = pp, included, consts

    def restore(self, state: tuple) -> None:
        self.pp, self.included, self.consts = state

    def _p(self, tok: Token | None) -> A.Pos | None:
        if tok is None or getattr(tok, "line", None) is None:
            return None
        f, line = self.pp.where(tok.line)
        return A.Pos(f, line, tok.column, self.pp.files.get(f))

    def at(self, tok: Token) -> dict:
        """Where *tok* was written, as an error's keyword arguments."""
        f, line = self.pp.where(tok.line)
        return dict(line=line, column=tok.column, source=f, text=self.pp.files.get(f, ""))

    def _first_pos(self, children) -> A.Pos | None:
        for c in children:
            if isinstance(c, Token):
                return self._p(c)
            p = getattr(c, "pos", None)
            if p is not None:
                return p
        return None

    # -- top level
    def start(self, c):
        return list(c)

    def _fold(self, e, what: str) -> int:
        """A compile-time integer (a width, a size, a priority) written as *e*."""
        if isinstance(e, Token):
            return int_literal(e)[0]
        v = fold(e, self.consts)
        if v is None or v < 0:
            pos = getattr(e, "pos", None)
            raise P4SyntaxError(f"{what} must be a compile-time constant, not {expr_p4(e)!r}",
                                line=pos.line if pos else 0, column=pos.column if pos else 0,
                                source=pos.file if pos else "",
                                hint="use literals and constants declared before it")
        return v

    def include(self, c):
        raw = str(c[0])
        body = raw[raw.index("include") + len("include"):].strip()
        return A.Include(body[1:-1], body.startswith("<"), self._p(c[0]),
                         self.included.pop(c[0].line, ()))

    def define(self, c):
        tok = c[0]
        raw = str(tok)
        body = raw[raw.index("define") + len("define"):].strip()
        name, _, value = body.partition(" ")
        name, value = name.strip(), re.sub(r"//.*|/\*.*?\*/", "", value).strip()
        if name not in DEFINES:
            raise UnsupportedP4Error(
                f"#define {name} is outside the P4 subset sfclab reads",
                **self.at(tok), width=len(raw.rstrip()),
                hint="sfclab reads only the macros an architecture file reads: "
                     + ", ".join(f"{d} (before #include <{f}>)" for d, f in DEFINES.items())
                     + "; write constants with `const`")
        if not re.fullmatch(r"\d+", value):
            raise UnsupportedP4Error(
                f"#define {name} needs an integer value (got {value or 'nothing'!r})",
                **self.at(tok), width=len(raw.rstrip()),
                hint=f"for example `#define {name} "
                     f"{'20200408' if name == 'V1MODEL_VERSION' else '1'}`")
        return A.Define(name, int(value), self._p(tok))

    def annots(self, c):
        out = []
        for tok in c:
            s = str(tok)[1:]
            i = s.find("(")
            if s.startswith("pragma") and s[6:7] in (" ", "\t"):   # @pragma: the line's rest
                name, body = "pragma", s[6:].strip()
            else:
                name, body = (s, None) if i < 0 else (s[:i].strip(), s[i + 1:-1])
            out.append(A.Annotation(name, body, self._p(tok)))
        return tuple(out)

    def name(self, c):
        return c[0] if isinstance(c[0], Token) else Token("IDENT", str(c[0]))

    def const_decl(self, c):
        annots, typ, name, value = c
        v = fold(A.Cast(typ, value), self.consts) if isinstance(typ, A.BitType) else None
        if v is not None:
            self.consts[str(name)] = v
        return A.ConstDecl(typ, str(name), value, annots, self._p(name))

    def typedef(self, c):
        annots, typ, name = c
        return A.Typedef(typ, str(name), annots, self._p(name))

    def new_type(self, c):
        annots, typ, name = c
        return A.Typedef(typ, str(name), annots, self._p(name), new=True)

    def header_union_decl(self, c):
        return A.HeaderUnionDecl(str(c[1]), tuple(c[2:]), c[0], self._p(c[1]))

    def _block_type(self, kind: str, c):
        annots, name, tparams, params = c
        return A.BlockTypeDecl(kind, str(name), params, tparams or (), annots, self._p(name))

    def control_type_decl(self, c):
        return self._block_type("control", c)

    def parser_type_decl(self, c):
        return self._block_type("parser", c)

    def package_decl(self, c):
        return self._block_type("package", c)

    def field(self, c):
        annots, typ, name = c
        return A.Field(typ, str(name), annots, self._p(name))

    def header_decl(self, c):
        return A.HeaderDecl(str(c[1]), tuple(c[2:]), c[0], self._p(c[1]))

    def struct_decl(self, c):
        return A.StructDecl(str(c[1]), tuple(c[2:]), c[0], self._p(c[1]))

    def enum_member(self, c):
        return (str(c[0]), c[1])

    def enum_decl(self, c):
        annots, typ, name, *members = c
        return A.EnumDecl(str(name), tuple(m for m in members if m is not None), typ, annots,
                          self._p(name))

    def error_decl(self, c):
        return A.ErrorDecl(tuple(str(t) for t in c[1:] if t is not None), self._first_pos(c[1:]))

    def match_kind_decl(self, c):
        return A.MatchKindDecl(tuple(str(t) for t in c[1:] if t is not None),
                               self._first_pos(c[1:]))

    def type_params(self, c):
        return tuple(str(t) for t in c if t.type != "SHR_FIRST")

    def params(self, c):
        return tuple(p for p in c if p is not None)

    def param(self, c):
        annots, direction, typ, name, default = c
        return A.Param(str(direction or ""), typ, str(name), default, annots, self._p(name))

    def method(self, c):
        annots, abstract, ret, name, tparams, params = c
        return A.MethodDecl(ret, str(name), params, tparams or (), annots, self._p(name),
                            abstract is not None)

    def ctor(self, c):
        annots, name, params = c
        return A.MethodDecl(None, str(name), params, (), annots, self._p(name))

    def extern_decl(self, c):
        annots, name, tparams, *methods = c
        return A.ExternDecl(str(name), tuple(methods), tparams or (), annots, self._p(name))

    def extern_func(self, c):
        annots, ret, name, tparams, params = c
        return A.MethodDecl(ret, str(name), params, tparams or (), annots, self._p(name))

    def instance(self, c):
        annots, typ, args, name, body = c
        return A.Instance(typ, args, str(name), body, annots, self._p(name))

    def instance_body(self, c):
        return tuple(c)

    def function_decl(self, c):
        annots, ret, name, tparams, params, body = c
        return A.FunctionDecl(ret, str(name), params, body, self._p(name), tparams or (), annots)

    def control_decl(self, c):
        annots, name, tparams, params, ctor, *rest = c
        *locals_, apply = rest
        return A.ControlDecl(str(name), params, tuple(locals_), apply, tparams or (), annots,
                             self._p(name), ctor or ())

    def ctor_params(self, c):
        return c[0]

    def action_decl(self, c):
        annots, name, params, body = c
        return A.ActionDecl(str(name), params, body, annots, self._p(name))

    # -- tables
    def table_decl(self, c):
        annots, name, *props = c
        kw: dict = {}
        others = []
        for prop in props:
            if isinstance(prop, A.TableProperty) and prop.name != "size":
                others.append(prop)
                continue
            if isinstance(prop, A.TableProperty):
                size = fold(prop.value, self.consts)
                if size is None or size < 0:
                    raise P4SyntaxError(f"table '{name}': size must be a compile-time constant",
                                        line=prop.pos.line, column=prop.pos.column,
                                        source=prop.pos.file,
                                        hint="a number, or a constant declared before it")
                prop = {"size": size}
            key = next(iter(prop))
            if key in kw:
                raise P4SyntaxError(f"table '{name}' sets '{key}' twice",
                                    **self.at(name), width=len(name))
            kw.update(prop)
        return A.TableDecl(str(name), properties=tuple(others), annotations=annots,
                           pos=self._p(name), **kw)

    def key_prop(self, c):
        return {"keys": tuple(c)}

    def key_element(self, c):
        expr, kind, annots = c
        return A.KeyElement(expr, str(kind), annots, self._p(kind))

    def actions_prop(self, c):
        return {"actions": tuple(c)}

    def action_ref(self, c):
        annots, name, args = c
        return A.ActionRef(str(name), args, annots, self._p(name))

    def default_prop(self, c):
        const, ref = c
        return {"default_action": ref, "default_const": const is not None}

    def entries_prop(self, c):
        const, *entries = c
        return {"entries": tuple(entries), "entries_const": const is not None}

    def entry(self, c):
        const, prio, keys, ref, annots = c
        return A.TableEntry(keys, ref, prio, ref.pos, annots, const is not None)

    def entry_priority(self, c):
        return self._fold(c[0], "an entry's priority")

    def other_prop(self, c):
        const, name, value = c
        return A.TableProperty(str(name), value, const is not None, self._p(name))

    # -- parsers
    def parser_decl(self, c):
        annots, name, tparams, params, *rest = c
        locals_ = tuple(d for d in rest if not isinstance(d, A.ParserState))
        states = tuple(d for d in rest if isinstance(d, A.ParserState))
        return A.ParserDecl(str(name), params, locals_, states, annots, self._p(name),
                            tparams or ())

    def parser_state(self, c):
        annots, name, *stmts, trans = c
        return A.ParserState(str(name), tuple(stmts), trans, annots, self._p(name))

    def transition(self, c):
        return str(c[0])

    def select(self, c):
        exprs, *cases = c
        return A.Select(exprs, tuple(cases), self._first_pos(exprs))

    def select_case(self, c):
        keys, state = c
        return A.SelectCase(keys, str(state), self._p(state))

    def keyset(self, c):
        return tuple(c)

    def mask(self, c):
        return A.Mask(c[0], c[1], c[0].pos)

    def range(self, c):
        return A.Range(c[0], c[1], c[0].pos)

    def default(self, c):
        return A.Default()

    def dontcare(self, c):
        return A.DontCare()

    def invalid_expr(self, c):
        return A.InvalidExpr()

    def struct_expr(self, c):
        return A.StructExpr(tuple(x for x in c if isinstance(x, tuple)))

    def struct_expr_dots(self, c):
        return A.StructExpr(tuple(x for x in c if isinstance(x, tuple)), rest=True)

    def kv(self, c):
        return (str(c[0]), c[1])

    def named_arg(self, c):
        return A.NamedArg(str(c[0]), c[1], self._p(c[0]))

    # -- types
    def bit_type(self, c):
        kw, width = c[0], (c[1] if len(c) > 1 else None)
        if kw == "varbit":
            return A.VarbitType(self._fold(width, "the width of varbit<…>"))
        if width is None:
            return A.BitType(1 if kw == "bit" else 0, kw == "int")
        return A.BitType(self._fold(width, f"the width of {kw}<…>"), kw == "int")

    def tuple_type(self, c):
        return A.TupleType(c[0])

    def direction(self, c):
        return c[0]

    def bool_type(self, c):
        return A.BoolType()

    def error_type(self, c):
        return A.NamedType("error")

    def void_type(self, c):
        return A.VoidType()

    def named_type(self, c):
        return A.NamedType(str(c[0]), c[1] or ())

    def stack_type(self, c):
        return A.StackType(c[0], self._fold(c[1], "a header stack's size"))

    def type_args(self, c):
        return tuple(x for x in c if not isinstance(x, Token))

    targs = type_args

    # -- statements
    def block(self, c):
        return A.Block(tuple(c), self._first_pos(c))

    def annotated_block(self, c):
        return c[-1]

    def assign(self, c):
        return A.Assign(c[0], c[1], c[0].pos)

    def compound_assign(self, c):
        lhs, op, rhs = c
        return A.Assign(lhs, A.Binary(str(op)[:-1], lhs, rhs, lhs.pos), lhs.pos)

    def for_stmt(self, c):
        init, cond, update, body = c
        return A.For(init, cond, update, body, self._first_pos(c))

    def for_init(self, c):
        return tuple(x for x in c if x is not None)

    def for_var(self, c):
        annots, typ, name, init = c
        return A.VarDecl(typ, str(name), init, annots, self._p(name))

    def for_assign(self, c):
        return A.Assign(c[0], c[1], c[0].pos)

    def for_compound(self, c):
        return self.compound_assign(c)

    def for_call(self, c):
        return self.call_stmt(c)

    def for_in(self, c):
        annots, typ, name, _in, iterable, body = c
        var = A.VarDecl(typ, str(name), None, annots, self._p(name))
        return A.ForIn(var, iterable, body, self._p(name))

    def break_stmt(self, c):
        return A.Break()

    def continue_stmt(self, c):
        return A.Continue()

    def type_apply_stmt(self, c):
        _annots, tname, method, args = c
        func = A.Member(A.TypeName(str(tname), self._p(tname)), str(method), self._p(tname))
        return A.CallStmt(A.Call(func, args, (), func.pos), func.pos)

    def call_stmt(self, c):
        func, targs, args = c
        return A.CallStmt(A.Call(func, args, targs or (), func.pos), func.pos)

    def if_stmt(self, c):
        cond, then, *other = c
        return A.If(cond, then, other[0] if other else None, cond.pos)

    def switch_stmt(self, c):
        expr, *cases = c
        return A.Switch(expr, tuple(cases), expr.pos)

    def switch_case(self, c):
        if len(c) == 2:     # `label: [block]`
            label = c[0]
            text = label.name if isinstance(label, A.Name) else expr_p4(label)
            return A.SwitchCase(text, c[1], label.pos, label)
        return A.SwitchCase("default", c[0])

    def var_decl(self, c):
        annots, typ, name, init = c
        return A.VarDecl(typ, str(name), init, annots, self._p(name))

    def exit_stmt(self, c):
        return A.Exit()

    def return_stmt(self, c):
        return A.Return(value=c[0] if c else None)

    def empty_stmt(self, c):
        return A.Empty()

    # -- expressions
    def name_expr(self, c):
        return A.Name(str(c[0]), self._p(c[0]))

    def member(self, c):
        return A.Member(c[0], str(c[1]), c[0].pos)

    def index(self, c):
        return A.Index(c[0], c[1], c[0].pos)

    def slice(self, c):
        return A.Slice(c[0], c[1], c[2], c[0].pos)

    def call(self, c):
        return A.Call(c[0], c[1], (), c[0].pos)

    def call_targs(self, c):
        return A.Call(c[0], c[2], c[1], c[0].pos)

    def args(self, c):
        return tuple(x for x in c if x is not None)

    def expr_list(self, c):
        return tuple(c)

    def binop(self, c):
        left, op, right = c
        return A.Binary(str(op), left, right, left.pos)

    def gt(self, c):
        return A.Binary(">", c[0], c[1], c[0].pos)

    def lt(self, c):
        return A.Binary("<", c[0], c[1], c[0].pos)

    def shr(self, c):
        left, first, right = c[0], c[1], c[-1]
        return A.Binary(">>", left, right, left.pos)

    def unop(self, c):
        return A.Unary(str(c[0]), c[1], self._p(c[0]))

    def cast(self, c):
        return A.Cast(c[0], c[1], c[1].pos)

    def ternary(self, c):
        return A.Ternary(c[0], c[1], c[2], c[0].pos)

    def int_lit(self, c):
        value, width, signed, base = int_literal(c[0])
        return A.Const(value, width, signed, base, self._p(c[0]), str(c[0]))

    def true_lit(self, c):
        return A.BoolLit(True)

    def false_lit(self, c):
        return A.BoolLit(False)

    def string_lit(self, c):
        return A.StringLit(str(c[0])[1:-1], self._p(c[0]))

    def type_member(self, c):
        return A.Member(A.TypeName(str(c[0]), self._p(c[0])), str(c[1]), self._p(c[0]))

    def error_member(self, c):
        return A.Member(A.TypeName("error"), str(c[0]), self._p(c[0]))

    def ctor_call(self, c):
        return A.Call(A.TypeName(str(c[0]), self._p(c[0])), c[1], (), self._p(c[0]))

    def list_expr(self, c):
        return A.ListExpr(tuple(x for x in c if x is not None))
