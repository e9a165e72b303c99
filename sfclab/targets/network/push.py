"""A network push as one transaction: every switch gets its program, or none keeps the new one.

Each switch's push is itself a transaction (:meth:`~sfclab.runtime.session.Session.push`:
a switch that refuses its program, or whose writes fail, is left as it was — or,
after a failed *first* push, with the new program and no entries, which P4Runtime
cannot remove).  :func:`push_network` makes the network's push one too: when a
switch's push fails, every switch already pushed by it is taken back
(:func:`~sfclab.runtime.transaction.undo_push`): the program it ran before comes
back with its entries and register cells, or, when it ran none, its entries are
deleted and its session records the program left (:class:`Stranded
<sfclab.runtime.transaction.Stranded>`).  The error then says what each switch
holds (:func:`holding`), so that the Lab and its views can say it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ...errors import SfclabError
from ...runtime.transaction import reworded, snapshot, undo_push

__all__ = ["push_network", "holding"]


def push_network(targets: Mapping[str, Any], gens: Mapping[str, Any], *,
                 parallel: bool = False) -> dict[str, int]:
    """Push ``gens[s]`` to each switch ``targets[s]`` (anything with ``session`` and
    ``push(gen)``), one after the other or all at once (*parallel*); returns the entry
    count per switch.  When any push fails, the others are taken back (module
    docstring) and the first failure is raised, saying what each switch holds."""
    snaps = {s: snapshot(targets[s].session) for s in gens}
    counts: dict[str, int] = {}
    failed: dict[str, BaseException] = {}
    if parallel and len(gens) > 1:
        with ThreadPoolExecutor(len(gens)) as pool:
            futures = {s: pool.submit(targets[s].push, g) for s, g in gens.items()}
        for s, f in futures.items():
            err = f.exception()
            if err is None:
                counts[s] = f.result()
            else:
                failed[s] = err
    else:
        for s, g in gens.items():
            try:
                counts[s] = targets[s].push(g)
            except BaseException as err:     # noqa: BLE001 - taken back, then raised
                failed[s] = err
                break
    if not failed:
        return counts
    left = {s: why for s in reversed(list(counts))
            if (why := undo_push(targets[s].session, snaps[s]))}
    at, err = next(iter(failed.items()))
    if not isinstance(err, SfclabError):
        raise err
    sessions = {s: t.session for s, t in targets.items() if s in gens}
    what = "; ".join(f"{s}: {why}" for s, why in left.items())
    taken = (f"taking it back failed on {what}; " if left else
             f"taken back on {', '.join(counts)}; " if counts else "")
    message = (f"{at}: {err.message}; the network push was {taken or 'stopped there; '}"
               f"{holding(sessions)}")
    out = reworded(err, message, hint=err.hint or "push again (%sfc push, lab.push()) once "
                                                  "the cause is fixed")
    raise out from None


def holding(sessions: Mapping[str, Any]) -> str:
    """What each switch holds, switches alike together: ``leaf1, spine1 hold the program
    of a failed first push, with no table entries (…); leaf2 holds no program``."""
    groups: dict[str, list[str]] = {}
    for s, session in sessions.items():
        stranded = getattr(session, "stranded", None)
        if session.generated is not None:
            what = "runs the program it ran before, with its entries"
        elif stranded is not None:
            what = stranded.what()
        else:
            what = "holds no program"
        groups.setdefault(what, []).append(s)
    return "; ".join(f"{', '.join(names)} {_plural(what) if len(names) > 1 else what}"
                     for what, names in groups.items())


def _plural(what: str) -> str:
    """The phrase for several switches: ``hold``, ``run … they ran``, ``may hold``."""
    verb, _, rest = what.partition(" ")
    if verb == "may":
        return what
    rest = rest.replace("it ran before, with its", "they ran before, with their")
    return {"holds": "hold", "runs": "run"}.get(verb, verb) + " " + rest
