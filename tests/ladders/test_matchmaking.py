"""Matchmaking: the cap, who waits longest, fairness over a simulated run, who never plays."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone
from ladder_helpers import active_bot, bots_of, ladder, new_version, record

from ladders import services
from ladders.models import LadderEntry
from matches.models import Match

pytestmark = pytest.mark.django_db


def enter_all(on, bots):
    for bot in bots:
        services.ladder_enter(on, bot)


def simulate_results(matches, strength, rng):
    """Rank each match's bots by hidden strength plus noise, as a real game would, roughly."""
    for match in matches:
        order = sorted(bots_of(match), key=lambda bot: -(strength[bot] + rng.gauss(0, 200)))
        record(match, {bot: place for place, bot in enumerate(order, start=1)})


def test_matchmaking_respects_the_cap_of_queued_and_running_matches():
    on = ladder(max_pending=2)
    enter_all(on, [active_bot(f"b{i}") for i in range(8)])
    assert len(services.ladder_matchmake(on, rng=random.Random(1))) == 2
    assert services.ladder_matchmake(on, rng=random.Random(2)) == []
    first = Match.objects.filter(kind="ladder").order_by("pk").first()
    record(first, dict(zip(bots_of(first), (1, 2), strict=True)))
    assert len(services.ladder_matchmake(on, rng=random.Random(3))) == 1


def test_a_bot_sits_in_at_most_one_pending_match_of_a_ladder():
    on = ladder(max_pending=10)
    enter_all(on, [active_bot(f"b{i}") for i in range(5)])
    matches = services.ladder_matchmake(on, rng=random.Random(1))
    seated = [bot for match in matches for bot in bots_of(match)]
    assert len(matches) == 2 and len(seated) == len(set(seated)) == 4


def test_the_entry_that_waited_longest_is_matched_first():
    on = ladder(max_pending=1)
    bots = [active_bot(f"b{i}") for i in range(4)]
    enter_all(on, bots)
    now = timezone.now()
    for hours, bot in zip((1, 5, 3, 2), bots, strict=True):
        LadderEntry.objects.filter(bot=bot).update(last_matched_at=now - timedelta(hours=hours))
    [match] = services.ladder_matchmake(on, rng=random.Random(4))
    assert bots[1].pk in bots_of(match)


def test_a_new_bot_is_matched_at_the_next_round():
    on = ladder(max_pending=1)
    enter_all(on, [active_bot(f"b{i}") for i in range(6)])
    LadderEntry.objects.update(last_matched_at=timezone.now())
    newcomer = active_bot("newcomer")
    services.ladder_enter(on, newcomer)
    [match] = services.ladder_matchmake(on, rng=random.Random(5))
    assert newcomer.pk in bots_of(match)


def test_rejected_versions_suspended_and_departed_entries_never_play():
    on = ladder(max_pending=10)
    playing = [active_bot("p1"), active_bot("p2")]
    rejected, suspended, departed = active_bot("rejected"), active_bot("suspended"), active_bot("departed")
    enter_all(on, [*playing, rejected, suspended, departed])
    rejected.versions.update(status="rejected", rejection_reason="crash: in validation")
    LadderEntry.objects.filter(bot=suspended).update(status="suspended", suspended_reason="forfeits")
    services.ladder_leave(on, departed)
    matches = services.ladder_matchmake(on, rng=random.Random(6))
    assert [sorted(bots_of(m)) for m in matches] == [sorted(b.pk for b in playing)]


def test_an_entry_plays_its_bots_playing_version():
    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    enter_all(on, [a, b])
    newest = new_version(a)
    new_version(a, status="rejected")  # a rejected upload changes nothing
    [match] = services.ladder_matchmake(on, rng=random.Random(7))
    assert newest.pk in [seat.bot_version_id for seat in match.seats.all()]


def test_an_inactive_ladder_gets_no_matches():
    on = ladder()
    enter_all(on, [active_bot("a"), active_bot("b")])
    on.active = False
    on.save()
    assert services.ladder_matchmake(on) == []
    assert services.ladder_matchmake_all() == {}


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
@pytest.mark.parametrize(("seats", "max_pending"), [(2, 3), (3, 2)])
def test_every_bot_gets_at_least_half_its_fair_share_of_games(seats, max_pending):
    rng = random.Random(2026 + seats)
    on = ladder(seats=seats, max_pending=max_pending)
    bots = [active_bot(f"bot{i}") for i in range(8)]
    enter_all(on, bots)
    # Spread-out strengths: pure rating-closeness would keep the extremes apart from the middle.
    strength = {bot.pk: 1200 + 100 * i for i, bot in enumerate(bots)}
    now = timezone.now()
    for step in range(30):
        created = services.ladder_matchmake(on, rng=rng, now=now + timedelta(minutes=step))
        assert created, f"round {step}: no match although every bot was free"
        simulate_results(created, strength, rng)
    games = Counter({bot.pk: 0 for bot in bots})
    for match in Match.objects.filter(kind="ladder", status="done"):
        games.update(bots_of(match))
    fair = sum(games.values()) / len(bots)
    assert min(games.values()) >= fair / 2, (fair, games)
    # Stronger (hidden) bots end higher: the ratings found the order, give or take neighbours.
    rating = {e.bot_id: e.rating for e in LadderEntry.objects.filter(ladder=on)}
    assert rating[bots[-1].pk] > rating[bots[0].pk] + 200


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_a_strong_newcomer_climbs_into_the_top_two_within_fifteen_matches():
    rng = random.Random(11)
    on = ladder(max_pending=3)
    settled = [active_bot(f"old{i}") for i in range(6)]
    enter_all(on, settled)
    strength = {bot.pk: 1300 + 60 * i for i, bot in enumerate(settled)}
    now = timezone.now()
    for step in range(15):
        simulate_results(services.ladder_matchmake(on, rng=rng, now=now + timedelta(minutes=step)), strength, rng)
    newcomer = active_bot("newcomer")
    services.ladder_enter(on, newcomer)
    strength[newcomer.pk] = 1900
    step = 15
    while LadderEntry.objects.get(bot=newcomer).matches_played < 15:
        step += 1
        simulate_results(services.ladder_matchmake(on, rng=rng, now=now + timedelta(minutes=step)), strength, rng)
    assert step <= 15 + 25, "the newcomer was not matched often enough"
    ranking = list(LadderEntry.objects.filter(ladder=on).order_by("-rating").values_list("bot_id", flat=True))
    assert newcomer.pk in ranking[:2], ranking.index(newcomer.pk)


