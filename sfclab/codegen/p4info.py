"""P4Info for a program in sfclab's P4 AST, with the names and ids p4c assigns.

A P4Runtime client talks to a switch in ids, and the switch's ids come from the
compiler that built its pipeline.  This module computes the P4Info that
``p4c --p4runtime-files`` (v1model) or bf-p4c (TNA) would write for the same
program, following their documented rules (``control-plane/`` in p4lang/p4c):

* **ids** -- ``prefix << 24 | (jenkins_one_at_a_time(name) & 0xffffff)``, the
  prefix byte being the resource type of ``p4info.proto``'s ``P4Ids.Prefix``
  (action 0x01, table 0x02, controller header 0x04, register 0x16 ...).  Names
  of one type are hashed in sorted order and a collision is resolved by linear
  probing of the hash value; an ``@id`` annotation fixes an id (its prefix byte
  is added when missing).
* **names** -- the fully qualified control-plane names of
  :func:`sfclab.p4.names.qualified_objects`; TNA prefixes tables and extern
  instances with the pipeline's name.  **Aliases** are the shortest suffix of
  dot-separated components that no other control-plane symbol shares.
* **what appears** -- like p4c's front end, only tables that are applied and
  actions that a table lists or the apply block calls; an action called only
  from other actions is inlined away.  ``NoAction`` is core.p4's.
* match fields are named after the key expression (``hdr.ipv4.$valid$`` for
  ``isValid()``) unless ``@name`` says otherwise; field, parameter and
  packet-metadata ids count from 1, around any ``@id``.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''
... #include <core.p4>
... #include <v1model.p4>
... header h_t { bit<32> dst; }
... struct hs { h_t ipv4; }
... control ingress(inout hs hdr, inout standard_metadata_t sm) {
...     action fwd(bit<9> port) { sm.egress_spec = port; }
...     table route { key = { hdr.ipv4.dst: lpm; } actions = { fwd; NoAction; } }
...     apply { route.apply(); }
... }
... V1Switch(P(), V(), ingress(), E(), C(), D()) main;  // other blocks elided''')
>>> info = build_p4info(prog)
>>> t = info.tables[0]
>>> t.preamble.name, hex(t.preamble.id), t.match_fields[0].name, t.size
('ingress.route', '0x26abf88', 'hdr.ipv4.dst', 1024)
>>> [(a.preamble.alias, a.preamble.id) for a in info.actions]
[('NoAction', 21257015), ('fwd', 19967260)]
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from finsy.proto import p4i as p4info_pb2
from finsy.proto import p4t as p4types_pb2
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message, text_format
from google.protobuf import message_factory

from ..errors import CompileError, SfclabError
from ..p4 import ast as A
from ..p4.names import QualifiedObject, control_instances, local_name, qualified_objects

__all__ = [
    "build_p4info", "p4info_text", "p4info_json", "p4info_from_text", "compare_p4info",
    "jenkins_hash", "probe_id", "SymbolTable", "field_ids", "PREFIX", "TNA_PREFIX",
    "ARCHES",
]

#: ``p4info.proto``'s ``P4Ids.Prefix`` (the top byte of an id).
PREFIX = {"action": 0x01, "table": 0x02, "value_set": 0x03, "controller_header": 0x04,
          "action_profile": 0x11, "counter": 0x12, "direct_counter": 0x13, "meter": 0x14,
          "direct_meter": 0x15, "register": 0x16, "digest": 0x17}

#: bf-p4c's ``barefoot/p4info.proto`` prefixes (the revision with DirectRegister),
#: keyed by TNA extern type: (prefix, P4Info ``extern_type_name``).
TNA_PREFIX = {"ActionProfile": (0x81, "ActionProfile"), "Counter": (0x83, "Counter"),
              "DirectCounter": (0x84, "DirectCounter"), "Meter": (0x85, "Meter"),
              "DirectMeter": (0x86, "DirectMeter"), "Register": (0x8B, "Register"),
              "DirectRegister": (0x8C, "DirectRegister"), "Digest": (0x8E, "Digest"),
              "Hash": (0x8F, "DynHash")}

#: Architectures this generator knows.
ARCHES = ("v1model", "tna")

_DEFAULT_SIZE = {"v1model": 1024, "tna": 512}
_CORE_ERRORS = ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
                "ParserTimeout", "ParserInvalidArgument")
_TNA_ERRORS = ("CounterRange", "Timeout", "PhvOwner", "MultiWrite", "IbufOverflow",
               "IbufUnderflow")
_NOACTION_ANNOTATIONS = ("@corelib", '@noWarn("unused")')
_MATCH = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
          "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
          "optional": p4info_pb2.MatchField.OPTIONAL}
_TNA_UNSUPPORTED = {"ActionSelector", "Lpf", "DirectLpf", "Wred", "DirectWred", "RegisterParam",
                    "Snapshot"}
_V1_EXTERNS = {"counter", "direct_counter", "meter", "direct_meter", "register",
               "action_profile", "action_selector"}


# --- ids and aliases -------------------------------------------------------------------------

def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash of *name*'s bytes, as p4c computes it (32 bits).

    >>> jenkins_hash("NoAction") & 0xffffff == 21257015 & 0xffffff
    True
    """
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


