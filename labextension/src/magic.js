// Give a cell the language its first line names: `%%chain` -> the chain language,
// `%%nf` -> P4, `%%topology` -> the topology language; any other cell keeps the
// notebook's language.  An editor extension (every cell editor gets it): it
// watches the first line and swaps the language in a compartment of its own, at
// the highest precedence so that it wins over the kernel's language.
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { ViewPlugin } from "@codemirror/view";

export function magicOf(doc) {
  const m = /^%%([A-Za-z_]\w*)/.exec(doc.line(1).text);
  return m ? m[1] : null;
}

export function cellMagics(byMagic) {
  const slot = new Compartment();
  const content = (magic) => (byMagic[magic] ? Prec.highest(byMagic[magic]) : []);
  const watch = EditorState.transactionExtender.of((tr) => {
    if (!tr.docChanged) return null;
    const before = magicOf(tr.startState.doc), after = magicOf(tr.newDoc);
    if (before === after || (!byMagic[before] && !byMagic[after])) return null;
    return { effects: slot.reconfigure(content(after)) };
  });
  // an editor created with its text already there (no transaction to watch)
  const start = ViewPlugin.define((view) => {
    const magic = magicOf(view.state.doc);
    if (byMagic[magic]) {
      queueMicrotask(() => {
        if (magicOf(view.state.doc) === magic) view.dispatch({ effects: slot.reconfigure(content(magic)) });
      });
    }
    return {};
  });
  return [slot.of([]), watch, start];
}
