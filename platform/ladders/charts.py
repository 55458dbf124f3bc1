"""Geometry of the rating chart, drawn as inline SVG by the template: no JavaScript, no CDN.

Pure: numbers in, coordinates out.

    chart = rating_chart([Decimal("1516.00"), Decimal("1530.50")])
    chart.points  # "48.0,..." one x,y per match, the first at START
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from .ratings import START

WIDTH, HEIGHT = 640, 240
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
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    bottom_edge: int = HEIGHT - BOTTOM


def _nice_step(span: float, count: int = 4) -> float:
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


def rating_chart(values: Sequence[Decimal], *, labels: Sequence[str] | None = None) -> Chart | None:
    """The chart of a rating after each match (oldest first), starting from START; None when empty."""
    if not values:
        return None
    series = [float(START), *(float(v) for v in values)]
    low, high = min(series), max(series)
    if high - low < 40:  # a flat line still gets a readable scale
        middle = (high + low) / 2
        low, high = middle - 20, middle + 20
    step = _nice_step(high - low)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return round(LEFT + plot_w * i / (len(series) - 1), 1)

    def y(v: float) -> float:
        return round(TOP + plot_h * (high - v) / (high - low), 1)

    tips = ["start", *(labels or [f"match {i}" for i in range(1, len(series))])]
    dots = [(x(i), y(v), f"{tips[i]}: {v:.2f}") for i, v in enumerate(series)]
    y_ticks = []
    tick = low
    while tick <= high + step / 2:
        y_ticks.append(Tick(y(tick), f"{tick:.0f}"))
        tick += step
    matches = len(series) - 1
    x_step = max(1, math.ceil(matches / 6))
    x_ticks = [Tick(x(i), str(i)) for i in range(0, matches + 1, x_step)]
    start = float(START)
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        points=" ".join(f"{px},{py}" for px, py, _ in dots),
        dots=dots if matches <= 60 else [],
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        start_y=y(start) if low <= start <= high else None,
    )
