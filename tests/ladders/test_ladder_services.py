"""Ladder services: rule sets, entering and leaving, stored rating changes, suspension."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest
from django.core.exceptions import ValidationError
from ladder_helpers import active_bot, bots_of, ladder, new_version, record

from ladders import services
from ladders.models import LadderEntry, LadderMatch, RatingChange
from matches import services as match_services
from matches.models import Match
from matches.sandboxing import Outcome, SeatOutcome

pytestmark = pytest.mark.django_db


def entry_of(bot, on):
    return LadderEntry.objects.get(ladder=on, bot=bot)


# --- rule sets

def test_a_rule_set_without_players_takes_the_seats_and_is_stored_complete():
    rules = services.ladder_rules_clean({"rounds": 2}, 3)
    assert rules["players"] == 3 and rules["rounds"] == 2 and "wd4" in rules


@pytest.mark.parametrize(
    ("rules", "seats", "message"),
    [
        ({"players": 3}, 2, "players=3 but the ladder has 2 seats"),
        ({"wd4": "sometimes"}, 2, "'wd4'"),
        ({"colour": "red"}, 2, "'colour': unknown option"),
        ({"players": 2}, 11, "seats per match must be 2 to 10, got 11"),
        ([1, 2], 2, "must be a JSON object"),
    ],
)
def test_bad_rule_sets_are_refused_with_what_was_wrong(rules, seats, message):
    with pytest.raises(services.LadderError, match=message):
        services.ladder_rules_clean(rules, seats)


def test_model_validation_reports_bad_rules_on_the_rules_field():
    with pytest.raises(ValidationError) as error:
        ladder(rules={"players": 2, "stacking": "stack"})  # stacking needs wd4 enforced or free
    assert "stacking" in str(error.value.message_dict["rules"])


# --- entering and leaving

def test_a_bot_enters_once_leaves_and_comes_back_with_its_rating():
    on, bot = ladder(), active_bot("alpha")
    entry = services.ladder_enter(on, bot)
    assert entry.status == "active" and entry.rating == D("1500")
    with pytest.raises(services.LadderError, match="already entered"):
        services.ladder_enter(on, bot)
    LadderEntry.objects.filter(pk=entry.pk).update(rating=D("1555.55"))
    services.ladder_leave(on, bot)
    with pytest.raises(services.LadderError, match="is not entered"):
        services.ladder_leave(on, bot)
    assert services.ladder_enter(on, bot).rating == D("1555.55")


def test_a_bot_without_an_active_version_cannot_enter():
    on, bot = ladder(), active_bot("alpha")
    bot.versions.update(status="rejected", rejection_reason="crash: x")
    with pytest.raises(services.LadderError, match="no active version"):
        services.ladder_enter(on, bot)


def test_a_closed_ladder_takes_no_entries():
    on = ladder(active=False)
    with pytest.raises(services.LadderError, match="closed"):
        services.ladder_enter(on, active_bot("alpha"))


# --- ratings stored with the result

def test_a_two_seat_result_stores_both_rating_changes_once():
    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    record(match, {a.pk: 1, b.pk: 2})
    changes = {c.entry.bot_id: c for c in RatingChange.objects.select_related("entry")}
    assert (changes[a.pk].before, changes[a.pk].after) == (D("1500.00"), D("1516.00"))
    assert (changes[b.pk].before, changes[b.pk].after) == (D("1500.00"), D("1484.00"))
    assert changes[a.pk].bot_version == a.versions.get() and changes[a.pk].matches_after == 1
    assert entry_of(a, on).rating == D("1516.00") and entry_of(b, on).matches_played == 1
    # The hook runs again (a redelivered result): nothing is counted twice.
    services.ladder_match_finish(Match.objects.get(pk=match.pk))
    assert RatingChange.objects.count() == 2 and entry_of(a, on).rating == D("1516.00")
    assert LadderMatch.objects.get(match=match).rated

    # Second match from 1516 vs 1484, b wins: E(b) = 1 / (1 + 10**(32/400)) = 0.4539876
    # b: 1484 + 32 * (1 - 0.4539876) = 1501.472 -> 1501.47; a: 1516 - 17.472 = 1498.53
    [match] = services.ladder_matchmake(on, rng=random.Random(2))
    record(match, {a.pk: 2, b.pk: 1})
    assert (entry_of(a, on).rating, entry_of(b, on).rating) == (D("1498.53"), D("1501.47"))


def test_a_three_seat_ranking_with_a_tie_is_rated_pairwise():
    on = ladder(name="Three", slug="three", seats=3)
    a, b, c = active_bot("a"), active_bot("b"), active_bot("c")
    for bot, rating in ((a, "1600"), (b, "1500"), (c, "1400")):
        services.ladder_enter(on, bot)
        LadderEntry.objects.filter(bot=bot).update(rating=D(rating))
    [match] = services.ladder_matchmake(on, rng=random.Random(3))
    record(match, {a.pk: 1, b.pk: 1, c.pk: 3})
    # docs/ratings.md worked example: weight 32/2, a +1.603, b +8.000, c -9.603
    assert [entry_of(bot, on).rating for bot in (a, b, c)] == [D("1601.60"), D("1508.00"), D("1390.40")]


def test_a_failed_match_changes_no_rating():
    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    match_services.match_fail(match.pk, None, "Docker engine gone for good")
    assert not RatingChange.objects.exists() and entry_of(a, on).matches_played == 0


def test_a_bot_that_left_is_still_rated_for_the_match_it_was_playing():
    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    services.ladder_leave(on, a)
    record(match, {a.pk: 1, b.pk: 2})
    assert entry_of(a, on).rating == D("1516.00") and entry_of(a, on).status == "left"


# --- suspension after forfeits in a row

def test_forfeits_in_a_row_suspend_the_bot_and_only_a_new_version_enters_again():
    on = ladder(fault_limit=2)
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)

    def play(forfeits):
        [match] = services.ladder_matchmake(on, rng=random.Random(len(forfeits)))
        record(match, {a.pk: 2, b.pk: 1}, frozenset(forfeits))
        return match

    play({a.pk})
    play(set())  # a match without a forfeit breaks the streak
    assert entry_of(a, on).fault_streak == 0
    play({a.pk})
    assert entry_of(a, on).status == "active" and entry_of(a, on).fault_streak == 1
    last = play({a.pk})
    entry = entry_of(a, on)
    assert entry.status == "suspended" and entry.suspended_version == a.versions.get()
    assert f"match #{last.pk}" in entry.suspended_reason and "crash: ZeroDivisionError" in entry.suspended_reason
    assert "2 ladder matches in a row" in entry.suspended_reason
    assert services.ladder_matchmake(on, rng=random.Random(9)) == []  # b alone: no match
    with pytest.raises(services.LadderError, match="upload a new version"):
        services.ladder_enter(on, a)
    new_version(a)
    entry = services.ladder_enter(on, a)
    assert entry.status == "active" and entry.fault_streak == 0 and not entry.suspended_reason
    [match] = services.ladder_matchmake(on, rng=random.Random(10))
    assert sorted(bots_of(match)) == sorted([a.pk, b.pk])


def test_a_hand_made_ladder_match_seating_one_bot_twice_is_stored_unrated():
    on = ladder()
    a = active_bot("a")
    services.ladder_enter(on, a)
    version = a.versions.get()
    match = match_services.match_create(kind="ladder", rules={"players": 2, "rounds": 1}, seats=[version, version])
    LadderMatch.objects.create(ladder=on, match=match)
    token = match_services.match_start(match.pk)
    outcome = Outcome([SeatOutcome(0.0, 1, 1), SeatOutcome(0.0, 2, 0)], 1, 1, {}, {"version": 1})
    assert match_services.match_record_result(match.pk, token, outcome)
    assert Match.objects.get(pk=match.pk).status == "done"
    assert not RatingChange.objects.exists() and LadderMatch.objects.get(match=match).rated
