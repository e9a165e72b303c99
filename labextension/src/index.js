// sfclab's JupyterLab 4 extension: highlighting of %%chain, %%nf and %%topology cells,
// and %%chain cells checked as the student types (live.js).
//
// The three languages are registered with the editor language registry (so the
// file editor also highlights *.sfc, *.p4 and *.topo files), and an editor
// extension gives a cell the language its first line names (magic.js).  Every
// token carries a class naming its language and kind (`sfc-chain-keyword`,
// `sfc-p4-type`, `sfc-topo-generator`...) besides the theme's colours.
import { EditorExtensionRegistry, IEditorExtensionRegistry, IEditorLanguageRegistry } from "@jupyterlab/codemirror";
import { chain } from "./chain.js";
import { p4 } from "./p4.js";
import { topology } from "./topology.js";
import { cellMagics } from "./magic.js";
import { liveCheck, notebookKernel } from "./live.js";

export const LANGUAGES = [
  { name: "sfc-chain", displayName: "SFC chain", mime: "text/x-sfc-chain", extensions: ["sfc"], support: chain, magic: "chain" },
  { name: "p4", displayName: "P4", mime: "text/x-p4", extensions: ["p4"], support: p4, magic: "nf" },
  { name: "sfc-topology", displayName: "SFC topology", mime: "text/x-sfc-topology", extensions: ["topo"], support: topology, magic: "topology" },
];

const plugin = {
  id: "sfclab-languages:plugin",
  description: "Highlights %%chain, %%nf and %%topology cells in their own languages; checks %%chain cells as you type.",
  autoStart: true,
  requires: [IEditorLanguageRegistry, IEditorExtensionRegistry],
  activate(app, languages, extensions) {
    for (const { magic, ...spec } of LANGUAGES) {
      if (!languages.findByName(spec.name)) languages.addLanguage(spec);
    }
    const byMagic = Object.fromEntries(LANGUAGES.map((l) => [l.magic, l.support]));
    extensions.addExtension({
      name: "sfclab:cell-magic-languages",
      factory: () => EditorExtensionRegistry.createImmutableExtension(cellMagics(byMagic)),
    });
    // %%chain cells checked as the student types, against the notebook's kernel
    const kernelOf = notebookKernel(app);
    extensions.addExtension({
      name: "sfclab:live-chain-check",
      factory: () => EditorExtensionRegistry.createImmutableExtension(liveCheck(kernelOf)),
    });
  },
};

export default plugin;
