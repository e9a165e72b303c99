"""Graph widgets of the notebook's views: sfclab's SVG drawings, updated in place.

:class:`Graphs` shows graphs drawn by :mod:`sfclab.draw.chains` (laid out in
Python, so the browser only paints SVG: a view with twenty chain graphs shows at
once, and re-running a cell lays nothing out in the browser), all in one widget;
:class:`GraphView` is one graph.  An update is sent only when a drawing or a
heading changed, and the front end redraws only those; a view drawn anew (a cell
run again shows its widget in a new view) draws a screenful of graphs first and the
rest after that frame.  A click on a node calls the widget's click callbacks with the
node's data.  The element builders live in :mod:`sfclab.draw.chains` and are re-exported.

>>> from sfclab.lang import parse
>>> g = GraphView()
>>> g.show(*chain_elements(parse("chain c: firewall -> nat")["c"]))
True
>>> g.show(*chain_elements(parse("chain c: firewall -> nat")["c"]))   # same: nothing sent
False
>>> sorted(g.node_data["graph"])
['firewall', 'input', 'nat', 'output']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anywidget
import traitlets as t

from ..draw.chains import (CSS, SHARE_COLORS, VISITED, Element, automaton_elements, chain_elements,
                       edge_label, merged_elements, nf_color, share_color, svg)

__all__ = ["Graphs", "GraphView", "graph_widget", "SHARE_COLORS", "VISITED", "Element", "nf_color",
           "share_color", "edge_label", "chain_elements", "merged_elements",
           "automaton_elements"]


class Graphs(anywidget.AnyWidget):
    """Several graphs as SVG, each under an optional heading, in one widget (one view
    for the browser to render however many graphs); :meth:`set` replaces them and the
    front end redraws only the items whose heading or drawing changed.  A click on a
    node calls :meth:`on_click` callbacks with its data (and the item's ``key`` in it)."""

    _esm = """
    export default { render({ model, el }) {
      el.classList.add("sfc-graphs");
      let first = true;
      // A screenful: the items of a first drawing (the view not in the page yet, as when a
      // cell is run again and shows the view anew), the rest in a task after its frame.
      const screenful = (items) => {
        let room = window.innerHeight, k = 0;
        while (k < items.length && room > 0) {
          const h = /\\bheight="([\\d.]+)"/.exec(items[k].svg);
          room -= (h ? +h[1] : 100) + (items[k].head ? 24 : 8); k += 1;
        }
        return items.slice(0, k);
      };
      const draw = () => {
        const all = model.get("items");
        const items = first && !el.isConnected ? screenful(all) : all;
        const later = () => { if (model.get("items") === all) draw(); };
        if (first && items.length < all.length) requestAnimationFrame(() => setTimeout(later));
        first = false;
        const keep = new Set(); let prev = null;
        for (const it of items) {
          keep.add(it.key);
          let div = [...el.children].find((d) => d.dataset.key === it.key);
          if (!div) { div = document.createElement("div"); div.className = "sfc-graph";
                      div.dataset.key = it.key; }
          if (div._head !== it.head || div._svg !== it.svg) {
            div.innerHTML = (it.head ? `<div class="sfc-graph-head">${it.head}</div>` : "")
              + it.svg;
            div._head = it.head; div._svg = it.svg;
          }
          const want = prev ? prev.nextSibling : el.firstChild;
          if (div !== want) el.insertBefore(div, want);
          prev = div;
        }
        if (items === all)
          for (const div of [...el.children]) if (!keep.has(div.dataset.key)) div.remove();
      };
      el.addEventListener("click", (e) => {
        const g = e.target.closest("[data-node]"), d = e.target.closest("[data-key]");
        if (g && d) model.send({ event: "click", key: d.dataset.key, id: g.dataset.node });
      });
      model.on("change:items", draw); draw();
    } };
    """
    _css = """
    .sfc-graph { overflow-x: auto; margin: 2px 0 8px 0; }
    .sfc-graph svg { max-width: 100%; height: auto; display: block; }
    .sfc-graph-head { font-size: 13px; margin: 2px 0; }
    """ + CSS

    items = t.List(t.Dict(), help="The graphs: key, head (HTML), svg.").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Per item key: the data of its nodes by id (what a click hands to the callbacks).
        self.node_data: dict[str, dict[str, dict[str, Any]]] = {}
        self.elements: dict[str, tuple[list[Element], list[Element]]] = {}
        self._drawn: dict[str, tuple[str, str]] = {}           # key -> (elements, svg)
        self._clicks: list[Callable[[dict], Any]] = []
        self.on_msg(self._message)

    def set(self, items: Sequence[tuple[str, str, Sequence[Element], Sequence[Element]]]
            ) -> bool:
        """Show *items*, ``(key, heading HTML, nodes, edges)`` in order; returns True if
        anything changed (and was sent).  Unchanged graphs are not drawn again."""
        out, drawn = [], {}
        for key, head, nodes, edges in items:
            self.elements[key] = (list(nodes), list(edges))
            self.node_data[key] = {n["data"]["id"]: {**n["data"], "key": key} for n in nodes}
            fingerprint = repr((nodes, edges))
            old = self._drawn.get(key)
            picture = old[1] if old and old[0] == fingerprint else (
                svg(nodes, edges, title=key, css=False) if nodes else "")
            drawn[key] = (fingerprint, picture)
            out.append({"key": key, "head": head, "svg": picture})
        for key in set(self.elements) - set(drawn):
            self.elements.pop(key)
            self.node_data.pop(key, None)
        self._drawn = drawn
        if out == self.items:
            return False
        self.items = out
        return True

    def on_click(self, fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
        """Call ``fn(node_data)`` when a node is clicked in the browser."""
        self._clicks.append(fn)
        return fn

    def _message(self, _widget: Any, content: dict, _buffers: Any) -> None:
        data = self.node_data.get(content.get("key", ""), {}).get(content.get("id", ""))
        if content.get("event") == "click" and data is not None:
            for fn in list(self._clicks):
                fn(data)


class GraphView(Graphs):
    """One graph (a :class:`Graphs` of one item, without heading)."""

    def show(self, nodes: Sequence[Element], edges: Sequence[Element], *,
             title: str = "graph") -> bool:
        """Draw *nodes* and *edges*; returns True if the drawing changed (and was sent)."""
        return self.set([(title, "", nodes, edges)] if nodes else [])

    @property
    def svg(self) -> str:
        """The drawing shown (empty when nothing is)."""
        return self.items[0]["svg"] if self.items else ""

    @property
    def nodes(self) -> list[Element]:
        return next(iter(self.elements.values()), ([], []))[0]

    @property
    def edges(self) -> list[Element]:
        return next(iter(self.elements.values()), ([], []))[1]


def graph_widget(*, on_click: Callable[[dict], Any] | None = None) -> GraphView:
    """An empty :class:`GraphView`; *on_click(data)* gets a clicked node's data."""
    g = GraphView()
    if on_click is not None:
        g.on_click(on_click)
    return g
