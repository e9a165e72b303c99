"""What a switch session installed beyond the program's generated entries.

A :class:`~.session.Session` writes, with the generated entries, what the switch
needs for its own ports (flood's per-port ``flood_groups`` entries and multicast
groups, :mod:`.replication`), and notes what it could not do ("no port set known:
no flood groups written").  :func:`installed_beyond` tells those apart from the
generated entries, so a view can show both.

>>> installed_beyond(None)
Installed(entries=(), groups=(), notes=())
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["Installed", "installed_beyond"]


@dataclass(frozen=True, slots=True)
class Installed:
    """What a switch session installed beyond the program's generated entries (flood's
    per-port entries, the multicast groups), and its notes on what it could not do."""

    entries: tuple[Any, ...] = ()
    groups: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries or self.groups or self.notes)

    def summary(self) -> str:
        """``8 entries (SfcIngress.slot2_flood.flood_groups), 9 multicast groups``."""
        tables = ", ".join(dict.fromkeys(e.table for e in self.entries))
        parts = [f"{len(self.entries)} entr{'y' if len(self.entries) == 1 else 'ies'} "
                 f"({tables})"] if self.entries else []
        if self.groups:
            parts.append(f"{len(self.groups)} multicast group{'s' * (len(self.groups) != 1)}")
        return ", ".join(parts) or "nothing"

    def text(self) -> str:
        lines = [f"installed beyond the generated entries: {self.summary()}"]
        lines += [f"  {e}" for e in self.entries] + [f"  {g}" for g in self.groups]
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


def _without_path_ids(e: Any) -> tuple:
    """An entry with its data-plane path ids left out: a session renumbers a chain's
    paths on updates, so this is what stays equal to the generated entry."""
    return (e.table, tuple((k, m) for k, m in e.match
                           if k not in ("hdr.sfc.path_id", "meta.sfc.path_id")), e.action,
            tuple((k, v) for k, v in e.params if k != "path_id"), e.priority)


def installed_beyond(session: Any) -> Installed:
    """What *session* (a :class:`sfclab.runtime.session.Session`; None: nothing pushed)
    installed beyond the entries of the program it runs, its multicast groups and notes."""
    if session is None or getattr(session, "generated", None) is None:
        return Installed()
    left = Counter(_without_path_ids(session.index.canonical(e))
                   for e in session.generated.entries)
    extra = []
    for e in session.installed.values():
        key = _without_path_ids(e)
        if left[key]:
            left[key] -= 1
        else:
            extra.append(e)
    return Installed(tuple(extra), tuple(session.groups.values()), tuple(session.notes))
