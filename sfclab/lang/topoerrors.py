"""Syntax errors of the topology language, with the caret and a hint that says what to write.

>>> from sfclab.lang.topology import parse_topology
>>> try:
...     parse_topology("switch s1\\nlink s1 - s2")
... except Exception as e:
...     print(e)
<topology>:2:9: unexpected character '-'
    link s1 - s2
            ^
hint: a link is `link A -- B`, with two dashes (e.g. `link h1 -- s1:1`)
"""

from __future__ import annotations

import re

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import TopologyError, did_you_mean
from .parser import expected_text

__all__ = ["syntax_error"]

_STATEMENTS = ("topology", "switch", "host", "server", "link", "use")
_PROPS = ("arch", "pipes", "stages", "tables", "ports", "ip", "mac", "at", "runs", "latency",
          "bandwidth")
_FRIENDLY = {
    "NAME": "a name", "STRING": "a quoted name", "PORTREF": "a switch port (s1:3)",
    "QPORT": "a port (\"leaf-1\":3)", "INT": "a number", "NUMBER": "a number", "QUANTITY": "an amount (0.5ms, 10Gbps)",
    "IPV4": "an IPv4 address", "MAC": "a MAC address", "_EOL": "the end of the line",
    "LINE": "`--`", "COLON": "`:`", "VALUE": "a value (8, v1model, 0.5ms, 10.0.0.1 …)",
}
_VALUES = {"NAME", "STRING", "INT", "NUMBER", "QUANTITY", "IPV4", "MAC", "PORTREF", "QPORT"}


def _expected(names: set[str], grammar: Lark) -> str:
    names = {"_EOL" if n == "$END" else n for n in names}
    if _VALUES <= names:
        names = (names - _VALUES) | {"VALUE"}
    return expected_text(names, grammar, _FRIENDLY)


def _accepted(e: UnexpectedInput) -> set[str]:
    """The tokens the parser would have taken where it stopped (exact, unlike the
    LALR state's look-ahead set, which merged states widen)."""
    parser = getattr(e, "interactive_parser", None)
    if parser is not None:
        try:
            return set(parser.accepts())
        except Exception:  # noqa: BLE001 - fall back to lark's own set
            pass
    return set(getattr(e, "expected", ()) or ())


def syntax_error(e: UnexpectedInput, text: str, source: str, grammar: Lark) -> TopologyError:
    """A :class:`TopologyError` for lark's *e* (raised by *grammar*, the topology
    language's parser), placed on the token at fault."""
    lines = text.splitlines() or [""]
    tok = getattr(e, "token", None)
    if isinstance(e, UnexpectedCharacters):
        line, col, width = e.line, e.column, 1
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        message, hint = f"unexpected character {ch!r}", _char_hint(ch, lines[line - 1], col)
    elif isinstance(e, UnexpectedEOF) or tok is None or tok.type in ("$END", "_EOL"):
        expected = _accepted(e)
        line = tok.line if tok is not None and tok.type == "_EOL" else len(lines)
        src = lines[line - 1] if line <= len(lines) else ""
        col, width = len(src.rstrip()) + 1, 1
        message = f"the line ends too early; expected {_expected(expected, grammar)}"
        hint, focus = _end_hint(src, expected)
        if focus:                         # the word at fault, not the place after it
            col, width = src.rstrip().rfind(focus) + 1, len(focus)
    else:
        assert isinstance(e, UnexpectedToken)
        expected = _accepted(e)
        line, col, width = tok.line, tok.column, max(1, len(tok))
        what = f"keyword {str(tok)!r}" if str(tok) in _STATEMENTS else repr(str(tok))
        message = f"unexpected {what}; expected {_expected(expected, grammar)}"
        hint = _token_hint(str(tok), tok.type, expected, lines[line - 1], col)
    mac = re.search(r"\bmac\s+([^\s;]+)", lines[line - 1]) if hint == _MAC_HINT else None
    if mac:                               # the whole malformed address
        col, width = mac.start(1) + 1, len(mac.group(1))
        message = f"{mac.group(1)!r} is not a MAC address"
    return TopologyError(message, line=line, column=col, width=width, source=source, text=text,
                         hint=hint)


