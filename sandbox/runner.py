"""Play one match with bots in sandboxes: the only entry point callers use.

``play_sandboxed_match`` starts one seat per bot in parallel, lets ``engine.match``
referee the games, and stops every seat on every path. A bot never takes the calling
process down: its faults become ``SeatFault`` for the engine (and typed
``engine.faults.Fault`` in its result); only trouble of the platform itself (Docker
gone) raises ``InfrastructureError``.

>>> outcome = play_sandboxed_match(rules, ["random", BotPackage.from_path("bot.py")], seed=7, backend="docker")  # doctest: +SKIP
>>> outcome.result.players[1].forfeit, outcome.logs[1]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sandbox.backends import BACKENDS
from sandbox.backends.inprocess import InProcessSeat
from sandbox.limits import CLOCKS, DEFAULT_LIMITS, Limits
from sandbox.package import BotPackage
from sandbox.seat import SandboxSeat, SeatHandle, reap_seat_dirs

if TYPE_CHECKING:
    from engine.match import MatchResult, OnStep
    from engine.rules import Rules

log = logging.getLogger(__name__)


class SandboxNotAllowed(RuntimeError):
    """The chosen backend may not run untrusted code here (see ``allow_process``)."""


@dataclass(frozen=True)
class SandboxMatchResult:
    """The referee's result as it is (``result``: players with their typed faults, the
    replay, timings) and what the sandbox saw beside it, per bot in the order given."""

    result: MatchResult
    logs: list[str]
    start_seconds: list[float]  # seat start (and bot import) wall time
    backend: str
    match_id: str
    # per bot, fence posts into logs[i]: decide call k printed logs[i][marks[k]:marks[k + 1]]
    log_marks: list[list[int]] = field(default_factory=list)


def play_sandboxed_match(
    rules: Rules,
    bots: Sequence[str | BotPackage],
    *,
    seed: int,
    deals: int = 1,
    duplicate: bool = False,
    backend: str = "inprocess",
    limits: Limits | None = None,
    match_id: str | None = None,
    configuration: dict[str, Any] | None = None,
    names: list[str] | None = None,
    allow_process: bool = False,
    docker_client: Any = None,
    on_game: Callable[[int, int], None] | None = None,
    on_step: OnStep | None = None,
) -> SandboxMatchResult:
    """Play a match; a bot is a reference bot name (in-process) or a ``BotPackage``.

    ``backend="process"`` runs packages with weaker isolation than Docker and is
    refused unless ``allow_process=True`` (the platform passes its
    SANDBOX_ALLOW_PROCESS setting; ``arena play`` passes True for the author's
    own bots). ``configuration`` adds keys for the bots; time limits come from
    ``limits`` only. ``on_game(done, total)`` is called after each game; ``on_step`` is the
    referee's live hook (``engine.match.play_match``).
    """
    from engine import glossary
    from engine import match as engine_match  # the referee; imported late to keep start-up light

    limits = limits or DEFAULT_LIMITS
    if backend not in BACKENDS:
        raise ValueError(f"unknown sandbox backend {backend!r} (allowed: {', '.join(BACKENDS)})")
    from engine import bots as reference_bots

    for index, bot in enumerate(bots):
        if isinstance(bot, str):
            reference_bots.get(bot)  # an unknown name fails here, before any sandbox starts
        elif not isinstance(bot, BotPackage) and not _is_ready_seat(bot):
            raise TypeError(
                f"bot {index} must be a reference bot name or a BotPackage, got {type(bot).__name__} "
                "(or a ready seat: decide, log, faults, log_marks and stop)"
            )
    if backend == "process" and not allow_process and any(isinstance(b, BotPackage) for b in bots):
        raise SandboxNotAllowed(
            "the process sandbox (bubblewrap + rlimits) is weaker than Docker and is off for "
            "untrusted bots; use backend='docker', or pass allow_process=True "
            "(platform setting SANDBOX_ALLOW_PROCESS=1) to accept the weaker isolation"
        )
    extra = dict(configuration or {})
    clash = set(CLOCKS) & set(extra)
    if clash:
        raise ValueError(f"configuration may not set {', '.join(sorted(clash))}: pass limits=Limits(...) instead")
    match_id = match_id or uuid.uuid4().hex[:12]
    names = names or [_display_name(bot) for bot in bots]

    seats: list[InProcessSeat | SandboxSeat | None] = [None] * len(bots)
    start_seconds = [0.0] * len(bots)

    def start(index: int) -> None:
        started = time.monotonic()
        seats[index] = _start_seat(bots[index], index, backend, limits, match_id, docker_client)
        start_seconds[index] = time.monotonic() - started

    try:
        try:
            if backend == "docker":
                # Creating containers is slow API work: one thread per seat.
                with ThreadPoolExecutor(max_workers=max(1, len(bots)), thread_name_prefix=f"seat-{match_id}") as pool:
                    errors = [f.exception() for f in [pool.submit(start, i) for i in range(len(bots))]]
                for error in errors:
                    if error is not None:
                        raise error
            else:
                # Processes are forked from this thread: bwrap's --die-with-parent is
                # bound to the forking thread, so a pool thread's exit would kill it.
                for index in range(len(bots)):
                    start(index)
            # The hosts import their bots concurrently; wait for each in turn.
            for index, seat in enumerate(seats):
                if isinstance(seat, SandboxSeat):
                    started = time.monotonic()
                    seat.wait_ready()
                    start_seconds[index] += time.monotonic() - started
        finally:
            if backend == "docker":
                # The warm seats taken are replaced now that the bots imported, not while
                # they did (the replacements' Docker work would compete with the imports).
                from sandbox import docker_backend

                docker_backend.refill_warm_pool()
        for seat in seats:
            if isinstance(seat, SandboxSeat):
                seat.games = glossary.games_of(deals, len(bots), bool(duplicate))  # its host forks each next game's process ahead
        result = engine_match.play_match(
            rules,
            seats,
            seed=seed,
            deals=deals,
            duplicate=duplicate,
            configuration={**extra, **limits.configuration()},
            names=names,
            on_game=on_game,
            on_step=on_step,
        )
    finally:
        _stop_all(seats)
    played = cast(list[InProcessSeat | SandboxSeat], seats)  # every seat started, or start raised
    return SandboxMatchResult(
        result=result,
        logs=[seat.log.text() for seat in played],
        start_seconds=start_seconds,
        backend=backend,
        match_id=match_id,
        log_marks=[list(seat.log_marks) for seat in played],
    )


def _is_ready_seat(bot: Any) -> bool:
    """A seat built by the caller (e.g. a person at the table): it has the engine's ``decide``
    and what the runner reads after the match (``log``, ``faults``, ``log_marks``, ``stop``)."""
    return all(hasattr(bot, name) for name in ("decide", "log", "faults", "log_marks", "stop"))


def _display_name(bot: Any) -> str:
    if isinstance(bot, str):
        return bot
    return bot.short_name if isinstance(bot, BotPackage) else str(bot.name)


def _start_seat(
    bot: str | BotPackage, index: int, backend: str, limits: Limits, match_id: str, docker_client: Any
) -> InProcessSeat | SandboxSeat:
    """A started seat for ``bot``; a sandboxed one still has to ``wait_ready``; a ready seat is used as it is."""
    if _is_ready_seat(bot):
        return cast("InProcessSeat | SandboxSeat", bot)  # it has every method the runner calls on those
    if isinstance(bot, str):
        from engine import bots as reference_bots

        return InProcessSeat(reference_bots.get(bot), limits, bot)
    name = bot.short_name
    if backend == "inprocess":
        return InProcessSeat.from_package(bot, limits, name)
    if backend == "process":
        from sandbox.backends import process

        handle: SeatHandle = process.start_seat(bot, limits, label=f"{match_id}-{index}")
    else:
        from sandbox import docker_backend

        handle = docker_backend.start_seat(bot, limits, match_id=match_id, seat=index, client=docker_client,
                                           defer_refill=True)
    return SandboxSeat(handle, limits, name)


def _stop_all(seats: Sequence[InProcessSeat | SandboxSeat | None]) -> None:
    """Stop every started seat in parallel, each whatever the others do.

    A seat that cannot be removed (Docker gone at the end of a finished match)
    is logged, not raised: the result is valid, and ``reap`` removes the
    labelled container once Docker is back.
    """
    started = [seat for seat in seats if seat is not None]
    if not started:
        return
    with ThreadPoolExecutor(max_workers=len(started)) as pool:
        outcomes = [(seat, pool.submit(seat.stop)) for seat in started]
        errors = [(seat, f.exception()) for seat, f in outcomes]
    for seat, error in errors:
        if error is not None:
            log.error("stopping the seat of %s failed (the reaper removes what is left): %s", seat.name, error)


def docker_available(image: str | None = None) -> bool:
    """True when a Docker engine answers and has the sandbox image (for choosing a backend)."""
    from sandbox import docker_backend

    return docker_backend.available(image)


def reap(max_age_seconds: float | None = None) -> int:
    """Remove sandbox containers and seat directories older than ``max_age_seconds``.

    Returns how many containers went; see ``docker_backend.reap``. Raises
    ``InfrastructureError`` when Docker cannot be reached (directories are
    cleaned all the same).
    """
    from sandbox import docker_backend

    age = DEFAULT_LIMITS.max_match_seconds if max_age_seconds is None else max_age_seconds
    reap_seat_dirs(age, [None])
    return docker_backend.reap(age)


def docker_installation(name: str) -> None:
    """Label this process's Docker sandboxes with installation ``name``: the reaper and the
    leftover removal touch only those (``docker_backend.configure_installation``)."""
    from sandbox import docker_backend

    docker_backend.configure_installation(name)


def remove_match_sandboxes(match_id: str | None) -> int:
    """Remove the sandbox containers of match ``match_id`` (None: of no match) and what dead
    processes of this installation left on this host; see ``docker_backend.remove_match``."""
    from sandbox import docker_backend

    if match_id is None:
        return docker_backend.remove_leftovers()
    return docker_backend.remove_match(match_id)


def start_warm_seats(size: int, limits: Limits | None = None, image: str | None = None) -> int:
    """Remove what dead processes of this installation left here, then keep ``size`` warm
    Docker seats in this process, filled in the background, and stop seats in the background
    after their match (what a worker does). Returns how many leftovers went."""
    from sandbox import docker_backend

    removed = docker_backend.remove_leftovers()
    pool = docker_backend.configure_warm_pool(size, defer_stops=True)
    if pool is not None:
        pool.refill(docker_backend.get_client(), image or docker_backend.IMAGE, limits or DEFAULT_LIMITS)
    return removed


def stop_warm_seats() -> None:
    """Remove this process's warm seats and the seats still waiting for removal."""
    from sandbox import docker_backend

    docker_backend.close_warm_pool()


def hold_seat_removals(hold: bool) -> None:
    """Keep stopped seats' removal waiting (``True``, e.g. while a result is recorded) or let it
    go (``False``); a hold lasts at most ``docker_backend.HOLD_MAX_SECONDS``."""
    from sandbox import docker_backend

    if not docker_backend.DEFER_STOPS:
        return
    removals = docker_backend.removals()
    removals.hold() if hold else removals.release()
