"""The lists and pages that grow with the data make the same number of queries at 10 and at 100
rows (bots, matches), fewer than 15, with the home page's caches cold."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

#: the issue's bound on queries per page
MAX_QUERIES = 15


def _paths() -> dict[str, str]:
    from bots.models import Bot
    from matches.models import Match
    from matches.selectors import match_cursor

    bot = Bot.objects.order_by("pk").first()
    match = Match.objects.filter(status=Match.Status.DONE).order_by("-pk").first()
    second = Match.objects.order_by("-queued_at", "-pk")[1]
    return {
        "home": "/",
        "bots": "/bots/",
        "bots search": "/bots/?q=bot",
        "bot": f"/bots/{bot.pk}/",
        "matches": "/matches/",
        "matches of a bot": f"/matches/?bot={bot.pk}",
        "matches older": f"/matches/?before={match_cursor(second)}",
        "matches oldest": "/matches/?oldest=1",
        "match": f"/matches/{match.pk}/",
        "replay page": f"/matches/{match.pk}/replay/",
        "api matches": "/api/matches/",
        "api matches of a bot": f"/api/matches/?bot={bot.pk}",
        "api public bots": "/api/bots/public/",
        "api bot versions": f"/api/bots/{bot.pk}/versions/",
        "api match": f"/api/matches/{match.pk}/",
    }


def _counts(client: Client) -> dict[str, int]:
    counts = {}
    for label, path in _paths().items():
        client.get(path)  # warm: sessions, content types
        cache.clear()  # the home page's counts recomputed: the dearer path is the one counted
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200, (label, path, response.status_code)
        counts[label] = len(queries)
    return counts


@pytest.mark.slow  # writes 100 rows of every list: tens of seconds, left out of make check
@pytest.mark.django_db
def test_query_counts_stay_constant_from_10_to_100_rows():
    call_command("seed_scale", bots=10, matches=10, ladders=1, tournaments=0, stdout=StringIO())
    client = Client()
    small = _counts(client)
    call_command("seed_scale", bots=90, matches=90, ladders=1, tournaments=0, stdout=StringIO())
    from bots.models import Bot
    from matches.models import Match

    assert Bot.objects.count() == 100 and Match.objects.count() == 100
    large = _counts(client)
    assert large == small
    assert max(large.values()) < MAX_QUERIES, large


@pytest.mark.django_db
def test_the_api_bot_list_of_an_owner_stays_constant(django_user_model):
    from rest_framework.test import APIClient

    from bots.models import Bot

    owner = django_user_model.objects.create_user("owner", password="a real password 123")
    call_command("seed_scale", bots=10, matches=0, ladders=1, tournaments=0, force=True, stdout=StringIO())
    client = APIClient()
    client.force_authenticate(owner)

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/bots/").status_code == 200
        return len(queries)

    Bot.objects.filter(owner__username__startswith="scale-").update(owner=owner)
    small = count()
    call_command("seed_scale", bots=90, matches=0, ladders=1, tournaments=0, force=True, stdout=StringIO())
    Bot.objects.filter(owner__username__startswith="scale-").update(owner=owner)
    assert owner.bots.count() == 100
    assert count() == small < MAX_QUERIES


@pytest.mark.slow
def test_the_match_list_pages_by_keyset_through_the_whole_history(db):
    call_command("seed_scale", bots=6, matches=130, ladders=1, tournaments=0, stdout=StringIO())
    from matches.models import Match
    from matches.selectors import match_list, match_page

    everything = list(Match.objects.order_by("-queued_at", "-pk").values_list("pk", flat=True))
    seen, page = [], match_page(match_list(limit=None), size=50)
    assert page["newer"] is None
    while True:
        seen += [m.pk for m in page["matches"]]
        if page["older"] is None:
            break
        older = page["older"]
        page = match_page(match_list(limit=None), before=older, size=50)
        back = match_page(match_list(limit=None), after=page["newer"], size=50)
        assert back["older"] == older  # newer of a page leads back to the page before
    assert seen == everything
    oldest = match_page(match_list(limit=None), oldest=True, size=50)
    assert [m.pk for m in oldest["matches"]] == everything[-50:] and oldest["older"] is None
    with pytest.raises(ValueError):
        match_page(match_list(limit=None), before="not-a-cursor")
    assert Client().get("/matches/?before=nonsense").status_code == 404


def test_the_match_table_links_are_the_urls_of_each_match_replay_and_bot(db):
    """_match_table.html builds its links from one reverse() per table: they must stay the real ones."""
    import re

    from django.urls import reverse

    from matches.models import Match

    call_command("seed_scale", bots=6, matches=12, ladders=1, tournaments=0, stdout=StringIO())
    page = Client().get("/matches/").content.decode()
    links = set(re.findall(r'href="(/(?:matches|bots)/\d+/(?:replay/)?)"', page))
    expected = set()
    for match in Match.objects.prefetch_related("seats__bot_version"):
        expected |= {reverse("matches:detail", args=[match.pk]), reverse("matches:replay_viewer", args=[match.pk])}
        expected |= {reverse("bots:detail", args=[s.bot_version.bot_id]) for s in match.seats.all()}
    assert links == expected
