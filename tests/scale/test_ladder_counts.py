"""The ladder pages read stored counts (LadderEntry.wins and last_change, written by the result hook
and the refit, filled for existing rows by migration ladders/0008): their queries stay constant as a
ladder's entries and history grow, and seed_scale's bulk rows carry the same counts as the hook's."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.scale.test_scale_query_counts import MAX_QUERIES


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migrations_fill_wins_last_change_and_rated_matches_from_the_history():
    executor = MigrationExecutor(connection)
    # the play app (which depends on the newest ladders) unapplied, so the plan only goes backwards
    before = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in ("ladders", "play")]
    before.append(("ladders", "0007_rating_change_entry_newest"))
    executor.migrate([*before, ("play", None)])
    old = MigrationExecutor(connection).loader.project_state(before).apps
    User, Bot, BotVersion = old.get_model("auth", "User"), old.get_model("bots", "Bot"), old.get_model("bots", "BotVersion")
    Match = old.get_model("matches", "Match")
    Ladder, LadderEntry = old.get_model("ladders", "Ladder"), old.get_model("ladders", "LadderEntry")
    RatingChange, LadderMatch = old.get_model("ladders", "RatingChange"), old.get_model("ladders", "LadderMatch")
    ladder = Ladder.objects.create(name="Old", slug="old", rules={"players": 2})
    entries = []
    for name in ("a", "b", "c"):
        bot = Bot.objects.create(owner=User.objects.create(username=name), name=name)
        version = BotVersion.objects.create(bot=bot, number=1, filename="main.py", source=b"x", sha256="0" * 64, size=1)
        entries.append((LadderEntry.objects.create(ladder=ladder, bot=bot, matches_played=3), version))
    # a wins twice; b once; c never; the last match is not fitted yet (after null)
    ranks = [(1, 2, 2), (1, 2, 1), (2, 1, 2)]
    for i, row in enumerate(ranks):
        match = Match.objects.create(kind="ladder", rules={"players": 3}, seed=i)
        LadderMatch.objects.create(ladder=ladder, match=match, rated=True)
        for (entry, version), rank in zip(entries, row, strict=True):
            fitted = i < 2
            RatingChange.objects.create(
                ladder=ladder, match=match, entry=entry, bot_version=version, rank=rank, before=Decimal(1500 + i),
                after=Decimal(1500 + i) + (Decimal("7.25") if rank == 1 else Decimal("-3.5")) if fitted else None,
                matches_after=i + 1,
            )

    # a match not rated yet, and another ladder without matches
    LadderMatch.objects.create(ladder=ladder, match=Match.objects.create(kind="ladder", rules={"players": 3}, seed=9))
    Ladder.objects.create(name="Empty", slug="empty", rules={"players": 2})

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from ladders.models import Ladder as NewLadder
    from ladders.models import LadderEntry as Entry

    assert dict(NewLadder.objects.values_list("slug", "rated_matches")) == {"old": 3, "empty": 0}

    stored = {e.bot.name: (e.wins, e.last_change, e.matches_played) for e in Entry.objects.select_related("bot")}
    # the last change is the newest fitted one (match 2 of the rows above): +7.25 for a 1st, -3.50 otherwise
    assert stored == {
        "a": (2, Decimal("7.25"), 3),
        "b": (1, Decimal("-3.50"), 3),
        "c": (1, Decimal("7.25"), 3),
    }


def _ladder_paths():
    from ladders.models import Ladder

    ladder = Ladder.objects.order_by("-pk").first()  # the newest seeded ladder holds all its run's bots
    entry = ladder.entries.order_by("pk").first()
    return ladder, {
        "ladders": "/ladders/",
        "api ladders": "/api/ladders/",
        "ladder table": f"/ladders/{ladder.slug}/",
        "ladder table past the end": f"/ladders/{ladder.slug}/?page=99",
        "ladder table search": f"/ladders/{ladder.slug}/?q=scale",
        "api ladder": f"/api/ladders/{ladder.slug}/",
        "api standings": f"/api/ladders/{ladder.slug}/standings/",
        "ladder bot page": f"/ladders/{ladder.slug}/bots/{entry.bot_id}/",
        "api rating history": f"/api/ladders/{ladder.slug}/bots/{entry.bot_id}/history/",
    }


def _counts(client: Client, *, cold: bool = False) -> dict[str, int]:
    """Queries per page on a second visit: its kept parts (the table, the match lists, the chart
    and head-to-head) read from the cache, or with ``cold`` computed again."""
    counts = {}
    _ladder, paths = _ladder_paths()
    for label, path in paths.items():
        client.get(path)  # warm: sessions, content types
        if cold:
            cache.clear()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200, (label, path, response.status_code)
        counts[label] = len(queries)
    return counts


@pytest.mark.slow
@pytest.mark.django_db
def test_the_ladder_pages_make_the_same_queries_at_10_and_100_entries_and_the_counts_match_the_history():
    from ladders.models import Ladder, LadderEntry
    from ladders.services import ladder_counts_check

    call_command("seed_scale", bots=10, matches=20, ladders=1, tournaments=0, stdout=StringIO())
    client = Client()
    small, small_cold = _counts(client), _counts(client, cold=True)
    call_command("seed_scale", bots=100, matches=300, ladders=1, tournaments=0, force=True, stdout=StringIO())
    ladder, _ = _ladder_paths()
    assert ladder.entries.count() == 100
    large, large_cold = _counts(client), _counts(client, cold=True)
    assert large == small and large_cold == small_cold
    assert max(large_cold.values()) < MAX_QUERIES, large_cold
    # a kept part costs no query of its own: the page's second visit makes fewer
    assert large["ladder table"] < large_cold["ladder table"] and large["ladder bot page"] < large_cold["ladder bot page"]
    # the bulk rows of seed_scale carry the counts the hook and the refit keep
    for each in Ladder.objects.all():
        assert ladder_counts_check(each) == []
    assert LadderEntry.objects.filter(wins__gt=0).exists() and LadderEntry.objects.filter(last_change__isnull=False).exists()


@pytest.mark.django_db
def test_a_bots_rating_history_pages_by_keyset_and_its_chart_is_a_bounded_window():
    from ladders import charts, selectors
    from ladders.models import LadderEntry, RatingChange

    call_command("seed_scale", bots=6, matches=40, ladders=1, tournaments=0, stdout=StringIO())
    entry = LadderEntry.objects.order_by("-matches_played", "pk").first()
    everything = list(RatingChange.objects.filter(entry=entry).order_by("-pk").values_list("pk", flat=True))
    assert len(everything) >= 10
    seen, page = [], selectors.entry_history_page(entry, size=3)
    assert page.newest
    while True:
        seen += [c.pk for c in page.changes]
        if page.older is None:
            break
        page = selectors.entry_history_page(entry, before=page.older, size=3)
        assert not page.newest and len(page.changes) <= 3
    assert seen == everything
    # the chart: the newest 5 fitted changes, oldest first, its x axis counting from their first match
    window = selectors.entry_chart_changes(entry, limit=5)
    fitted = list(RatingChange.objects.filter(entry=entry, after__isnull=False).order_by("pk"))
    assert [c.pk for c in window] == [c.pk for c in fitted[-5:]]
    chart = charts.rating_chart([c.after for c in window], start=window[0].before, first=window[0].matches_after)
    assert chart.x_ticks[0].label == str(window[0].matches_after - 1) and len(chart.points.split()) == 6
    client = Client()
    base = f"/ladders/{entry.ladder.slug}/bots/{entry.bot_id}/"
    match_ids = list(RatingChange.objects.filter(entry=entry).order_by("-pk").values_list("match_id", flat=True))
    first = client.get(base).content.decode()
    assert f"#{match_ids[0]}<" in first  # the newest change's match is listed
    older = client.get(f"{base}?before={everything[4]}").content.decode()
    assert f"#{match_ids[5]}<" in older and f'>#{match_ids[4]}<' not in older.split('id="history"')[1].split("</table>")[0]
    assert client.get(f"{base}?before=nope").status_code == 404


@pytest.mark.slow
@pytest.mark.django_db
def test_one_matchmaking_pass_makes_the_same_queries_at_10_and_100_entries():
    import random

    from ladders.models import Ladder, LadderEntry
    from ladders.services import ladder_matchmake
    from matches.models import Match

    def one_pass() -> tuple[int, int]:
        ladder = Ladder.objects.order_by("-pk").first()
        Ladder.objects.filter(pk=ladder.pk).update(max_pending=3)
        with CaptureQueriesContext(connection) as queries:
            made = ladder_matchmake(ladder, rng=random.Random(3))
        # every table has distinct entries of this ladder
        for match in made:
            bots = [s.bot_version.bot_id for s in match.seats.select_related("bot_version")]
            assert len(set(bots)) == len(bots) == ladder.seats
            assert LadderEntry.objects.filter(ladder=ladder, bot_id__in=bots).count() == ladder.seats
        Match.objects.filter(pk__in=[m.pk for m in made]).update(status=Match.Status.CANCELLED)
        return len(made), len(queries)

    call_command("seed_scale", bots=10, matches=10, ladders=1, tournaments=0, stdout=StringIO())
    small = one_pass()
    call_command("seed_scale", bots=100, matches=100, ladders=1, tournaments=0, force=True, stdout=StringIO())
    large = one_pass()
    assert small[0] == large[0] == 3
    assert small[1] == large[1]
