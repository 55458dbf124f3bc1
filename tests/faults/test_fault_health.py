"""A worker that cannot play matches checks itself first and takes none: the sandbox image is
missing, or its seats' folder is full. It stops consuming (so it never drains the queue), says
why in its log, on its heartbeat and on the queue page, and takes matches again once healthy;
a healthy worker plays them meanwhile. Real worker subprocesses, PostgreSQL, Redis, Docker."""

from __future__ import annotations

import os
import time

import pytest
from faultsupport import (
    SandboxWatch,
    all_finished,
    assert_each_played_once,
    assert_nothing_left,
    fill,
    heartbeat_of,
    ladder_with_matches,
    tiny_tmpfs,
)
from testsupport import wait_for

from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

#: how long an unhealthy worker is watched not taking anything
WATCH_SECONDS = 6


def untouched(matches) -> bool:
    return not Match.objects.filter(pk__in=[m.pk for m in matches]).exclude(status="queued", attempts=0).exists()


def test_a_worker_without_the_sandbox_image_takes_no_match_and_a_healthy_one_plays_them(
    workers, seats, docker_client, client
):
    missing = f"uno-arena-sandbox:missing-{os.getpid()}"
    sick = workers.start("sick", SANDBOX_IMAGE=missing, SANDBOX_WORK_DIR=seats)
    assert "is unhealthy" in sick.log and f"no sandbox image '{missing}'" in sick.log
    item, matches = ladder_with_matches("img", 3)
    time.sleep(WATCH_SECONDS)
    assert untouched(matches), "the unhealthy worker took a match"
    assert "Task matches.tasks.match_play[" not in sick.log  # not even received: it consumes no match queue
    beat = wait_for("the sick worker's heartbeat", lambda: heartbeat_of("sick"), 10)
    assert (beat.healthy, beat.consuming) == (False, False)
    assert f"no sandbox image '{missing}'" in beat.health_reason
    page = client.get("/matches/queue/").content.decode()
    assert "unhealthy: the Docker engine does not answer or has no sandbox image" in page
    assert "(not taking matches)" in page

    with SandboxWatch([m.pk for m in matches]) as watch:
        healthy = workers.start("healthy", SANDBOX_WORK_DIR=seats)
        ready = time.monotonic()
        wait_for("the healthy worker to play every match", lambda: all_finished(matches), 120, healthy)
        took = time.monotonic() - ready
    assert_each_played_once(item, matches)
    rows = Match.objects.filter(pk__in=[m.pk for m in matches])
    assert all(row.attempts == 1 and row.worker.startswith("healthy-") for row in rows)
    assert "Task matches.tasks.match_play[" not in sick.log
    assert_nothing_left(watch, docker_client, [seats])
    print(f"\nimage missing: 3 matches played by the healthy worker {took:.1f} s after it was ready")


def test_a_worker_whose_seats_folder_is_full_waits_until_there_is_space(workers, docker_client):
    with tiny_tmpfs() as folder:
        fill(folder)
        worker = workers.start(
            "full", SANDBOX_WORK_DIR=folder, WORKER_MIN_FREE_BYTES=65536, WORKER_HEALTH_SECONDS=1,
        )
        assert "is unhealthy" in worker.log and "bytes free, less than WORKER_MIN_FREE_BYTES=65536" in worker.log
        item, matches = ladder_with_matches("full", 2)
        time.sleep(WATCH_SECONDS)
        assert untouched(matches), "the worker with a full seats' folder took a match"
        beat = wait_for("the worker's heartbeat", lambda: heartbeat_of("full"), 10)
        assert not beat.healthy and "bytes free" in beat.health_reason

        with SandboxWatch([m.pk for m in matches]) as watch:
            (folder / "filler").unlink()  # the operator frees space
            freed = time.monotonic()
            wait_for("the matches", lambda: all_finished(matches), 120, worker)
            took = time.monotonic() - freed
        assert "is healthy again; consuming" in worker.log
        assert_each_played_once(item, matches)
        assert all(row.attempts == 1 for row in Match.objects.filter(pk__in=[m.pk for m in matches]))
        assert wait_for("the healthy heartbeat", lambda: getattr(heartbeat_of("full"), "healthy", False), 15)
        assert_nothing_left(watch, docker_client, [folder])
    print(f"\nseats' folder full: both matches played {took:.1f} s after space was freed")
