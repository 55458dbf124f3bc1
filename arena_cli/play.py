"""``arena play``: a match between reference bots and bot files, on this machine.

Bots run through ``sandbox.runner.play_sandboxed_match``; reference bots (our own code)
always run in-process, bot files in the backend chosen by ``--sandbox``
(default ``inprocess``: trusted, the author's own machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from arena_cli.errors import CommandError, FailureError
from arena_cli.progress import Progress
from arena_cli.verdict import format_verdict, verdict
from engine import glossary
from engine.bots import REFERENCE_BOTS
from engine.faults import InfrastructureError
from engine.rules import BOUNDS, Rules, RulesError
from sandbox import runner
from sandbox.limits import CLOCKS, DEFAULT_LIMITS, Limits
from sandbox.package import BotPackage, PackageError

#: games per match (deals x rotations); the referee holds all their replays in
#: memory, ~80 KB a round, so this bounds a run to a few GB at worst
MAX_GAMES = 10_000


def run_play(args: argparse.Namespace) -> int:
    """Play the match ``args`` describe and print its result; return the exit code."""
    bots = [resolve_bot(text) for text in args.bots]
    rules = make_rules(args.rules, len(bots))
    if args.sandbox == "inprocess":
        for text, bot in dict(zip(args.bots, bots, strict=True)).items():
            foreign = bot.foreign_imports() if isinstance(bot, BotPackage) else []
            if foreign:
                print(
                    f"arena: note: {text} imports {', '.join(foreign)}, not in the standard library: it runs "
                    "here, in your Python, but not on the site (try --sandbox process)",
                    file=sys.stderr,
                )
    total = glossary.games_of(args.deals, rules.players, args.duplicate)
    if total > MAX_GAMES:
        raise CommandError(
            f"--deals {args.deals}{' --duplicate' if args.duplicate else ''} means {total} games; at most "
            f"{MAX_GAMES} fit in one match (the referee keeps every game's replay in memory): "
            "play several matches with different --seed"
        )
    # Opened before playing: a replay that cannot be written is refused up front.
    replay = ReplayFile.open(args.replay) if args.replay is not None else None
    logs_dir = check_logs_dir(args.logs) if args.logs is not None else None
    progress = Progress(total, label="arena play ")
    with _stdout_kept_for_results() as results:
        try:
            played = _play(rules, bots, args, on_game=lambda done, _total: progress.update(done))
        except BaseException as exc:
            if replay is not None:
                replay.discard()
            if isinstance(exc, InfrastructureError):
                raise FailureError(f"{args.sandbox} sandbox: {exc}") from exc
            if isinstance(exc, ImportError):  # a backend whose optional parts are not installed
                raise FailureError(f"the {args.sandbox} sandbox is not available here: {exc}") from exc
            raise
        finally:
            progress.close()
        result = played.result
        summary = summarize(result, args.bots, duplicate=args.duplicate)
        if args.json:
            results.write(json.dumps(summary) + "\n")
        else:
            table = format_table(result, args.bots, seed=args.seed, duplicate=args.duplicate)
            results.write(table + "\n" + format_verdict(summary["verdict"]) + "\n")
    if replay is not None:
        replay.commit(result.replay)
    if logs_dir is not None:
        write_logs(logs_dir, args.bots, played.logs)
    return 0


@contextlib.contextmanager
def _stdout_kept_for_results():
    """While bots run and the results are written, file descriptor 1 points at stderr.

    An in-process bot's prints are captured at the Python level only, during
    its calls; one that writes to fd 1 directly, or from a thread of its own,
    would otherwise break the single JSON document. Yields the stream the
    results go to: the real standard output. When ``sys.stdout`` is fd 1 (the
    command itself) fd 1 stays on stderr afterwards, since a bot's thread may
    print until the process exits; otherwise (a caller capturing
    ``sys.stdout``, as tests do) the results go to ``sys.stdout`` and fd 1 is
    restored.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    to_fd = _writes_to_fd1(sys.stdout)
    try:
        if to_fd:
            with open(saved, "w", encoding="utf-8", closefd=False) as stream:
                yield stream
        else:
            yield sys.stdout
    finally:
        sys.stdout.flush()
        if not to_fd:
            os.dup2(saved, 1)
        os.close(saved)


def _writes_to_fd1(stream) -> bool:
    try:
        return stream.fileno() == 1
    except (AttributeError, OSError, ValueError):
        return False


def resolve_bot(text: str) -> Any:
    """A reference bot's name, or the checked ``BotPackage`` of a .py/.zip path."""
    if text in REFERENCE_BOTS:
        return text
    path = Path(text)
    if path.suffix.lower() in (".py", ".zip") or os.path.lexists(text):
        try:
            return BotPackage.from_path(path)
        except PackageError as exc:
            raise CommandError(f"bad bot file {text!r}: {exc}") from exc
    raise CommandError(
        f"unknown bot {text!r}: not a reference bot ({', '.join(REFERENCE_BOTS)}) "
        "and not a .py or .zip file"
    )


