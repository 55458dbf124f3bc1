"""Geometry of a test's LLR chart and gauge, drawn as SVG by the template and redrawn by the page's
script from the live JSON (the same numbers): no drawing code is duplicated in JavaScript.

Pure: numbers in, coordinates out.

>>> chart = llr_chart([0.5, 1.0], -2.94, 2.94)
>>> chart["points"].split()[0]  # the start: LLR 0, halfway between symmetric bounds
'44.0,93.0'
>>> llr_gauge(0.0, -2.94, 2.94)["marker_x"]
50.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 26
#: a chart of more pairs than this is thinned to this many points (the last one always kept)
MAX_POINTS = 400


def _nice_step(span: float, count: int = 4) -> float:
    raw = max(span, 1e-9) / count
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


def llr_chart(values: Sequence[float], lower: float, upper: float) -> dict:
    """The LLR after each counted pair (oldest first), from 0 before the first, between Wald's bounds.

    Returns the polyline ``points``, the y of the ``lower``/``upper`` bound lines and of 0, and
    axis ticks; the y range always shows both bounds.
    """
    series = [0.0, *(float(v) for v in values)]
    low = min(lower, *series)
    high = max(upper, *series)
    pad = (high - low) * 0.06
    low, high = low - pad, high + pad
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    count = len(series) - 1

    def x(i: int) -> float:
        return round(LEFT + plot_w * (i / count if count else 0.0), 1)

    def y(v: float) -> float:
        return round(TOP + plot_h * (high - v) / (high - low), 1)

    step = max(1, math.ceil(len(series) / MAX_POINTS))
    kept = list(range(0, len(series), step))
    if kept[-1] != len(series) - 1:
        kept.append(len(series) - 1)
    tick = _nice_step(high - low)
    y_ticks = []
    value = math.ceil(low / tick) * tick
    while value <= high:
        y_ticks.append({"y": y(value), "label": f"{value:g}"})
        value = round(value + tick, 10)
    x_step = max(1, math.ceil(count / 6)) if count else 1
    x_ticks = [{"x": x(i), "label": str(i)} for i in range(0, count + 1, x_step)]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
        "points": " ".join(f"{x(i)},{y(series[i])}" for i in kept),
        "last_x": x(count),
        "last_y": y(series[-1]),
        "lower_y": y(lower),
        "upper_y": y(upper),
        "zero_y": y(0.0),
        "y_ticks": y_ticks,
        "x_ticks": x_ticks,
    }


def llr_gauge(value: float, lower: float, upper: float) -> dict:
    """Where the LLR stands between the bounds, in percent of the gauge's width (clamped to 0..100)."""
    share = (value - lower) / (upper - lower)
    return {"marker_x": round(100 * min(max(share, 0.0), 1.0), 1), "zero_x": round(100 * -lower / (upper - lower), 1)}
