"""Types as P4Info sees them: the architectures' built-in types, typedefs, widths,
the typing of key and digest expressions, constant folding, and the names p4c
gives match fields (its ``TableKeyNames``)."""

from __future__ import annotations

from ...errors import CompileError
from ...p4 import ast as A
from ...p4.names import local_name
from .astutil import _where

__all__ = [
    "_Types", "_Scope", "_type_text", "_expr_text", "_typer", "_const_int", "_key_name",
    "_p4c_int",
]

_CORE_ERRORS = ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
                "ParserTimeout", "ParserInvalidArgument")
_TNA_ERRORS = ("CounterRange", "Timeout", "PhvOwner", "MultiWrite", "IbufOverflow",
               "IbufUnderflow")


def _fields(*spec: tuple[str, int]) -> tuple[A.Field, ...]:
    return tuple(A.Field(A.BitType(w), n) for n, w in spec)


def _v1model_builtins() -> list[A.Node]:
    sm = _fields(("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9),
                 ("instance_type", 32), ("packet_length", 32), ("enq_timestamp", 32),
                 ("enq_qdepth", 19), ("deq_timedelta", 32), ("deq_qdepth", 19),
                 ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48),
                 ("mcast_grp", 16), ("egress_rid", 16), ("checksum_error", 1))
    sm += (A.Field(A.NamedType("error"), "parser_error"), A.Field(A.BitType(3), "priority"))
    return [A.Typedef(A.BitType(9), "PortId_t"), A.StructDecl("standard_metadata_t", sm)]


#: tofino1_specs.p4's ``typedef bit<W>`` types (name, W): an action parameter of any of them
#: is a bitstring of that width in P4Info, as p4c-barefoot writes it.
TNA_TYPEDEFS = (("PortId_t", 9), ("MulticastGroupId_t", 16), ("QueueId_t", 5),
                ("MirrorType_t", 3), ("MirrorId_t", 10), ("ResubmitType_t", 3),
                ("DigestType_t", 3), ("ReplicationId_t", 16), ("L1ExclusionId_t", 16),
                ("L2ExclusionId_t", 9))


def _tna_builtins() -> list[A.Node]:
    hdr = [("ingress_intrinsic_metadata_t", (("resubmit_flag", 1), ("_pad1", 1),
            ("packet_version", 2), ("_pad2", 3), ("ingress_port", 9),
            ("ingress_mac_tstamp", 48))),
           ("egress_intrinsic_metadata_t", (("_pad0", 7), ("egress_port", 9), ("_pad1", 5),
            ("enq_qdepth", 19), ("_pad2", 6), ("enq_congest_stat", 2), ("_pad3", 14),
            ("enq_tstamp", 18), ("_pad4", 5), ("deq_qdepth", 19), ("_pad5", 6),
            ("deq_congest_stat", 2), ("app_pool_congest_stat", 8), ("_pad6", 14),
            ("deq_timedelta", 18), ("egress_rid", 16), ("_pad7", 7), ("egress_rid_first", 1),
            ("_pad8", 3), ("egress_qid", 5), ("_pad9", 5), ("egress_cos", 3), ("_pad10", 7),
            ("deflection_flag", 1), ("pkt_length", 16)))]
    structs = [("ingress_intrinsic_metadata_for_tm_t", (("ucast_egress_port", 9),
                ("bypass_egress", 1), ("deflect_on_drop", 1), ("ingress_cos", 3), ("qid", 5),
                ("icos_for_copy", 3), ("copy_to_cpu", 1), ("packet_color", 2),
                ("disable_ucast_cutthru", 1), ("enable_mcast_cutthru", 1), ("mcast_grp_a", 16),
                ("mcast_grp_b", 16), ("level1_mcast_hash", 13), ("level2_mcast_hash", 13),
                ("level1_exclusion_id", 16), ("level2_exclusion_id", 9), ("rid", 16))),
               ("ingress_intrinsic_metadata_from_parser_t", (("global_tstamp", 48),
                ("global_ver", 32), ("parser_err", 16))),
               ("ingress_intrinsic_metadata_for_deparser_t", (("drop_ctl", 3),
                ("digest_type", 3), ("resubmit_type", 3), ("mirror_type", 3))),
               ("egress_intrinsic_metadata_from_parser_t", (("global_tstamp", 48),
                ("global_ver", 32), ("parser_err", 16))),
               ("egress_intrinsic_metadata_for_deparser_t", (("drop_ctl", 3),
                ("mirror_type", 3), ("coalesce_flush", 1), ("coalesce_length", 7))),
               ("egress_intrinsic_metadata_for_output_port_t", (("capture_tstamp_on_tx", 1),
                ("update_delay_on_tx", 1), ("force_tx_error", 1)))]
    out: list[A.Node] = [A.Typedef(A.BitType(w), n) for n, w in TNA_TYPEDEFS]
    out += [A.HeaderDecl(n, _fields(*f)) for n, f in hdr]
    out += [A.StructDecl(n, _fields(*f)) for n, f in structs]
    return out


