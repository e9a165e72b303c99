// sfclab chain editor: the anywidget front end of sfclab.notebook.editor.ChainEditor.
//
// It only renders the drawing Python keeps in the `nodes` / `edges` traits and
// reports gestures back as custom messages ({event: "add_node" | "add_edge" |
// "set_edge" | "remove" | "move" | "undo" | "redo" | "tidy"}).  Python checks,
// writes the chain text, parses it and sends the new state.  For tests the
// cytoscape instance is on the canvas element: `el.querySelector(".sfc-canvas").__cy`.
import cytoscape from "cytoscape";
import edgehandles from "cytoscape-edgehandles";
import { CSS } from "./style.js";
import { GRAPH_STYLE } from "./graph-style.js";

cytoscape.use(edgehandles);

const KINDS = ["seq", "then", "else", "case", "loop"];
const OPS = ["==", "!=", "<", "<=", ">", ">="];
const LAYERS = { 2: "L2 link", 3: "L3 network", 4: "L4 transport", 7: "L7 application" };
const EH_CLASSES = ".eh-ghost-node, .eh-ghost-edge, .eh-preview";

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c != null));
  return e;
}

function render({ model, el }) {
  const send = (msg) => model.send(msg);
  const style = h("style", {}, CSS);
  const canvas = h("div", { class: "sfc-canvas" });
  const palette = h("div", { class: "sfc-palette", title: "Drag an NF onto the canvas" });
  const menu = h("div", { class: "sfc-menu", hidden: true });
  const errors = h("ul", { class: "sfc-errors" });
  const status = h("span", { class: "sfc-status" });
  const text = h("textarea", { class: "sfc-text", spellcheck: "false", rows: 6,
    title: "Chain text: edit and leave the box (or Ctrl+Enter) to redraw" });
  const name = h("input", { class: "sfc-name", title: "Chain name" });
  const btn = (label, title, fn) => h("button", { title, onclick: fn }, label);
  const modeBtn = btn("Connect", "Drag from node to node to connect them", () => setDraw(!drawing));
  const undoBtn = btn("Undo", "Undo (Ctrl+Z)", () => send({ event: "undo" }));
  const redoBtn = btn("Redo", "Redo (Ctrl+Shift+Z)", () => send({ event: "redo" }));
  const toolbar = h("div", { class: "sfc-toolbar" }, h("b", {}, "chain"), name, modeBtn,
    undoBtn, redoBtn, btn("Delete", "Delete the selection (Del)", removeSelected),
    btn("Tidy", "Lay the chain out again", () => send({ event: "tidy" })),
    btn("Fit", "Fit the chain in view", () => cy.fit(undefined, 30)), status);
  const body = h("div", { class: "sfc-body" }, palette, canvas, menu);
  const root = h("div", { class: "sfc-editor", tabindex: 0, "data-lm-suppress-shortcuts": "true" },
    style, toolbar, body, errors, text);
  el.append(root);

  body.style.height = model.get("height");
  const cy = cytoscape({ container: canvas, style: GRAPH_STYLE, boxSelectionEnabled: false,
    minZoom: 0.3, maxZoom: 2.5, layout: { name: "preset" } });
  canvas.__cy = cy;
  const eh = cy.edgehandles({ snap: false, hoverDelay: 50, noEdgeEventsInDraw: true,
    canConnect: (s, t) => !s.same(t), edgeParams: () => ({ data: { kind: "seq", label: "" } }) });
  let drawing = false;
  function setDraw(on) {
    drawing = on;
    on ? eh.enableDrawMode() : eh.disableDrawMode();
    modeBtn.classList.toggle("sfc-on", on);
  }
  cy.on("ehcomplete", (_ev, source, target, added) => {
    added.remove();
    send({ event: "add_edge", source: source.id(), target: target.id() });
  });
  cy.on("dragfreeon", "node", (ev) => {
    const positions = {};
    ev.target.union(cy.nodes(":selected")).forEach((n) => {
      positions[n.id()] = [n.position("x"), n.position("y")];
    });
    send({ event: "move", positions });
  });
  cy.on("select unselect", () => {
    model.set("selection", cy.$(":selected").map((e) => e.id()));
    model.save_changes();
  });
  cy.on("tap", "edge", (ev) => edgeMenu(ev.target));
  cy.on("tap", "node", (ev) => nodeMenu(ev.target));
  cy.on("tap", (ev) => { if (ev.target === cy) closeMenu(); });

  // -- palette: pointer-driven drag onto the canvas, or a click to append --------------------
  function buildPalette() {
    const items = [];
    let group = null;
    for (const p of model.get("palette")) {
      const title = p.kind === "endpoint" ? "end points" : (LAYERS[p.layer] || `layer ${p.layer}`);
      if (title !== group) items.push(h("div", { class: "sfc-group" }, (group = title)));
      const item = h("div", { class: `sfc-item sfc-${p.kind}`, "data-nf": p.name,
        title: `${p.name}: ${p.description}${p.offload === "non" ? " (server only)" : ""}` },
        h("i", { style: `background:${p.color}` }), p.name);
      item.addEventListener("pointerdown", (ev) => startDrag(ev, p.name));
      items.push(item);
    }
    palette.replaceChildren(...items);
  }
  function startDrag(ev, nf) {
    ev.preventDefault();
    const ghost = h("div", { class: "sfc-ghost" }, nf);
    document.body.append(ghost);
    const place = (e) => { ghost.style.left = `${e.clientX + 6}px`; ghost.style.top = `${e.clientY + 6}px`; };
    place(ev);
    const sx = ev.clientX, sy = ev.clientY;
    const up = (e) => {
      document.removeEventListener("pointermove", place);
      document.removeEventListener("pointerup", up);
      ghost.remove();
      const r = canvas.getBoundingClientRect();
      const inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
      if (inside) {
        const pan = cy.pan(), zoom = cy.zoom();
        send({ event: "add_node", nf, x: (e.clientX - r.left - pan.x) / zoom, y: (e.clientY - r.top - pan.y) / zoom });
      } else if (Math.abs(e.clientX - sx) + Math.abs(e.clientY - sy) < 4) {
        send({ event: "add_node", nf }); // a click: Python picks the place
      }
    };
    document.addEventListener("pointermove", place);
    document.addEventListener("pointerup", up);
  }

  // -- menus ----------------------------------------------------------------------------------
  function closeMenu() { menu.hidden = true; menu.replaceChildren(); }
  function nodeMenu(node) {
    const id = node.id();
    const items = [h("b", {}, id)];
    if (node.data("kind") === "nf") {
      items.push(btn("Loop ↺", "Repeat this NF: add a loop edge to itself",
        () => { send({ event: "add_edge", source: id, target: id, kind: "loop" }); closeMenu(); }));
    }
    if (!["input", "output"].includes(id)) {
      items.push(btn("Delete", "Delete this node and its edges", () => { send({ event: "remove", ids: [id] }); closeMenu(); }));
    }
    items.push(btn("Close", "", closeMenu));
    menu.replaceChildren(...items);
    menu.hidden = false;
  }
  function edgeMenu(edge) {
    const d = edge.data();
    const src = cy.getElementById(d.source).data("nf");
    const fields = (model.get("palette").find((p) => p.name === src) || { fields: [] }).fields;
    const kind = h("select", { name: "kind" }, ...KINDS.map((k) => h("option", { value: k, selected: k === d.kind || (k === "seq" && d.kind === "exit") }, k)));
    const listId = `sfc-f-${Math.random().toString(36).slice(2)}`;
    const field = h("input", { name: "field", list: listId, value: d.field || "", placeholder: `${d.source}.global_metadata` });
    const op = h("select", { name: "op" }, ...OPS.map((o) => h("option", { value: o, selected: o === d.op }, o)));
    const value = h("input", { name: "value", size: 6, value: d.value ?? "" });
    const cases = h("input", { name: "cases", size: 10, value: (d.cases || []).join(", "), placeholder: "1, 2" });
    const bound = h("input", { name: "bound", type: "number", min: 2, max: 255, value: d.bound ?? 3 });
    const rows = {
      cond: h("div", { class: "sfc-row" }, field, op, value, h("datalist", { id: listId }, ...fields.map((f) => h("option", { value: `${d.source}.${f}` })))),
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
      closeMenu();
    };
    menu.replaceChildren(h("b", {}, `${d.source} → ${d.target}`), h("div", { class: "sfc-row" }, "kind ", kind),
      rows.cond, rows.cases, rows.bound,
      h("div", { class: "sfc-row" }, btn("Apply", "", apply),
        btn("Delete", "", () => { send({ event: "remove", ids: [d.id] }); closeMenu(); }), btn("Close", "", closeMenu)));
    show();
    menu.hidden = false;
  }
  function removeSelected() {
    const ids = cy.$(":selected").map((e) => e.id());
    if (ids.length) send({ event: "remove", ids });
  }

  // -- Python -> canvas --------------------------------------------------------------------------
  function syncGraph() {
    const nodes = model.get("nodes"), edges = model.get("edges");
    const want = new Set([...nodes.map((n) => n.id), ...edges.map((e) => e.id)]);
    cy.batch(() => {
      cy.elements().not(EH_CLASSES).filter((e) => !want.has(e.id())).remove();
      for (const n of nodes) {
        const { x, y, ...data } = n;
        const ele = cy.getElementById(n.id);
        if (ele.nonempty()) {
          ele.data(data);
          const p = ele.position();
          if (!ele.grabbed() && (Math.abs(p.x - x) > 0.5 || Math.abs(p.y - y) > 0.5)) ele.position({ x, y });
        } else cy.add({ group: "nodes", data, position: { x, y } });
      }
      for (const e of edges) {
        const ele = cy.getElementById(e.id);
        if (ele.nonempty()) ele.data({ kind: e.kind, label: e.label, field: e.field, op: e.op, value: e.value, cases: e.cases, bound: e.bound });
        else cy.add({ group: "edges", data: { ...e } });
      }
    });
    markErrors();
  }
  function markErrors() {
    const errs = model.get("errors");
    cy.elements().removeClass("sfc-error");
    for (const e of errs) for (const id of e.ids) cy.getElementById(id).addClass("sfc-error");
    errors.replaceChildren(...errs.map((e) => {
      const li = h("li", { title: "Click to select" }, e.message, e.hint ? h("span", {}, ` — ${e.hint}`) : null);
      li.addEventListener("click", () => { cy.elements().unselect(); e.ids.forEach((id) => cy.getElementById(id).select()); });
      return li;
    }));
    status.textContent = errs.length ? `${errs.length} problem${errs.length > 1 ? "s" : ""}` : "valid chain ✓";
    status.classList.toggle("sfc-bad", errs.length > 0);
  }
  function syncText() { if (document.activeElement !== text) text.value = model.get("text"); }
  function syncName() { if (document.activeElement !== name) name.value = model.get("chain_name"); }
  function syncHistory() { undoBtn.disabled = !model.get("can_undo"); redoBtn.disabled = !model.get("can_redo"); }

  // -- canvas -> Python ------------------------------------------------------------------------------
  const setText = () => { if (text.value !== model.get("text")) { model.set("text", text.value); model.save_changes(); } };
  text.addEventListener("change", setText);
  name.addEventListener("change", () => { model.set("chain_name", name.value); model.save_changes(); });
  root.addEventListener("keydown", (ev) => {
    ev.stopPropagation(); // keep JupyterLab's notebook shortcuts out of the editor
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(ev.target.tagName);
    const mod = ev.ctrlKey || ev.metaKey;
    if (ev.target === text && mod && ev.key === "Enter") setText();
    else if (typing) return;
    else if (ev.key === "Delete" || ev.key === "Backspace") removeSelected();
    else if (mod && ev.key.toLowerCase() === "z") send({ event: ev.shiftKey ? "redo" : "undo" });
    else if (mod && ev.key.toLowerCase() === "y") send({ event: "redo" });
    else if (ev.key === "Escape") { closeMenu(); setDraw(false); }
    else return;
    ev.preventDefault();
  });

  const listeners = [["change:nodes change:edges", syncGraph], ["change:errors", markErrors],
    ["change:text", syncText], ["change:chain_name", syncName], ["change:palette", buildPalette],
    ["change:can_undo change:can_redo", syncHistory],
    ["change:height", () => { body.style.height = model.get("height"); cy.resize(); }]];
  for (const [ev, fn] of listeners) model.on(ev, fn);
  buildPalette(); syncGraph(); syncText(); syncName(); syncHistory();
  const resize = new ResizeObserver(() => cy.resize());
  resize.observe(canvas);
  requestAnimationFrame(() => { cy.resize(); if (cy.nodes().nonempty()) cy.fit(undefined, 30); if (cy.zoom() > 1.2) { cy.zoom(1.2); cy.center(); } });

  return () => {
    for (const [ev, fn] of listeners) model.off(ev, fn);
    resize.disconnect();
    eh.destroy();
    cy.destroy();
  };
}

export default { render };
