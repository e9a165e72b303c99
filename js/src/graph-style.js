// One visual language for sfclab graphs: colour by NF layer (computed in Python,
// `data(color)`), shape by node kind (NF: rounded box, end point: ellipse),
// line style by edge kind (seq solid grey, then green, else dashed red,
// case dotted blue, loop dashed purple, exit purple).
//
// Cytoscape draws on a canvas: it takes neither CSS variables nor single-quoted font
// names, so the labels' font is JupyterLab's UI font resolved at run time (uiFont), and
// every `data(...)` mapping is limited to the elements that have that field (the edge
// being drawn and its tip have none).
const edge = (color, extra = {}) => ({ "line-color": color, "target-arrow-color": color, color, ...extra });
const FALLBACK_FONT = "sans-serif";

// JupyterLab's --jp-ui-font-family as Cytoscape accepts it: plain names, double-quoted
// where they hold a space ("Segoe UI"), without what a canvas cannot use.
export function uiFont(el) {
  const value = el && el.isConnected ? getComputedStyle(el).getPropertyValue("--jp-ui-font-family") : "";
  const names = value.split(",").map((n) => n.trim().replace(/^(['"])(.*)\1$/, "$2"))
    .filter((n) => /^[\w -]+$/.test(n));
  return names.length ? names.map((n) => (/\s/.test(n) ? `"${n}"` : n)).join(", ") : FALLBACK_FONT;
}

export function graphStyle(font = FALLBACK_FONT) {
  return [
    { selector: "node", style: {
      color: "#111", "font-size": 12, "font-family": font, "text-valign": "center", "text-halign": "center",
      shape: "round-rectangle", height: 32, "border-width": 1, "border-color": "#333" } },
    { selector: "node[color]", style: { "background-color": "data(color)" } },
    { selector: "node[label]", style: { label: "data(label)" } },
    { selector: "node[width]", style: { width: "data(width)" } }, // from Python (placement uses it)
    { selector: "node[kind = 'endpoint']", style: { shape: "ellipse", "border-width": 3, "border-style": "double" } },
    { selector: "node[offload = 'non']", style: { "border-style": "dashed", "border-width": 2 } },
    { selector: "edge", style: {
      width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle", "font-family": font,
      "font-size": 10, "text-background-color": "#fff", "text-background-opacity": 0.85,
      "text-background-padding": 2, ...edge("#777") } },
    { selector: "edge[label]", style: { label: "data(label)" } },
    { selector: "edge[kind = 'then']", style: edge("#2e7d32") },
    { selector: "edge[kind = 'else']", style: edge("#c62828", { "line-style": "dashed" }) },
    { selector: "edge[kind = 'case']", style: edge("#1565c0", { "line-style": "dotted", width: 3 }) },
    { selector: "edge[kind = 'loop']", style: edge("#6a1b9a", { "line-style": "dashed", "control-point-step-size": 70, "loop-direction": "0deg", "loop-sweep": "-60deg" }) },
    { selector: "edge[kind = 'exit']", style: edge("#6a1b9a") },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#1976d2" } },
    { selector: "edge:selected", style: { width: 4 } },
    { selector: "node.sfc-error", style: { "border-width": 4, "border-color": "#d50000", "border-style": "solid" } },
    { selector: "edge.sfc-error", style: edge("#d50000", { width: 4 }) },
    // the edge being drawn (link.js): a dashed blue line to an invisible tip
    { selector: "node.sfc-tmp", style: { width: 1, height: 1, opacity: 0, label: "", "background-color": "#1976d2" } },
    { selector: "edge.sfc-tmp", style: edge("#1976d2", { "line-style": "dashed", label: "", width: 2.5 }) },
    { selector: "node.sfc-link-source, node.sfc-link-target", style: { "border-width": 3, "border-color": "#1976d2", "border-style": "solid" } },
    { selector: "node.sfc-link-target", style: { "underlay-color": "#1976d2", "underlay-opacity": 0.18, "underlay-padding": 6 } },
  ];
}
