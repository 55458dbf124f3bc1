"""Services of the matches app: create, enqueue, start, play and record matches.

The worker path: a Celery task calls ``match_play(match_id)``. Starting takes
the row lock and a fresh attempt token; storing the result checks the token
under the lock again, so a redelivered or duplicated task never plays or
counts a match twice. Sandboxes are reached only through ``sandbox.runner``.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from arena import queues
from bots.models import BotVersion
from engine.faults import InfrastructureError
from engine.rules import Rules

from . import hooks, sandboxing
from .models import Match, MatchSeat

logger = logging.getLogger(__name__)

#: the queue of each kind of match; validation has its own so uploads never wait behind a tournament
QUEUE_OF_KIND = {Match.Kind.VALIDATION: queues.VALIDATION}


class MatchError(ValueError):
    """A match cannot be created as asked; the message says what and with which value."""


def match_create(
    *,
    kind: str,
    rules: Rules | dict,
    seats: Sequence[BotVersion | str],
    seed: int | None = None,
    games: int = 1,
    duplicate: bool = False,
    time_per_decision: float | None = None,
    time_bank: float | None = None,
    enqueue: bool = True,
) -> Match:
    """Create a queued match; a seat is a BotVersion or a reference bot's name.

    ``time_per_decision`` and ``time_bank`` (seconds) set the bots' clock for this
    match; None keeps the default of sandbox.limits.

    >>> match_create(kind="challenge", rules=Rules(players=2), seats=[v1, "random"])  # doctest: +SKIP
    """
    if kind not in Match.Kind.values:
        raise MatchError(f"unknown match kind {kind!r} (allowed: {', '.join(Match.Kind.values)})")
    rules = rules if isinstance(rules, Rules) else Rules.from_dict(rules)
    if rules.players != len(seats):
        raise MatchError(f"the rules are for {rules.players} players but {len(seats)} seats were given")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise MatchError(f"games must be a positive whole number, got {games!r}")
    try:
        sandboxing.match_limits(time_per_decision, time_bank)
    except (TypeError, ValueError) as exc:
        raise MatchError(f"bad time limits: {exc}") from None
    for seat in seats:
        if isinstance(seat, BotVersion):
            if seat.status == BotVersion.Status.REJECTED:
                raise MatchError(f"{seat.label} was rejected by validation and cannot play")
        elif isinstance(seat, str):
            known = sandboxing.reference_bot_names()
            if seat not in known:
                raise MatchError(f"unknown reference bot {seat!r} (known: {', '.join(known)})")
        else:
            raise MatchError(f"a seat is a BotVersion or a reference bot name, got {seat!r}")
    if seed is None:
        seed = secrets.randbits(62)
    with transaction.atomic():
        match = Match.objects.create(
            kind=kind, rules=rules.to_dict(), seed=seed, games=games, duplicate=duplicate,
            time_per_decision=time_per_decision, time_bank=time_bank,
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(
                match=match,
                seat=index,
                bot_version=seat if isinstance(seat, BotVersion) else None,
                reference_bot=seat if isinstance(seat, str) else "",
            )
            for index, seat in enumerate(seats)
        )
        if enqueue:
            match_enqueue(match)
    return match


def match_enqueue(match: Match, *, countdown: float | None = None) -> None:
    """Send the match's task once the current transaction commits (the worker must see the row)."""
    from . import tasks

    queue = QUEUE_OF_KIND.get(match.kind, queues.MATCHES)
    match_id = match.pk
    Match.objects.filter(pk=match_id).update(enqueued_at=timezone.now())
    # robust: the data is committed whatever happens to the message; a message
    # that never reached the broker is sent again by the sweeper.
    transaction.on_commit(
        lambda: tasks.match_play.apply_async(args=[match_id], queue=queue, countdown=countdown),
        robust=True,
    )


def retry_backoff(attempts: int) -> float:
    """Seconds before attempt ``attempts + 1``: 5, 10, 20, ... capped at 5 minutes, with jitter."""
    return min(300.0, 5.0 * 2 ** max(0, attempts - 1)) * random.uniform(0.8, 1.2)


