// %%chain cells checked as the student types.  A moment after an edit (debounced) the
// cell's text goes to the notebook's kernel as a silent request (no run, no history)
// that evaluates sfclab.notebook.live_check.check: a valid text goes into the Lab as
// running the cell would (the live views and a bound chain editor follow), an invalid
// one comes back with its errors, marked here in the cell: the line tinted, the place
// underlined, the message and hint below the line.  Nothing happens in other cells,
// outside notebooks, or when the kernel has not loaded the sfclab magics.
import { StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin, WidgetType } from "@codemirror/view";
import { magicOf } from "./magic.js";

export const DELAY = 400; // ms after the last keystroke

const setMarks = StateEffect.define();
const marks = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    value = value.map(tr.changes);
    for (const e of tr.effects) if (e.is(setMarks)) value = e.value;
    return value;
  },
  provide: (f) => EditorView.decorations.from(f),
});

class Message extends WidgetType {
  constructor(text) { super(); this.text = text; }
  eq(other) { return other.text === this.text; }
  toDOM() {
    const d = document.createElement("div");
    d.className = "sfc-live-message";
    d.textContent = this.text;
    return d;
  }
  ignoreEvent() { return true; }
}

// errors: [{line, column, width, message, hint}], 1-based as the cell shows them;
// line 0: no place in the text (the message goes below the last line)
export function errorMarks(doc, errors) {
  const ranges = [];
  for (const e of errors) {
    const placed = e.line >= 1 && e.line <= doc.lines;
    const line = doc.line(placed ? e.line : doc.lines);
    const msg = e.message + (e.hint ? `\nhint: ${e.hint}` : "");
    if (placed) {
      ranges.push(Decoration.line({ class: "sfc-live-error-line" }).range(line.from));
      const from = Math.min(line.to, line.from + Math.max(0, (e.column || 1) - 1));
      const to = Math.min(line.to, from + Math.max(1, e.width || 1));
      if (to > from) ranges.push(Decoration.mark({ class: "sfc-live-error", attributes: { title: msg } }).range(from, to));
    }
    ranges.push(Decoration.widget({ widget: new Message(msg), block: true, side: 1 }).range(line.to));
  }
  return Decoration.set(ranges, true);
}

const theme = EditorView.baseTheme({
  ".sfc-live-error": { textDecoration: "underline wavy #d32f2f", textUnderlineOffset: "3px" },
  ".sfc-live-error-line": { backgroundColor: "rgba(211, 47, 47, 0.07)" },
  ".sfc-live-message": { color: "#c62828", fontFamily: "var(--jp-ui-font-family, sans-serif)", fontSize: "12px",
    padding: "1px 6px 3px", whiteSpace: "pre-wrap", wordBreak: "normal", overflowWrap: "anywhere" },
});

// kernelOf(dom) -> {kernel, cellId, ran} of the notebook cell holding `dom` (ran():
// its execution count, which a run changes), or null
export function liveCheck(kernelOf) {
  const plugin = ViewPlugin.fromClass(class {
    constructor(view) {
      this.view = view;
      this.timer = 0;
      this.seq = 0;
    }
    update(u) {
      if (!u.docChanged) return;
      clearTimeout(this.timer);
      this.seq += 1;
      if (magicOf(u.state.doc) !== "chain") {
        if (u.state.field(marks).size) queueMicrotask(() => this.show(Decoration.none));
        return;
      }
      const found = kernelOf(this.view.dom);
      const ran = found ? found.ran() : null; // a run of the cell after this edit does the work
      this.timer = setTimeout(() => { this.check(ran).catch(() => {}); }, DELAY);
    }
    show(set) { this.view.dispatch({ effects: setMarks.of(set) }); }
    async check(ran) {
      const seq = this.seq, view = this.view, text = view.state.doc.toString();
      const found = kernelOf(view.dom);
      if (!found || found.ran() !== ran) return;
      const arg = (s) => JSON.stringify(s); // a JSON string is a Python string literal
      const expr = `__import__('sfclab.notebook.live_check', fromlist=['check']).check(${arg(found.cellId)}, ${arg(text)})`;
      const future = found.kernel.requestExecute({ code: "", silent: true, store_history: false,
        user_expressions: { sfclab: expr }, allow_stdin: false, stop_on_error: false });
      const reply = await future.done;
      if (seq !== this.seq) return; // typed since: a newer check comes
      const r = reply.content.user_expressions && reply.content.user_expressions.sfclab;
      if (!r || r.status !== "ok") return;
      const out = JSON.parse(r.data["text/plain"]);
      view.dom.dataset.sfcLive = out.status; // for tests and styles: ok / error / off
      this.show(out.status === "error" ? errorMarks(view.state.doc, out.errors) : Decoration.none);
    }
    destroy() { clearTimeout(this.timer); }
  });
  return [marks, plugin, theme];
}

// The kernel and cell id of the notebook cell holding an editor (JupyterLab 4 and
// Notebook 7: a main-area widget with a session and cells).
export function notebookKernel(app) {
  return (dom) => {
    for (const w of app.shell.widgets("main")) {
      if (!w.node.contains(dom) || !w.sessionContext || !w.content) continue;
      const session = w.sessionContext.session;
      const kernel = session && session.kernel;
      const cell = [...(w.content.widgets || [])].find((c) => c.node.contains(dom));
      return kernel && cell ? { kernel, cellId: cell.model.id, ran: () => cell.model.executionCount } : null;
    }
    return null;
  };
}
