"""Services of the matches app: create, enqueue, start, play and record matches.

The worker path: a Celery task calls ``match_play(match_id)``. Starting takes
the row lock, a fresh attempt token and a lease (database clock) that a thread
of the worker renews while the match plays; storing the result checks the token
and the lease under the lock again, so a redelivered or duplicated task never
plays or counts a match twice, and a match whose lease expired (its worker died
or lost the database) is taken again by any worker. In a worker the result is stored
from a thread of its own (``ResultRecorder``) while the worker takes its next match.
Sandboxes are reached only through ``sandbox.runner``.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
import os
import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from celery.exceptions import SoftTimeLimitExceeded
from core.services import (
    CHANGED_ONLY,
    converted_row,
    db_converters,
    model_rows,
    update_returning,
    values_update_params,
    values_update_sql,
    with_rows_sql,
)
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import InterfaceError, OperationalError, connection, connections, transaction
from django.db.models import F, Prefetch, Q, prefetch_related_objects
from django.db.models.functions import Now
from django.utils import timezone

from arena import queues
from bots.models import Bot, BotVersion
from bots.selectors import EVENT_MATCH_KINDS
from engine.faults import InfrastructureError
from engine.rules import Rules

from . import hooks, sandboxing, selectors
from .models import Match, MatchSeat

if TYPE_CHECKING:
    from sandbox.runner import SandboxMatchResult

logger = logging.getLogger(__name__)

#: the queue of each kind of match; validation has its own so uploads never wait behind a tournament
QUEUE_OF_KIND = {Match.Kind.VALIDATION: queues.VALIDATION, Match.Kind.HUMAN: queues.PLAY}
#: a queued match whose message is older than this (and MATCH_STALE_AFTER when that is set)
#: is sent again by the sweeper: its message may have been lost with the broker
RESEND_QUEUED_AFTER = 1800.0
#: seconds a worker keeps trying a database step of the worker path (start, store, requeue)
#: through connection errors before the task gives up to Celery's retry: outages of up to a
#: minute delay a match but lose none
DB_RETRY_SECONDS = 90.0
#: seconds a worker that hit an infrastructure error leaves the match to another healthy worker
AVOID_WORKER_SECONDS = 60.0
#: seconds before a declined match (sick worker, or one it should avoid) is offered again
DECLINE_COUNTDOWN = 1.0
#: the broker's key whose absence means the broker lost its data (restarted empty): every
#: queued match's message is sent again (one key per database sharing a broker)
BROKER_MARKER_KEY = "uno-arena:broker-marker:{database}"

DB_ERRORS = (OperationalError, InterfaceError)


class MatchError(ValueError):
    """A match cannot be created as asked; the message says what and with which value."""


def seat_log_read(user, seat: MatchSeat, *, path: str, match: Match | None = None) -> bool:
    """May ``user`` be shown ``seat``'s log? Decided by ``selectors.can_view_seat_log``'s rule; a read
    by anyone but the bot's owner is written to the audit log (``bots.SourceAccess``) first."""
    from bots.services import private_read

    if seat.bot_version_id is None:
        return False
    match = match or seat.match
    return private_read(
        user=user, version=seat.bot_version, what="seat_log", path=path, match_kind=match.kind, match_id=match.pk
    )


def match_create(
    *,
    kind: str,
    rules: Rules | dict,
    seats: Sequence[BotVersion | str | AbstractBaseUser],
    seed: int | None = None,
    deals: int = 1,
    duplicate: bool = False,
    time_per_decision: float | None = None,
    time_bank: float | None = None,
    time_per_match: float | None = None,
    enqueue: bool = True,
) -> Match:
    """Create a queued match; a seat is a BotVersion, a reference bot's name, or (a human game
    only) a user: a person who decides in the browser (the play app).

    ``time_per_decision``, ``time_bank`` and ``time_per_match`` (seconds) set the
    bots' clocks for this match; None keeps the default of sandbox.limits.

    >>> match_create(kind="challenge", rules=Rules(players=2), seats=[v1, "random"])  # doctest: +SKIP
    """
    if kind not in Match.Kind.values:
        raise MatchError(f"unknown match kind {kind!r} (allowed: {', '.join(Match.Kind.values)})")
    rules = rules if isinstance(rules, Rules) else Rules.from_dict(rules)
    if rules.players != len(seats):
        raise MatchError(f"the rules are for {rules.players} players but {len(seats)} seats were given")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise MatchError(f"deals must be a positive whole number, got {deals!r}")
    try:
        limits = sandboxing.match_limits(time_per_decision, time_bank, time_per_match)
    except (TypeError, ValueError) as exc:
        raise MatchError(f"bad time limits: {exc}") from None
    excess = selectors.match_time_excess(players=rules.players, deals=deals, duplicate=duplicate, limits=limits)
    if excess:
        raise MatchError(f"this format {excess}")
    for seat in seats:
        if isinstance(seat, BotVersion):
            if seat.status == BotVersion.Status.REJECTED:
                raise MatchError(f"{seat.label} was rejected by validation and cannot play")
        elif isinstance(seat, str):
            known = sandboxing.reference_bot_names()
            if seat not in known:
                raise MatchError(f"unknown reference bot {seat!r} (known: {', '.join(known)})")
        elif isinstance(seat, AbstractBaseUser):
            if kind != Match.Kind.HUMAN:
                raise MatchError(f"a person can sit only at a human game, not at a {kind} match")
        else:
            raise MatchError(f"a seat is a BotVersion, a reference bot name or a user, got {seat!r}")
    if seed is None:
        seed = secrets.randbits(62)
    with transaction.atomic():
        match = Match.objects.create(
            kind=kind, rules=rules.to_dict(), seed=seed, deals=deals, duplicate=duplicate,
            time_per_decision=time_per_decision, time_bank=time_bank, time_per_match=time_per_match,
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(
                match=match,
                seat=index,
                bot_version=seat if isinstance(seat, BotVersion) else None,
                reference_bot=seat if isinstance(seat, str) else "",
                player=seat if isinstance(seat, AbstractBaseUser) else None,
            ).fill_copies()
            for index, seat in enumerate(seats)
        )
        if kind in EVENT_MATCH_KINDS:
            # the entrants of an event: organizers may judge them (bots.selectors.bot_plays_in_events)
            versions = [seat for seat in seats if isinstance(seat, BotVersion)]
            if versions:
                Bot.objects.filter(pk__in={v.bot_id for v in versions}, plays_in_events=False).update(
                    plays_in_events=True
                )
        if enqueue:
            match_enqueue(match)
    return match


