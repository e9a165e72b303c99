"""Small HTML pieces the notebook's views share: tables, NF chips, notes, bars.

Every function returns HTML text; arguments named *text* are escaped, arguments
named *cells* or *html* are HTML already.  Colours follow JupyterLab's theme
variables, with light-theme fallbacks.

>>> table(["a", "b"], [["1", "<b>2</b>"]]).count("<tr>")
2
>>> "width:50.0%" in bar(0.5, "#4e79a7")
True
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Sequence

from ..draw.chains import nf_color
from ..nfinfo import NFCatalog
from ..draw.plots import framed as picture

__all__ = ["esc", "CELL", "table", "chip", "chips", "note", "more", "bar", "picture", "EMPTY"]

esc = _html.escape
CELL = ("padding:2px 8px;border:1px solid var(--jp-border-color2,#ddd);vertical-align:top;"
        "text-align:left")


def table(head: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """An HTML table; *head* and the cells of *rows* are HTML already."""
    th = "".join(f'<th style="{CELL};text-align:left">{h}</th>' for h in head)
    body = "".join("<tr>" + "".join(f'<td style="{CELL}">{c}</td>' for c in r) + "</tr>"
                   for r in rows)
    klass = f' class="{cls}"' if cls else ""
    return (f'<table{klass} style="border-collapse:collapse;font-size:12px;line-height:1.4;'
            f'margin:4px 0"><tr>{th}</tr>{body}</table>')


def chip(text: str, color: str, *, dashed: bool = False, ink: str = "#111",
         title: str = "") -> str:
    """A small coloured label (an NF, a slot)."""
    border = "dashed" if dashed else "solid"
    tip = f' title="{esc(title)}"' if title else ""
    return (f'<span{tip} style="background:{color};color:{ink};border:1px {border} #333;'
            f'border-radius:4px;padding:0 5px;margin:1px;display:inline-block;'
            f'line-height:1.5">{esc(text)}</span>')


def chips(nodes: Sequence[str], catalog: NFCatalog, *, marks: dict[str, str] | None = None
          ) -> str:
    """NF instances as chips in their layer's colour, non-offloadable ones dashed;
    *marks* adds a suffix and a tooltip to some (``{"nat": "½"}``)."""
    out = []
    for n in nodes:
        info = catalog.get(n.split("#")[0])
        mark = (marks or {}).get(n, "")
        out.append(chip(n + mark, nf_color(catalog, info.name if info else n),
                        dashed=bool(info and info.offload == "non")))
    return "".join(out) or "–"


def note(text: str) -> str:
    """A line of grey explanation (*text* is HTML)."""
    return (f'<div style="color:var(--jp-ui-font-color2,#666);margin:4px 0;line-height:1.4">'
            f"{text}</div>")


def more(total: int, shown: int, what: str) -> str:
    """``… and N more WHAT`` when a list was cut."""
    return note(f"… and {total - shown} more {what} (see <code>compiled.explain()</code>)") \
        if total > shown else ""


def bar(share: float, color: str, *, width: int = 160, title: str = "") -> str:
    """A horizontal bar filled to *share* (0..1) of *width* pixels; a share above 0
    shows at least a sliver."""
    pct = 0.0 if share <= 0 else max(min(share, 1.0) * 100, 1.5)
    tip = f' title="{esc(title)}"' if title else ""
    return (f'<div{tip} style="background:var(--jp-layout-color2,#eee);width:{width}px;'
            f'height:12px;display:inline-block;vertical-align:middle">'
            f'<div style="background:{color};width:{pct:.1f}%;height:12px"></div></div>')


EMPTY = note("No chains yet: write them in a <code>%%chain</code> cell or call "
             "<code>lab.add(…)</code>.")
