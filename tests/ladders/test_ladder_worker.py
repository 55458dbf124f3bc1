"""A ladder of reference bots through the real path: beat's task on a Celery worker (Redis),
PostgreSQL, the Docker sandbox. The weakest bot ends last and the strongest above it.

Three bots (expert, first, random), 2 seats, one-round games played from both
seats: measured in-process over 100 seeds, random loses 100 of 100 such
matches to first and 99 to expert, expert beats first in 74 of 100; so random
last is certain in a handful of matches while expert above first is only
likely, and not asserted.
"""

from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from ladder_helpers import user

from bots import services as bot_services
from bots.demo import reference_bot_upload
from bots.models import BotVersion
from ladders import tasks
from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange
from ladders.services import ladder_enter
from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

RATED_MATCHES = 9


def wait_for(what: str, check, timeout: float, worker):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    pytest.fail(f"timed out after {timeout}s waiting for {what}\nworker log:\n{worker.log[-4000:]}")


def test_a_ladder_of_reference_bots_played_by_a_real_worker_ranks_the_weakest_last(
    celery_worker_factory, docker_client
):
    worker = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    bots = {}
    for name, module in (("expert", "expert"), ("first", "first"), ("random", "random_bot")):
        bot = bot_services.bot_create(owner=user(f"{name}-owner"), name=name)
        filename, data = reference_bot_upload(module)
        bot_services.bot_version_create(bot=bot, filename=filename, data=data)
        bots[name] = bot
    wait_for(
        "the validation matches",
        lambda: not BotVersion.objects.filter(status=BotVersion.Status.VALIDATING).exists(),
        120, worker,
    )
    assert set(BotVersion.objects.values_list("status", flat=True)) == {"active"}

    ladder = Ladder(name="Worker ladder", slug="worker", rules={"rounds": 1}, seats=2, games=1, max_pending=2)
    ladder.full_clean()
    ladder.save()
    for bot in bots.values():
        ladder_enter(ladder, bot)

    def rated() -> int:
        return LadderMatch.objects.filter(ladder=ladder, rated=True).count()

    # What beat does every LADDER_MATCHMAKE_SECONDS: the task goes to the maintenance queue.
    deadline = time.monotonic() + 240
    while rated() < RATED_MATCHES and time.monotonic() < deadline:
        tasks.ladder_matchmake_all.delay()
        time.sleep(1.0)
    assert rated() >= RATED_MATCHES, f"only {rated()} rated matches\nworker log:\n{worker.log[-4000:]}"
    assert "ladders.tasks.ladder_matchmake_all" in worker.log

    ladder_matches = Match.objects.filter(ladder_match__ladder=ladder)
    done = ladder_matches.filter(status=Match.Status.DONE)
    assert not ladder_matches.filter(status=Match.Status.FAILED).exists()
    assert {m.timings["backend"] for m in done} == {"docker"}
    # Every finished match rated exactly once: two rating changes per 2-seat match.
    assert RatingChange.objects.filter(ladder=ladder).count() == 2 * done.count()
    assert ladder_matches.filter(status__in=["queued", "running"]).count() <= ladder.max_pending

    rating = {e.bot.name: e.rating for e in LadderEntry.objects.filter(ladder=ladder).select_related("bot")}
    assert min(rating, key=rating.get) == "random", rating
    assert rating["expert"] > rating["random"] + 30, rating
    call_command("recompute_ratings", "--check", "--ladder", "worker")