def probe_id(source: int, prefix: int, taken: set[int] | frozenset[int]) -> int:
    """The first free id ``prefix << 24 | (value & 0xffffff)`` for value = *source*,
    *source* + 1, ... (p4c's linear probing of the hash value)."""
    for step in range(1 << 24):
        candidate = (prefix << 24) | ((source + step) & 0xFFFFFF)
        if candidate not in taken:
            return candidate
    raise CompileError(f"no free P4Runtime id is left for resource type 0x{prefix:02x}")


class SymbolTable:
    """Control-plane symbols by resource type: their ids and aliases.

    Add every symbol first (:meth:`add`), then :meth:`assign` ids: names without
    an ``@id`` are hashed in sorted order, colliding ones probe onwards.

    >>> st = SymbolTable()
    >>> st.add(0x02, "c.t"); st.add(0x02, "d.t"); st.add(0x01, "c.a"); st.assign()
    >>> st.alias("c.t"), st.alias("c.a"), st.id(0x02, "c.t") >> 24
    ('c.t', 'a', 2)
    """

    def __init__(self) -> None:
        self._ids: dict[int, dict[str, int | None]] = {}
        self._taken: set[int] = set()
        self._suffixes: Counter[tuple[str, ...]] = Counter()
        self._names: set[str] = set()

    def add(self, prefix: int, name: str, user_id: int | None = None, where: str = "") -> None:
        """Record *name* (once per type); *user_id* is its ``@id``, if any."""
        table = self._ids.setdefault(prefix, {})
        if name in table:
            return
        table[name] = self._user_id(prefix, user_id, where or name)
        if name not in self._names:
            self._names.add(name)
            parts = tuple(name.split("."))
            for k in range(1, len(parts) + 1):
                self._suffixes[parts[-k:]] += 1

    def _user_id(self, prefix: int, user_id: int | None, where: str) -> int | None:
        if user_id is None:
            return None
        top = user_id & 0xFF000000
        if top and top != prefix << 24:
            raise CompileError(f"{where}: @id {user_id:#x} has the wrong 8-bit prefix "
                               f"(resource type 0x{prefix:02x})")
        full = user_id | (prefix << 24)
        if full in self._taken:
            raise CompileError(f"{where}: @id {user_id} is assigned to multiple declarations")
        self._taken.add(full)
        return full

    def assign(self) -> None:
        """Give every symbol without an ``@id`` its hashed id."""
        for prefix in sorted(self._ids):
            table = self._ids[prefix]
            for name in sorted(n for n, i in table.items() if i is None):
                table[name] = probe_id(jenkins_hash(name), prefix, self._taken)
                self._taken.add(table[name])

    def id(self, prefix: int, name: str) -> int:
        """The id of symbol *name* of resource type *prefix*."""
        value = self._ids.get(prefix, {}).get(name)
        if value is None:
            raise CompileError(f"internal: no id for '{name}' (type 0x{prefix:02x})")
        return value

    def alias(self, name: str) -> str:
        """The shortest suffix of *name*'s components that no other symbol shares."""
        parts = tuple(name.split("."))
        for k in range(1, len(parts) + 1):
            if self._suffixes[parts[-k:]] < 2:
                return ".".join(parts[-k:])
        return name


def field_ids(user_ids: Sequence[int | None], where: str = "") -> list[int]:
    """Ids of match fields, action parameters or packet-metadata fields in order:
    the ``@id`` where given, else counting from 1 past the ids taken (p4c's
    ``FieldIdAllocator``).

    >>> field_ids([None, 1, None])
    [2, 1, 3]
    """
    taken: set[int] = set()
    for uid in user_ids:
        if uid is None:
            continue
        if uid == 0 or uid in taken:
            raise CompileError(f"{where}: @id {uid} is " + ("not valid" if uid == 0 else
                                                          "used multiple times"))
        taken.add(uid)
    out, index = [], 1
    for uid in user_ids:
        if uid is not None:
            out.append(uid)
            index += 1
            continue
        while index in taken:
            index += 1
        out.append(index)
        taken.add(index)
    return out


# --- small helpers on the AST ------------------------------------------------------------------

def _where(node: A.Node, what: str) -> str:
    pos = getattr(node, "pos", None)
    return f"{pos}: {what}" if pos is not None else what


def _annotation(node: A.Node, name: str) -> A.Annotation | None:
    return next((a for a in getattr(node, "annotations", ()) if a.name == name), None)


def _string_body(a: A.Annotation | None) -> str | None:
    if a is None or not a.body:
        return None
    m = re.fullmatch(r'\s*"((?:[^"\\]|\\.)*)"\s*', a.body)
    return m.group(1) if m else None


def _user_id(node: A.Node) -> int | None:
    a = _annotation(node, "id")
    if a is None:
        return None
    try:
        return int((a.body or "").strip(), 0)
    except ValueError:
        raise CompileError(_where(node, f"@id({a.body}) should be an unsigned integer")) from None


def _annotation_text(a: A.Annotation) -> str:
    return f"@{a.name}" + (f"({a.body})" if a.body is not None else "")


