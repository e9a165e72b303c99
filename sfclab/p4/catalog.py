"""The NF catalogue: every NF sfclab can chain, with its P4 and what the compiler needs.

An NF is a ``control NAME(inout headers_t hdr, inout sfc_meta_t sfc)`` in
``NAME.p4`` plus an optional manifest ``NAME.json`` next to it (aliases,
protocol layer, offloadability, the metadata field it sets, tables, stage
estimate, example entries).  What the P4 says (tables, keys, actions, sizes,
whether it sets ``sfc.metadata``) is derived from its AST; the manifest's
copy of it is checked against the P4.  NFs that only run on a server (a
payload IPS) have a manifest and no P4.

The library in ``p4/nf/`` loads lazily: manifests at once, P4 on first use.

>>> cat = load_default()
>>> cat.resolve("FW").name, cat.resolve("Heavy Hitter").fields["hitter_value"]
('firewall', 32)
>>> [t.name for t in cat.definition("l3fwd").tables]
['ipv4_lpm']
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import MAX_DIGITS, CatalogError, P4Error, UnsupportedP4Error, long_number
from ..nfinfo import OFFLOAD_CLASSES, GLOBAL_FIELDS, NFCatalog, NFInfo, normalize_name
from . import ast as A
from .check import check_program
from .parser import include_types, library_dir, parse_p4, parse_p4_file
from .printer import expr_p4, type_p4

__all__ = ["TableSpec", "ExampleEntry", "NFDefinition", "P4Catalog", "load_default",
           "check_nf", "nf_includes", "MATCH_KINDS", "API_EXTERNS"]

MATCH_KINDS = ("exact", "lpm", "ternary", "range", "optional")

#: The portable state API (p4/include/sfc_api.p4): extern -> {method: "expr" | "stmt" |
#: "either"}, how each method may be called (as the right-hand side of an assignment, or
#: alone).
API_EXTERNS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "SfcRegister": {"read": "expr", "write": "stmt", "add": "expr"},
    "SfcRegisterAction": {"execute": "either"},
    "SfcCounter": {"count": "stmt"},
    "SfcDirectCounter": {},
    "SfcMeter": {"execute": "expr"},
    "SfcHash": {"get": "expr"},
    "SfcDigest": {"pack": "stmt"},
    "SfcL4Checksum": {"update": "stmt"},
})
#: Names an NF must not touch: architecture metadata and externs.
_ARCH_NAMES = frozenset({"standard_metadata", "ig_intr_md", "ig_md", "eg_intr_md", "ig_dprsr_md",
                         "ig_tm_md", "ig_prsr_md", "eg_dprsr_md", "eg_oport_md", "eg_prsr_md"})
_MANIFEST_KEYS = {"name", "aliases", "layer", "offload", "description", "field", "stages",
                  "tables", "entries", "p4"}
_METADATA_WIDTH = 32
_MAX_HASH_WIDTH = 64      # BMv2's hash functions return 64 bits
_MAX_STAGES = 64          # a manifest's stage estimate (a Tofino pipe has 12-20)


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table as the compiler and the runtime see it."""

    name: str
    keys: tuple[tuple[str, str], ...]     # (key expression as P4 text, match kind)
    actions: tuple[str, ...]
    size: int | None

    @property
    def needs_priority(self) -> bool:
        return any(k in ("ternary", "range", "optional") for _, k in self.keys)


@dataclass(frozen=True, slots=True)
class ExampleEntry:
    """A realistic entry of an NF's table, from its manifest."""

    table: str
    match: Mapping[str, Any]
    action: str
    params: Mapping[str, Any]
    priority: int | None = None


