// sfclab chain editor: the anywidget front end of sfclab.notebook.editor.ChainEditor.
//
// It only renders the drawing Python keeps in the `nodes` / `edges` traits and
// reports gestures back as custom messages ({event: "add_node" | "add_edge" |
// "set_edge" | "remove" | "move" | "undo" | "redo" | "tidy"}); the visible extent
// of the canvas goes to the `viewport` trait, so that Python places new nodes
// where they can be seen.  Python checks, writes the chain text, parses it and
// sends the new state.  For tests the cytoscape instance is on the canvas
// element: `el.querySelector(".sfc-canvas").__cy`.
import cytoscape from "cytoscape";
import { h, button } from "./dom.js";
import { keepCoordsFresh } from "./coords.js";
import { linking, TEMP } from "./link.js";
import { buildPalette } from "./palette.js";
import { menus } from "./menus.js";
import { CSS } from "./style.js";
import { graphStyle, uiFont } from "./graph-style.js";
import { zooming } from "./zoom.js";

const HINT = "drag + on a node onto another to connect · drag a node to move it · click an edge for branches · Ctrl+wheel zooms";

function extent(cy) {
  const e = cy.extent();
  return [e.x1, e.y1, e.x2, e.y2].map((v) => Math.round(v * 10) / 10);
}

