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

The switch's ports (*ports*: the target's, or given) make ``flood`` work out of
the box: one multicast group per ingress port and the ``flood_groups`` entries
that pick it (:mod:`.replication`) are written with the rest, kept when chains
change and rewritten when the ports do.  Every entry is kept as the switch reads
it back (:meth:`~.encode.P4InfoIndex.canonical`: don't-care fields left out).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import NoReturn

from ..codegen import Generated
from ..codegen.entries import Exact, TableEntry, make_entry
from ..errors import CompileError, RuntimeWriteError, SfclabError, TargetError
from .carry import Carried, carry_updates, plan_carry, unsupported, unsupported_why
from .client import Client, uncertain
from .encode import P4InfoIndex, multicast_update
from .keep import LEARNED, OWN, Dropped, Kept, plan_keep
from .registers import P4RuntimeRegisters, RegisterIO
from .replication import MulticastGroup, flood_config, port_set
from .transaction import Stranded, apply_staged, check_capacity, restore, snapshot, verify

__all__ = ["Session", "UpdatePlan", "StagedUpdate", "Occupancy", "MAX_PATH_ID", "PRE_GROUPS"]

#: The SFC header's path id is 16 bits.
MAX_PATH_ID = (1 << 16) - 1
_BATCH = 512
#: The :class:`Occupancy` row of the packet replication engine's multicast groups.
PRE_GROUPS = "packet replication engine: multicast groups"
#: Multicast group ids BMv2's P4Runtime server takes (1..32767).
_MAX_GROUPS = (1 << 15) - 1


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
    manipulation), ``"reload"`` (program reload) or ``"none"``; ``done`` once an
    update has carried it out.

    >>> print(UpdatePlan("reload", reason="the NF slots change"))
    program reload needed: the NF slots change
    >>> print(UpdatePlan("reload", reason="the NF slots change", done=True))
    reloaded the program: the NF slots change
    """

    kind: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    writes: int = 0
    reason: str = ""
    done: bool = False
    #: A reload done: what it carried of the old program's registers, NF by NF
    #: (:class:`~.carry.Carried`).
    carried: list = field(default_factory=list)
    #: A reload done: the entries of the user's own and learned ones it kept or dropped
    #: (:class:`~.keep.Kept`).
    kept: Kept | None = None

    def __str__(self) -> str:
        if self.kind == "reload":
            if self.done:
                text = (f"reloaded the program: {self.reason}" if self.reason else
                        "reloaded the program")
                return "; ".join([text] + [str(c) for c in self.carried]
                                 + ([str(self.kept)] if self.kept else []))
            return "; ".join([f"program reload needed: {self.reason}"]
                             + [c.text(done=False) for c in self.carried])
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
    groups: dict = field(default_factory=dict)
    first: list = field(default_factory=list)
    flip: list = field(default_factory=list)
    last: list = field(default_factory=list)
    saved: tuple = ()


#: The control tables' path-id keys: the SFC header's (one pipeline), the parser's copy (TNA).
PATH_KEYS = ("hdr.sfc.path_id", "meta.sfc.path_id")


def _path_ids(entry: TableEntry) -> list[int]:
    ids = [m.value for k, m in entry.match if k in PATH_KEYS]
    ids += [v for k, v in entry.params if k == "path_id"]
    return ids


def _remap(entry: TableEntry, ids: dict[int, int]) -> TableEntry:
    match = tuple((k, Exact(ids[m.value]) if k in PATH_KEYS else m)
                  for k, m in entry.match)
    params = tuple((k, ids[v] if k == "path_id" else v) for k, v in entry.params)
    return replace(entry, match=match, params=params)


def _key(e: TableEntry) -> tuple:
    return (e.table, e.match, e.priority)


class Session:
    """One switch running sfclab's program, driven over P4Runtime."""

    def __init__(self, client: Client, device_config: Callable[[Generated], object], *,
                 grace: float = 0.0,
                 ports: Callable[[], Iterable[int] | None] | Iterable[int] | None = None,
                 registers: RegisterIO | None = None) -> None:
        """*device_config(gen)* gives the target's ``p4_device_config`` bytes, or a pair
        (bytes, P4Info) when a compiler wrote the P4Info to push (p4c's ids win).
        *ports*: the switch's data-plane ports (or a function giving them), which a
        ``flood`` floods out of; None: unknown, no flood groups are written.
        *registers*: how register cells are read and written (:mod:`.registers`;
        default: over P4Runtime)."""
        self.client = client
        #: How the switch's register cells are read and written (:mod:`.registers`).
        self.register_io: RegisterIO = registers or P4RuntimeRegisters(client)
        self.device_config = device_config
        self.grace = grace                # wait before removing old entries (packets in flight)
        self.ports = ports
        self.generated: Generated | None = None
        self.index: P4InfoIndex | None = None
        self.installed: dict[tuple, TableEntry] = {}
        #: The multicast groups written (flood's), by id.
        self.groups: dict[int, MulticastGroup] = {}
        #: What the last push or update could not do (no port set for a flood …).
        self.notes: list[str] = []
        self._chain_sig: dict[str, tuple] = {}
        self._chain_ids: dict[str, dict[str, int]] = {}     # chain -> path id string -> dp id
        self._next_id = 1
        #: The P4Info and device config running (None: nothing pushed by this session).
        self.pipeline: tuple | None = None
        #: Entries of the user's own (:meth:`insert`), by key: a failed push puts them back, a
        #: reload keeps them where they fit (:mod:`.keep`).
        self.own: dict[tuple, TableEntry] = {}
        #: Staged updates whose rollback could not reach the switch: the next push or
        #: update brings them back first (:func:`.transaction.resync`; a push replaces all).
        self.out_of_step: list[StagedUpdate] = []
        #: Data-plane path id -> service path name, for every id handed out (until it is
        #: handed out again): labels traces of packets that ran just before an update.
        self.path_names: dict[int, str] = {}
        #: The program a failed first push left on the switch with no entries (nothing is
        #: pushed; :class:`~.transaction.Stranded`), until a push succeeds.
        self.stranded: Stranded | None = None
        #: What the last push carried of the old program's registers, NF by NF (a reload:
        #: :class:`~.carry.Carried`; empty after a plain push).
        self.carried: list[Carried] = []
        #: What the last push kept of the entries sfclab did not generate (a reload: the
        #: user's own and learned ones, :mod:`.keep`; empty after a plain push).
        self.kept = Kept()
        #: Why the switch cannot read or write registers ('' while it can: no way in
        #: answered that it does not): a reload cannot carry them (:meth:`would_carry`
        #: says so from then on).
        self.no_register_io = ""

    # -- push ----------------------------------------------------------------------------------
    def push(self, gen: Generated, *, carry: bool = False) -> int:
        """Push the program and install every entry; returns the number of entries.

        One transaction (:mod:`.transaction`): entries that do not fit the program or
        its tables, and a program the target's VERIFY refuses, are refused before the
        program is swapped; when a write after the swap fails, the old program is put
        back with its entries (and register cells), and the error says so.

        *carry* (a program reload): the registers of the NFs that keep their meaning in
        the new program get the old program's cells, written after the entries
        (:mod:`.carry`); :attr:`carried` says what was carried and what starts from zero.
        The entries of the user's own and learned ones go to the new program where they
        fit (:mod:`.keep`); :attr:`kept` says which were kept and which dropped, and why."""
        from ..codegen.p4info import build_p4info

        config = self.device_config(gen)
        info = None
        if isinstance(config, tuple):        # (device config, the compiler's P4Info or None)
            config, info = config
        if info is None:
            info = build_p4info(gen.program.program, arch=gen.arch)
        before = self.state()
        self.index = P4InfoIndex(info)
        self.installed, self._chain_sig, self._chain_ids, self._next_id = {}, {}, {}, 1
        self.groups = {}
        try:                # checked before any change: entries, table sizes, the program
            target, groups = self._target(gen)
            steps = ([("INSERT", g) for g in groups.values()]
                     + [("INSERT", e) for e in target.values()])
            updates = [self._update(kind, e) for kind, e in steps]
            check_capacity(self.index, target)
            new = self.state()
            self.set_state(before)
            verify(self.client, info, config)
            snap = snapshot(self)
            carried, cells = self._carry(snap, gen, new[1]) if carry else ([], [])
            keep, dropped = self._keep(snap, gen, new[1], target) if carry else ([], [])
        except BaseException:
            self.set_state(before)
            raise
        try:
            self.client.set_pipeline(info, config)
        except SfclabError as err:
            if not uncertain(err):                 # refused: the old program runs on
                self.set_state(before)
                raise
            return self._push_failed(err, snap, new, gen, swapped=False)
        try:
            self.set_state(new)
            self.write(steps, updates)
            carried = self._write_carried(carried, cells)
            kept = self._write_kept(keep, dropped)
        except BaseException as err:
            if not isinstance(err, SfclabError):
                left = restore(self, snap)
                self._strand(snap, gen, new, sure=True, clean=not left)
                raise
            return self._push_failed(err, snap, new, gen)
        self.generated, self.pipeline = gen, (info, config)
        self.own = {_key(e): e for e in kept.own}
        self.installed, self.groups, self.out_of_step = dict(target), groups, []
        self.stranded = None
        self.carried, self.kept = carried, kept
        self._name_ids(gen)
        return len(target)

    def _carry(self, snap, gen: Generated, index: P4InfoIndex) -> tuple[list[Carried], list]:
        """What a reload to *gen* (P4Info *index*) carries of the running
        program's registers (:func:`.carry.plan_carry`), and the writes that do it."""
        if snap.pipeline is None or self.generated is None:
            return [], []
        plan = plan_carry(self.generated, self.index, gen, index)
        if snap.registers is None:
            why = snap.unread or "the switch would not read them"
            self.no_register_io = why if snap.unsupported else ""
            return [Carried(c.nf, c.old, None, why=why) if c.carried else c
                    for c in plan.nfs], []
        return plan.nfs, carry_updates(snap.registers, self.index, index, plan.names)

    def _keep(self, snap, gen: Generated, index: P4InfoIndex, target: dict
              ) -> tuple[list, list[Dropped]]:
        """Which of the running program's entries of the user's own and learned ones a
        reload to *gen* (P4Info *index*, generated entries *target*) keeps, as written
        there, and which it drops (:func:`.keep.plan_keep`)."""
        if snap.pipeline is None or self.generated is None:
            return [], []
        entries = [(OWN, e) for e in snap.own.values()]
        entries += [(LEARNED, e) for e in snap.learned or ()]
        keep, dropped = plan_keep(entries, self.generated, self.index, gen, index, target)
        if snap.learned is None:
            dropped.append(Dropped(None, LEARNED, snap.unread_entries))
        return keep, dropped

    def _write_kept(self, keep: list, dropped: list[Dropped]) -> Kept:
        """Write the entries a reload keeps, after the new program's own; one the switch
        refuses is dropped, saying what it answered (a write that may or may not have been
        done, the connection lost, fails the push, which takes it back)."""
        kept = Kept(dropped=list(dropped))
        for i in range(0, len(keep), _BATCH):
            batch = keep[i:i + _BATCH]
            try:
                self.write([("INSERT", e) for _, e in batch])
                bad = {}
            except RuntimeWriteError as err:
                if uncertain(err) or any(f.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED")
                                         for f in err.failures):
                    raise
                bad = {f.index: f for f in err.failures}
            for k, (whose, e) in enumerate(batch):
                if k in bad:
                    kept.dropped.append(Dropped(e, whose, f"the switch refused it: "
                                                          f"{bad[k].code} {bad[k].message}"))
                else:
                    (kept.own if whose == OWN else kept.learned).append(e)
        return kept

    def _write_carried(self, carried: list[Carried], cells: list) -> list[Carried]:
        """Write the cells a reload carries; a switch that does not take register writes
        (:func:`.carry.unsupported`) keeps them at zero, which *carried* then says."""
        try:
            self.write_registers(cells)
        except SfclabError as err:
            if not unsupported(err):
                raise
            self.no_register_io = unsupported_why(err)
            return [Carried(c.nf, c.old, None, why=self.no_register_io) if c.carried else c
                    for c in carried]
        return carried

    def would_carry(self, gen: Generated) -> list[Carried]:
        """What a reload to *gen* would carry of the running program's registers (nothing
        is read or written; the cells are those the reload reads)."""
        if self.generated is None or not list(self.index.info.registers):
            return []
        from ..codegen.p4info import build_p4info

        index = P4InfoIndex(build_p4info(gen.program.program, arch=gen.arch))
        nfs = plan_carry(self.generated, self.index, gen, index).nfs
        return [Carried(c.nf, c.old, None, why=self.no_register_io)
                if c.carried and self.no_register_io else c for c in nfs]

    def write_registers(self, updates: list) -> None:
        """Write register cells (P4Runtime updates of the running program's registers)
        the way the switch takes them (:attr:`register_io`)."""
        if updates:
            self.register_io.write(self.index, updates)

    def read_registers(self, register_ids: Iterable[int] = ()) -> list:
        """Every cell of the running program's registers *register_ids* (all: none
        given), as P4Runtime entities, the way the switch gives them (:attr:`register_io`)."""
        return self.register_io.read(self.index, tuple(register_ids))

    def _strand(self, snap, gen: Generated, new: tuple, *, sure: bool, clean: bool) -> None:
        """After a failed first push: record the program left on the switch (when the
        swap's answer was lost, the switch is asked which program it holds)."""
        if snap.pipeline is not None:
            return
        index = new[1]
        if not sure:
            try:
                held = self.client.get_pipeline()
            except SfclabError:
                held = None                          # cannot tell: it may hold it
            if held is not None:
                if not held.HasField("p4info") or not len(held.p4info.tables):
                    return                           # it holds no program
                sure = held.p4info == index.info
        self.stranded = Stranded(gen, index, sure=sure, clean=clean)

    def _push_failed(self, err: SfclabError, snap, new, gen: Generated, *,
                     swapped: bool = True) -> NoReturn:
        self.set_state(new)
        # the swap's answer lost: no entry was written, but the old program (if any) may
        # be gone and must be put back
        left = restore(self, snap, swapped=swapped or snap.pipeline is not None)
        if snap.pipeline is None:
            self._strand(snap, gen, new, sure=swapped, clean=not left)
            if left:
                what = f"deleting what was written failed ({left}): push again"
            elif self.stranded is None:
                what = "the switch holds no program; nothing is pushed"
            else:
                what = (f"{self.stranded.text()}; nothing is pushed: push again (%sfc push, "
                        f"lab.push()) once the cause is fixed")
        elif not left:
            what = "the switch runs the program it ran before, with its entries"
        elif left == "its registers start from zero":
            what = ("the switch runs the program it ran before, with its entries; "
                    "its registers start from zero (the switch would not read them)")
        else:
            what = (f"putting the old program back failed ({left}): the switch's state is "
                    f"unknown; push again")
        message = f"{err.message}; the push was taken back: {what}"
        out = (RuntimeWriteError(message, err.failures, hint=err.hint)
               if isinstance(err, RuntimeWriteError) else TargetError(message, hint=err.hint))
        raise out from None

    def state(self) -> tuple:
        """What the session records about its switch (:meth:`set_state` puts it back)."""
        return (self.generated, self.index, self.installed, self.groups, self._chain_sig,
                self._chain_ids, self._next_id, self.pipeline)

    def set_state(self, state: tuple) -> None:
        (self.generated, self.index, self.installed, self.groups, self._chain_sig,
         self._chain_ids, self._next_id, self.pipeline) = state

    def forget(self) -> None:
        """Record that what the switch runs is unknown (nothing is pushed)."""
        self.set_state((None, None, {}, {}, {}, {}, 1, None))
        self.own, self.out_of_step = {}, []

    def switch_ports(self) -> tuple[int, ...] | None:
        """The switch's data-plane ports, as :attr:`ports` gives them (None: unknown)."""
        ports = self.ports() if callable(self.ports) else self.ports
        return None if ports is None else port_set(ports)

    # -- ids and the target entry set ----------------------------------------------------------
    def _path_names(self, gen: Generated) -> dict[int, str]:
        return {f.num: f.path.id for f in gen.composition.compiled.fsm.paths}

    def _signature(self, gen: Generated, entries: list[TableEntry]) -> tuple:
        """A chain's entries with data-plane path ids replaced by the paths' own names
        (``web/0``) and initializer priorities left out: equal when the chain is."""
        names = self._path_names(gen)
        sig = []
        for e in entries:
            match = tuple((k, names[m.value] if k in PATH_KEYS else m)
                          for k, m in e.match)
            params = tuple((k, names[v] if k == "path_id" else v) for k, v in e.params)
            prio = None if e.table.endswith("initializer") else e.priority
            sig.append((e.table, match, e.action, params, prio))
        return tuple(sorted(sig, key=repr))

    def _target(self, gen: Generated, plan: UpdatePlan | None = None
                ) -> tuple[dict[tuple, TableEntry], dict[int, MulticastGroup]]:
        """Every entry *gen* needs on the switch, canonical, by key; and the multicast
        groups."""
        self.notes = []
        flood, groups = self._flood(gen)
        out: dict[tuple, TableEntry] = {}
        for e in self._entries(gen, plan) + flood:
            c = self.index.canonical(e)
            out[_key(c)] = c
        return out, {g.id: g for g in groups}

    def _flood(self, gen: Generated) -> tuple[list[TableEntry], list[MulticastGroup]]:
        ports = self.switch_ports()
        if ports is None:
            if flood_config(gen.composition, [1])[0]:
                self.notes.append("flood: the switch's ports are unknown, so no flood groups "
                                  "are written (a flood is dropped); give the ports "
                                  "(session.ports = [1, 2, …]) and push again")
            return [], []
        if gen.detour is not None:                 # the server's port is not flooded to
            ports = tuple(p for p in ports if p != gen.detour.port)
        return flood_config(gen.composition, ports)

    def _entries(self, gen: Generated, plan: UpdatePlan | None) -> list[TableEntry]:
        """*gen*'s entries, chain entries with the data-plane path ids of their chain."""
        names = self._path_names(gen)
        out: list[TableEntry] = []
        for group, entries in gen.groups().items():
            if not group.startswith("chain:"):
                out += entries
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
            out += [_remap(e, ids) for e in entries]
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
            return UpdatePlan("reload", reason=why, carried=self.would_carry(gen))
        saved = (dict(self._chain_sig), {k: dict(v) for k, v in self._chain_ids.items()},
                 self._next_id)
        plan = UpdatePlan("entries")
        try:
            target, groups = self._target(gen, plan)
        finally:
            self._chain_sig, self._chain_ids, self._next_id = saved
        chains = {g[len("chain:"):] for g in gen.groups() if g.startswith("chain:")}
        plan.removed = sorted(set(self._chain_sig) - chains)
        plan.writes = len(self._diff(target)) + len(self._diff_groups(groups))
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
            self.push(gen, carry=True)
            plan.done, plan.carried, plan.kept = True, list(self.carried), self.kept
            return plan
        staged = self.stage(gen, plan)

        def drain() -> None:
            if staged.last and self.grace:
                time.sleep(self.grace)
        apply_staged({"switch": self}, {"switch": staged}, drain=drain)
        return plan

    def stage(self, gen: Generated, plan: UpdatePlan | None = None) -> StagedUpdate:
        """The writes of an entries-only update, in the three steps that keep it
        consistent (:class:`StagedUpdate`); nothing is written.  A network applies
        each step on every switch before the next (:mod:`sfclab.targets.network`)."""
        plan = plan or self.plan(gen)
        saved = (dict(self._chain_sig), {k: dict(v) for k, v in self._chain_ids.items()},
                 self._next_id)
        if plan.kind != "none":
            target, groups = self._target(gen)
        else:
            target, groups = dict(self.installed), dict(self.groups)
        for chain in plan.removed:
            self._chain_sig.pop(chain, None)
            self._chain_ids.pop(chain, None)
        self._name_ids(gen)
        steps = self._diff(target)
        pre = self._diff_groups(groups)
        init = [s for s in steps if s[1].table.endswith(".initializer")]
        rest = [s for s in steps if not s[1].table.endswith(".initializer")]
        # new groups and paths first (unreachable yet), old ones last (unreachable by then)
        return StagedUpdate(
            plan, gen, target, groups,
            first=[s for s in pre if s[0] != "DELETE"] + [s for s in rest if s[0] == "INSERT"],
            flip=[s for s in init if s[0] != "DELETE"] + [s for s in init if s[0] == "DELETE"],
            last=[s for s in rest if s[0] != "INSERT"] + [s for s in pre if s[0] == "DELETE"],
            saved=saved)

    def write(self, steps: list[tuple[str, TableEntry | MulticastGroup]],
              updates: list | None = None) -> None:
        """Write *steps* (``(INSERT|MODIFY|DELETE, entry or multicast group)``; encoded:
        *updates*) in batches.  What a failure leaves written stays: the caller takes it
        back (:func:`.transaction.apply_staged` does, by reading the switch)."""
        updates = updates if updates is not None else [self._update(k, e) for k, e in steps]
        for i in range(0, len(steps), _BATCH):
            batch = steps[i:i + _BATCH]
            try:
                self.client.write(updates[i:i + _BATCH],
                                  describe=lambda k, b=batch: f"{b[k][0]} {b[k][1]}")
            except RuntimeWriteError as err:
                failures = [replace(f, index=i + f.index) for f in err.failures]
                raise RuntimeWriteError(f"{len(failures)} of {len(steps)} updates failed",
                                        failures, hint="see each failed update below") \
                    from None

    def settle(self, staged: StagedUpdate) -> None:
        """Record that every step of *staged* is written."""
        self.installed, self.groups, self.generated = (dict(staged.target), staged.groups,
                                                       staged.gen)

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

    def _diff_groups(self, groups: dict[int, MulticastGroup]
                     ) -> list[tuple[str, MulticastGroup]]:
        out: list[tuple[str, MulticastGroup]] = []
        for i, g in groups.items():
            old = self.groups.get(i)
            if old is None or old.ports != g.ports:
                out.append(("INSERT" if old is None else "MODIFY", g))
        out += [("DELETE", g) for i, g in self.groups.items() if i not in groups]
        return out

    # -- transactions --------------------------------------------------------------------------
    def _update(self, kind: str, obj: TableEntry | MulticastGroup):
        if isinstance(obj, MulticastGroup):
            return multicast_update(kind, obj.id, obj.ports)
        return self.index.update(kind, obj)

    def _apply(self, steps: list[tuple[str, TableEntry | MulticastGroup]]) -> None:
        """Write *steps* in batches; if any update fails, undo the ones that worked."""
        done: list[tuple[str, TableEntry | MulticastGroup]] = []
        for i in range(0, len(steps), _BATCH):
            batch = steps[i:i + _BATCH]
            try:
                self.write(batch)
            except RuntimeWriteError as err:
                bad = {f.index for f in err.failures}
                done += [s for k, s in enumerate(batch) if k not in bad]
                self._undo(done)
                failures = [replace(f, index=i + f.index) for f in err.failures]
                raise RuntimeWriteError(f"{len(failures)} of {len(steps)} updates failed; the "
                                        f"{len(done)} that succeeded were taken back", failures,
                                        hint="see each failed update below") from None
            done += batch

    def _undo(self, done: list[tuple[str, TableEntry | MulticastGroup]]) -> None:
        inverse = {"INSERT": "DELETE", "DELETE": "INSERT"}
        undo = []
        for kind, e in reversed(done):
            if kind == "MODIFY":
                old = (self.groups.get(e.id) if isinstance(e, MulticastGroup)
                       else self.installed.get(_key(e)))
                if old is not None:
                    undo.append(self._update("MODIFY", old))
            else:
                undo.append(self._update(inverse[kind], e))
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
        return self.path_of_id(dp)

    def path_of_id(self, dp: int) -> str | None:
        """The service path (``web/0``) whose data-plane ``path_id`` is *dp* (None: none),
        also for ids an update has since replaced (the traces of packets sent before it)."""
        return self.path_names.get(dp)

    def _name_ids(self, gen: Generated) -> None:
        """Record the service path of every path id handed out (a part of a path that
        detours through a server: its path), kept after an update for the traces of
        packets that ran before it."""
        for ids in list(self._chain_ids.values()):
            for name, i in ids.items():
                self.path_names[i] = gen.path_name(name)

    def _path_by_nfs(self, trace) -> str | None:
        if self.generated is None:
            return None
        seen = tuple(trace.nfs_seen())
        found = {f"{p.chain}/{p.index}" for p in self.generated.compiled.paths
                 if seen in (tuple(p.nodes), tuple(p.nfs))}
        return found.pop() if len(found) == 1 else None

    # -- reading -------------------------------------------------------------------------------
    def read_entries(self, table: str | None = None) -> list[TableEntry]:
        """Entries as the switch has them (all tables, or one)."""
        from finsy.proto import p4r

        index = self._reading_index()
        ent = p4r.Entity()
        ent.table_entry.table_id = index.table(table).preamble.id if table else 0
        return [index.decode(e.table_entry) for e in self.client.read([ent])]

    def _reading_index(self) -> P4InfoIndex:
        """The P4Info of the program on the switch: the pushed one, or the one a failed
        first push left there (:attr:`stranded`)."""
        if self.index is not None:
            return self.index
        if self.stranded is not None:
            return self.stranded.index
        raise TargetError("nothing is pushed yet: the switch runs no program of this lab's",
                          hint="push first: %sfc push (lab.push())")

    def read_groups(self) -> list[MulticastGroup]:
        """The multicast groups as the switch has them."""
        from finsy.proto import p4r

        ent = p4r.Entity()
        ent.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 0
        out = []
        for e in self.client.read([ent]):
            g = e.packet_replication_engine_entry.multicast_group_entry
            ports = sorted(int.from_bytes(r.port, "big") if r.port else r.egress_port
                           for r in g.replicas)
            mine = self.groups.get(g.multicast_group_id)
            out.append(MulticastGroup(g.multicast_group_id, tuple(ports),
                                      mine.note if mine is not None else ""))
        return sorted(out, key=lambda g: g.id)

    def occupancy(self) -> list[Occupancy]:
        """Entries per table against its size, read from the switch; and the multicast
        groups (row :data:`PRE_GROUPS`) when there are any."""
        counts: dict[str, int] = {}
        for e in self.read_entries():
            counts[e.table] = counts.get(e.table, 0) + 1
        rows = [Occupancy(t.preamble.name, counts.get(t.preamble.name, 0), t.size)
                for t in self._reading_index().info.tables]
        groups = self.read_groups()
        if groups:
            rows.append(Occupancy(PRE_GROUPS, len(groups), _MAX_GROUPS))
        return rows

    # -- entries of the user's own -------------------------------------------------------------
    def entry(self, table: str, match: Mapping[str, object] | None = None, action: str = "",
              params: Mapping[str, object] | None = None, priority: int | None = None
              ) -> TableEntry:
        """An entry of the pushed program from values as written: ``{"hdr.ipv4.dst_addr":
        "10.0.0.0/8"}`` (``"0.0.0.0/0"``, ``"0 &&& 0"``, ``"*"``: don't care, left out),
        ``(value, prefix_len)`` pairs … (:func:`~sfclab.codegen.entries.match_value`)."""
        if self.index is None:
            raise TargetError("nothing is pushed yet", hint="push a compiled chain set first")
        try:
            e = make_entry(table, match or {}, {k: kind for k, (kind, _) in
                                                self.index.fields(table).items()},
                           action, params, priority, group="user")
        except CompileError as err:
            raise TargetError(err.message, hint=err.hint) from None
        if action:
            self.index.action(action)
        return self.index.canonical(e)

    def insert(self, *entries: TableEntry) -> None:
        """Write entries of your own (a failed batch writes nothing); a later update
        leaves them alone, a failed push puts them back."""
        self._apply([("INSERT", e) for e in entries])
        self.own.update((_key(e), e) for e in entries)

    def delete(self, *entries: TableEntry) -> None:
        self._apply([("DELETE", e) for e in entries])
        for e in entries:
            self.own.pop(_key(e), None)


def chain_entries(entries: Iterable[TableEntry], chain: str) -> list[TableEntry]:
    return [e for e in entries if e.group == f"chain:{chain}"]