def test_a_ladder_with_broken_stored_rules_does_not_stop_the_others(caplog):
    broken, good = ladder(name="Broken", slug="broken"), ladder(name="Good", slug="good")
    for on in (broken, good):
        enter_all(on, [active_bot(f"{on.slug}-a"), active_bot(f"{on.slug}-b")])
    type(broken).objects.filter(pk=broken.pk).update(rules={"players": 2, "wd4": "sometimes"})
    assert services.ladder_matchmake_all(rng=random.Random(1)) == {"broken": 0, "good": 1}
    assert "ladder broken: no matchmaking: rule option 'wd4'" in caplog.text


def _owners_at_tables():
    """Per ladder match, the owners of its seats (in seat order)."""
    return [
        [seat.bot_version.bot.owner_id for seat in match.seats.select_related("bot_version__bot").order_by("seat")]
        for match in Match.objects.filter(kind="ladder").order_by("pk")
    ]


def _run_team_ladder(allow_same_owner: bool, seed: int) -> list[list[int]]:
    """Four owners with three bots each on a 3-seat ladder, 25 matchmaking passes with results."""
    rng = random.Random(seed)
    on = ladder(seats=3, max_pending=4, allow_same_owner=allow_same_owner)
    bots = [active_bot(f"{team}{i}", owner=f"team-{team}") for team in "wxyz" for i in range(3)]
    enter_all(on, bots)
    strength = {bot.pk: 1300 + 50 * i for i, bot in enumerate(bots)}
    now = timezone.now()
    for step in range(25):
        created = services.ladder_matchmake(on, rng=rng, now=now + timedelta(minutes=step))
        assert created, f"pass {step}: no match although four owners' bots were free"
        simulate_results(created, strength, rng)
    return _owners_at_tables()


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_one_owners_bots_never_share_a_table_unless_the_ladder_allows_it():
    tables = _run_team_ladder(allow_same_owner=False, seed=14)
    assert len(tables) >= 25 * 2
    crowded = [owners for owners in tables if len(set(owners)) < len(owners)]
    assert crowded == []


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_a_ladder_that_allows_it_may_seat_one_owners_bots_together():
    tables = _run_team_ladder(allow_same_owner=True, seed=14)
    # Twelve bots of four owners, three seats, seated by rating alone: 68 of this run's 100 tables
    # hold one owner twice (with the rule: 0 of 80), so fewer than 10 would mean the rule leaked in.
    crowded = [owners for owners in tables if len(set(owners)) < len(owners)]
    assert len(crowded) >= 10, (len(crowded), len(tables))


@pytest.mark.parametrize(("seats", "teams"), [(2, {"solo": 4}), (3, {"big": 5, "small": 2})])
def test_a_ladder_without_enough_owners_to_fill_a_table_makes_no_match(seats, teams):
    on = ladder(seats=seats, max_pending=10)
    enter_all(on, [active_bot(f"{team}{i}", owner=team) for team, count in teams.items() for i in range(count)])
    assert services.ladder_matchmake(on, rng=random.Random(3)) == []
    assert not Match.objects.exists()
    # One more owner is all it takes; the table then holds one bot of each owner.
    services.ladder_enter(on, active_bot("stranger"))
    [match] = services.ladder_matchmake(on, rng=random.Random(4))
    [owners] = _owners_at_tables()
    assert len(set(owners)) == seats == len(owners)
    assert bots_of(match)[0] != bots_of(match)[1]


def test_the_owner_rule_passes_over_a_closer_bot_of_the_anchors_owner():
    on = ladder(max_pending=1)
    mine = [active_bot(f"mine{i}", owner="me") for i in range(3)]
    other = active_bot("far", owner="someone")
    enter_all(on, [*mine, other])
    LadderEntry.objects.filter(bot=other).update(rating=2400)  # far from every one of mine: still the only choice
    [match] = services.ladder_matchmake(on, rng=random.Random(9))
    assert other.pk in bots_of(match)


def test_every_ladder_match_and_challenge_carries_the_ladders_three_clocks():
    from ladders.services import challenge_create

    on = ladder(time_per_decision=0.5, time_bank=4, time_per_match=120, max_pending=10)
    bots = [active_bot(f"b{i}") for i in range(4)]
    enter_all(on, bots)
    matches = services.ladder_matchmake(on, rng=random.Random(11))
    challenge = challenge_create(challenger=bots[0].owner, bot=bots[0], opponent=bots[1], ladder=on)
    assert len(matches) == 2
    for match in [*matches, challenge.match]:
        match.refresh_from_db()
        assert (match.time_per_decision, match.time_bank, match.time_per_match) == (0.5, 4.0, 120.0)
