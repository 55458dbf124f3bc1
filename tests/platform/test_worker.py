"""The real worker path: PostgreSQL, a Celery worker subprocess through Redis, the Docker sandbox."""

from __future__ import annotations

import signal
import time

import pytest
from platform_helpers import good_bot, make_user
from testsupport import validated_on_worker, wait_for

from bots import services as bot_services
from bots.models import BotVersion
from engine.rules import Rules
from matches import sandboxing, tasks
from matches import services as match_services
from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

# Slow enough (about 0.15 s a decision) that a worker can be killed in the middle of a match.
SLOW_BOT = b"""import time


def agent(observation, configuration):
    time.sleep(0.15)
    return observation["legal_actions"][0]
"""


def status_of(match_id: int) -> str:
    return Match.objects.values_list("status", flat=True).get(pk=match_id)


def test_a_version_is_validated_and_a_match_played_by_a_real_worker(celery_worker_factory, docker_client):
    worker = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    version = validated_on_worker("wendy", "worker-bot", good_bot("worker"), worker, 90)
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    assert "seat 0 plays" in version.validation_log
    validations = Match.objects.filter(kind=Match.Kind.VALIDATION, seats__bot_version=version)
    assert [m.timings["backend"] for m in validations] == ["docker", "docker"]  # 2 and 4 seats

    match = match_services.match_create(
        kind=Match.Kind.CHALLENGE, rules=Rules.parse(["players=3", "rounds=2"]),
        seats=[version, "greedy", "expert"], seed=99,
    )
    wait_for("the challenge match", lambda: status_of(match.pk) in ("done", "failed"), 90, worker)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts == 1
    assert sorted(s.rank for s in match.seats.all())[0] == 1
    assert match.replay_gz


def test_a_worker_killed_mid_match_leaves_the_match_to_be_played_exactly_once(
    celery_worker_factory, docker_client
):
    # The first worker's matches are presumed abandoned 6 s after they start.
    first = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker", "MATCH_STALE_AFTER": "6"})
    bot = bot_services.bot_create(owner=make_user("kim"), name="slow")
    version = bot_services.bot_version_create(bot=bot, filename="slow.py", data=SLOW_BOT, validate=False)
    match = match_services.match_create(
        kind=Match.Kind.CHALLENGE, rules=Rules.parse(["players=2", "rounds=3"]),
        seats=[version, "random"], seed=7,
    )
    wait_for("the match to start", lambda: status_of(match.pk) == "running", 60, first)
    time.sleep(1.5)
    killed_attempt = sandboxing.sandbox_label(Match.objects.get(pk=match.pk))
    first.kill(signal.SIGKILL)
    assert status_of(match.pk) == "running", "the match finished before the worker was killed; make it slower"
    killed_at = time.monotonic()

    second = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    # Beat would send the sweeper every minute; send it now that the deadline has passed.
    deadline = Match.objects.values_list("deadline", flat=True).get(pk=match.pk)
    wait_for("the deadline", lambda: match_services.timezone.now() > deadline, 30)
    tasks.match_sweep_stuck.delay()
    wait_for("the requeued match", lambda: status_of(match.pk) in ("done", "failed"), 120, second)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts == 2
    assert match.seats.count() == 2 and all(s.rank for s in match.seats.all())
    assert "decisions" in str(match.timings)
    assert time.monotonic() - killed_at < 150
    # A late redelivery of the killed worker's task must find nothing to do.
    assert tasks.match_play.apply(args=[match.pk]).get() is False
    assert Match.objects.get(pk=match.pk).attempts == 2
    # The killed attempt's sandbox is what the periodic reaper removes later; clean it up here.
    left = docker_client.containers.list(all=True, filters={"label": f"uno-arena.match={killed_attempt}"})
    for container in left:
        container.remove(force=True)
