"""Small plots as SVG, drawn by sfclab itself (no plotting library to install).

:func:`line_plot` (curves with marked points), :func:`bar_plot` (grouped bars,
linear or log scale) and :func:`timeline_plot` (events on a time axis, in rows,
over shaded spans) return a :class:`Figure`: an ``<svg>`` a notebook shows
inline (text in the page's font and colour, a tooltip on every mark and bar)
and the same data as text for a terminal.  Sizes are in CSS pixels at which
the labels are 11–13 px: readable when shown at natural size.

Why not a library: five kinds of plot in a few hundred lines of SVG that take the page's
font and colour and carry tooltips, against matplotlib as a dependency of its own (with
numpy and fonts, not installed here) whose SVGs need styling to fit a notebook's theme.

>>> fig = line_plot([Series("y = x", ((0, 0), (1, 1), (2, 2)))], x_label="x", y_label="y")
>>> fig.svg.startswith("<svg") and fig.svg.count("<polyline") == 1
True
>>> print(fig.text)
y = x: (0, 0) (1, 1) (2, 2)
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Figure", "framed", "Series", "Mark", "Span", "line_plot", "bar_plot", "timeline_plot",
           "nice_ticks", "PALETTE", "FONT"]

#: Series colours, in order (colour-blind safe, as the NF layer colours).
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#9c755f")
FONT = "font-family:sans-serif"
_INK = "currentColor"           # text and axes take the page's colour (light or dark theme)
_GRID = "#8884"
_SPAN = "#f9a82555"
#: A halo in the page's background colour behind a label that may cross a curve.
_HALO = "stroke:var(--jp-layout-color0,#fff);stroke-width:3px;paint-order:stroke"
_TICK, _LABEL = 11, 12
_MARK_GAP = 15                  # from a mark's centre to its label (ring 7 + 1.5, halo, room)
_CHAR = 0.6                     # average character width, in font sizes


class Figure:
    """An SVG picture and its data as text; a notebook shows the picture."""

    def __init__(self, svg: str, text: str, *, width: float, height: float) -> None:
        self.svg, self.text = svg, text
        self.width, self.height = width, height

    def _repr_mimebundle_(self, **kw: Any) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.text}

    def html(self) -> str:
        return framed(self.svg)

    def __repr__(self) -> str:
        return self.text


def framed(svg: str) -> str:
    """An SVG picture in a block of the page, at its natural size (labels stay readable),
    scrolling sideways in a narrow page instead of shrinking."""
    return (f'<div class="sfc-picture" style="overflow-x:auto;max-width:100%;margin:4px 0">'
            f"{svg}</div>")


@dataclass(frozen=True, slots=True)
class Series:
    """A curve: *points* ``(x, y)`` joined by lines, each drawn as a dot."""

    name: str
    points: tuple[tuple[float, float], ...]
    color: str = ""
    dash: str = ""


@dataclass(frozen=True, slots=True)
class Mark:
    """A labelled point on a plot (what a student looks for: "your placement")."""

    x: float
    y: float
    label: str
    color: str = "#d62728"
    tip: str = ""


@dataclass(frozen=True, slots=True)
class Span:
    """A shaded interval of a time axis, labelled (an update …)."""

    start: float
    end: float
    label: str = ""


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About *n* round tick values covering [lo, hi].

    >>> nice_ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(0, 128)
    [0, 50, 100, 150]
    """
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9) * step
    out, v = [], first
    while v < hi + step * 0.999:
        out.append(round(v, 10))
        v += step
    return out


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e5 else f"{v:.0e}"