class NFDefinition:
    """One NF: its compiler view (:class:`NFInfo`), its P4 and its manifest's extras."""

    def __init__(self, info: NFInfo, *, p4_path: Path | None = None, p4_text: str | None = None,
                 tables: tuple[TableSpec, ...] | None = None,
                 entries: tuple[ExampleEntry, ...] = (), field_doc: str = "",
                 manifest_path: Path | None = None) -> None:
        self.info = info
        self.p4_path = p4_path
        self._p4_text = p4_text
        self._manifest_tables = tables
        self.entries = entries
        self.field_doc = field_doc
        self.manifest_path = manifest_path
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def has_p4(self) -> bool:
        return self.p4_path is not None or self._p4_text is not None

    @cached_property
    def program(self) -> A.Program | None:
        """The parsed P4 file (None for an NF that runs on a server only).  The NF
        interface's types (headers_t, sfc_meta_t, the Sfc* API) are known without
        ``#include`` lines."""
        if self.p4_path is not None:
            return parse_p4_file(self.p4_path, types=nf_types())
        if self._p4_text is not None:
            return parse_p4(self._p4_text, source=f"<nf {self.name}>", types=nf_types())
        return None

    @cached_property
    def control(self) -> A.ControlDecl | None:
        """The NF's control block (checked: :func:`check_nf`)."""
        prog = self.program
        return None if prog is None else check_nf(prog, self.name)

    @property
    def tables(self) -> tuple[TableSpec, ...]:
        """The NF's tables, from its P4 (from the manifest when it has no P4)."""
        if self.has_p4:
            return table_specs(self.control)
        return self._manifest_tables or ()

    def table(self, name: str) -> TableSpec:
        for t in self.tables:
            if t.name == name:
                return t
        raise CatalogError(f"NF {self.name!r} has no table {name!r}",
                           hint=f"its tables: {', '.join(t.name for t in self.tables) or 'none'}")

    def check(self) -> None:
        """Parse the P4 and check it against the manifest; :class:`CatalogError` if they differ."""
        if not self.has_p4:
            return
        control = self.control
        derived = table_specs(control)
        if self._manifest_tables is not None and self._manifest_tables != derived:
            raise CatalogError(
                f"NF {self.name!r}: the manifest's tables differ from the P4's",
                source=str(self.manifest_path or ""),
                hint="; ".join(_table_diff(self._manifest_tables, derived)))
        if self.info.fields and not _sets_metadata(control):
            raise CatalogError(
                f"NF {self.name!r} declares the field {next(iter(self.info.fields))!r} but its P4 "
                f"never assigns sfc.metadata", source=str(self.p4_path or ""),
                hint="set sfc.metadata in the actions or apply block, or drop the field")
        if self.info.tables != len(derived):
            raise CatalogError(f"NF {self.name!r}: {self.info.tables} tables in its info, "
                               f"{len(derived)} in its P4")
        _check_entries(self, derived)

    def __repr__(self) -> str:
        return f"<NFDefinition {self.name} ({'P4' if self.has_p4 else 'server only'})>"


def nf_types() -> frozenset[str]:
    """Type names every NF may use: core.p4's, the headers' and the state API's."""
    return include_types("core.p4", "sfc_headers.p4", "sfc_api.p4")


def nf_includes() -> tuple[A.Program, ...]:
    """The library's include files every NF sees (headers and the state API), parsed."""
    inc = library_dir() / "include"
    return tuple(_parsed(inc / n, (inc / n).stat().st_mtime_ns)
                 for n in ("sfc_headers.p4", "sfc_api.p4"))


@lru_cache(maxsize=8)
def _parsed(path: Path, _mtime: int) -> A.Program:
    return parse_p4_file(path)


# --- deriving from the AST -----------------------------------------------------------------

def table_specs(control: A.ControlDecl) -> tuple[TableSpec, ...]:
    """The tables of an NF's control, as :class:`TableSpec`."""
    return tuple(
        TableSpec(t.name, tuple((expr_p4(k.expr), k.match_kind) for k in t.keys),
                  tuple(a.name for a in t.actions), t.size)
        for t in control.tables())


def _sets_metadata(control: A.ControlDecl) -> bool:
    target = A.Member(A.Name("sfc"), "metadata")
    return any(isinstance(n, A.Assign) and n.lhs == target for n in A.walk(control))


def _table_diff(a: tuple[TableSpec, ...], b: tuple[TableSpec, ...]) -> list[str]:
    out = []
    am, bm = {t.name: t for t in a}, {t.name: t for t in b}
    for name in am.keys() - bm.keys():
        out.append(f"table {name!r} is in the manifest only")
    for name in bm.keys() - am.keys():
        out.append(f"table {name!r} is in the P4 only")
    for name in am.keys() & bm.keys():
        x, y = am[name], bm[name]
        for what in ("keys", "actions", "size"):
            if getattr(x, what) != getattr(y, what):
                out.append(f"table {name!r}: {what} {getattr(x, what)} in the manifest, "
                           f"{getattr(y, what)} in the P4")
    return out


