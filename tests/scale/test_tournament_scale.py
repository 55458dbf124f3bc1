"""Tournament pages at scale: the list counts by scalar subqueries, a tournament's page and API
detail make the same queries for a small and a large field, the crosstable comes a page of rows at a
time against every column, and the page shows the newest rounds with links to the others."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.scale.test_scale_query_counts import MAX_QUERIES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tournaments" / "app"))
from tournament_helpers import field, make_user, play_round, refreshed, tournament_with  # noqa: E402

pytestmark = pytest.mark.django_db


def _swiss(n: int, name: str):
    tournament = tournament_with(field(n, make_user(f"owner-{name}")), name=name, format="swiss")
    while tournament.status != tournament.Status.FINISHED:  # played to the end, as a seeded one
        play_round(tournament)
        tournament = refreshed(tournament)
    return tournament


def _queries(client: Client, path: str) -> int:
    client.get(path)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


def test_a_tournaments_page_and_api_make_the_same_queries_for_8_and_for_24_entries():
    client = Client()
    small, large = _swiss(8, "Small Swiss"), _swiss(24, "Large Swiss")
    for path in ("{}", "{}?cross=2", "{}?round=1", "/api/tournaments/{slug}/", "/tournaments/{slug}/standings.csv"):
        few = _queries(client, path.format(small.get_absolute_url(), slug=small.slug))
        many = _queries(client, path.format(large.get_absolute_url(), slug=large.slug))
        assert few == many, (path, few, many)
    assert few < MAX_QUERIES


def test_the_tournament_lists_count_by_subqueries_whatever_the_number_of_tournaments():
    client = Client()
    _swiss(4, "First Swiss")
    one = {path: _queries(client, path) for path in ("/tournaments/", "/api/tournaments/")}
    _swiss(6, "Second Swiss")
    _swiss(8, "Third Swiss")
    three = {path: _queries(client, path) for path in ("/tournaments/", "/api/tournaments/")}
    assert one == three and max(three.values()) < MAX_QUERIES
    body = client.get("/api/tournaments/").json()["results"]
    from tournaments.models import Entry, Pairing, Tournament
    from tournaments.selectors import tournament_list

    for row in tournament_list():
        assert row.entry_count == Entry.objects.filter(tournament=row).count()
        pairings = Pairing.objects.filter(round__tournament=row, bye=False)
        assert (row.matches_done, row.matches_paired) == (pairings.filter(done=True).count(), pairings.count())
    assert {t["slug"] for t in body} == set(Tournament.objects.values_list("slug", flat=True))


def test_the_crosstable_comes_a_page_of_rows_against_every_column():
    from tournaments.selectors import tournament_crosstable, tournament_standings

    swiss = _swiss(12, "Paged Swiss")
    rows = tournament_standings(swiss)
    whole = tournament_crosstable(swiss, rows, size=100)
    first, second = (tournament_crosstable(swiss, rows, page=p, size=5) for p in (1, 2))
    last = tournament_crosstable(swiss, rows, page=99, size=5)  # past the end: the last page
    assert (whole.pages, first.pages, last.page) == (1, 3, 3)
    assert [len(line["cells"]) for line in first.lines] == [12] * 5
    assert first.lines + second.lines + last.lines == whole.lines
    assert (second.first, second.last, last.first, last.last) == (6, 10, 11, 12)
    page = Client().get(swiss.get_absolute_url()).content.decode()
    assert "<h2>Crosstable</h2>" in page and "Next rows" not in page  # 12 rows: one page of 32


def test_the_page_shows_the_newest_rounds_and_links_every_other():
    swiss = _swiss(8, "Round Swiss")  # 3 rounds
    page = Client().get(swiss.get_absolute_url()).content.decode()
    assert "<h3>Round 3 " in page and "<h3>Round 2 " in page and "<h3>Round 1 " not in page
    assert 'href="?round=1#rounds"' in page
    one = Client().get(swiss.get_absolute_url() + "?round=1").content.decode()
    assert "<h3>Round 1 " in one and "<h3>Round 3 " not in one


def test_the_cached_standings_follow_every_new_result_and_withdrawal():
    from tournaments import services
    from tournaments.selectors import tournament_standings

    swiss = tournament_with(field(6, make_user("owner-cache")), name="Cached Swiss", format="swiss")  # 3 rounds
    play_round(swiss)
    before = [(r.entry.name, r.points) for r in tournament_standings(refreshed(swiss))]
    assert before == [(r.entry.name, r.points) for r in tournament_standings(refreshed(swiss))]  # from the cache
    play_round(refreshed(swiss))
    after = [(r.entry.name, r.points) for r in tournament_standings(refreshed(swiss))]
    assert sum(float(p) for _, p in after) == 2 * sum(float(p) for _, p in before)  # round 2 counted
    entry = refreshed(swiss).entries.order_by("pk").first()
    services.entry_withdraw(entry, reason="test")
    rows = {r.entry.name: r.status for r in tournament_standings(refreshed(swiss))}
    assert rows[entry.name] == "withdrawn"
