"""``arena rate FILE...``: rate results offline, like Ordo or BayesElo.

Reads three kinds of input, in any mix, several per file:

- ``arena play --json`` outputs (one document per line, or one pretty-printed
  document per file): ``{"players": [{"bot", "rank", "forfeit", ...}]}``;
- replays (``arena play --replay``, docs/replay-format.md): the match's final
  ranks (``result.ranks`` by ``names``; a replay is one result per *match*, not
  per game: the match is what was rated, and its games share the bots' seats
  and deals);
- JSON lines of rankings: ``{"ranks": {"alice": 1, "bob": 2}}`` per line, 2 to
  10 bots, equal ranks tie, optionally ``"forfeits": ["bob"]``.

A bot that forfeited (``forfeit`` not null, a replay's ``result.forfeits``, or
``forfeits``) counts as a last place. Bots are told apart by name. The fit is
``tournaments.rating`` (its docstring has the model).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from arena_cli.errors import CommandError

# tournaments.rating (numpy) is imported by the functions that rate: `arena play` never loads it.

#: replay versions this reader knows (docs/replay-format.md)
REPLAY_VERSIONS = (1, 2)
#: the likelihood-of-superiority matrix is printed for at most this many bots
MATRIX_BOTS = 20


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``arena rate`` on the subparsers ``commands``."""
    rate = commands.add_parser(
        "rate",
        help="rate bots from match results (arena play --json, replays, rankings)",
        description="Rate bots from results: `arena play --json` outputs, replay files and JSON lines "
        'of rankings ({"ranks": {"alice": 1, "bob": 2}}, ties allowed, optional "forfeits": [...]). '
        "A batch Plackett-Luce fit on the Elo scale, mean 1500, 95% intervals from the fit.",
    )
    rate.add_argument("files", nargs="+", metavar="FILE", help="result files, any mix of the three kinds")
    rate.add_argument("--anchor", metavar="BOT", help="rate BOT 1500 and the others relative to it (default: the mean is 1500)")
    rate.add_argument(
        "--json", action="store_true",
        help='print {"bots": [{"name", "rating", "low", "high", "games", "score"}]}, best first',
    )
    rate.set_defaults(run=run_rate)
    return rate


class _Bad(Exception):
    """One document that is not a result."""


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"{what} must be a non-empty string, got {json.dumps(value)[:60]}")
    return value


