"""Pushes and updates as transactions: one that fails leaves each switch running what it
ran before, and its :class:`~.session.Session` saying so.

**Updates** of one switch or of a network go through :func:`apply_staged`: the
steps of each switch's :class:`~.session.StagedUpdate` (``first``, ``flip``,
*drain*, ``last``), each step on every switch before the next.  When anything
fails — the switch refuses an update, the connection drops (``UNAVAILABLE``),
an answer comes too late (``DEADLINE_EXCEEDED``: the write may have been done
all the same), an interrupt — every switch the update wrote to is brought back
to what its session records (:attr:`~.session.Session.installed`,
:attr:`~.session.Session.groups`): the switch is read, and each entry or group
the update touched that differs is written back, the last step's first, so that
packets see the old configuration or the new one, never a mix.  The sessions'
path-id bookkeeping is restored (:meth:`~.session.Session.unstage`).  A switch
that cannot be read or written meanwhile is remembered as out of step
(:attr:`~.session.Session.out_of_step`) and brought back first by its next update.

**Pushes** (:meth:`~.session.Session.push`) check what can be checked before the
program is swapped (:func:`check_capacity`, the target's ``VERIFY``:
:func:`verify`); when the writes after the swap fail, :func:`restore` puts the
old program back with its entries, multicast groups and register cells
(:func:`snapshot` read them before the swap).  Counters and meters start again
from zero.  A failed *first* push has no old program to put back, and P4Runtime
cannot remove a pipeline: the entries written are deleted and the switch keeps
the new program with none, which the session records as :class:`Stranded`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import RuntimeWriteError, SfclabError, TargetError, UpdateFailure
from .carry import unsupported, unsupported_why
from .keep import learned_entries
from .replication import MulticastGroup

__all__ = ["apply_staged", "resync", "check_capacity", "verify", "Snapshot", "snapshot",
           "restore", "undo_push", "taken_back", "reworded", "Stranded"]


def _key(e) -> tuple:
    return (e.table, e.match, e.priority)


# -- updates -----------------------------------------------------------------------------------
def apply_staged(sessions: Mapping[str, Any], staged: Mapping[str, Any], *,
                 drain: Callable[[], None] = lambda: None,
                 before_flip: Callable[[], None] = lambda: None) -> None:
    """Write each switch's staged update (*staged*: switch -> StagedUpdate of
    ``sessions[switch]``), step by step over every switch (*before_flip* runs between
    the first step and the flip: a network update carries moved NFs' state there); on
    any failure, take back what was written everywhere and re-raise (module docstring)."""
    for s in staged:
        resync(sessions[s])
    begun: list[str] = []
    try:
        for step in ("first", "flip", None, "last"):
            if step is None:
                drain()
                continue
            if step == "flip":
                before_flip()
            for s, st in staged.items():
                steps = getattr(st, step)
                if steps:
                    if s not in begun:
                        begun.append(s)
                    sessions[s].write(steps)
    except BaseException as err:
        left = {}
        for s in reversed(begun):
            why = _take_back(sessions[s], staged[s])
            if why:
                left[s] = why
        for s, st in staged.items():
            sessions[s].unstage(st)
        if isinstance(err, SfclabError):
            raise taken_back(err, begun, left, many=len(sessions) > 1) from None
        raise
    for s, st in staged.items():
        sessions[s].settle(st)


def resync(session) -> None:
    """Bring back what an earlier failed update left out of step on *session*'s switch
    (TargetError when the switch still cannot be reached)."""
    while session.out_of_step:
        why = _take_back(session, session.out_of_step[0], remember=False)
        if why:
            raise TargetError(f"the switch is out of step since a failed update and cannot "
                              f"be brought back: {why}",
                              hint="is the switch running? Try again, or push again "
                                   "(lab.push() / %sfc push)")
        session.out_of_step.pop(0)


def _take_back(session, staged, *, remember: bool = True) -> str:
    """Write back, on *session*'s switch, every entry and group *staged* touches that
    differs from the session's records; '' when done, else why it could not be."""
    try:
        have = {_key(e): e for e in session.read_entries()}
        groups = ({g.id: g for g in session.read_groups()}
                  if any(isinstance(o, MulticastGroup)
                         for step in (staged.first, staged.flip, staged.last)
                         for _, o in step) else {})
        for step in (staged.last, staged.flip, staged.first):
            fixes = []
            for _, obj in reversed(step):
                if isinstance(obj, MulticastGroup):
                    want, got = session.groups.get(obj.id), groups.get(obj.id)
                    same = want is not None and got is not None and want.ports == got.ports
                else:
                    want, got = session.installed.get(_key(obj)), have.get(_key(obj))
                    same = (want is not None and got is not None
                            and (want.action, want.params) == (got.action, got.params))
                if want is None and got is not None:
                    fixes.append(("DELETE", got))
                elif want is not None and got is None:
                    fixes.append(("INSERT", want))
                elif want is not None and not same:
                    fixes.append(("MODIFY", want))
            if fixes:
                session.write(fixes)
    except SfclabError as e:
        if remember and staged not in session.out_of_step:
            session.out_of_step.append(staged)
        return e.message
    return ""


def taken_back(err: SfclabError, switches: list[str], left: Mapping[str, str], *,
               many: bool = False) -> SfclabError:
    """*err* with what its rollback did said after it (same class, failures, status)."""
    if not switches:
        what = "nothing was written"
    elif not left:
        where = f" on {', '.join(switches)}" if many else ""
        what = (f"what was written was taken back{where}: the switch"
                f"{'es run' if many else ' runs'} what {'they' if many else 'it'} ran before")
    else:
        bad = "; ".join(f"{s + ': ' if many else ''}{why}" for s, why in left.items())
        what = (f"taking it back failed ({bad}): the next update brings "
                f"{', '.join(left) if many else 'the switch'} back first")
    return reworded(err, f"{err.message}; {what}")


def reworded(err: SfclabError, message: str, *, hint: str | None = None) -> SfclabError:
    """*err* with *message* (and *hint*, default its own): the same class (a
    RuntimeWriteError keeps its failures; anything else becomes a TargetError) and
    gRPC status."""
    hint = hint if hint is not None else err.hint
    out = (RuntimeWriteError(message, err.failures, hint=hint)
           if isinstance(err, RuntimeWriteError) else TargetError(message, hint=hint))
    if hasattr(err, "status"):
        out.status = err.status
    return out


# -- pushes ------------------------------------------------------------------------------------
def check_capacity(index, entries: Mapping[tuple, Any]) -> None:
    """Refuse, before anything is written, entries that do not fit their tables'
    sizes (the P4Info's): a RuntimeWriteError naming each table and the first
    entry past its size."""
    count: dict[str, int] = {}
    first: dict[str, tuple[int, Any]] = {}
    for i, e in enumerate(entries.values()):
        n = count[e.table] = count.get(e.table, 0) + 1
        size = index.table(e.table).size
        if size and n == size + 1:
            first[e.table] = (i, e)
    if not first:
        return
    failures = [UpdateFailure(index=i, code="RESOURCE_EXHAUSTED", entity=f"INSERT {e}",
                              message=f"{t} is full ({index.table(t).size} entries)")
                for t, (i, e) in first.items()]
    over = ", ".join(f"{t} holds {index.table(t).size}, the program has {count[t]}"
                     for t in first)
    raise RuntimeWriteError(
        f"the program's entries do not fit its tables ({over}); nothing was written: the "
        f"switch runs what it ran before", failures,
        hint="give the table a larger size (size = … in the NF's P4), or fewer entries")


def verify(client, info, config) -> bool:
    """Ask the target to check the program (P4Runtime's VERIFY) before it is swapped in;
    False when the target does not do VERIFY (UNIMPLEMENTED)."""
    try:
        client.set_pipeline(info, config, action="VERIFY")
    except TargetError as e:
        if getattr(e, "status", None) == "UNIMPLEMENTED":
            return False
        raise
    return True


@dataclass
class Snapshot:
    """What a switch ran before a push: the pipeline, the session's records and the
    register cells (None: the switch would not say)."""

    pipeline: tuple | None
    state: tuple
    own: dict = field(default_factory=dict)
    registers: list | None = None
    #: Why the register cells could not be read ('' when they were, or there are none).
    unread: str = ""
    #: ... because the switch does not read registers at all (:func:`.carry.unsupported`).
    unsupported: bool = False
    #: The entries on the switch that sfclab did not write nor the user through the
    #: session: a controller's (learned); None: they could not be read (*unread_entries*).
    learned: list | None = field(default_factory=list)
    unread_entries: str = ""


def snapshot(session) -> Snapshot:
    """*session*'s switch before a push (reads the register cells when a program runs)."""
    registers, unread, cannot = None, "", False
    if session.pipeline is not None and list(session.index.info.registers):
        try:
            registers = [e for e in session.read_registers()
                         if e.register_entry.data.bitstring.strip(b"\0")]
        except TargetError as e:
            cannot = unsupported(e)
            registers, unread = None, unsupported_why(e) if cannot else e.message
    learned, unread_entries = [], ""
    if session.pipeline is not None:
        try:
            const = {t.preamble.name for t in session.index.info.tables if t.is_const_table} \
                if session.index is not None else set()
            learned = learned_entries(session.read_entries(), session.installed, session.own,
                                      const)
        except TargetError as e:
            learned, unread_entries = None, f"the switch's entries could not be read: {e.message}"
    return Snapshot(session.pipeline, session.state(), dict(session.own), registers, unread,
                    cannot, learned, unread_entries)


@dataclass(frozen=True)
class Stranded:
    """The program a failed first push left on the switch: nothing is pushed, but the
    switch holds (*sure*; else: may hold, the swap's answer was lost) the program of
    *generated* (its P4Info: *index*), with no table entries (*clean*; else some of
    them may be left, deleting them failed)."""

    generated: Any
    index: Any
    sure: bool = True
    clean: bool = True

    def text(self, who: str = "the switch") -> str:
        """What the switch (*who*) holds, in one sentence.

        >>> print(Stranded(None, None).text())
        the switch holds the program of a failed first push, with no table entries (P4Runtime cannot remove a program): no chain runs
        """
        return f"{who} {self.what()}: no chain runs"

    def what(self) -> str:
        """``holds the program of a failed first push, with no table entries (…)``."""
        holds = "holds" if self.sure else "may hold (the swap's answer was lost)"
        entries = ("with no table entries" if self.clean
                   else "with some of its entries (deleting them failed)")
        return (f"{holds} the program of a failed first push, {entries} "
                f"(P4Runtime cannot remove a program)")


def undo_push(session, snap: Snapshot) -> str:
    """Take back a push that succeeded on *session*'s switch because the push it was part
    of failed elsewhere (another switch of a network refused its own): what ran before
    (*snap*, taken before the push) is put back (:func:`restore`); after a first push the
    program stays with no entries, which the session records (:class:`Stranded`).
    Returns what could not be done ('' when all was)."""
    gen, index = session.generated, session.index
    left = restore(session, snap)
    if snap.pipeline is None:
        session.stranded = Stranded(gen, index, sure=True, clean=not left)
    return left


def restore(session, snap: Snapshot, *, swapped: bool = True) -> str:
    """Put *snap* back on *session*'s switch after a failed push; returns what could not
    be restored ('' when all was).  Without an earlier program (the first push), the
    entries written are deleted and the session says nothing is pushed."""
    try:
        if snap.pipeline is None:
            if swapped:
                session.write([("DELETE", e) for e in session.read_entries()]
                              + [("DELETE", g) for g in session.read_groups()])
            session.set_state(snap.state)
            return ""
        session.set_state(snap.state)
        if swapped:
            session.client.set_pipeline(*snap.pipeline)
            steps = ([("INSERT", g) for g in session.groups.values()]
                     + [("INSERT", e) for e in session.installed.values()]
                     + [("INSERT", e) for e in snap.own.values()]
                     + [("INSERT", e) for e in snap.learned or ()])
            session.write(steps)
            if snap.registers:
                from finsy.proto import p4r

                session.write_registers([p4r.Update(type=p4r.Update.MODIFY, entity=e)
                                         for e in snap.registers])
        session.own, session.out_of_step = dict(snap.own), []
        return "" if snap.registers is not None or not swapped or \
            not list(session.index.info.registers) else "its registers start from zero"
    except SfclabError as e:
        session.forget()
        return e.message