def _err(node: A.Node | None, msg: str, hint: str = "", cls: type[P4Error] = P4Error) -> P4Error:
    return cls(msg, hint=hint, **A.error_at(node))


def check_nf(prog: A.Program, name: str) -> A.ControlDecl:
    """Check that *prog* is an NF called *name* under sfclab's NF rules; return its control.

    The rules: one control ``name(inout headers_t hdr, inout sfc_meta_t sfc)``;
    no parser; no architecture metadata or externs; state only through the
    ``Sfc*`` API, called in its documented forms; every table has a ``size``;
    and what p4c's front end checks (:func:`~sfclab.p4.check.check_program`:
    declaration before use, the API's signatures, match kinds both
    architectures declare).
    """
    controls = prog.controls()
    if not controls:
        in_folder = Path(prog.source).is_file()
        raise P4Error(f"NF {name!r}: no control block", source=prog.source, hint=(
            f"write `control {name}(inout headers_t hdr, inout sfc_meta_t sfc) {{ … }}`"
            + ("; a file an NF #includes goes in a subfolder (every NAME.p4 of the folder "
               "is an NF)" if in_folder else "")))
    if len(controls) > 1 or controls[0].name != name:
        names = ", ".join(c.name for c in controls)
        raise _err(controls[0], f"NF {name!r}: expected one control named {name!r}, found {names}",
                   hint="one NF per file, its control named as the file")
    control = controls[0]
    for parser in prog.find(A.ParserDecl):
        raise _err(parser, f"NF {name!r}: parsers belong to the composed program, not to an NF",
                   hint="the composed parser extracts every header in headers_t", cls=UnsupportedP4Error)
    sig = [(p.direction, type_p4(p.type)) for p in control.params]
    if sig != [("inout", "headers_t"), ("inout", "sfc_meta_t")]:
        raise _err(control, f"NF {name!r}: its parameters must be "
                   f"(inout headers_t hdr, inout sfc_meta_t sfc)",
                   hint="an NF sees the parsed headers and the sfc struct only (Dejavu's NF API)")
    instances: dict[str, str] = {}
    for inst in control.instances():
        ext = inst.type.name if isinstance(inst.type, A.NamedType) else type_p4(inst.type)
        if ext not in API_EXTERNS:
            raise _err(inst, f"NF {name!r}: extern {ext!r} is not part of sfclab's portable API",
                       hint=f"use {', '.join(API_EXTERNS)} (p4/include/sfc_api.p4)",
                       cls=UnsupportedP4Error)
        instances[inst.name] = ext
        out = inst.type.args[0] if ext == "SfcHash" and inst.type.args else None
        if isinstance(out, A.BitType) and not 1 <= out.width <= _MAX_HASH_WIDTH:
            raise _err(inst, f"NF {name!r}: SfcHash<{type_p4(out)}> gives {out.width} bits; "
                       f"a hash gives 1..{_MAX_HASH_WIDTH}",
                       hint="BMv2 and Tofino compute hashes of at most 64 bits: "
                            "use SfcHash<bit<32>> (or narrower)")
    for t in control.tables():
        if t.size is None:
            raise _err(t, f"NF {name!r}: table {t.name!r} has no size",
                       hint="add `size = N;` so occupancy and placement can be computed")
    _check_calls(control, instances, name)
    check_program(prog, extra=nf_includes(), portable=True)
    return control


def _check_calls(control: A.ControlDecl, instances: dict[str, str], nf: str) -> None:
    assigned = {id(n.rhs) for n in A.walk(control) if isinstance(n, A.Assign)}
    alone = {id(n.call) for n in A.walk(control) if isinstance(n, A.CallStmt)}
    for node in A.walk(control):
        if isinstance(node, A.Name) and node.name in _ARCH_NAMES:
            raise _err(node, f"NF {nf!r} uses architecture metadata {node.name!r}",
                       hint="use the sfc struct (sfc.ingress_port, sfc.egress_port, sfc.drop …)",
                       cls=UnsupportedP4Error)
        if not (isinstance(node, A.Call) and isinstance(node.func, A.Member)
                and isinstance(node.func.expr, A.Name) and node.func.expr.name in instances):
            continue
        inst, method = node.func.expr.name, node.func.name
        forms = API_EXTERNS[instances[inst]]
        if method not in forms:
            raise _err(node, f"{instances[inst]} has no method {method!r}",
                       hint=f"its methods: {', '.join(forms) or 'none (a table property uses it)'}")
        if forms[method] == "either":
            continue
        if forms[method] == "stmt" and id(node) not in alone:
            raise _err(node, f"{inst}.{method}() is a statement, not a value",
                       hint=f"write `{inst}.{method}(…);` on its own")
        if forms[method] == "expr" and id(node) not in assigned:
            raise _err(node, f"{inst}.{method}() must be assigned: `x = {inst}.{method}(…);`",
                       hint="the emitters lower this one form to v1model and TNA externs")