def _add_annotations(msg: message.Message, node: A.Node | None) -> None:
    """p4c's ``addAnnotations``/``addDocumentation``: every annotation but @name/@id,
    with @brief/@description going to ``doc``."""
    for a in getattr(node, "annotations", ()) if node is not None else ():
        if a.name in ("name", "id"):
            continue
        if a.name in ("brief", "description"):
            text = _string_body(a)
            if text is not None and hasattr(msg, "doc"):
                setattr(msg.doc, a.name, text)
            continue
        msg.annotations.append(_annotation_text(a))


def _set_preamble(pre: p4info_pb2.Preamble, ident: int, name: str, alias: str,
                  node: A.Node | None) -> None:
    pre.id, pre.name, pre.alias = ident, name, alias
    _add_annotations(pre, node)


def _names_in(node: A.Node) -> set[str]:
    return {n.name for n in A.walk(node) if isinstance(n, A.Name)}


def _calls_in(node: A.Node) -> Iterator[A.Call]:
    return (n for n in A.walk(node) if isinstance(n, A.Call))


# --- types ---------------------------------------------------------------------------------------

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
    out: list[A.Node] = [A.Typedef(A.BitType(9), n) for n in ("PortId_t",)]
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
    from ..p4.printer import type_p4
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
    from ..p4.printer import expr_p4
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


# --- type specs (p4c's TypeSpecConverter) ---------------------------------------------------

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


# --- the program as p4c's front end leaves it ----------------------------------------------

@dataclass
class _Ctl:
    """One running control: where it is, what it declares, what survives the front end."""

    path: tuple[str, ...]
    decl: A.ControlDecl
    objects: list[QualifiedObject] = field(default_factory=list)
    tables: list[QualifiedObject] = field(default_factory=list)
    actions: list[tuple[str, A.ActionDecl]] = field(default_factory=list)


@dataclass
class _Model:
    arch: str
    prog: A.Program
    types: _Types
    ctls: list[_Ctl]
    globals: dict[str, tuple[str, A.ActionDecl]]
    main: A.Instance
    digests: dict[tuple[str, ...], list[_Digest]] = field(default_factory=dict)


def _noaction() -> A.ActionDecl:
    annots = (A.Annotation("corelib"), A.Annotation("noWarn", '"unused"'))
    return A.ActionDecl("NoAction", (), A.Block(), annots)


def _find_main(prog: A.Program) -> A.Instance:
    controls = {c.name for c in prog.controls()}
    externs = {d.name for d in prog.decls if isinstance(d, A.ExternDecl)}
    packages = [i for i in prog.find(A.Instance)
                if isinstance(i.type, A.NamedType) and i.type.name not in controls | externs]
    main = next((i for i in packages if i.name == "main"), None)
    if main is None:
        raise CompileError("the program has no 'main' package instance (V1Switch(...) main; or "
                           "Switch(pipe) main;), so it has no control-plane API",
                           hint="add the architecture's package instance named 'main'")
    return main


def _model(prog: A.Program, arch: str) -> _Model:
    main = _find_main(prog)
    types = _Types(prog, arch)
    objects = qualified_objects(prog)       # p4c's names, TNA's pipeline prefix included
    ctls = {path: _Ctl(path, decl) for path, decl in control_instances(prog)}
    for obj in objects:
        if obj.control is not None and obj.path in ctls:
            ctls[obj.path].objects.append(obj)
    globals_ = {_decl_name(o): (o.name, o.decl) for o in objects
                if o.kind == "action" and o.control is None}
    globals_.setdefault("NoAction", ("NoAction", _noaction()))
    model = _Model(arch, prog, types, list(ctls.values()), globals_, main)
    for ctl in model.ctls:
        _survivors(model, ctl)
    if arch == "v1model":
        model.digests = _v1_digests(model)
    return model


def _unpiped(obj: QualifiedObject) -> str:
    """The name without bf-p4c's pipeline prefix (a register's data field is named so)."""
    if obj.path and not obj.name.startswith(obj.path[0] + "."):
        return obj.name[obj.name.find(obj.path[0] + "."):]
    return obj.name


def _survivors(model: _Model, ctl: _Ctl) -> None:
    """The tables p4c keeps (applied ones) and the actions that survive inlining."""
    applied = _names_in(ctl.decl.apply)
    ctl.tables = [o for o in ctl.objects if o.kind == "table" and _decl_name(o) in applied]
    refs: list[str] = []
    for t in ctl.tables:
        refs += _action_refs(t.decl)  # type: ignore[arg-type]
    refs += [c.func.name for c in _calls_in(ctl.decl.apply) if isinstance(c.func, A.Name)]
    local = {_decl_name(o): o for o in ctl.objects if o.kind == "action"}
    wanted = set(refs)
    used_globals = [r for r in dict.fromkeys(refs) if r not in local and r in model.globals]
    ctl.actions = [model.globals[r] for r in used_globals]
    ctl.actions += [(o.name, o.decl) for n, o in local.items() if n in wanted]  # type: ignore[misc]


def _action_refs(t: A.TableDecl) -> list[str]:
    refs = [r.name for r in t.actions]
    if t.default_action is not None:
        refs.append(t.default_action.name)
    refs += [e.action.name for e in t.entries or ()]
    return refs