function render({ model, el }) {
  const send = (msg) => model.send(msg);
  const canvas = h("div", { class: "sfc-canvas" });
  const zoomHint = h("div", { class: "sfc-zoom-hint", hidden: true }, "Ctrl + wheel (⌘ + wheel) or pinch to zoom");
  const stage = h("div", { class: "sfc-stage" }, canvas, h("div", { class: "sfc-hint" }, HINT), zoomHint);
  const palette = h("div", { class: "sfc-palette", title: "Click an NF to add it, or drag it onto the canvas" });
  const menu = h("div", { class: "sfc-menu", hidden: true });
  const errors = h("ul", { class: "sfc-errors" });
  const status = h("span", { class: "sfc-status" });
  const text = h("textarea", { class: "sfc-text", spellcheck: "false", rows: 6,
    title: "Chain text: edit and leave the box (or Ctrl+Enter) to redraw" });
  // bound to a Lab (lab.editor(), %sfc edit): where the chains go, and the push button
  const labInfo = h("span", { class: "sfc-lab" });
  const pushBtn = button("Push", "Push the Lab's chains to the switch (an update when it runs them already)",
    () => { pushBtn.disabled = true; send({ event: "push" }); }, "⇪");
  const labGroup = h("div", { class: "sfc-group-btn sfc-lab-group", hidden: true }, pushBtn, labInfo);
  const name = h("input", { class: "sfc-name", title: "Chain name", "aria-label": "chain name" });
  const connectBtn = button("Connect", "Connect mode: press on a node and drag onto another (Esc leaves it)",
    () => setConnect(!connecting), "⟶");
  const undoBtn = button("Undo", "Undo the last gesture (Ctrl+Z)", () => send({ event: "undo" }), "↶");
  const redoBtn = button("Redo", "Redo (Ctrl+Shift+Z)", () => send({ event: "redo" }), "↷");
  const group = (...items) => h("div", { class: "sfc-group-btn" }, ...items);
  const toolbar = h("div", { class: "sfc-toolbar" },
    h("label", { class: "sfc-label" }, "chain", name),
    group(connectBtn),
    group(undoBtn, redoBtn),
    group(button("Delete", "Delete the selection (Del)", removeSelected, "✕")),
    group(button("Tidy", "Lay the chain out again, left to right", () => send({ event: "tidy", width: cy.width() }), "⇶"),
      button("Fit", "Fit the chain in view", () => fitAll(), "⤢")),
    labGroup, status);
  const body = h("div", { class: "sfc-body" }, palette, stage, menu);
  const root = h("div", { class: "sfc-editor", tabindex: 0, "data-lm-suppress-shortcuts": "true" },
    h("style", {}, CSS), toolbar, body, errors, text);
  el.append(root);

  body.style.minHeight = model.get("height");
  // labels in JupyterLab's UI font, resolved once the editor is in the page (see setFont)
  let font = uiFont(root);
  const cy = cytoscape({ container: canvas, style: graphStyle(font), boxSelectionEnabled: false,
    minZoom: 0.3, maxZoom: 2.5, layout: { name: "preset" }, userZoomingEnabled: false });
  canvas.__cy = cy;
  const zoom = zooming(cy, canvas, zoomHint);
  // a press on the canvas focuses the editor, so that Delete, Backspace and Ctrl+Z reach
  // it and not the notebook (after the press: cytoscape blurs the active element on it)
  const focusSoon = () => setTimeout(() => {
    if (!root.contains(document.activeElement) || document.activeElement === text || document.activeElement === name) root.focus({ preventScroll: true });
  }, 0);
  canvas.addEventListener("pointerdown", focusSoon, true);
  canvas.addEventListener("pointerup", focusSoon, true);
  // and should the notebook take the focus back after the press, Delete and Backspace
  // still delete the selection while the last press was on this canvas
  let armed = false;
  const onAnyPress = (ev) => { armed = canvas.contains(ev.target); };
  const onAnyKey = (ev) => {
    const a = document.activeElement;
    if (!armed || root.contains(a) || (ev.key !== "Delete" && ev.key !== "Backspace")) return;
    if (a && (a.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(a.tagName))) return;
    if (cy.$(":selected").not(TEMP).empty()) return;
    ev.preventDefault();
    ev.stopPropagation();
    removeSelected();
  };
  document.addEventListener("pointerdown", onAnyPress, true);
  window.addEventListener("keydown", onAnyKey, true);
  const stopCoords = keepCoordsFresh(cy, root);
  const link = linking(cy, stage, (source, target) => send({ event: "add_edge", source, target }));
  const menu_ = menus({ menu, cy, send, palette: () => model.get("palette") });
  let connecting = false;
  function setConnect(on) {
    connecting = on;
    link.setConnectMode(on);
    connectBtn.classList.toggle("sfc-on", on);
    connectBtn.setAttribute("aria-pressed", String(on));
    stage.classList.toggle("sfc-connect-mode", on);
  }
  function fitAll() {
    cy.fit(cy.nodes().not(TEMP), 30);
    if (cy.zoom() > 1.2) { cy.zoom(1.2); cy.center(); }
  }

  cy.on("dragfreeon", "node", (ev) => {
    const positions = {};
    ev.target.union(cy.nodes(":selected")).not(TEMP).forEach((n) => {
      positions[n.id()] = [n.position("x"), n.position("y")];
    });
    send({ event: "move", positions });
  });
  cy.on("select unselect", () => {
    model.set("selection", cy.$(":selected").not(TEMP).map((e) => e.id()));
    model.save_changes();
  });
  cy.on("tap", "edge", (ev) => { if (!ev.target.is(TEMP)) menu_.edgeMenu(ev.target); });
  cy.on("tap", "node", (ev) => { if (!connecting && !ev.target.is(TEMP)) menu_.nodeMenu(ev.target); });
  cy.on("tap", (ev) => { if (ev.target === cy) menu_.close(); });

  // the visible extent, for Python to place new nodes where they can be seen
  let viewTimer = 0;
  const reportView = () => {
    clearTimeout(viewTimer);
    viewTimer = setTimeout(() => {
      const v = extent(cy);
      if (v.every(Number.isFinite) && JSON.stringify(v) !== JSON.stringify(model.get("viewport"))) {
        model.set("viewport", v);
        model.save_changes();
      }
    }, 200);
  };
  cy.on("viewport resize", reportView);
  const addNode = (msg) => send({ event: "add_node", view: extent(cy), ...msg });

  // -- Python -> canvas --------------------------------------------------------------------------
  // Nodes and edges come from two traits (and may arrive one before the other), so
  // every step keeps the graph valid: edges go before nodes, nodes come before
  // edges, and an edge whose end is not (yet) a node waits for the next sync.  The
  // batch always ends, even if an element is refused: a graph left batching never
  // draws again.
  function syncGraph() {
    const nodes = model.get("nodes"), edges = model.get("edges");
    const nodeIds = new Set(nodes.map((n) => n.id));
    const edgeIds = new Set(edges.map((e) => e.id));
    const added = [];
    cy.startBatch();
    try {
      const own = cy.elements().not(TEMP);
      own.edges().filter((e) => !edgeIds.has(e.id())).remove();
      own.nodes().filter((n) => !nodeIds.has(n.id())).remove();
      for (const n of nodes) {
        const { x, y, ...data } = n;
        const ele = cy.getElementById(n.id);
        try {
          if (ele.nonempty() && ele.isNode()) {
            ele.data(data);
            const p = ele.position();
            if (!ele.grabbed() && (Math.abs(p.x - x) > 0.5 || Math.abs(p.y - y) > 0.5)) ele.position({ x, y });
          } else {
            if (ele.nonempty()) ele.remove();
            added.push(cy.add({ group: "nodes", data, position: { x, y } }));
          }
        } catch (e) { console.warn("sfclab editor: node", n.id, e); }
      }
      for (const e of edges) {
        const ele = cy.getElementById(e.id);
        try {
          if (ele.nonempty() && ele.isEdge() && ele.data("source") === e.source && ele.data("target") === e.target) {
            ele.data({ kind: e.kind, label: e.label, field: e.field, op: e.op, value: e.value, cases: e.cases, bound: e.bound });
            continue;
          }
          if (ele.nonempty()) ele.remove();
          // both ends must be nodes of the graph; otherwise the edge comes with the next sync
          if (cy.getElementById(e.source).isNode() && cy.getElementById(e.target).isNode()) cy.add({ group: "edges", data: { ...e } });
        } catch (err) { console.warn("sfclab editor: edge", e.id, err); }
      }
    } finally {
      cy.endBatch();
    }
    markErrors();
    menu_.closeIfGone();
    // a node that arrived (from Python, the text or an undo) outside the view: show it all
    if (shown && added.some((n) => outside(n))) fitAll();
  }
  function outside(n) {
    const e = cy.extent(), b = n.boundingBox({ includeLabels: false });
    return b.x1 < e.x1 || b.x2 > e.x2 || b.y1 < e.y1 || b.y2 > e.y2;
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
  function syncLab() {
    const lab = model.get("lab_state") || {};
    labGroup.hidden = !lab.bound;
    labInfo.textContent = lab.status || "";
    labInfo.title = lab.detail || lab.status || "";
    labInfo.classList.toggle("sfc-bad", !!lab.error);
    pushBtn.disabled = !lab.bound || !!lab.busy;
    pushBtn.lastChild.textContent = lab.push_label || "Push";
  }
  function syncHistory() { undoBtn.disabled = !model.get("can_undo"); redoBtn.disabled = !model.get("can_redo"); }
  const syncPalette = () => buildPalette(palette, model.get("palette"), { canvas, cy, add: addNode });
  function removeSelected() {
    const ids = cy.$(":selected").not(TEMP).map((e) => e.id());
    if (ids.length) send({ event: "remove", ids });
  }

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
    else if (ev.key === "Escape") { menu_.close(); setConnect(false); }
    else return;
    ev.preventDefault();
  });

  const listeners = [["change:nodes change:edges", syncGraph], ["change:errors", markErrors],
    ["change:text", syncText], ["change:chain_name", syncName], ["change:palette", syncPalette],
    ["change:can_undo change:can_redo", syncHistory], ["change:lab_state", syncLab],
    ["change:height", () => { body.style.minHeight = model.get("height"); cy.resize(); }]];
  // Python asks for a fit after a Tidy (after the positions: messages keep their order)
  const onCustom = (msg) => { if (msg && msg.event === "fit") fitAll(); };
  listeners.push(["msg:custom", onCustom]);
  for (const [ev, fn] of listeners) model.on(ev, fn);
  let shown = false;
  syncPalette(); syncGraph(); syncText(); syncName(); syncHistory(); syncLab();
  // the editor made narrower or wider (a resized window, a sidebar opened): the drawing
  // is shown whole again if part of it went out of the view
  const resize = new ResizeObserver(() => {
    cy.resize();
    if (shown && cy.nodes().not(TEMP).some((n) => outside(n))) fitAll();
  });
  resize.observe(stage);
  // (a rule added on top: the stylesheet keeps zoom.js's label size rule)
  const setFont = () => {
    const f = uiFont(root);
    if (f !== font) { font = f; cy.style().selector("node, edge").style("font-family", f).update(); }
  };
  requestAnimationFrame(() => { setFont(); cy.resize(); if (cy.nodes().nonempty()) fitAll(); shown = true; reportView(); });

  return () => {
    for (const [ev, fn] of listeners) model.off(ev, fn);
    clearTimeout(viewTimer);
    resize.disconnect();
    zoom.destroy();
    document.removeEventListener("pointerdown", onAnyPress, true);
    window.removeEventListener("keydown", onAnyKey, true);
    stopCoords();
    link.destroy();
    cy.destroy();
  };
}

export default { render };
