"""Every error sfclab raises on purpose.

One root, :class:`SfclabError`, and one subclass per stage, so a caller can
catch exactly what it expects.  Each error states the fact and the fix; errors
about a piece of source text (a chain, a P4 file, a JSON intent) also carry the
file, line and column and render the offending line with a caret under it::

    chains.sfc:3:20: unknown NF 'firewal'
        input => firewal => output;
                 ^
    hint: did you mean 'firewall'?

In IPython and Jupyter the message is shown without a Python traceback
(:meth:`SfclabError._render_traceback_`); set ``SFCLAB_TRACEBACK=1`` to get
tracebacks back while debugging.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "SfclabError",
    "SourceError",
    "SourceWarning",
    "ChainError",
    "ChainSyntaxError",
    "ChainValidationError",
    "TopologyError",
    "P4Error",
    "P4SyntaxError",
    "UnsupportedP4Error",
    "CatalogError",
    "CompileError",
    "TargetError",
    "RuntimeWriteError",
    "UpdateFailure",
    "did_you_mean",
    "caret_context",
    "long_number",
    "too_long",
    "MAX_DIGITS",
]


def did_you_mean(name: str, choices: Iterable[str], *, n: int = 3) -> str:
    """Return a ``did you mean …?`` hint for an unknown *name*, or ``""``.

    >>> did_you_mean("firewal", ["firewall", "nat", "lb"])
    "did you mean 'firewall'?"
    >>> did_you_mean("zzz", ["firewall"])
    ''
    """
    pool = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(pool), n=n, cutoff=0.6)
    if not close:
        return ""
    names = " or ".join(repr(pool[c]) for c in close)
    return f"did you mean {names}?"


def caret_context(text: str, line: int, column: int, width: int = 1) -> str:
    """The *line* (1-based) of *text* with a caret under *column* (1-based).

    >>> print(caret_context("a => b\\nb => c;", 2, 6))
        b => c;
             ^
    """
    lines = text.splitlines() or [""]
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].expandtabs(4)
    col = max(1, min(column, len(src) + 1))
    return f"    {src}\n    {' ' * (col - 1)}{'^' * max(1, width)}"


#: The most decimal digits a number in any input may have: Python converts no longer
#: decimal string to an int (``sys.get_int_max_str_digits()``, 4,300 by default).
MAX_DIGITS = 4300
_RUN = re.compile(r"[0-9][0-9_]{%d,}" % MAX_DIGITS)


def long_number(text: str) -> tuple[int, int, int] | None:
    """``(line, column, digits)`` of the first number in *text* with more than
    :data:`MAX_DIGITS` decimal digits (``_`` separators not counted), else None.

    >>> long_number("a\\nweight " + "9" * 5000)
    (2, 8, 5000)
    >>> long_number("ports 64") is None
    True
    """
    for m in _RUN.finditer(text):
        digits = len(m.group()) - m.group().count("_")
        if digits > MAX_DIGITS:
            i = m.start()
            return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1, digits
    return None


def too_long(text: str, error: type[SourceError], *, source: str) -> None:
    """Raise *error* at the first number of *text* longer than :data:`MAX_DIGITS` digits."""
    found = long_number(text)
    if found is not None:
        line, column, digits = found
        raise error(f"a number of {digits:,} digits is longer than sfclab reads "
                    f"(at most {MAX_DIGITS:,})", line=line, column=column, source=source,
                    text=text, width=min(digits, 20),
                    hint="no count, port, width or value needs that many digits")


class SfclabError(Exception):
    """Root of every error sfclab raises on purpose.

    ``message`` states what is wrong, ``hint`` what to do about it.
    """

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")

    # IPython calls this instead of printing a traceback.
    def _render_traceback_(self) -> list[str]:
        if os.environ.get("SFCLAB_TRACEBACK"):
            import traceback

            return traceback.format_exception(type(self), self, self.__traceback__)
        return [f"{type(self).__name__}: {self}"]


class SourceError(SfclabError):
    """An error about a place in source text: file, line, column and the line itself."""

    def __init__(
        self,
        message: str,
        *,
        line: int = 0,
        column: int = 0,
        source: str = "",
        text: str = "",
        hint: str = "",
        width: int = 1,
    ) -> None:
        super().__init__(message, hint=hint)
        self.line = line
        self.column = column
        self.source = source
        self.text = text
        self.width = width

    @property
    def context(self) -> str:
        """The offending line with a caret under the column (empty if unknown)."""
        if not (self.text and self.line):
            return ""
        return caret_context(self.text, self.line, self.column, self.width)

    @property
    def location(self) -> str:
        where = self.source or "<input>"
        if self.line:
            where += f":{self.line}:{self.column}"
        return where

    def __str__(self) -> str:
        return self._render("")

    def _render(self, kind: str) -> str:
        parts = [f"{self.location}: {kind}{self.message}"]
        if self.context:
            parts.append(self.context)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class SourceWarning(UserWarning):
    """Something in source text that runs but is probably not what was meant (a chain
    no packet can reach).  Rendered like :class:`SourceError`, with ``warning:``
    before the message; collected and shown, never raised by sfclab::

        chains.sfc:3:7: warning: chain 'mgmt' gets no packets: …
            chain mgmt match vlan.vid == 4000: l2fwd
                  ^^^^
    """

    def __init__(self, message: str, *, line: int = 0, column: int = 0, source: str = "",
                 text: str = "", hint: str = "", width: int = 1) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint
        self.line, self.column, self.source, self.text, self.width = (
            line, column, source, text, width)

    context = SourceError.context
    location = SourceError.location
    _render = SourceError._render

    def with_text(self, text: str) -> SourceWarning:
        """The same warning, with the source *text* its caret is drawn in."""
        return SourceWarning(self.message, line=self.line, column=self.column,
                             source=self.source, text=text, hint=self.hint, width=self.width)

    def __str__(self) -> str:
        return self._render("warning: ")

    def __repr__(self) -> str:
        return f"SourceWarning({self.location}: {self.message!r})"


class ChainError(SourceError):
    """A chain description (text, drawing or JSON intent) is wrong."""


class ChainSyntaxError(ChainError):
    """The chain text does not follow the chain language's grammar."""


