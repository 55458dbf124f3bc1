"""Neighbour bias at 4 seats under duplicate deals: one fixed cyclic order against the balanced
seating of ``engine.seating`` (docs/tournaments.md, "Who sits after whom within a match").

Bots ``[W, W, S, S]`` (two copies of a weak and of a strong reference bot). Under the old single
cyclic order bot 0 (W) always sat right after bot 3 (S) and bot 1 (W) after bot 0 (W); the copies
are identical, so any mean score difference between them is the seating's. Same seeds for both
schemes. A measurement, not a test:

    .venv/bin/python tests/engine/neighbour_bias.py first expert 1 300 6
"""

from __future__ import annotations

import statistics
import sys

import engine.match as match_module
from engine.bots import REFERENCE_BOTS
from engine.match import AgentSeat, play_match
from engine.rules import Rules


def fixed_cyclic(n: int, deal: int, rotation: int, duplicate: bool) -> list[int]:
    """The seating before balancing: rotation r moves every bot r seats on, the same order every deal."""
    return [(s - rotation) % n for s in range(n)] if duplicate else list(range(n))


def scores(weak: str, strong: str, seeds: range, deals: int) -> list[list[int]]:
    rows = []
    for seed in seeds:
        seats = [AgentSeat(REFERENCE_BOTS[b], b) for b in (weak, weak, strong, strong)]
        result = play_match(Rules(players=4), seats, seed=seed, deals=deals, duplicate=True)
        rows.append([p.score for p in result.players])
    return rows


def summary(name: str, diffs: list[int]) -> str:
    mean, sd = statistics.mean(diffs), statistics.stdev(diffs)
    return f"{name}: {mean:+.1f} points/match (sd {sd:.0f}, n={len(diffs)}, t={mean / (sd / len(diffs) ** 0.5):+.2f})"


def main(argv: list[str]) -> None:
    weak, strong, first, count, deals = argv[0], argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    seeds = range(first, first + count)
    balanced = match_module.seat_bots
    data = {}
    try:
        for label, seating in (("fixed cyclic order", fixed_cyclic), ("balanced seating", balanced)):
            match_module.seat_bots = seating
            data[label] = scores(weak, strong, seeds, deals)
    finally:
        match_module.seat_bots = balanced
    for who, (a, b) in ((f"{weak} after {strong} minus {weak} after {weak}", (0, 1)), (f"{strong} after {weak} minus {strong} after {strong}", (2, 3))):
        print(who)
        for label, rows in data.items():
            print("  ", summary(label, [r[a] - r[b] for r in rows]))


if __name__ == "__main__":
    main(sys.argv[1:])
