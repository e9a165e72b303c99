"""Keep the entries sfclab did not generate over a program reload: the user's own
(:meth:`~.session.Session.insert`) and what a controller learned (``mac_learning``'s
``known_macs``, written by a controller straight to the switch), or say which are
dropped and why.

A reload swaps the program and with it every table: the new program's start empty,
and sfclab writes its generated entries.  Before the swap the switch's entries are
read; those sfclab did not write (not in :attr:`~.session.Session.installed`) are the
user's (in :attr:`~.session.Session.own`) or *learned*.  Each goes to the new program
(:func:`plan_keep`):

* its table and action under their new names: the slot of an NF may be renumbered by
  the reload (``slot2_mac_learning`` -> ``slot1_mac_learning``), mapped as the
  registers' are (:func:`.carry.slot_instances`);
* when the new program has that table with the same key fields (names, match kinds,
  widths), and that action with the same parameters; and no generated entry of the new
  program has its key.

Otherwise it is dropped, and :class:`Kept` names it and says why ("its table
SfcIngress.slot0_acl.rules is not in the new program: no slot runs acl").  The kept
entries are written after the new program's own (a switch that refuses one drops that
one, and says what it answered); the user's stay the user's (a later update leaves them
alone).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Dropped", "Kept", "learned_entries", "plan_keep", "rename"]

#: Whose entry: the user's own, or learned by a controller.
OWN, LEARNED = "your", "learned"


@dataclass(frozen=True)
class Dropped:
    """An entry a reload did not keep, and why.

    >>> from sfclab.codegen.entries import TableEntry
    >>> print(Dropped(TableEntry("t", (), "a"), "learned", "its table t is not in the new program"))
    learned entry t: * -> a() (its table t is not in the new program)
    """

    entry: Any
    whose: str
    why: str

    def __str__(self) -> str:
        if self.entry is None:                  # the switch's entries could not be read
            return f"{self.whose} entries ({self.why})"
        return f"{self.whose} entry {_short(self.entry)} ({self.why})"


def _short(e: Any) -> str:
    match = " ".join(f"{k}={m}" for k, m in e.match) or "*"
    args = ", ".join(f"{k}={v}" for k, v in e.params)
    return f"{e.table}: {match} -> {e.action.rpartition('.')[2]}({args})"


@dataclass
class Kept:
    """What a reload did with the entries sfclab did not generate: *own* and *learned*
    written to the new program (as written there), *dropped* not.

    >>> print(Kept())
    no entries of your own or learned to keep
    >>> from sfclab.codegen.entries import TableEntry
    >>> print(Kept(own=[TableEntry("t", (), "a")], learned=[TableEntry("u", (), "b")] * 2))
    kept 1 entry of your own and 2 learned entries (t, u)
    """

    own: list = field(default_factory=list)
    learned: list = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.own or self.learned or self.dropped)

    def __str__(self) -> str:
        return self.text()

    def text(self) -> str:
        """``kept 2 entries of your own and 5 learned (tables …); dropped 1: …``."""
        if not self:
            return "no entries of your own or learned to keep"
        parts = []
        if self.own or self.learned:
            counts = [f"{len(self.own)} {_entries(len(self.own))} of your own"] if self.own \
                else []
            if self.learned:
                counts.append(f"{len(self.learned)} learned {_entries(len(self.learned))}")
            tables = ", ".join(dict.fromkeys(e.table for e in [*self.own, *self.learned]))
            parts.append(f"kept {' and '.join(counts)} ({tables})")
        if self.dropped:
            parts.append(f"dropped {len(self.dropped)}: " + "; ".join(map(str, self.dropped)))
        return "; ".join(parts)


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def learned_entries(read: Iterable[Any], installed: Mapping[tuple, Any],
                    own: Mapping[tuple, Any], const_tables: Collection[str] = ()) -> list:
    """The entries of *read* (the switch's) that are neither sfclab's (*installed*) nor
    the user's (*own*), by key, nor the program's own (a table of *const_tables*, whose
    const entries a read returns too): a controller's."""
    return [e for e in read if _key(e) not in installed and _key(e) not in own
            and e.table not in const_tables]


def _key(e: Any) -> tuple:
    return (e.table, e.match, e.priority)


def rename(name: str, instances: Mapping[str, str]) -> str:
    """*name* with its slot instance renamed as *instances* maps it.

    >>> rename("SfcIngress.slot2_mac_learning.known_macs", {"slot2_mac_learning": "slot1_mac_learning"})
    'SfcIngress.slot1_mac_learning.known_macs'
    """
    parts = name.split(".")
    return ".".join(instances.get(p, p) for p in parts)


def _gone(name: str, instances: Mapping[str, str], old_gen: Any) -> str:
    """Why *name*'s slot has no counterpart (the NF is gone, or the chains split
    differently), '' when it is not in a slot."""
    for s in old_gen.composition.slots:
        if s.instance in name.split(".") and s.instance not in instances:
            return f"; no slot of the new program runs {s.nf} as {s.instance} did"
    return ""


def plan_keep(entries: Iterable[tuple[str, Any]], old_gen: Any, old_index: Any,
              new_gen: Any, new_index: Any, target: Mapping[tuple, Any]
              ) -> tuple[list[tuple[str, Any]], list[Dropped]]:
    """``(whose, entry)`` pairs of the running program -> those that go to the new one
    (as written there) and those dropped (module docstring).  *target*: the new
    program's generated entries, by key."""
    from .carry import slot_instances

    instances = slot_instances(old_gen, new_gen)
    keep: list[tuple[str, Any]] = []
    dropped: list[Dropped] = []
    for whose, e in entries:
        why, new = _fit(e, old_index, new_index, instances)
        if not why and _key(new) in target:
            why = "the new program's own entry has its key"
        if why:
            dropped.append(Dropped(e, whose, why + _gone(e.table, instances, old_gen)
                                   if why.startswith("its table") else why))
        else:
            keep.append((whose, new))
    return keep, dropped


def _fit(e: Any, old_index: Any, new_index: Any, instances: Mapping[str, str]
         ) -> tuple[str, Any]:
    """('' and *e* as the new program writes it) or (why it does not fit, None)."""
    from ..errors import SfclabError

    table, action = rename(e.table, instances), rename(e.action, instances)
    if table not in new_index.tables:
        return f"its table {e.table} is not in the new program", None
    if old_index.fields(e.table) != new_index.fields(table):
        return f"the key of {table} changed", None
    t = new_index.table(table)
    act = new_index.actions.get(action)
    if act is None or act.preamble.id not in {r.id for r in t.action_refs}:
        return f"{table} has no action {action.rpartition('.')[2]} in the new program", None
    old_params = {p.name: p.bitwidth for p in old_index.action(e.action).params}
    if old_params != {p.name: p.bitwidth for p in act.params}:
        return f"the parameters of {action.rpartition('.')[2]} changed", None
    try:
        return "", new_index.canonical(replace(e, table=table, action=action))
    except SfclabError as err:
        return err.message, None
