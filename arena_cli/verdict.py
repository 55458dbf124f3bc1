"""The verdict of ``arena play``: each bot's win rate and mean score with a 95% interval, and for two
bots whether the difference between them is significant.

- **Win rate**: games won (a sole first place, RULES.md section 7) over games played, with the
  Wilson score interval.
- **Mean score**: game points per game, with Student's t interval over the match's *units*: its
  games, or with ``--duplicate`` its deals (a deal's games, one per seating, share the cards, so
  they are not independent; their mean is).
- **Two bots**: a paired t test over the same units on the difference A - B of the score per game
  and of the wins per game; significant when the two-sided p-value is below 0.05 (the 95%
  interval of the difference then leaves out 0).

The normal quantile is ``tournaments.sprt.Z95``; Student's t distribution is computed exactly for
whole degrees of freedom (Abramowitz and Stegun 26.7.3-4), the standard library having none.
Pure: no I/O.

>>> low, high = wilson(7, 10)
>>> round(low, 4), round(high, 4)
(0.3968, 0.8922)
>>> round(t_quantile(10), 3)
2.228
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tournaments.sprt import Z95

LEVEL = 0.95
ALPHA = 1 - LEVEL


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``wins / games``."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    # exactly 0 (1) with no wins (no losses): the formula leaves a rounding error there
    low = 0.0 if wins == 0 else max(0.0, centre - half)
    high = 1.0 if wins == games else min(1.0, centre + half)
    return low, high


def t_central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (whole) degrees of freedom."""
    t = abs(t)
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term = total = 1.0
        for k in range(2, df, 2):
            term *= cos2 * (k - 1) / k
            total += term
        return min(1.0, sin * total)
    if df == 1:
        return 2 * theta / math.pi
    term = total = math.cos(theta)
    for k in range(3, df, 2):
        term *= cos2 * (k - 1) / k
        total += term
    return min(1.0, 2 / math.pi * (theta + sin * total))


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The t with P(|T| <= t) = ``level`` (2.228 for 10 degrees of freedom at 95%)."""
    low, high = 0.0, 1.0
    while t_central(high, df) < level:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        if t_central(mid, df) < level:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def mean_interval(values: Sequence[float]) -> dict:
    """The mean of ``values`` with its 95% t interval, and the two-sided p-value of "the mean is 0".

    One value has no interval (``low``, ``high`` and ``p`` are None); values that are all equal
    have an interval of width 0 (p is 1 when they are 0, else 0).
    """
    n = len(values)
    mean = sum(values) / n if n else 0.0
    if n < 2:
        return {"mean": mean, "low": None, "high": None, "p": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    se = sd / math.sqrt(n)
    half = t_quantile(n - 1) * se
    if se == 0:
        p = 1.0 if mean == 0 else 0.0
    else:
        p = 1 - t_central(mean / se, n - 1)
    return {"mean": mean, "low": mean - half, "high": mean + half, "p": max(0.0, p)}


def game_outcomes(replay: dict, bots: int) -> list[tuple[int, list[int], list[int]]]:
    """Per game of a replay: (deal, score of each bot, 1 for the bot that won it else 0)."""
    outcomes = []
    for game in replay["games"]:
        seats = game["seats"]  # seats[s] = the bot sitting at seat s
        scores, wins = [0] * bots, [0] * bots
        for seat, bot in enumerate(seats):
            scores[bot] = game["scores"][seat]
        ranks = game["ranks"]
        if ranks.count(1) == 1:
            wins[seats[ranks.index(1)]] = 1
        outcomes.append((game["deal"], scores, wins))
    return outcomes


def verdict(replay: dict, labels: Sequence[str], *, duplicate: bool) -> dict:
    """The ``verdict`` of ``arena play --json`` for a match's replay; bots in command-line order."""
    bots = len(labels)
    outcomes = game_outcomes(replay, bots)
    # the units: games, or with --duplicate deals (their games' mean)
    units: dict[int, list[tuple[list[int], list[int]]]] = {}
    for index, (deal, scores, wins) in enumerate(outcomes):
        units.setdefault(deal if duplicate else index, []).append((scores, wins))

    def per_unit(value) -> list[float]:
        return [sum(value(scores, wins) for scores, wins in games) / len(games) for games in units.values()]

    players = []
    for bot, label in enumerate(labels):
        won = sum(wins[bot] for _, _, wins in outcomes)
        low, high = wilson(won, len(outcomes))
        score = mean_interval(per_unit(lambda scores, wins, b=bot: scores[b]))
        players.append(
            {
                "bot": label,
                "games": len(outcomes),
                "wins": won,
                "win_rate": won / len(outcomes),
                "win_rate_low": low,
                "win_rate_high": high,
                "mean_score": score["mean"],
                "mean_score_low": score["low"],
                "mean_score_high": score["high"],
            }
        )
    difference: dict[str, Any] | None = None
    if bots == 2:
        difference = {"bots": list(labels)}
        for key, value in (("score", lambda s, w: s[0] - s[1]), ("wins", lambda s, w: w[0] - w[1])):
            test = mean_interval(per_unit(value))
            test["significant"] = test["p"] is not None and test["p"] < ALPHA
            difference[key] = test
    return {
        "level": LEVEL,
        "unit": "deal" if duplicate else "game",
        "units": len(units),
        "players": players,
        "difference": difference,
    }


def _range(low, high, digits: int = 1, scale: float = 1.0) -> str:
    if low is None:
        return "(no interval from one unit)"
    return f"({low * scale:.{digits}f} to {high * scale:.{digits}f})"


def _p(p: float) -> str:
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}" if p < 0.01 else f"p = {p:.2f}"


def format_verdict(result: dict) -> str:
    """The verdict as text: a line per bot, and for two bots the paired tests."""
    unit = result["unit"]
    units = result["units"]
    head = f"verdict, 95% intervals over {units} {unit}{'' if units == 1 else 's'}"
    if unit == "deal":
        head += " (each deal's seatings together)"
    width = max(len(p["bot"]) for p in result["players"])
    rates = [
        f"win rate {p['win_rate'] * 100:5.1f}% {_range(p['win_rate_low'], p['win_rate_high'], scale=100)}"
        for p in result["players"]
    ]
    lines = [head + ":"]
    for p, rate in zip(result["players"], rates, strict=True):
        lines.append(
            f"  {p['bot'].ljust(width)}  {rate.ljust(max(map(len, rates)))}"
            f"  mean score {p['mean_score']:.1f} {_range(p['mean_score_low'], p['mean_score_high'])} per game"
        )
    difference = result["difference"]
    if difference is None:
        lines.append("  (a test of the difference is made for two bots)")
        return "\n".join(lines)
    a, b = difference["bots"]
    for key, what, scale, unit_text in (
        ("score", "score", 1.0, " points per game"),
        ("wins", "win rate", 100.0, " percentage points"),
    ):
        test = difference[key]
        if test["p"] is None:
            lines.append(f"  {a} - {b}, {what}: {test['mean'] * scale:+.1f}{unit_text}; one {unit} cannot tell")
            continue
        says = "significant" if test["significant"] else "not significant"
        lines.append(
            f"  {a} - {b}, {what}: {test['mean'] * scale:+.1f}{unit_text} "
            f"{_range(test['low'], test['high'], scale=scale)}, {_p(test['p'])}: {says} (paired t test)"
        )
    return "\n".join(lines)
