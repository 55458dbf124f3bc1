"""A bot's and a version's match lists read from the seats' own index (MatchSeat.bot, MatchSeat.queued_at):
the migration fills the copies of existing seats, every way of creating a seat fills them, the lists
page through a bot's whole history in order, and their queries stay constant as the history grows."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.scale.test_scale_query_counts import MAX_QUERIES


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_bot_and_queued_at_of_existing_seats():
    executor = MigrationExecutor(connection)
    # every other app as it is now, matches before the seats' copies
    # the play app (which depends on the newest matches) unapplied, so the plan only goes backwards;
    # api before it gave its Challenge to matches (api/0003 needs matches/0012), bots before it
    # marked the event entrants (bots/0004 needs matches/0012)
    before = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in ("matches", "play", "api", "bots")]
    before += [("matches", "0006_match_lease_and_indexes"), ("api", "0002_challenge_address"),
               ("bots", "0003_version_validation_runs")]
    executor.migrate([*before, ("play", None)])
    old = MigrationExecutor(connection).loader.project_state(before).apps
    User, Bot, BotVersion = old.get_model("auth", "User"), old.get_model("bots", "Bot"), old.get_model("bots", "BotVersion")
    Match, MatchSeat = old.get_model("matches", "Match"), old.get_model("matches", "MatchSeat")
    owner = User.objects.create(username="old-owner")
    bot = Bot.objects.create(owner=owner, name="old-bot")
    version = BotVersion.objects.create(bot=bot, number=1, filename="main.py", source=b"x", sha256="0" * 64, size=1)
    queued = []
    for i in range(3):
        match = Match.objects.create(kind="ladder", rules={"players": 2}, seed=i)
        when = timezone.now() - timedelta(days=10 - i)
        Match.objects.filter(pk=match.pk).update(queued_at=when)
        queued.append((match.pk, when))
        MatchSeat.objects.create(match=match, seat=0, bot_version=version)
        MatchSeat.objects.create(match=match, seat=1, reference_bot="random")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from matches.models import MatchSeat as Seat

    seats = {(s.match_id, s.seat): s for s in Seat.objects.all()}
    assert len(seats) == 6
    for match_id, when in queued:
        assert seats[(match_id, 0)].bot_id == bot.pk and seats[(match_id, 0)].queued_at == when
        assert seats[(match_id, 1)].bot_id is None and seats[(match_id, 1)].queued_at == when
        assert seats[(match_id, 0)].score is None and seats[(match_id, 1)].reference_bot == "random"  # kept as they were


def test_every_way_of_creating_a_seat_copies_the_bot_and_queued_at(db):
    from django.db import IntegrityError, transaction

    from matches.models import Match, MatchSeat

    call_command("seed_scale", bots=4, matches=6, ladders=1, tournaments=0, stdout=StringIO())
    seats = MatchSeat.objects.select_related("match", "bot_version")
    assert seats.count() == 12
    for seat in seats:  # match_create (the real matches) and COPY (the copies)
        assert (seat.bot_id, seat.queued_at) == (seat.bot_version.bot_id, seat.match.queued_at)
    match = Match.objects.first()
    version = seats.first().bot_version
    saved = MatchSeat(match=match, seat=9, bot_version=version)
    saved.save()  # save() fills them too
    assert (saved.bot_id, saved.queued_at) == (version.bot_id, match.queued_at)
    with pytest.raises(IntegrityError), transaction.atomic():  # a version without its bot is refused
        MatchSeat.objects.filter(pk=saved.pk).update(bot=None)


def _history_of(bot_id: int) -> list[int]:
    from matches.models import Match, MatchSeat

    ids = MatchSeat.objects.filter(bot_version__bot_id=bot_id).values("match_id")
    return list(Match.objects.filter(pk__in=ids).order_by("-queued_at", "-pk").values_list("pk", flat=True))


@pytest.mark.slow
def test_a_bots_list_pages_through_its_whole_history_in_order_on_the_page_and_in_the_api(db):
    from matches.models import MatchSeat
    from matches.selectors import match_list, match_page, match_seats

    call_command("seed_scale", bots=4, matches=130, ladders=1, tournaments=0, stdout=StringIO())
    bot_id = MatchSeat.objects.values_list("bot_id", flat=True).order_by("bot_id").first()
    everything = _history_of(bot_id)
    assert len(everything) > 60
    seen, page = [], match_page(match_list(limit=None), seats=match_seats(bot=bot_id), size=25)
    while True:
        seen += [m.pk for m in page["matches"]]
        if page["older"] is None:
            break
        older = page["older"]
        page = match_page(match_list(limit=None), seats=match_seats(bot=bot_id), before=older, size=25)
        back = match_page(match_list(limit=None), seats=match_seats(bot=bot_id), after=page["newer"], size=25)
        assert back["older"] == older
    assert seen == everything
    oldest = match_page(match_list(limit=None), seats=match_seats(bot=bot_id), oldest=True, size=25)
    assert [m.pk for m in oldest["matches"]] == everything[-25:]
    assert [m.pk for m in match_list(bot=bot_id, limit=20)] == everything[:20]

    client, seen, url = Client(), [], f"/api/matches/?bot={bot_id}&page_size=25"
    while url:
        body = client.get(url).json()
        seen += [m["id"] for m in body["results"]]
        assert all(any(s["bot"] == bot_id for s in m["seats"]) for m in body["results"])
        url = body["next"]
    assert seen == everything
    page = Client().get(f"/matches/?bot={bot_id}")
    assert [m.pk for m in page.context["matches"]] == everything[:50]


def _busiest_bot():
    from django.db.models import Count

    from bots.models import Bot

    return Bot.objects.annotate(n=Count("versions__seats")).order_by("-n", "-pk").first()


def _list_queries(client: Client, bot) -> dict[str, int]:
    from matches.selectors import match_cursor, match_list

    version = bot.versions.first()
    second = list(match_list(bot=bot, limit=5))[1]
    paths = {
        "bot": f"/bots/{bot.pk}/",
        "version": version.get_absolute_url(),
        "matches of a bot": f"/matches/?bot={bot.pk}",
        "matches of a bot, older": f"/matches/?bot={bot.pk}&before={match_cursor(second)}",
        "matches of a version": f"/matches/?version={version.pk}",
        "api matches of a bot": f"/api/matches/?bot={bot.pk}",
        "api matches of a bot in a ladder": f"/api/matches/?bot={bot.pk}&ladder={bot.ladder_entries.first().ladder.slug}",
    }
    counts = {}
    for label, path in paths.items():
        client.get(path)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200, (label, path, response.status_code)
        counts[label] = len(queries)
    return counts


@pytest.mark.slow  # writes 100 matches: tens of seconds, left out of make check
def test_a_bots_lists_make_the_same_queries_at_10_and_at_100_of_its_matches(db, django_user_model):
    from matches.models import MatchSeat

    call_command("seed_scale", bots=4, matches=20, ladders=1, tournaments=0, stdout=StringIO())
    client = Client()
    visitor = django_user_model.objects.create_user("visitor", password="a real password 123")
    client.force_login(visitor)  # the version page is for signed-in users
    few = _busiest_bot()
    small = _list_queries(client, few)
    call_command("seed_scale", bots=4, matches=200, ladders=1, tournaments=0, force=True, stdout=StringIO())
    many = _busiest_bot()
    assert MatchSeat.objects.filter(bot=few).count() <= 20 and MatchSeat.objects.filter(bot=many).count() >= 100
    large = _list_queries(client, many)
    assert large == small
    assert max(large.values()) < MAX_QUERIES, large