def _resolve_action(model: _Model, ctl: _Ctl, name: str, where: str) -> tuple[str, A.ActionDecl]:
    for qname, decl in ctl.actions:
        if decl.name == name:
            return qname, decl
    raise CompileError(f"{where}: unknown action '{name}'")


def _extern(ctl: _Ctl, name: str) -> QualifiedObject | None:
    return next((o for o in ctl.objects if o.kind == "extern" and _decl_name(o) == name), None)


def _decl_name(obj: QualifiedObject) -> str:
    return obj.decl.name  # type: ignore[attr-defined]


def _extern_type(obj: QualifiedObject) -> str:
    t = obj.decl.type  # type: ignore[attr-defined]
    return t.name if isinstance(t, A.NamedType) else ""


def _expanded_calls(block: A.Node, ctl: _Ctl, model: _Model,
                    seen: frozenset[str] = frozenset()) -> Iterator[A.Call]:
    """Calls in *block*, following calls of actions into their bodies (p4c inlines them)."""
    local = {_decl_name(o): o.decl for o in ctl.objects if o.kind == "action"}
    for call in _calls_in(block):
        yield call
        if isinstance(call.func, A.Name) and call.func.name not in seen:
            callee = local.get(call.func.name) or model.globals.get(call.func.name, (0, None))[1]
            if isinstance(callee, A.ActionDecl):
                yield from _expanded_calls(callee.body, ctl, model, seen | {call.func.name})


def _ctl_calls(ctl: _Ctl, model: _Model) -> Iterator[tuple[A.Call, A.ActionDecl | None]]:
    """Every call p4c's ``analyzeControl`` sees: in surviving actions (with the actions
    they call inlined), then in the apply block (whose action calls stay calls)."""
    for _, action in ctl.actions:
        for call in _expanded_calls(action.body, ctl, model, frozenset({action.name})):
            yield call, action
    for call in _calls_in(ctl.decl.apply):
        yield call, None


# --- collecting symbols ----------------------------------------------------------------------

@dataclass
class _Digest:
    name: str
    type_arg: A.Node | None
    items: tuple[A.Node, ...]
    where: str


def _v1_digests(model: _Model) -> dict[tuple[str, ...], list[_Digest]]:
    """The ``digest<T>()`` calls of every running control, once per data type; a digest
    of a list without a named type is ``digest_N`` as p4c calls it."""
    out: dict[tuple[str, ...], list[_Digest]] = {}
    unnamed = 0
    for ctl in model.ctls:
        found: dict[str, _Digest] = {}
        for call, action in _ctl_calls(ctl, model):
            if not (isinstance(call.func, A.Name) and call.func.name == "digest"):
                continue
            d = _v1_digest(model, ctl, call, action)
            if not d.name:
                d.name, unnamed = f"digest_{unnamed}", unnamed + 1
            found.setdefault(d.name, d)
        out[ctl.path] = list(found.values())
    return out


def _v1_digest(model: _Model, ctl: _Ctl, call: A.Call, action: A.ActionDecl | None) -> _Digest:
    where = _where(call, "digest()")
    if len(call.args) != 2:
        raise CompileError(f"{where}: digest takes a receiver and the data")
    scope = _Scope.of(model.types, ctl.decl, action)
    data = call.args[1]
    t = call.type_args[0] if call.type_args else None
    if t is None and not isinstance(data, A.ListExpr):
        t = scope.type_of(data)
    decl = model.types.decl(t) if t is not None else None
    if isinstance(decl, (A.StructDecl, A.HeaderDecl)):
        return _Digest(local_name(decl), t, (), where)
    if t is not None:
        return _Digest("", None, (t,), where)
    items = data.items if isinstance(data, A.ListExpr) else (data,)
    return _Digest("", None, tuple(scope.type_of(x) for x in items), where)


def _collect(model: _Model) -> SymbolTable:
    st = SymbolTable()
    for ctl in model.ctls:
        for qname, decl in ctl.actions:
            st.add(PREFIX["action"], qname, _user_id(decl), _where(decl, f"action {qname}"))
        for t in ctl.tables:
            st.add(PREFIX["table"], t.name, _user_id(t.decl),
                   _where(t.decl, f"table {t.name}"))
        _collect_externs(model, ctl, st)
    for h in _controller_headers(model.prog):
        st.add(PREFIX["controller_header"], local_name(h), _user_id(h), _where(h, h.name))
    st.assign()
    return st


def _collect_externs(model: _Model, ctl: _Ctl, st: SymbolTable) -> None:
    if model.arch == "v1model":
        for obj in ctl.objects:
            kind = _v1_kind(obj)
            if kind is not None:
                st.add(PREFIX[kind], obj.name, _user_id(obj.decl), _where(obj.decl, obj.name))
        for d in model.digests.get(ctl.path, ()):
            st.add(PREFIX["digest"], d.name, None, d.where)
        return
    for obj in ctl.objects:
        tna = _tna_kind(obj)
        if tna is not None:
            st.add(TNA_PREFIX[tna][0], obj.name, _user_id(obj.decl),
                   _where(obj.decl, obj.name))