def make_rules(items: list[str], bots: int) -> Rules:
    """Rules from ``--rules`` items; ``players`` defaults to the number of bots."""
    low, high = BOUNDS["players"]
    if not low <= bots <= high:
        raise CommandError(f"a match needs {low} to {high} bots, got {bots}")
    for item in items:
        if "=" not in item:
            # `--rules` takes every word after it: a bot given after it lands here
            raise CommandError(f"bad --rules: {item!r} is not KEY=VALUE (give the bots before --rules)")
    given = {item.partition("=")[0].strip() for item in items}
    entries = list(items) if "players" in given else [f"players={bots}", *items]
    try:
        rules = Rules.parse(entries)
    except RulesError as exc:
        raise CommandError(f"bad --rules: {exc}") from exc
    if rules.players != bots:
        raise CommandError(f"bad --rules: players={rules.players} but {bots} bots were given")
    return rules


class ReplayFile:
    """The ``--replay`` target: a temporary file beside it until ``commit`` renames it."""

    def __init__(self, path: Path, handle: Any, tmp: str):
        self.path = path
        self.handle = handle
        self.tmp = tmp

    @classmethod
    def open(cls, text: str) -> ReplayFile:
        """Create the temporary file now, so a bad path fails before any game is played."""
        if not text.strip():
            raise CommandError("--replay needs a file name, got an empty one")
        path = Path(text)
        if path.is_dir():
            raise CommandError(f"--replay {text!r} is a directory, expected a file name")
        parent = path.parent
        if not parent.is_dir():
            raise CommandError(f"--replay {text!r}: directory {str(parent)!r} does not exist")
        tmp = str(parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            # os.open with 0o666 so the final file gets the usual umask permissions
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            raise CommandError(f"--replay {text!r}: cannot write in {str(parent)!r}: {exc.strerror or exc}") from exc
        return cls(path, os.fdopen(fd, "w", encoding="utf-8"), tmp)

    def commit(self, document: dict) -> None:
        """Write ``document`` and move it into place; no half-written file is ever left."""
        try:
            with self.handle:
                json.dump(document, self.handle, separators=(",", ":"))
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.discard()
            raise FailureError(f"cannot write replay {str(self.path)!r}: {exc.strerror or exc}") from exc

    def discard(self) -> None:
        """Remove the temporary file (the match did not finish)."""
        self.handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def check_logs_dir(text: str) -> Path:
    """``--logs`` must name an existing, writable directory."""
    if not text.strip():
        raise CommandError("--logs needs a directory, got an empty name")
    path = Path(text)
    if not path.is_dir():
        raise CommandError(f"--logs {text!r} is not an existing directory")
    if not os.access(path, os.W_OK):
        raise CommandError(f"--logs {text!r} is not writable")
    return path


def write_logs(directory: Path, labels: list[str], logs: list[str]) -> None:
    """One file per bot, named by its command-line position and name."""
    for position, (label, text) in enumerate(zip(labels, logs, strict=True), start=1):
        # A path's last part, reduced to safe characters: the log must land in directory.
        name = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in Path(label).name) or "bot"
        target = directory / f"{position}-{name}.log"
        try:
            target.write_text(text, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise FailureError(f"cannot write log {str(target)!r}: {exc.strerror or exc}") from exc


def summarize(result: Any, labels: list[str], *, duplicate: bool) -> dict:
    """The ``--json`` document: players in command-line order, and the verdict (arena_cli.verdict)."""
    return {
        "games": result.games,
        "rounds": result.rounds,
        "players": [
            {"bot": labels[p.bot], "score": p.score, "rank": p.rank, "wins": p.wins,
             "forfeit": None if p.forfeit is None else str(p.forfeit)}
            for p in sorted(result.players, key=lambda p: p.bot)
        ],
        "verdict": verdict(result.replay, labels, duplicate=duplicate),
    }


def format_table(result: Any, labels: list[str], *, seed: int, duplicate: bool) -> str:
    """A plain-text table of the match, best rank first."""
    header = ("rank", "bot", "score", "wins", "strikes")
    rows = [
        (str(p.rank), labels[p.bot], str(p.score), str(p.wins), str(p.strikes), "-" if p.forfeit is None else str(p.forfeit))
        for p in sorted(result.players, key=lambda p: (p.rank, p.bot))
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: tuple[str, ...], last: str) -> str:
        padded = [c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join([*padded, last])

    title = f"{result.games} games, {result.rounds} rounds, seed {seed}" + (", duplicate" if duplicate else "")
    return "\n".join([title, line(header, "forfeit"), *(line(r[:-1], r[-1]) for r in rows)])


def clock_limits(args: argparse.Namespace) -> Limits:
    """The contract's limits with the clocks of --time-per-decision, --time-bank and --time-per-match."""
    return DEFAULT_LIMITS.replace(**{clock: getattr(args, clock) for clock in CLOCKS})


def _play(rules: Any, bots: list[Any], args: argparse.Namespace, on_game=None) -> Any:
    # The author's own bots on their own machine: the weaker process sandbox is fine.
    return runner.play_sandboxed_match(
        rules,
        bots,
        seed=args.seed,
        deals=args.deals,
        duplicate=args.duplicate,
        backend=args.sandbox,
        limits=clock_limits(args),
        allow_process=True,
        on_game=on_game,
    )