def match_enqueue(match: Match, *, countdown: float | None = None) -> None:
    """Send the match's task once the current transaction commits (the worker must see the row)."""
    from . import tasks

    queue = QUEUE_OF_KIND.get(match.kind, queues.MATCHES)
    match_id = match.pk
    # The match's own limits (its format and clocks), not a global one: reaching
    # them is the platform's fault, never a bot's that played within its clocks.
    soft, hard = selectors.match_time_limits(match)
    # enqueued_at: the sweeper compares it with the database's clock; stale_after: what a start's
    # deadline is from (match_begin), known now so that a start is one statement
    stale_after = timedelta(seconds=selectors.match_own_stale_after(match, limits=(soft, hard)))
    Match.objects.filter(pk=match_id).update(enqueued_at=Now(), send_failed_at=None, stale_after=stale_after)
    match.stale_after = stale_after

    def send() -> None:
        try:
            tasks.match_play.apply_async(
                args=[match_id], queue=queue, countdown=countdown, soft_time_limit=soft, time_limit=hard
            )
        except Exception as exc:  # the broker is down: the sweeper sends it again once it is back
            logger.warning("match %s: sending its task failed (%s); the sweeper sends it again", match_id, exc)
            try:
                Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).update(send_failed_at=Now())
            except Exception:  # the database too: the sweeper's resend of old messages catches it
                logger.exception("match %s: could not record the failed send", match_id)

    # The data is committed whatever happens to the message; a message that never
    # reached the broker is sent again by the sweeper.
    transaction.on_commit(send, robust=True)


def retry_backoff(attempts: int) -> float:
    """Seconds before attempt ``attempts + 1``: 5, 10, 20, ... capped at 5 minutes, with jitter."""
    return min(300.0, 5.0 * 2 ** max(0, attempts - 1)) * random.uniform(0.8, 1.2)


def database_now() -> datetime:
    """The database's clock: leases and deadlines are compared with it, never a host's, so
    workers on hosts whose clocks disagree still agree on them. (SQLite, the embedded
    single-host default: this host's clock.)"""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement_timestamp()")
            return cursor.fetchone()[0]
    return timezone.now()


def db_retry(what: str, fn, *args, budget: float = DB_RETRY_SECONDS, **kwargs):
    """Call ``fn`` and, through database connection errors (a restarted or unreachable
    PostgreSQL, a terminated connection), call it again with a fresh connection for up to
    ``budget`` seconds; then the error is raised. Only for idempotent steps of the worker path;
    inside a transaction it calls once (a connection cannot be replaced there)."""
    if connection.in_atomic_block:
        return fn(*args, **kwargs)
    give_up = time.monotonic() + budget
    pause = 0.25
    while True:
        try:
            return fn(*args, **kwargs)
        except DB_ERRORS as exc:
            if time.monotonic() + pause > give_up:
                raise
            logger.warning("%s: database error, trying again in %.2f s: %s", what, pause, str(exc).strip())
            _drop_connection()
            time.sleep(pause)
            pause = min(pause * 2, 4.0)


def _drop_connection() -> None:
    """Close this thread's database connection, broken or not (the next query opens a new one)."""
    try:
        connection.close()
    except Exception:  # closing a dead connection may fail; it is gone either way
        connection.connection = None


def match_start(match_id: int, *, now: datetime | None = None, worker: str = "") -> str | None:
    """Mark a match running, take its lease and return the attempt token, or None when it must not start.

    Only a queued match, or a running one whose lease expired (its worker died or lost the
    database) or that passed its deadline, may start; anything else means another attempt has
    it or it is finished. ``now`` (tests) stands for the database's clock.
    """
    match = _started(match_id, now=now, worker=worker)
    return None if match is None else match.attempt_token


def match_begin(match_id: int, *, now: datetime | None = None, worker: str = "", avoid: bool = False) -> Match | None:
    """``match_start``, returning the started match (its seats, bot versions, bots and players
    read with it, as the sandbox needs them) instead of its token; None when it must not start.

    ``avoid`` (a worker's task): a queued match whose last attempt hit an infrastructure error on
    ``worker`` within AVOID_WORKER_SECONDS is handed over (its task sent again, no attempt) when
    another healthy worker is alive. One statement in the common case (a queued match sent by
    ``match_enqueue``, not to be avoided, on PostgreSQL): the start and the read of its seats
    (``_taken``); else the row is locked and read, and judged (``_started``), then its seats read."""
    if now is None:
        match = _taken(match_id, worker=worker, avoid=avoid)
        if match is not None:
            return match
    match = _started(match_id, now=now, worker=worker, avoid=avoid)
    if match is not None:
        prefetch_related_objects([match], seats_for_play())
    return match


def _taken(match_id: int, *, worker: str, avoid: bool) -> Match | None:
    """A queued match started by one ``UPDATE ... RETURNING`` (autocommit: its own transaction), as
    ``_started`` would start it, the database's clock read by the statement itself, and its seats
    read as ``seats_for_play()`` reads them (PostgreSQL: by the same statement, ``_TakePlan``); None
    when the update found no such row: the match is not queued (running, finished, gone), was queued
    before ``stale_after`` existed or without ``match_enqueue``, or ``worker`` should avoid it;
    ``_started`` judges those."""
    setting = selectors.stale_after_setting()  # the deadline as selectors.match_stale_after has it
    lease = timedelta(seconds=settings.MATCH_LEASE_SECONDS)
    worker = (worker or "")[:255]
    if connection.vendor == "postgresql":
        return _take_plan(connection.alias).take(
            connection,
            match_id,
            token=uuid.uuid4().hex,
            stale_after=None if setting is None else timedelta(seconds=setting),
            lease=lease,
            worker=worker,
            avoided_by=worker if avoid and worker else None,
        )
    queued = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED, stale_after__isnull=False)
    if avoid and worker:
        queued = queued.exclude(avoid_worker=worker, avoid_until__gt=Now())
    taken = update_returning(
        queued,
        [field.name for field in Match._meta.concrete_fields],
        status=Match.Status.RUNNING,
        attempts=F("attempts") + 1,
        attempt_token=uuid.uuid4().hex,
        started_at=Now(),
        deadline=Now() + (F("stale_after") if setting is None else timedelta(seconds=setting)),
        lease_expires_at=Now() + lease,
        worker=worker,
    )
    if not taken:
        return None
    prefetch_related_objects(taken, seats_for_play())
    return taken[0]