def _v1_kind(obj: QualifiedObject) -> str | None:
    if obj.kind != "extern":
        return None
    t = _extern_type(obj)
    return {"counter": "counter", "direct_counter": "direct_counter", "meter": "meter",
            "direct_meter": "direct_meter", "register": "register",
            "action_profile": "action_profile",
            "action_selector": "action_profile"}.get(t)


def _tna_kind(obj: QualifiedObject) -> str | None:
    if obj.kind != "extern":
        return None
    t = _extern_type(obj)
    if t in _TNA_UNSUPPORTED:
        raise CompileError(_where(obj.decl, f"{t} '{obj.name}' is not supported by sfclab's "
                                  "TNA P4Info generator"),
                           hint="use bf-p4c's P4Info for this program")
    return t if t in TNA_PREFIX else None


def _controller_headers(prog: A.Program) -> list[A.HeaderDecl]:
    return [h for h in prog.find(A.HeaderDecl) if _annotation(h, "controller_header")]


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
    "DynHash": [("type_spec", 1, ".p4.config.v1.P4DataTypeSpec", False),
                ("hash_width", 3, "int32", False)],
}
_SPEC_ENUMS = {"CounterSpec": {"Unit": ["UNSPECIFIED", "BYTES", "PACKETS", "PACKETS_AND_BYTES"]},
               "MeterSpec": {"Unit": ["UNSPECIFIED", "BYTES", "PACKETS"],
                             "Type": ["COLOR_UNAWARE", "COLOR_AWARE"]}}
_SCALARS = {"uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
            "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
            "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
            "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING}


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


# --- emitting P4Info -----------------------------------------------------------------------------

_COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}
_TNA_COUNTER_UNITS = {"PACKETS": "PACKETS", "BYTES": "BYTES",
                      "PACKETS_AND_BYTES": "PACKETS_AND_BYTES"}


