// The node and edge menus (top right of the canvas).
import { h, button } from "./dom.js";

const KINDS = ["seq", "then", "else", "case", "loop"];
const OPS = ["==", "!=", "<", "<=", ">", ">="];

export function menus({ menu, cy, send, palette }) {
  let current = null; // the id of the node or edge the menu is for
  function close() { menu.hidden = true; menu.replaceChildren(); current = null; }
  function open(...items) { menu.replaceChildren(...items); menu.hidden = false; }
  // its element gone (deleted by a key, an undo, the text): the menu goes too
  function closeIfGone() { if (current !== null && cy.getElementById(current).empty()) close(); }

  function nodeMenu(node) {
    const id = node.id();
    current = id;
    const items = [h("b", {}, id)];
    if (node.data("kind") === "nf") {
      items.push(button("Loop", "Repeat this NF: add a loop edge to itself",
        () => { send({ event: "add_edge", source: id, target: id, kind: "loop" }); close(); }, "↺"));
    }
    if (!["input", "output"].includes(id)) {
      items.push(button("Delete", "Delete this node and its edges",
        () => { send({ event: "remove", ids: [id] }); close(); }, "✕"));
    }
    items.push(button("Close", "", close));
    open(...items);
  }

  function edgeMenu(edge) {
    const d = edge.data();
    current = d.id;
    const src = cy.getElementById(d.source).data("nf");
    const fields = (palette().find((p) => p.name === src) || { fields: [] }).fields;
    const kind = h("select", { name: "kind" }, ...KINDS.map((k) => h("option",
      { value: k, selected: k === d.kind || (k === "seq" && d.kind === "exit") }, k)));
    const listId = `sfc-f-${Math.random().toString(36).slice(2)}`;
    const field = h("input", { name: "field", list: listId, value: d.field || "", placeholder: `${d.source}.global_metadata` });
    const op = h("select", { name: "op" }, ...OPS.map((o) => h("option", { value: o, selected: o === d.op }, o)));
    const value = h("input", { name: "value", size: 6, value: d.value ?? "" });
    const cases = h("input", { name: "cases", size: 10, value: (d.cases || []).join(", "), placeholder: "1, 2" });
    const bound = h("input", { name: "bound", type: "number", min: 2, max: 255, value: d.bound ?? 3 });
    const rows = {
      cond: h("div", { class: "sfc-row" }, field, op, value,
        h("datalist", { id: listId }, ...fields.map((f) => h("option", { value: `${d.source}.${f}` })))),
      cases: h("div", { class: "sfc-row" }, "values ", cases),
      bound: h("div", { class: "sfc-row" }, "runs in all ", bound),
    };
    const show = () => {
      rows.cond.hidden = !["then", "else"].includes(kind.value);
      rows.cases.hidden = kind.value !== "case";
      rows.bound.hidden = kind.value !== "loop";
    };
    kind.addEventListener("change", show);
    const apply = () => {
      send({ event: "set_edge", id: d.id, kind: kind.value, field: field.value.trim(), op: op.value,
        value: value.value.trim() === "" ? null : value.value.trim(),
        cases: cases.value.split(",").map((s) => s.trim()).filter(Boolean),
        bound: bound.value ? Number(bound.value) : null });
      close();
    };
    open(h("b", {}, `${d.source} → ${d.target}`), h("div", { class: "sfc-row" }, "kind ", kind),
      rows.cond, rows.cases, rows.bound,
      h("div", { class: "sfc-row" }, button("Apply", "", apply),
        button("Delete", "", () => { send({ event: "remove", ids: [d.id] }); close(); }), button("Close", "", close)));
    show();
  }

  return { nodeMenu, edgeMenu, close, closeIfGone };
}
