"""The rating chart's geometry: every point inside the plot, the start line, readable ticks."""

from __future__ import annotations

from decimal import Decimal as D

from ladders.charts import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, rating_chart


def points(chart):
    return [tuple(map(float, pair.split(","))) for pair in chart.points.split()]


def test_no_history_draws_no_chart():
    assert rating_chart([]) is None


def test_the_line_starts_at_1500_on_the_left_and_ends_on_the_right():
    chart = rating_chart([D("1516.00"), D("1530.50"), D("1490.25")])
    xy = points(chart)
    assert len(xy) == 4 and xy[0][0] == LEFT and xy[-1][0] == WIDTH - RIGHT
    assert xy[0][1] == chart.start_y
    # Higher ratings are drawn higher (smaller y): 1530.50 above 1516 above 1500 above 1490.25.
    assert xy[2][1] < xy[1][1] < xy[0][1] < xy[3][1]
    assert all(TOP <= y <= HEIGHT - BOTTOM for _, y in xy)
    # span 40.25 over ~4 ticks: step 20, bounds rounded out to 1480 and 1540
    assert [tick.label for tick in chart.y_ticks] == ["1480", "1500", "1520", "1540"]


def test_a_flat_history_still_gets_a_scale_and_a_long_one_drops_its_dots():
    flat = rating_chart([D("1500.00")] * 3)
    assert len({y for _, y in points(flat)}) == 1 and len(flat.y_ticks) >= 3
    long = rating_chart([D(1500 + i) for i in range(100)])
    assert long.dots == [] and len(points(long)) == 101 and len(long.x_ticks) <= 7


def test_tooltips_name_each_match():
    chart = rating_chart([D("1516.00")], labels=["match #7 (v1, rank 1)"])
    assert chart.dots[1][2] == "match #7 (v1, rank 1): 1516"  # whole points, as every rating shown
