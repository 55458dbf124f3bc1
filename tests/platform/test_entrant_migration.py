"""bots/0004 adds Bot.plays_in_events and marks the bots already seated in a ladder or tournament
match (an organizer's read of an entrant), not those seated only in challenges or validation."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("bots", "0003_version_validation_runs")]


@pytest.mark.django_db(transaction=True)
def test_the_backfill_marks_the_bots_seated_in_events_and_no_other():
    executor = MigrationExecutor(connection)
    # every other app at its newest migration that does not need the new field
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] != "bots"]
    executor.migrate([*others, *BEFORE])
    old = MigrationExecutor(connection).loader.project_state([*others, *BEFORE]).apps
    User, Bot, BotVersion = (old.get_model(*name.split(".")) for name in ("auth.User", "bots.Bot", "bots.BotVersion"))
    Match, MatchSeat = old.get_model("matches", "Match"), old.get_model("matches", "MatchSeat")
    alice = User.objects.create(username="alice")
    bots = {}
    for name, kinds in {"entrant": ["challenge", "tournament"], "challenger": ["challenge", "validation"],
                        "laddered": ["ladder"], "idle": []}.items():
        bot = bots[name] = Bot.objects.create(owner=alice, name=name)
        version = BotVersion.objects.create(bot=bot, number=1, filename="b.py", source=b"", sha256="0" * 64, size=0)
        for seed, kind in enumerate(kinds):
            match = Match.objects.create(kind=kind, rules={"players": 2}, seed=seed)
            copied = {"match": match, "queued_at": match.queued_at}  # historical models have no fill_copies
            MatchSeat.objects.create(seat=0, bot_version=version, bot=bot, **copied)
            MatchSeat.objects.create(seat=1, reference_bot="random", **copied)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from bots.models import Bot as NewBot

    marked = dict(NewBot.objects.filter(pk__in=[b.pk for b in bots.values()]).values_list("name", "plays_in_events"))
    assert marked == {"entrant": True, "challenger": False, "laddered": True, "idle": False}