class _Emitter:
    """Writes the P4Info message for a collected :class:`_Model`."""

    def __init__(self, model: _Model, symbols: SymbolTable) -> None:
        self.m, self.st, self.types = model, symbols, model.types
        self.info = p4info_pb2.P4Info()
        self.info.type_info.SetInParent()
        self.specs = _TypeSpecs(model.types, self.info.type_info)
        self.done_actions: set[str] = set()

    def build(self) -> p4info_pb2.P4Info:
        self._pkg_info()
        for ctl in self.m.ctls:
            for qname, decl in ctl.actions:
                self._action(qname, decl)
            for d in self.m.digests.get(ctl.path, ()):
                self._digest(d)
        for ctl in self.m.ctls:
            for obj in ctl.objects:
                if obj.kind == "table" and obj in ctl.tables:
                    self._table(ctl, obj)
                elif obj.kind == "extern":
                    self._extern(ctl, obj)
        for h in _controller_headers(self.m.prog):
            self._controller_header(h)
        return self.info

    # package, actions, digests, controller headers

    def _pkg_info(self) -> None:
        pkg = self.info.pkg_info
        pkg.arch = self.m.arch
        for a in self.m.main.annotations:
            if a.name == "pkginfo":
                self._pkginfo_kv(pkg, a)
            elif a.name not in ("name", "id", "brief", "description"):
                pkg.annotations.append(_annotation_text(a))

    def _pkginfo_kv(self, pkg: p4info_pb2.PkgInfo, a: A.Annotation) -> None:
        for key, value in re.findall(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"', a.body or ""):
            if key in ("name", "version", "organization", "contact", "url", "arch"):
                setattr(pkg, key, value)

    def _action(self, qname: str, decl: A.ActionDecl) -> None:
        if qname in self.done_actions or _annotation(decl, "hidden"):
            return
        self.done_actions.add(qname)
        a = self.info.actions.add()
        _set_preamble(a.preamble, self.st.id(PREFIX["action"], qname), qname,
                      self.st.alias(qname), decl)
        where = _where(decl, f"action {qname}")
        ids = field_ids([_user_id(p) for p in decl.params], where)
        for p, pid in zip(decl.params, ids):
            self._param(a.params.add(), p, pid, f"{where}, parameter '{p.name}'")

    def _param(self, pm: p4info_pb2.Action.Param, p: A.Param, pid: int, where: str) -> None:
        pm.id, pm.name = pid, local_name(p)
        _add_annotations(pm, p)
        self.specs.spec(p.type, where)
        d = self.types.decl(p.type)
        if isinstance(d, A.EnumDecl) and d.type is None:
            pm.type_name.name = local_name(d)
        else:
            pm.bitwidth = self.types.width(p.type, where)

    def _digest(self, d: _Digest) -> None:
        msg = self.info.digests.add()
        _set_preamble(msg.preamble, self.st.id(PREFIX["digest"], d.name), d.name,
                      self.st.alias(d.name), None)
        if d.type_arg is not None:
            msg.type_spec.CopyFrom(self.specs.spec(d.type_arg, d.where))
        else:
            msg.type_spec.CopyFrom(self.specs.tuple_spec(d.items, d.where))

    def _controller_header(self, h: A.HeaderDecl) -> None:
        if _annotation(h, "hidden"):
            return
        where = _where(h, f"header {h.name}")
        name = _string_body(_annotation(h, "controller_header"))
        if not name:
            raise CompileError(f'{where}: @controller_header needs a name, as in '
                               f'@controller_header("packet_in")')
        msg = self.info.controller_packet_metadata.add()
        _set_preamble(msg.preamble, self.st.id(PREFIX["controller_header"], local_name(h)),
                      name, name, h)
        flat = list(_flatten(self.types, h.fields, "", where))
        ids = field_ids([_user_id(f) for f in h.fields] if len(flat) == len(h.fields)
                        else [None] * len(flat), where)
        for (fname, width, _), fid, f in zip(flat, ids, _pad(h.fields, len(flat))):
            if f is not None and _annotation(f, "hidden"):
                continue
            md = msg.metadata.add()
            md.id, md.name, md.bitwidth = fid, fname, width
            _add_annotations(md, f)

    # tables

    def _table(self, ctl: _Ctl, obj: QualifiedObject) -> None:
        t: A.TableDecl = obj.decl  # type: ignore[assignment]
        if _annotation(t, "hidden"):
            return
        name = obj.name
        where = _where(t, f"table {obj.name}")
        msg = self.info.tables.add()
        _set_preamble(msg.preamble, self.st.id(PREFIX["table"], name), name,
                      self.st.alias(name), t)
        self._match_fields(msg, t, _Scope.of(self.types, ctl.decl), where)
        self._action_refs(msg, ctl, t, where)
        self._default_action(msg, ctl, t, where)
        msg.size = t.size or _DEFAULT_SIZE[self.m.arch]
        if t.entries is not None:
            msg.is_const_table = t.entries_const
            msg.has_initial_entries = bool(t.entries)
        if self.m.arch == "v1model":
            self._v1_table_properties(ctl, t, msg, name, where)
        else:
            self._tna_table_properties(ctl, t, msg, name, where)

    def _match_fields(self, msg: p4info_pb2.Table, t: A.TableDecl, scope: _Scope,
                      where: str) -> None:
        ids = field_ids([_user_id(k) for k in t.keys], where)
        for k, kid in zip(t.keys, ids):
            if k.match_kind == "selector":
                continue
            kwhere = f"{where}, key '{_expr_text(k.expr)}'"
            name = _string_body(_annotation(k, "name")) or _key_name(k.expr, scope)
            if name is None:
                raise CompileError(f"{kwhere}: a complex key expression needs a @name annotation",
                                   hint='write it as  expr : exact @name("a_name");')
            ktype = scope.type_of(k.expr)
            mf = msg.match_fields.add()
            mf.id, mf.name = kid, name
            _add_annotations(mf, k)
            mf.bitwidth = self.types.width(ktype, kwhere)
            self.specs.spec(ktype, kwhere)
            if k.match_kind in _MATCH:
                mf.match_type = _MATCH[k.match_kind]
            else:
                mf.other_match_type = k.match_kind

    def _action_refs(self, msg: p4info_pb2.Table, ctl: _Ctl, t: A.TableDecl, where: str) -> None:
        for ref in t.actions:
            qname, _ = _resolve_action(self.m, ctl, ref.name, where)
            ar = msg.action_refs.add()
            ar.id = self.st.id(PREFIX["action"], qname)
            _add_annotations(ar, ref)
            table_only, default_only = (_annotation(ref, n) is not None
                                        for n in ("tableonly", "defaultonly"))
            if table_only and default_only:
                raise CompileError(f"{where}: action '{ref.name}' is both @tableonly and "
                                   "@defaultonly")
            ar.scope = (p4info_pb2.ActionRef.TABLE_ONLY if table_only else
                        p4info_pb2.ActionRef.DEFAULT_ONLY if default_only else
                        p4info_pb2.ActionRef.TABLE_AND_DEFAULT)

    def _default_action(self, msg: p4info_pb2.Table, ctl: _Ctl, t: A.TableDecl,
                        where: str) -> None:
        ref = t.default_action
        if ref is None:
            return
        qname, decl = _resolve_action(self.m, ctl, ref.name, where)
        aid = self.st.id(PREFIX["action"], qname)
        if t.default_const:
            msg.const_default_action_id = aid
        call = msg.initial_default_action
        call.action_id = aid
        args = ref.args or ()
        if len(args) > len(decl.params):
            raise CompileError(f"{where}: default action {ref.name} has too many arguments")
        ids = field_ids([_user_id(p) for p in decl.params], where)
        for p, pid, arg in zip(decl.params, ids, args):
            self._default_arg(call.arguments.add(), p, pid, arg, f"{where}, default action")

    def _default_arg(self, out: p4info_pb2.TableActionCall.Argument, p: A.Param, pid: int,
                     arg: A.Node, where: str) -> None:
        value = _const_int(arg, self.types)
        if value is None:
            raise CompileError(_where(arg, f"{where}: argument '{p.name}' is not a "
                                      "compile-time constant"))
        out.param_id = pid
        out.value = _bytes(value, self.types.width(p.type, where), f"{where}, '{p.name}'")

    def _table_extern(self, ctl: _Ctl, t: A.TableDecl, prop: str,
                      kinds: tuple[str, ...], where: str) -> QualifiedObject | None:
        value = t.property(prop)
        if value is None:
            return None
        if not isinstance(value, A.Name):
            raise CompileError(f"{where}: '{prop}' must name an extern instance declared in the "
                               "control (an anonymous instance has no control-plane name)")
        obj = _extern(ctl, value.name)
        if obj is None or _extern_type(obj) not in kinds:
            raise CompileError(f"{where}: '{prop} = {value.name}' is not a "
                               f"{' or '.join(kinds)} instance of this control")
        return obj

    # v1model externs

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

    def _extern(self, ctl: _Ctl, obj: QualifiedObject) -> None:
        if self.m.arch == "tna":
            self._tna_extern(ctl, obj)
            return
        kind = _v1_extern_name(obj)
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        where = _where(inst, f"{kind} {obj.name}")
        if kind == "counter":
            msg = self.info.counters.add()
            self._sized(msg, obj, PREFIX["counter"], where)
            self._unit(msg.spec, inst, 1, True, where)
        elif kind == "meter":
            msg = self.info.meters.add()
            self._sized(msg, obj, PREFIX["meter"], where)
            self._unit(msg.spec, inst, 1, False, where)
        elif kind == "register":
            self._v1_register(obj, where)
        elif kind in ("action_profile", "action_selector"):
            self._v1_profile(ctl, obj, kind == "action_selector", where)

    def _sized(self, msg: message.Message, obj: QualifiedObject, prefix: int, where: str,
               size_arg: int = 0) -> None:
        inst: A.Instance = obj.decl  # type: ignore[assignment]
        _set_preamble(msg.preamble, self.st.id(prefix, obj.name), obj.name,
                      self.st.alias(obj.name), inst)
        msg.size = self._size(inst, size_arg, where)

    def _size(self, inst: A.Instance, index: int, where: str) -> int:
        size = _const_int(inst.args[index], self.types) if len(inst.args) > index else None
        if size is None or size < 0:
            raise CompileError(f"{where}: the size must be a non-negative compile-time constant")
        return size

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

    def _profile_tables(self, obj: QualifiedObject, prefix: int) -> list[int]:
        out = []
        for ctl in self.m.ctls:
            for t in ctl.tables if ctl.path == obj.path else ():
                impl = t.decl.property("implementation")  # type: ignore[attr-defined]
                if isinstance(impl, A.Name) and impl.name == _decl_name(obj):
                    out.append(self.st.id(prefix, t.name))
        return out

    # TNA externs

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


def _v1_extern_name(obj: QualifiedObject) -> str:
    return _extern_type(obj) if _extern_type(obj) in _V1_EXTERNS else ""


def _pad(items: Sequence[A.Field], n: int) -> list[A.Field | None]:
    return list(items) if len(items) == n else [None] * n


# --- public API --------------------------------------------------------------------------------

def build_p4info(prog: A.Program, *, arch: str = "v1model") -> p4info_pb2.P4Info:
    """The P4Info p4c (v1model) or bf-p4c (TNA) would generate for *prog*.

    Raises :class:`~sfclab.errors.CompileError` for what P4Runtime cannot
    express (a complex key without ``@name``, an anonymous table property, a
    TNA extern sfclab does not describe ...)."""
    if not isinstance(prog, A.Program):
        raise CompileError(f"build_p4info needs a parsed P4 program (sfclab.p4.parse_p4), "
                           f"not {type(prog).__name__}")
    if arch not in ARCHES:
        raise CompileError(f"no P4Info generator for architecture '{arch}'",
                           hint=f"use one of: {', '.join(ARCHES)}")
    try:
        model = _model(prog, arch)
        return _Emitter(model, _collect(model)).build()
    except SfclabError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError) as e:
        raise CompileError(f"cannot generate P4Info for this program ({type(e).__name__}: {e})",
                           hint="set SFCLAB_TRACEBACK=1 and report it") from e


