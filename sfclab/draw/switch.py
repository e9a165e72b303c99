"""Pictures of what the compiler decided about the switch, as SVG.

* :func:`pipelines_svg`: FlexMesh's candidate pipelines one above the other (naive,
  MA-FSA, optimal), each a row of NF slots, and under it the pass in which each
  service path runs each slot (counted from 0, as a packet's timeline counts its
  passes: 1 or more is after a recirculation);
* :func:`passes_svg`: one service path's FSM plan: a row per pass over the
  pipeline's slots, the NFs it runs numbered in order, the bitmap of each pass and
  the recirculation between passes;
* :func:`placement_svg`: Dejavu's NFs on the pipelets of a multi-pipe switch
  (pipes as rows, ingress | traffic manager | egress), how full each pipelet is,
  and one service path's route: its NFs numbered, the pipelets it visits and what
  each move costs (a recirculation is red);
* :func:`placement_figure` (naive and Dejavu's placement side by side) and
  :func:`throughput_figure` (§4's throughput model, the placed paths marked) are
  :class:`~sfclab.plots.Figure` objects a notebook shows.

NF colours and shapes are :mod:`sfclab.draw.style`'s, as in the graphs of :mod:`.chains`.

>>> import sfclab
>>> c = sfclab.compile("chain f: l3fwd -> firewall -> nat\\nchain r: l3fwd -> nat -> firewall",
...                    pipeline="naive")
>>> pic = passes_svg(c.fsm, c.fsm.paths[1], c.catalog)
>>> pic.count('class="sfc-pass"'), "recirculate" in pic
(2, True)
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from .chains import nf_color
from ..nfinfo import NFCatalog
from ..passes.common import embed
from ..passes.placement import (CoreStages, Pipelet, Placement, PlacementResult,
                                recirculation_throughput, route_of)
from .plots import FONT, Figure, Mark, Series, line_plot

__all__ = ["pipelines_svg", "passes_svg", "placement_svg", "placement_figure",
           "throughput_figure", "runs", "PASS_COLORS", "RATIOS"]

#: The colour of a slot run in pass 0, 1, 2 and later.
PASS_COLORS = ("#2e7d32", "#ef6c00", "#c62828")
_RECIRC = "#c62828"
_CHAR = 6.6                    # width of a 11-12 px sans-serif character, roughly
_ROW, _PAD, _BOX = 26, 12, 70


def _esc(s: object) -> str:
    return html.escape(str(s))


def _text(x: float, y: float, s: str, *, size: int = 12, anchor: str = "start",
          color: str = "currentColor", bold: bool = False) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{color}"' + (' font-weight="bold"' if bold else "") + f">{_esc(s)}</text>")


def _chip(x: float, y: float, w: float, label: str, color: str, *, h: float = 22,
          faded: bool = False, tip: str = "", cls: str = "sfc-chip", shift: float = 0) -> str:
    """An NF as a coloured rounded box with its name (*shift*: the name moved right, to
    leave room for a badge)."""
    fade = ' opacity="0.35"' if faded else ""
    return (f'<g class="{cls}"{fade}><title>{_esc(tip or label)}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h}" rx="5" fill="{color}" '
            f'stroke="#333"/>' + _text(x + (w + shift) / 2, y + h / 2 + 4, label,
                                       anchor="middle", color="#111") + "</g>")


def _badge(x: float, y: float, n: int | str, color: str, *, r: float = 9) -> str:
    return (f'<g class="sfc-badge"><circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{color}"/>'
            + _text(x, y + 4, str(n), size=11, anchor="middle", color="#fff", bold=True)
            + "</g>")


def _arrow(color: str) -> str:
    return (f'<marker id="sfc-d-{color[1:]}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
            f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{color}"/></marker>')


def _svg(width: float, height: float, parts: Sequence[str], *, title: str = "",
         cls: str = "sfc-diagram") -> str:
    markers = "".join(_arrow(c) for c in ("#777777", _RECIRC))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" style="{FONT}" '
            f'role="img">' + (f"<title>{_esc(title)}</title>" if title else "")
            + f"<defs>{markers}</defs>" + "".join(parts) + "</svg>")


def _label_width(labels: Sequence[str], size: float = _CHAR) -> float:
    return max((len(s) for s in labels), default=0) * size


def _pass_color(k: int) -> str:
    return PASS_COLORS[min(k, len(PASS_COLORS) - 1)]


def runs(ns: Sequence[int]) -> str:
    """Numbers as people write them: ``1``, ``1,3``, ``1–3``.

    >>> runs([1]), runs([3, 1]), runs([1, 2, 3]), runs([1, 2, 4])
    ('1', '1,3', '1–3', '1,2,4')
    """
    ns = sorted(set(ns))
    if len(ns) > 2 and ns[-1] - ns[0] == len(ns) - 1:
        return f"{ns[0]}–{ns[-1]}"
    return ",".join(map(str, ns))


def _pill(x: float, y: float, label: str, color: str, *, r: float = 9) -> str:
    """A badge (a number in a coloured circle), widened for a label like ``1–3``."""
    if len(label) == 1:
        return _badge(x, y, label, color, r=r)
    w = len(label) * 7 + 8
    return (f'<g class="sfc-badge"><rect x="{x - w / 2:.1f}" y="{y - r:.1f}" width="{w}" '
            f'height="{2 * r}" rx="{r}" fill="{color}"/>'
            + _text(x, y + 4, label, size=11, anchor="middle", color="#fff", bold=True) + "</g>")


# -- pipelines ------------------------------------------------------------------------------

def pipelines_svg(pr: Any, paths: Sequence[Any], catalog: NFCatalog | None = None, *,
                  max_paths: int = 8) -> str:
    """The naive, MA-FSA and optimal pipelines (of a :class:`~sfclab.passes.pipeline.
    PipelineResult`) one above the other; under each, per service path (distinct NF
    sequences, the ones whose passes differ first), the pass in which it runs each slot."""
    cands = [("naive", pr.naive), ("MA-FSA", pr.mafsa), ("optimal", pr.optimal)]
    seen: dict[tuple[str, ...], list[str]] = {}
    for p in paths:
        seen.setdefault(tuple(p.nfs), []).append(p.id)
    rows = []
    for nfs, ids in seen.items():
        passes = [embed(pl.slots, nfs) if nfs else [] for _, pl in cands]
        worst = max((pl[-1][0] for pl in passes if pl), default=0)
        rows.append((worst, ids[0] + (f" +{len(ids) - 1}" if len(ids) > 1 else ""), passes))
    rows.sort(key=lambda r: -r[0])
    hidden = max(len(rows) - max_paths, 0)
    rows = rows[:max_paths]
    cell = max(64.0, _label_width([s for _, pl in cands for s in pl.slots]) + 16)
    left = max(110.0, _label_width([r[1] for r in rows]) + 24)
    width = left + cell * max(len(pl.slots) for _, pl in cands) + _PAD
    parts, y = [], 8.0
    for k, (name, pl) in enumerate(cands):
        r = pl.report
        star = " ★ chosen" if pl.method == pr.chosen.method else ""
        parts.append(_text(_PAD, y + 14, f"{name}{star}: {r.slots} slots, worst path "
                           f"{r.worst_passes} pass{'es' * (r.worst_passes != 1)}, "
                           f"{r.weighted_recirculations:.3g} weighted recirculations",
                           bold=bool(star)))
        y += 22
        parts.append(_text(left - 8, y + 15, "slots", size=11, anchor="end"))
        counts: dict[str, int] = {}
        for nf in pl.slots:
            counts[nf] = counts.get(nf, 0) + 1
        for i, nf in enumerate(pl.slots):
            dup = counts[nf] > 1
            parts.append(_chip(left + i * cell + 2, y, cell - 4, nf, nf_color(catalog, nf),
                               tip=f"slot {i}: {nf}" + (" (duplicated)" if dup else "")))
        y += 26
        for _, label, passes in rows:
            per_slot: dict[int, list[int]] = {}
            for ps, slot in passes[k]:
                per_slot.setdefault(slot, []).append(ps)
            parts.append('<g class="sfc-path-row">' + _text(left - 8, y + 14, label, size=11,
                                                             anchor="end"))
            for slot, ps in sorted(per_slot.items()):
                parts.append(_pill(left + slot * cell + cell / 2, y + 10, runs(ps),
                                   _pass_color(max(ps))))
            parts.append("</g>")
            y += 22
        y += 10
    if hidden:
        parts.append(_text(_PAD, y + 10, f"… and {hidden} more service paths", size=11))
        y += 18
    legend = ("numbers: the pass in which a path runs the slot, from 0 as in a packet's "
              "timeline; 1 or more: after a recirculation")
    parts.append(_text(_PAD, y + 10, legend, size=11))
    width = max(width, 2 * _PAD + len(legend) * 6.0)
    return _svg(width, y + 20, parts, title="pipelines")


# -- the FSM's passes -----------------------------------------------------------------------

def passes_svg(plan: Any, f: Any, catalog: NFCatalog | None = None) -> str:
    """One service path's passes (a :class:`~sfclab.passes.fsm.PathFSM` of *plan*): a row
    per pass over the slots, the NFs it runs numbered in run order, the pass's state and
    bitmap on the left, the recirculation to the next pass on the right."""
    slots = plan.slots
    cell = max(64.0, _label_width([f"{i}: {nf}" for i, nf in enumerate(slots)]) + 34)
    heads = [f"pass {k}  {bin(s.bitmap)}" for k, s in enumerate(f.states)]
    left = _label_width([f"pass 10  0b{'1' * len(slots)}"], 6.2) + 20   # the same for every path
    width = left + cell * len(slots) + 120
    parts = [_text(left - 8, 18, "slots", size=11, anchor="end")]
    for i, nf in enumerate(slots):
        parts.append(_chip(left + i * cell + 2, 4, cell - 4, f"{i}: {nf}", nf_color(catalog, nf),
                           tip=f"slot {i}: {nf} (bitmap bit {i})"))
    order = {}
    for n, (ps, slot) in enumerate(f.placement):
        order[(ps, slot)] = (n + 1, f.path.nodes[n])
    y = 36.0
    for k, s in enumerate(f.states):
        last = k == len(f.states) - 1
        parts.append('<g class="sfc-pass">')
        parts.append(_text(left - 8, y + 15, heads[k], size=11, anchor="end"))
        parts.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{cell * len(slots):.1f}" '
                     f'height="{_ROW - 2}" fill="#8881" stroke="#8884"/>')
        for i, nf in enumerate(slots):
            hit = order.get((s.state, i))
            if hit is not None:
                parts.append(_chip(left + i * cell + 2, y + 1, cell - 4, hit[1],
                                   nf_color(catalog, nf), h=_ROW - 4, shift=16,
                                   tip=f"pass {k}: runs {hit[1]} (NF {hit[0]} of the path)"))
                parts.append(_badge(left + i * cell + 12, y + _ROW / 2 - 1, hit[0],
                                    _pass_color(k), r=8))
        end = left + cell * len(slots)
        if not last:
            parts.append(f'<path class="sfc-recirculate" d="M {end + 4:.1f} {y + 12:.1f} '
                         f'C {end + 40:.1f} {y + 12:.1f} {end + 40:.1f} {y + _ROW + 14:.1f} '
                         f'{end + 4:.1f} {y + _ROW + 14:.1f}" fill="none" stroke="{_RECIRC}" '
                         f'stroke-width="2" stroke-dasharray="5 3" '
                         f'marker-end="url(#sfc-d-{_RECIRC[1:]})"/>')
            counter = f" (counter {f.states[k + 1].counter})" if f.states[k + 1].counter else ""
            parts.append(_text(end + 44, y + _ROW + 4, "recirculate" + counter, size=11,
                               color=_RECIRC))
        else:
            ending = f.path.nodes[-1] if f.path.nodes else "output"
            end_label = ending if ending in ("drop", "cpu", "output") else "output"
            parts.append(_text(end + (52 if k else 8), y + 16, f"→ {end_label}", size=11))
        parts.append("</g>")
        y += _ROW + 6
    return _svg(width, y + 4, parts, title=f"passes of {f.path.id}")


# -- placement ------------------------------------------------------------------------------

def _chips_width(nfs: Sequence[str]) -> float:
    return sum(len(n) * _CHAR + 18 for n in nfs) + 4 * max(len(nfs) - 1, 0)


def placement_svg(placement: Placement, catalog: NFCatalog | None = None, *, stages: int,
                  path: Any = None, entry_pipe: int = 0, exit_pipe: int | None = 0,
                  title: str = "", reserved: CoreStages = CoreStages()) -> str:
    """*placement*'s NFs on the pipelets (pipes as rows: ingress, traffic manager, egress),
    each pipelet's stages used (by its NFs, and by sfclab's core: *reserved*); with *path*
    (a service path), its NFs numbered and its route below: the pipelets it runs NFs on and
    what each move costs."""
    cells = dict(placement.pipelets)
    pipes = sorted({pl.pipe for pl in cells})
    cost_of = {nf: _stages(catalog, nf) for nfs in cells.values() for nf in nfs}
    box = {g: max(150.0, max((_chips_width(n) for pl, n in cells.items() if pl.gress == g),
                             default=0) + 20) for g in ("ingress", "egress")}
    left, tm = 70.0, 56.0
    xs = {"ingress": left, "egress": left + box["ingress"] + tm}
    width = xs["egress"] + box["egress"] + _PAD
    on_path = list(path.nfs) if path is not None else []
    # the instance each of the path's NFs runs on (an NF placed twice: the route's one)
    chosen = route_of(on_path, placement, pipes=len(pipes), stages=stages,
                      entry_pipe=entry_pipe, exit_pipe=exit_pipe)[0] if on_path else ()
    number: dict[tuple[Pipelet, int], list[int]] = {}
    for i, at in enumerate(chosen):
        number.setdefault(at, []).append(i + 1)
    copies = placement.replicas()
    parts, y = [], 8.0
    if title:
        parts.append(_text(_PAD, y + 14, title, size=13, bold=True))
        y += 24
    for g in ("ingress", "egress"):
        parts.append(_text(xs[g] + box[g] / 2, y + 12, g, size=11, anchor="middle"))
    parts.append(_text(xs["egress"] - tm / 2, y + 12, "TM", size=11, anchor="middle"))
    y += 18
    for p in pipes:
        parts.append(_text(left - 10, y + 36, f"pipe {p}", anchor="end", bold=True))
        for gress in ("ingress", "egress"):
            pl = Pipelet(p, gress)
            x, bw = xs[gress], box[gress]
            nfs = cells.get(pl, ())
            # NFs side by side share their stages: a group takes its largest NF's
            used = sum(max(cost_of[n] for n in g) for g in placement.groups_of(pl) if g)
            core = reserved.ingress if gress == "ingress" else reserved.egress
            of = f"{used} + core {core} of {stages}" if core else f"{used} of {stages}"
            parts.append(f'<g class="sfc-pipelet" data-pipelet="{pl}"><title>{pl}: '
                         f'{_esc(", ".join(nfs) or "no NFs")}; {of} stages</title>'
                         f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" height="{_BOX}" rx="6" '
                         f'fill="none" stroke="#8888"/></g>')
            cx = x + 10
            for k, nf in enumerate(nfs):
                w = len(nf) * _CHAR + 18
                faded = bool(on_path) and (pl, k) not in number
                copy = (f" (a replica: {nf} runs in {copies[nf]} places, each path in the "
                        f"one on its route)" if nf in copies else "")
                parts.append(_chip(cx, y + 20, w, nf, nf_color(catalog, nf), faded=faded,
                                   tip=f"{nf}: {cost_of[nf]} stage(s) on {pl}{copy}"))
                if (pl, k) in number:
                    parts.append(_pill(cx + w / 2, y + 11, runs(number[pl, k]), "#1976d2",
                                       r=8))
                cx += w + 4
            gauge = bw - 20
            share = (used + core) / stages if stages else 0
            parts.append(f'<rect x="{x + 10:.1f}" y="{y + 47:.1f}" width="{gauge:.1f}" '
                         f'height="4" fill="#8883"/><rect x="{x + 10:.1f}" y="{y + 47:.1f}" '
                         f'width="{gauge * min(share, 1):.1f}" height="4" fill="#4e79a7"/>')
            parts.append(_text(x + 10, y + 63, f"{pl} · {of} stages", size=11,
                               color="#888"))
        y += _BOX + 10
    if path is not None:
        y, right = _route(parts, placement, on_path, y, stages=stages, pipes=len(pipes),
                          entry_pipe=entry_pipe, exit_pipe=exit_pipe, catalog=catalog,
                          label=path.id)
        width = max(width, right)
    return _svg(width, y + 6, parts, title=title or "placement")


def _route(parts: list, placement: Placement, nfs: Sequence[str], y: float, *, stages: int,
           pipes: int, entry_pipe: int, exit_pipe: int | None, catalog, label: str
           ) -> tuple[float, float]:
    """The route strip: in → pipelet [NFs] → (TM or ↻ k) → … → out; returns the y
    below it and its width."""
    chosen, costs = route_of(nfs, placement, pipes=pipes, stages=stages,
                             entry_pipe=entry_pipe, exit_pipe=exit_pipe)
    total = sum(costs)
    parts.append(_text(_PAD, y + 14, f"route of {label}: {total} recirculation"
                       f"{'s' * (total != 1)}", bold=True))
    y += 34
    x = _PAD
    groups: list[tuple[Pipelet | None, list[str], int]] = []   # pipelet, NFs, cost into it
    for i, nf in enumerate(nfs):
        pl = chosen[i][0]
        if groups and groups[-1][0] == pl and costs[i] == 0:
            groups[-1][1].append(nf)
        else:
            groups.append((pl, [nf], costs[i]))
    groups.append((None, [], costs[-1]))
    parts.append(_text(x, y + 16, f"in (I{entry_pipe})", size=11))
    x += 54
    for pl, group, cost in groups:
        color = _RECIRC if cost else "#777777"
        step = 74 if cost else 34
        parts.append(f'<path class="{"sfc-recirculate" if cost else "sfc-move"}" '
                     f'd="M {x:.1f} {y + 12:.1f} H {x + step - 6:.1f}" stroke="{color}" '
                     f'stroke-width="2"' + (' stroke-dasharray="5 3"' if cost else "")
                     + f' marker-end="url(#sfc-d-{color[1:]})"/>')
        if cost:
            parts.append(_text(x + step / 2 - 3, y + 4, f"↻ {cost}", size=11, anchor="middle",
                               color=_RECIRC, bold=True))
        x += step
        if pl is None:
            parts.append(_text(x, y + 16, "out" + (f" (E{exit_pipe})" if exit_pipe is not None
                                                    else ""), size=11))
            x += 60
            break
        w = _chips_width(group) + 16
        parts.append(f'<rect x="{x:.1f}" y="{y - 4:.1f}" width="{w:.1f}" height="32" rx="6" '
                     f'fill="none" stroke="#8888"/>')
        parts.append(_text(x + 4, y - 7, str(pl), size=10, color="#888"))
        cx = x + 8
        for nf in group:
            wc = len(nf) * _CHAR + 18
            parts.append(_chip(cx, y + 1, wc, nf, nf_color(catalog, nf)))
            cx += wc + 4
        x += w + 4
    return y + 36, x + _PAD


def _stages(catalog: NFCatalog | None, nf: str) -> int:
    info = catalog.get(nf.split("#")[0]) if catalog is not None else None
    return info.stages if info is not None else 1


def placement_figure(result: PlacementResult, catalog: NFCatalog | None = None, *,
                     path: Any = None, entry_pipe: int = 0, exit_pipe: int | None = 0) -> Figure:
    """The naive placement and Dejavu's (the best found) side by side, with *path*'s route
    on each (Dejavu Fig. 6)."""
    pics = []
    for name, pl in (("naive", result.naive), ("Dejavu", result.best)):
        k = dict(pl.recirculations).get(path.id) if path is not None else None
        head = f"{name}: {pl.weighted_recirculations:.3g} weighted recirculations" \
            if k is None else f"{name}: {k} recirculation{'s' * (k != 1)}"
        pics.append(placement_svg(pl, catalog, stages=result.stages, path=path, title=head,
                                  entry_pipe=entry_pipe, exit_pipe=exit_pipe,
                                  reserved=result.reserved))
    svg, width, height = _side_by_side(pics)
    text = "\n".join(str(p) for p in (result.naive, result.best))
    return Figure(svg, text, width=width, height=height)


def _side_by_side(svgs: Sequence[str], *, gap: float = 24, max_width: float = 1000
                  ) -> tuple[str, float, float]:
    """Several ``<svg>`` pictures in one: side by side when they fit in *max_width*,
    else one above the other."""
    import re

    sizes = [tuple(map(float, re.search(r'width="([\d.]+)" height="([\d.]+)"', s).groups()))
             for s in svgs]
    across = sum(w for w, _ in sizes) + gap * (len(sizes) - 1) <= max_width
    parts, x, y = [], 0.0, 0.0
    for s, (w, h) in zip(svgs, sizes):
        parts.append(s.replace("<svg ", f'<svg x="{x:.0f}" y="{y:.0f}" ', 1))
        x, y = (x + w + gap, y) if across else (x, y + h + gap)
    width = (x - gap) if across else max(w for w, _ in sizes)
    height = max(h for _, h in sizes) if across else y - gap
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sfc-diagram" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img">'
            + "".join(parts) + "</svg>", width, height)


# -- throughput -----------------------------------------------------------------------------

#: Loopback ports per external port drawn as curves (Dejavu §4: one per external port).
RATIOS = ((1 / 3, "1 loopback port per 3 external"), (1.0, "1 loopback port per external"),
          (3.0, "3 loopback ports per external"))


def throughput_figure(result: PlacementResult | None = None, *, max_recirculations: int = 5,
                      title: str = "Throughput after k recirculations (Dejavu §4)") -> Figure:
    """§4's model: the share of the offered rate T a path keeps after k recirculations,
    for a few shares of loopback ports; with *result*, its service paths marked at their
    recirculation counts (Dejavu's placement; the naive one's in grey where it differs)."""
    ratio = 1 / result.external_share - 1 if result is not None else 1.0
    ks = range(0, max_recirculations + 1)
    series = [Series(f"{name}{' (this switch)' if abs(r - ratio) < 1e-9 else ''}",
                     tuple((k, recirculation_throughput(k, r)) for k in ks),
                     dash="" if abs(r - ratio) < 1e-9 else "6 4")
              for r, name in RATIOS]
    if result is not None and all(abs(r - ratio) > 1e-9 for r, _ in RATIOS):
        series.append(Series(f"{ratio:.3g} loopback per external (this switch)",
                             tuple((k, recirculation_throughput(k, ratio)) for k in ks)))
    marks = []
    if result is not None:
        placed = {k for _, k in result.best.recirculations}
        for name, pl, color in (("Dejavu", result.best, "#d62728"),
                                ("naive", result.naive, "#777777")):
            by_k: dict[int, list[str]] = {}
            for pid, k in pl.recirculations:
                by_k.setdefault(k, []).append(pid)
            for k, ids in sorted(by_k.items()):
                if name == "naive" and k in placed:
                    continue                     # on a point Dejavu's paths mark already
                shown = ", ".join(ids[:2]) + (f" +{len(ids) - 2}" if len(ids) > 2 else "")
                marks.append(Mark(min(k, max_recirculations),
                                  recirculation_throughput(k, ratio), f"{name}: {shown}",
                                  color=color, tip=f"{name}: {', '.join(ids)} — {k} "
                                  f"recirculation(s), {recirculation_throughput(k, ratio):.2f} T"))
    return line_plot(series, marks=marks, x_label="recirculations k",
                     y_label="throughput (share of T)", title=title, x_ticks=list(ks),
                     y_range=(0, 1), y_format="{:.2f}")
