"""Ladder pages: list, table, a bot on a ladder (chart, head-to-head), the bot page section, enter/leave."""

from __future__ import annotations

import random

import pytest
from core.rule_forms import rules_post_data
from django.urls import reverse
from ladder_helpers import active_bot, bots_of, ladder, record, user

from ladders import ratings, services
from ladders.models import LadderEntry, RatingChange
from matches.models import Match

pytestmark = pytest.mark.django_db


@pytest.fixture
def played():
    """A ladder with three bots and a few rated matches; 'c' forfeits its matches once."""
    on = ladder(name="Main ladder", slug="main", max_pending=1)
    bots = {name: active_bot(name, owner=f"{name}-owner") for name in "abc"}
    for bot in bots.values():
        services.ladder_enter(on, bot)
    rng = random.Random(5)
    strength = {bots["a"].pk: 3, bots["b"].pk: 2, bots["c"].pk: 1}
    for _ in range(6):
        [match] = services.ladder_matchmake(on, rng=rng)
        seated = sorted(bots_of(match), key=lambda bot: -strength[bot])
        record(match, {bot: place for place, bot in enumerate(seated, start=1)})
    return on, bots


def test_the_ladder_list_shows_each_ladder_with_its_numbers(client, played):
    on, _ = played
    ladder(name="Closed one", slug="closed", active=False)
    page = client.get(reverse("ladders:list")).content.decode()
    assert "Main ladder" in page and "Closed one" in page and on.get_absolute_url() in page


def test_the_ladder_table_ranks_by_rating_with_interval_games_win_rate_and_last_change(client, played):
    on, bots = played
    response = client.get(reverse("ladders:detail", args=["main"]))
    standings = response.context["standings"]
    assert [row.entry.bot.name for row in standings] == ["a", "b", "c"]
    assert [row.rank for row in standings] == [1, 2, 3]
    top = standings[0]
    played_a = RatingChange.objects.filter(entry=top.entry).count()
    assert top.entry.matches_played == played_a >= 3 and top.win_rate == 1.0 and top.last_change > 0
    page = response.content.decode()
    # whole points: "1612 ±401", and a version with so few results is provisional
    assert f"<strong>{top.rating.value}</strong>" in page and f"±{top.rating.margin}<" in page
    assert top.rating.margin > ratings.PROVISIONAL_MARGIN and "provisional" in page and "a-owner" in page
    assert f"+{round(top.last_change)}" in page and f"+{top.last_change}" not in page  # whole points
    # the likelihood that a is better than b, from the stored fit
    assert f"{top.los_percent}% that a is better than b" in page and top.los_percent > 50
    assert "0 of at most 1 match queued or running" in page
    assert "1.0 s per decision, 10.0 s bank, 300.0 s of thinking per match" in page
    assert "never two bots of one owner at a table" in page


def test_the_bot_on_a_ladder_page_has_a_rating_chart_and_head_to_head(client, played):
    on, bots = played
    response = client.get(reverse("ladders:entry", args=["main", bots["a"].pk]))
    page = response.content.decode()
    played_a = RatingChange.objects.filter(entry__bot=bots["a"]).count()
    assert page.count("<circle") == 1 + played_a  # the start and each rated match
    assert '<polygon class="rating-band"' in page  # the 95% interval behind the line
    assert '<polyline class="rating-line"' in page and "<script" not in page.split("<footer")[0].split("</header>")[1]
    h2h = {row.opponent.bot.name: (row.matches, row.ahead, row.behind) for row in response.context["head_to_head"]()[0]}  # computed when its part is rendered
    assert h2h == {"b": (h2h["b"][0], h2h["b"][0], 0), "c": (h2h["c"][0], h2h["c"][0], 0)}
    assert h2h["b"][0] + h2h["c"][0] == played_a


def test_unknown_ladders_and_bots_not_on_a_ladder_are_not_found(client, played):
    assert client.get(reverse("ladders:detail", args=["nope"])).status_code == 404
    stranger = active_bot("stranger")
    assert client.get(reverse("ladders:entry", args=["main", stranger.pk])).status_code == 404