_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


def p4info_text(info: p4info_pb2.P4Info, *, header: bool = True) -> str:
    """*info* in protobuf text format, as ``p4c --p4runtime-files x.txt`` writes it
    (TNA's ``Any`` payloads expanded)."""
    body = text_format.MessageToString(info, descriptor_pool=_barefoot_pool())
    return (_HEADER if header else "") + body


def p4info_json(info: p4info_pb2.P4Info) -> str:
    """*info* as protobuf JSON (``--p4runtime-files x.json``)."""
    return json_format.MessageToJson(info, descriptor_pool=_barefoot_pool()) + "\n"


def p4info_from_text(text: str) -> p4info_pb2.P4Info:
    """Parse a text-format P4Info (ours or p4c's); raises :class:`CompileError` if bad."""
    info = p4info_pb2.P4Info()
    try:
        text_format.Parse(text, info, descriptor_pool=_barefoot_pool())
    except text_format.ParseError as e:
        raise CompileError(f"not a text-format P4Info: {e}") from None
    return info


# --- comparing two P4Infos ------------------------------------------------------------------

_KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
          "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests")


def compare_p4info(ours: p4info_pb2.P4Info, theirs: p4info_pb2.P4Info) -> list[str]:
    """Differences in names, ids, aliases, match fields and parameters between
    *ours* and *theirs* (e.g. p4c's), one sentence each; empty when they agree."""
    out: list[str] = []
    if ours.pkg_info.arch != theirs.pkg_info.arch:
        out.append(f"arch: '{ours.pkg_info.arch}' here, '{theirs.pkg_info.arch}' there")
    names = (_id_names(ours), _id_names(theirs))
    for kind in _KINDS:
        out += _compare_kind(kind, _by_name(getattr(ours, kind)),
                             _by_name(getattr(theirs, kind)), names)
    out += _compare_kind("externs", _externs(ours), _externs(theirs), names)
    return out


