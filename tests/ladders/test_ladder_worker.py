"""A ladder of the four reference bots through the real path ends in strength order.

Beat's task (``ladders.tasks.ladder_matchmake_all``) on a Celery worker through
Redis, PostgreSQL, the Docker sandbox, the result hook rating each match. The
ladder seats all four bots at one table (4 seats, one match pending at a time),
one-round games over ``DEALS`` deals, each dealt four times with the seats
rotated (duplicate): a 4-seat match gives six pairwise results, and
the many deals make the result of a match follow strength rather than luck.

The task gets a seed per round, so the pairings and match seeds are
reproducible and the bots are deterministic: the run always ends the same.
How much that depends on the seed (docs/ratings.md, "Strength order"): the
same ladder simulated in-process (strength_order_sim.py, which the test also
checks the real run against, rating for rating) ends in strength order for
each of 30 seeds.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from ladder_helpers import user
from strength_order_sim import simulate
from testsupport import wait_for

from bots import services as bot_services
from bots.models import BotVersion
from engine.bots import REFERENCE_BOTS
from ladders import tasks
from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange
from ladders.services import ladder_enter
from matches.models import Match
from web.demo import reference_bot_upload

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

#: matchmaking runs, one 4-seat match each
ROUNDS = 12
#: deals per match; duplicate plays each from all four seats
DEALS = 100
#: round r of the ladder runs beat's task with seed 1000 * LADDER_SEED + r
LADDER_SEED = 0


def test_a_ladder_of_the_reference_bots_played_by_a_real_worker_ends_in_strength_order(
    celery_worker_factory, docker_client
):
    worker = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    # weakest first, entered in that order
    bots = {}
    for name, agent in REFERENCE_BOTS.items():
        bot = bot_services.bot_create(owner=user(f"{name}-owner"), name=name)
        filename, data = reference_bot_upload(agent.__module__.rsplit(".", 1)[1])
        bot_services.bot_version_create(bot=bot, filename=filename, data=data)
        bots[name] = bot
    wait_for(
        "the validation matches",
        lambda: not BotVersion.objects.filter(status=BotVersion.Status.VALIDATING).exists(),
        180, worker,
    )
    assert set(BotVersion.objects.values_list("status", flat=True)) == {"active"}

    ladder = Ladder(name="Worker ladder", slug="worker", rules={"rounds": 1}, seats=4, deals=DEALS, max_pending=1)
    ladder.full_clean()
    ladder.save()
    for bot in bots.values():
        ladder_enter(ladder, bot)

    def rated() -> int:
        return LadderMatch.objects.filter(ladder=ladder, rated=True).count()

    def refitted() -> bool:
        # the ladder_refit task (maintenance queue) has fitted every stored result
        last = RatingChange.objects.filter(ladder=ladder).order_by("-pk").values_list("pk", flat=True).first()
        return Ladder.objects.get(pk=ladder.pk).refit_through == last

    for round_ in range(ROUNDS):
        # What beat does every LADDER_MATCHMAKE_SECONDS, seeded: the task runs on the maintenance queue.
        tasks.ladder_matchmake_all.delay(seed=1000 * LADDER_SEED + round_)
        # A match is 400 games, each starting a fresh bot process per seat (BOT_CONTRACT.md): 107 to
        # 284 s each on the shared 2-core machine at load 8, so the wait is generous.
        wait_for(f"match {round_ + 1} rated", lambda n=round_ + 1: rated() == n, 900, worker)
        # matchmaking reads the refitted columns: the next round waits for them, as the simulation does
        wait_for(f"match {round_ + 1} refitted", refitted, 120, worker)
    assert "ladders.tasks.ladder_matchmake_all" in worker.log and "ladders.tasks.ladder_refit" in worker.log

    ladder_matches = Match.objects.filter(ladder_match__ladder=ladder)
    assert ladder_matches.count() == ROUNDS
    assert set(ladder_matches.values_list("status", flat=True)) == {Match.Status.DONE}
    assert {m.timings["backend"] for m in ladder_matches} == {"docker"}
    assert {m.deals for m in ladder_matches} == {DEALS}
    # Every match rated exactly once: four rating changes per 4-seat match.
    assert RatingChange.objects.filter(ladder=ladder).count() == 4 * ROUNDS

    rating = {e.bot.name: e.rating for e in LadderEntry.objects.filter(ladder=ladder).select_related("bot")}
    assert sorted(rating, key=rating.get) == list(REFERENCE_BOTS), rating
    # The worker, the sandbox, the result hook and the refit task played and rated exactly what the
    # in-process referee, matchmaking and fit give for the same seeds: the simulation's figures hold here.
    assert rating == simulate(list(REFERENCE_BOTS), 4, DEALS, ROUNDS, LADDER_SEED)
    call_command("recompute_ratings", "--check", "--ladder", "worker")
