"""Charts as inline SVG, drawn on the server: they work without JavaScript and print well.

Every chart is drawn twice, once for a laptop (``chart-wide``, 720 px of viewBox) and once for a
phone (``chart-narrow``, 340 px, shown below 46rem by the style sheet), so its text stays at
12 px on screen instead of shrinking with the drawing. Each layout places its own labels: tick
labels are thinned until they do not touch, and point labels try eight places around their
dot, falling back to the point's rank (``#3``, the table's ``#`` column) where the name does not
fit, so no label covers another or a dot.

Every chart is an ``<svg role="img">`` with a title and a description for screen readers; the
page shows the same numbers in a table next to it. Colours come from CSS classes (``c0``..``c9``,
``rent``, ``own``, ``pareto``), so the style sheet controls contrast.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import count, pairwise

from markupsafe import Markup, escape

_ids = count(1)

Fmt = Callable[[float], str]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@dataclass(frozen=True)
class Frame:
    """One layout: viewBox size and the least margins around the plot, in px at scale 1."""

    name: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    font: float = 12.0  # the size svg.chart text is drawn at (style.css says the same)
    max_ticks: int = 7


WIDE = Frame("wide", 720, 320, 48, 40, 18, 48)
NARROW = Frame("narrow", 340, 300, 34, 14, 18, 48, max_ticks=5)
FRAMES = (WIDE, NARROW)
# Glyph advances at weight 600 as a share of the font size, measured with getBBox() in Debian's
# Chromium (system-ui falls back to DejaVu Sans, among the widest sans fonts): '#' 0.83, digits
# up to 0.70, lower-case labels 0.60-0.69, spaces 0.32; rounded up so estimates err wide.
EM_HASH, EM_DIGIT, EM_SPACE, EM_OTHER = 0.85, 0.72, 0.34, 0.69


def _f(x: float) -> str:
    return f"{x:.1f}"


@functools.lru_cache(maxsize=4096)
def text_width(text: str, font: float) -> float:
    """An upper estimate of a label's drawn width (the layout only needs to avoid overlaps).
    Kept per (text, font): placing a chart's labels tries each text at every spot, which
    measured it ~19,000 times for an LLM advisor page's scatter (a quarter of the page)."""
    return font * sum(EM_HASH if c == "#" else EM_DIGIT if c.isdigit() or c.isupper()
                      else EM_SPACE if c.isspace() else EM_OTHER for c in text)


def _box(x: float, y: float, text: str, anchor: str, font: float) -> Box:
    """The box of a text drawn with its baseline at ``y``."""
    w = text_width(text, font)
    x0 = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
    return (x0, y - 0.95 * font, x0 + w, y + 0.25 * font)  # measured: -0.94, +0.22


def _overlaps(a: Box, b: Box, gap: float = 2.0) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1]
                or b[3] + gap <= a[1])


def _clear(a: Box, boxes: Sequence[Box], gap: float = 2.0) -> bool:
    """``not any(_overlaps(a, b, gap) for b in boxes)``, the same sums in one loop (placing a
    chart's labels asks it ~150,000 times of an LLM advisor page's scatter)."""
    a0, a1, a2, a3 = a[0], a[1], a[2] + gap, a[3] + gap
    for b in boxes:
        if not (a2 <= b[0] or b[2] + gap <= a0 or a3 <= b[1] or b[3] + gap <= a1):
            return False
    return True


