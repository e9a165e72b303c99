// Connecting two nodes, kept apart from moving one.
//
// Hovering a node shows a handle (+) on its right edge: dragging the handle draws
// an edge that follows the pointer and snaps to the node under it; releasing on a
// node connects the two.  Dragging a node's body moves it.  In connect mode
// (toolbar), pressing anywhere on a node starts the same gesture (for touch
// screens, which have no hover).
import { h } from "./dom.js";
import { toModel } from "./coords.js";

export const TEMP = ".sfc-tmp";

function inside(bb, p) { return p.x >= bb.x1 && p.x <= bb.x2 && p.y >= bb.y1 && p.y <= bb.y2; }

export function linking(cy, stage, onLink) {
  const handle = h("div", { class: "sfc-handle", title: "Drag onto another node to connect them",
    role: "button", "aria-label": "connect", hidden: true }, "+");
  stage.append(handle);
  let hovered = null, overHandle = false, active = false, timer = 0, connectMode = false;

  const place = () => {
    if (!hovered || hovered.removed()) return hide(true);
    const bb = hovered.renderedBoundingBox({ includeLabels: false, includeOverlays: false });
    handle.style.left = `${bb.x2}px`;
    handle.style.top = `${(bb.y1 + bb.y2) / 2}px`;
  };
  function show(node) {
    clearTimeout(timer);
    hovered = node;
    place();
    handle.hidden = false;
  }
  function hide(force = false) {
    if (!force && (overHandle || active)) return;
    hovered = null;
    handle.hidden = true;
  }
  const hideSoon = () => { clearTimeout(timer); timer = setTimeout(() => hide(), 350); };

  cy.on("mouseover", "node", (ev) => {
    if (!active && !connectMode && !ev.target.is(TEMP) && !ev.target.grabbed()) show(ev.target);
  });
  cy.on("mouseout", "node", hideSoon);
  cy.on("grab", "node", () => hide(true));
  cy.on("pan zoom resize", place);
  cy.on("position", "node", (ev) => { if (hovered && ev.target.same(hovered)) place(); });
  cy.on("remove", "node", (ev) => { if (hovered && ev.target.same(hovered)) hide(true); });
  handle.addEventListener("pointerenter", () => { overHandle = true; clearTimeout(timer); });
  handle.addEventListener("pointerleave", () => { overHandle = false; hideSoon(); });
  handle.addEventListener("pointerdown", (ev) => { if (hovered) start(hovered, ev); });
  cy.on("tapstart", "node", (ev) => {
    if (connectMode && !ev.target.is(TEMP)) start(ev.target, ev.originalEvent || ev);
  });

  function nodeAt(p, source) {
    const hits = cy.nodes().not(TEMP).filter((n) => !n.same(source)
      && inside(n.boundingBox({ includeLabels: false, includeOverlays: false }), p));
    return hits.length ? hits[hits.length - 1] : cy.collection();
  }

  function start(source, ev) {
    if (active) return;
    if (ev.preventDefault) ev.preventDefault();
    if (ev.stopPropagation) ev.stopPropagation();
    active = true;
    const tip = cy.add({ group: "nodes", data: { id: "sfc-tip" }, classes: "sfc-tmp",
      position: toModel(cy, ev), selectable: false, grabbable: false });
    cy.add({ group: "edges", data: { id: "sfc-link", source: source.id(), target: "sfc-tip" },
      classes: "sfc-tmp", selectable: false });
    source.addClass("sfc-link-source");
    stage.classList.add("sfc-linking");
    let target = cy.collection();
    const move = (e) => {
      const p = toModel(cy, e);
      const t = nodeAt(p, source);
      if (!t.same(target)) {
        target.removeClass("sfc-link-target");
        target = t.addClass("sfc-link-target");
      }
      tip.position(target.nonempty() ? { ...target.position() } : p);
    };
    const end = (e) => {
      document.removeEventListener("pointermove", move, true);
      document.removeEventListener("pointerup", end, true);
      document.removeEventListener("pointercancel", end, true);
      if (e.type === "pointerup") move(e);
      cy.remove(cy.elements(TEMP));
      source.removeClass("sfc-link-source");
      target.removeClass("sfc-link-target");
      stage.classList.remove("sfc-linking");
      active = false;
      overHandle = false;
      hide(true);
      if (e.type === "pointerup" && target.nonempty()) onLink(source.id(), target.id());
    };
    document.addEventListener("pointermove", move, true);
    document.addEventListener("pointerup", end, true);
    document.addEventListener("pointercancel", end, true);
  }

  return {
    setConnectMode(on) {
      connectMode = on;
      cy.autoungrabify(on);
      hide(true);
    },
    destroy() { clearTimeout(timer); handle.remove(); },
  };
}
