"""A self-contained HTML report of a chain set on a switch (``sfclab demo --html``).

No JavaScript and no files beside it: chain graphs are inline SVG, drawn as the
notebook's views draw them (:mod:`sfclab.draw.chains`).

>>> import sfclab
>>> svg = chain_svg(sfclab.parse("chain a: firewall -> nat")["a"])
>>> svg.startswith("<svg") and "firewall" in svg
True
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from ..draw.chains import chain_elements, svg
from ..ir.model import Chain

__all__ = ["chain_svg", "html_report", "bar", "log_share", "occupancy_text", "target_text"]

def chain_svg(chain: Chain, catalog=None) -> str:
    """One chain's graph as an SVG element (:func:`sfclab.draw.chains.svg`): NFs as rounded
    boxes coloured by layer, end points as ellipses, edges coloured by kind and labelled
    with conditions."""
    return svg(*chain_elements(chain, catalog), title=f"chain {chain.name}")


def bar(share: float, width: int = 20) -> str:
    """A text bar for a share in [0, 1]: ``█████···············``."""
    full = max(0, min(width, round(share * width)))
    return "█" * full + "·" * (width - full)


def log_share(entries: int, size: int) -> float:
    """*entries* of *size* on a log scale: 0 for none, 1 for full, 1 entry of 1,024
    about 0.1 (a plain share would be 0.001: an empty-looking bar).

    >>> round(log_share(1, 1024), 2), log_share(0, 1024), log_share(1024, 1024)
    (0.1, 0.0, 1.0)
    """
    if entries <= 0 or size <= 0:
        return 0.0
    return min(1.0, math.log1p(entries) / math.log1p(size))


def occupancy_text(rows: Iterable, *, lookups: bool = True) -> str:
    """Tables as text: entries / size with a log-scale bar, and (*lookups*) the hits
    and misses of the packets sent (rows with ``table``, ``entries``, ``size``, and
    ``hits``, ``misses``).

    >>> from types import SimpleNamespace as R
    >>> print(occupancy_text([R(table="acl", entries=2, size=1024, hits=0, misses=5)]))
    table  entries /  size  occupancy (log)       hits  misses
    acl          2 /  1024  ███···············       0       5
    """
    rows = list(rows)
    w = max((len(r.table) for r in rows), default=5)
    head = f"{'table':<{w}}  entries /  size  occupancy (log)   "
    lines = [head + ("    hits  misses" if lookups else "")]
    for r in rows:
        line = f"{r.table:<{w}}  {r.entries:7d} / {r.size:5d}  {bar(log_share(r.entries, r.size), 18)}"
        if lookups:
            line += f"  {getattr(r, 'hits', 0) or 0:6d}  {getattr(r, 'misses', 0) or 0:6d}"
        lines.append(line)
    return "\n".join(lines)


def target_text(target: object) -> str:
    """A switch target in words, its address as ``host:port`` (no URL: notebooks turn
    URLs in text into links that lead nowhere).

    >>> class T: kind, address = "model", "127.0.0.1:9559"
    >>> target_text(T())
    'the embedded switch model, P4Runtime at 127.0.0.1:9559'
    >>> T.address = "in-process"                # no gRPC here (Pyodide)
    >>> target_text(T())
    'the embedded switch model, P4Runtime in-process'
    >>> T.arch, T.pipes = "tna", 2              # model?arch=tna
    >>> target_text(T())
    'the embedded Tofino model (TNA, 2 pipes), P4Runtime in-process'
    """
    kind = getattr(target, "kind", "")
    address = getattr(target, "address", "")
    what = {"model": "the embedded switch model", "bmv2": "BMv2 (simple_switch_grpc)",
            "tofino": "a Tofino"}.get(kind, kind or type(target).__name__)
    if kind == "model" and getattr(target, "arch", "") == "tna":
        what = f"the embedded Tofino model (TNA, {getattr(target, 'pipes', 2)} pipes)"
    if address == "in-process":
        return f"{what}, P4Runtime in-process"
    return f"{what}, P4Runtime at {address}" if address else what


def _table(head: Iterable[str], rows: Iterable[Iterable]) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def html_report(title: str, *, chains, catalog, sections: list[tuple[str, str]],
                tables: list[tuple[str, list[str], list[list]]], program: str = "") -> str:
    """The report: chain graphs, then text *sections* (preformatted), then *tables*."""
    css = ("body{font-family:sans-serif;margin:2em;max-width:1200px}h1{font-size:1.6em}"
           "h2{border-bottom:1px solid #ccc;margin-top:1.6em}pre{background:#f6f8fa;padding:1em;"
           "overflow:auto;font-size:12px}table{border-collapse:collapse;margin:.5em 0}"
           "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;font-size:13px}"
           "th{background:#f0f0f0}.chain{display:inline-block;margin:0 1.5em 1em 0;"
           "vertical-align:top}")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{css}</style></head><body><h1>{html.escape(title)}</h1>",
             "<h2>Chains</h2>"]
    for c in chains:
        parts.append(f"<div class='chain'><b>{html.escape(c.name)}</b>"
                     + (f" <small>match {html.escape(str(c.match))}</small>" if c.match else "")
                     + f"<br>{chain_svg(c, catalog)}</div>")
    for name, text in sections:
        parts.append(f"<h2>{html.escape(name)}</h2><pre>{html.escape(text)}</pre>")
    for name, head, rows in tables:
        parts.append(f"<h2>{html.escape(name)}</h2>{_table(head, rows)}")
    if program:
        parts.append("<h2>P4 program</h2><details><summary>show the composed v1model program"
                     f"</summary><pre>{html.escape(program)}</pre></details>")
    parts.append("</body></html>")
    return "".join(parts)
