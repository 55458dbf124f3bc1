"""The ladder pages keep their rendered table, match lists, chart, history and head-to-head under names of
what they show (the template's {% cache %}), and the API a bot's history pages likewise: a second
visit computes none of them again, and a new match, a result, a refit, a departure or a rename
shows on the next visit all the same. Any of the five key functions made constant (monkeypatched to one
string) fails at least one of these tests; one test shows it for the table."""

from __future__ import annotations

import random
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from ladder_helpers import active_bot, bots_of, ladder, record

from bots.models import Bot
from ladders import selectors, services
from ladders.models import LadderEntry, RatingChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def played():
    """A ladder with three bots and four rated matches; 'a' is the strongest."""
    on = ladder(name="Main ladder", slug="main", max_pending=1)
    bots = {name: active_bot(name) for name in "abc"}
    for bot in bots.values():
        services.ladder_enter(on, bot)
    rng = random.Random(7)
    for _ in range(4):
        play(on, rng, bots)
    return on, bots, rng


def play(on, rng, bots, *, refit: bool = True):
    strength = {bots["a"].pk: 3, bots["b"].pk: 2, bots["c"].pk: 1}
    [match] = services.ladder_matchmake(on, rng=rng)
    seated = sorted(bots_of(match), key=lambda bot: -strength[bot])
    record(match, {bot: place for place, bot in enumerate(seated, start=1)}, refit=refit)
    return match


def table_row(page: str, name: str) -> str:
    """The table row of bot ``name`` (its cells as text, tags dropped)."""
    table = page.split('<table class="ladder-table">')[1].split("</table>")[0]
    for row in table.split("<tr")[2:]:
        if f">{name}</a>" in row:
            return " ".join(re.sub(r"<[^>]+>", " ", row).split())
    raise AssertionError(f"no row of {name}")


def shown(entry: LadderEntry) -> str:
    """What a table row shows of an entry's rating and matches, from the database."""
    entry.refresh_from_db()
    return f"{round(entry.rating)} ±{round((entry.rating_high - entry.rating_low) / 2)}"


def test_the_table_shows_each_result_and_refit_on_the_next_visit(client, played):
    on, bots, rng = played
    url = reverse("ladders:detail", args=["main"])
    entry = LadderEntry.objects.get(ladder=on, bot=bots["a"])
    first = client.get(url).content.decode()
    assert client.get(url).content.decode() == first  # kept: the same page again
    before = table_row(first, "a")
    assert f" {entry.matches_played} " in f" {before} " and shown(entry) in before

    # a result: its matches count (and the match list) change before any refit
    match = play(on, rng, bots, refit=False)
    entry.refresh_from_db()
    played_now = entry.matches_played
    page = client.get(url).content.decode()
    assert table_row(page, "a") != before and f"#{match.pk}<" in page
    # the refit: the new ratings, and the match's rating changes in the match list
    services.ladder_refit(on)
    entry.refresh_from_db()
    change = RatingChange.objects.get(match=match, entry=entry)
    page = client.get(url).content.decode()
    assert shown(entry) in table_row(page, "a") and f" {played_now} " in f" {table_row(page, 'a')} "
    row = page.split(f">#{match.pk}</a>")[1].split("</tr>")[0]
    sign = "+" if change.delta > 0 else "\u2212"
    assert f">{sign}{abs(round(change.delta))}</span>" in row


def test_the_table_shows_a_departure_and_a_rename_on_the_next_visit(client, played):
    on, bots, _ = played
    url = reverse("ladders:detail", args=["main"])
    assert "left" not in table_row(client.get(url).content.decode(), "c")
    services.ladder_leave(on, bots["c"])
    assert '<span class="badge">left</span>' in client.get(url).content.decode()
    Bot.objects.filter(pk=bots["b"].pk).update(name="bee")
    page = client.get(url).content.decode()
    assert ">bee</a>" in page and table_row(page, "bee")


def test_a_match_queued_shows_in_the_recent_matches_at_once(client, played):
    on, bots, rng = played
    url = reverse("ladders:detail", args=["main"])
    client.get(url)
    [match] = services.ladder_matchmake(on, rng=rng)
    page = client.get(url).content.decode()
    row = page.split(f">#{match.pk}</a>")[1].split("</tr>")[0]
    assert "badge-queued" in row


def test_the_bot_page_shows_a_new_result_in_its_chart_head_to_head_and_matches(client, played):
    on, bots, rng = played
    url = reverse("ladders:entry", args=["main", bots["a"].pk])
    first = client.get(url).content.decode()
    assert client.get(url).content.decode() == first
    dots = first.count('class="rating-dot"')
    met = {name: _met(first, name) for name in "bc"}

    match = play(on, rng, bots, refit=False)
    page = client.get(url).content.decode()
    history = page.split('id="history"')[1].split("</table>")[0]
    assert f">#{match.pk}</a>" in history and "pending" in history  # the result, not fitted yet
    opponent = next(name for name in "bc" if bots[name].pk in bots_of(match))
    assert _met(page, opponent) == met[opponent] + 1  # the head-to-head counts the result at once
    assert f">#{match.pk}</a>" in page.split("<h2>Recent matches</h2>")[1]
    assert page.count('class="rating-dot"') == dots  # not fitted yet: no new point
    services.ladder_refit(on)
    page = client.get(url).content.decode()
    assert page.count('class="rating-dot"') == dots + 1  # the refit's point
    assert "pending" not in page.split('id="history"')[1].split("</table>")[0]


def _met(page: str, name: str) -> int:
    h2h = page.split('<table class="h2h-table">')[1].split("</table>")[0]
    row = h2h.split(f">{name}</a>")[1].split("</tr>")[0]
    return int(re.findall(r'<td class="num">(\d+)</td>', row)[0])


def test_a_second_visit_reads_only_the_names_of_its_parts(client, played):
    on, bots, _ = played
    for url in (reverse("ladders:detail", args=["main"]), reverse("ladders:entry", args=["main", bots["a"].pk])):
        client.get(url)
        with CaptureQueriesContext(connection) as warm:
            client.get(url)
        tables = " ".join(q["sql"] for q in warm.captured_queries)
        # neither the match list's seats nor the head-to-head's tally is read again
        assert '"matches_matchseat"."forfeited"' not in tables and "WITH own AS" not in tables, url


def test_a_constant_key_would_show_stale_pages(client, played, monkeypatch):
    """The check behind the tests above: with constant names the cached parts go stale."""
    on, bots, rng = played
    monkeypatch.setattr(selectors, "ladder_table_key", lambda ladder, table: "constant")
    url = reverse("ladders:detail", args=["main"])
    before = table_row(client.get(url).content.decode(), "a")
    play(on, rng, bots)
    assert table_row(client.get(url).content.decode(), "a") == before


def test_the_api_history_shows_each_result_and_refit_on_the_next_call(client, played):
    on, bots, rng = played
    url = f"/api/ladders/main/bots/{bots['a'].pk}/history/?page_size=100"
    first = client.get(url).json()
    assert client.get(url).json() == first
    match = play(on, rng, bots, refit=False)
    body = client.get(url).json()
    assert body["count"] == first["count"] + 1
    assert body["results"][-1]["match"] == match.pk and body["results"][-1]["after"] is None
    services.ladder_refit(on)
    change = RatingChange.objects.get(match=match, entry__bot=bots["a"])
    assert client.get(url).json()["results"][-1]["after"] == f"{change.after:.2f}"
    # another page size is another page
    assert len(client.get(url.replace("100", "2")).json()["results"]) == 2
