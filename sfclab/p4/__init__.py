"""sfclab's P4 front end: a P4_16-subset grammar, its AST, a printer and the NF catalogue.

The subset is what NFs and the composed program need: ``header``, ``struct``,
``typedef``, ``const``, ``enum``/``error``/``match_kind``, extern declarations,
parsers with ``extract`` and ``select`` (masks, ranges, default), controls with
local variables, actions, tables (exact/lpm/ternary/range/optional keys,
``default_action``, ``size``, ``entries``, other properties), ``apply`` blocks
with ``if``/``else``, ``switch (t.apply().action_run)``, ``.hit``/``.miss``,
assignments, slices, ``++``, casts, the usual operators, header validity
methods and extern method calls; annotations are kept.  Valid P4_16 outside it
(``header_union``, ``varbit``, ``tuple``, functions, ``#define`` …) raises
:class:`~sfclab.errors.UnsupportedP4Error` naming the construct and the line.

>>> prog = parse_p4("header h_t { bit<8> x; }")
>>> print(to_p4(prog))
header h_t {
    bit<8> x;
}
<BLANKLINE>
"""

from __future__ import annotations

from .ast import Program
from .parser import library_dir, parse_p4, parse_p4_file
from .printer import to_p4

__all__ = ["Program", "parse_p4", "parse_p4_file", "to_p4", "library_dir"]
