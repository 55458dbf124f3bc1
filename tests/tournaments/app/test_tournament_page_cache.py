"""The tournament page keeps its rendered rounds, entries and log, and the API its serialized entries,
standings and rounds, under a name of what they show: each change of what they show (a match that
starts, a result, a withdrawal, a new round, an organizer's view) is on the next view at once, and
the same state is served from the cache (the same bytes) without growing queries."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from testsupport import played_match
from tournament_helpers import (
    field,
    finish,
    make_user,
    open_matches,
    play_round,
    refreshed,
    tournament_with,
)

from matches import services as match_services
from tournaments_app import selectors, services
from tournaments_app.models import Table

pytestmark = pytest.mark.django_db


def _section(page: str, start: str, end: str) -> str:
    return page.split(start, 1)[1].split(end, 1)[0]


def _rounds(page: str) -> str:
    return _section(page, '<h2 id="rounds">', "<h2>Entries</h2>")


def _entries(page: str) -> str:
    return _section(page, "<h2>Entries</h2>", "<h2>Log</h2>")


def _log(page: str) -> str:
    return page.split("<h2>Log</h2>", 1)[1]


def _record(match, token: str, ranks: list[int]) -> None:
    """The result of a ``match`` started with ``token``, through the worker's path (its hooks too)."""
    outcome = played_match(ranks, scores=[100 * (len(ranks) - r) for r in ranks], replay={"events": []})
    assert match_services.match_record_result(match.pk, token, outcome)


def _round_two_match(tournament):
    table = Table.objects.filter(round__tournament=tournament, round__number=2, bye=False).order_by("number").first()
    return table.match


def test_a_match_that_starts_and_its_result_change_the_cached_rounds(client, swiss):
    url = swiss.get_absolute_url()
    match = _round_two_match(swiss)
    row = f'href="/matches/{match.pk}/">#{match.pk}</a> <span class="badge badge-queued">queued</span>'
    first = client.get(url).content.decode()
    assert row in _rounds(first)
    assert client.get(url).content.decode() == first  # the same state: the cached fragments, the same bytes

    token = match_services.match_start(match.pk)  # not a result: only the match's status changes
    running = _rounds(client.get(url).content.decode())
    assert f'#{match.pk}</a> <span class="badge badge-running">running</span>' in running

    _record(match, token, [2, 1])  # seat 1 wins
    done = client.get(url).content.decode()
    assert f'#{match.pk}</a> <span class="badge badge-done">done</span>' in _rounds(done)
    assert f'<a href="{reverse("matches:replay_viewer", args=[match.pk])}">replay</a>' in _rounds(done)
    winner = Table.objects.get(match=match).seats.get(seat=1).entry.name
    assert f'<span class="seat-rank first">1</span>{winner}' in _rounds(done)


def test_a_new_round_and_an_older_round_are_their_own_fragments(client, owner):
    tournament = tournament_with(field(8, owner), name="Three Rounds", format="swiss")  # 3 rounds
    play_round(tournament)
    url = refreshed(tournament).get_absolute_url()
    before = _rounds(client.get(url).content.decode())
    assert "<h3>Round 2 " in before and "<h3>Round 3 " not in before
    play_round(refreshed(tournament))  # round 2 done: round 3 paired
    after = _rounds(client.get(url).content.decode())
    assert "<h3>Round 3 " in after and "<h3>Round 1 " not in after
    older = _rounds(client.get(url + "?round=1").content.decode())
    assert "<h3>Round 1 " in older and "<h3>Round 3 " not in older and "<strong>1</strong>" in older


def test_a_withdrawal_changes_the_cached_entries_and_log(client, swiss):
    url = swiss.get_absolute_url()
    page = client.get(url).content.decode()
    entry = swiss.entries.order_by("pk").first()
    assert 'badge-withdrawn">withdrawn' not in _entries(page)
    services.entry_withdraw(entry, reason="stepped back")
    page = client.get(url).content.decode()
    assert 'badge-withdrawn">withdrawn' in _entries(page)
    assert "stepped back" in _log(page)


def test_organizers_and_visitors_see_their_own_rounds_and_log(client, swiss):
    staff = make_user("organizer", staff=True)
    services.tournament_pause(swiss, actor=staff)
    url = swiss.get_absolute_url()
    visitor = client.get(url).content.decode()  # cached first for visitors
    assert "Why this pairing" not in visitor and '<td class="event-who">organizer</td>' not in visitor
    client.force_login(staff)
    organizer = client.get(url).content.decode()
    assert "Why this pairing" in _rounds(organizer) and '<td class="event-who">organizer</td>' in _log(organizer)
    client.logout()
    assert "Why this pairing" not in client.get(url).content.decode()


def test_the_api_answer_follows_a_match_that_starts_and_each_result(client, swiss):
    url = f"/api/tournaments/{swiss.slug}/"
    match = _round_two_match(swiss)

    def pairing(body):
        return next(p for r in body["rounds"] if r["number"] == 2 for p in r["pairings"] if p["match"] == match.pk)

    first = client.get(url).json()
    assert client.get(url).json() == first  # the same state: the same answer (from the cache)
    assert pairing(first)["match_status"] == "queued" and not pairing(first)["done"]
    token = match_services.match_start(match.pk)
    assert pairing(client.get(url).json())["match_status"] == "running"
    _record(match, token, [2, 1])
    done = client.get(url).json()
    assert pairing(done)["match_status"] == "done" and pairing(done)["done"]
    assert [seat["rank"] for seat in pairing(done)["seats"]] == [2, 1]
    points = {row["entry"]: row["points"] for row in done["standings"]}
    winner = pairing(done)["seats"][1]["entry"]
    assert points[winner] != {row["entry"]: row["points"] for row in first["standings"]}[winner]
    entry = swiss.entries.order_by("pk").first()
    services.entry_withdraw(entry)
    body = client.get(url).json()
    assert {e["name"]: e["status"] for e in body["entries"]}[entry.name] == "withdrawn"


def test_the_rounds_key_names_what_they_show():
    """Two readings of unchanged rounds have one key; a result is a new one."""
    tournament = tournament_with(field(4, make_user("keys")), name="Key Swiss", format="swiss")
    keys = [selectors.tournament_rounds(refreshed(tournament)).key for _ in range(2)]
    assert keys[0] == keys[1]
    finish(open_matches(tournament)[0], [1, 2])
    assert selectors.tournament_rounds(refreshed(tournament)).key != keys[0]


@pytest.mark.parametrize("cold", [True, False], ids=["cache cold", "cache warm"])
def test_the_page_and_the_api_make_as_many_queries_for_10_and_100_entries(client, cold):
    """A round of 10 and of 100 entries (5 and 50 tables shown): the same queries, cold or warm."""
    counts = []
    for size in (10, 100):
        tournament = tournament_with(field(size, make_user(f"owner{size}")), name=f"Q{size}", format="swiss")
        play_round(tournament)
        tournament = refreshed(tournament)
        pages = (tournament.get_absolute_url(), f"/api/tournaments/{tournament.slug}/")
        for path in pages:
            client.get(path)
        if cold:
            cache.clear()
        with CaptureQueriesContext(connection) as queries:
            for path in pages:
                assert client.get(path).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1] and counts[1] < 2 * 15, counts
