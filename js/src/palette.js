// The palette: the catalogue's NFs by protocol layer, then the end points, in two
// columns that always show every entry.  Click an entry to add it at a free,
// visible spot (Python picks it inside the visible extent sent along), or drag
// it onto the canvas to drop it where it is released.
import { h } from "./dom.js";

const LAYERS = { 2: "L2 link", 3: "L3 network", 4: "L4 transport", 7: "L7 application" };

export function buildPalette(palette, items, { canvas, cy, add }) {
  const out = [];
  let group = null;
  for (const p of items) {
    const title = p.kind === "endpoint" ? "end points" : (LAYERS[p.layer] || `layer ${p.layer}`);
    if (title !== group) out.push(h("div", { class: "sfc-group" }, (group = title)));
    const tip = `${p.name}: ${p.description}${p.offload === "non" ? " (server only)" : ""}` +
      " — click to add, or drag onto the canvas";
    const item = h("div", { class: `sfc-item sfc-${p.kind}`, "data-nf": p.name, title: tip, role: "button" },
      h("i", { style: `background:${p.color}` }), h("span", {}, p.name));
    item.addEventListener("pointerdown", (ev) => startDrag(ev, p.name, { canvas, cy, add }));
    out.push(item);
  }
  palette.replaceChildren(...out);
}

function startDrag(ev, nf, { canvas, cy, add }) {
  if (ev.button !== undefined && ev.button !== 0) return;
  ev.preventDefault();
  const ghost = h("div", { class: "sfc-ghost" }, nf);
  const sx = ev.clientX, sy = ev.clientY;
  let moved = false;
  const place = (e) => {
    if (!moved && Math.abs(e.clientX - sx) + Math.abs(e.clientY - sy) >= 4) {
      moved = true;
      document.body.append(ghost);
    }
    ghost.style.left = `${e.clientX + 6}px`;
    ghost.style.top = `${e.clientY + 6}px`;
  };
  const up = (e) => {
    document.removeEventListener("pointermove", place);
    document.removeEventListener("pointerup", up);
    ghost.remove();
    const r = canvas.getBoundingClientRect();
    const inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
    if (moved && inside) {
      const pan = cy.pan(), zoom = cy.zoom();
      add({ nf, x: (e.clientX - r.left - pan.x) / zoom, y: (e.clientY - r.top - pan.y) / zoom });
    } else if (!moved) {
      add({ nf }); // a click: Python picks a free spot in the visible extent
    }
  };
  document.addEventListener("pointermove", place);
  document.addEventListener("pointerup", up);
}
