// Keep cytoscape's idea of where its canvas sits on the page right.
//
// cytoscape caches its container's client offset (renderer.containerBB) and drops
// the cache only on window resize and on `scroll` events of the ancestors the
// container had when cytoscape was created.  A widget is rendered into an element
// that is not yet in the page, so the notebook's scroller (JupyterLab's
// .jp-WindowedPanel-outer, Notebook 7's, a Voila page's window) is not among them:
// after any scroll (or a cell above growing) every press landed off by that
// offset.  Here the cache is dropped on a scroll of *any* element (scroll events
// do not bubble, but a capturing listener on the document sees them all) and
// before every press, hover or wheel on the editor (capturing, so before
// cytoscape's own handlers read the offset).
const PRESS = ["pointerdown", "mousedown", "touchstart", "mouseover", "wheel"];

export function keepCoordsFresh(cy, root) {
  const invalidate = () => {
    const r = cy.renderer();
    if (r && typeof r.invalidateContainerClientCoordsCache === "function") r.invalidateContainerClientCoordsCache();
    else cy.resize();
  };
  const opts = { capture: true, passive: true };
  document.addEventListener("scroll", invalidate, opts);
  window.addEventListener("resize", invalidate, opts);
  for (const ev of PRESS) root.addEventListener(ev, invalidate, opts);
  return () => {
    document.removeEventListener("scroll", invalidate, opts);
    window.removeEventListener("resize", invalidate, opts);
    for (const ev of PRESS) root.removeEventListener(ev, invalidate, opts);
  };
}

// A client (page) point as a model point of the graph, measured now.
export function toModel(cy, ev) {
  const p = ev.touches && ev.touches.length ? ev.touches[0] : ev.changedTouches && ev.changedTouches.length ? ev.changedTouches[0] : ev;
  const r = cy.container().getBoundingClientRect();
  const pan = cy.pan(), zoom = cy.zoom();
  return { x: (p.clientX - r.left - pan.x) / zoom, y: (p.clientY - r.top - pan.y) / zoom };
}
