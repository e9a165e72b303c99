"""Where the P4 parser's tables are cached: a directory only this user can write.

Building the LALR tables of the P4 grammar takes 150-350 ms; lark can pickle them
to a file and load them at the next start (about 45 ms). Loading a pickle runs
code, so the file must come from a place no other user can write. lark's own
``cache=True`` uses a predictable name in the shared temporary directory (a file
planted there by another user would run as the sfclab user); this module gives
lark a file in the user's cache directory instead, and only when that directory
is a real directory owned by the user with no access for others (it is created
with mode 0700). Anything else means no cache: slower, never unsafe.

>>> path = cache_file("0" * 64)
>>> path is None or path.parent.name == "sfclab"
True
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

__all__ = ["cache_dir", "cache_file"]


def _base() -> Path | None:
    """The user's cache directory (XDG on Unix, LOCALAPPDATA on Windows)."""
    if sys.platform == "win32":
        root = os.environ.get("LOCALAPPDATA")
        return Path(root) if root else None
    root = os.environ.get("XDG_CACHE_HOME")
    if root and os.path.isabs(root):
        return Path(root)
    home = os.path.expanduser("~")
    return Path(home) / ".cache" if os.path.isabs(home) else None


def _private(st: os.stat_result, *, kind: int) -> bool:
    """True if *st* is of *kind* and owned by this user; a directory must also be closed to
    group and others (then nobody else can put or swap a file in it)."""
    if stat.S_IFMT(st.st_mode) != kind:
        return False
    if not hasattr(os, "getuid"):          # Windows: the profile directory is private already
        return True
    closed = kind != stat.S_IFDIR or not st.st_mode & 0o077
    return st.st_uid == os.getuid() and closed


def cache_dir() -> Path | None:
    """``<user cache dir>/sfclab``, created 0700 if missing; None unless it is private."""
    base = _base()
    if base is None:
        return None
    path = base / "sfclab"
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)                 # lstat: a symlink is not the directory itself
    except OSError:
        return None
    return path if _private(st, kind=stat.S_IFDIR) else None


def cache_file(key: str) -> Path | None:
    """The cache file for *key* in :func:`cache_dir`, or None when there is no private place.

    An existing file that is not a regular file of this user (a symlink, another
    owner) is removed rather than loaded."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"p4-parser-{key}.lark"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError:
        return None
    if _private(st, kind=stat.S_IFREG):
        return path
    try:
        path.unlink()
    except OSError:
        return None
    return path