def _by_name(items: Iterable[message.Message]) -> dict[str, message.Message]:
    return {x.preamble.name: x for x in items}


def _externs(info: p4info_pb2.P4Info) -> dict[str, message.Message]:
    return {f"{e.extern_type_name} {i.preamble.name}": i
            for e in info.externs for i in e.instances}


def _id_names(info: p4info_pb2.P4Info) -> dict[int, str]:
    out = {x.preamble.id: x.preamble.name for kind in _KINDS for x in getattr(info, kind)}
    out.update({i.preamble.id: i.preamble.name for e in info.externs for i in e.instances})
    return out


def _compare_kind(kind: str, ours: dict[str, message.Message], theirs: dict[str, message.Message],
                  names: tuple[dict[int, str], dict[int, str]]) -> list[str]:
    what = kind.rstrip("s").replace("_", " ")
    out = [f"{what} '{n}' is only here" for n in ours if n not in theirs]
    out += [f"{what} '{n}' is missing here" for n in theirs if n not in ours]
    for n in ours.keys() & theirs.keys():
        a, b = ours[n], theirs[n]
        out += [f"{what} '{n}': {d}" for d in _compare_one(kind, a, b, names)]
    return sorted(out)


def _diff(label: str, a: object, b: object) -> list[str]:
    return [] if a == b else [f"{label} {a!r} here, {b!r} there"]


def _compare_one(kind: str, a: message.Message, b: message.Message,
                 names: tuple[dict[int, str], dict[int, str]]) -> list[str]:
    out = _diff("id", hex(a.preamble.id), hex(b.preamble.id))
    out += _diff("alias", a.preamble.alias, b.preamble.alias)
    if kind == "tables":
        out += _compare_table(a, b, names)
    elif kind == "actions":
        out += _compare_fields("parameter", a.params, b.params)
    elif kind == "controller_packet_metadata":
        out += _compare_fields("metadata", a.metadata, b.metadata)
    for f in ("size", "type_spec", "spec", "with_selector"):
        if f in a.DESCRIPTOR.fields_by_name:
            out += _diff(f, _field_text(a, f), _field_text(b, f))
    if kind == "externs":
        out += _diff("payload", a.info.type_url, b.info.type_url)
    if "direct_table_id" in a.DESCRIPTOR.fields_by_name:
        out += _diff("direct table", names[0].get(a.direct_table_id),
                     names[1].get(b.direct_table_id))
    return out


def _field_text(m: message.Message, f: str) -> str:
    v = getattr(m, f)
    return text_format.MessageToString(v, as_one_line=True) if isinstance(
        v, message.Message) else str(v)


def _compare_fields(label: str, a: Iterable[message.Message],
                    b: Iterable[message.Message]) -> list[str]:
    ours, theirs = {x.id: x for x in a}, {x.id: x for x in b}
    out = [f"{label} {i} ({ours[i].name}) is only here" for i in ours if i not in theirs]
    out += [f"{label} {i} ({theirs[i].name}) is missing here" for i in theirs if i not in ours]
    for i in sorted(ours.keys() & theirs.keys()):
        x, y = ours[i], theirs[i]
        out += [f"{label} {i}: {d}" for d in _diff("name", x.name, y.name)
                + _diff("bitwidth", x.bitwidth, y.bitwidth)]
        if label == "match field":
            out += [f"{label} {i}: {d}" for d in _diff(
                "match type", x.match_type or x.other_match_type,
                y.match_type or y.other_match_type)]
    return out


def _compare_table(a: p4info_pb2.Table, b: p4info_pb2.Table,
                   names: tuple[dict[int, str], dict[int, str]]) -> list[str]:
    out = _compare_fields("match field", a.match_fields, b.match_fields)
    refs = [{(n.get(r.id, hex(r.id)), r.scope) for r in t.action_refs}
            for t, n in ((a, names[0]), (b, names[1]))]
    out += _diff("actions", sorted(refs[0]), sorted(refs[1]))
    out += _diff("const default action", names[0].get(a.const_default_action_id),
                 names[1].get(b.const_default_action_id))
    out += _diff("implementation", names[0].get(a.implementation_id),
                 names[1].get(b.implementation_id))
    out += _diff("direct resources", sorted(names[0].get(i, hex(i)) for i in a.direct_resource_ids),
                 sorted(names[1].get(i, hex(i)) for i in b.direct_resource_ids))
    out += _diff("is_const_table", a.is_const_table, b.is_const_table)
    return out
