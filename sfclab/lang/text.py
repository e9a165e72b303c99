"""Source text as both languages take it: ``str`` or UTF-8 ``bytes``, no NUL characters,
no number longer than Python reads (:data:`~sfclab.errors.MAX_DIGITS` digits).

>>> from sfclab.errors import ChainSyntaxError
>>> source_text(b"chain a: nat", source="a.sfc", error=ChainSyntaxError)
'chain a: nat'
"""

from __future__ import annotations

from ..errors import SourceError, too_long

__all__ = ["source_text"]


def source_text(text: str | bytes, *, source: str, error: type[SourceError]) -> str:
    """*text* as a string; *error* (a located error class) if it is not UTF-8, holds a
    NUL (a binary file) or a number of more than 4,300 digits."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"the text is not UTF-8 (byte {e.start})", source=source,
                        hint="save the file as UTF-8") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise error("the text contains a NUL character", line=line, column=1, source=source,
                    hint="is this a binary file?")
    too_long(text, error, source=source)
    return text
