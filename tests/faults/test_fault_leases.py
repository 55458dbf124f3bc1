"""Leases on the database's clock, without a worker: renewal, expiry, takeover, abandonment,
the sweeper, and the worker path's retries through database errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.test.utils import CaptureQueriesContext

from engine.rules import Rules
from matches import sandboxing, services
from matches.models import Match

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
    from django.db import connection

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
