"""One pipeline: a verified P4Info indexed against a model switch (tables, actions and
their ids, externs, digests) plus the state P4Runtime adds to the model's."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from finsy.proto import p4i, p4r, rpc_code

from ..errors import ControlPlaneError
from .codec import _fail

__all__ = ["_ActionRef", "_TableSpec", "_DigestState", "_Pipeline"]

_MF = p4i.MatchField

_KIND = {_MF.EXACT: "exact", _MF.LPM: "lpm", _MF.TERNARY: "ternary", _MF.RANGE: "range",
         _MF.OPTIONAL: "optional"}


@dataclass(eq=False)
class _ActionRef:
    """One action of one table: its P4Info, scope, model action and parameters by id."""

    id: int
    name: str
    scope: int
    info: object                              # the model's ActionInfo
    params: dict                              # param id -> (position, width, name)
    ids: tuple                                # param ids in the model's order


@dataclass(eq=False)
class _TableSpec:
    id: int
    name: str
    info: p4i.Table
    model: object                             # the model's Table
    fields: dict                              # field id -> (position, kind, width, name)
    order: tuple                              # (field id, kind, width) in the model's key order
    absent: tuple                             # the canonical value of each omitted field
    exact_mask: int                           # positions that must be given
    priority: bool                            # entries need a priority > 0
    actions: dict                             # action id -> _ActionRef
    by_model_action: dict                     # model action name -> _ActionRef
    const_default: bool
    idle: bool
    known_actions: dict                       # every action of the P4Info, by id


@dataclass(eq=False)
class _DigestState:
    config: p4r.DigestEntry.Config
    buffer: list = field(default_factory=list)           # [(key, P4Data)]
    timer: threading.Timer | None = None
    cache: dict = field(default_factory=dict)            # list id -> (sent at, {key})


@dataclass(eq=False)
class _Pipeline:
    """A verified pipeline: the config, the model switch and the state P4Runtime adds."""

    config: p4r.ForwardingPipelineConfig
    switch: object
    tables: dict = field(default_factory=dict)            # id -> _TableSpec
    actions: dict = field(default_factory=dict)           # id -> p4i.Action
    counters: dict = field(default_factory=dict)
    direct_counters: dict = field(default_factory=dict)   # table id -> p4i.DirectCounter
    meters: dict = field(default_factory=dict)
    direct_meters: dict = field(default_factory=dict)     # table id -> p4i.DirectMeter
    registers: dict = field(default_factory=dict)
    digests: dict = field(default_factory=dict)           # id -> p4i.Digest
    digest_names: dict = field(default_factory=dict)      # model digest name -> id
    packet_in: p4i.ControllerPacketMetadata | None = None
    packet_out: p4i.ControllerPacketMetadata | None = None
    digest_state: dict = field(default_factory=dict)      # digest id -> _DigestState
    extras: dict = field(default_factory=dict)   # (table, key, prio) -> (cookie, metadata, idle)
    mc_groups: dict = field(default_factory=dict)         # id -> MulticastGroupEntry as written
    clone_sessions: dict = field(default_factory=dict)    # id -> CloneSessionEntry as written

    @classmethod
    def of(cls, config: p4r.ForwardingPipelineConfig, switch) -> _Pipeline:
        info = config.p4info
        pl = cls(config, switch)
        pl.actions = {a.preamble.id: a for a in info.actions}
        for t in info.tables:
            pl.tables[t.preamble.id] = pl._table(t)
        pl.counters = {c.preamble.id: c for c in info.counters}
        pl.meters = {m.preamble.id: m for m in info.meters}
        pl.registers = {r.preamble.id: r for r in info.registers}
        pl.direct_counters = {d.direct_table_id: d for d in info.direct_counters}
        pl.direct_meters = {d.direct_table_id: d for d in info.direct_meters}
        pl.digests = {d.preamble.id: d for d in info.digests}
        pl.digest_names = {d.preamble.name.rsplit(".", 1)[-1]: d.preamble.id
                           for d in info.digests}
        for m in info.controller_packet_metadata:
            if m.preamble.name == "packet_in":
                pl.packet_in = m
            elif m.preamble.name == "packet_out":
                pl.packet_out = m
        for kind, pool in (("counter", pl.counters), ("meter", pl.meters),
                           ("register", pl.registers)):
            for obj in pool.values():
                pl.extern(kind, obj)        # every extern of the P4Info exists in the model
        return pl

    def _table(self, t: p4i.Table) -> _TableSpec:
        name = t.preamble.name
        try:
            mt = self.switch.table(name)
        except ControlPlaneError:
            _fail(rpc_code.INVALID_ARGUMENT, f"the P4Info's table {name} is not in the program")
        by_name = {f.name: f for f in t.match_fields}
        if [k.name for k in mt.keys] != [f.name for f in t.match_fields]:
            _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: the P4Info's match fields are not "
                                             f"the program's key")
        fields, order, absent, exact_mask = {}, [], [], 0
        for pos, k in enumerate(mt.keys):
            f = by_name[k.name]
            kind = _KIND.get(f.match_type)
            if kind is None or kind != k.kind or f.bitwidth != k.width:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}, {k.name}: the P4Info says "
                                                 f"{kind}/{f.bitwidth} bits, the program "
                                                 f"{k.kind}/{k.width}")
            fields[f.id] = (pos, kind, f.bitwidth, f.name)
            order.append((f.id, kind, f.bitwidth))
            full = (1 << f.bitwidth) - 1
            absent.append({"exact": None, "lpm": (0, 0), "ternary": (0, 0), "range": (0, full),
                           "optional": None}[kind])
            if kind == "exact":
                exact_mask |= 1 << pos
        actions = {}
        for ref in t.action_refs:
            a = self.actions.get(ref.id)
            if a is None:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: action id {ref.id} is not in "
                                                 f"the P4Info")
            try:
                info = mt.action(a.preamble.name)
            except ControlPlaneError:
                _fail(rpc_code.INVALID_ARGUMENT, f"table {name}: the program's table has no "
                                                 f"action {a.preamble.name}")
            widths = {n: (i, w) for i, (n, w) in enumerate(info.params)}
            params, ids = {}, [0] * len(info.params)
            for p in a.params:
                if p.name not in widths or widths[p.name][1] != p.bitwidth:
                    _fail(rpc_code.INVALID_ARGUMENT, f"action {a.preamble.name}: parameter "
                                                     f"{p.name} differs from the program's")
                pos = widths[p.name][0]
                params[p.id] = (pos, p.bitwidth, p.name)
                ids[pos] = p.id
            if len(params) != len(info.params):
                _fail(rpc_code.INVALID_ARGUMENT, f"action {a.preamble.name}: the P4Info lists "
                                                 f"{len(params)} parameters, the program "
                                                 f"{len(info.params)}")
            actions[ref.id] = _ActionRef(ref.id, a.preamble.name, ref.scope, info, params,
                                         tuple(ids))
        kinds = {k for _, k, _ in order}
        return _TableSpec(
            id=t.preamble.id, name=name, info=t, model=mt, fields=fields, order=tuple(order),
            absent=tuple(absent), exact_mask=exact_mask,
            priority=bool(kinds & {"ternary", "range", "optional"}), actions=actions,
            by_model_action={r.info.name: r for r in actions.values()},
            const_default=bool(t.const_default_action_id) or bool(mt.default_const),
            idle=t.idle_timeout_behavior != p4i.Table.NO_TIMEOUT, known_actions=self.actions)

    def table(self, ident: int) -> _TableSpec:
        t = self.tables.get(ident)
        if t is None:
            _fail(rpc_code.INVALID_ARGUMENT, f"no table with id {ident} in the P4Info")
        return t

    def get(self, pool: dict, ident: int, what: str):
        obj = pool.get(ident)
        if obj is None:
            _fail(rpc_code.INVALID_ARGUMENT, f"no {what} with id {ident} in the P4Info")
        return obj

    def extern(self, kind: str, obj):
        """The model's state of a P4Info counter / meter / register."""
        from ..externs import CounterArray, MeterArray, RegisterArray

        cls = {"counter": CounterArray, "meter": MeterArray, "register": RegisterArray}[kind]
        try:
            return self.switch._extern(obj.preamble.name, cls, kind)
        except ControlPlaneError:
            _fail(rpc_code.INVALID_ARGUMENT, f"the P4Info's {kind} {obj.preamble.name} is not "
                                             f"in the program")
