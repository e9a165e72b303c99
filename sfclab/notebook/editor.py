"""The chain editor: draw a service function chain with the mouse, get chain text back.

:class:`ChainEditor` is an anywidget.  Its front end (``js/src/editor.js``, bundled
into ``sfclab/static/editor.js``) only renders and reports gestures; everything
else happens here, where it can be tested without a browser:

* the drawing is two synced lists, :attr:`ChainEditor.nodes` and
  :attr:`ChainEditor.edges` (plain dicts, schema below);
* an edit (from Python or a front-end message) changes the drawing at once and
  schedules a *commit* (debounced, :attr:`ChainEditor.debounce` seconds):
  the drawing is checked, written as chain text, parsed with
  :func:`sfclab.parse`, and the registered :meth:`~ChainEditor.on_change`
  callbacks are called;
* setting :attr:`ChainEditor.text` parses it and redraws the chain;
* every gesture (add, delete, connect, edge kind, move, tidy, a text edit) is one
  step of :meth:`~ChainEditor.undo` / :meth:`~ChainEditor.redo`;
* a node added without a position goes to a free spot inside
  :attr:`ChainEditor.viewport` (the visible extent the front end reports).

Node dicts: ``id`` (``"firewall"``, ``"nat#2"``, ``"output"``), ``kind``
(``"nf"``/``"endpoint"``), ``nf`` (NF type or ``""``), ``label``, ``layer``,
``color``, ``offload``, ``x``, ``y``, ``width`` (drawn width, see
:mod:`.editor_layout`).  Edge dicts: ``id`` (``"u->v"``),
``source``, ``target``, ``kind`` (seq/then/else/case/loop/exit), ``field``,
``op``, ``value`` (the condition of then/else/loop edges; the tested field of
case edges), ``cases`` (list of case values), ``bound`` (loop runs in all) and
``label`` (what the canvas shows).

>>> ed = ChainEditor.from_text("chain web: firewall -> nat")
>>> ed.add_nf("lb", x=500, y=60)
'lb'
>>> ed.remove("nat->output"); ed.connect("nat", "lb"); ed.connect("lb", "output")
'nat->lb'
'lb->output'
>>> ed.commit()
True
>>> [str(p) for p in ed.chains.paths()]
['web/0 [1]: input -> firewall -> nat -> lb -> output']
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from ..errors import ChainError, ChainValidationError
from ..ir.model import Chain, ChainSet
from ..lang import default_catalog, format_chain, parse
from ..nfinfo import ENDPOINTS, NFCatalog
from ..draw.style import ENDPOINT_COLORS, LAYER_COLORS, OTHER_LAYER_COLOR
from .editor_layout import (DX, free_spot, layered_positions, next_to_last, node_width,
                            place_nodes, tidy_positions)
from .editor_text import (
    check_drawing,
    edge_id,
    edge_label,
    edges_of,
    err,
    parse_value,
    pin_error,
    render_chain,
)

__all__ = ["ChainEditor", "EditorChange", "LAYER_COLORS", "ENDPOINT_COLORS", "BUNDLE",
           "check_drawing", "render_chain", "layered_positions"]

#: The bundled front end (built from ``js/`` by the package build).
BUNDLE = Path(__file__).resolve().parent.parent / "static" / "editor.js"
#: Edge kinds a user can pick in the edge menu (``exit`` comes from text only).
USER_EDGE_KINDS = ("seq", "then", "else", "case", "loop")
_EDGE_KINDS = (*USER_EDGE_KINDS, "exit")
_OPS = ("==", "!=", "<", "<=", ">", ">=")
_NAME_OK = re.compile(r'^[^"\n{}]+$')
_MISSING_BUNDLE = """export default { render({ el }) {
  el.innerHTML = '<pre style="color:#c00">sfclab: the chain editor front end is not built ' +
    '(sfclab/static/editor.js is missing). Run `npm ci && npm run build` in js/, ' +
    'or reinstall sfclab with npm on PATH.</pre>';
} };"""

Node = dict[str, Any]
Edge = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EditorChange:
    """What an :meth:`ChainEditor.on_change` callback receives after a commit.

    ``chains`` is the parsed :class:`ChainSet` (every chain in the text), or
    ``None`` when the drawing or the text is invalid; ``errors`` then says why.
    """

    text: str
    chains: ChainSet | None
    errors: tuple[dict, ...]


# -- the widget -----------------------------------------------------------------------------------

class ChainEditor(anywidget.AnyWidget):
    """Draw one chain: drop NFs from the palette, drag edges, pick branch kinds.

    ``ChainEditor(chain_name="web")`` starts an empty chain; :meth:`from_text`
    starts from chain text.  :attr:`text` holds *every* chain of the text: the
    drawn chain is written from the drawing, the others are kept (reformatted);
    set :attr:`chain_name` to another chain's name to draw that one instead.
    """

    _esm = BUNDLE if BUNDLE.is_file() else _MISSING_BUNDLE

    chain_name = t.Unicode("chain1", help="Name of the chain being drawn; set it to another "
                           "chain's name to draw that one, or to a new name to rename it.").tag(sync=True)
    nodes = t.List(t.Dict(), help="Nodes of the drawing (see the module docstring).").tag(sync=True)
    edges = t.List(t.Dict(), help="Edges of the drawing (see the module docstring).").tag(sync=True)
    palette = t.List(t.Dict(), help="NFs and end points that can be dropped on the canvas: "
                     "name, kind, layer, color, offload, fields, description.").tag(sync=True)
    selection = t.List(t.Unicode(), help="Ids of the selected nodes and edges.").tag(sync=True)
    errors = t.List(t.Dict(), help="Why the drawing or text is invalid: kind "
                    "(node/edge/chain/text), ids, message, hint, line, column.").tag(sync=True)
    text = t.Unicode("", help="Chain text of every chain; setting it redraws.").tag(sync=True)
    can_undo = t.Bool(False, help="Whether there is an edit to undo.").tag(sync=True)
    can_redo = t.Bool(False, help="Whether there is an undone edit to redo.").tag(sync=True)
    height = t.Unicode("420px", help="CSS height of the canvas (at least; the palette is "
                       "never clipped).").tag(sync=True)
    viewport = t.List(t.Float(), help="The visible extent of the canvas, x1, y1, x2, y2 in "
                      "node coordinates (set by the front end); new nodes go inside it.").tag(sync=True)
    lab_state = t.Dict({"bound": False}, help="The Lab the editor is bound to (lab.editor(), "
                       "%sfc edit): bound, status, detail, error, busy, push_label; set by "
                       ":mod:`.lab_editor`.").tag(sync=True)
    debounce = t.Float(0.3, help="Seconds to wait after a front-end edit before the drawing is "
                       "re-parsed; 0 commits every edit at once.")

    def __init__(self, *, catalog: NFCatalog | None = None, **kwargs: Any) -> None:
        self.catalog = catalog if catalog is not None else default_catalog()
        self._context = ChainSet()
        self._slot: str | None = None  # name of the drawn chain inside _context
        self._header: tuple[str | None, float | None] = (None, None)
        self._history: list[dict] = []
        self._future: list[dict] = []
        self._callbacks: list[Callable[[EditorChange], Any]] = []
        self._chains: ChainSet | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._quiet = False
        self._debounced = False
        #: What the Push button does (a bound editor's; None: no button).
        self.push_action: Callable[[], Any] | None = None
        text = kwargs.pop("text", "")
        super().__init__(**kwargs)
        self.palette = self._palette()
        self.on_msg(self._on_front_end)
        if text:
            self._load_text(text, record=False)
        else:
            self.nodes = [self._node(n, 60 if n == "input" else 60 + 3 * DX, 60)
                          for n in ("input", "output")]
            self.commit()

    # -- constructors and views of the state ---------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, chain_name: str | None = None, **kwargs: Any) -> ChainEditor:
        """An editor drawing *chain_name* (default: the first chain) of *text*."""
        if chain_name:
            kwargs["chain_name"] = chain_name
        return cls(text=text, **kwargs)

    @property
    def chains(self) -> ChainSet:
        """Every chain of :attr:`text`, parsed; raises the first error if invalid."""
        self.flush()
        if self._chains is None:
            e = self.errors[0] if self.errors else {"message": "the drawing is invalid", "hint": ""}
            raise ChainValidationError(e["message"], line=e.get("line", 0),
                                       column=e.get("column", 0), text=self.text, hint=e["hint"])
        return self._chains

    @property
    def chain(self) -> Chain:
        """The drawn chain, parsed."""
        return self.chains[self.chain_name]

    @property
    def valid(self) -> bool:
        self.flush()
        return self._chains is not None

    def __repr__(self) -> str:
        state = "valid" if self._chains is not None else f"{len(self.errors)} error(s)"
        return (f"<ChainEditor {self.chain_name!r}: {len(self.nodes)} nodes, "
                f"{len(self.edges)} edges, {state}>")

    def on_change(self, fn: Callable[[EditorChange], Any], *, remove: bool = False):
        """Call ``fn(change)`` after every commit that changes the text or the errors."""
        if remove:
            self._callbacks.remove(fn)
        else:
            self._callbacks.append(fn)
        return fn

    # -- edits (Python API) ------------------------------------------------------------------------
    def add_nf(self, nf: str, x: float | None = None, y: float | None = None) -> str:
        """Drop an NF (any catalogue name or alias) or an end point; returns the node id."""
        low = nf.lower()
        if low in ENDPOINTS:
            nid = low
            if any(n["id"] == nid for n in self.nodes):
                return nid
        else:
            base = self.catalog.resolve(nf).name
            taken = {n["id"] for n in self.nodes}
            nid, k = base, 2
            while nid in taken:
                nid, k = f"{base}#{k}", k + 1
        node = self._node(nid, 0, 0)
        if x is None or y is None:
            view = self.viewport if len(self.viewport) == 4 else None
            x, y = free_spot(self.nodes, node["width"], near=next_to_last(self.nodes, view),
                             view=view)
        node["x"], node["y"] = float(x), float(y)
        with self._gesture():
            self.nodes = [*self.nodes, node]
        return nid

    def connect(self, source: str, target: str, kind: str = "seq", **attrs: Any) -> str:
        """Draw an edge; *kind* and *attrs* as in :meth:`set_edge`.  Returns the edge id."""
        ids = {n["id"] for n in self.nodes}
        for n in (source, target):
            if n not in ids:
                raise KeyError(f"no node {n!r} in the drawing")
        eid = edge_id(source, target)
        if any(e["id"] == eid for e in self.edges):
            return eid
        with self._gesture():
            e = {"id": eid, "source": source, "target": target, "kind": "seq", "field": "",
                 "op": "==", "value": None, "cases": [], "bound": None, "label": ""}
            self.edges = [*self.edges, e]
            if kind != "seq" or attrs or source == target:
                self._set_edge(eid, "loop" if source == target and kind == "seq" else kind,
                               **attrs)
        return eid

    def set_edge(self, edge_id: str, kind: str, *, field: str | None = None,
                 op: str | None = None, value: Any = None, cases: Iterable[Any] | None = None,
                 bound: int | None = None) -> None:
        """Make an edge seq, a branch (then/else with ``field op value``), a case
        (``cases`` values of ``field``) or a loop (``bound`` runs in all).

        The other edge of a branch follows: setting one edge to ``then`` makes the
        only other edge ``else``; setting a case numbers its siblings.
        """
        with self._gesture():
            self._set_edge(edge_id, kind, field=field, op=op, value=value, cases=cases,
                           bound=bound)

    def remove(self, *ids: str) -> None:
        """Delete nodes (with their edges) and edges; ``input``/``output`` stay."""
        gone = set(ids) - {"input", "output"}
        if not gone:
            return
        with self._gesture(), self.hold_sync():   # one message: edges and nodes together
            self.edges = [e for e in self.edges if e["id"] not in gone
                          and e["source"] not in gone and e["target"] not in gone]
            self.nodes = [n for n in self.nodes if n["id"] not in gone]
            self.selection = [s for s in self.selection if s not in gone]

    def move(self, positions: dict[str, tuple[float, float]]) -> None:
        """Set node positions: a gesture of its own (undo puts the nodes back), though
        the chain text does not change."""
        nodes = [{**n, "x": float(positions[n["id"]][0]), "y": float(positions[n["id"]][1])}
                 if n["id"] in positions else n for n in self.nodes]
        with self._gesture(edit=False):
            self.nodes = nodes

    def tidy(self, width: float | None = None) -> None:
        """Lay the drawing out again, left to right (one gesture), and fit it in view.

        *width*: the canvas's width in pixels (the front end sends it); the columns
        come closer (never farther apart than usual), down to what keeps the edge labels
        clear of the nodes, so that the chain fits at a readable zoom."""
        dx = DX
        cols = len({x for x, _ in layered_positions(self.nodes, self.edges).values()})
        if width and cols > 1:
            widest = max(n["width"] for n in self.nodes)
            label = 6.0 * max((len(e["label"]) for e in self.edges), default=0)
            dx = min(DX, max(widest + max(40.0, label + 12), (float(width) - 140) / (cols - 1)))
        self.move(tidy_positions(self.nodes, self.edges, dx, width))
        self.send({"event": "fit"})     # after the positions (messages keep their order)

    def undo(self) -> bool:
        """Undo the last gesture (drawing or text); False if there is none."""
        return self._travel(self._history, self._future)

    def redo(self) -> bool:
        """Redo the last undone gesture; False if there is none."""
        return self._travel(self._future, self._history)

    # -- commit --------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Commit now if an edit is waiting for its debounce."""
        if self._timer is not None:
            self.commit()

    def commit(self) -> bool:
        """Check and parse the drawing, update :attr:`text` and :attr:`errors`,
        call the callbacks; True if the drawing is a valid chain."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        text, spans, first = self._render()
        errors = check_drawing(self.nodes, self.edges)
        chains = None
        if not errors:
            try:
                chains = parse(text, catalog=self.catalog)
            except ChainError as e:
                errors = [pin_error(e, spans, first, {n["id"] for n in self.nodes})]
        if chains is not None:
            self._context, self._slot = chains, self.chain_name
        self._publish(text, chains, errors)
        return chains is not None

    # -- internals -------------------------------------------------------------------------------------
    def _publish(self, text: str, chains: ChainSet | None, errors: list[dict], *,
                 force: bool = False) -> None:
        changed = force or text != self.text or errors != self.errors \
            or (chains is None) != (self._chains is None)
        self._chains = chains
        self._quiet = True
        try:
            self.text = text
        finally:
            self._quiet = False
        self.errors = errors
        if changed:
            change = EditorChange(text, chains, tuple(errors))
            for fn in list(self._callbacks):
                fn(change)

    def _render(self) -> tuple[str, dict, int]:
        match, weight = self._header
        mine, spans = render_chain(self.chain_name, match, weight, self.nodes, self.edges)
        blocks, first = [], 1
        placed = False
        for c in self._context:
            if c.name == self._slot:
                placed = True
                first = sum(b.count("\n") + 2 for b in blocks) + 1
                blocks.append(mine)
            elif c.name != self.chain_name:
                blocks.append(format_chain(c))
        if not placed:
            first = sum(b.count("\n") + 2 for b in blocks) + 1
            blocks.append(mine)
        return "\n\n".join(blocks), spans, first

    def _node(self, nid: str, x: float, y: float) -> Node:
        if nid in ENDPOINTS:
            return {"id": nid, "kind": "endpoint", "nf": "", "label": nid, "layer": 0,
                    "color": ENDPOINT_COLORS[nid], "offload": "", "x": float(x), "y": float(y),
                    "width": node_width(nid)}
        info = self.catalog.resolve(nid.split("#")[0])
        return {"id": nid, "kind": "nf", "nf": info.name, "label": nid, "layer": info.layer,
                "color": LAYER_COLORS.get(info.layer, OTHER_LAYER_COLOR), "offload": info.offload,
                "x": float(x), "y": float(y), "width": node_width(nid)}

    def _palette(self) -> list[dict]:
        nfs = sorted(self.catalog, key=lambda i: (i.layer, i.name))
        items = [{"name": i.name, "kind": "nf", "layer": i.layer, "offload": i.offload,
                  "color": LAYER_COLORS.get(i.layer, OTHER_LAYER_COLOR),
                  "fields": i.field_names(), "description": i.description} for i in nfs]
        return items + [{"name": n, "kind": "endpoint", "layer": 0, "offload": "",
                         "color": ENDPOINT_COLORS[n], "fields": [], "description": "end point"}
                        for n in ENDPOINTS]

    def _find_edge(self, eid: str) -> Edge:
        for e in self.edges:
            if e["id"] == eid:
                return e
        raise KeyError(f"no edge {eid!r} in the drawing")

    def _set_edge(self, eid: str, kind: str, *, field: str | None = None, op: str | None = None,
                  value: Any = None, cases: Iterable[Any] | None = None,
                  bound: int | None = None) -> None:
        if kind not in _EDGE_KINDS:
            raise ValueError(f"edge kind must be one of {', '.join(USER_EDGE_KINDS)}, not {kind!r}")
        if op is not None and op not in _OPS:
            raise ValueError(f"comparison must be one of {' '.join(_OPS)}, not {op!r}")
        edges = [dict(e) for e in self.edges]
        me = next((e for e in edges if e["id"] == eid), None)
        if me is None:
            raise KeyError(f"no edge {eid!r} in the drawing")
        u = me["source"]
        sibs = [e for e in edges if e["source"] == u and e is not me and e["kind"] != "loop"]
        me["kind"] = kind
        if kind in ("then", "else"):
            old = next((e for e in sibs if e["kind"] in ("then", "else") and e.get("field")), me)
            cond = (field or old.get("field") or self._default_field(u),
                    op or (old["op"] if old.get("field") else "=="),
                    parse_value(value) if value is not None else
                    (old["value"] if old.get("value") is not None else 1))
            pair = [e for e in sibs if e["kind"] in ("seq", "then", "else", "exit")]
            if len(pair) == 1:
                pair[0]["kind"] = "else" if kind == "then" else "then"
            for e in [me, *pair[:1]]:
                e["field"], e["op"], e["value"] = cond
        elif kind == "case":
            me["field"] = field or me.get("field") or f"{u}.global_metadata"
            vals = [parse_value(c) for c in (cases if cases is not None else me["cases"])]
            used = {c for e in sibs for c in e.get("cases") or ()}
            me["cases"] = [c for c in vals if c is not None] or [_free(used)]
            used |= set(me["cases"])
            for e in sibs:
                if e["kind"] != "case" or not e.get("cases"):
                    e.update(kind="case", field=me["field"], cases=[_free(used)])
                    used |= set(e["cases"])
                e["field"] = me["field"]
        elif kind == "loop":
            me["bound"] = int(bound) if bound is not None else (me.get("bound") or 3)
            me["field"], me["op"], me["value"] = "", "<", None
        else:
            me["field"], me["value"], me["cases"], me["bound"] = "", None, [], None
        for e in edges:
            e["label"] = edge_label(e)
        self.edges = edges

    def _default_field(self, nid: str) -> str:
        node = next((n for n in self.nodes if n["id"] == nid), None)
        if node and node["kind"] == "nf":
            own = list(self.catalog.resolve(node["nf"]).fields)
            return f"{nid}.{own[0] if own else 'global_metadata'}"
        return f"{nid}.global_metadata"

    def _snapshot(self) -> dict:
        return {"nodes": copy.deepcopy(self.nodes), "edges": copy.deepcopy(self.edges),
                "chain_name": self.chain_name, "header": self._header, "slot": self._slot,
                "context": self._context}

    def _record(self, snapshot: dict | None = None) -> None:
        self._history = [*self._history[-99:], snapshot or self._snapshot()]
        self._future = []
        self.can_undo, self.can_redo = True, False

    @contextmanager
    def _gesture(self, *, edit: bool = True) -> Iterator[None]:
        """One undo step for what the block changes (none if it changes nothing);
        *edit*: the chain may have changed, so commit."""
        before = self._snapshot()
        yield
        if self._same(before):
            return
        self._record(before)
        if edit:
            self._edited()

    def _same(self, snap: dict) -> bool:
        return (snap["nodes"], snap["edges"], snap["chain_name"], snap["header"]) == \
            (self.nodes, self.edges, self.chain_name, self._header)

    def _travel(self, src: list[dict], dst: list[dict]) -> bool:
        if not src:
            return False
        dst.append(self._snapshot())
        s = src.pop()
        self._rename_quietly(s["chain_name"])
        self._header, self._slot, self._context = s["header"], s["slot"], s["context"]
        with self.hold_sync():
            self.nodes, self.edges = s["nodes"], s["edges"]
        self.can_undo, self.can_redo = bool(self._history), bool(self._future)
        self.commit()
        return True

    def _edited(self) -> None:
        if not self._debounced or self.debounce <= 0:
            self.commit()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.commit()
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_later(self.debounce, self.commit)

    def _load_text(self, text: str, *, record: bool) -> bool:
        try:
            cs = parse(text, catalog=self.catalog)
        except ChainError as e:
            self._publish(text, None, [err("text", [], e.message, e.hint, e.line, e.column)],
                          force=True)
            return False
        if record:
            self._record()
        name = self.chain_name if self.chain_name in cs or not len(cs) else cs.names()[0]
        self._context, self._slot = cs, name if name in cs else None
        self._rename_quietly(name)
        self._draw(cs[name] if name in cs else None)
        errors = [] if name in cs else check_drawing(self.nodes, self.edges)
        self._publish(text, cs if not errors else None, errors, force=True)
        return True

    def _rename_quietly(self, name: str) -> None:
        """Set :attr:`chain_name` without the redraw and undo step a user's rename makes."""
        self._quiet = True
        try:
            self.chain_name = name
        finally:
            self._quiet = False

    def new_chain(self, name: str) -> None:
        """Start drawing a new, empty chain *name* beside the text's other chains (not an
        undo step: the editor starts so)."""
        self._rename_quietly(name)
        self._slot = None
        self._draw(None)
        self.commit()
        self._history, self._future = [], []
        self.can_undo = self.can_redo = False

    def _draw(self, chain: Chain | None) -> None:
        """Replace the drawing by *chain* (keeping the positions of nodes that stay)."""
        old = {n["id"]: (n["x"], n["y"]) for n in self.nodes}
        if chain is None:
            nodes = [self._node("input", 0, 0), self._node("output", 0, 0)]
            edges: list[Edge] = []
            self._header = (None, None)
        else:
            nodes = [self._node(n, 0, 0) for n in chain.graph]
            edges = edges_of(chain)
            self._header = (str(chain.match) if chain.match else None, chain.weight)
        place_nodes(nodes, edges, old)
        with self.hold_sync():
            self.selection = []
            self.nodes, self.edges = nodes, edges

    @t.observe("text")
    def _text_set(self, change: dict) -> None:
        if not self._quiet:
            self._load_text(change["new"], record=True)

    @t.observe("chain_name")
    def _name_set(self, change: dict) -> None:
        if self._quiet:
            return
        if isinstance(change["old"], str):  # not the name given to the constructor
            # a rename or a switch to another chain: one undo step
            self._record({**self._snapshot(), "chain_name": change["old"]})
        if change["new"] in self._context and change["new"] != self._slot:
            self._slot = change["new"]
            self._draw(self._context[change["new"]])
        self.commit()

    @t.validate("chain_name")
    def _valid_name(self, proposal: dict) -> str:
        name = proposal["value"].strip()
        if not _NAME_OK.match(name):
            raise t.TraitError(f"chain name {proposal['value']!r}: use letters, digits and _")
        return name

    @t.validate("edges")
    def _valid_edges(self, proposal: dict) -> list[Edge]:
        for e in proposal["value"]:
            if e.get("kind") not in _EDGE_KINDS:
                raise t.TraitError(f"edge {e.get('id')!r}: kind must be one of "
                                   f"{', '.join(_EDGE_KINDS)}, not {e.get('kind')!r}")
        return proposal["value"]

    @t.validate("nodes")
    def _valid_nodes(self, proposal: dict) -> list[Node]:
        ids = [n["id"] for n in proposal["value"]]
        if len(set(ids)) != len(ids):
            raise t.TraitError(f"node ids must be unique: {sorted(ids)}")
        return proposal["value"]

    @t.validate("selection")
    def _valid_selection(self, proposal: dict) -> list[str]:
        known = {n["id"] for n in self.nodes} | {e["id"] for e in self.edges}
        return [s for s in proposal["value"] if s in known]

    def _on_front_end(self, _widget: Any, msg: dict, _buffers: list) -> None:
        """Gestures from the front end; a bad one becomes an error, never a traceback."""
        ev = msg.get("event")
        try:
            if ev == "add_node":
                view = msg.get("view")
                if isinstance(view, list) and len(view) == 4:
                    self.viewport = [float(v) for v in view]
                self._from_front_end(lambda: self.add_nf(msg["nf"], msg.get("x"), msg.get("y")))
            elif ev == "add_edge":
                self._from_front_end(lambda: self.connect(msg["source"], msg["target"],
                                                            msg.get("kind", "seq")))
            elif ev == "set_edge":
                self._from_front_end(lambda: self.set_edge(
                    msg["id"], msg["kind"], field=msg.get("field") or None, op=msg.get("op"),
                    value=msg.get("value"), cases=msg.get("cases"), bound=msg.get("bound")))
            elif ev == "remove":
                self._from_front_end(lambda: self.remove(*msg.get("ids", ())))
            elif ev == "move":
                self.move({k: tuple(v) for k, v in msg.get("positions", {}).items()})
            elif ev == "tidy":
                self.tidy(width=msg.get("width"))
            elif ev in ("undo", "redo", "commit"):
                getattr(self, ev)()
            elif ev == "push" and self.push_action is not None:
                self.flush()
                self.push_action()
        except (KeyError, ValueError, TypeError, ChainError) as e:
            self.errors = [*self.errors, err("chain", [], f"{ev}: {e}")]

    def _from_front_end(self, edit: Callable[[], Any]) -> None:
        """Run a Python-API edit with a debounced commit (edits arrive in bursts)."""
        self._debounced = True
        try:
            edit()
        finally:
            self._debounced = False


def _free(used: set) -> int:
    k = 1
    while k in used:
        k += 1
    return k

