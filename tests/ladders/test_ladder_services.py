"""Ladder services: rule sets, entering and leaving, stored rating changes, suspension."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest
from django.core.exceptions import ValidationError
from ladder_helpers import active_bot, bots_of, ladder, new_version, record
from testsupport import played_match

from ladders import checks, ratings, services
from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange
from matches import services as match_services
from matches.models import Match
from tournaments import rating as fit_model

pytestmark = pytest.mark.django_db


def entry_of(bot, on):
    return LadderEntry.objects.get(ladder=on, bot=bot)


# --- rule sets

def test_a_rule_set_without_players_takes_the_seats_and_is_stored_complete():
    rules = checks.ladder_rules_clean({"rounds": 2}, 3)
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
        checks.ladder_rules_clean(rules, seats)


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

def fitted(*results):
    """The batch fit of ``results`` ({version id: rank}, forfeits) as the refit stores it, per version."""
    data = fit_model.Results()
    for ranks, forfeits in results:
        data.add(ranks, forfeits=forfeits)
    fit = fit_model.fit_ratings(data)
    return lambda version: ratings.shown(fit, version.pk)


def test_a_two_seat_result_stores_both_rows_once_and_the_refit_writes_the_fit():
    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    va, vb = a.versions.get(), b.versions.get()
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    record(match, {a.pk: 1, b.pk: 2})
    expect = fitted(({va.pk: 1, vb.pk: 2}, ()))
    changes = {c.entry.bot_id: c for c in RatingChange.objects.select_related("entry")}
    assert (changes[a.pk].before, changes[a.pk].after) == (D("1500.00"), expect(va).rating)
    assert (changes[b.pk].before, changes[b.pk].after) == (D("1500.00"), expect(vb).rating)
    assert changes[a.pk].after > D(1500) > changes[b.pk].after  # the winner above the mean, symmetric
    assert changes[a.pk].after - 1500 == 1500 - changes[b.pk].after
    assert (changes[a.pk].after_low, changes[a.pk].after_high) == (expect(va).low, expect(va).high)
    assert changes[a.pk].bot_version == va and changes[a.pk].matches_after == 1
    entry = entry_of(a, on)
    assert (entry.rating, entry.rating_low, entry.rating_high, entry.version_matches) == (
        expect(va).rating, expect(va).low, expect(va).high, 1
    )
    assert entry.rated_version == va and entry_of(b, on).matches_played == 1
    # The hook runs again (a redelivered result): nothing is counted twice.
    services.ladder_match_finish(Match.objects.get(pk=match.pk))
    assert RatingChange.objects.count() == 2 and entry_of(a, on).matches_played == 1
    assert LadderMatch.objects.get(match=match).rated and Ladder.objects.get(pk=on.pk).rated_matches == 1

    # b wins the second: one win each, both back at the mean, the intervals narrower.
    [match] = services.ladder_matchmake(on, rng=random.Random(2))
    record(match, {a.pk: 2, b.pk: 1})
    assert (entry_of(a, on).rating, entry_of(b, on).rating) == (D("1500.00"), D("1500.00"))
    assert entry_of(a, on).rating_high - entry_of(a, on).rating_low < entry.rating_high - entry.rating_low


def test_a_results_ladder_hook_is_two_statements_and_a_second_run_counts_nothing(
    postgresql_db, django_capture_on_commit_callbacks
):
    from core.services import cache_delete_on_commit
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from testsupport import played_match

    from web.bot_stats import _version_results_key, _version_stats_key
    from web.home import COUNTS_KEY, LADDERS_KEY

    on = ladder()
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    started = match_services.match_begin(match.pk, worker="w1")
    outcome = played_match([1 if s.bot_version.bot_id == a.pk else 2 for s in started.seats.all()])
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks() as committed:
        assert match_services.match_record_result(match.pk, started.attempt_token, outcome, match=started)
    statements = [q["sql"].strip() for q in queries.captured_queries]
    # the pages' caches dropped at the commit by one delete_many (one round trip to a shared cache): the
    # home page's counts and the numbers of both versions, whichever hook asked for them
    drops = [c for c in committed if type(c).__module__ == cache_delete_on_commit.__module__]
    versions = [s.bot_version_id for s in started.seats.all()]
    assert len(drops) == 1 and set(drops[0].keys) == {
        COUNTS_KEY, LADDERS_KEY, *(key(v) for v in versions for key in (_version_stats_key, _version_results_key))
    }, committed
    hook = statements[statements.index(next(s for s in statements if s.startswith("WITH link AS"))):-1]
    # the link, the ladder and the entries locked by one; the result's rows and the entries' counts by
    # one (a forfeit adds the read of the version's recent forfeits)
    assert len(hook) == 2 and hook[1].startswith("WITH inserted AS (INSERT INTO"), hook
    # BEGIN (a savepoint in a test's transaction), the match with its seats, the hook's two, COMMIT
    assert len(statements) == 5 and statements[1].startswith('WITH changed AS (UPDATE "matches_match"'), statements
    changes = {c.entry.bot_id: c for c in RatingChange.objects.select_related("entry")}
    assert (changes[a.pk].rank, changes[b.pk].rank, changes[b.pk].forfeited) == (1, 2, False)
    assert {c.before for c in changes.values()} == {D("1500.00")} and {c.matches_after for c in changes.values()} == {1}
    assert all(c.created_at is not None and c.after is None for c in changes.values())
    assert (entry_of(a, on).matches_played, entry_of(a, on).wins, entry_of(a, on).fault_streak) == (1, 1, 0)
    assert (entry_of(b, on).matches_played, entry_of(b, on).wins, entry_of(b, on).fault_streak) == (1, 0, 0)
    assert LadderMatch.objects.get(match=match).rated and Ladder.objects.get(pk=on.pk).rated_matches == 1
    # run again (a redelivered result): the link is rated already, nothing is counted twice
    services.ladder_match_finish(Match.objects.get(pk=match.pk))
    assert RatingChange.objects.count() == 2 and entry_of(b, on).matches_played == 1
    assert Ladder.objects.get(pk=on.pk).rated_matches == 1
    # the refit: its reads, then one statement writes the ladder's mark, the entries and the history
    with CaptureQueriesContext(connection) as queries:
        assert services.ladder_refit(on.pk) is True
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]
    assert len(writes) == 1 and writes[0].startswith('WITH changed AS (UPDATE "ladders_ladder"'), writes
    assert len(queries.captured_queries) <= 6
    assert entry_of(a, on).rating > D(1500) > entry_of(b, on).rating and entry_of(a, on).last_change > 0
    assert not RatingChange.objects.filter(after__isnull=True).exists()
    assert Ladder.objects.get(pk=on.pk).refit_through == RatingChange.objects.order_by("-pk").first().pk
    # a refit of fewer results than the stored ratings include writes nothing
    through = Ladder.objects.get(pk=on.pk).refit_through
    Ladder.objects.filter(pk=on.pk).update(refit_through=through + 100)
    RatingChange.objects.update(after=None)
    assert services.ladder_refit(on.pk, force=True) is False
    assert not RatingChange.objects.filter(after__isnull=False).exists()


def test_a_three_seat_ranking_with_a_tie_is_fitted_as_plackett_luce():
    on = ladder(name="Three", slug="three", seats=3)
    a, b, c = active_bot("a"), active_bot("b"), active_bot("c")
    for bot in (a, b, c):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(3))
    record(match, {a.pk: 1, b.pk: 1, c.pk: 3})
    va, vb, vc = (bot.versions.get() for bot in (a, b, c))
    expect = fitted(({va.pk: 1, vb.pk: 1, vc.pk: 3}, ()))
    assert [entry_of(bot, on).rating for bot in (a, b, c)] == [expect(v).rating for v in (va, vb, vc)]
    assert entry_of(a, on).rating == entry_of(b, on).rating > D(1500) > entry_of(c, on).rating


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
    assert entry_of(a, on).rating > D(1500) > entry_of(b, on).rating and entry_of(a, on).status == "left"
    assert entry_of(a, on).los_below is None  # not in the ranking: no neighbour below it


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
    outcome = played_match([1, 2])
    assert match_services.match_record_result(match.pk, token, outcome)
    assert Match.objects.get(pk=match.pk).status == "done"
    assert not RatingChange.objects.exists() and LadderMatch.objects.get(match=match).rated


def test_a_challenge_between_two_of_ones_own_bots_is_refused_unless_the_ladder_allows_it():
    from ladders.services import ChallengeError, challenge_create

    strict = ladder(name="Strict", slug="strict")
    mine, also_mine = active_bot("mine", owner="ann"), active_bot("alsomine", owner="ann")
    services.ladder_enter(strict, also_mine)  # an active entry makes it public, so only the owner rule refuses
    with pytest.raises(ChallengeError, match="ann/mine and ann/alsomine have the same owner.*never seats one owner"):
        challenge_create(challenger=mine.owner, bot=mine, opponent=also_mine, ladder=strict)
    assert not Match.objects.exists()
    # Another owner's bot is fine on the same ladder; and a ladder that allows it takes the pair.
    other = active_bot("other", owner="bob")
    services.ladder_enter(strict, other)
    assert challenge_create(challenger=mine.owner, bot=mine, opponent=other, ladder=strict).match.kind == "challenge"
    lenient = ladder(name="Lenient", slug="lenient", allow_same_owner=True)
    challenge = challenge_create(challenger=mine.owner, bot=mine, opponent=also_mine, ladder=lenient)
    assert bots_of(challenge.match) == [mine.pk, also_mine.pk]


def test_the_owner_check_names_the_pair_and_passes_distinct_owners():
    strict = ladder()
    a, b, c = active_bot("a", owner="ann"), active_bot("b", owner="bob"), active_bot("c", owner="ann")
    services.ladder_owners_check(strict, [a, b])
    with pytest.raises(services.LadderError, match="ann/a and ann/c have the same owner"):
        services.ladder_owners_check(strict, [a, b, c])


# --- the match clock (BOT_CONTRACT.md, time_per_match)

THINKER_SOURCE = b"""import time


