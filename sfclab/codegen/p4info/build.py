"""Building P4Info: the symbols and their ids, the :class:`_Emitter` that writes the
package, actions, digests, controller headers, tables and externs, and
:func:`build_p4info`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from finsy.proto import p4i as p4info_pb2
from google.protobuf import message

from ...errors import CompileError, SfclabError
from ...p4 import ast as A
from ...p4.names import QualifiedObject, local_name
from .astutil import (_add_annotations, _annotation, _annotation_text, _set_preamble,
                      _string_body, _user_id, _where)
from .ids import PREFIX, TNA_PREFIX, SymbolTable, field_ids
from .model import (_controller_headers, _Ctl, _decl_name, _Digest, _extern, _extern_type,
                    _model, _Model, _resolve_action)
from .specs import _bytes, _flatten, _TypeSpecs
from .tna import _tna_kind, _TnaExterns
from .types import _const_int, _expr_text, _key_name, _Scope
from .v1model import _v1_extern_name, _v1_kind, _V1modelExterns

__all__ = ["ARCHES", "build_p4info", "_collect", "_Emitter"]

#: Architectures this generator knows.
ARCHES = ("v1model", "tna")

_DEFAULT_SIZE = {"v1model": 1024, "tna": 512}
_MATCH = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
          "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
          "optional": p4info_pb2.MatchField.OPTIONAL}


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


class _Emitter(_V1modelExterns, _TnaExterns):
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

    # externs of either architecture

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

    def _profile_tables(self, obj: QualifiedObject, prefix: int) -> list[int]:
        out = []
        for ctl in self.m.ctls:
            for t in ctl.tables if ctl.path == obj.path else ():
                impl = t.decl.property("implementation")  # type: ignore[attr-defined]
                if isinstance(impl, A.Name) and impl.name == _decl_name(obj):
                    out.append(self.st.id(prefix, t.name))
        return out


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