#: ``Now()`` as Django compiles it on PostgreSQL (the statement's own timestamp): the database's
#: clock in the worker path's statements built once per process (``_TakePlan``, ``_result_write_sql``)
DB_NOW_SQL = "STATEMENT_TIMESTAMP()"


class _TakePlan:
    """``_taken``'s one statement on PostgreSQL, built once per process: a data-modifying ``WITH``
    (the start: ``_taken``'s update, the row's every column returned) joined to the query of
    ``seats_for_play()`` as Django compiles it (its columns, joins and deferred fields), so the
    common start of a match is one round trip and no ORM compilation.

    Its rows become instances as Django makes them (``Model.from_db``, the fields' converters, the
    ``select_related`` populators of the compiled query), the match's seats left in its prefetch
    cache as ``prefetch_related_objects([match], seats_for_play())`` leaves them: reading them
    again (``match_record_result``) reads nothing. (The seats come from the snapshot the update
    ran in; only the match's row is written, and it is read from what the update returned.)"""

    def __init__(self, alias: str):
        from django.db.models.expressions import RawSQL
        from django.db.models.query import get_related_populators

        db = connections[alias]
        quote = db.ops.quote_name
        meta = Match._meta
        table = quote(meta.db_table)

        def column(name: str) -> str:
            return quote(meta.get_field(name).column)

        now, taken, seats = DB_NOW_SQL, quote("taken"), quote("seats")
        self.alias = alias
        self.match_names = [field.attname for field in meta.concrete_fields]
        self.match_converters = db_converters(db, [field.get_col(meta.db_table) for field in meta.concrete_fields])
        update = (
            f"UPDATE {table} SET {column('status')} = %s, {column('attempts')} = {column('attempts')} + 1, "
            f"{column('attempt_token')} = %s, {column('started_at')} = {now}, "
            f"{column('deadline')} = {now} + COALESCE(%s, {column('stale_after')}), "
            f"{column('lease_expires_at')} = {now} + %s, {column('worker')} = %s "
            f"WHERE {table}.{quote(meta.pk.column)} = %s AND {column('status')} = %s "
            f"AND {column('stale_after')} IS NOT NULL "
            # a worker told to avoid the match (its last attempt's infrastructure failed) leaves it
            f"AND ({column('avoid_worker')} = %s AND {column('avoid_until')} > {now}) IS NOT TRUE "
            f"RETURNING {', '.join(quote(field.column) for field in meta.concrete_fields)}"
        )
        # the seats as the prefetch reads them, of the row the update returned
        self.seats = seats_for_play().queryset
        compiler = self.seats.filter(match=RawSQL(f"{taken}.{quote(meta.pk.column)}", ())).query.get_compiler(alias)
        seats_sql, seats_params = compiler.as_sql()
        if seats_params:  # the statement's parameters are the update's only
            raise ValueError(f"seats_for_play()'s query has parameters of its own: {seats_params}")
        self.sql = (
            f"WITH {taken} AS ({update}) SELECT {taken}.*, {seats}.* FROM {taken} "
            f"LEFT JOIN LATERAL ({seats_sql}) AS {seats} ON TRUE"
        )
        select, klass_info = compiler.select, compiler.klass_info
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        self.seat_slice = slice(start, end)
        self.seat_names = [column[0].target.attname for column in select[start:end]]
        self.seat_pk = start + self.seat_names.index(MatchSeat._meta.pk.attname)
        self.seat_converters = db_converters(db, [column[0] for column in select])
        self.seat_populators = get_related_populators(klass_info, select, alias)

    def take(
        self, db, match_id: int, *, token: str, stale_after: timedelta | None, lease: timedelta, worker: str,
        avoided_by: str | None,
    ) -> Match | None:
        """Start the queued match ``match_id`` (``_taken``'s rules) on the connection ``db``; the
        match with its seats read, or None when no row was started."""
        params = (Match.Status.RUNNING, token, stale_after, lease, worker, match_id, Match.Status.QUEUED, avoided_by)
        with db.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        if not rows:
            return None
        width = len(self.match_names)
        match = Match.from_db(self.alias, self.match_names, converted_row(db, rows[0][:width], self.match_converters))
        seats = []
        for row in rows:
            values = row[width:]
            if values[self.seat_pk] is None:
                continue  # a match without seats: the one row of the outer join
            values = converted_row(db, values, self.seat_converters)
            seat = MatchSeat.from_db(self.alias, self.seat_names, values[self.seat_slice])
            for populator in self.seat_populators:
                populator.populate(values, seat)
            seat.match = match  # as the prefetch of a reverse foreign key sets it
            seats.append(seat)
        seats.sort(key=lambda seat: seat.seat)  # the query's order (the outer join keeps none)
        # the prefetch cache, as prefetch_related_objects fills it from seats_for_play()
        cached = match.seats._apply_rel_filters(self.seats._chain())
        cached._result_cache = seats
        cached._prefetch_done = True
        match._prefetched_objects_cache = {"seats": cached}
        return match


@functools.cache
def _take_plan(alias: str) -> _TakePlan:
    """The process's ``_TakePlan`` for the database ``alias`` (built at its first start)."""
    return _TakePlan(alias)


def _started(match_id: int, *, now: datetime | None = None, worker: str = "", avoid: bool = False) -> Match | None:
    """The match, started (its row written and committed), or None when it must not start
    (``match_begin``'s rules); its seats are not read here."""
    with transaction.atomic():
        match = Match.objects.select_for_update().annotate(db_now=Now()).filter(pk=match_id).first()
        if match is None:
            logger.warning("match %s does not exist; task dropped", match_id)
            return None
        now = now or _clock(match)
        if avoid and worker and match.status == Match.Status.QUEUED and _hand_over(match, worker, now):
            return None
        if match.status == Match.Status.RUNNING:
            expired = match.lease_expires_at is not None and match.lease_expires_at <= now
            overdue = match.deadline is not None and match.deadline < now
            if not (expired or overdue):
                return None
            logger.warning(
                "match %s: attempt %s %s; starting again", match_id, match.attempts,
                f"lost its lease (worker {match.worker or '?'})" if expired else "passed its deadline",
            )
        elif match.status != Match.Status.QUEUED:
            return None
        match.status = Match.Status.RUNNING
        match.attempts += 1
        match.attempt_token = uuid.uuid4().hex
        match.started_at = now
        match.deadline = now + timedelta(seconds=selectors.match_stale_after(match))
        match.lease_expires_at = now + timedelta(seconds=settings.MATCH_LEASE_SECONDS)
        match.worker = (worker or "")[:255]
        match.save(
            update_fields=["status", "attempts", "attempt_token", "started_at", "deadline", "lease_expires_at", "worker"]
        )
    return match