class _Types:
    """The program's named types (plus the architecture's) and its constants."""

    def __init__(self, prog: A.Program, arch: str) -> None:
        builtins = _v1model_builtins() if arch == "v1model" else _tna_builtins()
        self.decls: dict[str, A.Node] = {d.name: d for d in builtins}  # type: ignore[attr-defined]
        kinds = (A.HeaderDecl, A.StructDecl, A.EnumDecl, A.Typedef)
        self.decls.update({d.name: d for d in prog.decls if isinstance(d, kinds)})
        self.consts = {d.name: d for d in prog.decls if isinstance(d, A.ConstDecl)}
        arch_errors = _TNA_ERRORS if arch == "tna" else ()
        user = [m for d in prog.decls if isinstance(d, A.ErrorDecl) for m in d.members]
        self.errors = list(dict.fromkeys((*_CORE_ERRORS, *arch_errors, *user)))

    def resolve(self, t: A.Node) -> A.Node:
        """*t* with typedefs followed."""
        seen = 0
        while isinstance(t, A.NamedType) and isinstance(self.decls.get(t.name), A.Typedef):
            t = self.decls[t.name].type  # type: ignore[attr-defined]
            seen += 1
            if seen > 64:
                raise CompileError(f"typedef cycle through '{t}'")
        return t

    def decl(self, t: A.Node) -> A.Node | None:
        t = self.resolve(t)
        return self.decls.get(t.name) if isinstance(t, A.NamedType) else None

    def field(self, t: A.Node, name: str) -> A.Field | None:
        d = self.decl(t)
        if isinstance(d, (A.HeaderDecl, A.StructDecl)):
            return next((f for f in d.fields if f.name == name), None)
        return None

    def width(self, t: A.Node, where: str) -> int:
        """Bit width as P4Info states it (bool 1, error 0, serializable enum its type's)."""
        t = self.resolve(t)
        if isinstance(t, A.BitType) and t.width > 0:
            return t.width
        if isinstance(t, A.BoolType):
            return 1
        if isinstance(t, A.NamedType) and t.name == "error":
            return 0
        d = self.decl(t)
        if isinstance(d, A.EnumDecl) and d.type is not None:
            return self.width(d.type, where)
        raise CompileError(f"{where}: P4Runtime needs a bit<W>, int<W>, bool, error or "
                           f"serializable-enum type here, not '{_type_text(t)}'")


def _type_text(t: A.Node) -> str:
    from ...p4.printer import type_p4
    try:
        return type_p4(t)
    except TypeError:
        return type(t).__name__


class _Scope:
    """What names mean inside one control (or action): parameters, variables, constants."""

    def __init__(self, types: _Types, names: dict[str, A.Node]) -> None:
        self.types = types
        self.names = names

    @classmethod
    def of(cls, types: _Types, control: A.ControlDecl | None,
           action: A.ActionDecl | None = None) -> _Scope:
        names: dict[str, A.Node] = {n: c.type for n, c in types.consts.items()}
        if control is not None:
            names.update({p.name: p.type for p in control.params})
            names.update({d.name: d.type for d in control.locals if isinstance(d, A.VarDecl)})
        if action is not None:
            names.update({p.name: p.type for p in action.params})
        return cls(types, names)

    def type_of(self, e: A.Node) -> A.Node:
        """The type of expression *e* (enough of P4's typing for keys and digests)."""
        t = _typer(e, self)
        if t is None:
            raise CompileError(_where(e, f"cannot tell the type of '{_expr_text(e)}'"))
        return t


def _expr_text(e: A.Node) -> str:
    from ...p4.printer import expr_p4
    try:
        return expr_p4(e)
    except TypeError:
        return type(e).__name__


def _typer(e: A.Node, scope: _Scope) -> A.Node | None:
    if isinstance(e, A.Name):
        return scope.names.get(e.name)
    if isinstance(e, A.Const):
        return A.BitType(e.width, e.signed) if e.width else None
    if isinstance(e, A.BoolLit):
        return A.BoolType()
    if isinstance(e, A.Cast):
        return e.type
    if isinstance(e, A.Slice):
        hi, lo = _const_int(e.hi, scope.types), _const_int(e.lo, scope.types)
        return A.BitType(hi - lo + 1) if hi is not None and lo is not None else None
    if isinstance(e, A.Member):
        return _member_type(e, scope)
    if isinstance(e, A.Index):
        base = scope.types.resolve(scope.type_of(e.expr))
        return base.elem if isinstance(base, A.StackType) else None
    if isinstance(e, A.Call):
        return _call_type(e)
    if isinstance(e, A.Binary):
        return _binary_type(e, scope)
    if isinstance(e, (A.Unary, A.Ternary)):
        return _typer(e.expr if isinstance(e, A.Unary) else e.then, scope)
    return None


