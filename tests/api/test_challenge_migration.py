"""matches/0012 and api/0003 move the Challenge model from the api app to matches: the rows of the
table ``api_challenge`` stay, and so does its content type (the staff's permissions on it)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("matches", "0011_deals"), ("api", "0002_challenge_address")]


@pytest.mark.django_db(transaction=True)
def test_moving_challenge_to_matches_keeps_its_rows_and_content_type():
    executor = MigrationExecutor(connection)
    # every other app at its newest migration that does not need the move
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in ("matches", "api")]
    executor.migrate([*others, *BEFORE])
    old = MigrationExecutor(connection).loader.project_state([*others, *BEFORE]).apps
    User, Match = old.get_model("auth", "User"), old.get_model("matches", "Match")
    Ladder, OldChallenge = old.get_model("ladders", "Ladder"), old.get_model("api", "Challenge")
    ContentType = old.get_model("contenttypes", "ContentType")
    alice = User.objects.create(username="alice")
    ladder = Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2})
    match = Match.objects.create(kind="challenge", rules={"players": 2}, seed=7)
    asked = OldChallenge.objects.create(challenger=alice, match=match, ladder=ladder, address="203.0.113.9")
    old_type = ContentType.objects.get_or_create(app_label="api", model="challenge")[0].pk

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from django.contrib.contenttypes.models import ContentType as NewContentType

    from matches.models import Challenge

    kept = Challenge.objects.select_related("challenger", "ladder").get(pk=asked.pk)
    assert (kept.challenger.username, kept.ladder.slug, kept.match_id, kept.address) == (
        "alice", "duel", match.pk, "203.0.113.9"
    )
    assert NewContentType.objects.get_for_model(Challenge).pk == old_type
    assert not NewContentType.objects.filter(app_label="api", model="challenge").exists()
