// Zooming as map widgets do it: the mouse wheel over the canvas scrolls the page
// (cytoscape's own wheel zoom is off: userZoomingEnabled false); Ctrl/⌘ + wheel
// zooms about the pointer, and so does a trackpad pinch (browsers send it as a
// wheel event with ctrlKey) and a two-finger pinch on a touch screen.  A plain
// wheel shows a short hint saying how to zoom.
//
// Labels stay readable at any zoom: edge labels are drawn at least LABEL_PX
// screen pixels high (their font grows in model units as the view zooms out).
export const LABEL_PX = 11;

export function zooming(cy, canvas, hint) {
  const zoomAt = (factor, clientX, clientY) => {
    const r = canvas.getBoundingClientRect();
    const level = Math.min(cy.maxZoom(), Math.max(cy.minZoom(), cy.zoom() * factor));
    cy.zoom({ level, renderedPosition: { x: clientX - r.left, y: clientY - r.top } });
  };
  let hintTimer = 0;
  const onWheel = (ev) => {
    if (ev.ctrlKey || ev.metaKey) {
      ev.preventDefault();
      const unit = ev.deltaMode === 1 ? 33 : ev.deltaMode === 2 ? 400 : 1;
      zoomAt(Math.exp(-ev.deltaY * unit / 300), ev.clientX, ev.clientY);
      return;
    }
    // the page scrolls (nothing prevented); say how to zoom
    hint.hidden = false;
    clearTimeout(hintTimer);
    hintTimer = setTimeout(() => { hint.hidden = true; }, 1200);
  };
  let pinch = null;
  const dist = (t) => Math.hypot(t[0].clientX - t[1].clientX, t[0].clientY - t[1].clientY);
  const onTouchStart = (ev) => { if (ev.touches.length === 2) pinch = dist(ev.touches); };
  const onTouchMove = (ev) => {
    if (ev.touches.length !== 2 || !pinch) return;
    ev.preventDefault();
    const d = dist(ev.touches);
    zoomAt(d / pinch, (ev.touches[0].clientX + ev.touches[1].clientX) / 2,
      (ev.touches[0].clientY + ev.touches[1].clientY) / 2);
    pinch = d;
  };
  const onTouchEnd = (ev) => { if (ev.touches.length < 2) pinch = null; };
  canvas.addEventListener("wheel", onWheel, { passive: false, capture: true });
  canvas.addEventListener("touchstart", onTouchStart, { passive: true, capture: true });
  canvas.addEventListener("touchmove", onTouchMove, { passive: false, capture: true });
  canvas.addEventListener("touchend", onTouchEnd, { passive: true, capture: true });

  // edge labels: at least LABEL_PX on screen, whatever the zoom (one rule whose
  // value is read from `size`, re-applied when the zoom changes it)
  let frame = 0, size = 10;
  cy.style().selector("edge").style("font-size", () => size).update();
  const relabel = () => {
    frame = 0;
    const want = Math.round(Math.max(10, LABEL_PX / cy.zoom()) * 10) / 10;
    if (want === size) return;
    size = want;
    cy.style().update();
  };
  const onZoom = () => { if (!frame) frame = requestAnimationFrame(relabel); };
  cy.on("zoom", onZoom);
  relabel();

  return {
    relabel,
    destroy() {
      clearTimeout(hintTimer);
      cancelAnimationFrame(frame);
      cy.off("zoom", onZoom);
      canvas.removeEventListener("wheel", onWheel, { capture: true });
      canvas.removeEventListener("touchstart", onTouchStart, { capture: true });
      canvas.removeEventListener("touchmove", onTouchMove, { capture: true });
      canvas.removeEventListener("touchend", onTouchEnd, { capture: true });
    },
  };
}
