"""Charts as inline SVG, drawn on the server: they work without JavaScript and print well.

Every chart is an ``<svg role="img">`` with a title and a description for screen readers; the
page shows the same numbers in a table next to it. Colours come from CSS classes (``c0``..``c9``,
``rent``, ``own``, ``pareto``), so the style sheet controls contrast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import count

from markupsafe import Markup, escape

W, H = 720, 320
LEFT, RIGHT, TOP, BOTTOM = 88, 40, 16, 48
_ids = count(1)

Fmt = Callable[[float], str]


def _f(x: float) -> str:
    return f"{x:.1f}"


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


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks across decades for a log axis."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                out.append(v)
    return out or [lo, hi]


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

    def ticks(self) -> list[float]:
        return log_ticks(self.lo, self.hi) if self.log else nice_ticks(self.lo, self.hi)


def _svg(title: str, desc: str, body: list[str], width: int = W, height: int = H,
         css: str = "chart") -> Markup:
    n = next(_ids)
    return Markup(
        f'<svg class="{css}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="chart{n}-t chart{n}-d" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="chart{n}-t">{escape(title)}</title><desc id="chart{n}-d">{escape(desc)}'
        f'</desc>{"".join(body)}</svg>')


def _axes(x: Scale, y: Scale, fx: Fmt, fy: Fmt, x_label: str, y_label: str) -> list[str]:
    out = ['<g class="axis">']
    for t in y.ticks():
        py = y(t)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{_f(py)}" '
                   f'y2="{_f(py)}"/><text x="{LEFT - 6}" y="{_f(py + 4)}" '
                   f'text-anchor="end">{escape(fy(t))}</text>')
    for t in x.ticks():
        px = x(t)
        out.append(f'<line class="tick" x1="{_f(px)}" x2="{_f(px)}" y1="{H - BOTTOM}" '
                   f'y2="{H - BOTTOM + 4}"/><text x="{_f(px)}" y="{H - BOTTOM + 18}" '
                   f'text-anchor="middle">{escape(fx(t))}</text>')
    out.append(f'<line class="frame" x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" '
               f'y2="{H - BOTTOM}"/><line class="frame" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" '
               f'y2="{H - BOTTOM}"/>')
    out.append(f'<text class="label" x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" '
               f'text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text class="label" x="14" y="{(TOP + H - BOTTOM) / 2:.0f}" '
               f'text-anchor="middle" transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2:.0f})">'
               f'{escape(y_label)}</text></g>')
    return out


# ------------------------------------------------------------------ stacked bar (memory)

@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    value: float


def stacked_bar(segments: Sequence[Segment], *, title: str, desc: str, fmt: Fmt,
                marks: Sequence[tuple[str, float]] = ()) -> Markup:
    """One horizontal bar split into named parts, with reference lines (GPU capacities)."""
    height, bar_y, bar_h = 130, 34, 44
    total = sum(max(s.value, 0) for s in segments)
    top = max([total, *(v for _, v in marks)]) * 1.04 or 1.0
    x = Scale(0, top, LEFT - 60, W - RIGHT)
    body, pos = [], 0.0
    for i, s in enumerate(segments):
        if s.value <= 0:
            continue
        x0, x1 = x(pos), x(pos + s.value)
        body.append(f'<rect class="c{i % 10}" x="{_f(x0)}" y="{bar_y}" '
                    f'width="{_f(max(x1 - x0, 0.5))}" height="{bar_h}"><title>'
                    f'{escape(s.label)}: {escape(fmt(s.value))}</title></rect>')
        pos += s.value
    body.append(f'<text class="total" x="{_f(x(total))}" y="{bar_y - 8}" text-anchor="end">'
                f'{escape(fmt(total))}</text>')
    for j, (label, v) in enumerate(marks):
        px = x(v)
        ly = bar_y + bar_h + 18 + 14 * (j % 3)
        body.append(f'<line class="mark" x1="{_f(px)}" x2="{_f(px)}" y1="{bar_y - 4}" '
                    f'y2="{ly - 10}"/><text class="mark-label" x="{_f(px)}" y="{ly}" '
                    f'text-anchor="middle">{escape(label)}</text>')
    return _svg(title, desc, body, height=height, css="chart chart-bar")


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


def scatter(points: Sequence[Point], *, title: str, desc: str, x_label: str, y_label: str,
            fx: Fmt, fy: Fmt, front_label: str) -> Markup:
    """Cost (y) against time (x), time ranges as whiskers, the Pareto front as a step line."""
    pts = [p for p in points if p.x > 0 and math.isfinite(p.x) and math.isfinite(p.y)]
    if not pts:
        return _svg(title, desc, [])
    xs = [v for p in pts for v in (p.x, p.x_low or p.x, p.x_high or p.x) if v > 0]
    lo, hi = min(xs), max(xs)
    log = hi / lo > 8
    x = Scale(lo / 1.15 if log else 0, hi * 1.15 if log else hi * 1.08, LEFT + 8, W - RIGHT - 8,
              log)
    ys = [p.y for p in pts]
    y = Scale(0, max(ys) * 1.12 or 1.0, H - BOTTOM, TOP)
    body = _axes(x, y, fx, fy, x_label, y_label)
    front = sorted((p for p in pts if p.pareto), key=lambda p: p.x)
    if len(front) > 1:
        path = [f"M{_f(x(front[0].x))},{_f(y(front[0].y))}"]
        for b in front[1:]:  # the staircase: later (slower) options are cheaper
            path.append(f"H{_f(x(b.x))}V{_f(y(b.y))}")
        body.append(f'<path class="front" d="{"".join(path)}"><title>{escape(front_label)}'
                    f'</title></path>')
    labelled = sorted((p for p in pts if p.pareto or p.best), key=lambda p: p.x)
    below = {id(p) for i, p in enumerate(labelled) if i % 2}  # alternate: fewer overlaps
    for p in sorted(pts, key=lambda p: (p.pareto, p.best)):
        px, py = x(p.x), y(p.y)
        if p.x_low and p.x_high and p.x_high > p.x_low:
            body.append(f'<line class="whisker" x1="{_f(x(p.x_low))}" x2="{_f(x(p.x_high))}" '
                        f'y1="{_f(py)}" y2="{_f(py)}"/>')
        cls = "pt best" if p.best else "pt pareto" if p.pareto else "pt"
        r = 7 if p.best else 5
        body.append(f'<circle class="{cls}" cx="{_f(px)}" cy="{_f(py)}" r="{r}"><title>'
                    f'{escape(p.label)}: {escape(fx(p.x))}, {escape(fy(p.y))}</title></circle>')
        if p.pareto or p.best:
            anchor = "end" if px > W - 160 else "start"
            dx = -9 if anchor == "end" else 9
            ly = py + 18 if id(p) in below else py - 8
            body.append(f'<text class="pt-label" x="{_f(px + dx)}" y="{_f(ly)}" '
                        f'text-anchor="{anchor}">{escape(p.label)}</text>')
    return _svg(title, desc, body)


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
    """One horizontal low-high bar per row with a mark at the typical value."""
    if not rows:
        return _svg(title, desc, [])
    row_h, left = 34, 150
    height = TOP + row_h * len(rows) + 44
    x = Scale(0, max(r.high for r in rows) * 1.08 or 1.0, left, W - RIGHT - 10)
    body = ['<g class="axis">']
    for t in x.ticks():
        px = x(t)
        body.append(f'<line class="grid" x1="{_f(px)}" x2="{_f(px)}" y1="{TOP}" '
                    f'y2="{height - 40}"/><text x="{_f(px)}" y="{height - 24}" '
                    f'text-anchor="middle">{escape(fmt(t))}</text>')
    body.append(f'<text class="label" x="{(left + W) / 2:.0f}" y="{height - 6}" '
                f'text-anchor="middle">{escape(axis_label)}</text></g>')
    for i, r in enumerate(rows):
        cy = TOP + row_h * i + row_h / 2
        cls = "range best" if r.highlight else "range"
        body.append(f'<text class="row-label" x="{left - 8}" y="{_f(cy + 4)}" '
                    f'text-anchor="end">{escape(r.label)}</text>')
        body.append(f'<rect class="{cls}" x="{_f(x(r.low))}" y="{_f(cy - 8)}" '
                    f'width="{_f(max(x(r.high) - x(r.low), 2))}" height="16" rx="3"><title>'
                    f'{escape(r.label)}: {escape(fmt(r.low))} – {escape(fmt(r.high))}</title>'
                    f'</rect><line class="typical" x1="{_f(x(r.typical))}" '
                    f'x2="{_f(x(r.typical))}" y1="{_f(cy - 12)}" y2="{_f(cy + 12)}"/>')
    return _svg(title, desc, body, height=height, css="chart chart-ranges")


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
    """Lines over a shared x axis, with labelled markers (the break-even point).

    An x range narrower than ``min_x_span`` (one snapshot) is widened around its middle.
    """
    pts = [p for s in series for p in s.points]
    if not pts:
        return _svg(title, desc, [])
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi - x_lo < min_x_span:
        mid = (x_lo + x_hi) / 2
        x_lo, x_hi = mid - min_x_span / 2, mid + min_x_span / 2
    x = Scale(x_lo, x_hi, LEFT + 4, W - RIGHT)
    y_lo = 0 if y_from_zero else min(ys) * 0.95
    y_hi = max(ys) * 1.06 if max(ys) > y_lo else y_lo + 1
    y = Scale(y_lo, y_hi, H - BOTTOM, TOP)
    body = _axes(x, y, fx, fy, x_label, y_label)
    for s in series:
        if not s.points:
            continue
        d = "M" + " L".join(f"{_f(x(a))},{_f(y(b))}" for a, b in s.points)
        body.append(f'<path class="line {s.css}" d="{d}"><title>{escape(s.name)}</title></path>')
        if len(s.points) <= 40:
            for a, b in s.points:
                body.append(f'<circle class="dot {s.css}" cx="{_f(x(a))}" cy="{_f(y(b))}" '
                            f'r="3"><title>{escape(s.name)}: {escape(fx(a))}, {escape(fy(b))}'
                            f'</title></circle>')
    for m in markers:
        px, py = x(m.x), y(m.y)
        anchor = "end" if px > W * 0.7 else "start"
        dx = -10 if anchor == "end" else 10
        body.append(f'<line class="marker" x1="{_f(px)}" x2="{_f(px)}" y1="{TOP}" '
                    f'y2="{H - BOTTOM}"/><circle class="marker-dot" cx="{_f(px)}" '
                    f'cy="{_f(py)}" r="6"/><text class="marker-label" x="{_f(px + dx)}" '
                    f'y="{_f(max(py - 12, TOP + 12))}" text-anchor="{anchor}">'
                    f'{escape(m.label)}</text>')
    return _svg(title, desc, body)