def match_start(match_id: int, *, now: datetime | None = None) -> str | None:
    """Mark a match running and return the attempt token, or None when it must not start.

    Only a queued match, or a running one past its deadline (its worker died),
    may start; anything else means another task has it or it is finished.
    """
    now = now or timezone.now()
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None:
            logger.warning("match %s does not exist; task dropped", match_id)
            return None
        stale = match.status == Match.Status.RUNNING and match.deadline and match.deadline < now
        if match.status != Match.Status.QUEUED and not stale:
            return None
        if stale:
            logger.warning("match %s: attempt %s passed its deadline; starting again", match_id, match.attempts)
        match.status = Match.Status.RUNNING
        match.attempts += 1
        match.attempt_token = uuid.uuid4().hex
        match.started_at = now
        match.deadline = now + timedelta(seconds=settings.MATCH_STALE_AFTER)
        match.save(update_fields=["status", "attempts", "attempt_token", "started_at", "deadline"])
        return match.attempt_token


def match_play(match_id: int) -> bool:
    """Play a match in the sandbox and store the result; True when this call stored it.

    Infrastructure trouble (the sandbox's InfrastructureError) sends the match
    back to the queue with a growing delay, until MATCH_MAX_ATTEMPTS starts
    were used up; database trouble is re-raised for the task to retry; any
    other failure marks the match failed. A bot's fault is a result, never an error.
    """
    token = match_start(match_id)
    if token is None:
        return False
    match = Match.objects.prefetch_related("seats__bot_version__bot").get(pk=match_id)
    try:
        outcome = sandboxing.play(match)
    except InfrastructureError as exc:
        logger.warning("match %s attempt %s: infrastructure error: %s", match_id, match.attempts, exc)
        match_retry(match_id, token, f"{type(exc).__name__}: {exc}")
        return False
    except (OperationalError, InterfaceError):
        match_release(match_id, token)
        raise
    except SoftTimeLimitExceeded:
        match_fail(match_id, token, f"the match ran longer than the limit of {settings.MATCH_TIME_LIMIT} s")
        return False
    except Exception as exc:
        logger.exception("match %s failed", match_id)
        match_fail(match_id, token, f"{type(exc).__name__}: {exc}")
        return False
    try:
        return match_record_result(match_id, token, outcome)
    except (OperationalError, InterfaceError):
        match_release(match_id, token)
        raise
    except Exception as exc:
        # A hook (ratings, standings) refused the result: nothing was stored.
        logger.exception("match %s: storing the result failed", match_id)
        match_fail(match_id, token, f"storing the result failed: {type(exc).__name__}: {exc}")
        return False


def match_release(match_id: int, token: str) -> bool:
    """Give a started match back to the queue (for a retry); only the token's holder may."""
    try:
        with transaction.atomic():
            updated = Match.objects.filter(
                pk=match_id, status=Match.Status.RUNNING, attempt_token=token
            ).update(status=Match.Status.QUEUED, attempt_token="", deadline=None)
    except Exception:  # the database itself may be what failed; the sweeper will requeue
        logger.exception("match %s could not be released", match_id)
        return False
    return bool(updated)


def match_retry(match_id: int, token: str, reason: str) -> bool:
    """Queue a started match again after a delay, or fail it once its attempts are used up."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.RUNNING or match.attempt_token != token:
            return False
        if match.attempts >= settings.MATCH_MAX_ATTEMPTS:
            return match_fail(
                match_id, token, f"platform error, gave up after {match.attempts} attempts: {reason}"
            )
        match.status = Match.Status.QUEUED
        match.attempt_token = ""
        match.deadline = None
        match.error = sandboxing.clean_text(reason)[:4000]
        match.save(update_fields=["status", "attempt_token", "deadline", "error"])
        match_enqueue(match, countdown=retry_backoff(match.attempts))
    return True


def match_fail(match_id: int, token: str | None, reason: str) -> bool:
    """Mark a match failed with the reason (platform side, no bot blamed) and run its hooks."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.is_finished or (token is not None and match.attempt_token != token):
            return False
        match.status = Match.Status.FAILED
        match.error = sandboxing.clean_text(reason)[:4000]
        match.finished_at = timezone.now()
        match.attempt_token = ""
        match.save(update_fields=["status", "error", "finished_at", "attempt_token"])
        _run_hooks_of_failed(match)
    return True