def _char_hint(ch: str, src: str, col: int) -> str:
    before = src[:col - 1].rstrip()
    if re.search(r"\bmac\s+\S*$", src[:col - 1]):
        return _MAC_HINT
    if ch == "-" and src.split()[:1] == ["link"]:
        return "a link is `link A -- B`, with two dashes (e.g. `link h1 -- s1:1`)"
    if ch in "-." and re.search(r"[A-Za-z_]\w*$", src[:col - 1]):
        word = re.findall(r"[\w.-]+$", src[:col - 1] + src[col - 1:].split()[0])
        return f"quote a name with {ch!r} in it: \"{word[0] if word else 'leaf-1'}\""
    if ch == "-" and src[col:col + 1].isdigit():
        return "numbers here are whole and not negative"
    if ch == ":" and before and before[-1].isalnum():
        name = re.findall(r"[\w\"]+$", before)[0]
        return f"write a port right after its node, without spaces: `{name}:3`"
    if ch == "=":
        return "a property is a name and a value, without `=`: `stages 8` (`=` is for " \
               "generator arguments: `use fat_tree(4, stages=8)`)"
    if ch in "({[":
        return "only a generator takes parentheses: `use fat_tree(4)`"
    return f"{ch!r} cannot appear here: names are letters, digits and _ (quote others: " \
           "\"leaf-1\")"


def _end_hint(src: str, expected: set[str]) -> tuple[str, str | None]:
    """The hint for a line that ends too early, and the word to point at (if not the end)."""
    words = re.findall(r"[^\s,]+", re.split(r"//|#", src)[0])
    stmt = words[0] if words else ""
    if "LINE" in expected and stmt == "link":
        return "a link joins two nodes: `link A -- B` (e.g. `link h1 -- s1:1`)", None
    if "LPAR" in expected:
        return (f"call a generator with parentheses: `use {words[-1]}(…)`, e.g. "
                "`use fat_tree(4)`"), None
    if "RPAR" in expected:
        return f"close the generator call: `{' '.join(words)})`", None
    if expected & _VALUES and len(words) >= 2:
        last = words[-1]
        if len(words) >= 3 and re.fullmatch(r"[0-9.]+", words[-2]) and last.isalpha():
            return f"write the unit right after the number: `{words[-2]}{last}`", last
        if last in _PROPS:
            return f"`{last}` needs a value, e.g. `{_EXAMPLES.get(last, last + ' 1')}`", None
        if stmt in ("switch", "host", "server"):
            return (f"separate names with commas: `{stmt} {words[-2]}, {last}`; a property "
                    "has a value (`stages 8`)"), last
    if "NAME" in expected and len(words) == 1:
        return f"`{stmt}` needs a name, e.g. `{stmt} {_EXAMPLES.get(stmt, 's1')}`", None
    return "see the Topologies section of README.md", None


_MAC_HINT = "a MAC address is six pairs of hex digits: `mac 00:00:00:00:00:01`"
_EXAMPLES = {
    "arch": "arch tna", "pipes": "pipes 2", "stages": "stages 12", "tables": "tables 64",
    "ports": "ports 32", "ip": "ip 10.0.0.1", "mac": "mac 00:00:00:00:00:01", "at": "at s1:1",
    "runs": "runs ips, dpi", "latency": "latency 0.5ms", "bandwidth": "bandwidth 10Gbps",
    "topology": "campus", "switch": "s1", "host": "h1", "server": "srv1", "link": "h1 -- s1",
    "use": "fat_tree(4)",
}


def _token_hint(tok: str, kind: str, expected: set[str], src: str, col: int) -> str:
    at_start = not src[:col - 1].strip()
    stmt = src.split()[0] if src.split() else ""
    if at_start and kind in ("NAME", "STRING"):
        return did_you_mean(tok, _STATEMENTS) or \
            f"a line starts with {', '.join(_STATEMENTS[:-1])} or use"
    if tok in _STATEMENTS and "NAME" in expected:
        return f"{tok!r} is a keyword: quote it to use it as a name (\"{tok}\")"
    if "LPAR" in expected:
        name = (re.findall(r"\w+", src[:col - 1]) or ["fat_tree"])[-1]
        return f"call a generator with parentheses: `use {name}({tok})`"
    if tok == ")" and src[:col - 1].rstrip().endswith(","):
        return "an argument is missing after the last `,`: remove the comma or add one"
    if tok == "=":
        return "a property is a name and a value, without `=`: `stages 8` (`=` is for " \
               "generator arguments: `use fat_tree(4, stages=8)`)"
    if re.search(r"\bmac\s+\S*$", src[:col - 1]):
        return _MAC_HINT
    if "LINE" in expected and stmt == "link":
        return "a link is `link A -- B [-- C …]`; ports follow their node: `s1:3`"
    if tok in "([{" and stmt != "use":
        return "only a generator takes parentheses: `use fat_tree(4)`; a property is " \
               "`stages 8`"
    if kind in ("INT", "NUMBER", "QUANTITY", "IPV4", "MAC") and "NAME" in expected:
        return "a property is a name, then its value: `stages 8`, `latency 0.5ms`"
    if kind == "IPV4":
        return "a host's address follows its name: `host h1 10.0.0.1`"
    return "see the Topologies section of README.md"
