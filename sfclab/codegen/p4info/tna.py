"""TNA's externs in P4Info: which instances count, bf-p4c's ``barefoot/p4info.proto``
payloads (from a private descriptor pool), and the extern instances, direct
resources and table properties :class:`_Emitter` writes for them."""

from __future__ import annotations

import functools

from finsy.proto import p4i as p4info_pb2
from finsy.proto import p4t as p4types_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from ...errors import CompileError
from ...p4 import ast as A
from ...p4.names import QualifiedObject
from .astutil import _set_preamble, _where
from .ids import PREFIX, TNA_PREFIX
from .model import _ctl_calls, _Ctl, _decl_name, _extern_type, _unpiped
from .types import _Scope

__all__ = ["_TnaExterns", "_tna_kind", "_barefoot_pool", "_barefoot"]

_TNA_UNSUPPORTED = {"ActionSelector", "Lpf", "DirectLpf", "Wred", "DirectWred", "RegisterParam",
                    "Snapshot"}
_TNA_COUNTER_UNITS = {"PACKETS": "PACKETS", "BYTES": "BYTES",
                      "PACKETS_AND_BYTES": "PACKETS_AND_BYTES"}


def _tna_kind(obj: QualifiedObject) -> str | None:
    if obj.kind != "extern":
        return None
    t = _extern_type(obj)
    if t in _TNA_UNSUPPORTED:
        raise CompileError(_where(obj.decl, f"{t} '{obj.name}' is not supported by sfclab's "
                                  "TNA P4Info generator"),
                           hint="use bf-p4c's P4Info for this program")
    return t if t in TNA_PREFIX else None


# --- TNA's extern payloads (bf-p4c's barefoot/p4info.proto) ----------------------------------

_BAREFOOT_MESSAGES = {
    "ActionProfile": [("table_ids", 1, "uint32", True), ("size", 2, "int64", False)],
    "Counter": [("spec", 1, ".barefoot.CounterSpec", False), ("size", 2, "int64", False)],
    "DirectCounter": [("spec", 1, ".barefoot.CounterSpec", False),
                      ("direct_table_id", 2, "uint32", False)],
    "Meter": [("spec", 1, ".barefoot.MeterSpec", False), ("size", 2, "int64", False)],
    "DirectMeter": [("spec", 1, ".barefoot.MeterSpec", False),
                    ("direct_table_id", 2, "uint32", False)],
    "Register": [("type_spec", 1, ".p4.config.v1.P4DataTypeSpec", False),
                 ("size", 2, "int64", False), ("data_field_name", 3, "string", False)],
    "DirectRegister": [("type_spec", 1, ".p4.config.v1.P4DataTypeSpec", False),
                       ("data_field_name", 2, "string", False)],
    "Digest": [("type_spec", 1, ".p4.config.v1.P4DataTypeSpec", False)],
    # p4c-barefoot 9.13 names the hashed fields (DynHash.field_infos); sfclab writes none
    "DynHashFieldInfo": [("field_name", 1, "string", False), ("is_constant", 2, "bool", False)],
    "DynHash": [("type_spec", 1, ".p4.config.v1.P4DataTypeSpec", False),
                ("field_infos", 2, ".barefoot.DynHashFieldInfo", True),
                ("hash_width", 3, "int32", False)],
}
_SPEC_ENUMS = {"CounterSpec": {"Unit": ["UNSPECIFIED", "BYTES", "PACKETS", "PACKETS_AND_BYTES"]},
               "MeterSpec": {"Unit": ["UNSPECIFIED", "BYTES", "PACKETS"],
                             "Type": ["COLOR_UNAWARE", "COLOR_AWARE"]}}
