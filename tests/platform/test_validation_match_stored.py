"""A version's newest validation match is stored on the version (``BotVersion.validation_match_id``):
validation sets it whenever it queues a match, bots/0005 backfills it from the seats already stored, and
everything that asked the version's seats for it (the API's versions, ``can_revalidate``, whether an
unplanned version was validated by the platform) reads that column instead, so none of them costs more
as the version plays more matches."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext
from platform_helpers import good_bot

from bots import services as bot_services
from bots.models import BotVersion
from matches import services as match_services
from matches.models import Match, MatchSeat
from validation import services as validation_services
from validation.selectors import can_revalidate

pytestmark = pytest.mark.usefixtures("process_sandbox")

BEFORE = ("bots", "0004_bot_plays_in_events")
AFTER = ("bots", "0005_version_validation_match")


def _newest_validation_match(version) -> int | None:
    return (
        Match.objects.filter(kind="validation", seats__bot_version=version).order_by("-pk")
        .values_list("pk", flat=True).first()
    )


@pytest.mark.django_db
def test_each_validation_match_queued_is_stored_on_the_version_and_shown_by_the_api(bot, alice):
    version = bot_services.bot_version_create(bot=bot, filename="good.py", data=good_bot())  # 2 and 4 seats queued
    version.refresh_from_db()
    runs = version.validation_runs
    assert len(runs) == 2 and version.validation_match_id == max(run["match"] for run in runs)
    assert version.validation_match_id == _newest_validation_match(version)

    # a platform failure rejects it; validating again queues new matches: the newest is stored
    two, four = (run["match"] for run in runs)
    assert match_services.match_fail(four, None, "worker lost")
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED and can_revalidate(version)
    validation_services.bot_version_revalidate(version)
    version.refresh_from_db()
    assert version.validation_match_id not in (two, four)
    assert version.validation_match_id == _newest_validation_match(version)

    body = Client().get(f"/api/bots/{bot.pk}/versions/{version.number}/").json()
    assert body["validation_match"] == version.validation_match_id
    listed = Client().get(f"/api/bots/{bot.pk}/versions/").json()["results"]
    assert [v["validation_match"] for v in listed] == [version.validation_match_id]


@pytest.mark.django_db
def test_a_version_made_active_without_validation_has_none_and_is_not_counted_as_validated_by_the_platform(bot):
    version = bot_services.bot_version_create(bot=bot, filename="seeded.py", data=good_bot(), validate=False)
    version.refresh_from_db()
    assert version.validation_match_id is None
    assert validation_services._validated_by_platform([version.pk]) == set()
    assert Client().get(f"/api/bots/{bot.pk}/versions/{version.number}/").json()["validation_match"] is None
    BotVersion.objects.filter(pk=version.pk).update(validation_match_id=123)  # a single match of before plans
    assert validation_services._validated_by_platform([version.pk]) == {version.pk}


def _play_ladder_matches(version, n: int) -> None:
    for seed in range(n):
        match = Match.objects.create(kind="ladder", rules={"players": 2}, seed=seed, status=Match.Status.DONE)
        MatchSeat(match=match, seat=0, bot_version=version, rank=1).fill_copies().save()
        MatchSeat(match=match, seat=1, reference_bot="random", rank=2).fill_copies().save()


def _version_reads(bot, version) -> dict[str, list[str]]:
    client, reads = Client(), {}
    for label, path in {"list": f"/api/bots/{bot.pk}/versions/",
                        "detail": f"/api/bots/{bot.pk}/versions/{version.number}/"}.items():
        client.get(path)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        reads[label] = [q["sql"] for q in queries]
    return reads


@pytest.mark.django_db
def test_the_api_versions_read_no_seat_and_the_same_queries_at_10_and_100_versions(bot):
    first = bot_services.bot_version_create(bot=bot, filename="v1.py", data=good_bot("v1"))
    _play_ladder_matches(first, 30)
    BotVersion.objects.bulk_create(
        BotVersion(bot=bot, number=n, filename=f"v{n}.py", source=b"", sha256=f"{n:064x}", size=0,
                   status=BotVersion.Status.ACTIVE, validation_match_id=n if n % 2 else None)
        for n in range(2, 11)
    )
    small = _version_reads(bot, first)
    BotVersion.objects.bulk_create(
        BotVersion(bot=bot, number=n, filename=f"v{n}.py", source=b"", sha256=f"{n:064x}", size=0,
                   status=BotVersion.Status.ACTIVE, validation_match_id=n if n % 2 else None)
        for n in range(11, 101)
    )
    large = _version_reads(bot, first)
    assert {k: len(v) for k, v in large.items()} == {k: len(v) for k, v in small.items()}
    for sql in large["list"] + large["detail"]:
        assert "matches_matchseat" not in sql, sql
    body = Client().get(f"/api/bots/{bot.pk}/versions/?page_size=100").json()["results"]
    assert {v["number"]: v["validation_match"] for v in body if v["number"] in (99, 100)} == {99: 99, 100: None}


@pytest.mark.django_db(transaction=True)
def test_the_migration_stores_each_versions_newest_validation_match_and_reverses():
    executor = MigrationExecutor(connection)
    # every other app at its newest migration that does not need the new field
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] != "bots"]
    executor.migrate([*others, BEFORE])
    old = MigrationExecutor(connection).loader.project_state([*others, BEFORE]).apps
    User, Bot, BotVersion_ = (old.get_model(*name.split(".")) for name in ("auth.User", "bots.Bot", "bots.BotVersion"))
    Match_, MatchSeat_ = old.get_model("matches", "Match"), old.get_model("matches", "MatchSeat")
    owner = User.objects.create(username="old-owner")
    expected = {}
    for name, kinds in {"revalidated": ["validation", "ladder", "validation", "ladder"],
                        "validated once": ["validation"], "seeded": ["ladder", "challenge"], "idle": []}.items():
        bot = Bot.objects.create(owner=owner, name=name)
        version = BotVersion_.objects.create(bot=bot, number=1, filename="b.py", source=b"", sha256="0" * 64, size=0)
        newest = None
        for seed, kind in enumerate(kinds):
            match = Match_.objects.create(kind=kind, rules={"players": 2}, seed=seed)
            copied = {"match": match, "queued_at": match.queued_at}  # historical models have no fill_copies
            MatchSeat_.objects.create(seat=0, bot_version=version, bot=bot, **copied)
            MatchSeat_.objects.create(seat=1, reference_bot="random", **copied)
            newest = match.pk if kind == "validation" else newest
        expected[version.pk] = newest

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([*others, AFTER])
    new = MigrationExecutor(connection).loader.project_state([*others, AFTER]).apps
    stored = dict(new.get_model("bots", "BotVersion").objects.values_list("pk", "validation_match_id"))
    assert stored == expected and sum(v is not None for v in stored.values()) == 2

    # reversed: the column goes, the versions and seats stay; forward again: the same values
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([*others, BEFORE])
    columns = [c.name for c in connection.introspection.get_table_description(connection.cursor(), "bots_botversion")]
    assert "validation_match_id" not in columns
    assert BotVersion_.objects.count() == 4 and MatchSeat_.objects.count() == 14
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert dict(BotVersion.objects.values_list("pk", "validation_match_id")) == expected