def _check_entries(d: NFDefinition, tables: tuple[TableSpec, ...]) -> None:
    by_name = {t.name: t for t in tables}
    actions = {a.name: a for a in d.control.actions()}
    for i, e in enumerate(d.entries):
        where = f"NF {d.name!r} example entry {i}"
        t = by_name.get(e.table)
        if t is None:
            raise CatalogError(f"{where}: no table {e.table!r}",
                               hint=f"tables: {', '.join(by_name) or 'none'}")
        if e.action not in t.actions:
            raise CatalogError(f"{where}: table {t.name!r} has no action {e.action!r}",
                               hint=f"its actions: {', '.join(t.actions)}")
        keys = dict(t.keys)
        for k, v in e.match.items():
            kind = keys.get(k)
            if kind is None:
                raise CatalogError(f"{where}: {t.name!r} has no key {k!r}",
                                   hint=f"its keys: {', '.join(keys)}")
            mark = {"lpm": "/", "ternary": "&&&", "range": ".."}.get(kind)
            if mark and mark not in str(v) and str(v).strip() != "*":
                raise CatalogError(f"{where}: {kind} key {k!r} needs a value with {mark!r} "
                                   f"(or \"*\": don't care), not {v!r}")
        missing = [k for k, kind in t.keys if kind == "exact" and k not in e.match]
        if missing:
            raise CatalogError(f"{where}: exact keys {missing} need a value")
        if t.needs_priority and e.priority is None:
            raise CatalogError(f"{where}: table {t.name!r} has ternary/range keys: give a priority")
        params = [p.name for p in actions[e.action].params] if e.action in actions else []
        if sorted(e.params) != sorted(params):
            raise CatalogError(f"{where}: action {e.action!r} takes ({', '.join(params)}), "
                               f"the entry gives ({', '.join(e.params)})")


# --- manifests -----------------------------------------------------------------------------

def _manifest(data: Any, source: str, name_hint: str) -> dict:
    if not isinstance(data, dict):
        raise CatalogError("an NF manifest is a JSON object", source=source)
    unknown = set(data) - _MANIFEST_KEYS
    if unknown:
        from ..errors import did_you_mean

        bad = sorted(unknown)[0]
        raise CatalogError(f"unknown manifest key {bad!r}", source=source,
                           hint=did_you_mean(bad, _MANIFEST_KEYS)
                           or f"keys: {', '.join(sorted(_MANIFEST_KEYS))}")
    name = data.get("name", name_hint)
    if name != name_hint:
        raise CatalogError(f"the manifest names the NF {name!r}, its file {name_hint!r}",
                           source=source, hint="name the files after the NF")
    checks = [("aliases", list), ("layer", int), ("offload", str), ("description", str),
              ("stages", int), ("tables", dict), ("entries", list), ("p4", bool)]
    for key, typ in checks:
        if key in data and not isinstance(data[key], typ):
            raise CatalogError(f"manifest key {key!r} must be a {typ.__name__}", source=source)
    bad = [a for a in data.get("aliases", ()) if not isinstance(a, str) or not a.strip()]
    if bad:
        bad = bad[0]
        raise CatalogError(f"manifest key 'aliases' lists names, not {json.dumps(bad, default=repr)}",
                           source=source, hint='for example "aliases": ["FW", "Firewall"]')
    if not 1 <= data.get("layer", 4) <= 7 or not 0 <= data.get("stages", 1) <= _MAX_STAGES:
        key = "layer" if not 1 <= data.get("layer", 4) <= 7 else "stages"
        raise CatalogError(f"manifest key {key!r} is out of range",
                           source=source, hint="layer: the OSI layer the NF works at, 1..7; "
                                               f"stages: 0..{_MAX_STAGES}")
    if data.get("offload", "fully") not in OFFLOAD_CLASSES:
        raise CatalogError(f"offload must be one of {', '.join(OFFLOAD_CLASSES)}", source=source)
    fld = data.get("field")
    if fld is not None:
        if not (isinstance(fld, dict) and isinstance(fld.get("name"), str)
                and isinstance(fld.get("width"), int)):
            raise CatalogError('manifest "field" is {"name": …, "width": …} or null', source=source)
        if not 1 <= fld["width"] <= _METADATA_WIDTH:
            raise CatalogError(f"field {fld['name']!r}: width must be 1..{_METADATA_WIDTH} "
                               f"(it is the NF's sfc.metadata value)", source=source)
        if normalize_name(fld["name"]) in GLOBAL_FIELDS:
            raise CatalogError(f"field {fld['name']!r} is a FlexMesh global field on every NF",
                               source=source, hint="give the NF's own field another name")
    return data


