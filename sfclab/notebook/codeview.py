"""The program listing of the live view's p4 tab: P4 highlighted, Copy and Download.

>>> highlight_p4('table t { size = 16; } // x')
'<span class="p4-keyword">table</span> t { <span class="p4-keyword">size</span> = \
<span class="p4-number">16</span>; } <span class="p4-comment">// x</span>'
"""

from __future__ import annotations

import html
import re

import anywidget
import traitlets as t

__all__ = ["CodeView", "highlight_p4"]

_esc = html.escape

_P4_KEYWORDS = frozenset(
    "action actions apply const control default default_action else entries enum extern "
    "false header header_union if in inout key out package parser return select size "
    "state struct switch table transition true tuple typedef type value_set".split())
_P4_TYPES = frozenset("bit bool error int string varbit void match_kind packet_in "
                      "packet_out".split())
_P4_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<meta>^[ \t]*\#[^\n]*)
  | (?P<annotation>@[A-Za-z_]\w*)
  | (?P<number>\b\d+[ws]\d+\b|\b0[xXbBoOdD][0-9a-fA-F_]+\b|\b\d[\d_]*\b)
  | (?P<word>\b[A-Za-z_]\w*\b)
""", re.S | re.M | re.X)


def highlight_p4(code: str) -> str:
    """P4 source as HTML with ``<span class="p4-…">`` around keywords, types, numbers,
    strings, comments, annotations and preprocessor lines."""
    out, last = [], 0
    for m in _P4_TOKEN.finditer(code):
        kind, text = m.lastgroup, m.group()
        if kind == "word":
            kind = "keyword" if text in _P4_KEYWORDS else "type" if text in _P4_TYPES else ""
        out.append(_esc(code[last:m.start()], quote=False))
        out.append(f'<span class="p4-{kind}">{_esc(text, quote=False)}</span>' if kind
                   else _esc(text, quote=False))
        last = m.end()
    out.append(_esc(code[last:], quote=False))
    return "".join(out)


class CodeView(anywidget.AnyWidget):
    """A read-only program listing with syntax highlighting, Copy and Download buttons
    (both run in the browser: the clipboard and the file never pass through the kernel)."""

    _esm = """
    export default { render({ model, el }) {
      const bar = document.createElement("div"), pre = document.createElement("pre");
      bar.className = "sfc-code-bar"; pre.className = "sfc-code"; el.classList.add("sfc-codeview");
      const title = document.createElement("span"), copy = document.createElement("button"),
            save = document.createElement("button");
      copy.textContent = "Copy"; save.textContent = "Download";
      copy.className = save.className = "jupyter-button";
      copy.onclick = async () => {
        const text = model.get("code");
        try { await navigator.clipboard.writeText(text); }
        catch (e) {   // no clipboard API (plain http): select the listing and copy that
          const r = document.createRange(); r.selectNodeContents(pre);
          const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
          document.execCommand("copy");
        }
        copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy"; }, 1200);
      };
      save.onclick = () => {
        const url = URL.createObjectURL(new Blob([model.get("code")], { type: "text/plain" }));
        const a = document.createElement("a");
        a.href = url; a.download = model.get("filename"); a.click();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      };
      bar.append(title, copy, save); el.append(bar, pre);
      const draw = () => {
        const err = model.get("error");
        title.textContent = err ? "" : model.get("title");
        copy.disabled = save.disabled = !!err || !model.get("code");
        if (err) { pre.textContent = err; pre.classList.add("sfc-error"); }
        else { pre.innerHTML = model.get("html"); pre.classList.remove("sfc-error"); }
      };
      model.on("change", draw); draw();
    } };
    """
    _css = """
    .sfc-code-bar { display: flex; gap: 6px; align-items: center; margin: 2px 0; }
    .sfc-code-bar span { flex: 1; color: var(--jp-ui-font-color2, #666); font-size: 12px; }
    .sfc-code { max-height: 480px; overflow: auto; margin: 0; padding: 6px;
      background: var(--jp-cell-editor-background, #f7f7f7); font-size: 12px;
      font-family: var(--jp-code-font-family, monospace); }
    /* JupyterLab's `.jp-OutputArea-output pre` breaks lines inside words (word-break:
       break-all: "h ave"); this rule is more specific: lines break between words, and
       inside one only when it is longer than the line. */
    .sfc-codeview pre.sfc-code { padding: 6px; white-space: pre-wrap; word-break: normal;
      overflow-wrap: break-word; }
    .sfc-code.sfc-error { color: var(--jp-error-color1, #d32f2f); white-space: pre-wrap; }
    .p4-keyword { color: var(--jp-mirror-editor-keyword-color, #008000); font-weight: bold; }
    .p4-type { color: var(--jp-mirror-editor-variable-2-color, #05a); }
    .p4-number { color: var(--jp-mirror-editor-number-color, #080); }
    .p4-string { color: var(--jp-mirror-editor-string-color, #ba2121); }
    .p4-comment { color: var(--jp-mirror-editor-comment-color, #408080); font-style: italic; }
    .p4-meta, .p4-annotation { color: var(--jp-mirror-editor-meta-color, #aa22ff); }
    """

    code = t.Unicode("", help="The program text (what Copy and Download give).").tag(sync=True)
    html = t.Unicode("", help="The program as highlighted HTML (highlight_p4).").tag(sync=True)
    filename = t.Unicode("program.p4", help="File name Download saves as.").tag(sync=True)
    title = t.Unicode("", help="One line above the listing.").tag(sync=True)
    error = t.Unicode("", help="Why there is no program (shown instead of it).").tag(sync=True)

    def set_code(self, code: str, *, title: str = "") -> None:
        """Show *code* (highlighted); clears any error."""
        with self.hold_sync():
            self.code, self.html, self.title, self.error = code, highlight_p4(code), title, ""

    def set_error(self, message: str) -> None:
        with self.hold_sync():
            self.code, self.html, self.title, self.error = "", "", "", message
