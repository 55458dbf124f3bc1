"""``arena``: entry point, argument parsing and the one-line error contract.

Every mistake in the arguments, the rules or a bot file ends as one line on
stderr and exit code 2; a platform failure (e.g. no Docker engine) or a bug of
ours as one line and exit code 1. Never a traceback (unless ARENA_DEBUG=1).

>>> main(["play", "first", "random", "--deals", "1", "--json"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arena_cli.errors import CommandError, FailureError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
BACKENDS = ("inprocess", "process", "docker")


class _Parser(argparse.ArgumentParser):
    # argparse prints usage plus the message; the contract is one line.
    def error(self, message: str):
        raise CommandError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _clock(name: str):
    """An argparse type: seconds for the clock ``name``, a finite number within sandbox.limits.CLOCK_BOUNDS."""
    from sandbox.limits import CLOCK_BOUNDS

    low, high = CLOCK_BOUNDS[name]

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected seconds (a number), got {text!r}") from None
        if not low <= value <= high:  # also refuses nan; inf is above any bound
            raise argparse.ArgumentTypeError(f"expected {low:g} to {high:g} seconds, got {text!r}")
        return value

    parse.__name__ = "seconds"  # argparse names the type in its messages
    return parse


#: the clock flags of ``arena play``: what each one does (BOT_CONTRACT.md, "Time and faults")
CLOCK_HELP = {
    "time_per_decision": "seconds a decision may take before the extra comes out of the time bank",
    "time_bank": "seconds per match a bot may spend beyond --time-per-decision; with it used up, "
    "a slow reply is a timeout (a strike)",
    "time_per_match": "seconds of thinking a bot may spend over the whole match, every decision counted; "
    "using it up forfeits (out of match time)",
}


def add_clock_flags(parser: argparse.ArgumentParser) -> None:
    """``--time-per-decision``, ``--time-bank`` and ``--time-per-match`` (seconds, checked against
    ``sandbox.limits.CLOCK_BOUNDS``, defaults the contract's) for a command that plays matches."""
    from sandbox.limits import CLOCK_BOUNDS, CLOCKS, DEFAULT_LIMITS

    for clock in CLOCKS:
        low, high = CLOCK_BOUNDS[clock]
        parser.add_argument(
            f"--{clock.replace('_', '-')}", type=_clock(clock), default=getattr(DEFAULT_LIMITS, clock), metavar="S",
            help=f"{CLOCK_HELP[clock]} ({low:g} to {high:g}; default {getattr(DEFAULT_LIMITS, clock):g})",
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``arena`` and its subcommands."""
    from engine.bots import REFERENCE_BOTS

    parser = _Parser(prog="arena", description="Uno Arena: play UNO bot matches, benchmark the engine.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    play = commands.add_parser(
        "play",
        help="play a match between bots",
        description=f"Play a match. BOT is a reference bot ({', '.join(REFERENCE_BOTS)}) "
        "or a path to a .py or .zip bot (BOT_CONTRACT.md).",
    )
    play.add_argument("bots", nargs="+", metavar="BOT", help="two to ten bots, in seat order")
    play.add_argument(
        "--rules", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
        help="rule options (RULES.md), e.g. wd4=free stacking=stack; players defaults to the number of bots",
    )
    play.add_argument("--deals", "--games", dest="deals", type=_positive_int, default=1, metavar="N",
                      help="number of deals (default 1; each once per rotation with --duplicate; --games is its old name)")
    play.add_argument("--duplicate", action="store_true", help="play every deal once per rotation of the seats")
    play.add_argument("--seed", type=_int, default=1, metavar="S", help="match seed (default 1)")
    play.add_argument("--replay", metavar="FILE", help="write the replay JSON to FILE")
    play.add_argument(
        "--logs", metavar="DIR",
        help="write what each bot printed to DIR/<position>-<bot>.log (DIR must exist)",
    )
    play.add_argument(
        "--json", action="store_true",
        help='print one JSON document instead of a table: {"games", "rounds", "players": [{"bot", '
        '"score", "rank", "wins", "forfeit"}], "verdict"}, players in command-line order, games = games '
        "played (deals x seats with --duplicate); verdict: each bot's win rate and mean score with "
        "95%% intervals, and for two bots paired tests of the difference (docs/bots.md)",
    )
    play.add_argument(
        "--sandbox", choices=BACKENDS, default="inprocess",
        help="where bot files run (default inprocess: trusted, your own machine)",
    )
    add_clock_flags(play)

    bench = commands.add_parser(
        "bench",
        help="measure engine speed (one-round games per second)",
        description="Games per second of the engine with random bots (one round per game), "
        "against rlcard's UnoGame when rlcard is installed.",
    )
    bench.add_argument("--games", type=_positive_int, metavar="N", help="games of one round per measurement (default 1000)")
    bench.add_argument("--repeat", type=_positive_int, metavar="N", help="measurements per seat count, the best is kept (default 3)")
    bench.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    bench.add_argument("--paired", action="store_true", help="CPU time, interleaved 0.5 s chunks, median paired ratios (issue 21)")
    bench.add_argument("--sandbox", action="store_true", help="measure the sandbox backends instead (sandbox.bench)")
    bench.add_argument(
        "--backend", action="append", choices=("process", "docker"),
        help="with --sandbox: a backend to measure (repeatable; default both)",
    )
    bench.add_argument("--decisions", type=_positive_int, metavar="N", help="with --sandbox: decisions timed per backend")
    bench.add_argument("--starts", type=_positive_int, metavar="N", help="with --sandbox: seat starts timed per backend")

    from arena_cli.remote import add_parsers

    add_parsers(commands)  # login, logout, submit, matches, replay (and replay view): the server commands

    from arena_cli import rate, sprt

    rate.add_parser(commands)  # each sets its own ``run``
    sprt.add_parser(commands)

    words = commands.add_parser(
        "glossary", help="the words of the platform (round, game, deal, rotation, match, table)",
        description="What the site, its API and arena mean by each word (engine.glossary; the guide's Glossary).",
    )
    words.add_argument("--markdown", action="store_true", help="print docs/glossary.md (which is this output)")
    words.set_defaults(run=_print_glossary)
    return parser


def _print_glossary(args: argparse.Namespace) -> int:
    import textwrap

    from engine import glossary

    if args.markdown:
        print(glossary.markdown(), end="")
        return 0
    for term in glossary.TERMS:
        print(term.word)
        print(textwrap.fill(term.meaning, width=78, initial_indent="    ", subsequent_indent="    "))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``arena`` with ``argv`` (default: the process arguments); return the exit code."""
    try:
        args = build_parser().parse_args(argv)
        if args.command == "play":
            from arena_cli.play import run_play

            return run_play(args)
        if getattr(args, "run", None) is not None:  # rate, sprt, glossary
            return args.run(args)
        if args.command in ("login", "logout", "submit", "matches", "replay"):
            from arena_cli.remote import run

            return run(args)
        from arena_cli.bench import run_bench

        return run_bench(args)
    except CommandError as exc:
        _say(f"arena: error: {exc}")
        return EXIT_USAGE
    except FailureError as exc:
        _say(f"arena: failed: {exc}")
        return EXIT_FAILURE
    except BrokenPipeError:
        # The reader went away (``arena ... | head``): nothing left to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _say("arena: interrupted")
        return 130
    except Exception as exc:  # a bug of ours: still one line, the traceback on request
        if os.environ.get("ARENA_DEBUG"):
            raise
        _say(f"arena: internal error: {type(exc).__name__}: {exc} (set ARENA_DEBUG=1 for the traceback)")
        return EXIT_FAILURE


def _say(line: str) -> None:
    # One line, whatever the message held (a bot file name may contain newlines).
    print(" ".join(line.split()), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