def _run_hooks_of_failed(match: Match) -> None:
    """Hooks of a failed match; one that raises is logged, the match stays failed."""
    try:
        with transaction.atomic():
            hooks.run(match)
    except Exception:
        logger.exception("match %s: a hook of the failed match raised", match.pk)


def match_cancel(match: Match) -> bool:
    """Cancel a match that has not started; a running or finished match is left alone."""
    with transaction.atomic():
        updated = Match.objects.filter(pk=match.pk, status=Match.Status.QUEUED).update(
            status=Match.Status.CANCELLED, finished_at=timezone.now()
        )
    return bool(updated)


def match_record_result(match_id: int, token: str, outcome: sandboxing.Outcome) -> bool:
    """Store results, replay, logs and timings in one transaction, once; then run the kind's hooks.

    Returns False (and writes nothing) when the token is no longer the match's
    current attempt: another worker took over, or the result is already stored.
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.RUNNING or match.attempt_token != token:
            logger.warning("match %s: result of a stale attempt discarded", match_id)
            return False
        seats = list(match.seats.select_related("bot_version__bot").order_by("seat"))
        for seat, result in zip(seats, outcome.seats, strict=True):
            seat.score = result.score
            seat.rank = result.rank
            seat.wins = result.wins
            seat.strikes = result.strikes
            seat.forfeited = result.forfeited
            seat.fault_kind = result.fault_kind
            seat.fault_reason = result.fault_reason
            seat.faults = result.faults
            seat.log = result.log
            seat.log_marks = result.log_marks
        MatchSeat.objects.bulk_update(
            seats,
            ["score", "rank", "wins", "strikes", "forfeited", "fault_kind", "fault_reason", "faults", "log", "log_marks"],
        )
        match.status = Match.Status.DONE
        match.finished_at = timezone.now()
        match.rounds_played = outcome.rounds
        match.games_played = outcome.games
        match.timings = outcome.timings
        match.replay_gz = gzip.compress(
            json.dumps(outcome.replay, separators=(",", ":"), sort_keys=True).encode(), mtime=0
        )
        match.decision_ms_gz = (
            gzip.compress(json.dumps(outcome.decision_ms, separators=(",", ":")).encode(), mtime=0)
            if outcome.decision_ms
            else None
        )
        match.attempt_token = ""
        match.error = ""
        match.save()
        hooks.run(match)
    return True


def match_sweep_stuck(*, now: datetime | None = None) -> list[int]:
    """Requeue running matches past their deadline (their worker died), fail those out of
    attempts, and send again queued matches whose message is older than MATCH_STALE_AFTER.

    Returns the ids sent (again) to the queue.
    """
    now = now or timezone.now()
    stale = timedelta(seconds=settings.MATCH_STALE_AFTER)
    requeued: list[int] = []
    stuck = Match.objects.filter(status=Match.Status.RUNNING, deadline__lt=now).values_list("pk", flat=True)
    for match_id in list(stuck):
        with transaction.atomic():
            match = Match.objects.select_for_update().get(pk=match_id)
            if match.status != Match.Status.RUNNING or not match.deadline or match.deadline >= now:
                continue
            if match.attempts >= settings.MATCH_MAX_ATTEMPTS:
                match.status = Match.Status.FAILED
                match.error = (
                    f"abandoned: {match.attempts} attempts did not finish "
                    f"(limit MATCH_MAX_ATTEMPTS={settings.MATCH_MAX_ATTEMPTS})"
                )
                match.finished_at = now
                match.attempt_token = ""
                match.save(update_fields=["status", "error", "finished_at", "attempt_token"])
                _run_hooks_of_failed(match)
                continue
            match.status = Match.Status.QUEUED
            match.attempt_token = ""
            match.deadline = None
            match.save(update_fields=["status", "attempt_token", "deadline"])
            match_enqueue(match)
            requeued.append(match_id)
    # A queued match whose message was lost (broker down when it was sent) would
    # wait forever: send it again. A duplicate message finds nothing to do.
    lost = Match.objects.filter(status=Match.Status.QUEUED, enqueued_at__lt=now - stale).exclude(
        pk__in=requeued
    )
    for match in lost.only("pk", "kind"):
        with transaction.atomic():
            match_enqueue(match)
        requeued.append(match.pk)
    if requeued:
        logger.warning("requeued stuck matches: %s", requeued)
    return requeued
