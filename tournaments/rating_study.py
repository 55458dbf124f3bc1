"""A study of the batch rating fit with simulated bots of known strength (issue 17, point 7).

    python -m tournaments.rating_study [--seeds N] [--lengths 20,50,...] [--json]
    python -m tournaments.rating_study --bench     # CPU time of the fit at 1,000 bots

Populations of 8 and 30 bots, 50 Elo apart (centred on 1500), play tables of 2
and 4 seats one after another (a simulated match ends at once, so every bot is
free): the anchor of each table is a bot with the fewest matches (the ladder's
"longest waiting"), the other seats are drawn either at random or by
``tournaments.rating.pick_table_informative`` from the fit of the results so
far (refitted, warm-started, after every n / seats tables: the ladder's short
batch). A table's ranking is drawn from the true strengths by Plackett–Luce.
Once the bots reach L matches on average, the fit of all results is compared
with the truth:

- order: the share of seeds whose whole ranking is the true order;
- coverage: the share of bots whose true rating lies in the fit's 95% interval;
- spread: fewest and most matches of a bot, as a share of the mean.

The weak-opponents scenario adds to 8 bots playing random tables a strong bot
(as strong as the best) that plays one match a round, only against the three
weakest; it reports that bot's rating error (fit minus truth, both relative to
the population's mean) and whether its interval covers the truth.

Pure Python plus numpy (through the fit); no Django. Results of one run are in
docs/ratings.md ("Batch ratings: the study").
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar

from tournaments.rating import (
    ELO_PER_LOGIT,
    MEAN_RATING,
    Results,
    fit_ratings,
    pick_table_informative,
)

GAP = 50.0
#: a ranked player of a study: a bot index, or a name
P = TypeVar("P", bound=Hashable)

LENGTHS = (20, 50, 100, 200, 250, 300, 400, 600)


def true_ratings(n: int) -> list[float]:
    """n ratings GAP apart, centred on MEAN_RATING; bot i is the i-th weakest."""
    return [MEAN_RATING + GAP * (i - (n - 1) / 2) for i in range(n)]


def draw_ranking(table: Sequence[P], strength: Mapping[P, float], rng: random.Random) -> dict[P, int]:
    """A Plackett–Luce ranking of ``table`` at the true strengths (logits)."""
    left = list(table)
    ranks: dict[P, int] = {}
    place = 1
    while left:
        weights = [math.exp(strength[b]) for b in left]
        i = rng.choices(range(len(left)), weights=weights)[0]
        ranks[left.pop(i)] = place
        place += 1
    return ranks


def run_population(n: int, seats: int, chooser: str, seed: int, lengths: Sequence[int] = LENGTHS) -> list[dict[str, Any]]:
    """One seeded run; a row per length: order right, bots covered, matches spread."""
    rng = random.Random(f"{n}-{seats}-{chooser}-{seed}")
    truth = true_ratings(n)
    bots = list(range(n))
    strength = {b: (truth[b] - MEAN_RATING) / ELO_PER_LOGIT for b in bots}
    results = Results()
    games = dict.fromkeys(bots, 0)
    fit = fit_ratings(results)
    rows = []
    pending = sorted(lengths)
    batch = max(1, n // seats)  # tables between refits: about one match per bot
    while pending:
        for _ in range(batch):
            # matches finish at once here, so every bot is free: the anchor is the one
            # with the fewest matches (ties at random), the ladder's longest waiting
            least = min(games.values())
            anchor = rng.choice([b for b in bots if games[b] == least])
            others = [b for b in bots if b != anchor]
            if chooser == "random":
                table = [anchor, *rng.sample(others, seats - 1)]
            else:
                picked = pick_table_informative(anchor, others, seats, fit, rng, games=games.__getitem__)
                assert picked is not None  # only an owner rule leaves no table, and none is given
                table = picked
            for b in table:
                games[b] += 1
            results.add(draw_ranking(table, strength, rng))
        mean_games = sum(games.values()) / n
        due = mean_games >= pending[0]
        if chooser != "random" or due:
            fit = fit_ratings(results, start=fit)
        if due:
            order = fit.ranking()
            covered = sum(fit[b].low <= truth[b] <= fit[b].high for b in bots)
            rows.append({
                "length": pending.pop(0),
                "order": order == sorted(bots, reverse=True),
                "covered": covered,
                "bots": n,
                "fewest": min(games.values()) / mean_games,
                "most": max(games.values()) / mean_games,
            })
    return rows


def run_weak_opponents(seats: int, seed: int, lengths: Sequence[int] = LENGTHS) -> list[dict[str, Any]]:
    """8 bots at random tables plus a strong bot meeting only the three weakest."""
    rng = random.Random(f"weak-{seats}-{seed}")
    truth = true_ratings(8)
    bots = list(range(8))
    strong = "strong"
    top = truth[-1]
    ratings: dict[int | str, float] = {**{b: truth[b] for b in bots}, strong: top}
    mean_true = sum(ratings.values()) / len(ratings)
    strength = {b: (r - mean_true) / ELO_PER_LOGIT for b, r in ratings.items()}
    weakest = bots[:3]
    results = Results()
    games = dict.fromkeys(bots, 0)
    strong_games = 0
    rows = []
    pending = sorted(lengths)
    while pending:
        free = list(bots)
        rng.shuffle(free)
        while len(free) >= seats:
            anchor = min(free, key=games.__getitem__)
            table = [anchor, *rng.sample([b for b in free if b != anchor], seats - 1)]
            for b in table:
                free.remove(b)
                games[b] += 1
            results.add(draw_ranking(table, strength, rng))
        strong_table: list[int | str] = [strong, *rng.sample(weakest, seats - 1)]
        results.add(draw_ranking(strong_table, strength, rng))
        strong_games += 1
        if strong_games >= pending[0]:
            fit = fit_ratings(results)
            shown = fit[strong]
            true_shown = MEAN_RATING + (ratings[strong] - mean_true)
            rows.append({
                "length": pending.pop(0),
                "error": shown.rating - true_shown,
                "covered": shown.low <= true_shown <= shown.high,
                "margin": shown.margin,
            })
    return rows


def summarize(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for rows in zip(*runs, strict=True):
        out.append({
            "length": rows[0]["length"],
            "order_right": sum(r["order"] for r in rows) / len(rows),
            "coverage": sum(r["covered"] for r in rows) / sum(r["bots"] for r in rows),
            "fewest": min(r["fewest"] for r in rows),
            "most": max(r["most"] for r in rows),
        })
    return out


def summarize_weak(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for rows in zip(*runs, strict=True):
        errors = [r["error"] for r in rows]
        out.append({
            "length": rows[0]["length"],
            "mean_error": statistics.fmean(errors),
            "rms_error": math.sqrt(statistics.fmean(e * e for e in errors)),
            "coverage": sum(r["covered"] for r in rows) / len(rows),
            "margin": statistics.fmean(r["margin"] for r in rows),
        })
    return out


def bench(players: int = 1000, matches: int = 200_000, seats: int = 2, seed: int = 1) -> dict[str, Any]:
    """CPU seconds (this process, all threads) to add, fit and refit after one more result."""
    rng = random.Random(seed)
    strength = [rng.gauss(0, 1.5) for _ in range(players)]
    rankings = [draw_ranking(rng.sample(range(players), seats), dict(enumerate(strength)), rng) for _ in range(matches)]
    clock = time.process_time
    t0 = clock()
    results = Results()
    for ranks in rankings:
        results.add(ranks)
    t1 = clock()
    fit = fit_ratings(results)
    t2 = clock()
    results.add(rankings[0])
    again = fit_ratings(results, start=fit)
    t3 = clock()
    return {
        "players": players, "matches": matches, "seats": seats,
        "add_seconds": round(t1 - t0, 2), "fit_seconds": round(t2 - t1, 2), "iterations": fit.iterations,
        "refit_seconds": round(t3 - t2, 2), "refit_iterations": again.iterations,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tournaments.rating_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per population (default 20)")
    parser.add_argument("--big-seeds", type=int, help="seeds for the 30-bot populations (default: --seeds)")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="matches per bot to report at")
    parser.add_argument("--bots", default="8,30", help="population sizes (default 8,30)")
    parser.add_argument("--seats", default="2,4", help="seats per table (default 2,4)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--bench", action="store_true",
        help="instead: CPU time of the fit of 1,000 bots and 200,000 results (2 and 4 seats) and of a warm refit",
    )
    args = parser.parse_args(argv)
    if args.bench:
        for seats in (2, 4):
            print(json.dumps(bench(seats=seats)))
        return 0
    lengths = tuple(int(x) for x in args.lengths.split(","))
    report: dict[str, Any] = {"populations": [], "weak_opponents": []}
    started = time.process_time()
    for seats in (int(x) for x in args.seats.split(",")):
        for n in (int(x) for x in args.bots.split(",")):
            seeds = args.big_seeds if (n > 8 and args.big_seeds) else args.seeds
            for chooser in ("random", "informative"):
                runs = [run_population(n, seats, chooser, s, lengths) for s in range(seeds)]
                entry = {"seats": seats, "bots": n, "tables": chooser, "seeds": seeds, "rows": summarize(runs)}
                report["populations"].append(entry)
                if not args.json:
                    _print_population(entry)
        runs = [run_weak_opponents(seats, s, lengths) for s in range(args.seeds)]
        entry = {"seats": seats, "seeds": args.seeds, "rows": summarize_weak(runs)}
        report["weak_opponents"].append(entry)
        if not args.json:
            _print_weak(entry)
    report["cpu_seconds"] = round(time.process_time() - started, 1)
    try:
        import openskill  # noqa: F401
    except ImportError:
        report["openskill"] = "not installed: not compared"
    else:  # pragma: no cover - not a dependency
        report["openskill"] = "installed, but this study does not compare it yet"
    if args.json:
        print(json.dumps(report))
    else:
        print(f"openskill: {report['openskill']}; {report['cpu_seconds']} s of CPU")
    return 0


def _print_population(entry: dict[str, Any]) -> None:
    print(f"{entry['seats']} seats, {entry['bots']} bots {GAP:g} Elo apart, {entry['tables']} tables, {entry['seeds']} seeds")
    print("  matches/bot  order right  coverage  matches spread (min..max / mean)")
    for r in entry["rows"]:
        print(f"  {r['length']:>11}  {100 * r['order_right']:>10.0f}%  {100 * r['coverage']:>7.1f}%  {r['fewest']:.2f}..{r['most']:.2f}")
    sys.stdout.flush()


def _print_weak(entry: dict[str, Any]) -> None:
    print(f"{entry['seats']} seats: a strong bot meeting only the 3 weakest of 8, {entry['seeds']} seeds")
    print("  its matches  mean error  rms error  coverage  mean 95% margin")
    for r in entry["rows"]:
        print(f"  {r['length']:>11}  {r['mean_error']:>+10.1f}  {r['rms_error']:>9.1f}  {100 * r['coverage']:>7.0f}%  {r['margin']:>15.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
