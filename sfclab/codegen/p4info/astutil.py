"""Small helpers on sfclab's P4 AST: positions for messages, annotations (and how
P4Info carries them), preambles, and the names and calls inside a node."""

from __future__ import annotations

import re
from collections.abc import Iterator

from finsy.proto import p4i as p4info_pb2
from google.protobuf import message

from ...errors import CompileError
from ...p4 import ast as A

__all__ = [
    "_where", "_annotation", "_string_body", "_user_id", "_annotation_text",
    "_add_annotations", "_set_preamble", "_names_in", "_calls_in",
]

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