def _hand_over(match: Match, worker: str, now: datetime) -> bool:
    """Should ``worker`` leave the queued ``match`` (its row locked) to another worker? It does, and
    sends the match's task again, when its own infrastructure failed the match's last attempt within
    AVOID_WORKER_SECONDS and another healthy worker is alive."""
    if match.avoid_worker != worker or match.avoid_until is None or match.avoid_until <= now:
        return False
    from matches import worker as worker_health

    if not worker_health.other_healthy_workers(worker):
        return False
    logger.warning(
        "match %s: declined by %s (its last attempt hit an infrastructure error on this worker); offered to "
        "another worker", match.pk, worker,
    )
    match_enqueue(match, countdown=DECLINE_COUNTDOWN)
    return True


def seats_for_play() -> Prefetch:
    """A match's seats in order with what playing and rating them reads (one query, joined; the
    result's hooks find them read: ``seats_played(match)``); a
    version's validation log and runs, which can be long and which no match reads, and its bytes,
    which a worker reads once per version (``sandboxing.version_package``), stay behind (read if
    asked for)."""
    return Prefetch(
        "seats",
        queryset=MatchSeat.objects.select_related("bot_version__bot", "player")
        .defer("bot_version__validation_log", "bot_version__validation_runs", "bot_version__source")
        .order_by("seat"),
    )


def seats_played(match: Match) -> list[MatchSeat]:
    """``match``'s seats in order as ``seats_for_play`` reads them: those read with it (``match_begin``'s,
    a result's), else read now. Building the prefetch's queryset only to find them read took 0.09 ms
    of CPU, once for the result and once for its ladder hook."""
    if "seats" not in getattr(match, "_prefetched_objects_cache", {}):
        prefetch_related_objects([match], seats_for_play())
    return list(match.seats.all())


def _clock(match: Match) -> datetime:
    """The database's clock as read with ``match`` (annotated ``db_now=Now()``; SQLite: this host's)."""
    value = getattr(match, "db_now", None)
    if connection.vendor != "postgresql" or value is None:
        return database_now()
    return value