def _inside(b: Box, area: Box) -> bool:
    return b[0] >= area[0] and b[1] >= area[1] and b[2] <= area[2] and b[3] <= area[3]


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def log_ticks(lo: float, hi: float, mantissas: Sequence[int] = (1, 2, 5),
              every: int = 1) -> list[float]:
    """Ticks at ``mantissas`` × 10^e for every ``every``-th decade within [lo, hi]."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        if e % every:
            continue
        for m in mantissas:
            v = m * 10 ** e
            if lo <= v <= hi:
                out.append(v)
    return out


@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    a: float  # pixel of lo
    b: float  # pixel of hi
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, self.lo))
        else:
            lo, hi = self.lo, self.hi
        t = 0.0 if hi == lo else (v - lo) / (hi - lo)
        return self.a + t * (self.b - self.a)

    def tick_sets(self, most: int) -> list[list[float]]:
        """Candidate tick sets, densest first (at most ``most`` ticks each)."""
        if self.log:
            sets = [log_ticks(self.lo, self.hi, m, e)
                    for m, e in (((1, 2, 5), 1), ((1, 3), 1), ((1,), 1), ((1,), 2), ((1,), 3))]
            sets = [s for s in sets if len(s) >= 2] or [[self.lo, self.hi]]
            return [s for s in sets if len(s) <= most] or sets[-1:]
        return [nice_ticks(self.lo, self.hi, n) for n in range(most, 1, -1)]


def fit_ticks(scale: Scale, fmt: Fmt, font: float, most: int) -> list[tuple[float, str]]:
    """The densest tick set whose labels, centred on their ticks, keep 10 px apart."""
    best: list[tuple[float, str]] = []
    for ticks in scale.tick_sets(most):
        labels = [(t, "0" if t == 0 else fmt(t)) for t in ticks]
        pos = [scale(t) for t, _ in labels]
        widths = [text_width(s, font) for _, s in labels]
        if all(abs(pos[i + 1] - pos[i]) >= (widths[i] + widths[i + 1]) / 2 + 10
               for i in range(len(pos) - 1)):
            return labels
        best = labels
    return best[:1] + best[-1:] if len(best) > 1 else best


def _svg(title: str, desc: str, body: list[str], frame: Frame, height: int,
         css: str) -> str:
    n = next(_ids)
    return (f'<svg class="{css} chart-{frame.name}" viewBox="0 0 {frame.width} {height}" '
            f'role="img" aria-labelledby="chart{n}-t chart{n}-d" '
            f'xmlns="http://www.w3.org/2000/svg"><title id="chart{n}-t">{escape(title)}</title>'
            f'<desc id="chart{n}-d">{escape(desc)}</desc>{"".join(body)}</svg>')


def _both(draw: Callable[[Frame], tuple[list[str], int]], title: str, desc: str,
          css: str = "chart") -> Markup:
    """The chart in each layout; the style sheet shows the one that fits the screen."""
    out = []
    for fr in FRAMES:
        body, height = draw(fr)
        out.append(_svg(title, desc, body, fr, height, css))
    return Markup("".join(out))


def _text(x: float, y: float, text: str, anchor: str = "middle", css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return (f'<text{cls} x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}">{escape(text)}'
            f'</text>')


def _clamped(x: float, text: str, font: float, lo: float, hi: float) -> float:
    """``x`` moved so a centred label stays within [lo, hi]."""
    half = text_width(text, font) / 2
    return min(max(x, lo + half), hi - half)


def _y_room(labels: Sequence[tuple[float, str]], fr: Frame) -> int:
    """Left margin: the widest y tick label, then the rotated axis title."""
    widest = max((text_width(s, fr.font) for _, s in labels), default=0)
    return max(fr.left, math.ceil(widest + 8 + fr.font + 10))


def _axes(fr: Frame, x: Scale, y: Scale, xt: Sequence[tuple[float, str]],
          yt: Sequence[tuple[float, str]], x_label: str, y_label: str, height: int) -> list[str]:
    base = height - fr.bottom
    out = ['<g class="axis">']
    for t, s in yt:
        py = y(t)
        out.append(f'<line class="grid" x1="{_f(x.a)}" x2="{_f(x.b)}" y1="{_f(py)}" '
                   f'y2="{_f(py)}"/>' + _text(x.a - 6, py + 4, s, "end"))
    for t, s in xt:
        px = x(t)
        out.append(f'<line class="tick" x1="{_f(px)}" x2="{_f(px)}" y1="{base}" '
                   f'y2="{base + 4}"/>' + _text(_clamped(px, s, fr.font, 0, fr.width),
                                                base + 18, s))
    out.append(f'<line class="frame" x1="{_f(x.a)}" x2="{_f(x.b)}" y1="{base}" y2="{base}"/>'
               f'<line class="frame" x1="{_f(x.a)}" x2="{_f(x.a)}" y1="{fr.top}" '
               f'y2="{base}"/>')
    out.append(_text(_clamped((x.a + x.b) / 2, x_label, fr.font, 0, fr.width), height - 8,
                     x_label, css="label"))
    mid = (fr.top + base) / 2
    out.append(f'<text class="label" x="{fr.font + 2:.0f}" y="{mid:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 {fr.font + 2:.0f} {mid:.0f})">{escape(y_label)}</text>'
               '</g>')
    return out


def _y_ticks(y_lo: float, y_hi: float, fy: Fmt, fr: Frame, height: int) -> list[tuple[float, str]]:
    plot = height - fr.bottom - fr.top
    most = max(2, min(6, int(plot // (fr.font * 3))))
    ticks = nice_ticks(y_lo, y_hi, most)
    return [(t, fy(t)) for t in ticks]


# ------------------------------------------------------------------ label placement

# Where a label may go around a dot of radius r: (dx, dy of the baseline, anchor), best first.
def _spots(r: float, font: float) -> list[tuple[float, float, str]]:
    return [(r + 4, 0.35 * font, "start"), (-(r + 4), 0.35 * font, "end"),
            (0, -(r + 4), "middle"), (0, r + 2 + 0.9 * font, "middle"),
            (r + 2, -(r + 1), "start"), (r + 2, r + 1 + 0.9 * font, "start"),
            (-(r + 2), -(r + 1), "end"), (-(r + 2), r + 1 + 0.9 * font, "end"),
            (0, -(r + 4 + 1.2 * font), "middle"), (0, r + 2 + 2.1 * font, "middle")]


def place_label(px: float, py: float, r: float, texts: Sequence[str], font: float,
                taken: list[Box], area: Box, soft: Sequence[Box] = (),
                spots: Sequence[tuple[float, float, str]] | None = None,
                ) -> tuple[float, float, str, str] | None:
    """The first text of ``texts`` (longest first) and spot around (px, py) that stays in
    ``area`` and clears every box in ``taken`` (then added to it); None if none fits.

    Boxes in ``soft`` (thin whiskers a haloed label may cross) are avoided where the text
    fits elsewhere, crossed where it does not."""
    for avoid in ([*taken, *soft], taken) if soft else (taken,):
        for text in texts:
            for dx, dy, anchor in spots or _spots(r, font):
                b = _box(px + dx, py + dy, text, anchor, font)
                if _inside(b, area) and _clear(b, avoid):
                    taken.append(b)
                    return px + dx, py + dy, anchor, text
    return None


def _along(xy: Sequence[tuple[float, float]], step: float) -> list[tuple[float, float]]:
    """Points every ``step`` px along a polyline (its vertices included)."""
    out = list(xy[:1])
    for (x0, y0), (x1, y1) in pairwise(xy):
        n = max(1, int(math.hypot(x1 - x0, y1 - y0) // step))
        out += [(x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n) for k in range(1, n + 1)]
    return out


# ------------------------------------------------------------------ stacked bar (memory)

@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    value: float


def stacked_bar(segments: Sequence[Segment], *, title: str, desc: str, fmt: Fmt,
                marks: Sequence[tuple[str, float]] = ()) -> Markup:
    """One horizontal bar split into named parts, with reference lines (GPU capacities);
    each line's label goes on the first row where it touches no other."""
    total = sum(max(s.value, 0) for s in segments)
    top = max([total, *(v for _, v in marks)]) * 1.04 or 1.0

    def draw(fr: Frame) -> tuple[list[str], int]:
        bar_y, bar_h, step = 34, 44, fr.font + 6
        x = Scale(0, top, 12, fr.width - 12)
        body, pos = [], 0.0
        for i, s in enumerate(segments):
            if s.value <= 0:
                continue
            x0, x1 = x(pos), x(pos + s.value)
            body.append(f'<rect class="c{i % 10}" x="{_f(x0)}" y="{bar_y}" '
                        f'width="{_f(max(x1 - x0, 0.5))}" height="{bar_h}"><title>'
                        f'{escape(s.label)}: {escape(fmt(s.value))}</title></rect>')
            pos += s.value
        t = fmt(total)
        tx = x(total)
        anchor = "end" if tx - text_width(t, fr.font) >= 0 else "start"
        body.append(_text(tx if anchor == "end" else 2, bar_y - 8, t, anchor, "total"))
        rows: list[list[Box]] = []
        first = bar_y + bar_h + 18
        for label, v in sorted(marks, key=lambda m: m[1]):
            px = x(v)
            lx = _clamped(px, label, fr.font, 2, fr.width - 2)
            for j in range(len(rows) + 1):
                b = _box(lx, first + step * j, label, "middle", fr.font)
                if j == len(rows):
                    rows.append([])
                if not any(_overlaps(b, o, 6) for o in rows[j]):
                    rows[j].append(b)
                    break
            ly = first + step * j
            body.append(f'<line class="mark" x1="{_f(px)}" x2="{_f(px)}" y1="{bar_y - 4}" '
                        f'y2="{_f(ly - fr.font)}"/>' + _text(lx, ly, label, css="mark-label"))
        return body, int(first + step * max(len(rows) - 1, 0) + 12)

    return _both(draw, title, desc, css="chart chart-bar")


