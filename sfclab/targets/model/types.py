"""Types of a v1model program as the model stores them, and v1model's built-ins.

:class:`TypeEnv` resolves the AST's types (typedefs, headers, structs, stacks,
enums, ``error``) into the small set of classes below; :func:`flatten`
inlines the declarations of ``#include "file.p4"`` lines so that a program
whose headers live in ``sfc_headers.p4`` can run.

Values: ``bit<W>`` is a Python int in ``[0, 2**W)``, ``int<W>`` a signed int
in ``[-2**(W-1), 2**(W-1))``, ``bool`` a bool, an ``error`` or a plain enum
member its name (a str), a serializable enum member an int.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...p4 import ast as A
from ...p4.printer import type_p4
from ...p4.parser import library_dir, parse_p4_file
from .errors import ModelCompileError

__all__ = ["Bits", "BoolT", "HeaderT", "StructT", "StackT", "EnumT", "ErrorT", "StringT",
           "VarbitT", "UnionT", "TupleT",
           "BOOL", "INT", "ERROR", "STRING", "Type", "TypeEnv", "flatten",
           "STANDARD_METADATA", "CORE_ERRORS", "V1_ENUMS", "annotation"]


@dataclass(frozen=True, slots=True)
class Bits:
    """``bit<W>`` / ``int<W>``; width 0 is an untyped integer literal."""

    width: int
    signed: bool = False

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclass(frozen=True, slots=True)
class BoolT:
    pass


@dataclass(frozen=True, slots=True)
class VarbitT:
    """``varbit<W>``: held as ``(length in bits, value)``; at most ``width`` bits."""

    width: int


@dataclass(frozen=True, slots=True)
class StringT:
    pass


@dataclass(frozen=True, slots=True)
class ErrorT:
    pass


@dataclass(frozen=True, slots=True)
class EnumT:
    """An enum; ``underlying`` is set for a serializable ``enum bit<8> E``."""

    name: str
    members: tuple[tuple[str, int | str], ...]
    underlying: Bits | None = None

    def value(self, member: str):
        for n, v in self.members:
            if n == member:
                return v
        raise ModelCompileError(f"enum {self.name} has no member {member!r}")


@dataclass(frozen=True, slots=True)
class HeaderT:
    name: str
    fields: tuple[tuple[str, "Type"], ...]
    annotations: tuple[A.Annotation, ...] = ()

    @property
    def nbits(self) -> int:
        """The fixed fields' bits (a ``varbit`` field counts 0: ``minSizeInBits``)."""
        return sum(_width(t) for _, t in self.fields if not isinstance(t, VarbitT))

    @property
    def nbytes(self) -> int:
        return (self.nbits + 7) // 8

    @property
    def varbit(self) -> int | None:
        """The index of the header's ``varbit`` field, if it has one."""
        return next((i for i, (_, t) in enumerate(self.fields) if isinstance(t, VarbitT)), None)

    @property
    def max_bits(self) -> int:
        """``maxSizeInBits``: the fixed fields and the longest ``varbit``."""
        return self.nbits + sum(t.width for _, t in self.fields if isinstance(t, VarbitT))


@dataclass(frozen=True, slots=True)
class StructT:
    name: str
    fields: tuple[tuple[str, "Type"], ...]
    #: The annotations of each field, by name (``@field_list``).
    field_annotations: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class UnionT(StructT):
    """A ``header_union``: its members are headers, at most one of them valid."""


@dataclass(frozen=True, slots=True)
class TupleT(StructT):
    """``tuple<T1, T2>``: a struct whose fields are called ``0``, ``1`` …"""


@dataclass(frozen=True, slots=True)
class StackT:
    elem: HeaderT
    size: int


Type = Bits | BoolT | StringT | ErrorT | EnumT | HeaderT | StructT | StackT | VarbitT
BOOL = BoolT()
INT = Bits(0)
ERROR = ErrorT()
STRING = StringT()