def match_lease_renew(match_id: int, token: str) -> bool:
    """Extend the attempt's lease by MATCH_LEASE_SECONDS from the database's now; False when the
    attempt no longer holds it (another took over, the match ended, or it expired first).

    One short statement: it never waits long for the row (lock_timeout) and holds no lock that
    storing a result or matchmaking would wait for."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'; SET LOCAL statement_timeout = '5s'")
        return bool(
            Match.objects.filter(
                pk=match_id, status=Match.Status.RUNNING, attempt_token=token, lease_expires_at__gt=Now()
            ).update(lease_expires_at=Now() + timedelta(seconds=settings.MATCH_LEASE_SECONDS))
        )


class LeaseKeeper:
    """Renews an attempt's lease while the match plays, from the process's one renewal thread
    (``_LeaseRenewals``, which serves every keeper of the process: a thread started for each
    match cost milliseconds of a saturated machine's wall).

    Database errors do not stop it: it tries again every second. ``lost`` is set once the lease
    is gone: the database refused the renewal (expired, taken over), or no renewal succeeded
    within MATCH_LEASE_SECONDS (by this host's monotonic clock, which only measures a duration).
    A lost attempt is abandoned: its result is not recorded.
    """

    def __init__(self, match_id: int, token: str):
        self.match_id = match_id
        self.token = token
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._good_until = self._due = 0.0

    def start(self) -> LeaseKeeper:
        now = time.monotonic()
        self._good_until = now + settings.MATCH_LEASE_SECONDS
        self._due = now + settings.MATCH_LEASE_RENEW_SECONDS
        _lease_renewals.add(self)
        return self

    def stop(self) -> None:
        """Stop renewing (the attempt ended: its result stored, refused or abandoned); a renewal
        of this lease under way is waited for (up to 10 s)."""
        self._stop.set()
        _lease_renewals.remove(self, timeout=10)

    def __enter__(self) -> LeaseKeeper:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _renew(self) -> bool:
        """Renew the lease once (the renewal thread, when it is due); False when this keeper is
        done: its lease lost, or the attempt ended meanwhile."""
        try:
            asked = time.monotonic()
            renewed = match_lease_renew(self.match_id, self.token)
        except Exception as exc:
            _drop_connection()
            if self._stop.is_set():
                return False  # the attempt ended meanwhile (its result holds the row lock)
            if time.monotonic() >= self._good_until and not self.lost.is_set():
                logger.warning("match %s: its lease expired while it could not be renewed (%s)", self.match_id, exc)
                self.lost.set()
                return False
            logger.warning("match %s: renewing its lease failed, trying again: %s", self.match_id, exc)
            self._due = time.monotonic() + 1.0
            return True
        if not renewed:
            if self._stop.is_set():
                return False  # the result was stored meanwhile: nothing to renew
            logger.warning("match %s: its lease is gone (expired or taken over): abandoning the attempt", self.match_id)
            self.lost.set()
            return False
        self._good_until = asked + settings.MATCH_LEASE_SECONDS
        self._due = time.monotonic() + settings.MATCH_LEASE_RENEW_SECONDS
        return True


class _LeaseRenewals:
    """The process's renewal thread: renews each started ``LeaseKeeper``'s lease when it is due,
    one at a time, on a database connection of its own, which it closes whenever no lease is left
    to renew. Started at the process's first lease (again in a forked child)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._keepers: set[LeaseKeeper] = set()
        self._renewing: LeaseKeeper | None = None
        self._thread: threading.Thread | None = None

    def add(self, keeper: LeaseKeeper) -> None:
        with self._changed:
            self._keepers.add(keeper)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lease-renewals", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def remove(self, keeper: LeaseKeeper, *, timeout: float) -> None:
        give_up = time.monotonic() + timeout
        with self._changed:
            self._keepers.discard(keeper)
            self._changed.notify_all()
            while self._renewing is keeper and (left := give_up - time.monotonic()) > 0:
                self._changed.wait(left)

    def _next(self, connected: bool) -> LeaseKeeper | None:
        """Wait for the next lease due (None: none left, and this thread is connected: it closes
        its connection first)."""
        with self._changed:
            while True:
                if not self._keepers:
                    if connected:
                        return None
                    self._changed.wait()
                    continue
                keeper = min(self._keepers, key=lambda k: k._due)
                wait = keeper._due - time.monotonic()
                if wait <= 0:
                    self._renewing = keeper
                    return keeper
                self._changed.wait(wait)

    def _run(self) -> None:
        connected = False
        while True:
            keeper = self._next(connected)
            if keeper is None:
                _drop_connection()
                connected = False
                continue
            connected = True
            more = False
            try:
                more = keeper._renew()
            except Exception:  # a bug, not the database: this lease is not renewed again
                logger.exception("match %s: renewing its lease raised", keeper.match_id)
            finally:
                with self._changed:
                    self._renewing = None
                    if not more:
                        self._keepers.discard(keeper)
                    self._changed.notify_all()


_lease_renewals = _LeaseRenewals()
# a forked child (Celery's prefork pool) starts its own thread, with a lock no thread of the parent holds
os.register_at_fork(after_in_child=_lease_renewals._reset)


def _declined(match_id: int, worker: str) -> bool:
    """Should ``worker`` leave this match to another because it is unhealthy
    (matches.worker.health_gate, which also stops its consumers)? It then sends a queued match's
    task again, without an attempt. (A healthy worker that should avoid the match, its own
    infrastructure having failed the last attempt, hands it over in ``match_begin``.)"""
    from matches import worker as worker_health

    problem = worker_health.health_gate()
    if problem is None:
        return False  # nothing read: the avoidance is judged under the lock starting takes anyway
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or match.status != Match.Status.QUEUED:
            # Nothing to hand over: a running match is the sweeper's once its lease expires.
            logger.warning("match %s: not taken by %s, which is unhealthy: %s", match_id, worker, problem)
            return True
        logger.warning(
            "match %s: declined by %s (this worker is unhealthy: %s); offered to another worker", match_id, worker, problem
        )
        match_enqueue(match, countdown=DECLINE_COUNTDOWN)
    return True


def match_play(match_id: int, *, worker: str = "") -> bool | None:
    """Play a match in the sandbox and store the result; True when this call stored it.

    ``worker`` is the Celery worker's hostname (empty in-process). Infrastructure trouble (the
    sandbox's InfrastructureError, the match's own time limit reached) sends the match back to
    the queue with a growing delay, until MATCH_MAX_ATTEMPTS starts were used up, to another
    worker when a healthy one is alive; database trouble is tried again for up to
    DB_RETRY_SECONDS, then re-raised for the task to retry; the worker shutting down under the
    match gives it back to the queue; an attempt whose lease was lost is abandoned and the match
    queued again; any other failure marks the match failed. A bot's fault is a result, never an error.

    In a worker (``worker`` given) with MATCH_RESULTS_IN_BACKGROUND, the played result is handed
    to the process's ``ResultRecorder`` and None is returned at once: the result is stored (or
    refused) by its thread, under the attempt's lease, which its keeper renews until then, while
    the worker takes its next match (``ResultRecorder`` says what happens when that fails).
    """
    if worker and db_retry(f"match {match_id}: health", _declined, match_id, worker):
        return False
    match = db_retry(f"match {match_id}: starting", match_begin, match_id, worker=worker, avoid=True)
    if match is None:
        return False
    token = match.attempt_token
    lease = LeaseKeeper(match_id, token).start()
    handed = False
    try:
        played = _played(match, token, worker)
        if played is None:
            return False
        if worker and settings.MATCH_RESULTS_IN_BACKGROUND:
            result_recorder().put(_stored_later(match, token, played, lease))
            handed = True  # the recorder's job stops the keeper once the result is stored
            return None
        return _store_played(match, token, played, lease)
    finally:
        if not handed:
            lease.stop()


def _played(match: Match, token: str, worker: str) -> SandboxMatchResult | None:
    """The attempt's match played in the sandbox, or None when it ended without a result to store
    (sent back to the queue, failed); raises what the task must see (database errors after the
    match was released, the worker stopping)."""
    match_id = match.pk
    try:
        return sandboxing.play_match_row(match)
    except InfrastructureError as exc:
        logger.warning("match %s attempt %s: infrastructure error: %s", match_id, match.attempts, exc)
        db_retry(f"match {match_id}: retrying", match_retry, match_id, token, f"{type(exc).__name__}: {exc}", worker=worker)
        _recheck_worker_health()
        return None
    except DB_ERRORS:
        match_release(match_id, token)
        raise
    except SoftTimeLimitExceeded:
        soft, _ = selectors.match_time_limits(match)
        reason = (
            f"the match ran longer than its time limit of {soft:.0f} s (derived from its format and "
            "clocks, which a bot within its clocks cannot reach): an infrastructure fault"
        )
        logger.warning("match %s attempt %s: %s", match_id, match.attempts, reason)
        db_retry(f"match {match_id}: retrying", match_retry, match_id, token, reason, worker=worker)
        return None
    except Exception as exc:
        if worker_stopping():
            # A cold shutdown cancels the running task from a signal handler (with the
            # solo pool as a NotImplementedError raised inside it): the worker's doing.
            _retry_after_worker_stop(match_id, token, match.attempts, exc)
            return None
        logger.exception("match %s failed", match_id)
        db_retry(f"match {match_id}: failing", match_fail, match_id, token, f"{type(exc).__name__}: {exc}")
        return None
    except BaseException as exc:
        # The worker shutting down under the match (SystemExit, a cold shutdown's
        # termination, Ctrl-C): nobody's fault; the match goes back to the queue.
        _retry_after_worker_stop(match_id, token, match.attempts, exc)
        raise


def _store_played(match: Match, token: str, played: SandboxMatchResult, lease: LeaseKeeper) -> bool:
    """Store the attempt's played result (``match_record_result``) unless its lease was lost; True
    when stored. A refused or abandoned result queues the match again; a hook's refusal fails it;
    database errors beyond DB_RETRY_SECONDS release the match and are raised."""
    match_id = match.pk
    if lease.lost.is_set():
        logger.warning(
            "match %s attempt %s: its lease could not be renewed before it expired: abandoned, not recorded",
            match_id, match.attempts,
        )
        db_retry(f"match {match_id}: requeueing", match_requeue_expired, match_id)
        return False
    try:
        stored = db_retry(
            f"match {match_id}: storing the result", match_record_result, match_id, token, played, match=match
        )
    except DB_ERRORS:
        match_release(match_id, token)
        raise
    except Exception as exc:
        # A hook (ratings, standings) refused the result: nothing was stored.
        logger.exception("match %s: storing the result failed", match_id)
        db_retry(
            f"match {match_id}: failing", match_fail, match_id, token,
            f"storing the result failed: {type(exc).__name__}: {exc}",
        )
        return False
    if not stored:
        # Refused: another attempt took the match over (its lease is alive: nothing to do), or
        # this attempt's lease expired before its result could be stored (the keeper's renewals
        # were held up longer than the lease): queued again now, not at the next sweep.
        db_retry(f"match {match_id}: requeueing", match_requeue_expired, match_id)
    return stored


def _stored_later(match: Match, token: str, played: SandboxMatchResult, lease: LeaseKeeper):
    """The recorder's job for one played match: store it as ``match_play`` would have, then stop
    its lease's keeper. Database errors beyond DB_RETRY_SECONDS: the match was released (given
    back to the queue state) by ``_store_played`` and is sent again here, since no task retries it;
    when even that fails, its lease expires and the sweeper queues it again."""

    def job() -> bool:
        try:
            return _store_played(match, token, played, lease)
        except DB_ERRORS as exc:
            logger.warning("match %s: its result could not be stored (%s); the match is played again", match.pk, exc)
            try:
                db_retry(f"match {match.pk}: queueing again", _send_released, match.pk)
            except DB_ERRORS:
                logger.exception("match %s could not be queued again; the sweeper will", match.pk)
            return False
        finally:
            lease.stop()

    job.match_id = match.pk  # type: ignore[attr-defined]
    return job


def _send_released(match_id: int) -> bool:
    """Send the task of a match ``match_release`` gave back to the queue (none of its tasks retries it)."""
    match = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).first()
    if match is None:
        return False
    match_enqueue(match)
    return True


class ResultRecorder:
    """This process's thread that stores played matches' results while the worker plays its next.

    ``match_play`` hands it one job at a time (``put`` waits while the previous one is being
    stored, so at most one result a process is ever waiting, and a database outage stops the
    worker taking matches as it did when it stored results itself). The job's attempt keeps its
    lease (renewed by its keeper) until the result is stored or refused, with the same checks as
    a task storing it itself: so a result is stored once or not at all, and a worker killed
    before it was stored leaves a match whose lease expires and that is taken again (the
    sweeper), as when killed mid-match. While a job runs, stopped seats' removal waits
    (``runner.hold_seat_removals``) as it does while a task stores its result. ``settle`` waits
    for the job in hand: a worker's graceful stop calls it before removing its seats.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._cond = threading.Condition()
        self._job: Callable[[], object] | None = None
        self._busy = False
        self._thread = threading.Thread(target=self._run, name="match-results", daemon=True)
        self._thread.start()

    def put(self, job: Callable[[], object]) -> None:
        from sandbox import runner

        with self._cond:
            while self._job is not None or self._busy:
                self._cond.wait()
            runner.hold_seat_removals(True)
            self._job = job
            self._cond.notify_all()

    def idle(self) -> bool:
        with self._cond:
            return self._job is None and not self._busy

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no job is waiting or running; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._job is None and not self._busy, timeout)

    def _run(self) -> None:
        from sandbox import runner

        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._job is not None)
                job, self._job, self._busy = self._job, None, True
            assert job is not None
            try:
                job()
            except Exception:
                logger.exception("match %s: storing its result failed", getattr(job, "match_id", "?"))
            finally:
                runner.hold_seat_removals(False)
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


_recorder: ResultRecorder | None = None
_recorder_lock = threading.Lock()


def result_recorder() -> ResultRecorder:
    """This process's ``ResultRecorder`` (a forked child starts its own)."""
    global _recorder
    with _recorder_lock:
        if _recorder is None or _recorder.pid != os.getpid():
            _recorder = ResultRecorder()
        return _recorder


def results_settle(timeout: float | None = None) -> bool:
    """Wait until this process's recorder stored the result in hand (none: True at once)."""
    recorder = _recorder
    if recorder is None or recorder.pid != os.getpid():
        return True
    return recorder.settle(timeout)


def _recheck_worker_health() -> None:
    """After an infrastructure error: check this worker now, so a sick one stops taking matches."""
    from matches import worker as worker_health

    try:
        worker_health.health_gate(fresh=True)
    except Exception:  # the check itself failing must not hide the match's own error
        logger.exception("checking the worker's health failed")


def worker_stopping() -> bool:
    """True in a Celery worker that was told to shut down (warm or cold)."""
    from celery.worker import state

    return state.should_stop not in (None, False) or state.should_terminate not in (None, False)


def _retry_after_worker_stop(match_id: int, token: str, attempt: int, exc: BaseException) -> None:
    """Queue the match again after its worker stopped under it (infrastructure, no bot blamed)."""
    reason = f"the worker stopped during the match ({type(exc).__name__}: {exc})"
    logger.warning("match %s attempt %s: %s; queued again", match_id, attempt, reason)
    try:
        match_retry(match_id, token, reason)
    except Exception:  # the database may be going away too; the sweeper requeues it at its deadline
        logger.exception("match %s could not be queued again after its worker stopped", match_id)


def match_release(match_id: int, token: str) -> bool:
    """Give a started match back to the queue (for a retry); only the token's holder may."""
    try:
        with transaction.atomic():
            updated = Match.objects.filter(
                pk=match_id, status=Match.Status.RUNNING, attempt_token=token
            ).update(status=Match.Status.QUEUED, attempt_token="", deadline=None, lease_expires_at=None)
    except Exception:  # the database itself may be what failed; the sweeper will requeue
        logger.exception("match %s could not be released", match_id)
        return False
    return bool(updated)


def match_retry(match_id: int, token: str, reason: str, *, worker: str = "") -> bool:
    """Queue a started match again after a delay, or fail it once its attempts are used up.

    ``worker``: the worker whose infrastructure failed the attempt; it leaves the match to
    another healthy worker for AVOID_WORKER_SECONDS (``_declined``)."""
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
        match.lease_expires_at = None
        match.error = sandboxing.clean_text(reason)[:4000]
        match.avoid_worker = (worker or "")[:255]
        match.avoid_until = database_now() + timedelta(seconds=AVOID_WORKER_SECONDS) if worker else None
        match.save(update_fields=["status", "attempt_token", "deadline", "lease_expires_at", "error", "avoid_worker", "avoid_until"])
        match_enqueue(match, countdown=retry_backoff(match.attempts))
    return True


def match_fail(match_id: int, token: str | None, reason: str) -> bool:
    """Mark a match failed with the reason (platform side, no bot blamed) and run its hooks."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.is_finished or (token is not None and match.attempt_token != token):
            return False
        _fail_locked(match, reason)
    return True


def _fail_locked(match: Match, reason: str) -> None:
    """Mark ``match`` (its row locked by the caller) failed with ``reason``, its attempt and lease
    ended, and run the hooks of a failed match."""
    match.status = Match.Status.FAILED
    match.error = sandboxing.clean_text(reason)[:4000]
    match.finished_at = database_now()
    match.attempt_token = ""
    match.lease_expires_at = None
    match.save(update_fields=["status", "error", "finished_at", "attempt_token", "lease_expires_at"])
    _run_hooks_of_failed(match)


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
            status=Match.Status.CANCELLED, finished_at=Now()
        )
    return bool(updated)


def match_record_result(match_id: int, token: str, played: SandboxMatchResult, *, match: Match | None = None) -> bool:
    """Store the played match as the runner returned it (results, replay, logs and timings) in
    one transaction, once; then run the kind's hooks.

    Returns False (and writes nothing) when the token is no longer the match's
    current attempt (another worker took over, or the result is already stored) or
    the attempt's lease expired (it is abandoned; the match is taken again).
    Idempotent: calling it again after a lost connection stores nothing twice.

    ``match``: the match as ``match_begin`` returned it to this attempt (its seats read then):
    neither it nor its seats are read again (without it, both are read first). The check and the
    write of the match and of its seats are one statement: the update's own conditions (this
    attempt's token, the lease alive on the database's clock) under the row lock it takes, the
    seats' update a part of it that writes nothing when the match's wrote nothing.
    """
    result = played.result
    values = {
        "status": Match.Status.DONE,
        "rounds_played": result.rounds,
        "games_played": result.games,
        "timings": sandboxing.timing_summary(result.timings, played.start_seconds, played.backend),
        "replay_gz": _gzip_json(result.replay, sort_keys=True),
        "decision_ms_gz": _gzip_json(result.decision_ms) if result.decision_ms else None,
        "attempt_token": "",
        "lease_expires_at": None,
        "error": "",
    }
    if match is None:
        match = Match.objects.filter(pk=match_id).first()
        if match is None:
            _log_refused_result(match_id, token)
            return False
    # the seats read once, in order, for this write and for the hooks (match.seats.all()); given
    # their result's columns here, written by the match's own statement only when it is stored
    seats = seats_played(match)
    columns = sandboxing.seat_columns(played)
    for seat, seat_values in zip(seats, columns, strict=True):
        for name, value in seat_values.items():
            setattr(seat, name, value)
    with transaction.atomic():
        # Whoever could take the match over meanwhile (a new attempt, the sweeper) changes its token
        # under this row lock, which the update's conditions see; finished_at is on the clock of
        # started_at and of the lease: the statement's own timestamp.
        if connection.vendor == "postgresql":
            stored = _result_write(match_id, token, values, seats, tuple(columns[0]))
        else:
            stored = update_returning(
                Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, attempt_token=token).filter(
                    Q(lease_expires_at__isnull=True) | Q(lease_expires_at__gt=Now())
                ),
                ["finished_at"],
                rows=[(seats, list(columns[0]))],
                finished_at=Now(),
                **values,
            )
        if not stored:
            _log_refused_result(match_id, token)
            return False
        for name, value in values.items():
            setattr(match, name, value)
        match.finished_at = stored[0].finished_at
        hooks.run(match)
    return True


#: zlib level of a result's gzipped JSON (replay, decision times): gzip's default 9, the smallest rows
#: (200,000 matches' replays are most of the database). Level 3 took a tenth of the CPU for about 1.4
#: times the bytes (a 2-seat match's 52 KB replay: 0.14 ms against 1.4 ms, 4.4 KB against 3.1 KB; the
#: largest replay of docs/replay-format.md: 8 ms against 98 ms, 143 KB against 90 KB), but a worker
#: stores its results off its matches' path (``ResultRecorder``), where that CPU delays no match. Any
#: level reads back the same (``gzip.decompress``); rows stored at another keep theirs.
RESULT_GZIP_LEVEL = 9


def _gzip_json(value, *, sort_keys: bool = False) -> bytes:
    """``value`` as compact JSON, gzipped (``RESULT_GZIP_LEVEL``, no timestamp: the same value gives
    the same bytes). The engine's replay is a tree (no value refers back to one holding it), so its
    encoding skips the check for cycles: the same bytes, a fifth less CPU (1.0 against 1.25 ms)."""
    data = json.dumps(value, separators=(",", ":"), sort_keys=sort_keys, check_circular=False).encode()
    return gzip.compress(data, compresslevel=RESULT_GZIP_LEVEL, mtime=0)


def _result_write(match_id: int, token: str, values: dict, seats: list[MatchSeat], seat_fields: tuple[str, ...]) -> list[Match]:
    """PostgreSQL: ``match_record_result``'s write, the statement ``update_returning`` compiles for
    it elsewhere (the same conditions, values and seats' update; the match's primary key and
    ``finished_at`` returned), its text built once per process (``_result_write_sql``): Django's
    compile of the update took 0.46 ms of CPU a result."""
    meta = Match._meta
    wrapper = transaction.get_connection()  # not the proxy: each of its attributes is a lookup of the thread's
    sql = _result_write_sql(wrapper.alias, tuple(values), seat_fields, len(seats))
    params = [meta.get_field(name).get_db_prep_save(value, wrapper) for name, value in values.items()]
    params += [meta.pk.get_db_prep_value(match_id, wrapper), str(Match.Status.RUNNING), token]
    params += values_update_params(seats, seat_fields, wrapper)
    with wrapper.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    return model_rows(Match, (meta.pk, meta.get_field("finished_at")), found)


@functools.lru_cache(maxsize=32)
def _result_write_sql(alias: str, names: tuple[str, ...], seat_fields: tuple[str, ...], seats: int) -> str:
    """The text of ``_result_write`` (parameters: ``names``' values, the match's id, the running
    status, the attempt's token, then ``values_update_params`` of the seats), from the models'
    ``_meta``: ``finished_at`` and the lease's check on the statement's own timestamp
    (``STATEMENT_TIMESTAMP()``, what ``Now()`` is on PostgreSQL), the seats written by the same
    statement only when the match's row was (``with_rows_sql``)."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    meta = Match._meta
    table = quote(meta.db_table)

    def column(name: str) -> str:
        return f"{table}.{quote(meta.get_field(name).column)}"

    now = DB_NOW_SQL
    update = (
        f"UPDATE {table} SET {quote(meta.get_field('finished_at').column)} = {now}, "
        + ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in names)
        + f" WHERE {table}.{quote(meta.pk.column)} = %s AND {column('status')} = %s AND {column('attempt_token')} = %s"
        + f" AND ({column('lease_expires_at')} IS NULL OR {column('lease_expires_at')} > {now})"
        + f" RETURNING {table}.{quote(meta.pk.column)}, {column('finished_at')}"
    )
    return with_rows_sql(update, [values_update_sql(MatchSeat._meta.label, seat_fields, seats, alias, CHANGED_ONLY)])


