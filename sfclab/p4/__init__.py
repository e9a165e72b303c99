"""sfclab's P4 front end: the C preprocessor, a P4_16 grammar, its AST, a printer and the NF
catalogue.

It reads P4_16 as p4c 1.2.5.16 does: the C preprocessor first (:mod:`.preprocess`,
pure Python: ``#include`` with ``-I``, ``#define`` with and without arguments,
``#if`` …), then every declaration, statement and expression of the language
(``header_union``, ``varbit``, ``tuple``, functions, ``for``, ``switch`` on values,
compound assignments, entry priorities, ``bit<(8 * 8)>`` …); annotations are kept.
The AST keeps where each node was written, in the user's file, and the printer
turns it back into P4.  :func:`check_program` refuses what p4c's front end would
refuse against the architecture files' declarations (:mod:`.arch`).  What is still
out of reach (``list<T>``, ``typeof``) raises :class:`~sfclab.errors.UnsupportedP4Error`
naming the construct and the line.

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
