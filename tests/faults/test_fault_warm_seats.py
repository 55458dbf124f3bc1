"""Warm seats by default (issue 18 point 1): a Docker worker keeps warm seat containers sized
from the seats it serves, a match takes them, and nothing is left at any stop: a graceful
stop (SIGTERM) removes them, and after a SIGKILL the next start of a worker of the same
installation on the same host removes what the dead one left, never another installation's.
Real worker subprocesses, PostgreSQL, Redis (the test's own), Docker."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from faultsupport import ladder_with_matches, seats_folder
from testsupport import wait_for

from matches import sandboxing
from matches.models import Match
from sandbox import docker_backend

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

WARM = {"SANDBOX_DOCKER_WARM": "auto"}  # the default; the tests' worker helper turns it off


def owned_by(docker_client, worker) -> list[dict]:
    """The sandbox containers (running or not) the worker's process started, as listed."""
    rows = docker_client.api.containers(
        all=True, filters={"label": f"{docker_backend.LABEL_INSTALLATION}={sandboxing.installation_id()}"}
    )
    return [row for row in rows if row["Labels"].get(docker_backend.LABEL_OWNER, "").startswith(f"{worker.proc.pid}.")]


def warm_ids(docker_client, worker) -> set[str]:
    return {row["Id"] for row in owned_by(docker_client, worker)
            if row["Labels"].get(docker_backend.LABEL_WARM) and row["State"] == "running"}


def four_seat_ladder():
    from ladders.models import Ladder

    item = Ladder(name="Warm four", slug="warm-four", rules={"players": 4, "rounds": 1}, seats=4, deals=1,
                  duplicate=False, max_pending=1)
    item.full_clean()
    item.save()
    return item


def test_a_worker_keeps_warm_seats_for_the_most_seats_of_an_active_ladder_and_a_match_takes_them(workers, docker_client):
    four_seat_ladder()  # no entries: it only tells the worker how many seats a match may need
    with seats_folder() as seats:
        worker = workers.start("warm", SANDBOX_WORK_DIR=seats, **WARM)
        first = wait_for("8 warm seats", lambda: ids if len(ids := warm_ids(docker_client, worker)) == 8 else None, 60, worker)
        labels = {row["Labels"][docker_backend.LABEL_HOST] for row in owned_by(docker_client, worker)}
        assert labels == {docker_backend.host_name()}
        assert "warm sandbox seats: 8 in process" in worker.log  # a 4-seat match more than it plays at once
        _, (match,) = ladder_with_matches("warm", 1)
        wait_for("the match", lambda: Match.objects.get(pk=match.pk).status == "done", 90, worker)
        row = Match.objects.get(pk=match.pk)
        starts = [seat["start"] for seat in row.timings["seats"]]
        # Both seats were warm ones: those containers went with the match (removed in the
        # background after the result), and the pool started others in their place.
        wait_for("the used seats removed", lambda: len(first - warm_ids(docker_client, worker)) == 2, 30, worker)
        wait_for("the pool refilled", lambda: len(warm_ids(docker_client, worker) - first) == 2, 60, worker)
        worker.kill(signal.SIGTERM)
        assert owned_by(docker_client, worker) == [], "a warm seat was left after SIGTERM"
        assert list(Path(seats).iterdir()) == [], "a seat folder was left after SIGTERM"
    print(f"\nwarm seat start in the worker: {', '.join(f'{s * 1000:.0f} ms' for s in starts)}")