class ChainValidationError(ChainError):
    """The chain text is well-formed but means something sfclab cannot run."""


class TopologyError(SourceError):
    """A topology (``%%topology`` text, a ``.topo`` file, a generator's arguments or a
    networkx graph) is wrong: unknown node, a port used twice, no route …"""


class P4Error(SourceError):
    """A P4 source (an NF or the composed program) is wrong."""


class P4SyntaxError(P4Error):
    """P4 text that does not parse."""


class UnsupportedP4Error(P4Error):
    """Valid P4_16 that is outside the subset sfclab understands."""


class CatalogError(SourceError):
    """The NF catalogue cannot load or find an NF (bad manifest, unknown name)."""


class CompileError(SfclabError):
    """A compiler pass or code generator cannot handle the chains it was given."""


class TargetError(SfclabError):
    """A switch target is missing, unreachable or refused a request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateFailure:
    """One failed update of a P4Runtime write batch."""

    index: int
    code: str
    message: str
    entity: str = ""

    def __str__(self) -> str:
        what = f" {self.entity}" if self.entity else ""
        return f"* At index {self.index}: {self.code}, {self.message!r}{what}"


class RuntimeWriteError(TargetError):
    """A write to a switch failed; nothing of the batch is left installed.

    ``failures`` lists each failed update in the P4Runtime batch.
    """

    def __init__(
        self, message: str, failures: Sequence[UpdateFailure] = (), *, hint: str = ""
    ) -> None:
        super().__init__(message, hint=hint)
        self.failures: tuple[UpdateFailure, ...] = tuple(failures)

    def __str__(self) -> str:
        lines = [super().__str__()]
        lines += [str(f) for f in self.failures]
        return "\n".join(lines)

