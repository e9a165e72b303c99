// P4_16 for %%nf cells: keywords, base types, annotations (@name), preprocessor
// lines, width-prefixed numbers (8w255, 16s0x1), comments and strings.
import { blankLine, language, magicLine, string } from "./tokens.js";

const KEYWORDS = new Set(["abstract", "action", "actions", "apply", "const", "control", "default",
  "default_action", "else", "entries", "enum", "exit", "extern", "for", "header", "header_union",
  "if", "in", "inout", "key", "list", "match_kind", "out", "package", "parser", "priority",
  "return", "select", "size", "state", "struct", "switch", "table", "transition", "tuple",
  "type", "typedef", "value_set"]);
const TYPES = new Set(["bit", "bool", "error", "int", "string", "varbit", "void", "packet_in",
  "packet_out", "standard_metadata_t"]);
const ATOMS = new Set(["true", "false", "this", "accept", "reject", "exact", "ternary", "lpm",
  "range", "optional", "selector", "NoAction"]);

function token(stream, state) {
  const magic = magicLine(stream, state);
  if (magic) return magic;
  if (state.comment) {
    if (stream.skipTo("*/")) { stream.match("*/"); state.comment = false; } else stream.skipToEnd();
    return "blockComment";
  }
  if (stream.eatSpace()) return null;
  if (stream.match("//")) { stream.skipToEnd(); return "comment"; }
  if (stream.match("/*")) { state.comment = true; return token(stream, state); }
  if (stream.sol() && stream.match(/^\s*#\s*\w+/)) { stream.skipToEnd(); return "annotation"; }
  const ch = stream.peek();
  if (ch === '"') return string(stream);
  if (ch === "@" && stream.match(/^@[A-Za-z_]\w*/)) return "annotation";
  if (stream.match(/^[0-9]+[ws](0[xX][0-9A-Fa-f_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9_]+)/)
      || stream.match(/^0[xX][0-9A-Fa-f_]+/) || stream.match(/^0[bB][01_]+/) || stream.match(/^[0-9][0-9_]*/)) return "number";
  if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) {
    const w = stream.current();
    if (KEYWORDS.has(w)) return "keyword";
    if (TYPES.has(w) || /_t$/.test(w)) return "type";
    if (ATOMS.has(w)) return "atom";
    if (stream.match(/^\s*\(/, false)) return "call";
    return "name";
  }
  stream.next();
  if ("(){}[];,.".includes(ch)) return "punctuation";
  if ("=!<>".includes(ch)) { stream.eat("="); return ch === "=" && stream.current() === "=" ? "operator" : "compare"; }
  return "operator";
}

export const p4 = language("p4", "p4", {
  startState: () => ({ atStart: true, comment: false }),
  copyState: (s) => ({ ...s }),
  blankLine,
  token,
  languageData: { commentTokens: { line: "//", block: { open: "/*", close: "*/" } } },
});