def _log_refused_result(match_id: int, token: str) -> None:
    """Say why a result was not stored (read after the refusal, for the log only)."""
    row = Match.objects.filter(pk=match_id).values("status", "attempt_token").first()
    if row is not None and row["status"] == Match.Status.RUNNING and row["attempt_token"] == token:
        logger.warning("match %s: the attempt's lease expired before its result was stored: abandoned", match_id)
    else:
        logger.warning("match %s: result of a stale attempt discarded", match_id)


def match_requeue_expired(match_id: int, *, now: datetime | None = None) -> bool:
    """Queue again a running match whose lease expired or that passed its deadline (its token
    is dropped, so the old holder's late result is refused); fail it once its attempts are used
    up. True when it was sent to the queue. Skips a row another sweeper holds."""
    with transaction.atomic():
        match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
        if match is None or match.status != Match.Status.RUNNING:
            return False
        now = now or database_now()
        expired = match.lease_expires_at is not None and match.lease_expires_at <= now
        overdue = match.deadline is not None and match.deadline < now
        if not (expired or overdue):
            return False
        if match.attempts >= settings.MATCH_MAX_ATTEMPTS:
            _fail_locked(
                match,
                f"abandoned: {match.attempts} attempts did not finish "
                f"(limit MATCH_MAX_ATTEMPTS={settings.MATCH_MAX_ATTEMPTS})",
            )
            return False
        logger.warning(
            "match %s: attempt %s on %s %s; queued again", match_id, match.attempts, match.worker or "?",
            "lost its lease" if expired else "passed its deadline",
        )
        # The abandoned attempt's seats (a killed worker's) go once this is committed.
        label = sandboxing.sandbox_label(match)
        transaction.on_commit(lambda: sandboxing.remove_attempt_sandboxes(label))
        match.status = Match.Status.QUEUED
        match.attempt_token = ""
        match.deadline = None
        match.lease_expires_at = None
        match.save(update_fields=["status", "attempt_token", "deadline", "lease_expires_at"])
        match_enqueue(match)
    return True