def _member_type(e: A.Member, scope: _Scope) -> A.Node | None:
    if isinstance(e.expr, A.TypeName):
        return A.NamedType(e.expr.name)
    base = scope.types.resolve(scope.type_of(e.expr))
    if isinstance(base, A.StackType):
        return base.elem if e.name in ("last", "next") else (
            A.BitType(32) if e.name in ("size", "lastIndex", "nextIndex") else None)
    f = scope.types.field(base, e.name)
    return f.type if f is not None else None


def _call_type(e: A.Call) -> A.Node | None:
    if isinstance(e.func, A.Member) and e.func.name == "isValid" and not e.args:
        return A.BoolType()
    return None


def _binary_type(e: A.Binary, scope: _Scope) -> A.Node | None:
    if e.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
        return A.BoolType()
    if e.op == "++":
        widths = [scope.types.width(scope.type_of(x), "concatenation") for x in (e.left, e.right)]
        return A.BitType(sum(widths))
    return _typer(e.left, scope) or _typer(e.right, scope)


def _const_int(e: A.Node, types: _Types, depth: int = 0) -> int | None:
    """The value of a compile-time integer expression, or None."""
    if depth > 64:
        return None
    if isinstance(e, A.Const):
        return e.value
    if isinstance(e, A.BoolLit):
        return int(e.value)
    if isinstance(e, A.Name) and e.name in types.consts:
        return _const_int(types.consts[e.name].value, types, depth + 1)
    if isinstance(e, A.Cast):
        v = _const_int(e.expr, types, depth + 1)
        t = types.resolve(e.type)
        if v is not None and isinstance(t, A.BitType) and t.width:
            return v & ((1 << t.width) - 1)
        return v
    if isinstance(e, A.Member) and isinstance(e.expr, A.TypeName):
        return _enum_value(types, e.expr.name, e.name, depth)
    if isinstance(e, A.Unary) and e.op == "-":
        v = _const_int(e.expr, types, depth + 1)
        return None if v is None else -v
    if isinstance(e, A.Binary):
        return _const_binary(e, types, depth)
    return None


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b,
        "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}


def _const_binary(e: A.Binary, types: _Types, depth: int) -> int | None:
    a, b = _const_int(e.left, types, depth + 1), _const_int(e.right, types, depth + 1)
    if a is None or b is None or e.op not in _OPS:
        return None
    return _OPS[e.op](a, b)


def _enum_value(types: _Types, enum: str, member: str, depth: int) -> int | None:
    d = types.decls.get(enum)
    if isinstance(d, A.EnumDecl) and d.type is not None:
        for name, value in d.members:
            if name == member and value is not None:
                return _const_int(value, types, depth + 1)
    return None


# --- match-field names (p4c's TableKeyNames) -----------------------------------------------

def _key_name(e: A.Node, scope: _Scope) -> str | None:
    """The name p4c gives a key without ``@name``, or None for a complex key."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Const):
        return _p4c_int(e.value, e.base)
    if isinstance(e, A.Member):
        return _member_key_name(e, scope)
    if isinstance(e, A.Index):
        return _join(e.expr, scope, lambda l, r: f"{l}[{r}]", e.index)
    if isinstance(e, A.Slice):
        parts = [_key_name(x, scope) for x in (e.expr, e.hi, e.lo)]
        return None if None in parts else f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if isinstance(e, A.Binary) and e.op == "&":
        return _join(e.left, scope, lambda l, r: f"{l} & {r}", e.right)
    if isinstance(e, A.Call) and not e.args:
        m = _key_name(e.func, scope)
        return m if m is not None and m.endswith("$valid$") else None
    return None


def _join(left: A.Node, scope: _Scope, fmt, right: A.Node) -> str | None:
    a, b = _key_name(left, scope), _key_name(right, scope)
    return None if a is None or b is None else fmt(a, b)


def _member_key_name(e: A.Member, scope: _Scope) -> str | None:
    fname = e.name
    base = _typer(e.expr, scope) if not isinstance(e.expr, A.TypeName) else None
    decl = scope.types.decl(base) if base is not None else None
    if isinstance(decl, A.HeaderDecl) and e.name == "isValid":
        fname = "$valid$"
    elif isinstance(decl, (A.HeaderDecl, A.StructDecl)):
        f = scope.types.field(base, e.name)  # type: ignore[arg-type]
        fname = local_name(f) if f is not None else fname
    if fname.startswith("."):
        return fname[1:]
    left = _key_name(e.expr, scope) if not isinstance(e.expr, A.TypeName) else e.expr.name
    return None if left is None else f"{left}.{fname}"


def _p4c_int(value: int, base: int) -> str:
    """p4c's ``Util::toString(value, 0, false, base)``: lowercase digits, no width."""
    sign, v = ("-", -value) if value < 0 else ("", value)
    prefix = {2: "0b", 8: "0o", 16: "0x"}.get(base, "")
    digits = {2: f"{v:b}", 8: f"{v:o}", 16: f"{v:x}"}.get(base, str(v))
    return sign + prefix + digits