def _text(x: float, y: float, s: str, *, size: int = _TICK, anchor: str = "middle",
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{_INK}"{extra}>{html.escape(s)}</text>')


def _width(s: str, size: int) -> float:
    return len(s) * size * _CHAR


class _Frame:
    """A plot area with axes: maps data to pixels and draws ticks, grid, labels."""

    def __init__(self, width: float, height: float, *, x: tuple[float, float],
                 y: tuple[float, float], y_ticks: Sequence[float], y_labels: Sequence[str],
                 title: str, legend: Sequence[tuple[str, str, str]], log: bool = False) -> None:
        self.log = log
        self.x0, self.x1 = x
        self.y0, self.y1 = (math.log10(y[0]), math.log10(y[1])) if log else y
        self.left = 16 + max((_width(s, _TICK) for s in y_labels), default=0) + 22
        self.right, self.bottom = width - 16, height - 44
        rows, lx = [[]], self.left                 # legend entries, wrapped to the width
        for entry in legend:
            w = 22 + _width(entry[0], _TICK) + 16
            if rows[-1] and lx + w > self.right:
                rows.append([])
                lx = self.left
            rows[-1].append((lx, entry))
            lx += w
        legend_h = 18 * len(rows) if legend else 0
        self.top = 10 + (22 if title else 0) + legend_h
        self.width, self.height = width, height
        self.parts: list[str] = []
        if title:
            self.parts.append(_text(self.left, 18, title, size=13, anchor="start",
                                    extra=' font-weight="bold"'))
        for r, row in enumerate(rows if legend else []):
            ly = self.top - legend_h + 18 * r + 8
            for lx, (name, color, dash) in row:
                self.parts.append(f'<line x1="{lx:.1f}" y1="{ly - 4:.1f}" x2="{lx + 18:.1f}" '
                                  f'y2="{ly - 4:.1f}" stroke="{color}" stroke-width="3"'
                                  + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
                self.parts.append(_text(lx + 22, ly, name, size=_TICK, anchor="start"))
        for v, s in zip(y_ticks, y_labels):
            py = self.py(v)
            self.parts.append(f'<line x1="{self.left:.1f}" y1="{py:.1f}" x2="{self.right:.1f}" '
                              f'y2="{py:.1f}" stroke="{_GRID}"/>')
            self.parts.append(_text(self.left - 6, py + 4, s, anchor="end"))
        self.parts.append(f'<path d="M {self.left:.1f} {self.top:.1f} V {self.bottom:.1f} '
                          f'H {self.right:.1f}" fill="none" stroke="{_INK}"/>')

    def px(self, v: float) -> float:
        span = (self.x1 - self.x0) or 1
        return self.left + (v - self.x0) / span * (self.right - self.left)

    def py(self, v: float) -> float:
        if self.log:
            v = math.log10(max(v, 10 ** self.y0))
        span = (self.y1 - self.y0) or 1
        return self.bottom - (v - self.y0) / span * (self.bottom - self.top)

    def labels(self, x_label: str, y_label: str) -> None:
        self.parts.append(_text((self.left + self.right) / 2, self.height - 8, x_label,
                                size=_LABEL))
        cy = (self.top + self.bottom) / 2
        self.parts.append(_text(14, cy, y_label, size=_LABEL,
                                extra=f' transform="rotate(-90 14 {cy:.1f})"'))

    def svg(self, title: str) -> str:
        return _svg(self.width, self.height, title, self.parts)


def _svg(width: float, height: float, title: str, parts: Sequence[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sfc-plot-svg" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'style="{FONT}" role="img">' + (f"<title>{html.escape(title)}</title>" if title else "")
            + "".join(parts) + "</svg>")


def _colors(n: int, given: Sequence[str]) -> list[str]:
    return [g or PALETTE[i % len(PALETTE)] for i, g in zip(range(n), [*given, *[""] * n])]


def line_plot(series: Sequence[Series], *, marks: Sequence[Mark] = (), x_label: str = "",
              y_label: str = "", title: str = "", x_ticks: Sequence[float] | None = None,
              y_range: tuple[float, float] | None = None, y_format: str = "{:g}",
              width: int = 600, height: int = 340) -> Figure:
    """Curves with a dot per point, and *marks*: labelled points drawn on top."""
    colors = _colors(len(series), [s.color for s in series])
    xs = [x for s in series for x, _ in s.points] + [m.x for m in marks]
    ys = [y for s in series for _, y in s.points] + [m.y for m in marks]
    lo, hi = y_range if y_range else (min(ys, default=0), max(ys, default=1))
    yt = nice_ticks(lo, hi)
    xt = list(x_ticks) if x_ticks is not None else nice_ticks(min(xs, default=0),
                                                              max(xs, default=1))
    f = _Frame(width, height, x=(min(xt), max(xt)), y=(yt[0], yt[-1]), y_ticks=yt,
               y_labels=[y_format.format(v) for v in yt], title=title,
               legend=[(s.name, c, s.dash) for s, c in zip(series, colors)])
    for v in xt:
        f.parts.append(_text(f.px(v), f.bottom + 16, _fmt(v)))
    for s, c in zip(series, colors):
        pts = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y in s.points)
        f.parts.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2.5"'
                       + (f' stroke-dasharray="{s.dash}"' if s.dash else "") + "/>")
        for x, y in s.points:
            f.parts.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="3.5" fill="{c}">'
                           f"<title>{html.escape(s.name)}: {_fmt(x)}, "
                           f"{html.escape(y_format.format(y))}</title></circle>")
    taken = [(f.px(m.x) - 8, f.py(m.y) - 8, 16.0, 16.0) for m in marks]  # marks, then labels
    for m in marks:
        cx, cy = f.px(m.x), f.py(m.y)
        f.parts.append(f'<circle class="sfc-mark" cx="{cx:.1f}" cy="{cy:.1f}" r="7" '
                       f'fill="none" stroke="{m.color}" stroke-width="3">'
                       f"<title>{html.escape(m.tip or m.label)}</title></circle>")
        w = _width(m.label, _TICK) + 4
        right = cx + _MARK_GAP + 2 + w <= f.right     # the label clear of the ring and its halo
        x0 = cx + _MARK_GAP if right else cx - _MARK_GAP - w
        ty = _free_row(taken, x0, w, cy - 9, f.top + 10, f.bottom - 4)
        taken.append((x0, ty - 11, w, 14))
        if abs(ty - (cy - 9)) > 1:                    # moved away: a leader line to the mark
            f.parts.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x0 + (0 if right else w):.1f}"'
                           f' y2="{ty - 4:.1f}" stroke="{m.color}" stroke-width="1"/>')
        f.parts.append(_text(x0 + (0 if right else w), ty, m.label,
                             anchor="start" if right else "end",
                             extra=f' font-weight="bold" style="fill:{m.color};{_HALO}"'))
    f.labels(x_label, y_label)
    text = [f"{s.name}: " + " ".join(f"({_fmt(x)}, {y_format.format(y)})" for x, y in s.points)
            for s in series]
    text += [f"● {m.label}: ({_fmt(m.x)}, {y_format.format(m.y)})" for m in marks]
    return Figure(f.svg(title), "\n".join(text), width=width, height=height)


