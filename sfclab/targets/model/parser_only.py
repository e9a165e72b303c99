"""What P4 allows only in a parser, refused elsewhere as p4c refuses it.

A header stack's cursor (``hdr.st.next``, ``hdr.st.last``, ``hdr.st.lastIndex``) follows
the elements a parser extracted; p4c 1.2.5.16 refuses it anywhere outside a parser (a
control, an action, a function, even one a parser calls): "'last', and 'next' for stacks
can only be used in a parser", "'lastIndex' for stacks can only be used in a parser".  The
model refuses it when it loads the program, at the expression, with the index to write
instead.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4("header h_t { bit<8> f; }\\nstruct s_t { h_t[2] st; }\\n"
...                 "control C(inout s_t hdr) { apply { hdr.st.last.f = 1; } }")
>>> len(cursors_outside_parsers(prog))
1
"""

from __future__ import annotations


from ...p4 import ast as A
from ...p4.printer import expr_p4
from .errors import ModelCompileError
from .refusal import source_line

__all__ = ["STACK_CURSORS", "cursors_outside_parsers", "cursor_outside_parser"]

#: A header stack's members that only a parser may use.
STACK_CURSORS = frozenset({"next", "last", "lastIndex"})


def _cursors(decls) -> set[int]:
    return {id(n) for d in decls for n in A.walk(d)
            if isinstance(n, A.Member) and n.name in STACK_CURSORS}


def cursors_outside_parsers(prog: A.Program) -> frozenset[int]:
    """The ids of the ``X.next``, ``X.last`` and ``X.lastIndex`` members written outside
    any parser of *prog* (whether ``X`` is a header stack is the compiler's to say)."""
    parsers = [d for d in prog.decls if isinstance(d, A.ParserDecl)]
    others = [d for d in prog.decls if not isinstance(d, A.ParserDecl)]
    return frozenset(_cursors(others) - _cursors(parsers))


def cursor_outside_parser(e: A.Member) -> ModelCompileError:
    """The error for *e* (``hdr.st.last``, a header stack's cursor) outside a parser: where
    it is, the line with a caret under it (from the text it was parsed from), and what to
    write instead."""
    stack, what = expr_p4(e.expr), expr_p4(e)
    pos = e.pos
    where = f"{pos}: " if pos else ""
    caret = source_line(pos, len(what)) if pos else ""
    kind = "'lastIndex'" if e.name == "lastIndex" else "'last' and 'next'"
    return ModelCompileError(
        f"{where}{what}: a header stack's {kind} can be used only in a parser (p4c refuses "
        f"it in a control, an action or a function)" + (f"\n{caret}" if caret else ""),
        hint=f"index the stack with a constant or a value: {stack}[0] … "
             f"{stack}[{stack}.size - 1]; to know which element the parser extracted last, "
             f"copy {stack}.lastIndex into a metadata field in the parser")
