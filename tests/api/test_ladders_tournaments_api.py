"""Ladders and tournaments through the API: lists, standings, history, entries, organizer actions."""

from __future__ import annotations

from decimal import Decimal

import pytest
from api_helpers import assert_json_error, client_for, make_bot
from django.db.models import F

from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange
from matches.models import Match
from matches.services import match_create
from tournaments_app.models import Tournament
from tournaments_app.services import entry_add, tournament_create, tournament_open_registration


@pytest.fixture
def ladder(db):
    return Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2)


def _rated(ladder, winner, loser, before=(Decimal("1500"), Decimal("1500")), delta=Decimal("16")):
    """A done ladder match between two entries with its rating changes stored."""
    match = match_create(
        kind="ladder", rules=ladder.rules, seats=[winner.bot.versions.get(), loser.bot.versions.get()], enqueue=False
    )
    Match.objects.filter(pk=match.pk).update(status="done")
    LadderMatch.objects.create(ladder=ladder, match=match, rated=True)
    Ladder.objects.filter(pk=ladder.pk).update(rated_matches=F("rated_matches") + 1)  # as the result hook counts it
    for entry, rank, start, change in ((winner, 1, before[0], delta), (loser, 2, before[1], -delta)):
        RatingChange.objects.create(
            ladder=ladder, match=match, entry=entry, bot_version=entry.bot.versions.get(), rank=rank,
            before=start, after=start + change, matches_after=entry.matches_played + 1,
        )
        # the entry's stored columns as the result hook (matches, wins) and the refit (rating, last change) write them
        entry.rating = start + change
        entry.matches_played += 1
        entry.wins += rank == 1
        entry.last_change = change
        entry.save()
    return match


def test_ladder_list_detail_and_standings(alice, bob, ladder):
    a = LadderEntry.objects.create(ladder=ladder, bot=make_bot(alice, "a"))
    b = LadderEntry.objects.create(ladder=ladder, bot=make_bot(bob, "b"))
    _rated(ladder, a, b)
    client = client_for(None)
    listed = client.get("/api/ladders/").json()["results"]
    assert [(x["slug"], x["entries"], x["rated_matches"]) for x in listed] == [("duel", 2, 1)]
    assert client.get("/api/ladders/duel/").json()["rules"]["players"] == 2
    rows = client.get("/api/ladders/duel/standings/").json()["results"]
    assert [(r["rank"], r["name"], r["rating"], r["wins"]) for r in rows] == [
        (1, "alice/a", 1516, 1), (2, "bob/b", 1484, 0),
    ]
    assert rows[0]["last_change"] == "16.00" and rows[0]["provisional"] is True


def test_rating_history_of_a_bot(alice, bob, ladder):
    a = LadderEntry.objects.create(ladder=ladder, bot=make_bot(alice, "a"))
    b = LadderEntry.objects.create(ladder=ladder, bot=make_bot(bob, "b"))
    first = _rated(ladder, a, b)
    second = _rated(ladder, b, a, before=(a.rating, b.rating))
    history = client_for(None).get(f"/api/ladders/duel/bots/{a.bot_id}/history/").json()["results"]
    assert [(h["match"], h["rank"], h["before"], h["after"]) for h in history] == [
        (first.pk, 1, "1500.00", "1516.00"), (second.pk, 2, "1484.00", "1468.00"),
    ]


def test_history_of_a_bot_not_on_the_ladder_is_404(alice, ladder):
    bot = make_bot(alice)
    assert_json_error(client_for(None).get(f"/api/ladders/duel/bots/{bot.pk}/history/"), 404, "never entered")
    assert_json_error(client_for(None).get("/api/ladders/nope/standings/"), 404, "no ladder 'nope'")


def test_owner_enters_and_leaves_a_ladder(alice, ladder):
    bot = make_bot(alice)
    client = client_for(alice)
    entered = client.post("/api/ladders/duel/entries/", {"bot": bot.pk}, format="json")
    assert entered.status_code == 201, entered.content
    assert entered.json()["status"] == "active"
    assert_json_error(client.post("/api/ladders/duel/entries/", {"bot": bot.pk}, format="json"), 400, "already entered")
    assert client.delete(f"/api/ladders/duel/entries/{bot.pk}/").status_code == 204
    assert LadderEntry.objects.get(bot=bot).status == "left"


