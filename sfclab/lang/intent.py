"""P4SFC chain intents in JSON.

An intent is an object with ``NFs`` (each with ``name``, ``type`` and
``location``: the server it would run on), ``Links`` (pairs of NF names, as
``["a", "b"]`` or ``{"from": "a", "to": "b"}``; ``input`` and ``output`` may
appear) and ``Route`` (the chain's traffic: ``{"match": "tcp.dport == 80",
"weight": 0.5, "from": "h1", "to": "s4:7"}``, or a list of NF names giving the
order when there are no links).  A document is one intent, a list of intents, or ``{"chains": [...]}``;
an intent may carry a ``name`` (default ``intent1``, ``intent2`` …).

>>> decls = parse_intents('{"name": "c", "NFs": [{"name": "fw1", "type": "Firewall", '
...     '"location": "server1"}], "Links": [], "Route": {}}')
>>> decls[0].stmts[0].refs[1].name, decls[0].attrs["Firewall"]["location"]
('Firewall', 'server1')
"""

from __future__ import annotations

import json
import re

from ..errors import ChainSyntaxError, ChainValidationError
from .ast import ChainDecl, MatchTerm, NFRef, Pos, Stmt

__all__ = ["parse_intents", "looks_like_json"]


def looks_like_json(text: str) -> bool:
    s = text.lstrip()
    return s.startswith("{") and '"NFs"' in text or s.startswith("[") and '"NFs"' in text


def _pos_of(text: str, needle: str, start: int = 0) -> Pos:
    i = text.find(needle, start)
    if i < 0:
        return Pos(1, 1)
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return Pos(line, col, max(1, len(needle)))


