// What the three cell languages share: the magic line, comments, strings,
// numbers and addresses, and a class highlighter that names every token after
// its language (`sfc-chain-keyword`, `sfc-p4-type`, ...), on top of the
// theme's colours.
import { HighlightStyle, LanguageSupport, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { Tag, tags, tagHighlighter } from "@lezer/highlight";

// Tags of our own, each a kind of a standard tag so that every theme colours it
// (a modified tag, like function(variableName), takes a modifier, not a child).
const sfc = Tag.defineModifier("sfclab");
export const T = {
  nf: Tag.define(tags.typeName),            // an NF in a chain
  endpoint: Tag.define(tags.atom),          // input, output, drop, cpu, self
  arrow: Tag.define(tags.controlOperator),  // => and ->
  field: Tag.define(tags.propertyName),     // ipv4.dst, firewall.verdict
  generator: sfc(tags.function(tags.variableName)), // use fat_tree(4)
  port: sfc(tags.special(tags.variableName)),       // s1:2
};

// token name (what a tokenizer returns) -> [tag, class suffix]
const TOKENS = {
  magic: [tags.meta, "magic"],
  keyword: [tags.keyword, "keyword"],
  comment: [tags.lineComment, "comment"],
  blockComment: [tags.blockComment, "comment"],
  string: [tags.string, "string"],
  number: [tags.number, "number"],
  operator: [tags.operator, "operator"],
  compare: [tags.compareOperator, "operator"],
  punctuation: [tags.punctuation, "punctuation"],
  name: [tags.variableName, "name"],
  definition: [tags.definition(tags.variableName), "definition"],
  type: [tags.typeName, "type"],
  atom: [tags.bool, "atom"],
  annotation: [tags.annotation, "annotation"],
  property: [tags.propertyName, "property"],
  call: [tags.function(tags.variableName), "call"],
  nf: [T.nf, "nf"],
  endpoint: [T.endpoint, "endpoint"],
  arrow: [T.arrow, "arrow"],
  field: [T.field, "field"],
  generator: [T.generator, "generator"],
  port: [T.port, "port"],
};

// Colours for what JupyterLab's highlight style leaves plain (its CSS variables).
const COLOURS = HighlightStyle.define([
  { tag: T.nf, color: "var(--jp-mirror-editor-variable-3-color, #085)" },
  { tag: tags.definition(tags.variableName), fontWeight: "bold" },
  { tag: T.generator, color: "var(--jp-mirror-editor-builtin-color, #008000)" },
  { tag: T.port, color: "var(--jp-mirror-editor-variable-3-color, #085)" },
  { tag: tags.typeName, color: "var(--jp-mirror-editor-variable-3-color, #085)" },
]);

// A language from a stream tokenizer, with classes `sfc-<prefix>-<kind>` on its tokens.
export function language(name, prefix, parser) {
  const tokenTable = Object.fromEntries(Object.entries(TOKENS).map(([k, [tag]]) => [k, tag]));
  const lang = StreamLanguage.define({ name, tokenTable, ...parser });
  const seen = new Set();
  const classes = tagHighlighter(Object.values(TOKENS)
    .filter(([tag]) => !seen.has(tag) && seen.add(tag))
    .map(([tag, kind]) => ({ tag, class: `sfc-${prefix}-${kind} sfc-tok` })));
  return new LanguageSupport(lang, [syntaxHighlighting(classes), syntaxHighlighting(COLOURS)]);
}

// The `%%magic args` line: the first token of the cell (state.atStart) when it
// starts with %%.  Each language's state has `atStart: true` and blankLine().
export function magicLine(stream, state) {
  if (!state.atStart) return null;
  state.atStart = false;
  if (stream.sol() && stream.match(/^%%\w+/)) {
    stream.skipToEnd();
    return "magic";
  }
  return null;
}

export function blankLine(state) { state.atStart = false; }

// Numbers and addresses: MAC, IPv4 (with /prefix), IPv6, hex, decimals, quantities (10Gbps).
export function number(stream) {
  if (stream.match(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}(?![0-9A-Za-z:])/)) return "number";
  if (stream.match(/^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/)) return "number";
  if (stream.match(/^(?=[0-9A-Fa-f:]*::|[0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){7})[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}/)) return "number";
  if (stream.match(/^0[xX][0-9A-Fa-f_]+/)) return "number";
  if (stream.match(/^[0-9]+(\.[0-9]+)?([A-Za-z]+)?/) || stream.match(/^\.[0-9]+/)) return "number";
  return null;
}

export function string(stream) {
  if (stream.match(/^"([^"\\\n]|\\.)*"?/)) return "string";
  return null;
}