def test_cannot_enter_or_withdraw_another_users_bot(alice, bob, ladder):
    bot = make_bot(bob)
    client = client_for(alice)
    assert_json_error(client.post("/api/ladders/duel/entries/", {"bot": bot.pk}, format="json"), 403, "not yours")
    LadderEntry.objects.create(ladder=ladder, bot=bot)
    assert_json_error(client.delete(f"/api/ladders/duel/entries/{bot.pk}/"), 403, "not yours")
    assert LadderEntry.objects.get(bot=bot).status == "active"


def test_matchmaking_on_demand_is_for_organizers_only(alice, bob, staff, ladder):
    for user, name in ((alice, "a"), (bob, "b")):
        LadderEntry.objects.create(ladder=ladder, bot=make_bot(user, name))
    assert_json_error(client_for(alice).post("/api/ladders/duel/matchmake/"), 403, "organizers")
    assert_json_error(client_for(None).post("/api/ladders/duel/matchmake/"), 401)
    assert not Match.objects.exists()
    created = client_for(staff).post("/api/ladders/duel/matchmake/")
    assert created.status_code == 200
    assert len(created.json()) == 1
    assert Match.objects.get().kind == "ladder"


@pytest.fixture
def cup(staff):
    return tournament_create(name="Cup", rules=["players=2", "rounds=1"], format="round_robin", actor=staff)


def test_tournament_detail_has_standings_rounds_and_pairings(alice, bob, staff, cup):
    tournament_open_registration(cup)
    entry_add(cup, make_bot(alice, "a"))
    entry_add(cup, make_bot(bob, "b"))
    started = client_for(staff).post("/api/tournaments/cup/start/")
    assert started.status_code == 200, started.content
    body = client_for(None).get("/api/tournaments/cup/").json()
    assert body["status"] == "running" and body["format"] == "round_robin"
    assert [e["name"] for e in body["entries"]] == ["alice/a", "bob/b"]
    assert {r["entry"] for r in body["standings"]} == {"alice/a", "bob/b"}
    first_round = body["rounds"][-1]
    assert first_round["number"] == 1
    pairing = first_round["pairings"][0]
    assert {s["entry"] for s in pairing["seats"]} == {"alice/a", "bob/b"}
    assert Match.objects.get(pk=pairing["match"]).kind == "tournament"
    listed = client_for(None).get("/api/tournaments/").json()["results"]
    assert [t["slug"] for t in listed] == ["cup"]
    assert [m["id"] for m in client_for(None).get("/api/matches/?tournament=cup").json()["results"]] == [
        pairing["match"]
    ]


def test_organizer_actions_are_refused_to_users(alice, bob, cup):
    tournament_open_registration(cup)
    entry_add(cup, make_bot(alice, "a"))
    entry_add(cup, make_bot(bob, "b"))
    for action in ("start", "pause", "cancel", "open"):
        assert_json_error(client_for(alice).post(f"/api/tournaments/cup/{action}/"), 403, "organizers")
    assert Tournament.objects.get(pk=cup.pk).status == "registration"


def test_organizer_action_refused_by_the_service_is_a_400(staff, cup):
    response = client_for(staff).post("/api/tournaments/cup/start/")
    assert_json_error(response, 400, "cannot start")
    assert_json_error(client_for(staff).post("/api/tournaments/cup/explode/"), 404, "no tournament action 'explode'")


def test_owner_enters_a_tournament_only_while_registration_is_open(alice, cup):
    bot = make_bot(alice)
    client = client_for(alice)
    assert_json_error(client.post("/api/tournaments/cup/entries/", {"bot": bot.pk}, format="json"), 400, "draft")
    tournament_open_registration(cup)
    entered = client.post("/api/tournaments/cup/entries/", {"bot": bot.pk}, format="json")
    assert entered.status_code == 201, entered.content
    assert entered.json()["name"] == "alice/alpha"
