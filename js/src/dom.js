// A tiny element builder shared by the editor's parts.
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c != null));
  return e;
}

// A toolbar/menu button: an optional icon and a label.
export function button(label, title, onclick, icon = "") {
  return h("button", { type: "button", title, onclick, "aria-label": label },
    icon ? h("span", { class: "sfc-icon", "aria-hidden": "true" }, icon) : null, label);
}
