"""How often does a ladder of reference bots end in strength order? An in-process simulation.

The ladder of ``test_ladder_worker.py`` without Django, Celery or Docker: the
anchor is the bot that waited longest (ties: entry order), the table chosen by
``ladders.ratings.pick_table`` as ``ladders.services.ladder_matchmake`` does,
on the same ``random.Random(1000 * seed + round)``, each match played by
``engine.match.play_match`` (rules ``rounds=1``, DEALS deals in duplicate)
and rated by ``ladders.ratings.rate_match``. docs/ratings.md, "Strength order".

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
    from ladders.ratings import Rating, pick_table, rate_match

    rules = Rules(players=seats, rounds=1)
    rating = {b: Rating() for b in bots}
    last = dict.fromkeys(bots, -1)
    for round_ in range(rounds):
        rng = random.Random(1000 * seed + round_)
        free = list(bots)
        while len(free) >= seats:
            free.sort(key=lambda b: (last[b], bots.index(b)))
            table = pick_table(free[0], free[1:], seats, rating.get, rng)
            result = play_match(
                rules, [AgentSeat(get(b), b) for b in table], seed=rng.getrandbits(62), games=deals, duplicate=True
            )
            rating.update(rate_match(rating, [(b, p.rank) for b, p in zip(table, result.players, strict=True)]))
            for b in table:
                last[b] = round_
                free.remove(b)
    return {b: rating[b].value for b in bots}


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
