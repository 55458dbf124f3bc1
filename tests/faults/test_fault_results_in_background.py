"""A worker stores a played match's result from its recorder thread while it takes its next match
(MATCH_RESULTS_IN_BACKGROUND): the result is stored once, under the attempt's lease, refused when
another attempt took the match over, and one result a process waits at most."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connections

from engine.rules import Rules
from matches import sandboxing, services
from matches.models import Match

pytestmark = [pytest.mark.services]

WORKER = "celery@results-test"


def reference_match() -> Match:
    return services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=["first", "random"], seed=5,
        enqueue=False,
    )


@pytest.fixture
def recorder(transactional_db):
    """This process's recorder; its thread's database connection is closed after the test (the
    test database cannot be dropped while it is open)."""
    yield services.result_recorder()
    services.result_recorder().put(connections.close_all)
    assert services.results_settle(30)


def test_a_worker_s_result_is_stored_by_its_recorder_after_the_task_returned(recorder):
    match = reference_match()
    assert services.match_play(match.pk, worker=WORKER) is None  # handed over, not stored yet by the task
    assert services.results_settle(60)
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempts, row.attempt_token, row.lease_expires_at) == ("done", 1, "", None)
    assert row.worker == WORKER and row.replay_gz and row.finished_at is not None
    assert all(seat.score is not None for seat in row.seats.all())


def test_without_results_in_background_the_task_stores_its_own_result(transactional_db, settings):
    settings.MATCH_RESULTS_IN_BACKGROUND = False
    match = reference_match()
    assert services.match_play(match.pk, worker=WORKER) is True
    assert Match.objects.get(pk=match.pk).status == "done"


def test_a_result_whose_match_another_attempt_took_over_is_refused_by_the_recorder(recorder, monkeypatch):
    """The attempt's match is taken over (its lease expired, another worker started it) after it was
    played: the recorder stores nothing and leaves the new attempt alone."""
    match = reference_match()
    real_play = sandboxing.play_match_row
    taken: list[str] = []

    def play_then_lose_it(row):
        played = real_play(row)
        Match.objects.filter(pk=row.pk).update(lease_expires_at=services.database_now() - timedelta(seconds=1))
        taken.append(services.match_begin(row.pk, worker="celery@other").attempt_token)
        return played

    monkeypatch.setattr(sandboxing, "play_match_row", play_then_lose_it)
    assert services.match_play(match.pk, worker=WORKER) is None
    assert services.results_settle(60)
    row = Match.objects.get(pk=match.pk)
    assert (row.status, row.attempts, row.attempt_token, row.worker) == ("running", 2, taken[0], "celery@other")
    assert not row.replay_gz and row.finished_at is None


def test_the_recorder_takes_one_result_at_a_time_and_settle_waits_for_it():
    recorder = services.ResultRecorder()
    first_may_end, order = threading.Event(), []

    def first():
        order.append("first")
        first_may_end.wait(30)

    recorder.put(first)
    second_put = threading.Thread(target=recorder.put, args=(lambda: order.append("second"),))
    second_put.start()
    second_put.join(0.3)
    # the second result waits while the first is being stored: its put has not returned
    assert second_put.is_alive() and order == ["first"] and not recorder.settle(0.1)
    first_may_end.set()
    second_put.join(30)
    assert recorder.settle(30) and order == ["first", "second"] and recorder.idle()


def test_a_job_that_raises_does_not_stop_the_recorder():
    recorder = services.ResultRecorder()
    done = []

    def broken():
        raise RuntimeError("boom")

    recorder.put(broken)
    recorder.put(lambda: done.append(True))
    assert recorder.settle(30) and done == [True]