def _resend(match_id: int, still_lost) -> bool:
    """Send a queued match's task again when ``still_lost(match)`` holds under its row lock
    (another sweeper may have sent it meanwhile)."""
    with transaction.atomic():
        match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
        if match is None or match.status != Match.Status.QUEUED or not still_lost(match):
            return False
        match_enqueue(match)
    return True


def broker_lost_data() -> float | None:
    """When the broker (Redis) lost its data since the last look (the marker key this database
    keeps there is gone; it is set again now): the seconds it has been up since, so messages
    sent before that are known lost; else None.

    A duration, not the broker host's clock. The first look ever at a broker answers its
    uptime too, which only resends matches queued before it started."""
    url = settings.CELERY_BROKER_URL
    if settings.CELERY_TASK_ALWAYS_EAGER or not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    database = connection.settings_dict
    key = BROKER_MARKER_KEY.format(database=f"{database.get('HOST') or ''}/{database.get('NAME')}")
    client = redis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3)
    try:
        if not client.set(key, str(time.time()), nx=True):
            return None
        return float(client.info("server")["uptime_in_seconds"])
    finally:
        client.close()


def match_sweep_stuck(*, now: datetime | None = None) -> list[int]:
    """Recover matches nobody will finish or send otherwise; returns the ids sent (again) to the queue.

    - running matches whose lease expired (their worker died, or lost the database) or that
      passed their deadline (``selectors.match_stale_after``): queued again, or failed once out
      of attempts (``match_requeue_expired``);
    - queued matches whose message could not be sent (broker down: ``send_failed_at``);
    - queued matches sent before the broker restarted, once, when it lost its data
      (``broker_lost_data``);
    - queued matches whose message is older than MATCH_STALE_AFTER when set, else
      RESEND_QUEUED_AFTER (a message lost some other way).

    Every worker runs it every MATCH_SWEEP_SECONDS (matches.worker) and beat every minute; the
    row locks (skip locked) make concurrent sweeps harmless. ``now`` (tests) stands for the
    database's clock.
    """
    now = now or database_now()
    stale = timedelta(seconds=settings.MATCH_STALE_AFTER or RESEND_QUEUED_AFTER)
    requeued: list[int] = []
    expired = Match.objects.filter(status=Match.Status.RUNNING).filter(
        Q(lease_expires_at__lte=now) | Q(deadline__lt=now)
    )
    for match_id in list(expired.values_list("pk", flat=True)):
        if match_requeue_expired(match_id, now=now):
            requeued.append(match_id)
    queued = Match.objects.filter(status=Match.Status.QUEUED)
    for match_id in list(queued.filter(send_failed_at__isnull=False).values_list("pk", flat=True)):
        if _resend(match_id, lambda m: m.send_failed_at is not None):
            requeued.append(match_id)
    try:
        up = broker_lost_data()
    except Exception as exc:  # the broker is down: its messages are resent when it is back
        logger.warning("cannot ask the broker whether it kept its data: %s", exc)
        up = None
    if up is not None:
        # Every message sent before the broker (re)started is gone (the second its uptime
        # rounds away only sends a few again: duplicates find nothing to do).
        before = now - timedelta(seconds=up)
        lost = queued.filter(enqueued_at__lt=before).exclude(pk__in=requeued).values_list("pk", flat=True)
        ids = [pk for pk in lost if _resend(pk, lambda m: m.enqueued_at is not None and m.enqueued_at < before)]
        if ids:
            logger.warning("the broker lost its data: sent the %s queued matches again", len(ids))
        requeued += ids
    # A queued match whose message was lost some other way would wait forever: send it
    # again. A duplicate message finds nothing to do.
    old = now - stale
    for match_id in list(queued.filter(enqueued_at__lt=old).exclude(pk__in=requeued).values_list("pk", flat=True)):
        if _resend(match_id, lambda m: m.enqueued_at is not None and m.enqueued_at < old):
            requeued.append(match_id)
    if requeued:
        logger.warning("requeued stuck matches: %s", requeued)
    return requeued
