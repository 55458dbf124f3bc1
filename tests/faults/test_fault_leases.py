"""Leases on the database's clock, without a worker: renewal, expiry, takeover, abandonment,
the sweeper, and the worker path's retries through database errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.db.models import prefetch_related_objects
from django.test.utils import CaptureQueriesContext

from engine.rules import Rules
from matches import sandboxing, services
from matches.models import Match, MatchSeat

pytestmark = [pytest.mark.services]


def reference_match() -> Match:
    return services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=["first", "random"], seed=3,
        enqueue=False,
    )


def lease_left(match_id: int) -> float:
    lease = Match.objects.values_list("lease_expires_at", flat=True).get(pk=match_id)
    return (lease - services.database_now()).total_seconds()


def expire(match_id: int) -> None:
    Match.objects.filter(pk=match_id).update(lease_expires_at=services.database_now() - timedelta(seconds=1))


def test_a_started_match_holds_a_lease_its_worker_renews_on_the_database_clock(db, settings):
    match = reference_match()
    token = services.match_start(match.pk, worker="w1@host")
    assert 0 < lease_left(match.pk) <= settings.MATCH_LEASE_SECONDS
    assert Match.objects.get(pk=match.pk).worker == "w1@host"
    Match.objects.filter(pk=match.pk).update(lease_expires_at=services.database_now() + timedelta(seconds=1))
    with CaptureQueriesContext(connection) as queries:
        assert services.match_lease_renew(match.pk, token) is True
    assert lease_left(match.pk) > settings.MATCH_LEASE_SECONDS - 2
    renewal = [q["sql"] for q in queries if q["sql"].startswith("UPDATE")]
    # the database's clock, never this host's: now() in the statement itself
    assert len(renewal) == 1 and ("STATEMENT_TIMESTAMP" in renewal[0].upper() or "NOW" in renewal[0].upper())
    assert services.match_lease_renew(match.pk, "not-the-token") is False


def test_an_expired_lease_lets_any_worker_start_again_and_refuses_the_old_attempt(db):
    match = reference_match()
    first = services.match_start(match.pk, worker="w1")
    assert services.match_start(match.pk, worker="w2") is None  # the lease is alive
    expire(match.pk)
    second = services.match_start(match.pk, worker="w2")
    assert second and second != first
    assert services.match_lease_renew(match.pk, first) is False
    outcome = sandboxing.play_match_row(Match.objects.get(pk=match.pk))
    assert services.match_record_result(match.pk, first, outcome) is False
    assert services.match_record_result(match.pk, second, outcome) is True
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempts, row.worker, row.lease_expires_at) == ("done", 2, "w2", None)


def test_an_attempt_whose_lease_expired_is_abandoned_and_the_sweeper_queues_it_again(db, django_capture_on_commit_callbacks):
    match = reference_match()
    token = services.match_start(match.pk)
    outcome = sandboxing.play_match_row(Match.objects.get(pk=match.pk))
    expire(match.pk)
    assert services.match_record_result(match.pk, token, outcome) is False  # nobody took it yet: still refused
    assert Match.objects.get(pk=match.pk).status == "running"
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert services.match_sweep_stuck() == [match.pk]
    # on commit: the match's task is sent again once, and the abandoned attempt's seats are removed
    names = sorted(callback.__qualname__ for callback in sent)
    assert names == ["match_enqueue.<locals>.send", "match_requeue_expired.<locals>.<lambda>"], names
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempt_token, row.lease_expires_at) == ("queued", "", None)
    assert services.match_lease_renew(match.pk, token) is False


def test_a_lease_that_is_alive_is_not_swept(db):
    match = reference_match()
    services.match_start(match.pk)
    assert services.match_sweep_stuck() == []
    assert Match.objects.get(pk=match.pk).status == "running"


def test_database_steps_of_the_worker_path_are_tried_again_through_connection_errors(transactional_db, monkeypatch):
    monkeypatch.setattr(services.time, "sleep", lambda seconds: None)
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("terminating connection due to administrator command")
        return Match.objects.count()

    assert services.db_retry("test", flaky) == 0
    assert len(calls) == 3

    def down():
        raise OperationalError("the database is away")

    with pytest.raises(OperationalError):
        services.db_retry("test", down, budget=0.0)


def test_an_attempt_whose_lease_expired_before_its_result_was_stored_is_played_again_at_once(
    transactional_db, eager_tasks, monkeypatch
):
    """The keeper's renewals held up past the lease (a stalled database, a starved thread) while
    nobody took the match over: its worker refuses its own result, as before, and queues the match
    again itself instead of leaving it running until the next sweep."""
    match = reference_match()
    real_play = sandboxing.play_match_row
    plays = []

    def play_then_lose_the_lease(row):
        played = real_play(row)
        plays.append(row.attempt_token)
        if len(plays) == 1:
            expire(row.pk)
        return played

    monkeypatch.setattr(sandboxing, "play_match_row", play_then_lose_the_lease)
    assert services.match_play(match.pk) is False  # this attempt's result is refused ...
    row = Match.objects.get(pk=match.pk)
    # ... and the match was queued again and played (eager tasks: inside the same call)
    assert len(plays) == 2 and plays[0] != plays[1]
    assert (row.status, row.attempts, row.attempt_token, row.lease_expires_at) == ("done", 2, "", None)


def sent_match(django_capture_on_commit_callbacks) -> Match:
    """A reference match queued and sent as a worker finds it (its message not really sent)."""
    with django_capture_on_commit_callbacks(execute=False):
        return services.match_create(
            kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=["first", "random"], seed=3,
        )


def test_a_queued_match_starts_by_one_statement_on_the_database_clock_with_its_deadline_and_lease(
    db, settings, django_capture_on_commit_callbacks
):
    from matches import selectors

    match = sent_match(django_capture_on_commit_callbacks)
    with CaptureQueriesContext(connection) as queries:
        started = services.match_begin(match.pk, worker="w1@host", avoid=True)
        assert [seat.reference_bot for seat in started.seats.all()] == ["first", "random"]  # read with it
    statements = [q["sql"] for q in queries.captured_queries]
    # no transaction of its own around a locking read; on PostgreSQL the start and the read of the
    # seats are one statement, elsewhere the start, then the seats
    if connection.vendor == "postgresql":
        assert len(statements) == 1 and statements[0].startswith('WITH "taken" AS (UPDATE "matches_match"'), statements
    else:
        assert len(statements) == 2 and statements[0].startswith('UPDATE "matches_match"'), statements
    assert "STATEMENT_TIMESTAMP" in statements[0].upper()
    row = Match.objects.get(pk=match.pk)
    # the match it returns is the row as stored
    for field in Match._meta.concrete_fields:
        assert getattr(started, field.attname) == getattr(row, field.attname), field.name
    assert (row.status, row.attempts, row.worker, row.attempt_token) == ("running", 1, "w1@host", started.attempt_token)
    assert row.deadline - row.started_at == timedelta(seconds=selectors.match_stale_after(row))
    assert 0 < lease_left(match.pk) <= settings.MATCH_LEASE_SECONDS
    # a second delivery of its task finds it running, its lease alive: no second attempt
    assert services.match_begin(match.pk, worker="w2@host", avoid=True) is None
    assert Match.objects.get(pk=match.pk).attempts == 1
    # MATCH_STALE_AFTER is the starting worker's: set there, it is the deadline of what it starts
    settings.MATCH_STALE_AFTER = 6
    other = services.match_begin(sent_match(django_capture_on_commit_callbacks).pk, worker="w1@host")
    assert other.deadline - other.started_at == timedelta(seconds=6)


def loaded(instance) -> dict:
    """An instance's loaded values and cached relations' names (what reading it needs no query for)."""
    values = {k: v for k, v in vars(instance).items() if not k.startswith("_")}
    return values | {"deferred": instance.get_deferred_fields(), "cached": sorted(instance._state.fields_cache)}


def test_a_started_match_has_its_seats_versions_bots_and_players_read_as_the_prefetch_reads_them(
    db, django_capture_on_commit_callbacks
):
    from testsupport import make_user

    from bots.models import Bot, BotVersion
    from matches.services import seats_for_play

    alice = make_user("alice")
    bot = Bot.objects.create(owner=alice, name="b")
    version = BotVersion.objects.create(bot=bot, number=1, filename="main.py", source=b"x", sha256="0" * 64, size=1)
    with django_capture_on_commit_callbacks(execute=False):
        match = services.match_create(
            kind="challenge", rules=Rules.parse(["players=3", "rounds=1"]), seats=["random", "first", version], seed=3
        )
    MatchSeat.objects.filter(match=match, seat=1).update(reference_bot="", player=alice)  # a person's seat
    with CaptureQueriesContext(connection) as queries:
        started = services.match_begin(match.pk, worker="w1@host", avoid=True)
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2), [q["sql"] for q in queries]
    # what the ORM reads for the same row: the match, then its seats by seats_for_play()
    expected = Match.objects.get(pk=match.pk)
    prefetch_related_objects([expected], seats_for_play())
    with CaptureQueriesContext(connection) as queries:
        assert loaded(started) == loaded(expected) | {"cached": []}
        assert started.seats.count() == 3
        seats, want = list(started.seats.all()), list(expected.seats.all())
        assert [seat.seat for seat in seats] == [0, 1, 2]
        for seat, other in zip(seats, want, strict=True):
            assert loaded(seat) == loaded(other)
            assert seat.match is started
            assert seat.bot_version is other.bot_version is None or loaded(seat.bot_version) == loaded(other.bot_version)
            if seat.bot_version is not None:
                assert loaded(seat.bot_version.bot) == loaded(other.bot_version.bot)
            assert seat.player is other.player is None or loaded(seat.player) == loaded(other.player)
        assert (seats[0].reference_bot, seats[1].player.username, seats[2].bot_version.bot.name) == ("random", "alice", "b")
        assert seats[2].bot_version.get_deferred_fields() == {"validation_log", "validation_runs", "source"}
        # the result's hooks prefetch them again: found read
        prefetch_related_objects([started], seats_for_play())
        assert list(started.seats.all()) == seats
    assert not queries.captured_queries, [q["sql"] for q in queries]
    assert str(started.seats.all().query) == str(expected.seats.all().query)


def test_a_start_by_one_statement_leaves_a_running_finished_or_avoided_match_alone(db, django_capture_on_commit_callbacks):
    def state(match_id):
        return Match.objects.values_list("status", "attempts", "attempt_token", "worker").get(pk=match_id)

    running = sent_match(django_capture_on_commit_callbacks)
    assert services._taken(running.pk, worker="w1", avoid=True) is not None
    before = state(running.pk)
    assert services._taken(running.pk, worker="w2", avoid=True) is None
    expire(running.pk)  # an expired lease is for _started to judge, under the row lock
    assert services._taken(running.pk, worker="w2", avoid=True) is None
    assert state(running.pk) == before
    for status in ("done", "failed", "cancelled"):
        finished = sent_match(django_capture_on_commit_callbacks)
        Match.objects.filter(pk=finished.pk).update(status=status)
        assert services._taken(finished.pk, worker="w1", avoid=True) is None
        assert state(finished.pk) == (status, 0, "", "")
    unsent = reference_match()  # no stale_after: queued without match_enqueue
    assert services._taken(unsent.pk, worker="w1", avoid=True) is None
    assert state(unsent.pk) == ("queued", 0, "", "")
    assert services._taken(10**9, worker="w1", avoid=True) is None

    avoided = sent_match(django_capture_on_commit_callbacks)
    Match.objects.filter(pk=avoided.pk).update(
        avoid_worker="w1", avoid_until=services.database_now() + timedelta(seconds=60)
    )
    assert services._taken(avoided.pk, worker="w1", avoid=True) is None
    assert state(avoided.pk) == ("queued", 0, "", "")
    assert services._taken(avoided.pk, worker="w2", avoid=True).worker == "w2"  # another worker takes it
    for worker, avoid, until in (("w1", False, 60), ("", True, 60), ("w1", True, -1)):
        other = sent_match(django_capture_on_commit_callbacks)
        Match.objects.filter(pk=other.pk).update(
            avoid_worker="w1", avoid_until=services.database_now() + timedelta(seconds=until)
        )
        started = services._taken(other.pk, worker=worker, avoid=avoid)
        assert started is not None and state(other.pk) == ("running", 1, started.attempt_token, worker)


def test_a_worker_whose_infrastructure_failed_the_last_attempt_leaves_the_queued_match_to_a_healthy_one(
    db, django_capture_on_commit_callbacks
):
    from core.services import worker_heartbeat_record

    match = sent_match(django_capture_on_commit_callbacks)
    Match.objects.filter(pk=match.pk).update(
        avoid_worker="w1@host", avoid_until=services.database_now() + timedelta(seconds=60)
    )
    worker_heartbeat_record("w2@host", healthy=True, consuming=True)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert services.match_begin(match.pk, worker="w1@host", avoid=True) is None
    assert [callback.__qualname__ for callback in sent] == ["match_enqueue.<locals>.send"]  # offered again
    assert (Match.objects.get(pk=match.pk).status, Match.objects.get(pk=match.pk).attempts) == ("queued", 0)
    started = services.match_begin(match.pk, worker="w2@host", avoid=True)
    assert started is not None and (started.status, started.attempts, started.worker) == ("running", 1, "w2@host")


def test_a_result_stored_with_the_started_match_reads_neither_the_match_nor_its_seats_again(
    db, django_capture_on_commit_callbacks
):
    match = sent_match(django_capture_on_commit_callbacks)
    started = services.match_begin(match.pk, worker="w1@host")
    outcome = sandboxing.play_match_row(started)
    with CaptureQueriesContext(connection) as queries:
        assert services.match_record_result(match.pk, started.attempt_token, outcome, match=started) is True
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    # (a challenge's hook looks for its version test: not the match's own rows)
    assert not [sql for sql in reads if 'FROM "matches_match' in sql], reads
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempt_token, row.lease_expires_at, row.finished_at) == (
        "done", "", None, started.finished_at
    )
    assert row.started_at <= row.finished_at
    assert [s.rank for s in row.seats.order_by("seat")] == [s.rank for s in started.seats.all()]
    assert all(s.rank in (1, 2) for s in started.seats.all())
    # one statement writes the match and its seats on PostgreSQL (then the challenge's hook reads)
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SELECT", "SAVEPOINT", "RELEASE"))]
    if connection.vendor == "postgresql":
        assert len(writes) == 1 and writes[0].startswith('WITH changed AS (UPDATE "matches_match"'), writes
    # stored once: the same result again is refused, and writes no seat
    MatchSeat.objects.filter(match=match).update(score=-7)
    assert services.match_record_result(match.pk, started.attempt_token, outcome, match=started) is False
    assert set(MatchSeat.objects.filter(match=match).values_list("score", flat=True)) == {-7}


def test_a_match_task_skips_the_connection_check_and_its_first_query_reconnects_when_the_connection_died(
    transactional_db, django_capture_on_commit_callbacks
):
    import psycopg
    from testsupport import service_urls

    from ladders.tasks import ladder_refit
    from matches import worker
    from matches.tasks import match_play

    match = sent_match(django_capture_on_commit_callbacks)
    # another task's first query is checked (CONN_HEALTH_CHECKS): it has no retry of its own
    connection.ensure_connection()
    worker._task_starts(task=ladder_refit)
    assert connection.health_check_done is False
    worker._task_ended()
    # the match task's is not: the connection dies between two tasks, its first query reconnects
    with psycopg.connect(service_urls()[0], autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (connection.connection.info.backend_pid,))
    worker._task_starts(task=match_play)
    try:
        assert connection.health_check_done is True
        assert services.match_play(match.pk) is True
    finally:
        worker._task_ended()
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempts) == ("done", 1)


def test_one_thread_of_the_process_renews_every_lease_and_each_keeper_loses_only_its_own(transactional_db, settings):
    import threading
    import time

    settings.MATCH_LEASE_RENEW_SECONDS = 0.2
    first, second = reference_match(), reference_match()
    tokens = {m.pk: services.match_start(m.pk, worker="w1") for m in (first, second)}

    def shorten():
        Match.objects.filter(pk__in=tokens).update(lease_expires_at=services.database_now() + timedelta(seconds=3))

    def renewed(match_id) -> bool:
        return lease_left(match_id) > settings.MATCH_LEASE_SECONDS - 2

    def wait_until(check):
        give_up = time.monotonic() + 10
        while not check():
            assert time.monotonic() < give_up, "not within 10 s"
            time.sleep(0.05)

    shorten()
    with services.LeaseKeeper(first.pk, tokens[first.pk]) as one, services.LeaseKeeper(second.pk, tokens[second.pk]) as two:
        wait_until(lambda: renewed(first.pk) and renewed(second.pk))
        assert [t.name for t in threading.enumerate() if t.name.startswith("lease")] == ["lease-renewals"]
        # the second attempt's lease is taken over: its keeper says so; the first keeps its own
        Match.objects.filter(pk=second.pk).update(attempt_token="another-attempt")
        wait_until(two.lost.is_set)
        shorten()
        wait_until(lambda: renewed(first.pk))
        assert not one.lost.is_set()
    # stopped: nothing is renewed any more
    shorten()
    time.sleep(0.6)
    assert lease_left(first.pk) <= 3
    # a keeper started later is served by the same thread
    Match.objects.filter(pk=second.pk).update(attempt_token=tokens[second.pk])
    with services.LeaseKeeper(second.pk, tokens[second.pk]) as again:
        wait_until(lambda: renewed(second.pk))
        assert not again.lost.is_set()
        assert [t.name for t in threading.enumerate() if t.name.startswith("lease")] == ["lease-renewals"]