def test_a_bot_in_no_ladder_shows_the_hint_and_its_owner_can_enter_it(client, played):
    bot = active_bot("newbie", owner="nina")
    client.force_login(user("nina"))
    page = client.get(bot.get_absolute_url()).content.decode()
    assert "it will not play rated matches until it is entered" in page and "Enter Main ladder" in page
    response = client.post(reverse("ladders:enter", args=[bot.pk]), {"ladder": "main"})
    assert response.status_code == 302
    assert LadderEntry.objects.get(bot=bot).status == "active"
    page = client.get(bot.get_absolute_url()).content.decode()
    assert "will not play rated matches" not in page and "Leave" in page
    client.post(reverse("ladders:leave", args=["main", bot.pk]))
    assert LadderEntry.objects.get(bot=bot).status == "left"


def test_only_the_owner_can_enter_or_withdraw_a_bot(client, played):
    _, bots = played
    client.force_login(user("mallory"))
    assert client.post(reverse("ladders:leave", args=["main", bots["a"].pk])).status_code == 404
    assert client.post(reverse("ladders:enter", args=[bots["a"].pk]), {"ladder": "main"}).status_code == 404
    assert "Leave" not in client.get(bots["a"].get_absolute_url()).content.decode()
    assert LadderEntry.objects.get(bot=bots["a"]).status == "active"


def test_entering_twice_shows_the_reason_instead_of_failing(client, played):
    _, bots = played
    client.force_login(bots["a"].owner)
    response = client.post(reverse("ladders:enter", args=[bots["a"].pk]), {"ladder": "main"}, follow=True)
    assert "already entered in Main ladder" in response.content.decode()


def test_the_owner_sees_why_a_bot_was_suspended(client, played):
    on, bots = played
    entry = LadderEntry.objects.get(bot=bots["c"])
    entry.status, entry.suspended_reason = "suspended", "suspended after forfeiting 3 ladder matches in a row"
    entry.suspended_version = bots["c"].versions.get()
    entry.save()
    client.force_login(bots["c"].owner)
    page = client.get(bots["c"].get_absolute_url()).content.decode()
    assert "suspended after forfeiting 3 ladder matches in a row" in page
    assert "upload a new version to enter again" in page


def test_the_admin_refuses_bad_rules_with_the_reason(client):
    admin = user("boss")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    form = {
        "name": "Bad", "slug": "bad", **rules_post_data({"hand_size": 99}, exclude=("players",)), "seats": 2, "deals": 1,
        "duplicate": "on", "time_per_decision": 1, "time_bank": 10, "time_per_match": 300, "max_pending": 4,
        "fault_limit": 3,
        "active": "on", "entries-TOTAL_FORMS": 0, "entries-INITIAL_FORMS": 0,
    }
    response = client.post(reverse("admin:ladders_ladder_add"), form)
    assert response.status_code == 200 and "hand_size" in response.content.decode()
    form.update(rules_post_data({"rounds": 2}, exclude=("players",)))
    assert client.post(reverse("admin:ladders_ladder_add"), form).status_code == 302
    assert client.get(reverse("admin:ladders_ladder_changelist")).status_code == 200


def test_the_admin_action_runs_matchmaking_on_the_chosen_ladders(client):
    admin = user("boss")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    on = ladder(max_pending=3)
    for name in "abcd":
        services.ladder_enter(on, active_bot(name))
    response = client.post(
        reverse("admin:ladders_ladder_changelist"),
        {"action": "matchmake_now", "_selected_action": [on.pk]},
        follow=True,
    )
    assert "Test ladder: 2 match(es) created" in response.content.decode()
    assert on.ladder_matches.count() == 2


def test_the_api_shows_a_ladders_three_clocks_its_owner_rule_and_each_matchs_clocks(client, played):
    on, _ = played
    body = client.get(f"/api/ladders/{on.slug}/").json()
    assert (body["time_per_decision"], body["time_bank"], body["time_per_match"]) == (1.0, 10.0, 300.0)
    assert body["allow_same_owner"] is False
    match = on.ladder_matches.first().match
    assert client.get(f"/api/matches/{match.pk}/").json()["time_per_match"] == 300.0
    # A match stored without its own clocks (null) shows the contract's defaults it is played under.
    Match.objects.filter(pk=match.pk).update(time_per_decision=None, time_bank=2.5, time_per_match=None)
    shown = client.get(f"/api/matches/{match.pk}/").json()
    assert (shown["time_per_decision"], shown["time_bank"], shown["time_per_match"]) == (1.0, 2.5, 300.0)