def _free_row(taken: Sequence[tuple[float, float, float, float]], x: float, w: float,
              want: float, lo: float, hi: float) -> float:
    """A text baseline near *want* where a label at *x* of width *w* overlaps none of
    the boxes ``(x, top, w, h)`` in *taken* (staggered down, then up)."""
    for k in range(12):
        y = want + (16 * ((k + 1) // 2) * (1 if k % 2 else -1) if k else 0)
        y = min(max(y, lo), hi)
        if not any(x < bx + bw and bx < x + w and y - 11 < by + bh and by < y + 3
                   for bx, by, bw, bh in taken):
            return y
    return want


def bar_plot(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *,
             colors: Sequence[str] = (), log: bool = False, x_label: str = "",
             y_label: str = "", title: str = "", notes: Sequence[str] = (),
             value_format: str = "{:g}", width: int | None = None,
             height: int = 320) -> Figure:
    """Grouped bars: per category one bar per series, its value on top; *notes* (one per
    category) are written above each group; *log* for values over decades."""
    cols = _colors(len(series), colors)
    values = [v for _, vs in series for v in vs]
    top = max(values, default=1) or 1
    if log:
        low = 10 ** math.floor(math.log10(min((v for v in values if v > 0), default=1)))
        high = 10 ** math.ceil(math.log10(top) + 0.15)
        yt = [10.0 ** k for k in range(round(math.log10(low)), round(math.log10(high)) + 1)]
        rng = (low, high)
    else:
        yt = nice_ticks(0, top * 1.12)
        rng = (0.0, yt[-1])
    group = max(len(series), 1) * 26 + 26
    width = width or max(360, int(len(categories) * group + 140))
    f = _Frame(width, height, x=(0, len(categories)), y=rng, y_ticks=yt,
               y_labels=[_fmt(v) for v in yt], title=title,
               legend=[(name, c, "") for (name, _), c in zip(series, cols)], log=log)
    step = (f.right - f.left) / max(len(categories), 1)
    bw = min(24.0, (step - 18) / max(len(series), 1))
    for i, cat in enumerate(categories):
        gx = f.left + step * i + (step - bw * len(series)) / 2
        f.parts.append(_text(f.left + step * (i + 0.5), f.bottom + 16, cat))
        tops = []
        for j, ((name, vs), c) in enumerate(zip(series, cols)):
            v = vs[i]
            y = f.py(v) if v > 0 else f.bottom
            tops.append(y)
            f.parts.append(f'<rect class="sfc-bar" x="{gx + j * bw:.1f}" y="{y:.1f}" '
                           f'width="{bw - 2:.1f}" height="{f.bottom - y:.1f}" fill="{c}">'
                           f"<title>{html.escape(cat)}: {html.escape(name)} "
                           f"{html.escape(value_format.format(v))}</title></rect>")
            f.parts.append(_text(gx + j * bw + (bw - 2) / 2, y - 4, value_format.format(v),
                                 size=10))
        if i < len(notes) and notes[i]:
            f.parts.append(_text(f.left + step * (i + 0.5), min(tops) - 18, notes[i],
                                 size=_TICK, extra=' font-weight="bold"'))
    f.labels(x_label, y_label)
    text = [f"{'':<12}" + "".join(f"{n:>14}" for n, _ in series)]
    text += [f"{c:<12}" + "".join(f"{value_format.format(vs[i]):>14}" for _, vs in series)
             + (f"  {notes[i]}" if i < len(notes) and notes[i] else "")
             for i, c in enumerate(categories)]
    return Figure(f.svg(title), "\n".join(text), width=width, height=height)


def timeline_plot(rows: Sequence[tuple[str, str]], points: Sequence[tuple[float, int]], *,
                  spans: Sequence[Span] = (), x_label: str = "time", title: str = "",
                  width: int = 720, row_height: int = 30) -> Figure:
    """Events on a time axis: *rows* ``(label, colour)``, *points* ``(time, row)`` drawn
    as ticks in their row, *spans* shaded behind them (the first one's label in the
    legend, each one's in its tooltip)."""
    times = [t for t, _ in points] + [s.start for s in spans] + [s.end for s in spans]
    xt = nice_ticks(min(times, default=0.0), max(times, default=1.0), 6)
    left = 16 + max((_width(r, _LABEL) for r, _ in rows), default=0)
    right = width - 16
    top = 10 + (22 if title else 0) + (20 if spans else 0)
    bottom = top + row_height * len(rows)
    height = bottom + 44
    px = lambda t: left + (t - xt[0]) / ((xt[-1] - xt[0]) or 1) * (right - left)  # noqa: E731
    parts = [_text(left, 18, title, size=13, anchor="start", extra=' font-weight="bold"')] \
        if title else []
    if spans:
        parts.append(f'<rect x="{left:.1f}" y="{top - 22:.1f}" width="14" height="12" '
                     f'fill="{_SPAN}"/>')
        parts.append(_text(left + 20, top - 12, spans[0].label, anchor="start"))
    for s in spans:
        x0 = px(s.start)
        parts.append(f'<rect class="sfc-span" x="{x0:.1f}" y="{top:.1f}" '
                     f'width="{max(px(s.end) - x0, 2):.1f}" height="{bottom - top:.1f}" '
                     f'fill="{_SPAN}"><title>{html.escape(s.label)}: {s.start:.4g} .. '
                     f"{s.end:.4g}</title></rect>")
    for i, (label, _) in enumerate(rows):
        cy = top + row_height * (i + 0.5)
        parts.append(_text(left - 8, cy + 4, label, size=_LABEL, anchor="end"))
        parts.append(f'<line x1="{left:.1f}" y1="{cy:.1f}" x2="{right:.1f}" y2="{cy:.1f}" '
                     f'stroke="{_GRID}"/>')
    for t, i in points:
        cy = top + row_height * (i + 0.5)
        parts.append(f'<rect class="sfc-event" x="{px(t) - 1.5:.1f}" y="{cy - 9:.1f}" '
                     f'width="3" height="18" fill="{rows[i][1]}"><title>'
                     f"{html.escape(rows[i][0])} at {t:.4g}</title></rect>")
    parts.append(f'<path d="M {left:.1f} {top:.1f} V {bottom:.1f} H {right:.1f}" '
                 f'fill="none" stroke="{_INK}"/>')
    parts += [_text(px(v), bottom + 16, _fmt(v)) for v in xt]
    parts.append(_text((left + right) / 2, height - 8, x_label, size=_LABEL))
    counts = [sum(1 for _, i in points if i == k) for k in range(len(rows))]
    text = [f"{label}: {n} events" for (label, _), n in zip(rows, counts)]
    text += [f"{s.label or 'span'}: {s.start:.4g} .. {s.end:.4g}" for s in spans]
    return Figure(_svg(width, height, title, parts), "\n".join(text), width=width,
                  height=height)
