"""P4Info's type specs (p4c's ``TypeSpecConverter``): ``P4DataTypeSpec`` for AST types
and the ``type_info`` they fill, flattened header fields, constants as bytes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from finsy.proto import p4t as p4types_pb2

from ...errors import CompileError
from ...p4 import ast as A
from ...p4.names import local_name
from .types import _const_int, _type_text, _Types

__all__ = ["_TypeSpecs", "_flatten", "_bytes"]

class _TypeSpecs:
    """P4DataTypeSpec for AST types, filling the P4Info's ``type_info`` as it goes."""

    def __init__(self, types: _Types, info: p4types_pb2.P4TypeInfo) -> None:
        self.types = types
        self.info = info

    def spec(self, t: A.Node, where: str) -> p4types_pb2.P4DataTypeSpec:
        t = self.types.resolve(t)
        out = p4types_pb2.P4DataTypeSpec()
        if isinstance(t, A.BitType) and t.width > 0:
            (out.bitstring.int if t.signed else out.bitstring.bit).bitwidth = t.width
        elif isinstance(t, A.BoolType):
            out.bool.SetInParent()
        elif isinstance(t, A.StackType):
            self._stack(t, out, where)
        elif isinstance(t, A.NamedType):
            self._named(t, out, where)
        else:
            raise CompileError(f"{where}: P4Runtime cannot describe type '{_type_text(t)}'")
        return out

    def tuple_spec(self, items: Iterable[A.Node], where: str) -> p4types_pb2.P4DataTypeSpec:
        out = p4types_pb2.P4DataTypeSpec()
        out.tuple.SetInParent()
        for t in items:
            out.tuple.members.add().CopyFrom(self.spec(t, where))
        return out

    def _named(self, t: A.NamedType, out: p4types_pb2.P4DataTypeSpec, where: str) -> None:
        if t.name == "error":
            out.error.SetInParent()
            if not self.info.HasField("error"):
                self.info.error.members.extend(self.types.errors)
            return
        d = self.types.decls.get(t.name)
        if isinstance(d, A.StructDecl):
            out.struct.name = local_name(d)
            self._struct(d, where)
        elif isinstance(d, A.HeaderDecl):
            out.header.name = local_name(d)
            self._header(d, where)
        elif isinstance(d, A.EnumDecl):
            self._enum(d, out, where)
        else:
            raise CompileError(f"{where}: P4Runtime cannot describe type '{t.name}'")

    def _stack(self, t: A.StackType, out: p4types_pb2.P4DataTypeSpec, where: str) -> None:
        d = self.types.decl(t.elem)
        if not isinstance(d, A.HeaderDecl):
            raise CompileError(f"{where}: only header stacks can be described in P4Runtime")
        out.header_stack.header.name = local_name(d)
        out.header_stack.size = t.size
        self._header(d, where)

    def _struct(self, d: A.StructDecl, where: str) -> None:
        name = local_name(d)
        if name in self.info.structs:
            return
        members = [(local_name(f), self.spec(f.type, where)) for f in d.fields]
        entry = self.info.structs[name]
        entry.SetInParent()
        for fname, spec in members:
            m = entry.members.add()
            m.name = fname
            m.type_spec.CopyFrom(spec)

    def _header(self, d: A.HeaderDecl, where: str) -> None:
        name = local_name(d)
        if name in self.info.headers:
            return
        entry = self.info.headers[name]
        entry.SetInParent()
        for fname, width, signed in _flatten(self.types, d.fields, "", where):
            m = entry.members.add()
            m.name = fname
            (m.type_spec.int if signed else m.type_spec.bit).bitwidth = width

    def _enum(self, d: A.EnumDecl, out: p4types_pb2.P4DataTypeSpec, where: str) -> None:
        name = local_name(d)
        if d.type is None:
            out.enum.name = name
            if name not in self.info.enums:
                entry = self.info.enums[name]
                entry.SetInParent()
                for member, _ in d.members:
                    entry.members.add().name = member
            return
        out.serializable_enum.name = name
        if name not in self.info.serializable_enums:
            self._ser_enum(d, name, where)

    def _ser_enum(self, d: A.EnumDecl, name: str, where: str) -> None:
        width = self.types.width(d.type, where)  # type: ignore[arg-type]
        entry = self.info.serializable_enums[name]
        entry.underlying_type.bitwidth = width
        for member, value in d.members:
            v = _const_int(value, self.types) if value is not None else None
            if v is None:
                raise CompileError(f"{where}: enum member {name}.{member} has no constant value")
            m = entry.members.add()
            m.name, m.value = member, _bytes(v, width, f"{name}.{member}")


def _flatten(types: _Types, fields: Sequence[A.Field], prefix: str,
             where: str) -> Iterator[tuple[str, int, bool]]:
    """Header fields as (name, width, signed), structs inside flattened with ``_``."""
    for f in fields:
        t = types.resolve(f.type)
        d = types.decl(t)
        if isinstance(d, A.StructDecl):
            yield from _flatten(types, d.fields, f"{prefix}{local_name(f)}_", where)
        else:
            yield (prefix + local_name(f), types.width(t, f"{where}, field '{f.name}'"),
                   isinstance(t, A.BitType) and t.signed)


def _bytes(value: int, width: int, where: str) -> bytes:
    """p4c's ``stringReprConstant``: big-endian, padded to whole bytes of *width*."""
    if value < 0:
        raise CompileError(f"{where}: negative values cannot be given to P4Runtime")
    if value >= 1 << max(width, 1):
        raise CompileError(f"{where}: {value} does not fit in {width} bits")
    return value.to_bytes(max(1, (width + 7) // 8), "big")