def _tables_from_manifest(raw: dict, source: str) -> tuple[TableSpec, ...]:
    out = []
    try:
        for tname, t in raw.items():
            keys = tuple((str(k), str(kind)) for k, kind in t.get("keys", []))
            for _, kind in keys:
                if kind not in MATCH_KINDS:
                    raise CatalogError(f"table {tname!r}: unknown match kind {kind!r}",
                                       source=source, hint=f"use {', '.join(MATCH_KINDS)}")
            out.append(TableSpec(tname, keys, tuple(t.get("actions", [])), t.get("size")))
    except (AttributeError, TypeError, ValueError):
        raise CatalogError('manifest "tables" is {NAME: {"keys": [[expr, kind], …], '
                           '"actions": […], "size": N}}', source=source) from None
    return tuple(out)


def _entries_from_manifest(raw: list, source: str) -> tuple[ExampleEntry, ...]:
    out = []
    for e in raw:
        try:
            out.append(ExampleEntry(str(e["table"]), MappingProxyType(dict(e.get("match", {}))),
                                    str(e["action"]), MappingProxyType(dict(e.get("params", {}))),
                                    e.get("priority")))
        except (KeyError, TypeError, ValueError):
            raise CatalogError('an example entry is {"table": …, "match": {…}, "action": …, '
                               '"params": {…}, "priority": N}', source=source) from None
        values = [*out[-1].match.values(), *out[-1].params.values()]
        if any(isinstance(v, str) and long_number(v) for v in values):
            raise CatalogError(f"an example entry of table {out[-1].table!r} holds a number "
                               f"of more than {MAX_DIGITS:,} digits", source=source,
                               hint="no key or parameter needs that many digits")
    return tuple(out)


def _definition(name: str, manifest: dict | None, *, p4_path: Path | None = None,
                p4_text: str | None = None, manifest_path: Path | None = None) -> NFDefinition:
    src = str(manifest_path or f"<manifest of {name}>")
    m = _manifest(manifest or {}, src, name)
    if m.get("p4", True) is False:
        p4_path = p4_text = None
    elif p4_path is None and p4_text is None:
        raise CatalogError(f"NF {name!r} has no P4", source=src,
                           hint=f'write {name}.p4 next to the manifest, or set "p4": false '
                                f"for an NF that runs on a server only")
    manifest_tables = _tables_from_manifest(m["tables"], src) if "tables" in m else None
    fld = m.get("field")
    d = NFDefinition(NFInfo(name=name, layer=m.get("layer", 4), offload=m.get("offload", "fully"),
                            aliases=tuple(m.get("aliases", ())),
                            fields={fld["name"]: fld["width"]} if fld else {},
                            tables=len(manifest_tables) if manifest_tables is not None else 0,
                            stages=m.get("stages", 1), description=m.get("description", ""),
                            source=str(p4_path or manifest_path or "")),
                     p4_path=p4_path, p4_text=p4_text, tables=manifest_tables,
                     entries=_entries_from_manifest(m.get("entries", []), src),
                     field_doc=(fld or {}).get("doc", ""), manifest_path=manifest_path)
    if manifest_tables is None and d.has_p4:      # no manifest copy: derive the counts now
        derived = d.tables
        stages = m.get("stages", max(1, len(derived)))
        d.info = NFInfo(**{**_info_dict(d.info), "tables": len(derived), "stages": stages})
    return d


def _info_dict(info: NFInfo) -> dict:
    return {f: getattr(info, f) for f in info.__dataclass_fields__}