# ------------------------------------------------------------------ cost vs time (advisor)

@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    x_low: float | None = None
    x_high: float | None = None
    pareto: bool = False
    best: bool = False
    rank: int | None = None  # its row in the table (#); by default its place in the sequence


def scatter(points: Sequence[Point], *, title: str, desc: str, x_label: str, y_label: str,
            fx: Fmt, fy: Fmt, front_label: str) -> Markup:
    """Cost (y) against time (x), time ranges as whiskers, the Pareto front as a step line.

    Every dot is labelled: its name where it fits, else its rank (``#3``); the
    recommendation first, then the Pareto front, then the rest in rank order."""
    pts = [(p.rank or i + 1, p) for i, p in enumerate(points)
           if p.x > 0 and math.isfinite(p.x) and math.isfinite(p.y)]
    if not pts:
        return _both(lambda fr: ([], fr.height), title, desc)
    xs = [v for _, p in pts for v in (p.x, p.x_low or p.x, p.x_high or p.x) if v > 0]
    lo, hi = min(xs), max(xs)
    log = hi / lo > 8
    pad = (hi - lo) * 0.08 or hi * 0.1
    x_lo, x_hi = (lo / 1.15, hi * 1.15) if log else (max(0.0, lo - pad), hi + pad)
    y_hi = max(p.y for _, p in pts) * 1.12 or 1.0

    def draw(fr: Frame) -> tuple[list[str], int]:
        height = fr.height
        yt = _y_ticks(0, y_hi, fy, fr, height)
        left = _y_room(yt, fr)
        x = Scale(x_lo, x_hi, left + 8, fr.width - fr.right, log)
        y = Scale(0, y_hi, height - fr.bottom, fr.top)
        xt = fit_ticks(x, fx, fr.font, fr.max_ticks)
        body = _axes(fr, x, y, xt, yt, x_label, y_label, height)
        front = sorted((p for _, p in pts if p.pareto), key=lambda p: p.x)
        if len(front) > 1:
            path = [f"M{_f(x(front[0].x))},{_f(y(front[0].y))}"]
            for b in front[1:]:  # the staircase: later (slower) options are cheaper
                path.append(f"H{_f(x(b.x))}V{_f(y(b.y))}")
            body.append(f'<path class="front" d="{"".join(path)}"><title>'
                        f'{escape(front_label)}</title></path>')
        radius = {id(p): 7 if p.best else 5 for _, p in pts}
        taken: list[Box] = [(x(p.x) - radius[id(p)], y(p.y) - radius[id(p)],
                             x(p.x) + radius[id(p)], y(p.y) + radius[id(p)]) for _, p in pts]
        for _, p in sorted(pts, key=lambda rp: (rp[1].pareto, rp[1].best)):
            px, py = x(p.x), y(p.y)
            if p.x_low and p.x_high and p.x_high > p.x_low:
                body.append(f'<line class="whisker" x1="{_f(x(p.x_low))}" '
                            f'x2="{_f(x(p.x_high))}" y1="{_f(py)}" y2="{_f(py)}"/>')
            cls = "pt best" if p.best else "pt pareto" if p.pareto else "pt"
            body.append(f'<circle class="{cls}" cx="{_f(px)}" cy="{_f(py)}" '
                        f'r="{radius[id(p)]}"><title>{escape(p.label)}: {escape(fx(p.x))}, '
                        f'{escape(fy(p.y))}</title></circle>')
        whiskers = [(x(p.x_low), y(p.y) - 1.5, x(p.x_high), y(p.y) + 1.5) for _, p in pts
                    if p.x_low and p.x_high and p.x_high > p.x_low]
        area = (x.a + 2, 0.0, float(fr.width), float(height - fr.bottom))
        order = sorted(pts, key=lambda rp: (not rp[1].best, not rp[1].pareto, rp[0]))
        for rank, p in order:
            spot = place_label(x(p.x), y(p.y), radius[id(p)], (p.label, f"#{rank}"), fr.font,
                               taken, area, whiskers)
            if spot is not None:
                lx, ly, anchor, text = spot
                body.append(_text(lx, ly, text, anchor, "pt-label"))
        return body, height

    return _both(draw, title, desc)