def test_after_sigkill_the_next_worker_start_removes_the_leftovers_but_not_another_installations(workers, docker_client):
    foreign = docker_client.containers.create(
        docker_backend.IMAGE, ["true"], network_disabled=True,
        labels={docker_backend.LABEL_MATCH: "warm", docker_backend.LABEL_WARM: "1",
                docker_backend.LABEL_INSTALLATION: "another-installation", docker_backend.LABEL_HOST: docker_backend.host_name(),
                docker_backend.LABEL_OWNER: "1.0", docker_backend.LABEL_STARTED: "0"},
    )
    try:
        with seats_folder() as seats:
            doomed = workers.start("doomed", SANDBOX_WORK_DIR=seats, **WARM)
            wait_for("4 warm seats", lambda: len(warm_ids(docker_client, doomed)) == 4, 60, doomed)
            doomed.kill(signal.SIGKILL)
            left = owned_by(docker_client, doomed)
            assert len(left) >= 2 and len(list(Path(seats).iterdir())) >= 2  # what a SIGKILL leaves
            started = time.monotonic()
            successor = workers.start("successor", SANDBOX_WORK_DIR=seats, **WARM)
            wait_for("the dead worker's seats removed", lambda: owned_by(docker_client, doomed) == [], 30, successor)
            print(f"\nleftovers of the SIGKILLed worker gone {time.monotonic() - started:.1f} s after the next start")
            wait_for("the successor's warm seats", lambda: len(warm_ids(docker_client, successor)) == 4, 60, successor)
            names = {p.name for p in Path(seats).iterdir()}
            assert all(f"-warm-{successor.proc.pid}-" in name for name in names), names
            foreign.reload()  # still there: another installation's container is never touched
            successor.kill(signal.SIGTERM)
            assert owned_by(docker_client, successor) == [] and list(Path(seats).iterdir()) == []
    finally:
        foreign.remove(force=True)


def test_warm_seats_are_one_more_than_the_matches_at_once_times_the_most_seats_of_an_active_ladder(db, settings):
    settings.SANDBOX_DOCKER_WARM = "auto"
    from ladders.selectors import active_ladder_seats

    # one match more than it plays at once: the next match's seats wait while a match's are replaced
    assert sandboxing.warm_seats_for(1, active_ladder_seats) == 4  # no ladder: validation matches have 2 seats
    item = four_seat_ladder()
    assert (sandboxing.warm_seats_for(1, active_ladder_seats), sandboxing.warm_seats_for(3, active_ladder_seats)) == (8, 16)
    assert sandboxing.warm_seats_for(3) == 8  # no count given: sized for validation matches
    item.active = False
    item.save()
    assert sandboxing.warm_seats_for(1, active_ladder_seats) == 4
    settings.SANDBOX_DOCKER_WARM = "3"
    assert sandboxing.warm_seats_for(2, active_ladder_seats) == 3
    settings.SANDBOX_DOCKER_WARM = "0"
    assert sandboxing.warm_seats_for(2, active_ladder_seats) == 0


def test_a_requeued_attempt_s_containers_are_removed(transactional_db, docker_client, settings):
    from datetime import timedelta

    from matches import services

    settings.SANDBOX_BACKEND = "docker"
    _, (match,) = ladder_with_matches("requeue", 1)
    Match.objects.filter(pk=match.pk).update(
        status="running", attempt_token="a" * 32, attempts=1, started_at=services.database_now(),
        deadline=services.database_now() + timedelta(hours=1), lease_expires_at=services.database_now() - timedelta(seconds=1),
    )
    label = sandboxing.sandbox_label(Match.objects.get(pk=match.pk))
    sandboxing.label_sandboxes()
    labels = {docker_backend.LABEL_MATCH: label, docker_backend.LABEL_INSTALLATION: docker_backend.installation(),
              docker_backend.LABEL_HOST: docker_backend.host_name(), docker_backend.LABEL_OWNER: docker_backend.owner_token(),
              docker_backend.LABEL_STARTED: str(int(time.time()))}
    seat = docker_client.containers.create(docker_backend.IMAGE, ["true"], network_disabled=True, labels=labels)
    other = docker_client.containers.create(
        docker_backend.IMAGE, ["true"], network_disabled=True, labels=labels | {docker_backend.LABEL_INSTALLATION: "another-one"}
    )
    try:
        assert services.match_requeue_expired(match.pk) is True
        assert docker_backend.match_containers(label) == [other]
    finally:
        for container in (seat, other):
            try:
                container.remove(force=True)
            except Exception:
                pass


def test_the_health_check_refuses_a_different_image_under_the_same_tag(docker_client, settings):
    from matches import worker as worker_health

    settings.SANDBOX_BACKEND = "docker"
    settings.WORKER_MIN_FREE_BYTES = 0
    real = docker_backend.image_id(settings.SANDBOX_IMAGE)
    saved = worker_health.state.image_id
    try:
        worker_health.state.image_id = None
        assert worker_health.worker_health() is None
        assert worker_health.state.image_id == real  # pinned at the first check
        worker_health.state.image_id = "sha256:" + "0" * 64  # as if the tag moved since
        problem = worker_health.worker_health()
        assert problem is not None and "is now" in problem and "restart the worker" in problem
    finally:
        worker_health.state.image_id = saved