def _read_manifest(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise CatalogError(f"invalid JSON: {e.msg}", source=str(path), line=e.lineno,
                           column=e.colno, text=e.doc) from None
    except OSError as e:
        raise CatalogError(f"cannot read the manifest: {e.strerror}", source=str(path)) from None


def _load_dir(folder: Path) -> list[NFDefinition]:
    if not folder.is_dir():
        raise CatalogError(f"no NF folder {str(folder)!r}",
                           hint="give a folder of NAME.p4 files (and NAME.json manifests)")
    names = sorted({p.stem for p in folder.glob("*.p4")} | {p.stem for p in folder.glob("*.json")})
    out = []
    for name in names:
        p4, js = folder / f"{name}.p4", folder / f"{name}.json"
        out.append(_definition(name, _read_manifest(js) if js.is_file() else None,
                               p4_path=p4 if p4.is_file() else None,
                               manifest_path=js if js.is_file() else None))
    return out


# --- the catalogue -------------------------------------------------------------------------

class P4Catalog(NFCatalog):
    """An :class:`NFCatalog` whose NFs have P4 definitions (:meth:`definition`)."""

    def __init__(self, defs: Iterable[NFDefinition] = ()) -> None:
        self._defs: dict[str, NFDefinition] = {}
        super().__init__()
        for d in defs:
            self._add_def(d)

    def _add_def(self, d: NFDefinition, *, replace: bool = False) -> None:
        self.add(d.info, replace=replace)
        self._defs[d.info.name] = d

    def remove(self, name: str) -> None:
        info = self.resolve(name)
        super().remove(name)
        self._defs.pop(info.name, None)

    def definition(self, name: str) -> NFDefinition:
        """The NF called *name* (any alias) with its P4; :class:`CatalogError` if unknown."""
        info = self.resolve(name)
        d = self._defs.get(info.name)
        if d is None:
            raise CatalogError(f"NF {info.name!r} has no P4 definition in this catalogue")
        return d

    def copy(self) -> P4Catalog:
        return P4Catalog(self._defs.values())

    def _add_checked(self, defs: list[NFDefinition], replace: bool) -> list[str]:
        for d in defs:
            d.check()
        trial = self.copy()                 # all or nothing: try on a copy first
        for d in defs:
            trial._add_def(d, replace=replace)
        for d in defs:
            self._add_def(d, replace=replace)
        return [d.name for d in defs]

    def add_path(self, folder: str | Path, *, replace: bool = False) -> list[str]:
        """Add every NF in *folder* (``NAME.p4`` + optional ``NAME.json``); returns their
        names.  Each is parsed and checked first: on any error nothing is added."""
        return self._add_checked(_load_dir(Path(folder)), replace)

    def add_source(self, text: str, *, name: str | None = None,
                   manifest: Mapping[str, Any] | None = None, replace: bool = False) -> str:
        """Add an NF written in a string of P4 (the control's name is the NF's, unless
        *name* says otherwise); *manifest* as in a ``NAME.json``.  Returns the name."""
        prog = parse_p4(text, source=f"<nf {name or 'source'}>", types=nf_types())
        if name is None:
            controls = prog.controls()
            if len(controls) != 1:
                raise CatalogError("the P4 must hold exactly one control (the NF)",
                                   hint="name it with name=… if it has several")
            name = controls[0].name
        if manifest is not None and not isinstance(manifest, Mapping):
            raise CatalogError("an NF manifest is a JSON object (a dict)",
                               source=f"<manifest of {name}>",
                               hint='for example {"layer": 3, "aliases": ["FW"]}')
        d = _definition(name, dict(manifest or {}), p4_text=text)
        return self._add_checked([d], replace)[0]

    def check_all(self) -> list[str]:
        """Parse and check every NF; returns the names checked."""
        for d in self._defs.values():
            d.check()
        return sorted(self._defs)


_DEFAULT: P4Catalog | None = None
_DEFAULT_LOCK = threading.Lock()


def load_default() -> P4Catalog:
    """The catalogue of the NF library in ``p4/nf/`` (loaded once; NFs added to it with
    :meth:`P4Catalog.add_path` / :meth:`~P4Catalog.add_source` are seen everywhere)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = P4Catalog(_load_dir(library_dir() / "nf"))
    return _DEFAULT