def _width(t: Type) -> int:
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, VarbitT):
        return t.width
    raise ModelCompileError(f"a header field cannot have type {t}")


#: The core error constants, in BMv2's numbering order.
CORE_ERRORS = ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
               "ParserTimeout", "ParserInvalidArgument")

#: v1model's enums (plain enums: members are their names).
V1_ENUMS = {
    "CounterType": ("packets", "bytes", "packets_and_bytes"),
    "MeterType": ("packets", "bytes"),
    "HashAlgorithm": ("crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity",
                      "csum16", "xor16"),
    "CloneType": ("I2E", "E2E"),
    "MeterColor_t": ("RED", "GREEN", "YELLOW"),
}

#: ``standard_metadata_t`` as v1model.p4 declares it (plus older, deprecated fields).
STANDARD_METADATA = StructT("standard_metadata_t", (
    ("ingress_port", Bits(9)), ("egress_spec", Bits(9)), ("egress_port", Bits(9)),
    ("instance_type", Bits(32)), ("packet_length", Bits(32)),
    ("enq_timestamp", Bits(32)), ("enq_qdepth", Bits(19)), ("deq_timedelta", Bits(32)),
    ("deq_qdepth", Bits(19)), ("ingress_global_timestamp", Bits(48)),
    ("egress_global_timestamp", Bits(48)), ("mcast_grp", Bits(16)), ("egress_rid", Bits(16)),
    ("checksum_error", Bits(1)), ("parser_error", ERROR), ("priority", Bits(3)),
    ("clone_spec", Bits(32)), ("drop", Bits(1)), ("recirculate_port", Bits(16)),
    ("lf_field_list", Bits(32)), ("resubmit_flag", Bits(32)), ("recirculate_flag", Bits(32)),
))


def annotation(annots, name: str) -> str | None:
    """The body of annotation *name* (``""`` when it has none), or None."""
    for a in annots or ():
        if a.name == name:
            return a.body or ""
    return None


# --- includes ------------------------------------------------------------------------------

def flatten(prog: A.Program) -> A.Program:
    """*prog* with each ``#include "file"`` replaced by that file's declarations
    (recursively, each file once); system includes are kept as they are."""
    seen: set[Path] = set()
    base = Path(prog.source).parent if prog.source and prog.source != "<string>" else None

    def expand(p: A.Program, where: Path | None) -> list:
        out = []
        for d in p.decls:
            if isinstance(d, A.Include) and d.decls:            # a user file, read in place
                out.extend(expand(A.Program(d.decls, d.pos.file if d.pos else ""), where))
            elif isinstance(d, A.Include) and not d.system:
                path = _find(d.path, where)
                if path in seen:
                    continue
                seen.add(path)
                out.extend(expand(parse_p4_file(path), path.parent))
            else:
                out.append(d)
        return out

    decls = expand(prog, base)
    return A.Program(tuple(decls), prog.source)


def _find(name: str, base: Path | None) -> Path:
    lib = library_dir()
    cands = ([base / name] if base else []) + [lib / "include" / Path(name).name, lib / name]
    for c in cands:
        if c.is_file():
            return c.resolve()
    raise ModelCompileError(f"cannot find the included file {name!r}",
                            hint="looked in " + ", ".join(str(c.parent) for c in cands))


# --- the type environment ------------------------------------------------------------------

