"""The platform's side of the sandbox: which backend, which bots, and the result's columns.

The only module of the platform that calls ``sandbox.runner``; it never
imports a backend. ``play_match_row(match)`` turns a Match row into a runner call and
returns the runner's result as it is (``sandbox.runner.SandboxMatchResult``, the
referee's typed result inside); ``services.match_record_result`` stores it, with
``seat_columns`` and ``timing_summary`` giving the values of its columns.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.conf import settings

from engine.rules import Rules
from sandbox.package import BotPackage

if TYPE_CHECKING:
    from sandbox.runner import SandboxMatchResult

logger = logging.getLogger(__name__)


class SandboxConfigurationError(RuntimeError):
    """The settings do not allow any sandbox to run this match (not a bot's fault, not transient)."""


def reference_bot_names() -> list[str]:
    """Names of the reference bots (engine.bots), our own code that may sit in any match."""
    from engine import bots

    return list(bots.REFERENCE_BOTS)


def backend_name() -> str:
    """The backend for untrusted bots from settings.SANDBOX_BACKEND (auto = docker when it answers)."""

    choice = settings.SANDBOX_BACKEND
    if choice == "auto":
        choice = "docker" if _docker_answers() else "process"
    if choice == "process" and not settings.SANDBOX_ALLOW_PROCESS:
        raise SandboxConfigurationError(
            "no sandbox may run this match: SANDBOX_BACKEND="
            f"{settings.SANDBOX_BACKEND!r} chose the process sandbox and SANDBOX_ALLOW_PROCESS is off"
        )
    return choice


def _docker_answers() -> bool:
    """True when a Docker engine with the sandbox image answers (asked through sandbox.runner)."""
    from sandbox import runner

    try:
        return bool(runner.docker_available(settings.SANDBOX_IMAGE))
    except Exception:  # an engine that cannot even be asked is an engine that is not there
        logger.warning("asking for the Docker engine failed; using the process sandbox", exc_info=True)
        return False


#: the reaper never removes sandboxes younger than this (other databases' matches may share the engine)
REAP_AFTER_AT_LEAST = 1920.0


def reap_age() -> float:
    """Seconds after which a sandbox container belongs to no live attempt: MATCH_STALE_AFTER when
    set, else the longest deadline window of the matches running now, and at least
    REAP_AFTER_AT_LEAST."""
    from .models import Match

    if settings.MATCH_STALE_AFTER:
        return float(settings.MATCH_STALE_AFTER)
    windows = [
        (deadline - started).total_seconds()
        for started, deadline in Match.objects.filter(status=Match.Status.RUNNING, started_at__isnull=False)
        .values_list("started_at", "deadline")
        if deadline
    ]
    return max([REAP_AFTER_AT_LEAST, *windows])


def reap_sandboxes() -> int:
    """Remove sandbox containers left by dead workers (older than ``reap_age()``); how many."""
    from engine.faults import InfrastructureError
    from sandbox import runner

    if settings.SANDBOX_BACKEND == "process":
        return 0
    try:
        label_sandboxes()
        return runner.reap(max_age_seconds=reap_age())
    except InfrastructureError:
        if settings.SANDBOX_BACKEND == "auto":
            return 0  # no Docker engine here: the process sandbox leaves no containers
        raise


def installation_id() -> str:
    """The label of this installation's sandbox containers: SANDBOX_INSTALLATION, else derived
    from the database in use (host, port, name), so installations sharing a Docker engine
    never touch each other's containers."""
    import hashlib

    from django.db import connection

    if settings.SANDBOX_INSTALLATION:
        return settings.SANDBOX_INSTALLATION
    db = connection.settings_dict
    where = f"{db.get('HOST') or ''}:{db.get('PORT') or ''}/{db.get('NAME') or ''}"
    return "db-" + hashlib.sha256(where.encode()).hexdigest()[:12]


def label_sandboxes() -> None:
    """Label this process's sandboxes with the installation (before it starts or removes any)."""
    from sandbox import runner

    runner.docker_installation(installation_id())


def remove_attempt_sandboxes(label: str | None) -> int:
    """Remove the sandbox containers of one abandoned attempt (``sandbox_label``; None: none)
    on this worker's Docker engine, and what dead workers of this installation left on this
    host; never raises (the reaper removes what this could not). How many went."""
    from sandbox import runner

    if settings.SANDBOX_BACKEND == "process":
        return 0
    try:
        label_sandboxes()
        return runner.remove_match_sandboxes(label)
    except Exception as exc:  # no Docker engine here, or it failed: the reaper tries later
        logger.warning("could not remove the sandboxes of attempt %s: %s: %s", label, type(exc).__name__, exc)
        return 0


def remove_dead_workers_sandboxes() -> int:
    """Remove what dead workers of this installation left on this host; never raises."""
    return remove_attempt_sandboxes(None)


def warm_seats_for(matches_at_once: int, most_seats: Callable[[], int] | None = None) -> int:
    """How many warm Docker seats a worker process that plays ``matches_at_once`` matches at
    once keeps: SANDBOX_DOCKER_WARM when a number, else (``auto``) that many matches and one
    more of ``most_seats()`` seats (the caller's count, e.g. the most seats of an active ladder:
    the matches app knows no ladder), at least 2 (validation matches). The one more: a match's
    seats are replaced once its bots imported, and a replacement takes Docker 0.5-3 s on a busy
    machine, so without it the next match found the pool empty and started its seats cold
    (pipeline_bench: 2-seat matches spent 550 ms on average starting seats, against 40 ms at
    the p50; docs/performance.md, session 14)."""
    if settings.SANDBOX_DOCKER_WARM != "auto":
        return int(settings.SANDBOX_DOCKER_WARM)
    try:
        seats = most_seats() if most_seats is not None else 0
    except Exception as exc:  # the database is away at the worker's start: the smallest match
        logger.warning("warm seats: could not read the ladders' seat counts (%s); sizing for 2 seats", exc)
        seats = 0
    return (max(1, matches_at_once) + 1) * max(2, seats)


def start_warm_seats(
    matches_at_once: int, *, most_seats: Callable[[], int] | None = None, release_database: bool = False
) -> int:
    """In a worker process about to take matches, with the Docker backend: remove what dead
    workers of this installation left on this host, then keep ``warm_seats_for`` warm seats
    (filled in the background; seats removed in the background after their match). Returns
    the pool's size (0: none).

    ``release_database``: close this thread's database connections after ``most_seats`` read them
    and before any seat thread starts. A worker asks for it at ``worker_process_init``, where
    Celery's Django fixup closes each open connection's descriptor by number and then closes
    the connection again (psycopg's PQfinish closes that number a second time): a socket a
    seat thread opened in between got that number and was closed under it (warm seats that
    exited with code 1, then the broker's 'Bad file descriptor')."""
    from django.db import connections

    from sandbox import runner

    try:
        if settings.SANDBOX_BACKEND == "process" or backend_name() != "docker":
            return 0
    except SandboxConfigurationError:
        return 0
    label_sandboxes()
    size = warm_seats_for(matches_at_once, most_seats)
    if release_database:
        connections.close_all()
    removed = runner.start_warm_seats(size, match_limits(None, None), settings.SANDBOX_IMAGE)
    logger.info("warm sandbox seats: %s in process %s (%s leftovers of dead workers removed)", size, os.getpid(), removed)
    return size


def stop_warm_seats() -> None:
    """Remove this process's warm seats and seats waiting for removal (a worker's stop)."""
    from sandbox import runner

    runner.stop_warm_seats()


#: bytes of checked uploads this process keeps (``checked_package``): a version plays many matches
#: on one worker, and a zip's check parses each of its modules (10 ms for the reference bots' 27 KB
#: zips, measured), so each upload is checked once per process, not at every match
CHECKED_PACKAGE_BYTES = 64 * 1024 * 1024
_checked: OrderedDict[tuple, BotPackage] = OrderedDict()
_checked_lock = threading.Lock()


def checked_package(filename: str, data: bytes, limits) -> BotPackage:
    """``BotPackage.from_bytes(filename, data, limits)``, from this process's cache when the same
    bytes (by sha256) under the same name and limits were checked before; the least recently used
    leave once the cache holds more than CHECKED_PACKAGE_BYTES. A refused upload is never kept."""
    key = (filename, hashlib.sha256(data).digest(), limits)
    package = _checked_already(key)
    if package is not None:
        return package
    package = BotPackage.from_bytes(filename, data, limits)
    with _checked_lock:
        _checked[key] = package
        while len(_checked) > 1 and sum(_package_bytes(p) for p in _checked.values()) > CHECKED_PACKAGE_BYTES:
            _checked.popitem(last=False)
    return package


def _checked_already(key: tuple) -> BotPackage | None:
    with _checked_lock:
        package = _checked.get(key)
        if package is not None:
            _checked.move_to_end(key)
        return package


def version_package(version, limits) -> BotPackage:
    """``checked_package`` of a stored bot version: its bytes (``source``, which the match's seat
    query leaves behind) are read only when this process has not checked them yet, found by the
    version's stored sha256 (of those very bytes, ``bots.services.bot_version_create``)."""
    package = _checked_already((version.filename, bytes.fromhex(version.sha256), limits))
    if package is not None:
        return package
    return checked_package(version.filename, bytes(version.source), limits)


def _package_bytes(package: BotPackage) -> int:
    return len(package.data) + sum(len(content) for content in package.files.values())


def bots_of(match) -> list:
    """The runner's bots for the match's seats: reference names or checked packages."""
    bots: list = []
    for seat in sorted(match.seats.all(), key=lambda s: s.seat):
        if seat.player_id is not None:
            bots.append(human_seat(match, seat))
        elif seat.bot_version_id is None:
            bots.append(seat.reference_bot)
        else:
            # the limits in force for uploads, so a cap an operator raised holds at match time too
            bots.append(version_package(seat.bot_version, settings.BOT_UPLOAD_LIMITS))
    return bots


def human_seat(match, seat):
    """The seat of the person at ``seat`` of a human game: asks them through the human channel
    (``matches.live.channel``), with the game's clock."""
    from .human import HumanSeat
    from .live import channel, human_prefix

    return HumanSeat(channel(blocking=True), human_prefix(match), clock=match.human_game.clock,
                     name=seat.player.username)


def sandbox_label(match) -> str:
    """The name of one attempt of ``match`` in the sandbox (container labels): ``<id>-<token>``."""
    return f"{match.pk}-{match.attempt_token[:8]}"


def match_limits(time_per_decision: float | None, time_bank: float | None, time_per_match: float | None = None):
    """The sandbox limits of a match: the defaults with its own clocks where it has them."""
    from sandbox.limits import DEFAULT_LIMITS

    changes = {"time_per_decision": time_per_decision, "time_bank": time_bank, "time_per_match": time_per_match}
    return DEFAULT_LIMITS.replace(**{k: float(v) for k, v in changes.items() if v is not None})


def play_match_row(match) -> SandboxMatchResult:
    """Play the match a Match row describes through ``sandbox.runner`` in the backend the
    settings choose, published live; the runner's result as it is (raises InfrastructureError)."""
    from sandbox import runner

    from .live import LivePublisher

    bots = bots_of(match)
    label_sandboxes()
    played = runner.play_sandboxed_match(
        Rules.from_dict(match.rules),
        bots,
        seed=match.seed,
        deals=match.deals,
        duplicate=match.duplicate,
        backend=backend_name(),
        limits=match_limits(match.time_per_decision, match.time_bank, match.time_per_match),
        # Labels the attempt's sandboxes: unique even across databases sharing one Docker engine.
        match_id=sandbox_label(match),
        allow_process=settings.SANDBOX_ALLOW_PROCESS,
        on_step=LivePublisher(match),  # the match's page follows it as it is played (matches.live)
    )
    if len(played.result.players) != len(bots):
        raise ValueError(f"the runner returned {len(played.result.players)} seat results for {len(bots)} seats")
    return played


def seat_columns(played: SandboxMatchResult) -> list[dict[str, Any]]:
    """The MatchSeat columns of each seat of a played match, in seat order.

    Read from the referee's typed result (``engine.match.SeatResult``: ``forfeit`` and
    ``faults`` are ``engine.faults.Fault``) and the sandbox's log beside it, with text a
    bot wrote made safe to store (``clean_text``). A seat's ``fault_kind``/``fault_reason``
    are those of its forfeit, else of its first fault; ``faults`` keeps kind and reason.
    """
    logs, marks = played.logs, played.log_marks
    columns = []
    for index, player in enumerate(played.result.players):
        faults = [{"kind": clean_text(f.kind), "reason": clean_text(f.reason)} for f in player.faults]
        shown = player.forfeit if player.forfeit is not None else (player.faults[0] if player.faults else None)
        log = logs[index] if index < len(logs) else ""
        columns.append(
            {
                "score": float(player.score),
                "rank": int(player.rank),
                "wins": int(player.wins),
                "strikes": int(player.strikes),
                "forfeited": player.forfeit is not None,
                "fault_kind": "" if shown is None else clean_text(shown.kind),
                "fault_reason": "" if shown is None else clean_text(shown.reason),
                "faults": faults,
                "log": clean_text(log),
                # clean_text keeps the length of the text: the marks stay valid
                "log_marks": compact_log_marks(marks[index]) if index < len(marks) and log else {},
            }
        )
    return columns


def compact_log_marks(marks: list[int]) -> dict:
    """The runner's fence posts into a seat's log, stored small: where the first decision
    started, how many decisions, and the characters each printed, trailing zeros left out
    (most bots print rarely; a full log prints nothing more).

    >>> compact_log_marks([9, 9, 21, 21, 21])
    {'start': 9, 'decisions': 4, 'printed': [0, 12]}
    """
    if not marks:
        return {}
    printed = [b - a for a, b in zip(marks, marks[1:], strict=False)]
    while printed and printed[-1] == 0:
        printed.pop()
    return {"start": marks[0], "decisions": len(marks) - 1, "printed": printed}


def clean_text(value) -> str:
    """Text a bot wrote, safe to store: PostgreSQL refuses NUL characters and lone surrogates."""
    text = value if isinstance(value, str) else str(value)
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")


def timing_summary(timings: list[dict], start_seconds: list[float] | None, backend: str) -> dict:
    """Per seat: decisions, mean and max seconds per decision, and seat start time."""
    per_seat = []
    for index, seat in enumerate(timings):
        decisions = int(seat.get("decisions", 0))
        total = float(seat.get("total_seconds", 0.0))
        per_seat.append(
            {
                "decisions": decisions,
                "mean": round(total / decisions, 6) if decisions else None,
                "max": round(float(seat.get("max_seconds", 0.0)), 6),
                "total": round(total, 6),
                "start": round(start_seconds[index], 6) if start_seconds and index < len(start_seconds) else None,
            }
        )
    return {"backend": backend, "seats": per_seat}