# ------------------------------------------------------------------ ranges (cost per task)

@dataclass(frozen=True)
class RangeRow:
    label: str
    low: float
    typical: float
    high: float
    highlight: bool = False


def range_bars(rows: Sequence[RangeRow], *, title: str, desc: str, fmt: Fmt,
               axis_label: str) -> Markup:
    """One horizontal low-high bar per row with a mark at the typical value. Wide: the names
    in a column on the left; narrow: each name above its bar."""
    if not rows:
        return _both(lambda fr: ([], fr.height), title, desc, "chart chart-ranges")
    x_top = max(r.high for r in rows) * 1.08 or 1.0

    def draw(fr: Frame) -> tuple[list[str], int]:
        above = fr is NARROW
        widest = max(text_width(r.label, fr.font) for r in rows)
        left = 12 if above else min(int(widest) + 16, fr.width // 3)
        row_h = 30 + (fr.font + 4 if above else 0)
        rows_end = fr.top + row_h * len(rows)
        height = int(rows_end + 46)
        x = Scale(0, x_top, left, fr.width - fr.right)
        body = ['<g class="axis">']
        for t, s in fit_ticks(x, fmt, fr.font, fr.max_ticks):
            px = x(t)
            body.append(f'<line class="grid" x1="{_f(px)}" x2="{_f(px)}" y1="{fr.top}" '
                        f'y2="{_f(rows_end)}"/>'
                        + _text(_clamped(px, s, fr.font, 0, fr.width), rows_end + 18, s))
        body.append(_text(_clamped((left + fr.width) / 2, axis_label, fr.font, 0, fr.width),
                          height - 8, axis_label, css="label") + "</g>")
        for i, r in enumerate(rows):
            top = fr.top + row_h * i
            cy = top + row_h - 15 if above else top + row_h / 2
            cls = "range best" if r.highlight else "range"
            if above:
                body.append(_text(left, top + fr.font, r.label, "start", "row-label"))
            else:
                body.append(_text(left - 8, cy + 4, r.label, "end", "row-label"))
            body.append(f'<rect class="{cls}" x="{_f(x(r.low))}" y="{_f(cy - 8)}" '
                        f'width="{_f(max(x(r.high) - x(r.low), 2))}" height="16" rx="3"><title>'
                        f'{escape(r.label)}: {escape(fmt(r.low))} – {escape(fmt(r.high))}'
                        f'</title></rect><line class="typical" x1="{_f(x(r.typical))}" '
                        f'x2="{_f(x(r.typical))}" y1="{_f(cy - 12)}" y2="{_f(cy + 12)}"/>')
        return body, height

    return _both(draw, title, desc, css="chart chart-ranges")


# ------------------------------------------------------------------ what binds (serving)

@dataclass(frozen=True)
class BindRow:
    """One serving option: the share of each limit it uses (None: that limit is not set),
    in the order of the chart's series."""

    label: str
    shares: tuple[float | None, ...]
    highlight: bool = False


def binds_chart(rows: Sequence[BindRow], series: Sequence[str], *, title: str, desc: str,
                fmt: Fmt, limit_label: str) -> Markup:
    """For each option a group of thin bars, one per limit (colours ``c0``.. in the order of
    ``series``), on a common axis of the share used, with a line at 100 %: the longest bar is
    what binds, and only it is labelled (at its end, in room kept free for it). Wide: the
    names in a column on the left; narrow: each name above its bars."""
    most = max([1.0, *(v for r in rows for v in r.shares if v is not None)])
    x_top = most * 1.05

    def draw(fr: Frame) -> tuple[list[str], int]:
        above = fr is NARROW
        widest = max([text_width(r.label, fr.font) for r in rows] or [0.0])
        left = 12 if above else min(int(widest) + 16, fr.width // 3)
        room = text_width(fmt(most), fr.font) + 8  # the binding share's label, after its bar
        bar_h, gap = 6, 2
        bars_h = len(series) * (bar_h + gap)
        row_h = bars_h + 14 + (fr.font + 6 if above else 0)
        rows_end = fr.top + fr.font + 6 + row_h * len(rows)
        height = int(rows_end + 46)
        x = Scale(0, x_top, left, fr.width - fr.right - room)
        body = ['<g class="axis">']
        for t, lab in fit_ticks(x, fmt, fr.font, fr.max_ticks):
            px = x(t)
            body.append(f'<line class="grid" x1="{_f(px)}" x2="{_f(px)}" y1="{fr.top}" '
                        f'y2="{_f(rows_end)}"/>'
                        + _text(_clamped(px, lab, fr.font, 0, fr.width), rows_end + 18, lab))
        body.append(_text(_clamped((left + fr.width) / 2, limit_label,
                                   fr.font, 0, fr.width), height - 8, limit_label, css="label")
                    + "</g>")
        px1 = x(1.0)
        body.append(f'<line class="mark" x1="{_f(px1)}" x2="{_f(px1)}" y1="{fr.top + fr.font}" '
                    f'y2="{_f(rows_end)}"/>')
        body.append(_text(_clamped(px1, fmt(1.0), fr.font, 0, fr.width), fr.top + fr.font - 2,
                          fmt(1.0), css="mark-label"))
        for i, r in enumerate(rows):
            top = fr.top + fr.font + 6 + row_h * i
            first = top + (fr.font + 6 if above else 0) + 4
            if above:
                body.append(_text(left, top + fr.font, r.label, "start", "row-label"))
            else:
                body.append(_text(left - 8, first + bars_h / 2 + 4, r.label, "end",
                                  "row-label" + (" best" if r.highlight else "")))
            shown = [v for v in r.shares if v is not None]
            binding = max(shown) if shown else None
            for j, v in enumerate(r.shares):
                if v is None:
                    continue
                y = first + j * (bar_h + gap)
                body.append(f'<rect class="c{j % 10}" x="{_f(x(0))}" y="{_f(y)}" '
                            f'width="{_f(max(x(v) - x(0), 1.5))}" height="{bar_h}"><title>'
                            f'{escape(r.label)}: {escape(series[j])} {escape(fmt(v))}'
                            f'</title></rect>')
                if v == binding:
                    body.append(_text(x(v) + 4, y + bar_h / 2 + 4, fmt(v), "start",
                                      "bind-label"))
                    binding = None  # one label per row, at the first of equal shares
        return body, height

    return _both(draw, title, desc, css="chart chart-binds")


# ------------------------------------------------------------------ lines (rent vs own, prices)

@dataclass(frozen=True)
class Series:
    name: str
    css: str
    points: Sequence[tuple[float, float]]


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    label: str


def line_chart(series: Sequence[Series], *, title: str, desc: str, x_label: str,
               y_label: str, fx: Fmt, fy: Fmt, markers: Sequence[Marker] = (),
               y_from_zero: bool = True, min_x_span: float = 1.0) -> Markup:
    """Lines over a shared x axis, with labelled markers (the break-even point); each line's
    last point is labelled with its value, so a line of one point still says what it is.

    An x range narrower than ``min_x_span`` (one snapshot) is widened around its middle.
    """
    pts = [p for s in series for p in s.points]
    if not pts:
        return _both(lambda fr: ([], fr.height), title, desc)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi - x_lo < min_x_span:
        mid = (x_lo + x_hi) / 2
        x_lo, x_hi = mid - min_x_span / 2, mid + min_x_span / 2
    y_lo = 0 if y_from_zero else min(ys) * 0.95
    y_hi = max(ys) * 1.08 if max(ys) > y_lo else y_lo + 1

    def draw(fr: Frame) -> tuple[list[str], int]:
        height = fr.height
        yt = _y_ticks(y_lo, y_hi, fy, fr, height)
        left = _y_room(yt, fr)
        x = Scale(x_lo, x_hi, left + 4, fr.width - fr.right)
        y = Scale(y_lo, y_hi, height - fr.bottom, fr.top)
        body = _axes(fr, x, y, fit_ticks(x, fx, fr.font, fr.max_ticks), yt, x_label, y_label,
                     height)
        taken: list[Box] = []
        for s in series:
            if not s.points:
                continue
            d = "M" + " L".join(f"{_f(x(a))},{_f(y(b))}" for a, b in s.points)
            body.append(f'<path class="line {s.css}" d="{d}"><title>{escape(s.name)}</title>'
                        '</path>')
            if len(s.points) <= 40:
                for a, b in s.points:
                    body.append(f'<circle class="dot {s.css}" cx="{_f(x(a))}" '
                                f'cy="{_f(y(b))}" r="{5 if len(s.points) == 1 else 3}"><title>'
                                f'{escape(s.name)}: {escape(fx(a))}, {escape(fy(b))}</title>'
                                '</circle>')
        for s in series:  # labels keep off the lines: points every 6 px along each
            xy = [(x(a), y(b)) for a, b in s.points]
            taken += [(px - 2, py - 2, px + 2, py + 2) for px, py in _along(xy, 6.0)]
        area = (float(x.a), 0.0, float(fr.width), float(height - fr.bottom))
        for m in markers:
            px, py = x(m.x), y(m.y)
            body.append(f'<line class="marker" x1="{_f(px)}" x2="{_f(px)}" y1="{fr.top}" '
                        f'y2="{height - fr.bottom}"/><circle class="marker-dot" '
                        f'cx="{_f(px)}" cy="{_f(py)}" r="6"/>')
            taken.append((px - 6, py - 6, px + 6, py + 6))
            mfont = fr.font + 1  # .marker-label is drawn at 13 px
            # beside its dot, else either side of its line, lower and lower from the top
            rows = [fr.top + mfont * k - py for k in range(1, 12)]
            along = [(dx, dy, a) for dy in rows for dx, a in ((-8, "end"), (8, "start"))]
            spot = place_label(px, py, 8, (m.label,), mfont, taken, area,
                               spots=[(-10, -12, "end"), (10, -12, "start"), *along])
            if spot is None:  # above the plot rather than lost
                spot = (_clamped(px, m.label, mfont, x.a, fr.width), fr.top + mfont,
                        "middle", m.label)
                taken.append(_box(spot[0], spot[1], m.label, "middle", mfont))
            body.append(_text(spot[0], spot[1], spot[3], spot[2], "marker-label"))
        for s in series:  # the value at each line's end
            if not s.points:
                continue
            a, b = max(s.points)
            spot = place_label(x(a), y(b), 5, (fy(b),), fr.font, taken, area)
            if spot is not None:
                body.append(_text(spot[0], spot[1], spot[3], spot[2], "end-label"))
        return body, height

    return _both(draw, title, desc)


# ------------------------------------------------------------------ price history (band)

@dataclass(frozen=True)
class Day:
    """The prices of one day across every source: lowest, median and highest."""

    x: float
    low: float
    median: float
    high: float


def day_ticks(scale: Scale, xs: Sequence[float], fmt: Fmt, font: float,
              gap: float = 10.0) -> list[tuple[float, str]]:
    """Ticks on the days that have data (never on arbitrary dates between them): the latest
    first, then each earlier day whose label keeps ``gap`` px clear of those kept."""
    kept: list[tuple[float, str]] = []
    for t in sorted(set(xs), reverse=True):
        label = fmt(t)
        half = text_width(label, font) / 2
        if all(abs(scale(t) - scale(k)) >= half + text_width(s, font) / 2 + gap
               for k, s in kept):
            kept.append((t, label))
    return sorted(kept)


def band_chart(days: Sequence[Day], lines: Sequence[Series], *, title: str, desc: str,
               x_label: str, y_label: str, fx: Fmt, fy: Fmt, low_name: str,
               median_name: str) -> Markup:
    """A shaded band from the lowest to the highest price of each day, the median as a line
    inside it, and one thin line per source with several dated prices.

    Every line is named at its end (the median and lowest lines first, then the sources);
    a name that cannot be placed clear of every other label and line is shortened to its
    value, then left out: the figure's caption and table name every line anyway."""
    days = sorted(days, key=lambda d: d.x)
    ys = [v for d in days for v in (d.low, d.high)] + [b for s in lines for _, b in s.points]
    if len(days) < 2 or not ys:
        return _both(lambda fr: ([], fr.height), title, desc, "chart chart-band")
    x_lo, x_hi = days[0].x, days[-1].x
    y_lo, y_hi = 0.0, max(ys) * 1.1

    def draw(fr: Frame) -> tuple[list[str], int]:
        height = fr.height
        yt = _y_ticks(y_lo, y_hi, fy, fr, height)
        left = _y_room(yt, fr)
        # room on the right for the end labels of the wide layout
        right = fr.right + (110 if fr is WIDE else 58)
        x = Scale(x_lo, x_hi, left + 6, fr.width - right)
        y = Scale(y_lo, y_hi, height - fr.bottom, fr.top)
        body = _axes(fr, x, y, day_ticks(x, [d.x for d in days], fx, fr.font), yt, x_label,
                     y_label, height)
        top = " L".join(f"{_f(x(d.x))},{_f(y(d.high))}" for d in days)
        bottom = " L".join(f"{_f(x(d.x))},{_f(y(d.low))}" for d in reversed(days))
        body.append(f'<path class="band" d="M{top} L{bottom} Z"><title>'
                    f'{escape(low_name)} – {escape(median_name)}</title></path>')
        named = [(median_name, "median", [(d.x, d.median) for d in days]),
                 (low_name, "lowest", [(d.x, d.low) for d in days]),
                 *((s.name, s.css, list(s.points)) for s in lines)]
        taken: list[Box] = []
        for name, css, pts in named:
            xy = [(x(a), y(b)) for a, b in sorted(pts)]
            d = "M" + " L".join(f"{_f(px)},{_f(py)}" for px, py in xy)
            body.append(f'<path class="line {css}" d="{d}"><title>{escape(name)}</title>'
                        '</path>')
            for (a, b), (px, py) in zip(sorted(pts), xy, strict=True):
                body.append(f'<circle class="dot {css}" cx="{_f(px)}" cy="{_f(py)}" r="3">'
                            f'<title>{escape(name)}: {escape(fx(a))}, {escape(fy(b))}'
                            '</title></circle>')
            taken += [(px - 3, py - 3, px + 3, py + 3) for px, py in _along(xy, 6.0)]
        area = (float(x.a), 0.0, float(fr.width), float(height - fr.bottom))
        for name, css, pts in named:
            a, b = max(pts)
            # a source's line is named, never a bare value that could be read as the median's
            texts = (f"{name} {fy(b)}", fy(b)) if css in ("median", "lowest") else (name,)
            spot = place_label(x(a), y(b), 4, texts, fr.font, taken, area)
            if spot is not None:
                body.append(_text(spot[0], spot[1], spot[3], spot[2], "end-label"))
        return body, height

    return _both(draw, title, desc, "chart chart-band")
