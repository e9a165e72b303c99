"""sfclab's P4 front end: a P4_16-subset grammar, its AST, a printer and the NF catalogue.

The subset is what NFs and the composed program need: ``header``, ``struct``,
``typedef``, ``const``, ``enum``/``error``/``match_kind``, extern declarations,
parsers with ``extract`` and ``select`` (masks, ranges, default), controls with
local variables, actions, tables (exact/lpm/ternary/range/optional keys,
``default_action``, ``size``, ``entries``, other properties), ``apply`` blocks
with ``if``/``else``, ``switch (t.apply().action_run)``, ``.hit``/``.miss``,
assignments, slices, ``++``, casts, the usual operators, header validity
methods and extern method calls, abstract extern methods and instances that
implement them; annotations are kept; ``#define`` only for the macros an
architecture file reads (``V1MODEL_VERSION``, ``__TARGET_TOFINO__``).  Valid
P4_16 outside it (``header_union``, ``varbit``, ``tuple``, functions, other
macros …) raises :class:`~sfclab.errors.UnsupportedP4Error` naming the construct
and the line.  :func:`check_program` refuses what p4c's front end would refuse
against the architecture files' declarations (:mod:`.arch`).

>>> prog = parse_p4("header h_t { bit<8> x; }")
>>> print(to_p4(prog))
header h_t {
    bit<8> x;
}
<BLANKLINE>
"""

from __future__ import annotations

from .ast import Program
from .check import check_program
from .parser import library_dir, parse_p4, parse_p4_file
from .printer import to_p4

__all__ = ["Program", "parse_p4", "parse_p4_file", "to_p4", "library_dir", "check_program"]