def agent(observation, configuration):
    time.sleep(0.9)  # legal and within its 1 s per decision every time
    return observation["legal_actions"][0]
"""


# transaction=True: the match plays for more than MATCH_LEASE_RENEW_SECONDS, and its lease is renewed
# from a thread with a connection of its own, which cannot see rows inside a test's transaction.
@pytest.mark.slow  # it plays for the match clock's 3 s and more
@pytest.mark.django_db(transaction=True)
def test_a_bot_slow_within_its_decision_clock_forfeits_on_the_match_clock_and_the_ladder_match_is_rated():
    """Issue 14 point 2: 0.9 s a decision never breaks a rule, but uses up a 3 s match clock; the
    match completes (done, not failed), the slow bot forfeits and both bots are rated for it."""
    from bots import services as bot_services
    from matches import tasks

    on = ladder(time_per_decision=1.0, time_bank=1.0, time_per_match=3.0, rules={"players": 2, "rounds": 3})
    thinker, steady = active_bot("thinker"), active_bot("steady")
    version = bot_services.bot_version_create(bot=thinker, filename="thinker.py", data=THINKER_SOURCE, validate=False)
    version.status = version.Status.ACTIVE
    version.save(update_fields=["status"])
    for bot in (thinker, steady):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(3))
    assert match.time_per_match == 3.0
    assert tasks.match_play.apply(args=[match.pk]).get() is True
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    slow = match.seats.get(bot_version=version)
    assert slow.forfeited and slow.fault_reason.startswith("out of match time"), (slow.fault_kind, slow.fault_reason)
    services.ladder_refit(on)  # what the result hook's ladder_refit task does after the commit
    changes = RatingChange.objects.filter(ladder=on, match=match)
    assert changes.count() == 2
    assert entry_of(steady, on).rating > D(1500) > entry_of(thinker, on).rating
