"""``arena sprt NEW OLD``: is NEW better than OLD? A sequential test on duplicate deal pairs, like fishtest.

Pair i is one deal played twice with the seats swapped (``sandbox.runner.play_sandboxed_match``
with ``deals=1, duplicate=True``, seed ``--seed + i``), the same runner and
bot resolution as ``arena play``. NEW's points in the pair (a game won 1, drawn
1/2, lost 0; a bot that forfeits loses the pair's every game, both forfeiting is
1 point each) go into the pentanomial counts, and after every pair the
log-likelihood ratio of ``tournaments.sprt`` is compared with Wald's bounds.
"""

from __future__ import annotations

import argparse
import json
import math

from arena_cli.errors import CommandError, FailureError
from arena_cli.progress import Progress
from tournaments.sprt import H0, H1, INCONCLUSIVE, Sprt, elo_estimate

#: default cap: games (pairs x 2) before the test ends inconclusive
DEFAULT_MAX_GAMES = 20_000
VERDICTS = {H1: "H1 accepted", H0: "H0 accepted", INCONCLUSIVE: "inconclusive"}


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _error_rate(text: str) -> float:
    value = _number(text)
    if not 0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"expected a probability between 0 and 0.5, got {text!r}")
    return value


def _games(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of games, got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected at least 2 games (one pair), got {text!r}")
    return value


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``arena sprt`` on the subparsers ``commands``."""
    from arena_cli.main import BACKENDS, _int, add_clock_flags

    sprt = commands.add_parser(
        "sprt",
        help="test whether NEW is stronger than OLD (SPRT on duplicate deal pairs)",
        description="Play pairs of games (one deal, seats swapped) between NEW and OLD until the "
        "sequential probability ratio test accepts H1 (NEW is better by elo1) or H0 (by elo0 at most), "
        "or the cap is reached. Pentanomial statistics and the GSPRT of fishtest (tournaments.sprt).",
    )
    sprt.add_argument("new", metavar="NEW", help="the candidate: a reference bot or a .py/.zip bot")
    sprt.add_argument("old", metavar="OLD", help="the baseline: a reference bot or a .py/.zip bot")
    sprt.add_argument("--elo0", type=_number, default=0.0, metavar="E", help="Elo difference of H0 (default 0)")
    sprt.add_argument("--elo1", type=_number, default=10.0, metavar="E", help="Elo difference of H1 (default 10)")
    sprt.add_argument("--alpha", type=_error_rate, default=0.05, metavar="P", help="false H1 rate (default 0.05)")
    sprt.add_argument("--beta", type=_error_rate, default=0.05, metavar="P", help="false H0 rate (default 0.05)")
    sprt.add_argument(
        "--rules", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
        help="rule options (RULES.md) of every game; two seats",
    )
    sprt.add_argument(
        "--max-games", type=_games, default=DEFAULT_MAX_GAMES, metavar="N",
        help=f"stop inconclusive after N games, N/2 pairs (default {DEFAULT_MAX_GAMES})",
    )
    sprt.add_argument("--seed", type=_int, default=1, metavar="S", help="seed of the first pair (default 1; pair i uses S + i)")
    sprt.add_argument(
        "--sandbox", choices=BACKENDS, default="inprocess",
        help="where bot files run (default inprocess: trusted, your own machine)",
    )
    add_clock_flags(sprt)
    sprt.add_argument(
        "--json", action="store_true",
        help='print {"result": "H1"|"H0"|"inconclusive", "llr", "pairs", "pentanomial", "elo", "elo_low", "elo_high"}',
    )
    sprt.set_defaults(run=run_sprt)
    return sprt


def pair_points(result) -> float:
    """NEW's points (0 to 2) in a played pair (the referee's result: ``players``, ``replay``);
    NEW is bot 0, OLD bot 1."""
    forfeit_new = result.players[0].forfeit is not None
    forfeit_old = result.players[1].forfeit is not None
    if forfeit_new or forfeit_old:
        return 1.0 if forfeit_new and forfeit_old else 0.0 if forfeit_new else 2.0
    points = 0.0
    for game in result.replay["games"]:
        seats, ranks = game["seats"], game["ranks"]
        new, old = ranks[seats.index(0)], ranks[seats.index(1)]
        points += 1.0 if new < old else 0.5 if new == old else 0.0
    return points


class _Line(Progress):
    """One status line on a terminal: pairs, score, LLR and its bounds."""

    def show(self, text: str) -> None:
        if self.enabled:
            self._draw(text)


def run_sprt(args: argparse.Namespace) -> int:
    """Run the test ``args`` describe and print the verdict; return the exit code."""
    from arena_cli.play import _stdout_kept_for_results, clock_limits, make_rules, resolve_bot
    from engine.faults import InfrastructureError
    from sandbox import runner

    if not args.elo0 < args.elo1:
        raise CommandError(f"--elo0 {args.elo0:g} must be below --elo1 {args.elo1:g}")
    bots = [resolve_bot(args.new), resolve_bot(args.old)]
    rules = make_rules(args.rules, 2)
    test = Sprt(elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta)
    max_pairs = args.max_games // 2
    line = _Line(None, label="arena sprt ")
    limits = clock_limits(args)
    verdict = None
    with _stdout_kept_for_results() as results:
        try:
            for pair in range(max_pairs):
                try:
                    outcome = runner.play_sandboxed_match(
                        rules, bots, seed=args.seed + pair, deals=1, duplicate=True, backend=args.sandbox,
                        limits=limits, allow_process=True, names=[args.new, args.old],
                    )
                except InfrastructureError as exc:
                    raise FailureError(f"{args.sandbox} sandbox: {exc}") from exc
                except ImportError as exc:  # a backend whose optional parts are not installed
                    raise FailureError(f"the {args.sandbox} sandbox is not available here: {exc}") from exc
                test.add(pair_points(outcome.result))
                llr = test.llr
                line.show(
                    f"arena sprt: {test.pairs} pairs, score {100 * test.score:.1f}%, "
                    f"LLR {llr:.2f} ({test.lower:.2f}, {test.upper:.2f})"
                )
                verdict = test.verdict
                if verdict is not None:
                    break
        finally:
            line.close()
        verdict = verdict or INCONCLUSIVE
        elo, low, high = elo_estimate(test.counts)
        if args.json:
            doc = {
                "result": verdict, "llr": round(test.llr, 4), "pairs": test.pairs, "pentanomial": list(test.counts),
                "elo": round(elo, 1), "elo_low": round(low, 1), "elo_high": round(high, 1),
            }
            results.write(json.dumps(doc) + "\n")
        else:
            results.write(format_report(args, test, verdict, elo, low, high) + "\n")
    return 0


def format_report(args, test: Sprt, verdict: str, elo: float, low: float, high: float) -> str:
    meaning = {
        H1: f"{args.new} is better than {args.old} (by {args.elo1:g} Elo rather than {args.elo0:g})",
        H0: f"{args.new} is not better than {args.old} by {args.elo1:g} Elo",
        INCONCLUSIVE: f"no verdict within {args.max_games} games",
    }[verdict]
    return "\n".join([
        f"{VERDICTS[verdict]}: {meaning}",
        f"LLR {test.llr:.2f} (bounds {test.lower:.2f}, {test.upper:.2f}; elo0 {args.elo0:g}, elo1 {args.elo1:g}, "
        f"alpha {args.alpha:g}, beta {args.beta:g})",
        f"{test.pairs} pairs ({2 * test.pairs} games), pentanomial {test.counts} (pair points 0, 1/2, 1, 3/2, 2 for {args.new})",
        f"score {100 * test.score:.1f}%, Elo {elo:+.1f} (95%: {low:+.1f} .. {high:+.1f})",
    ])


