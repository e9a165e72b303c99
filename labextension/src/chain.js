// The chain language of %%chain cells (sfclab/lang/chain.lark): FlexMesh blocks,
// one-line chains, P4SC sentences.  `//` starts a comment anywhere; `#` starts one
// outside parentheses unless it follows a name (`nat#2` is a serial number;
// inside parentheses `#` separates the cases of a multibranch from their field).
import { blankLine, language, magicLine, number, string } from "./tokens.js";

const KEYWORDS = new Set(["chain", "match", "weight", "from", "to", "request", "before", "then",
  "or", "and", "first", "last", "loop", "branch_end", "End_of_Request"]);
const ENDPOINTS = new Set(["input", "output", "drop", "cpu", "self"]);
const NAMING = new Set(["chain", "request"]); // the next name is the chain's

function token(stream, state) {
  const magic = magicLine(stream, state);
  if (magic) return magic;
  if (stream.eatSpace()) return null;
  if (stream.match("//")) { stream.skipToEnd(); return "comment"; }
  const ch = stream.peek();
  if (ch === "#") {
    stream.next();
    if (state.depth > 0) return "operator";
    stream.skipToEnd();
    return "comment";
  }
  if (ch === '"') {
    const s = string(stream);
    if (state.naming) { state.naming = false; return "definition"; }
    return s;
  }
  if (stream.match("=>") || stream.match("->")) return "arrow";
  if (stream.match(/^(==|!=|<=|>=|<|>)/)) return "compare";
  if (stream.match(/^(&&&|&&|\.\.)/)) return "operator";
  if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(stream.string.charAt(stream.pos + 1)))) {
    // a hex MAC or IPv6 may start with letters too, but then it reads as a name first
    return number(stream);
  }
  if (stream.match(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}(?![0-9A-Za-z:])/)) return "number"; // aa:bb:...
  if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) {
    const word = stream.current();
    if (stream.match(/^#[0-9]+/)) return "nf"; // nat#2
    if (state.naming) { state.naming = false; return "definition"; }
    if (stream.match(/^\.[A-Za-z_][A-Za-z0-9_]*/)) return "field";
    if (KEYWORDS.has(word)) { state.naming = NAMING.has(word); return "keyword"; }
    if (ENDPOINTS.has(word)) return "endpoint";
    return "nf";
  }
  stream.next();
  if (ch === "(") { state.depth += 1; return "punctuation"; }
  if (ch === ")") { state.depth = Math.max(0, state.depth - 1); return "punctuation"; }
  if (ch === "{") { state.inBlock = true; return "punctuation"; }
  if (ch === "}") { state.inBlock = false; return "punctuation"; }
  if (ch === "?" || ch === ":" || ch === "@" || ch === "/" || ch === "=") return "operator";
  return "punctuation";
}

export const chain = language("sfc-chain", "chain", {
  startState: () => ({ atStart: true, depth: 0, naming: false, inBlock: false }),
  copyState: (s) => ({ ...s }),
  blankLine,
  token,
  languageData: { commentTokens: { line: "//" } },
});