def parse_intents(text: str, *, source: str = "<json>") -> list[ChainDecl]:
    """Turn a JSON document of P4SFC intents into chain declarations."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ChainSyntaxError(f"invalid JSON: {e.msg}", line=e.lineno, column=e.colno,
                               source=source, text=text, hint="check quotes, commas and brackets")
    items = doc.get("chains", doc) if isinstance(doc, dict) and "NFs" not in doc else doc
    items = [items] if isinstance(items, dict) else items
    if not isinstance(items, list):
        raise ChainValidationError("a P4SFC intent document is an object or a list of objects",
                                   line=1, column=1, source=source, text=text)
    return [_intent(obj, k + 1, text, source) for k, obj in enumerate(items)]


def _intent(obj: object, k: int, text: str, source: str) -> ChainDecl:
    def err(msg: str, needle: str | Pos, hint: str = "") -> ChainValidationError:
        p = needle if isinstance(needle, Pos) else _pos_of(text, needle)
        return ChainValidationError(msg, line=p.line, column=p.column, source=source, text=text,
                                    hint=hint, width=p.width)

    if not isinstance(obj, dict):
        raise err(f"intent {k} is not an object", "[")
    missing = [key for key in ("NFs", "Links", "Route") if key not in obj]
    if missing:
        raise err(f"intent {k} lacks {', '.join(missing)}", '"NFs"' if "NFs" in obj else "{",
                  'an intent has "NFs", "Links" and "Route"')
    name = str(obj.get("name", f"intent{k}"))
    _check_shapes(obj, name, err)
    decl = ChainDecl(name, "json", pos=_pos_of(text, f'"{name}"') if "name" in obj else Pos(1, 1))
    refs: dict[str, NFRef] = {}
    count: dict[str, int] = {}
    for nf in obj["NFs"]:
        if not isinstance(nf, dict) or not {"name", "type"} <= nf.keys():
            raise err(f"intent {name!r}: every NF needs a name and a type", '"NFs"',
                      '{"name": "fw1", "type": "Firewall", "location": "server1"}')
        iname, itype = str(nf["name"]), str(nf["type"])
        if iname in refs:
            raise err(f"NF name {iname!r} is used twice", f'"{iname}"')
        count[itype.lower()] = n = count.get(itype.lower(), 0) + 1
        label = itype if n == 1 else f"{itype}#{n}"
        refs[iname] = NFRef(label, _pos_of(text, f'"{itype}"'))
        decl.attrs[label] = {"instance": iname, "location": nf.get("location")}
    for end in ("input", "output", "drop", "cpu"):
        refs.setdefault(end, NFRef(end, _pos_of(text, f'"{end}"')))    # where a link names it

    route = obj["Route"]
    links = obj["Links"]
    if not links:
        order = route if isinstance(route, list) else [str(n["name"]) for n in obj["NFs"]]
        unknown = next((n for n in order if n not in refs), None)
        if unknown is not None:
            raise err(f'intent {name!r}: "Route" names unknown NF {unknown!r}',
                      f'"{unknown}"' if unknown else '"Route"',
                      'a "Route" list names NFs by their "name", in order')
        links = list(zip(order, order[1:]))
        if len(order) == 1:
            decl.stmts.append(Stmt((refs["input"], refs[str(order[0])]), None, refs[str(order[0])].pos))
    for link in links:
        a, b = (link.get("from"), link.get("to")) if isinstance(link, dict) else link
        for end in (a, b):
            if end not in refs:
                raise err(f"link names unknown NF {end!r}", f'"{end}"' if end else '"Links"',
                          "links name NFs by their \"name\"")
        decl.stmts.append(Stmt((refs[str(a)], refs[str(b)]), None, refs[str(a)].pos))
    if isinstance(route, dict):
        if "weight" in route:
            decl.weight_pos = _value_pos(text, "weight")
            try:
                decl.weight = float(route["weight"])
            except (TypeError, ValueError):
                raise err(f'intent {name!r}: "weight" must be a number', decl.weight_pos,
                          '"Route": {"weight": 0.5}') from None
        if route.get("match"):
            decl.match = _match(str(route["match"]), text, source)
        for key in ("from", "to"):
            if key in route:
                end = route[key]
                at = _value_pos(text, key)
                if not isinstance(end, str):
                    raise err(f'intent {name!r}: "{key}" names a host or a switch port', at,
                              '"Route": {"from": "h1", "to": "s4:7"}')
                if key == "from":
                    decl.ingress, decl.ingress_pos = end, at
                else:
                    decl.egress, decl.egress_pos = end, at
    return decl


def _check_shapes(obj: dict, name: str, err) -> None:
    """Refuse an intent whose parts have the wrong JSON type: ``NFs`` and ``Links`` are
    lists, a link is a pair of NF names (or ``{"from": …, "to": …}``), ``Route`` is an
    object or a list of NF names."""
    for key in ("NFs", "Links"):
        if not isinstance(obj[key], list):
            raise err(f'intent {name!r}: "{key}" must be a list, not {_kind(obj[key])}',
                      f'"{key}"', _SHAPES[key])
    for link in obj["Links"]:
        ends = (link.get("from"), link.get("to")) if isinstance(link, dict) else link
        if not (isinstance(ends, (list, tuple)) and len(ends) == 2
                and all(isinstance(e, str) for e in ends)):
            raise err(f'intent {name!r}: a link is a pair of NF names, not {_show(link)}',
                      '"Links"', _SHAPES["Links"])
    route = obj["Route"]
    if not (isinstance(route, dict)
            or isinstance(route, list) and all(isinstance(r, str) for r in route)):
        raise err(f'intent {name!r}: "Route" is an object or a list of NF names, '
                  f"not {_show(route)}", '"Route"', _SHAPES["Route"])


_SHAPES = {
    "NFs": '"NFs": [{"name": "fw1", "type": "Firewall", "location": "server1"}, …]',
    "Links": '"Links": [["input", "fw1"], ["fw1", "output"]] or [{"from": "fw1", "to": "nat1"}]',
    "Route": '"Route": {"match": "tcp.dport == 80", "weight": 0.5} or ["fw1", "nat1"]',
}


def _kind(value: object) -> str:
    return {dict: "an object", str: "a string", bool: "a boolean", type(None): "null",
            list: "a list"}.get(type(value), "a number")


def _show(value: object) -> str:
    shown = json.dumps(value, default=repr)
    return shown if len(shown) <= 40 else shown[:37] + "…"


def _value_pos(text: str, key: str) -> Pos:
    """Where the value of ``"key": value`` is written (the key's place if not found)."""
    m = re.compile(rf'"{re.escape(key)}"\s*:\s*("[^"\n]*"|[^\s,}}\]]+)').search(text)
    if m is None:
        return _pos_of(text, f'"{key}"')
    return _pos_of(text, m.group(1), m.start(1))


#: Where the expression starts in the chain text ``_match`` parses it as.
_MATCH_AT = len("chain _ match ") + 1


def _match(expr: str, text: str, source: str) -> tuple[MatchTerm, ...]:
    from .parser import parse_decls

    p = _pos_of(text, expr)

    def moved(pos: Pos) -> Pos:
        return Pos(p.line, p.column + max(0, pos.column - _MATCH_AT), pos.width)

    try:
        (d,) = parse_decls(f"chain _ match {expr} {{ }}")
    except ChainSyntaxError as e:
        raise ChainSyntaxError(f'in "match": {e.message}', line=p.line,
                               column=moved(Pos(e.line, e.column)).column, width=e.width,
                               source=source, text=text, hint=e.hint) from None
    return tuple(MatchTerm(t.field, t.negate, t.kind,
                           tuple((k, v, moved(vp)) for k, v, vp in t.values), moved(t.pos))
                 for t in d.match)
