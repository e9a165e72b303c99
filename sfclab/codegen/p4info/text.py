"""P4Info as text: protobuf text format and JSON as p4c writes them (TNA's payloads
expanded), parsing text back, and :func:`compare_p4info` for two P4Infos."""

from __future__ import annotations

from collections.abc import Iterable

from finsy.proto import p4i as p4info_pb2
from google.protobuf import json_format, message, text_format

from ...errors import CompileError
from .tna import _barefoot_pool

__all__ = ["p4info_text", "p4info_json", "p4info_from_text", "compare_p4info"]

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
        text_format.Parse(_without_compiler_externs(text), info,
                          descriptor_pool=_barefoot_pool())
    except text_format.ParseError as e:
        raise CompileError(f"not a text-format P4Info: {e}") from None
    return info


#: Externs the Tofino compiler describes for its own tools (the port metadata the parser
#: skips, snapshot fields); no program sfclab writes declares them.
_COMPILER_EXTERNS = ("PortMetadata", "Snapshot")


def _without_compiler_externs(text: str) -> str:
    """*text* without its top-level ``externs { … }`` blocks of :data:`_COMPILER_EXTERNS`."""
    if not any(f'extern_type_name: "{n}"' in text for n in _COMPILER_EXTERNS):
        return text
    out, i = [], 0
    while (start := text.find("\nexterns {", i)) >= 0:
        depth, j = 0, start + 1
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
            if depth == 0 and text[j - 1] == "}":
                break
        block = text[start:j]
        out.append(text[i:start])
        if not any(f'extern_type_name: "{n}"' in block for n in _COMPILER_EXTERNS):
            out.append(block)
        i = j
    out.append(text[i:])
    return "".join(out)


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
