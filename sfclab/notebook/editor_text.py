"""The chain editor's drawing as chain text and back, and the checks on a drawing.

A drawing is two lists of plain dicts (nodes and edges, see :mod:`.editor`).
:func:`check_drawing` finds what can be pinned on one node or edge before any
text is written; :func:`render_chain` writes a FlexMesh ``chain`` block and says
which columns of each line came from which element (so a parser error lands on a
node or an edge); :func:`edges_of` reads a parsed chain's edges back.

>>> nodes = [{"id": i, "kind": "endpoint" if i in ("input", "output") else "nf"}
...          for i in ("input", "nat", "output")]
>>> edges = [{"id": "input->nat", "source": "input", "target": "nat", "kind": "seq"},
...          {"id": "nat->output", "source": "nat", "target": "output", "kind": "seq"}]
>>> check_drawing(nodes, edges)
[]
>>> print(render_chain("c", None, None, nodes, edges)[0])
chain c {
    input => nat;
    nat => output;
}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..errors import ChainError
from ..ir.model import Chain
from ..lang.format import _name as _chain_name

__all__ = ["check_drawing", "render_chain", "edges_of", "edge_id", "edge_label", "err",
           "parse_value", "pin_error", "TERMINAL"]

Node = dict[str, Any]
Edge = dict[str, Any]
#: End points nothing can follow.
TERMINAL = ("output", "drop", "cpu")


def edge_id(u: str, v: str) -> str:
    return f"{u}->{v}"


def err(kind: str, ids: Iterable[str], message: str, hint: str = "", line: int = 0,
         column: int = 0) -> dict:
    return {"kind": kind, "ids": list(ids), "message": message, "hint": hint,
            "line": line, "column": column}


def edge_label(e: Edge) -> str:
    k = e["kind"]
    if k == "then":
        field = e["field"].removeprefix(f"{e['source']}.")
        return f"{field} {e['op']} {e['value']}"
    if k == "else":
        return "else"
    if k == "case":
        return "= " + ", ".join(str(c) for c in e["cases"])
    if k == "loop":
        return f"×{e['bound']}" if e.get("bound") else "loop ×?"
    return "done" if k == "exit" else ""


def parse_value(value: Any) -> int | str | None:
    """A condition or case value from the UI: int, hex, or a run-time name."""
    if value is None or isinstance(value, int):
        return value
    s = str(value).strip()
    if not s:
        return None
    if re.fullmatch(r"[0-9]+", s):
        return int(s)
    if re.fullmatch(r"0[xX][0-9A-Fa-f]+", s):
        return int(s, 16)
    return s


# -- checks on the drawing itself ------------------------------------------------------------

def check_drawing(nodes: list[Node], edges: list[Edge]) -> list[dict]:
    """Errors that can be pinned on one node or edge before any text is written.

    >>> check_drawing([{"id": "input", "kind": "endpoint"}], [])[0]["message"]
    'the chain has no NF'
    """
    errs: list[dict] = []
    nfs = [n["id"] for n in nodes if n["kind"] == "nf"]
    if not nfs:
        errs.append(err("chain", [], "the chain has no NF",
                         "drag an NF from the palette onto the canvas"))
    out: dict[str, list[Edge]] = {n["id"]: [] for n in nodes}
    inc: dict[str, list[Edge]] = {n["id"]: [] for n in nodes}
    for e in edges:
        out[e["source"]].append(e)
        inc[e["target"]].append(e)
        if e["source"] in TERMINAL:
            errs.append(err("edge", [e["id"]], f"{e['source']!r} is an end point: nothing "
                             "can follow it", "delete this edge"))
        if e["target"] == "input":
            errs.append(err("edge", [e["id"]], "nothing can lead into 'input'",
                             "`input` starts the chain; delete this edge"))
    for n in nfs:
        if not any(e["source"] != n for e in inc[n]):
            errs.append(err("node", [n], f"nothing leads into {n!r}",
                             f"drag from input or an NF onto {n}"))
        if not any(e["kind"] != "loop" for e in out[n]):
            errs.append(err("node", [n], f"{n!r} leads nowhere: packets stop after it",
                             f"drag from {n} to output, drop or the next NF"))
        errs += _check_branches(n, out[n])
    for e in edges:
        if e["kind"] == "loop" and e["source"] != e["target"] \
                and e["target"] not in _upstream(e["source"], inc):
            errs.append(err("edge", [e["id"]], f"the loop from {e['source']!r} goes to "
                             f"{e['target']!r}, which does not come before it", "a loop goes "
                             f"back to {e['source']} itself or to an NF before it"))
    for e in _back_edges([n["id"] for n in nodes], out):
        errs.append(err("edge", [e["id"]], f"{e['source']} => {e['target']} makes a cycle "
                         "that is not a loop", "to repeat NFs make a loop edge (edge menu: "
                         "loop) or drop a second instance of the NF"))
    return errs


def _upstream(n: str, inc: dict[str, list[Edge]]) -> set[str]:
    seen: set[str] = set()
    todo = [n]
    while todo:
        for e in inc[todo.pop()]:
            if e["kind"] != "loop" and e["source"] not in seen:
                seen.add(e["source"])
                todo.append(e["source"])
    return seen


def _back_edges(order: list[str], out: dict[str, list[Edge]]) -> list[Edge]:
    """Non-loop edges that close a cycle, found by a depth-first walk from input."""
    state: dict[str, int] = {}  # 1: on the walk's stack, 2: done
    back: list[Edge] = []
    for start in sorted(order, key=lambda n: n != "input"):
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter([e for e in out[start] if e["kind"] != "loop"]))]
        while stack:
            n, it = stack[-1]
            e = next(it, None)
            if e is None:
                state[n] = 2
                stack.pop()
            elif state.get(e["target"]) == 1:
                back.append(e)
            elif e["target"] not in state:
                state[e["target"]] = 1
                stack.append((e["target"], iter([x for x in out[e["target"]]
                                                 if x["kind"] != "loop"])))
    return back


def _check_branches(n: str, out: list[Edge]) -> list[dict]:
    errs: list[dict] = []
    loops = [e for e in out if e["kind"] == "loop"]
    rest = [e for e in out if e["kind"] != "loop"]
    kinds = {"seq" if e["kind"] == "exit" else e["kind"] for e in rest}
    for e in loops:
        b = e.get("bound")
        if not isinstance(b, int) or not 2 <= b <= 255:
            errs.append(err("edge", [e["id"]], f"the loop at {n!r} needs a bound from 2 to 255",
                             "open the edge menu and set how many runs in all"))
    if len(loops) > 1:
        errs.append(err("edge", [e["id"] for e in loops[1:]], f"{n!r} has two loops",
                         "keep one loop edge"))
    if loops and len(rest) != 1:
        errs.append(err("node", [n], f"{n!r} loops, so it needs exactly one way out "
                         f"(it has {len(rest)})", "keep one edge besides the loop; "
                         "branch in the NF after it"))
        return errs
    if kinds & {"then", "else"}:
        then = [e for e in rest if e["kind"] == "then"]
        other = [e for e in rest if e["kind"] not in ("then", "else")]
        els = [e for e in rest if e["kind"] == "else"]
        if len(then) != 1 or len(els) != 1 or other:
            bad = then[1:] + els[1:] + other if then and els else rest
            errs.append(err("edge", [e["id"] for e in bad],
                             f"the branch at {n!r} needs one 'then' and one 'else' edge",
                             "open the other edge's menu and make it 'else' (or 'then')"))
        elif not then[0].get("field") or then[0].get("value") is None:
            errs.append(err("edge", [then[0]["id"]], f"the branch at {n!r} has no condition",
                             f"set a condition such as {n}.global_metadata == 1"))
    elif "case" in kinds:
        seen: set = set()
        for e in rest:
            if e["kind"] != "case" or not e.get("cases"):
                errs.append(err("edge", [e["id"]], f"every edge out of {n!r} must be a case "
                                 "with a value", "open the edge menu and give it a value"))
            for c in e.get("cases") or ():
                if c in seen:
                    errs.append(err("edge", [e["id"]], f"case {c} is given twice",
                                     "give each case its own value"))
                seen.add(c)
    elif len(rest) > 1:
        names = " and ".join(repr(e["target"]) for e in rest)
        errs.append(err("edge", [e["id"] for e in rest], f"{n!r} is followed by {names} "
                         "with nothing to choose between them", "open an edge's menu and "
                         "make it a branch (then/else) or a case, or delete one"))
    return errs


# -- drawing -> text ---------------------------------------------------------------------------

def _order(nodes: list[Node], edges: list[Edge]) -> list[str]:
    """Sources in reading order: a walk from input, then whatever is left."""
    succ: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    for e in edges:
        succ[e["source"]].append(e["target"])
    seen: list[str] = []
    todo = ["input"] if "input" in succ else []
    while todo:
        n = todo.pop(0)
        if n not in seen:
            seen.append(n)
            todo += succ[n]
    return seen + [n["id"] for n in nodes if n["id"] not in seen]


def render_chain(name: str, match: str | None, weight: float | None, nodes: list[Node],
                 edges: list[Edge]) -> tuple[str, dict[int, list[tuple[int, int, list[str]]]]]:
    """The drawing as a FlexMesh ``chain`` block, and for each line (1-based,
    within the block) the column spans ``(start, end, element ids)`` of its parts,
    to pin a parser error on a node or an edge.
    """
    head = f"chain {_chain_name(name)}"
    if match:
        head += f" match {match}"
    if weight is not None:
        head += f" weight {weight!r}"
    lines, spans = [head + " {"], {}
    by_src: dict[str, list[Edge]] = {}
    for e in edges:
        by_src.setdefault(e["source"], []).append(e)
    for u in _order(nodes, edges):
        for text, parts in _statements(u, by_src.get(u, [])):
            spans[len(lines) + 1] = parts
            lines.append(text)
    lines.append("}")
    return "\n".join(lines), spans


def _statements(u: str, out: list[Edge]):
    """``(line, spans)`` for the statements that say where *u* leads."""
    def ref(v: str) -> str:
        return "self" if v == u else v

    loops = [e for e in out if e["kind"] == "loop"]
    rest = [e for e in out if e["kind"] != "loop"]
    then = [e for e in rest if e["kind"] == "then"]
    els = [e for e in rest if e["kind"] == "else"]
    ids = [e["id"] for e in out]
    if len(loops) == 1 and len(rest) == 1 and isinstance(loops[0].get("bound"), int):
        lp, ex = loops[0], rest[0]
        cond = f"{u}.global_counter < {lp['bound']}"
        if lp.get("field") and lp.get("op") and lp.get("value") is not None:
            cond = f"{lp['field']} {lp['op']} {lp['value']}"
        yield _stmt(u, [(ref(lp["target"]), [lp["id"]]), (" : ", []),
                        (ref(ex["target"]), [ex["id"]]), (" ? ", []), (cond, [lp["id"]])], ids)
    elif len(then) == 1 and len(els) == 1 and len(rest) == 2 and not loops \
            and then[0].get("field") and then[0].get("value") is not None:
        a, b = then[0], els[0]
        cond = f"{a['field']} {a['op']} {a['value']}"
        yield _stmt(u, [(a["target"], [a["id"]]), (" : ", []), (b["target"], [b["id"]]),
                        (" ? ", []), (cond, [a["id"], b["id"]])], ids)
    elif rest and not loops and all(e["kind"] == "case" and e.get("cases") for e in rest):
        parts: list[tuple[str, list[str]]] = []
        for e in rest:
            for c in e["cases"]:
                parts += [(" : " if parts else "", []), (f"{c}@{e['target']}", [e["id"]])]
        field = rest[0].get("field") or f"{u}.global_metadata"
        yield _stmt(u, [*parts, (" # ", []), (field, [e["id"] for e in rest])], ids)
    else:
        for e in out:
            yield _stmt(u, [(ref(e["target"]), [e["id"], e["target"]])], [e["id"]], plain=True)


def _stmt(u: str, parts: list[tuple[str, list[str]]], ids: list[str], plain: bool = False):
    text, spans = f"    {u} => ", [(5, 5 + len(u), [u])]
    if not plain:
        text += "("
    for piece, owners in parts:
        if owners:
            spans.append((len(text) + 1, len(text) + 1 + len(piece), owners))
        text += piece
    text += ";" if plain else ");"
    spans.append((1, len(text) + 1, ids))  # anything else on the line: the statement's edges
    return text, spans


def pin_error(error: ChainError, spans: dict[int, list], first_line: int,
              nodes: set[str]) -> dict:
    """Turn a parser error on the generated text into an error on nodes/edges."""
    where = spans.get(error.line - first_line + 1, [])
    hit = next((ids for a, b, ids in where if a <= error.column < max(b, a + 1)), [])
    kind = "node" if hit and all(i in nodes for i in hit) else "edge" if hit else "chain"
    return err(kind, hit, error.message, error.hint, error.line, error.column)


# -- text -> drawing ----------------------------------------------------------------------------

def edges_of(chain: Chain) -> list[Edge]:
    out = []
    for u, v, d in chain.graph.edges(data=True):
        c = d.get("cond")
        e = {"id": edge_id(u, v), "source": u, "target": v, "kind": d["kind"],
             "field": c.field if c else "", "op": c.op if c else "==",
             "value": c.value if c else None, "cases": list(d.get("cases", ())),
             "bound": d.get("bound")}
        e["label"] = edge_label(e)
        out.append(e)
    return out
