"""Working directories sfclab made for a switch it started: removed when Python exits.

A BMv2 switch sfclab starts gets a directory of its own under the system's temporary
directory (``sfclab-bmv2-…``: its sockets, its output, the programs p4c built for it).
While Python runs, a stopped switch's directory stays, so that its log can still be read;
when Python exits, the directories of the switches sfclab stopped itself are removed.  A
directory the user named is never removed, nor one whose switch died on its own (its log
is the post-mortem).  Without this a notebook session left one directory a switch behind,
for good.

>>> import tempfile
>>> from pathlib import Path
>>> d = Path(tempfile.mkdtemp(prefix="sfclab-doctest-"))
>>> remove_at_exit(d); d.exists()
True
>>> remove_spent(); d.exists()
False
"""

from __future__ import annotations

import atexit
import shutil
from pathlib import Path

__all__ = ["remove_at_exit", "remove_spent"]

_SPENT: set[Path] = set()


def remove_at_exit(path: Path) -> None:
    """Remove the directory *path* (sfclab made it) when Python exits."""
    _SPENT.add(Path(path))


def remove_spent() -> None:
    """Remove the directories :func:`remove_at_exit` was given (what exit does)."""
    while _SPENT:
        shutil.rmtree(_SPENT.pop(), ignore_errors=True)


atexit.register(remove_spent)
