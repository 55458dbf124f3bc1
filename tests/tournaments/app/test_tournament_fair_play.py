"""Tournaments and fair play: the three clocks, one owner's bots kept apart, Swiss seeding by ladder rating."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from core.rule_forms import rules_post_data
from django.db import IntegrityError, transaction
from django.urls import reverse
from tournament_helpers import (
    active_bot,
    finish,
    make_user,
    open_matches,
    refreshed,
    tournament_with,
)

from ladders.models import Ladder, LadderEntry, RatingChange
from matches.models import Match
from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS
from tournaments_app import selectors, services
from tournaments_app.models import Entry, Table, Tournament
from tournaments_app.services import TournamentError

pytestmark = pytest.mark.django_db


def owned_field(*owners_and_counts) -> list:
    """Bots named <owner>-bot<i>, each owner a new user: ("alice", 2), ("bob", 1) ..."""
    bots = []
    for owner_name, count in owners_and_counts:
        owner = make_user(owner_name)
        bots += [active_bot(owner, f"bot{i}") for i in range(count)]
    return bots


def solo_field(n: int) -> list:
    return owned_field(*[(f"u{i}", 1) for i in range(n)])


# --- clocks --------------------------------------------------------------------------------

def test_the_clocks_default_to_the_sandbox_limits_and_reach_every_match():
    default = tournament_with(solo_field(2), name="Default Cup", allow_same_owner=False)
    assert {m.time_per_decision for m in open_matches(default)} == {DEFAULT_LIMITS.time_per_decision}
    assert {m.time_per_match for m in open_matches(default)} == {DEFAULT_LIMITS.time_per_match}
    cup = tournament_with(owned_field(("x", 1), ("y", 1)), name="Fast Cup",
                          time_per_decision=0.5, time_bank=2.0, time_per_match=40.0)
    matches = open_matches(cup)
    assert matches
    assert {(m.time_per_decision, m.time_bank, m.time_per_match) for m in matches} == {(0.5, 2.0, 40.0)}


@pytest.mark.parametrize("clock", sorted(CLOCK_BOUNDS))
def test_a_clock_out_of_its_bounds_is_refused_on_its_field(clock):
    low, high = CLOCK_BOUNDS[clock]
    for bad in (low / 2, high * 2, math.nan, math.inf, True, "fast"):
        with pytest.raises(TournamentError, match=clock.replace("_", " ")) as caught:
            services.tournament_create(name="Cup", rules=["players=2"], **{clock: bad})
        assert caught.value.field == clock
    assert not Tournament.objects.exists()


@pytest.mark.parametrize("clock", sorted(CLOCK_BOUNDS))
def test_the_database_refuses_a_clock_out_of_bounds(clock):
    cup = services.tournament_create(name="Cup", rules=["players=2"])
    with pytest.raises(IntegrityError), transaction.atomic():
        Tournament.objects.filter(pk=cup.pk).update(**{clock: CLOCK_BOUNDS[clock][1] * 10})


def test_a_format_that_could_outlast_the_longest_match_is_refused_on_time_per_match(settings):
    settings.MATCH_TIME_LIMIT = 1000
    with pytest.raises(TournamentError, match="MATCH_TIME_LIMIT") as caught:
        services.tournament_create(name="Cup", rules=["players=4"], time_per_match=3600.0)
    assert caught.value.field == "time_per_match"


def test_the_admin_shows_the_clocks_and_reports_a_bad_one_on_the_field(client):
    client.force_login(make_user("root", staff=True))
    data = {"name": "Admin Cup", "format": "swiss", **rules_post_data({"players": 2}), "deals": "1", "cycles": "1",
            "tie_breaks": ["buchholz"], "time_per_decision": "0.5", "time_bank": "", "time_per_match": "5000",
            "entries-TOTAL_FORMS": "0", "entries-INITIAL_FORMS": "0"}
    response = client.post(reverse("admin:tournaments_tournament_add"), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["time_per_match"], errors
    data["time_per_match"] = "120"
    response = client.post(reverse("admin:tournaments_tournament_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    cup = Tournament.objects.get(name="Admin Cup")
    assert (cup.time_per_decision, cup.time_bank, cup.time_per_match) == (0.5, DEFAULT_LIMITS.time_bank, 120.0)
    page = client.get(reverse("admin:tournaments_tournament_change", args=[cup.pk])).content.decode()
    assert 'name="time_per_match"' in page and "allow_same_owner" in page and "seed_ladder" in page


def test_the_tournament_page_shows_the_clocks_and_the_owner_rule(client):
    cup = services.tournament_create(name="Clock Cup", rules=["players=2"], time_per_decision=2.0,
                                     time_bank=15.0, time_per_match=120.0)
    page = client.get(cup.get_absolute_url()).content.decode()
    assert "2 s per decision, 15 s time bank, 120 s per match" in page
    assert "two bots of one owner never share a table" in page


# --- one owner's bots ----------------------------------------------------------------------

def seated_together(tournament) -> list[tuple]:
    clashes = []
    for pairing in Table.objects.filter(round__tournament=tournament, bye=False).prefetch_related("seats__entry__bot"):
        owners = [s.entry.bot.owner_id for s in pairing.seats.all()]
        clashes += [pair for pair in combinations(owners, 2) if pair[0] == pair[1]]
    return clashes


def test_entering_two_bots_of_one_owner_is_allowed_but_flagged(client):
    alice = make_user("alice")
    cup = services.tournament_create(name="Cup", rules=["players=2"])
    services.entry_add(cup, active_bot(alice, "one"))
    second = services.entry_add(cup, active_bot(alice, "two"))
    assert "same owner as alice/one: they are kept at different tables" in cup.events.first().message
    assert selectors.same_owner_entries(cup)[second.pk] == ["alice/one"]
    page = client.get(cup.get_absolute_url()).content.decode()
    assert "same owner as alice/one" in page and "same owner as alice/two" in page


@pytest.mark.parametrize("seats", [2, 3])
def test_a_swiss_never_seats_two_bots_of_one_owner_together(seats):
    bots = owned_field(("alice", 3), ("bob", 2), *[(f"u{i}", 1) for i in range(4)])
    cup = tournament_with(bots, rules=[f"players={seats}", "rounds=1"], allow_same_owner=False, seed=11, rounds=4)
    for _ in range(4):
        assert seated_together(cup) == []
        for match in open_matches(cup):
            finish(match, list(range(1, match.seats.count() + 1)))
        cup = refreshed(cup)
    assert cup.status == Tournament.Status.FINISHED


def test_a_k_seat_round_robin_keeps_one_owner_apart_and_allowing_it_lets_them_meet():
    bots = owned_field(("alice", 2), *[(f"u{i}", 1) for i in range(7)])
    apart = tournament_with(bots, rules=["players=3", "rounds=1"], format="round_robin", allow_same_owner=False)
    planned = [set(t) for r in apart.plan for t in r["tables"]]
    assert not any({"alice/bot0", "alice/bot1"} <= t for t in planned)
    together = tournament_with(bots, name="Open Cup", rules=["players=3", "rounds=1"], format="round_robin",
                               allow_same_owner=True)
    assert any({"alice/bot0", "alice/bot1"} <= set(t) for r in together.plan for t in r["tables"])


@pytest.mark.parametrize(
    ("rules", "fmt", "owners", "message"),
    [
        (["players=2"], "round_robin", (("carol", 2), ("u1", 1), ("u2", 1)), "owner carol has 2 entries"),
        (["players=2"], "swiss", (("dave", 4), ("u1", 1), ("u2", 1)), "owner dave has 4 of the 6 entries"),
        (["players=4"], "swiss", (("erin", 3), *[(f"u{i}", 1) for i in range(5)]), "owner erin has 3 of the 8"),
    ],
)
def test_a_start_that_cannot_keep_an_owner_apart_is_refused_naming_the_owner(rules, fmt, owners, message):
    cup = tournament_with(owned_field(*owners), start=False, rules=[*rules, "rounds=1"], format=fmt,
                          allow_same_owner=False)
    with pytest.raises(TournamentError, match=message):
        services.tournament_start(cup)
    cup = refreshed(cup)
    assert cup.status == Tournament.Status.DRAFT and not Match.objects.exists()
    services.tournament_update(cup, name=cup.name, rules=[*rules, "rounds=1"], format=fmt, seed=5,
                               allow_same_owner=True)
    assert services.tournament_start(cup).status == Tournament.Status.RUNNING


# --- seeding by ladder rating --------------------------------------------------------------

def rated_ladder(bots, ratings) -> Ladder:
    ladder = Ladder.objects.create(name="Main", slug="main", rules={"players": 2}, seats=2)
    for bot, rating in zip(bots, ratings, strict=True):
        if rating is not None:
            LadderEntry.objects.create(ladder=ladder, bot=bot, rating=rating, matches_played=5)
    return ladder


def test_swiss_round_one_pairs_by_ladder_rating_and_draws_the_unrated_after(client):
    bots = solo_field(6)
    ratings = [1500, 1800, None, 1600, 1700, None]  # u1 > u4 > u3 > u0, then u2 and u5 unrated
    ladder = rated_ladder(bots, ratings)
    # an entry of the ladder that never played a rated match is unrated too
    LadderEntry.objects.create(ladder=ladder, bot=bots[5], matches_played=0)
    cup = tournament_with(bots, seed_ladder=ladder, allow_same_owner=False, seed=8)
    entries = {e.name: e for e in Entry.objects.filter(tournament=cup)}
    assert entries["u1/bot0"].seed_rating == 1800.0 and entries["u5/bot0"].seed_rating is None
    seeding = [row.entry.name for row in selectors.tournament_seeding(cup)]
    assert seeding[:4] == ["u1/bot0", "u4/bot0", "u3/bot0", "u0/bot0"]
    assert sorted(seeding[4:]) == ["u2/bot0", "u5/bot0"]
    pairs = {frozenset(s.entry.name for s in p.seats.all()) for p in Table.objects.filter(round__tournament=cup)}
    assert pairs == {frozenset((seeding[i], seeding[i + 3])) for i in range(3)}  # top half v bottom half
    page = client.get(cup.get_absolute_url()).content.decode()
    assert "Rating at the start" in page and "1800" in page and "1800.0" not in page and "unrated" in page
    assert "round 1 by rating on" in page
    assert "seeded from the ladder Main: 4 rated, 2 unrated" in cup.events.filter(action="started").get().message


def test_the_seeding_rating_prefers_the_versions_own_rated_matches():
    bot = solo_field(1)[0]
    version = bot.versions.get()
    ladder = rated_ladder([bot], [1650])
    assert selectors.seeding_rating(ladder, version) == 1650.0
    match = Match.objects.create(kind="ladder", rules={"players": 2}, seed=1)
    RatingChange.objects.create(ladder=ladder, match=match, entry=ladder.entries.get(), bot_version=version,
                                rank=1, before=1600, after=1612.5, matches_after=1)
    assert selectors.seeding_rating(ladder, version) == 1612.5
    assert selectors.seeding_rating(None, version) is None


def test_without_a_seed_ladder_nothing_is_seeded_and_round_one_is_a_draw():
    cup = tournament_with(solo_field(4), allow_same_owner=False)
    assert selectors.tournament_seeding(cup) == []
    assert not Entry.objects.filter(tournament=cup, seed_position__isnull=False).exists()
