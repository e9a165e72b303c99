"""A compiled chain set on a switch: push it, then change it by table entries only.

:class:`Session` pushes a :class:`~sfclab.codegen.Generated` program and all
its entries as one transaction (on a failed update, what was written is taken
back and :class:`~sfclab.errors.RuntimeWriteError` lists each failure), and
then applies a new chain set as FlexMesh / P4NFV's *pipeline manipulation*
when the program is the same (only entries change), or says a *program reload*
is needed when the NF slots changed.

Updates are consistent: every packet runs the old or the new configuration of
its chain, never a mix.  A chain whose entries change gets fresh data-plane path
ids (its new branch and rewinder entries are unreachable until installed);
then the initializer is flipped to them; only then are the old entries
removed.  Unchanged chains keep their ids and entries.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ..codegen import Generated
from ..codegen.entries import Exact, TableEntry
from ..errors import RuntimeWriteError, TargetError, UpdateFailure
from .client import Client
from .encode import P4InfoIndex

__all__ = ["Session", "UpdatePlan", "StagedUpdate", "Occupancy", "MAX_PATH_ID"]

#: The SFC header's path id is 16 bits.
MAX_PATH_ID = (1 << 16) - 1
_BATCH = 512


@dataclass(frozen=True, slots=True)
class Occupancy:
    """One table: entries installed, capacity, and hits (when the target counts them)."""

    table: str
    entries: int
    size: int
    hits: int | None = None

    @property
    def share(self) -> float:
        return self.entries / self.size if self.size else 0.0


@dataclass
class UpdatePlan:
    """What applying a new chain set does: ``kind`` is ``"entries"`` (pipeline
    manipulation), ``"reload"`` (program reload) or ``"none"``."""

    kind: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    writes: int = 0
    reason: str = ""

    def __str__(self) -> str:
        if self.kind == "reload":
            return f"program reload needed: {self.reason}"
        if self.kind == "none":
            return "nothing to change"
        parts = [f"{w}: {', '.join(v)}" for w, v in (("added", self.added),
                 ("changed", self.changed), ("removed", self.removed)) if v]
        return f"entries only ({self.writes} writes): " + "; ".join(parts)


@dataclass
class StagedUpdate:
    """An entries-only update split into its consistent steps: ``first`` the new
    entries no packet can reach yet, ``flip`` the initializer changes that send
    packets to them, ``last`` what only old packets could reach."""

    plan: UpdatePlan
    gen: Generated
    target: dict
    first: list = field(default_factory=list)
    flip: list = field(default_factory=list)
    last: list = field(default_factory=list)
    saved: tuple = ()


def _path_ids(entry: TableEntry) -> list[int]:
    ids = [m.value for k, m in entry.match if k == "hdr.sfc.path_id"]
    ids += [v for k, v in entry.params if k == "path_id"]
    return ids


def _remap(entry: TableEntry, ids: dict[int, int]) -> TableEntry:
    match = tuple((k, Exact(ids[m.value]) if k == "hdr.sfc.path_id" else m)
                  for k, m in entry.match)
    params = tuple((k, ids[v] if k == "path_id" else v) for k, v in entry.params)
    return replace(entry, match=match, params=params)


def _key(e: TableEntry) -> tuple:
    return (e.table, e.match, e.priority)


class Session:
    """One switch running sfclab's program, driven over P4Runtime."""

    def __init__(self, client: Client, device_config: Callable[[Generated], object], *,
                 grace: float = 0.0) -> None:
        """*device_config(gen)* gives the target's ``p4_device_config`` bytes, or a pair
        (bytes, P4Info) when a compiler wrote the P4Info to push (p4c's ids win)."""
        self.client = client
        self.device_config = device_config
        self.grace = grace                # wait before removing old entries (packets in flight)
        self.generated: Generated | None = None
        self.index: P4InfoIndex | None = None
        self.installed: dict[tuple, TableEntry] = {}
        self._chain_sig: dict[str, tuple] = {}
        self._chain_ids: dict[str, dict[str, int]] = {}     # chain -> path id string -> dp id
        self._next_id = 1

    # -- push ----------------------------------------------------------------------------------
    def push(self, gen: Generated) -> int:
        """Push the program and install every entry; returns the number of entries."""
        from ..codegen.p4info import build_p4info

        config = self.device_config(gen)
        info = None
        if isinstance(config, tuple):        # (device config, the compiler's P4Info or None)
            config, info = config
        if info is None:
            info = build_p4info(gen.program.program, arch=gen.arch)
        self.client.set_pipeline(info, config)
        self.generated, self.index = gen, P4InfoIndex(info)
        self.installed, self._chain_sig, self._chain_ids, self._next_id = {}, {}, {}, 1
        target = self._target(gen)
        self._apply([("INSERT", e) for e in target.values()])
        self.installed = dict(target)
        return len(target)

    # -- ids and the target entry set ----------------------------------------------------------
    def _path_names(self, gen: Generated) -> dict[int, str]:
        return {f.num: f.path.id for f in gen.composition.compiled.fsm.paths}

    def _signature(self, gen: Generated, entries: list[TableEntry]) -> tuple:
        """A chain's entries with data-plane path ids replaced by the paths' own names
        (``web/0``) and initializer priorities left out: equal when the chain is."""
        names = self._path_names(gen)
        sig = []
        for e in entries:
            match = tuple((k, names[m.value] if k == "hdr.sfc.path_id" else m)
                          for k, m in e.match)
            params = tuple((k, names[v] if k == "path_id" else v) for k, v in e.params)
            prio = None if e.table.endswith("initializer") else e.priority
            sig.append((e.table, match, e.action, params, prio))
        return tuple(sorted(sig, key=repr))

    def _target(self, gen: Generated, plan: UpdatePlan | None = None) -> dict[tuple, TableEntry]:
        names = self._path_names(gen)
        out: dict[tuple, TableEntry] = {}
        for group, entries in gen.groups().items():
            if not group.startswith("chain:"):
                for e in entries:
                    out[_key(e)] = e
                continue
            chain = group[len("chain:"):]
            sig = self._signature(gen, entries)
            known = self._chain_sig.get(chain)
            if known != sig:
                if plan is not None:
                    (plan.changed if known is not None else plan.added).append(chain)
                paths = sorted({names[n] for e in entries for n in _path_ids(e)})
                self._chain_ids[chain] = {p: self._alloc() for p in paths}
                self._chain_sig[chain] = sig
            ids = {num: self._chain_ids[chain][names[num]] for e in entries
                   for num in _path_ids(e)}
            for e in entries:
                e2 = _remap(e, ids)
                out[_key(e2)] = e2
        return out

    def _alloc(self) -> int:
        used = {i for ids in self._chain_ids.values() for i in ids.values()}
        for _ in range(MAX_PATH_ID):
            i, self._next_id = self._next_id, self._next_id % MAX_PATH_ID + 1
            if i not in used:
                return i
        raise TargetError("no free service path id is left (65,535 in use)",
                          hint="remove chains, or push the program again")

    # -- updates -------------------------------------------------------------------------------
    def plan(self, gen: Generated) -> UpdatePlan:
        """What :meth:`update` would do (nothing is written)."""
        if self.generated is None:
            return UpdatePlan("reload", reason="nothing is pushed yet")
        if gen.program.program != self.generated.program.program:     # ASTs: comments aside
            old = [s.instance for s in self.generated.composition.slots]
            new = [s.instance for s in gen.composition.slots]
            why = (f"the NF slots change ({' | '.join(old)} -> {' | '.join(new)})" if old != new
                   else "the program changes (NF code, classifier keys or table sizes)")
            return UpdatePlan("reload", reason=why)
        saved = (dict(self._chain_sig), {k: dict(v) for k, v in self._chain_ids.items()},
                 self._next_id)
        plan = UpdatePlan("entries")
        try:
            target = self._target(gen, plan)
        finally:
            self._chain_sig, self._chain_ids, self._next_id = saved
        chains = {g[len("chain:"):] for g in gen.groups() if g.startswith("chain:")}
        plan.removed = sorted(set(self._chain_sig) - chains)
        plan.writes = len(self._diff(target))
        if not plan.writes:
            plan.kind = "none"
        return plan

    def options_for_update(self):
        """Codegen options and the pipeline that make a changed chain set compile to the
        installed program when it can (``sfclab.compile(…, pipeline=slots)``)."""
        from ..codegen import CodegenOptions

        if self.generated is None:
            return CodegenOptions(), "auto"
        comp = self.generated.composition
        return CodegenOptions.keeping(comp), comp.compiled.pipeline.chosen.slots

    def update(self, gen: Generated, *, allow_reload: bool = False) -> UpdatePlan:
        """Move the switch to *gen*'s chain set; by entries only when the program is
        the same, by a reload when *allow_reload* (else :class:`TargetError` says why)."""
        plan = self.plan(gen)
        if plan.kind == "reload":
            if not allow_reload:
                raise TargetError(f"this change needs a program reload: {plan.reason}",
                                  hint="push again (lab.push() / %sfc push), or "
                                       "update(allow_reload=True)")
            self.push(gen)
            return plan
        staged = self.stage(gen, plan)
        self.write(staged.first)
        self.write(staged.flip)
        if staged.last and self.grace:
            time.sleep(self.grace)
        self.write(staged.last)
        self.settle(staged)
        return plan

    def stage(self, gen: Generated, plan: UpdatePlan | None = None) -> StagedUpdate:
        """The writes of an entries-only update, in the three steps that keep it
        consistent (:class:`StagedUpdate`); nothing is written.  A network applies
        each step on every switch before the next (:mod:`sfclab.targets.network`)."""
        plan = plan or self.plan(gen)
        saved = (dict(self._chain_sig), {k: dict(v) for k, v in self._chain_ids.items()},
                 self._next_id)
        target = self._target(gen) if plan.kind != "none" else dict(self.installed)
        for chain in plan.removed:
            self._chain_sig.pop(chain, None)
            self._chain_ids.pop(chain, None)
        steps = self._diff(target)
        init = [s for s in steps if s[1].table.endswith(".initializer")]
        rest = [s for s in steps if not s[1].table.endswith(".initializer")]
        return StagedUpdate(
            plan, gen, target,
            first=[s for s in rest if s[0] == "INSERT"],                 # unreachable yet
            flip=[s for s in init if s[0] != "DELETE"] + [s for s in init if s[0] == "DELETE"],
            last=[s for s in rest if s[0] != "INSERT"],                  # unreachable now
            saved=saved)

    def write(self, steps: list[tuple[str, TableEntry]]) -> None:
        """Write *steps* (``(INSERT|MODIFY|DELETE, entry)``) as one transaction."""
        self._apply(steps)

    def undo(self, steps: list[tuple[str, TableEntry]]) -> None:
        """Take back *steps* that were written (a network's rollback)."""
        self._undo(steps)

    def settle(self, staged: StagedUpdate) -> None:
        """Record that every step of *staged* is written."""
        self.installed, self.generated = dict(staged.target), staged.gen

    def unstage(self, staged: StagedUpdate) -> None:
        """Forget *staged* (its steps were not written, or were undone)."""
        self._chain_sig, self._chain_ids, self._next_id = staged.saved

    def _diff(self, target: dict[tuple, TableEntry]) -> list[tuple[str, TableEntry]]:
        out: list[tuple[str, TableEntry]] = []
        for k, e in target.items():
            old = self.installed.get(k)
            if old is None:
                out.append(("INSERT", e))
            elif (old.action, old.params) != (e.action, e.params):
                out.append(("MODIFY", e))
        out += [("DELETE", e) for k, e in self.installed.items() if k not in target]
        return out

    # -- transactions --------------------------------------------------------------------------
    def _apply(self, steps: list[tuple[str, TableEntry]]) -> None:
        """Write *steps* in batches; if any update fails, undo the ones that worked."""
        done: list[tuple[str, TableEntry]] = []
        for i in range(0, len(steps), _BATCH):
            batch = steps[i:i + _BATCH]
            updates = [self.index.update(kind, e) for kind, e in batch]
            try:
                self.client.write(updates, describe=lambda k, b=batch: f"{b[k][0]} {b[k][1]}")
            except RuntimeWriteError as err:
                bad = {f.index for f in err.failures}
                done += [s for k, s in enumerate(batch) if k not in bad]
                self._undo(done)
                failures = [UpdateFailure(index=i + f.index, code=f.code, message=f.message,
                                          entity=f.entity) for f in err.failures]
                raise RuntimeWriteError(f"{len(failures)} of {len(steps)} updates failed; the "
                                        f"{len(done)} that succeeded were taken back", failures,
                                        hint="see each failed update below") from None
            done += batch

    def _undo(self, done: list[tuple[str, TableEntry]]) -> None:
        inverse = {"INSERT": "DELETE", "DELETE": "INSERT"}
        undo = []
        for kind, e in reversed(done):
            if kind == "MODIFY":
                old = self.installed.get(_key(e))
                if old is not None:
                    undo.append(self.index.update("MODIFY", old))
            else:
                undo.append(self.index.update(inverse[kind], e))
        if undo:
            self.client.write(undo)

    def path_of(self, trace) -> str | None:
        """The service path (``web/0``) a traced packet ended on: the path id of the
        last ``set_token`` / ``take_branch`` action (or ``enter``, on a switch of a
        network) in its trace; for a trace without
        action arguments (a switch's event logger), the one path whose NFs are the NFs
        the trace shows, if only one is."""
        dp = None
        for ev in trace.events:
            if ev.kind == "action" and ev.name.rsplit(".", 1)[-1] in ("set_token", "take_branch",
                                                                      "enter"):
                dp = dict(ev.args).get("path_id", dp)
        if dp is None:
            return self._path_by_nfs(trace)
        for ids in self._chain_ids.values():
            for name, i in ids.items():
                if i == dp:
                    return name
        return None

    def _path_by_nfs(self, trace) -> str | None:
        if self.generated is None:
            return None
        seen = tuple(trace.nfs_seen())
        found = {f"{p.chain}/{p.index}" for p in self.generated.composition.compiled.paths
                 if seen in (tuple(p.nodes), tuple(p.nfs))}
        return found.pop() if len(found) == 1 else None

    # -- reading -------------------------------------------------------------------------------
    def read_entries(self, table: str | None = None) -> list[TableEntry]:
        """Entries as the switch has them (all tables, or one)."""
        from finsy.proto import p4r

        ent = p4r.Entity()
        ent.table_entry.table_id = self.index.table(table).preamble.id if table else 0
        return [self.index.decode(e.table_entry) for e in self.client.read([ent])]

    def occupancy(self) -> list[Occupancy]:
        """Entries per table against its size, read from the switch."""
        counts: dict[str, int] = {}
        for e in self.read_entries():
            counts[e.table] = counts.get(e.table, 0) + 1
        return [Occupancy(t.preamble.name, counts.get(t.preamble.name, 0), t.size)
                for t in self.index.info.tables]


def chain_entries(entries: Iterable[TableEntry], chain: str) -> list[TableEntry]:
    return [e for e in entries if e.group == f"chain:{chain}"]
