"""Tournament pages at scale: the list counts by scalar subqueries, every page of a Swiss or a round
robin (its page, crosstable and round pages, API detail, CSV, progress) makes at most 14 queries, the
same for a small and a large field with the cached standings cold or warm, the crosstable comes a
page of rows at a time against every column, and the page shows the newest rounds with links to the
others."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.scale.test_scale_query_counts import MAX_QUERIES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tournaments" / "app"))
from tournament_helpers import field, make_user, play_round, refreshed, tournament_with  # noqa: E402

pytestmark = pytest.mark.django_db


def _played(n: int, name: str, format: str = "swiss", rounds: int | None = None):
    """A tournament of ``n`` entries played ``rounds`` rounds, or to the end (as a seeded one)."""
    tournament = tournament_with(field(n, make_user(f"owner-{name}")), name=name, format=format)
    while tournament.status != tournament.Status.FINISHED and rounds != 0:
        play_round(tournament)
        tournament = refreshed(tournament)
        rounds = None if rounds is None else rounds - 1
    return tournament


def _queries(client: Client, path: str) -> int:
    client.get(path)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


#: the bound the tournament pages keep (issue 19: under 15 queries), cache cold or warm
TOURNAMENT_PAGE_MAX_QUERIES = 14

#: every page of one tournament: detail, a crosstable page, a round, its API detail, CSV and progress
TOURNAMENT_PAGES = (
    "{url}", "{url}?cross=2", "{url}?round=1", "/api/tournaments/{slug}/", "{url}standings.csv", "{url}progress.json",
)


def _page_queries(client: Client, tournament, *, cold: bool) -> dict[str, int]:
    """Queries per page of ``tournament``; ``cold``: its cached standings dropped first."""
    counts = {}
    for page in TOURNAMENT_PAGES:
        path = page.format(url=tournament.get_absolute_url(), slug=tournament.slug)
        client.get(path)
        if cold:
            cache.clear()
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200, path
        counts[page] = len(queries)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize(
    ("format", "sizes", "rounds"),
    [("swiss", (8, 24), None), ("round_robin", (4, 9), None), ("swiss", (8, 24), 1)],
    ids=["finished swiss", "finished round robin", "running swiss"],
)
def test_every_page_of_a_tournament_makes_at_most_14_queries_for_a_small_and_a_large_field(format, sizes, rounds):
    client = Client()
    small, large = (_played(n, f"{format} of {n}", format, rounds) for n in sizes)
    if rounds is None:
        assert large.current_round > small.current_round  # more entries and more rounds
    else:
        assert small.status == large.status == "running"
    for cold in (True, False):
        few, many = _page_queries(client, small, cold=cold), _page_queries(client, large, cold=cold)
        assert few == many, (cold, few, many)
        assert max(many.values()) <= TOURNAMENT_PAGE_MAX_QUERIES, (cold, many)


def test_the_tournament_lists_count_by_subqueries_whatever_the_number_of_tournaments():
    client = Client()
    _played(4, "First Swiss")
    one = {path: _queries(client, path) for path in ("/tournaments/", "/api/tournaments/")}
    _played(6, "Second Swiss")
    _played(8, "Third Swiss")
    three = {path: _queries(client, path) for path in ("/tournaments/", "/api/tournaments/")}
    assert one == three and max(three.values()) < MAX_QUERIES
    body = client.get("/api/tournaments/").json()["results"]
    from tournaments_app.models import Entry, Table, Tournament
    from tournaments_app.selectors import tournament_list

    for row in tournament_list():
        assert row.entry_count == Entry.objects.filter(tournament=row).count()
        pairings = Table.objects.filter(round__tournament=row, bye=False)
        assert (row.matches_done, row.matches_paired) == (pairings.filter(done=True).count(), pairings.count())
    assert {t["slug"] for t in body} == set(Tournament.objects.values_list("slug", flat=True))


def test_the_crosstable_comes_a_page_of_rows_against_every_column():
    from tournaments_app.selectors import tournament_crosstable, tournament_standings

    swiss = _played(12, "Paged Swiss")
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
    swiss = _played(8, "Round Swiss")  # 3 rounds
    page = Client().get(swiss.get_absolute_url()).content.decode()
    assert "<h3>Round 3 " in page and "<h3>Round 2 " in page and "<h3>Round 1 " not in page
    assert 'href="?round=1#rounds"' in page
    one = Client().get(swiss.get_absolute_url() + "?round=1").content.decode()
    assert "<h3>Round 1 " in one and "<h3>Round 3 " not in one


def test_the_cached_standings_follow_every_new_result_and_withdrawal():
    from tournaments_app import services
    from tournaments_app.selectors import tournament_standings

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