class TypeEnv:
    """Named types and global constants of one (flattened) program."""

    def __init__(self, prog: A.Program) -> None:
        self.decls: dict[str, A.Node] = {}
        self.errors: list[str] = list(CORE_ERRORS)
        self.enums: dict[str, EnumT] = {n: EnumT(n, tuple((m, m) for m in ms))
                                        for n, ms in V1_ENUMS.items()}
        self._cache: dict[str, Type] = {"standard_metadata_t": STANDARD_METADATA}
        for d in prog.decls:
            if isinstance(d, (A.HeaderDecl, A.StructDecl, A.Typedef, A.HeaderUnionDecl)):
                self.decls[d.name] = d
            elif isinstance(d, A.EnumDecl):
                self.decls[d.name] = d
            elif isinstance(d, A.ErrorDecl):
                self.errors += [m for m in d.members if m not in self.errors]
        #: set by the compiler: evaluates a constant expression (for enum values).
        self.const_eval = None
        #: the type parameters bound while a generic function's call is compiled
        self.type_vars: dict[str, Type] = {}

    def resolve(self, t: A.Node) -> Type:
        """The model type of AST type *t*."""
        if isinstance(t, A.BitType):
            return Bits(t.width, t.signed) if t.width else INT      # `int`: no width
        if isinstance(t, A.BoolType):
            return BOOL
        if isinstance(t, A.StackType):
            elem = self.resolve(t.elem)
            if not isinstance(elem, (HeaderT, UnionT)):
                raise ModelCompileError(f"a stack of {type_p4(t.elem)}: a stack holds headers "
                                        f"or header unions")
            return StackT(elem, t.size)
        if isinstance(t, A.NamedType):
            return self.named(t.name)
        if isinstance(t, A.VarbitType):
            return VarbitT(t.width)
        if isinstance(t, A.TupleType):
            name = type_p4(t)
            return TupleT(name, tuple((str(i), self.resolve(x)) for i, x in enumerate(t.elems)))
        if isinstance(t, A.VoidType):
            raise ModelCompileError("void is not a value type")
        raise ModelCompileError(f"unsupported type {t!r}")

    def named(self, name: str) -> Type:
        if name in self.type_vars:                   # a generic function's type parameter
            return self.type_vars[name]
        if name in self._cache:
            return self._cache[name]
        if name == "error":
            return ERROR
        if name in self.enums and name not in self.decls:
            return self.enums[name]
        d = self.decls.get(name)
        if d is None:
            raise ModelCompileError(f"unknown type {name!r}")
        if isinstance(d, A.Typedef):
            t = self.resolve(d.type)
        elif isinstance(d, A.HeaderDecl):
            fields = tuple((f.name, self.resolve(f.type)) for f in d.fields)
            pad = -sum(_width(ft) for _, ft in fields if not isinstance(ft, VarbitT)) % 8
            # p4c-bm2-ss pads a header to whole bytes with a last field of its own
            # (`_padding`): extracted and emitted with the header, and invisible to P4
            t = HeaderT(d.name, fields + ((("$padding", Bits(pad)),) if pad else ()),
                        d.annotations)
        elif isinstance(d, A.StructDecl):
            t = StructT(d.name, tuple((f.name, self.resolve(f.type)) for f in d.fields),
                        {f.name: f.annotations for f in d.fields})
        elif isinstance(d, A.HeaderUnionDecl):
            t = UnionT(d.name, tuple((f.name, self.resolve(f.type)) for f in d.fields))
            for fname, ft in t.fields:
                if not isinstance(ft, HeaderT):
                    raise ModelCompileError(f"header_union {d.name}: member {fname} is not a "
                                            f"header")
        elif isinstance(d, A.EnumDecl):
            t = self._enum(d)
        else:  # pragma: no cover - decls only holds the kinds above
            raise ModelCompileError(f"{name!r} is not a type")
        self._cache[name] = t
        return t

    def _enum(self, d: A.EnumDecl) -> EnumT:
        if d.type is None:
            t = EnumT(d.name, tuple((m, m) for m, _ in d.members))
            self.enums[d.name] = t
            return t
        under = self.resolve(d.type)
        members = []
        for m, e in d.members:
            if e is None or self.const_eval is None:
                raise ModelCompileError(f"serializable enum {d.name}.{m} needs a value")
            members.append((m, self.const_eval(e) & under.mask))
        t = EnumT(d.name, tuple(members), under)
        self.enums[d.name] = t
        return t
