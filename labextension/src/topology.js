// The topology language of %%topology cells (sfclab/lang/topology.lark): one
// statement a line (or `;`): `topology|switch|host|server|link|use` first, then
// names (`switch s1, s2`), ports (`s1:2`), properties with their values
// (`stages 12`, `latency 0.5ms`, `runs ips, dpi`) and generator calls
// (`use fat_tree(4)`).  Comments start with `//` or `#`.
import { blankLine, language, magicLine, number, string } from "./tokens.js";

const KEYWORDS = new Set(["topology", "switch", "host", "server", "link", "use"]);

function word(stream, state) {
  if (state.expect === "statement") {
    if (KEYWORDS.has(stream.current())) {
      state.expect = stream.current() === "use" ? "generator" : stream.current() === "link" ? "key" : "names";
      return "keyword";
    }
    state.expect = "key";
    return "name";
  }
  if (state.expect === "generator") { state.expect = "key"; return "generator"; }
  if (state.depth > 0) return stream.match(/^\s*=/, false) ? "property" : "name";
  const more = stream.match(/^\s*,/, false);
  if (state.expect === "names") { if (!more) state.expect = "key"; return "definition"; }
  if (state.expect === "value") { if (!more) state.expect = "key"; return "name"; }
  state.expect = "value";
  return "property";
}

function token(stream, state) {
  const magic = magicLine(stream, state);
  if (magic) return magic;
  if (stream.sol()) { state.expect = "statement"; state.depth = 0; }
  if (stream.eatSpace()) return null;
  if (stream.match("//") || stream.match("#")) { stream.skipToEnd(); return "comment"; }
  const ch = stream.peek();
  const value = state.expect === "value" && !stream.match(/^[^,\s]*\s*,/, false);
  if (ch === '"') { if (value) state.expect = "key"; return string(stream); }
  if (stream.match("--")) return "arrow";
  if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*:[0-9]+/)) { if (value) state.expect = "key"; return "port"; }
  const num = /[0-9.]/.test(ch) || stream.match(/^[0-9A-Fa-f]{2}:/, false) ? number(stream) : null;
  if (num) { if (value) state.expect = "key"; return num; }
  if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) return word(stream, state);
  stream.next();
  if (ch === ";") { state.expect = "statement"; return "punctuation"; }
  if (ch === "(") { state.depth += 1; return "punctuation"; }
  if (ch === ")") { state.depth = Math.max(0, state.depth - 1); return "punctuation"; }
  return ch === "," ? "punctuation" : "operator";
}

export const topology = language("sfc-topology", "topo", {
  startState: () => ({ atStart: true, expect: "statement", depth: 0 }),
  copyState: (s) => ({ ...s }),
  blankLine,
  token,
  languageData: { commentTokens: { line: "//" } },
});
