"""How often does a ladder of reference bots end in strength order? An in-process simulation.

The ladder of ``test_ladder_worker.py`` without Django, Celery or Docker: the
anchor is the bot that waited longest (ties: entry order), the table drawn by
``tournaments.rating.pick_table_informative`` over ``ladders.ratings.matchmaking_fit``
of the stored columns, fairness by matches played, as
``ladders.services.ladder_matchmake`` does, on the same
``random.Random(1000 * seed + round)``; each match played by
``engine.match.play_match`` (rules ``rounds=1``, DEALS deals in duplicate),
then the ladder refitted as ``ladders.services.ladder_refit`` does after each
result (``fit_ratings`` of every result, warm-started from the stored ratings,
stored in cents by ``ladders.ratings.shown``). One version per bot, so a bot's
name is its player id. docs/ratings.md, "Strength order".

usage: .venv/bin/python tests/ladders/strength_order_sim.py BOTS SEATS DEALS ROUNDS SEEDS
e.g.   .venv/bin/python tests/ladders/strength_order_sim.py random,first,greedy,expert 4 100 12 30
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def simulate(bots: list[str], seats: int, deals: int, rounds: int, seed: int) -> dict:
    from engine.bots import get
    from engine.match import AgentSeat, play_match
    from engine.rules import Rules
    from ladders.ratings import ladder_results, matchmaking_fit, shown
    from tournaments.rating import fit_ratings, pick_table_informative

    rules = Rules(players=seats, rounds=1)
    columns: dict = {}  # bot -> ratings.Columns, once it has a rated result
    played = dict.fromkeys(bots, 0)
    last = dict.fromkeys(bots, -1)
    rows: list = []  # (match, bot, rank, forfeited) as the ladder stores them
    number = 0
    for round_ in range(rounds):
        rng = random.Random(1000 * seed + round_)
        free = list(bots)
        # the entries in the ladder's order (rating, then entry order), as the site lists its candidates
        known = sorted((b for b in columns if b in free), key=lambda b: (-columns[b].rating, bots.index(b)))
        fit = matchmaking_fit({b: (columns[b].rating, columns[b].low, columns[b].high) for b in known})
        while len(free) >= seats:
            free.sort(key=lambda b: (last[b], bots.index(b)))
            table = pick_table_informative(
                free[0], free[1:], seats, fit, rng, games=played.get, owner=lambda b: b
            )
            result = play_match(
                rules, [AgentSeat(get(b), b) for b in table], seed=rng.getrandbits(62), deals=deals, duplicate=True
            )
            number += 1
            for b, p in zip(table, result.players, strict=True):
                rows.append((number, b, p.rank, p.forfeit is not None))
                played[b] += 1
            refit = fit_ratings(ladder_results(rows), start={b: float(c.rating) for b, c in columns.items()})
            columns = {b: shown(refit, b) for b in {r[1] for r in rows}}
            for b in table:
                last[b] = round_
                free.remove(b)
    return {b: columns[b].rating for b in bots}


def main(argv: list[str]) -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
    bots = argv[0].split(",")
    seats, deals, rounds, seeds = map(int, argv[1:5])
    ordered = 0
    for seed in range(seeds):
        values = simulate(bots, seats, deals, rounds, seed)
        good = all(values[a] < values[b] for a, b in zip(bots, bots[1:], strict=False))
        ordered += good
        print(seed, "ordered" if good else "NOT ordered", {b: str(v) for b, v in values.items()}, flush=True)
    print(f"ordered in {ordered} of {seeds} runs: bots {bots}, {seats} seats, {deals} deals, {rounds} rounds")


if __name__ == "__main__":
    main(sys.argv[1:])