_SCALARS = {"uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
            "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
            "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
            "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL}


def _add_field(msg: descriptor_pb2.DescriptorProto, name: str, number: int, ftype: str,
               repeated: bool) -> None:
    F = descriptor_pb2.FieldDescriptorProto
    f = msg.field.add(name=name, number=number,
                      label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
    if ftype in _SCALARS:
        f.type = _SCALARS[ftype]
    else:
        f.type, f.type_name = (F.TYPE_ENUM if ftype.startswith("enum:") else F.TYPE_MESSAGE,
                               ftype.removeprefix("enum:"))


def _barefoot_file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(name="sfclab/barefoot_p4info.proto",
                                             package="barefoot", syntax="proto3",
                                             dependency=["p4/config/v1/p4types.proto"])
    for spec, enums in _SPEC_ENUMS.items():
        msg = fdp.message_type.add(name=spec)
        for number, (ename, values) in enumerate(enums.items(), start=1):
            e = msg.enum_type.add(name=ename)
            for i, v in enumerate(values):
                e.value.add(name=v, number=i)
            _add_field(msg, ename.lower(), number, f"enum:.barefoot.{spec}.{ename}", False)
    for name, fields in _BAREFOOT_MESSAGES.items():
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, repeated in fields:
            _add_field(msg, fname, number, ftype, repeated)
    return fdp


@functools.cache
def _barefoot_pool() -> descriptor_pool.DescriptorPool:
    """A private pool with p4types and the barefoot messages TNA P4Info packs in ``Any``."""
    pool = descriptor_pool.DescriptorPool()
    for module in (p4types_pb2, p4info_pb2):
        for dep in module.DESCRIPTOR.dependencies:
            fdp = descriptor_pb2.FileDescriptorProto()
            dep.CopyToProto(fdp)
            _pool_add(pool, fdp)
        fdp = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(fdp)
        _pool_add(pool, fdp)
    pool.Add(_barefoot_file())
    return pool


def _pool_add(pool: descriptor_pool.DescriptorPool,
              fdp: descriptor_pb2.FileDescriptorProto) -> None:
    try:
        pool.FindFileByName(fdp.name)
    except KeyError:
        pool.Add(fdp)


def _barefoot(name: str) -> message.Message:
    desc = _barefoot_pool().FindMessageTypeByName(f"barefoot.{name}")
    return message_factory.GetMessageClass(desc)()


class _TnaExterns:
    """The :class:`_Emitter` methods for TNA's externs (they use its attributes)."""

    def _tna_table_properties(self, ctl: _Ctl, t: A.TableDecl, msg: p4info_pb2.Table,
                              name: str, where: str) -> None:
        impl = self._table_extern(ctl, t, "implementation", ("ActionProfile",), where)
        if impl is not None:
            msg.implementation_id = self.st.id(TNA_PREFIX["ActionProfile"][0],
                                               impl.name)
        for prop, kind in (("counters", "DirectCounter"), ("meters", "DirectMeter"),
                           ("registers", "DirectRegister")):
            obj = self._table_extern(ctl, t, prop, (kind,), where)
            if obj is not None:
                self._tna_direct(ctl, obj, kind, msg, where)
        timeout = t.property("idle_timeout")
        if isinstance(timeout, A.BoolLit) and timeout.value:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL

    def _tna_direct(self, ctl: _Ctl, obj: QualifiedObject, kind: str, table: p4info_pb2.Table,
                    where: str) -> None:
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        payload = _barefoot(kind)
        if kind == "DirectRegister":
            payload.type_spec.MergeFromString(self._cell_spec(inst, where).SerializeToString())
            payload.data_field_name = _unpiped(obj)
        else:
            self._tna_unit(payload.spec, inst, 0, kind == "DirectCounter", where)
            payload.direct_table_id = table.preamble.id
        ident = self._tna_instance(ctl, obj, kind, payload)
        table.direct_resource_ids.append(ident)

    def _tna_instance(self, ctl: _Ctl, obj: QualifiedObject, kind: str,
                      payload: message.Message) -> int:
        prefix, type_name = TNA_PREFIX[kind]
        ext = next((e for e in self.info.externs if e.extern_type_id == prefix), None)
        if ext is None:
            ext = self.info.externs.add(extern_type_id=prefix, extern_type_name=type_name)
        name = obj.name
        inst = ext.instances.add()
        _set_preamble(inst.preamble, self.st.id(prefix, name), name, self.st.alias(name),
                      obj.decl)
        inst.info.Pack(payload)
        return inst.preamble.id

    def _tna_unit(self, spec: message.Message, inst: A.Instance, index: int, counter: bool,
                  where: str) -> None:
        arg = inst.args[index] if len(inst.args) > index else None
        units = _TNA_COUNTER_UNITS if counter else {"PACKETS": "PACKETS", "BYTES": "BYTES"}
        if not (isinstance(arg, A.Member) and arg.name in units):
            raise CompileError(_where(inst, f"{where}: '{inst.name}' needs a unit such as "
                                      "CounterType_t.PACKETS"))
        spec.unit = spec.DESCRIPTOR.fields_by_name["unit"].enum_type.values_by_name[
            units[arg.name]].number

    def _cell_spec(self, inst: A.Instance, where: str) -> p4types_pb2.P4DataTypeSpec:
        args = inst.type.args  # type: ignore[attr-defined]
        if not args:
            raise CompileError(f"{where}: '{inst.name}' needs the type of its cells")
        return self.specs.spec(args[0], where)

    def _tna_extern(self, ctl: _Ctl, obj: QualifiedObject) -> None:
        kind = _tna_kind(obj)
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        where = _where(inst, f"{kind} {obj.name}")
        if kind in (None, "DirectCounter", "DirectMeter", "DirectRegister"):
            return
        payload = _barefoot("DynHash" if kind == "Hash" else kind)
        if kind == "Register":
            payload.type_spec.MergeFromString(self._cell_spec(inst, where).SerializeToString())
            payload.size, payload.data_field_name = self._size(inst, 0, where), _unpiped(obj)
        elif kind in ("Counter", "Meter"):
            payload.size = self._size(inst, 0, where)
            self._tna_unit(payload.spec, inst, 1, kind == "Counter", where)
        elif kind == "ActionProfile":
            payload.size = self._size(inst, 0, where)
            payload.table_ids.extend(self._profile_tables(obj, PREFIX["table"]))
        elif not self._tna_used_once(ctl, obj, kind, payload, where):
            return
        self._tna_instance(ctl, obj, kind, payload)

    def _tna_used_once(self, ctl: _Ctl, obj: QualifiedObject, kind: str,
                       payload: message.Message, where: str) -> bool:
        """Digest and Hash appear only when pack()/get() is called exactly once."""
        method = "pack" if kind == "Digest" else "get"
        calls = [(c, a) for c, a in _ctl_calls(ctl, self.m)
                 if isinstance(c.func, A.Member) and c.func.name == method
                 and isinstance(c.func.expr, A.Name) and c.func.expr.name == _decl_name(obj)]
        if len(calls) != 1:
            return False
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        if kind == "Digest":
            spec = self._cell_spec(inst, where)
        else:
            spec = self._hash_spec(ctl, inst, *calls[0], where)
            payload.hash_width = self.types.width(self._cell_type(inst, where), where)
        payload.type_spec.MergeFromString(spec.SerializeToString())
        return True

    def _cell_type(self, inst: A.Instance, where: str) -> A.Node:
        args = inst.type.args  # type: ignore[attr-defined]
        if not args:
            raise CompileError(f"{where}: '{inst.name}' needs a type argument")
        return args[0]

    def _hash_spec(self, ctl: _Ctl, inst: A.Instance, call: A.Call, action: A.ActionDecl | None,
                   where: str) -> p4types_pb2.P4DataTypeSpec:
        data = call.args[0] if call.args else None
        items = data.items if isinstance(data, A.ListExpr) else (() if data is None else (data,))
        scope = _Scope.of(self.types, ctl.decl, action)
        return self.specs.tuple_spec([scope.type_of(x) for x in items], where)
