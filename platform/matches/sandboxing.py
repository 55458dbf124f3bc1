"""The platform's side of the sandbox: which backend, which bots, and the result in our terms.

The only module of the platform that calls ``sandbox.runner``; it never
imports a backend. ``play(match)`` turns a Match row into a runner call and
the runner's result into an ``Outcome`` the services store.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings

from engine.rules import Rules
from sandbox.package import BotPackage

logger = logging.getLogger(__name__)


class SandboxConfigurationError(RuntimeError):
    """The settings do not allow any sandbox to run this match (not a bot's fault, not transient)."""


@dataclass(frozen=True)
class SeatOutcome:
    """What one seat achieved, in the order the match's seats were given."""

    score: float
    rank: int
    wins: int
    strikes: int = 0
    forfeited: bool = False
    fault_kind: str = ""
    fault_reason: str = ""
    faults: list = field(default_factory=list)
    log: str = ""
    log_marks: dict = field(default_factory=dict)  # compact_log_marks of the seat ({} with no log)


@dataclass(frozen=True)
class Outcome:
    """A played match, ready to store."""

    seats: list[SeatOutcome]
    rounds: int
    games: int
    timings: dict
    replay: dict
    decision_ms: list = field(default_factory=list)  # per game, parallel to the replay's action records


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


def reap_sandboxes() -> int:
    """Remove sandbox containers left by dead workers (older than MATCH_STALE_AFTER); how many."""
    from engine.faults import InfrastructureError
    from sandbox import runner

    if settings.SANDBOX_BACKEND == "process":
        return 0
    try:
        return runner.reap(max_age_seconds=settings.MATCH_STALE_AFTER)
    except InfrastructureError:
        if settings.SANDBOX_BACKEND == "auto":
            return 0  # no Docker engine here: the process sandbox leaves no containers
        raise


def bots_of(match) -> list:
    """The runner's bots for the match's seats: reference names or checked packages."""
    bots = []
    for seat in sorted(match.seats.all(), key=lambda s: s.seat):
        if seat.bot_version_id is None:
            bots.append(seat.reference_bot)
        else:
            version = seat.bot_version
            bots.append(BotPackage.from_bytes(version.filename, bytes(version.source)))
    return bots


def sandbox_label(match) -> str:
    """The name of one attempt of ``match`` in the sandbox (container labels): ``<id>-<token>``."""
    return f"{match.pk}-{match.attempt_token[:8]}"


def match_limits(time_per_decision: float | None, time_bank: float | None):
    """The sandbox limits of a match: the defaults with its own clock where it has one."""
    from sandbox.limits import DEFAULT_LIMITS

    changes = {"time_per_decision": time_per_decision, "time_bank": time_bank}
    return DEFAULT_LIMITS.replace(**{k: float(v) for k, v in changes.items() if v is not None})


def play(match) -> Outcome:
    """Play ``match`` through sandbox.runner and return its outcome (raises InfrastructureError)."""
    from sandbox import runner

    bots = bots_of(match)
    result = runner.play_match(
        Rules.from_dict(match.rules),
        bots,
        seed=match.seed,
        games=match.games,
        duplicate=match.duplicate,
        backend=backend_name(),
        limits=match_limits(match.time_per_decision, match.time_bank),
        # Labels the attempt's sandboxes: unique even across databases sharing one Docker engine.
        match_id=sandbox_label(match),
        allow_process=settings.SANDBOX_ALLOW_PROCESS,
    )
    return outcome_of(result, len(bots))


def outcome_of(result, seats: int) -> Outcome:
    """Translate the runner's result into an Outcome (one SeatOutcome per seat, in seat order)."""
    players = list(result.players)
    if len(players) != seats:
        raise ValueError(f"the runner returned {len(players)} seat results for {seats} seats")
    logs = list(result.logs)
    marks = list(getattr(result, "log_marks", None) or [])
    outcomes = []
    for index, player in enumerate(players):
        faults = [
            {"kind": clean_text(f.get("kind", "")), "reason": clean_text(f.get("reason", ""))}
            for f in player.faults
        ]
        if player.forfeit:
            # The referee writes a forfeit as "kind: reason".
            kind, _, reason = clean_text(player.forfeit).partition(": ")
        elif faults:
            kind, reason = faults[0]["kind"], faults[0]["reason"]
        else:
            kind, reason = "", ""
        outcomes.append(
            SeatOutcome(
                score=float(player.score),
                rank=int(player.rank),
                wins=int(player.wins),
                strikes=int(player.strikes),
                forfeited=bool(player.forfeit),
                fault_kind=kind,
                fault_reason=reason,
                faults=faults,
                log=clean_text(logs[index]) if index < len(logs) else "",
                # clean_text keeps the length of the text: the marks stay valid
                log_marks=compact_log_marks(marks[index]) if index < len(marks) and index < len(logs) and logs[index] else {},
            )
        )
    return Outcome(
        seats=outcomes,
        rounds=int(result.rounds),
        games=int(result.games),
        timings=timing_summary(result.timings, getattr(result, "start_seconds", None), getattr(result, "backend", "")),
        replay=result.replay,
        decision_ms=list(getattr(result, "decision_ms", None) or []),
    )


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
