"""Blame on the real worker path: a seat that dies from outside is the platform's trouble.

A real Celery worker subprocess, PostgreSQL, Redis and the Docker sandbox: the
test removes its own seat container in the middle of a ladder match, or points
the seats at a full folder, and checks that the attempt ends as an
infrastructure retry, that no bot's record moved (rating, faults, forfeits, the
fault streak toward suspension), and that the retried attempt completes.
"""

from __future__ import annotations

import time

import pytest
from faultsupport import (
    SandboxWatch,
    assert_nothing_left,
    fill,
    ladder_with_matches,
    record_of,
    seats_folder,
    status_of,
    tiny_tmpfs,
)
from testsupport import wait_for

from ladders.models import RatingChange
from matches import sandboxing
from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

def ladder_match(tag: str):
    """A 2-seat ladder of two slow bots of different owners, each with a fault streak of 1, and
    its one match (queued; its task sent when the test commits)."""
    item, [match] = ladder_with_matches(tag, 1, fault_streak=1, rounds=3, delay=0.1)
    return item, match


def test_a_seat_container_removed_mid_match_is_retried_on_another_worker_and_blames_no_bot(
    celery_worker_factory, docker_client
):
    with seats_folder() as first_seats, seats_folder() as second_seats:
        _container_removed(celery_worker_factory, docker_client, first_seats, second_seats)


def _container_removed(celery_worker_factory, docker_client, first_seats, second_seats):
    beats = {"SANDBOX_BACKEND": "docker", "WORKER_HEARTBEAT_SECONDS": "2"}
    worker = celery_worker_factory(env_extra={**beats, "SANDBOX_WORK_DIR": str(first_seats)}, name="first")
    item, match = ladder_match("rm")
    before = record_of(item)
    watch = SandboxWatch([match.pk]).__enter__()
    wait_for("the match to start", lambda: status_of(match.pk) == "running", 60, worker)
    label = sandboxing.sandbox_label(Match.objects.get(pk=match.pk))
    # A second healthy worker: the retry after the first one's infrastructure error goes to it.
    other = celery_worker_factory(env_extra={**beats, "SANDBOX_WORK_DIR": str(second_seats)}, name="second")

    def seat_zero():
        found = docker_client.containers.list(
            filters={"label": [f"uno-arena.match={label}", "uno-arena.seat=0"], "status": "running"}
        )
        return found[0] if found else None

    container = wait_for("seat 0's container", seat_zero, 60, worker)
    time.sleep(1.0)  # a few decisions into the match
    assert status_of(match.pk) == "running", "the match ended before its container was removed; make it slower"
    container.remove(force=True)  # exactly this test's container, as `docker rm -f` would
    removed = time.monotonic()

    wait_for("the retry", lambda: Match.objects.get(pk=match.pk).attempts >= 2 or status_of(match.pk) != "running", 60, worker)
    assert record_of(item) == before, "the attempt whose container vanished changed a bot's record"
    assert RatingChange.objects.filter(ladder=item).count() == 0
    wait_for("the retried attempt", lambda: status_of(match.pk) in ("done", "failed"), 120, worker)
    recovered = time.monotonic() - removed
    watch.__exit__(None, None, None)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts == 2
    assert "removed from outside" in worker.log and "infrastructure error" in worker.log
    assert match.worker.startswith("second-"), f"the retry ran on {match.worker}, not on the other healthy worker"
    assert "Task matches.tasks.match_play[" in other.log
    assert recovered < 60, f"the match was done {recovered:.1f} s after its container was removed"
    assert_nothing_left(watch, docker_client, [first_seats, second_seats])
    seats = list(match.seats.all())
    assert not any(s.forfeited or s.strikes or s.fault_kind or s.faults for s in seats)
    # rated once, by the attempt that completed; no forfeit, so the fault streaks end
    after = record_of(item)
    assert [row[2:] for row in after] == [(1, 0, "active"), (1, 0, "active")]
    assert RatingChange.objects.filter(ladder=item).count() == 2


@pytest.fixture
def tiny_seats_folder():
    """A 1 MiB tmpfs of the test's own for the seats' folder."""
    with tiny_tmpfs("1m") as folder:
        yield folder


def test_a_full_seats_folder_is_an_infrastructure_retry_that_blames_no_bot(
    celery_worker_factory, docker_client, tiny_seats_folder
):
    fill(tiny_seats_folder)
    # The worker's own check of free space is off (0): the folder fills under a worker that
    # believes it healthy, so the sandbox's own refusal is what is tested here (tests/faults
    # checks that a worker that sees the full folder stops taking matches).
    worker = celery_worker_factory(env_extra={
        "SANDBOX_BACKEND": "docker", "SANDBOX_WORK_DIR": str(tiny_seats_folder), "WORKER_MIN_FREE_BYTES": "0",
    })
    item, match = ladder_match("full")
    before = record_of(item)

    def retried():
        row = Match.objects.get(pk=match.pk)
        return row if row.status == "queued" and row.attempts >= 1 else None

    row = wait_for("the first attempt to end", retried, 60, worker)
    assert "the seats' folder is full (No space left on device)" in row.error
    assert record_of(item) == before
    assert not any(s.forfeited or s.fault_kind or s.faults for s in row.seats.all())
    (tiny_seats_folder / "filler").unlink()  # the operator frees space: the next attempt plays
    wait_for("the retried attempt", lambda: status_of(match.pk) in ("done", "failed"), 120, worker)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts >= 2
    assert [row[2:] for row in record_of(item)] == [(1, 0, "active"), (1, 0, "active")]
    # A worker removes seats off the match's path (its remover thread): the folders go soon after.
    wait_for("the seat folders' removal", lambda: not any(tiny_seats_folder.iterdir()), 30, worker)


def test_a_worker_stopped_under_a_match_gives_it_back_and_blames_no_bot(celery_worker_factory, docker_client):
    import signal

    first = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    item, match = ladder_match("stop")
    before = record_of(item)
    wait_for("the match to start", lambda: status_of(match.pk) == "running", 60, first)
    time.sleep(1.0)
    # Stopped for good: a warm shutdown (SIGTERM), then a cold one (SIGQUIT) that does not wait for the match.
    import os

    os.killpg(first.proc.pid, signal.SIGTERM)
    time.sleep(0.5)
    os.killpg(first.proc.pid, signal.SIGQUIT)
    wait_for("the first worker to exit", lambda: not first.alive(), 60)
    row = Match.objects.get(pk=match.pk)
    assert row.status == "queued", (row.status, row.error)
    assert "the worker stopped during the match" in row.error
    assert record_of(item) == before
    second = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    wait_for("the match played again", lambda: status_of(match.pk) in ("done", "failed"), 120, second)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts == 2
    assert not any(s.forfeited or s.fault_kind or s.faults for s in match.seats.all())
    assert [row[2:] for row in record_of(item)] == [(1, 0, "active"), (1, 0, "active")]
