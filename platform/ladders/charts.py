"""Geometry of the rating chart, drawn as inline SVG by the template: no JavaScript, no CDN.

Pure: numbers in, coordinates out.

    chart = rating_chart([Decimal("1516.00"), Decimal("1530.50")])
    chart.points  # "48.0,..." one x,y per match, the first at START
    chart.band    # "" without intervals; with lows/highs the 95% band as an SVG polygon
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from .ratings import START

WIDTH, HEIGHT = 640, 240
#: the interval band is drawn within the line's range widened by this many points (a new version's
#: +/- 700 would otherwise flatten the line); beyond it the band is clipped at the plot's edge
BAND_REACH = 150
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Chart:
    """Everything the template draws: the line, its dots, axis ticks and the starting rating's line."""

    width: int
    height: int
    points: str  # SVG polyline "x,y x,y ..."
    dots: list[tuple[float, float, str]]  # x, y, tooltip
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    start_y: float | None  # y of START when in range
    band: str = ""  # SVG polygon "x,y ..." of the 95% interval (highs left to right, then lows back)
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    bottom_edge: int = HEIGHT - BOTTOM


def _nice_step(span: float, count: int = 4) -> float:
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


def rating_chart(
    values: Sequence[Decimal],
    *,
    labels: Sequence[str] | None = None,
    lows: Sequence[Decimal | None] | None = None,
    highs: Sequence[Decimal | None] | None = None,
    start: Decimal | None = None,
    first: int = 1,
) -> Chart | None:
    """The chart of a rating after each match (oldest first), starting from START; None when empty.

    With ``lows`` and ``highs`` (the 95% interval of each point; None where a point has none,
    as history rows from before the batch fit) the band between them is drawn behind the line.
    A window of a longer history: ``start`` is the rating before its first point and ``first``
    that point's match number (the x axis counts matches from there).
    """
    if not values:
        return None
    series = [float(START if start is None else start), *(float(v) for v in values)]
    low, high = min(series), max(series)
    band_lo = band_hi = None
    if lows is not None and highs is not None and any(v is not None for v in lows):
        band_lo = [series[0], *(float(v) if v is not None else s for v, s in zip(lows, series[1:], strict=True))]
        band_hi = [series[0], *(float(v) if v is not None else s for v, s in zip(highs, series[1:], strict=True))]
        low = max(min(band_lo), low - BAND_REACH)
        high = min(max(band_hi), high + BAND_REACH)
    if high - low < 40:  # a flat line still gets a readable scale
        middle = (high + low) / 2
        low, high = middle - 20, middle + 20
    step = _nice_step(high - low)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return round(LEFT + plot_w * i / (len(series) - 1), 1)

    def y(v: float) -> float:
        return round(TOP + plot_h * (high - min(max(v, low), high)) / (high - low), 1)

    tips = ["start" if first == 1 else "before", *(labels or [f"match {first + i}" for i in range(len(series) - 1)])]
    dots = [(x(i), y(v), f"{tips[i]}: {v:.0f}") for i, v in enumerate(series)]  # whole points, as every rating shown
    y_ticks = []
    tick = low
    while tick <= high + step / 2:
        y_ticks.append(Tick(y(tick), f"{tick:.0f}"))
        tick += step
    matches = len(series) - 1
    x_step = max(1, math.ceil(matches / 6))
    x_ticks = [Tick(x(i), str(first - 1 + i)) for i in range(0, matches + 1, x_step)]
    start = float(START)
    band = ""
    if band_lo is not None:
        upper = [f"{x(i)},{y(v)}" for i, v in enumerate(band_hi)]
        lower = [f"{x(i)},{y(v)}" for i, v in reversed(list(enumerate(band_lo)))]
        band = " ".join(upper + lower)
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        points=" ".join(f"{px},{py}" for px, py, _ in dots),
        dots=dots if matches <= 60 else [],
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        start_y=y(start) if low <= start <= high else None,
        band=band,
    )