def _rank(value, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Bad(f"rank of {who!r} must be a positive integer, got {json.dumps(value)[:60]}")
    return value


def result_of(doc) -> tuple[dict[str, int], list[str]]:
    """(ranks by bot name, forfeiting bots) of one document of any of the three kinds."""
    if not isinstance(doc, dict):
        raise _Bad("expected a JSON object")
    if "ranks" in doc:
        ranks = doc["ranks"]
        if not isinstance(ranks, dict):
            raise _Bad('"ranks" must be an object of bot name to rank')
        out = {_name(bot, "a bot name"): _rank(rank, bot) for bot, rank in ranks.items()}
        forfeits = doc.get("forfeits", [])
        if not isinstance(forfeits, list):
            raise _Bad('"forfeits" must be a list of bot names')
        return out, [_name(f, "a forfeiting bot") for f in forfeits]
    if "players" in doc:
        players = doc["players"]
        if not isinstance(players, list):
            raise _Bad('"players" must be a list (arena play --json)')
        out, forfeits = {}, []
        for player in players:
            if not isinstance(player, dict) or "bot" not in player or "rank" not in player:
                raise _Bad('each of "players" needs "bot" and "rank" (arena play --json)')
            bot = _name(player["bot"], '"bot"')
            if bot in out:
                raise _Bad(f"bot {bot!r} appears twice in one match")
            out[bot] = _rank(player["rank"], bot)
            if player.get("forfeit") is not None:
                forfeits.append(bot)
        return out, forfeits
    if "version" in doc and "result" in doc:
        if doc["version"] not in REPLAY_VERSIONS:
            raise _Bad(f"replay version {json.dumps(doc['version'])[:20]} is not one this reader knows ({', '.join(map(str, REPLAY_VERSIONS))})")
        names, result = doc.get("names"), doc["result"]
        if not isinstance(names, list) or not isinstance(result, dict) or not isinstance(result.get("ranks"), list):
            raise _Bad('a replay needs "names" and "result": {"ranks": [...]}')
        ranks = result["ranks"]
        forfeit_reasons = result.get("forfeits") or [None] * len(names)
        if len(ranks) != len(names) or not isinstance(forfeit_reasons, list) or len(forfeit_reasons) != len(names):
            raise _Bad('a replay\'s "result" needs one rank and one forfeit per name')
        out, forfeits = {}, []
        for bot, rank, forfeit in zip(names, ranks, forfeit_reasons, strict=True):
            bot = _name(bot, "a replay name")
            if bot in out:
                raise _Bad(f"bot {bot!r} appears twice in one match")
            out[bot] = _rank(rank, bot)
            if forfeit is not None:
                forfeits.append(bot)
        return out, forfeits
    raise _Bad('not a result: expected {"ranks": ...}, an `arena play --json` output or a replay')


def _documents(path: str):
    """(line number, parsed document) for each result in the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):  # one document, perhaps over several lines
        yield 1, whole
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise CommandError(f"{path}:{number}: not JSON: {getattr(exc, 'msg', exc)}") from None


def read_results(paths: list[str]):
    """Every result of every file, in order; bad input raises CommandError naming file and line."""
    from tournaments.rating import MAX_SEATS, MIN_SEATS, RatingInputError, Results

    results = Results()
    for path in paths:
        for number, doc in _documents(path):
            try:
                ranks, forfeits = result_of(doc)
                if not MIN_SEATS <= len(ranks) <= MAX_SEATS:
                    raise _Bad(f"a result needs {MIN_SEATS} to {MAX_SEATS} bots, got {len(ranks)}")
                results.add(ranks, forfeits=forfeits)
            except (_Bad, RatingInputError) as exc:
                raise CommandError(f"{path}:{number}: {exc}") from None
    if not len(results):
        raise CommandError(f"no results in {', '.join(paths)}")
    return results


def run_rate(args: argparse.Namespace) -> int:
    """Rate the results in ``args.files`` and print the table (or the JSON document)."""
    from tournaments.rating import fit_ratings

    results = read_results(args.files)
    if args.anchor is not None and args.anchor not in results.index:
        raise CommandError(f"--anchor {args.anchor!r}: no such bot in the results")
    fit = fit_ratings(results, anchor=args.anchor)
    order = fit.ranking()
    if args.json:
        bots = []
        for bot in order:
            r = fit[bot]
            bots.append(
                {"name": bot, "rating": round(r.rating, 1), "low": round(r.low, 1), "high": round(r.high, 1),
                 "games": r.games, "score": round(r.score, 4)}
            )
        print(json.dumps({"bots": bots}))
    else:
        print(format_table(fit, order, len(results)))
    return 0


def format_table(fit, order: list, count: int) -> str:
    """Ratings best first, then the likelihood-of-superiority matrix (row better than column)."""
    header = ("#", "bot", "rating", "95% interval", "games", "score")
    rows = []
    for place, bot in enumerate(order, start=1):
        r = fit[bot]
        rows.append(
            (str(place), bot, str(round(r.rating)), f"{round(r.low)} .. {round(r.high)}", str(r.games), f"{100 * r.score:.1f}%")
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    anchor = f"{fit.anchor} = 1500" if fit.anchor is not None else "mean 1500"
    lines = [f"{count} results, {len(order)} bots ({anchor}; score = share of opponents beaten, ties half)", line(header)]
    lines += [line(row) for row in rows]
    shown = order[:MATRIX_BOTS]
    lines.append("")
    lines.append(
        "likelihood of superiority, % (row better than column)"
        + (f", first {MATRIX_BOTS} bots" if len(order) > MATRIX_BOTS else "")
    )
    name_width = max(len(b) for b in shown) + len(str(len(shown))) + 1
    cell = max(3, len(str(len(shown))))
    lines.append(" " * name_width + "".join(f" {i:>{cell}}" for i in range(1, len(shown) + 1)))
    for i, a in enumerate(shown, start=1):
        cells = []
        for b in shown:
            cells.append(f" {'-':>{cell}}" if a == b else f" {_percent(fit.los(a, b)):>{cell}}")
        lines.append(f"{i} {a}".ljust(name_width) + "".join(cells))
    return "\n".join(lines)


def _percent(p: float) -> str:
    value = 100 * p
    if not math.isfinite(value):
        return "?"
    return str(min(max(round(value), 0), 100))
