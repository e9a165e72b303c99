"""v1model's externs in P4Info: which instances count, and the table properties,
direct resources, registers and action profiles :class:`_Emitter` writes for them."""

from __future__ import annotations

from finsy.proto import p4i as p4info_pb2
from google.protobuf import message

from ...errors import CompileError
from ...p4 import ast as A
from ...p4.names import QualifiedObject
from .astutil import _annotation, _set_preamble, _where
from .ids import PREFIX
from .model import _Ctl, _extern_type

__all__ = ["_V1modelExterns", "_v1_kind", "_v1_extern_name"]

_V1_EXTERNS = {"counter", "direct_counter", "meter", "direct_meter", "register",
               "action_profile", "action_selector"}
_COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}


def _v1_kind(obj: QualifiedObject) -> str | None:
    if obj.kind != "extern":
        return None
    t = _extern_type(obj)
    return {"counter": "counter", "direct_counter": "direct_counter", "meter": "meter",
            "direct_meter": "direct_meter", "register": "register",
            "action_profile": "action_profile",
            "action_selector": "action_profile"}.get(t)


def _v1_extern_name(obj: QualifiedObject) -> str:
    return _extern_type(obj) if _extern_type(obj) in _V1_EXTERNS else ""


class _V1modelExterns:
    """The :class:`_Emitter` methods for v1model's externs (they use its attributes)."""

    def _v1_table_properties(self, ctl: _Ctl, t: A.TableDecl, msg: p4info_pb2.Table,
                             name: str, where: str) -> None:
        impl = self._table_extern(ctl, t, "implementation",
                                  ("action_profile", "action_selector"), where)
        if impl is not None:
            msg.implementation_id = self.st.id(PREFIX["action_profile"], impl.name)
        counter = self._table_extern(ctl, t, "counters", ("direct_counter",), where)
        if counter is not None:
            self._v1_direct(ctl, counter, msg, "direct_counter", where)
        meter = self._table_extern(ctl, t, "meters", ("direct_meter",), where)
        if meter is not None:
            self._v1_direct(ctl, meter, msg, "direct_meter", where)
        timeout = t.property("support_timeout")
        if isinstance(timeout, A.BoolLit) and timeout.value:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL

    def _v1_direct(self, ctl: _Ctl, obj: QualifiedObject, table: p4info_pb2.Table,
                   kind: str, where: str) -> None:
        ident = self.st.id(PREFIX[kind], obj.name)
        table.direct_resource_ids.append(ident)
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        msg = (self.info.direct_counters if kind == "direct_counter" else
               self.info.direct_meters).add()
        _set_preamble(msg.preamble, ident, obj.name, self.st.alias(obj.name), inst)
        self._unit(msg.spec, inst, 0, kind == "direct_counter", where)
        msg.direct_table_id = table.preamble.id

    def _unit(self, spec: message.Message, inst: A.Instance, index: int, counter: bool,
              where: str) -> None:
        arg = inst.args[index] if len(inst.args) > index else None
        if not (isinstance(arg, A.Member) and isinstance(arg.expr, A.TypeName)):
            raise CompileError(_where(inst, f"{where}: '{inst.name}' needs a unit such as "
                                      "CounterType.packets"))
        units = _COUNTER_UNITS if counter else {"packets": "PACKETS", "bytes": "BYTES"}
        if arg.name not in units:
            raise CompileError(_where(inst, f"unknown unit '{arg.name}' for '{inst.name}'"))
        spec.unit = type(spec).Unit.Value(units[arg.name])

    def _v1_register(self, obj: QualifiedObject, where: str) -> None:
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        if not inst.type.args:  # type: ignore[attr-defined]
            raise CompileError(f"{where}: register<T> needs the type of its cells")
        msg = self.info.registers.add()
        self._sized(msg, obj, PREFIX["register"], where)
        msg.type_spec.CopyFrom(self.specs.spec(inst.type.args[0], where))  # type: ignore

    def _v1_profile(self, ctl: _Ctl, obj: QualifiedObject, selector: bool, where: str) -> None:
        msg = self.info.action_profiles.add()
        self._sized(msg, obj, PREFIX["action_profile"], where, 1 if selector else 0)
        msg.with_selector = selector
        msg.table_ids.extend(self._profile_tables(obj, PREFIX["table"]))
        mgs = _annotation(obj.decl, "max_group_size")
        if mgs is not None and (mgs.body or "").strip().isdigit():
            msg.max_group_size = int(mgs.body.strip())  # type: ignore[union-attr]
