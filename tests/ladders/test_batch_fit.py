"""The ladder's batch fit (issue 17): what the refit stores, when it runs, faults, matchmaking, pages."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal as D

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from ladder_helpers import active_bot, bots_of, ladder, record

from bots.selectors import bot_playing_version
from ladders import ratings, services
from ladders.models import LadderEntry, RatingChange
from matches import services as match_services
from matches.models import Match, MatchSeat
from tournaments import rating as fit_model

pytestmark = pytest.mark.django_db


def entry_of(bot, on):
    return LadderEntry.objects.get(ladder=on, bot=bot)


def play(on, rng, strength, rounds, forfeit=lambda bot: False, refit=True):
    """Matchmaking rounds; each table finishes in strength order (bot id -> strength), ties broken by rng."""
    for _ in range(rounds):
        for match in services.ladder_matchmake(on, rng=rng):
            seated = sorted(bots_of(match), key=lambda b: (-strength[b], rng.random()))
            record(
                match,
                {b: place for place, b in enumerate(seated, start=1)},
                frozenset(b for b in seated if forfeit(b)),
                refit=refit,
            )


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_the_ladders_ratings_are_fit_ratings_of_its_results_per_version_with_forfeits_last():
    on = ladder(name="Three", slug="three", seats=3, max_pending=2, fault_limit=100, fault_window_limit=20)
    bots = [active_bot(f"b{i}") for i in range(6)]
    for bot in bots:
        services.ladder_enter(on, bot)
    rng = random.Random(3)
    strength = {b.pk: rng.random() for b in bots}
    # b0 forfeits every match it plays: whatever rank the referee gave it, it is last
    play(on, rng, strength, 8, forfeit=lambda b: b == bots[0].pk)
    # the same results rebuilt from the matches' seats, independently of the ladder's rows
    results = fit_model.Results()
    for match in Match.objects.filter(ladder_match__ladder=on, status="done").order_by("pk"):
        seats = list(MatchSeat.objects.filter(match=match))
        results.add({s.bot_version_id: s.rank for s in seats}, forfeits=[s.bot_version_id for s in seats if s.forfeited])
    fit = fit_model.fit_ratings(results)
    assert len(results) >= 12
    for bot in bots:
        entry, version = entry_of(bot, on), bot_playing_version(bot)
        expect = ratings.shown(fit, version.pk)
        assert entry.rated_version_id == version.pk and entry.version_matches == expect.version_matches == entry.matches_played
        for what, stored, fitted in (
            ("rating", entry.rating, expect.rating), ("low", entry.rating_low, expect.low), ("high", entry.rating_high, expect.high)
        ):
            # the interval from an inverse Hessian up to KEEP_HESSIAN logits from the optimum: ~1% of it
            tolerance = D("0.02") if what == "rating" else D("0.02") + ratings.CHECK_INTERVAL_SHARE * (expect.high - expect.low) / 2
            assert abs(stored - fitted) <= tolerance, (what, stored, fitted)
    assert entry_of(bots[0], on).rating == min(entry_of(b, on).rating for b in bots)
    assert RatingChange.objects.filter(entry__bot=bots[0], forfeited=True).count() == entry_of(bots[0], on).version_matches


def test_a_new_version_is_a_new_player_starting_at_the_prior():
    from ladder_helpers import new_version

    on = ladder(max_pending=1)
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    play(on, random.Random(1), {a.pk: 2, b.pk: 1}, 3)
    assert entry_of(a, on).rating > 1600 and entry_of(a, on).version_matches == 3
    version = new_version(a)
    play(on, random.Random(2), {a.pk: 1, b.pk: 2}, 1)  # the new version loses its first match
    entry = entry_of(a, on)
    assert entry.rated_version == version and entry.version_matches == 1 and entry.matches_played == 4
    assert entry.rating < 1500 and entry.elo.provisional


def test_a_refit_after_one_more_match_changes_the_stored_columns_and_only_then():
    on = ladder(max_pending=1)
    a, b, c = active_bot("a"), active_bot("b"), active_bot("c")
    for bot in (a, b, c):
        services.ladder_enter(on, bot)
    rng = random.Random(4)
    strength = {a.pk: 3, b.pk: 2, c.pk: 1}
    play(on, rng, strength, 4)
    columns = list(LadderEntry.objects.filter(ladder=on).order_by("pk").values_list(*services.ENTRY_COLUMNS))
    assert services.ladder_refit(on) is False  # nothing new: debounced
    play(on, rng, strength, 1, refit=False)
    pending = RatingChange.objects.filter(ladder=on, after__isnull=True)
    assert pending.count() == 2  # the result is stored, its history point waits for the refit
    assert list(LadderEntry.objects.filter(ladder=on).order_by("pk").values_list(*services.ENTRY_COLUMNS)) == columns
    with CaptureQueriesContext(connection) as queries:
        assert services.ladder_refit(on) is True
    assert not any("FOR UPDATE" in q["sql"].upper() for q in queries.captured_queries)
    assert not pending.exists()
    assert list(LadderEntry.objects.filter(ladder=on).order_by("pk").values_list(*services.ENTRY_COLUMNS)) != columns
    last = RatingChange.objects.filter(ladder=on).order_by("-pk").first()
    entry = last.entry
    assert (last.after, last.after_low, last.after_high) == (entry.rating, entry.rating_low, entry.rating_high)
    assert on.__class__.objects.get(pk=on.pk).refit_through == last.pk


def test_the_result_hook_queues_the_refit_that_runs_after_the_commit(run_on_commit):
    on = ladder(max_pending=1)
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    [match] = services.ladder_matchmake(on, rng=random.Random(1))
    with run_on_commit():
        record(match, {a.pk: 1, b.pk: 2}, refit=False)
        assert entry_of(a, on).rating == D("1500.00")  # not before the commit
    assert entry_of(a, on).rating > D(1500) and entry_of(a, on).version_matches == 1


def test_results_share_the_queued_refit_until_it_starts_and_then_queue_their_own():
    on, other = ladder(max_pending=1), ladder(max_pending=1, name="Other", slug="other")
    assert services._refit_claim(on.pk)  # the first result queues the refit
    assert not services._refit_claim(on.pk)  # the next ones are in it: nothing more is queued
    assert services._refit_claim(other.pk)  # each ladder its own
    services.ladder_refit(on)  # the refit starts (it reads the results committed before this)
    assert services._refit_claim(on.pk)  # a result after its start queues a refit of its own
    assert not services._refit_claim(other.pk)


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_the_neighbours_likelihood_of_superiority_is_stored_down_the_table():
    on = ladder(max_pending=2)
    bots = [active_bot(f"b{i}") for i in range(4)]
    for bot in bots:
        services.ladder_enter(on, bot)
    play(on, random.Random(5), {b.pk: i for i, b in enumerate(bots)}, 12)
    # the ladder's own order (rating, then entry order): two entries may tie in rating
    table = list(LadderEntry.objects.filter(ladder=on).order_by("-rating", "entered_at", "pk"))
    assert table[0].bot_id == bots[-1].pk and table[-1].bot_id == bots[0].pk
    # each row over the next: at least even (the table is in rating order), never certain
    assert all(0.5 <= e.los_below < 1 for e in table[:-1]) and table[-1].los_below is None
    fit = services.ladder_fit(on).fit
    assert [e.los_below for e in table[:-1]] == [
        pytest.approx(fit.los(a.rated_version_id, b.rated_version_id), abs=1e-3) for a, b in zip(table, table[1:], strict=False)
    ]


# --- faults


def test_an_intermittently_crashing_version_is_suspended_by_its_fault_rate():
    on = ladder(max_pending=1)  # defaults: 3 in a row, or 3 of the version's last 20
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    crashes = iter([True, False, False, True, False, True])
    for number in range(6):
        crash = next(crashes)
        [match] = services.ladder_matchmake(on, rng=random.Random(number))
        record(match, {a.pk: 1, b.pk: 2}, frozenset({a.pk} if crash else ()))
        entry = entry_of(a, on)
        assert entry.fault_streak <= 1
        assert entry.status == ("suspended" if number == 5 else "active")
    assert "forfeiting 3 of its last 6 ladder matches (limit 3 in 20)" in entry.suspended_reason
    assert entry.suspended_version == a.versions.get()


def test_infrastructure_failures_never_count_as_faults():
    on = ladder(max_pending=1, fault_limit=1, fault_window_limit=1)
    a, b = active_bot("a"), active_bot("b")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    for number in range(3):
        [match] = services.ladder_matchmake(on, rng=random.Random(number))
        match_services.match_fail(match.pk, None, "Docker engine gone")
    entry = entry_of(a, on)
    assert entry.status == "active" and entry.fault_streak == 0 and entry.matches_played == 0
    assert not RatingChange.objects.exists()


def test_the_fault_rate_settings_are_bounded_and_the_limit_fits_the_window():
    with pytest.raises(ValidationError, match="fault_window"):
        ladder(fault_window=1)
    with pytest.raises(ValidationError, match="at most the fault window"):
        ladder(fault_window=5, fault_window_limit=6)


# --- matchmaking


def _established(on, bots, now):
    """Stored columns as a long history would leave them: 50 points apart, +/- 40, matched just now."""
    for i, bot in enumerate(bots):
        version = bot_playing_version(bot)
        LadderEntry.objects.filter(ladder=on, bot=bot).update(
            rating=D(1350 + 50 * i), rating_low=D(1310 + 50 * i), rating_high=D(1390 + 50 * i),
            rated_version=version, version_matches=200, matches_played=200, last_matched_at=now,
        )


class _Undo(Exception):
    pass


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_matchmaking_seeks_the_uncertain_version_and_a_spread_of_opponents():
    on = ladder(max_pending=1)
    bots = [active_bot(f"old{i}") for i in range(6)]
    new = active_bot("new")
    for bot in [*bots, new]:
        services.ladder_enter(on, bot)
    now = timezone.now()
    _established(on, bots, now)
    LadderEntry.objects.filter(ladder=on, bot=new).update(matches_played=200, last_matched_at=now)
    anchor = bots[2]
    LadderEntry.objects.filter(ladder=on, bot=anchor).update(last_matched_at=now - timedelta(hours=1))

    def opponents():
        met = {}
        for seed in range(60):
            try:
                with transaction.atomic():
                    [match] = services.ladder_matchmake(on, rng=random.Random(seed))
                    [opponent] = [b for b in bots_of(match) if b != anchor.pk]
                    met[opponent] = met.get(opponent, 0) + 1
                    raise _Undo
            except _Undo:
                pass
        assert sum(met.values()) == 60
        return met

    # the version nobody knows yet is what the anchor's result teaches most about
    met = opponents()
    assert met.get(new.pk, 0) >= 50, met
    # once it is beyond its share (FAIR_SHARE of the mean above it), the anchor meets a spread of the others, nearest most
    LadderEntry.objects.filter(ladder=on, bot=new).update(matches_played=240)
    met = opponents()
    assert met.get(new.pk, 0) <= 3 and len(met) >= 3, met
    assert max(met, key=met.get) in (bots[1].pk, bots[3].pk), met


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_every_active_bot_gets_a_fair_share_while_new_versions_play_more():
    on = ladder(max_pending=2)
    bots = [active_bot(f"b{i}") for i in range(9)]
    for bot in bots:
        services.ladder_enter(on, bot)
    rng = random.Random(11)
    play(on, rng, {b.pk: i for i, b in enumerate(bots)}, 40)
    counts = sorted(LadderEntry.objects.filter(ladder=on).values_list("matches_played", flat=True))
    mean = sum(counts) / len(counts)
    assert sum(counts) == 160
    # the spread, as the study reports it: nobody below 70% nor above 130% of the mean
    assert counts[0] >= 0.7 * mean and counts[-1] <= 1.3 * mean, counts


def test_matchmaking_queries_do_not_grow_with_the_entries():
    def queries(n):
        on = ladder(name=f"L{n}", slug=f"l{n}", max_pending=1)
        for i in range(n):
            services.ladder_enter(on, active_bot(f"q{n}-{i}"))
        with CaptureQueriesContext(connection) as captured:
            [match] = services.ladder_matchmake(on, rng=random.Random(n))
        assert not any('"source"' in q["sql"] and "bots_botversion" in q["sql"] for q in captured.captured_queries[:6])
        return len(captured.captured_queries)

    assert queries(4) == queries(30)


# --- pages


def test_the_table_shows_whole_points_provisional_only_for_wide_intervals_and_the_los():
    on = ladder(max_pending=1)
    a, b = active_bot("alpha"), active_bot("beta")
    for bot in (a, b):
        services.ladder_enter(on, bot)
    LadderEntry.objects.filter(bot=a).update(
        rating=D("1580.49"), rating_low=D("1540.20"), rating_high=D("1620.78"), los_below=0.6412
    )
    LadderEntry.objects.filter(bot=b).update(rating=D("1419.51"), rating_low=D("1200.00"), rating_high=D("1639.02"))
    from django.test import Client

    page = Client().get(reverse("ladders:detail", args=[on.slug])).content.decode()
    rows = page.split("<tbody>")[1].split("</tr>")
    assert "<strong>1580</strong>" in rows[0] and "±40<" in rows[0] and "provisional" not in rows[0]
    assert "<strong>1420</strong>" in rows[1] and "±220<" in rows[1] and "provisional" in rows[1]
    assert "64% that alpha is better than beta" in rows[0]
    body = Client().get(f"/api/ladders/{on.slug}/standings/").json()["results"]
    assert [(r["rating"], r["margin"], r["low"], r["high"], r["provisional"], r["los_next"]) for r in body] == [
        (1580, 40, 1540, 1621, False, 64), (1420, 220, 1200, 1639, True, None),
    ]


@pytest.mark.slow  # plays many matches: seconds of CPU, left out of make check
def test_the_table_is_paginated_and_searchable_in_a_constant_number_of_queries():
    from django.test import Client

    def table(n):
        on = ladder(name=f"T{n}", slug=f"t{n}")
        entries = [LadderEntry(ladder=on, bot=active_bot(f"t{n}-{i:03}"), rating=D(1000 + i)) for i in range(n)]
        LadderEntry.objects.bulk_create(entries)
        client = Client()
        client.get(reverse("ladders:detail", args=[on.slug]))  # warm caches (sessions, content types)
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse("ladders:detail", args=[on.slug]))
        assert response.status_code == 200
        return on, response, len(captured.captured_queries)

    small, _, few = table(10)
    big, response, many = table(100)
    assert few == many
    rows = response.context["standings"]
    assert len(rows) == 50 and rows[0].rank == 1 and rows[0].entry.bot.name == "t100-099"
    second = Client().get(reverse("ladders:detail", args=[big.slug]) + "?page=2").context["standings"]
    assert [r.rank for r in second] == list(range(51, 101))
    found = Client().get(reverse("ladders:detail", args=[big.slug]) + "?q=t100-04").context
    assert [r.entry.bot.name for r in found["standings"]] == [f"t100-04{i}" for i in range(9, -1, -1)]
    assert [r.rank for r in found["standings"]] == list(range(51, 61))  # ranks in the whole table


def test_the_refit_writes_each_changed_entry_in_one_statement_run_per_row_not_a_case_over_all():
    """core.services.rows_update: the values land on their own rows (a Decimal, a foreign key, a
    None among them), other rows and columns keep theirs, and the SQL is one UPDATE by primary key
    (bulk_update's CASE over every row of a batch took seconds at 1,000 entries under the lock)."""
    from core.services import rows_update

    on = ladder()
    bots = [active_bot(name) for name in ("a", "b", "c")]
    for bot in bots:
        services.ladder_enter(on, bot)
    first, second, third = LadderEntry.objects.filter(ladder=on).order_by("pk")
    version = bot_playing_version(bots[0])
    first.rating, first.rated_version_id, first.los_below = D("1612.25"), version.pk, None
    second.rating, second.rated_version_id, second.los_below = D("1388.50"), None, 0.75
    third.rating = D("1999.00")  # changed in memory, not written: not in the rows given
    with CaptureQueriesContext(connection) as queries:
        assert rows_update([first, second], ["rating", "rated_version", "los_below"]) == 2
    assert [q["sql"].count("CASE") for q in queries.captured_queries] == [0] * len(queries.captured_queries)
    stored = {e.pk: e for e in LadderEntry.objects.filter(ladder=on)}
    assert (stored[first.pk].rating, stored[first.pk].rated_version_id, stored[first.pk].los_below) == (
        D("1612.25"), version.pk, None
    )
    assert (stored[second.pk].rating, stored[second.pk].rated_version_id, stored[second.pk].los_below) == (
        D("1388.50"), None, 0.75
    )
    assert stored[third.pk].rating != D("1999.00")
    assert stored[first.pk].matches_played == first.matches_played  # a column not named is left as it was
    assert rows_update([], ["rating"]) == 0


@pytest.mark.parametrize("returning_sql", [True, False], ids=["returning", "without-returning"])
def test_an_update_returning_gives_the_rows_it_changed_as_they_now_are(returning_sql, monkeypatch):
    """core.services.update_returning: only the rows its filter matches change; each comes back with
    its key and the fields asked for as the update left them (a Decimal, an F() expression), the
    rest deferred; one UPDATE ... RETURNING statement, or (a SQLite before 3.35) a locked read, the
    update and a read."""
    from core.services import update_returning
    from django.db.models import F

    if not returning_sql:
        monkeypatch.setattr(type(connection.features), "can_return_rows_from_bulk_insert", False)
    on = ladder()
    for name in ("a", "b"):
        services.ladder_enter(on, active_bot(name))
    first, second = LadderEntry.objects.filter(ladder=on).order_by("pk")
    with CaptureQueriesContext(connection) as queries:
        [changed] = update_returning(
            LadderEntry.objects.filter(pk=first.pk, matches_played=0),
            ["rating", "matches_played"],
            rating=D("1612.25"), matches_played=F("matches_played") + 3,
        )
    if returning_sql:
        assert len(queries.captured_queries) == 1 and "RETURNING" in queries.captured_queries[0]["sql"]
    assert (changed.pk, changed.rating, changed.matches_played) == (first.pk, D("1612.25"), 3)
    assert changed.get_deferred_fields() >= {"wins", "status"}
    stored = {e.pk: e for e in LadderEntry.objects.filter(ladder=on)}
    assert (stored[first.pk].rating, stored[first.pk].matches_played) == (D("1612.25"), 3)
    assert (stored[second.pk].rating, stored[second.pk].matches_played) == (second.rating, 0)
    # the filter no longer matches: nothing changes, nothing comes back
    assert update_returning(LadderEntry.objects.filter(pk=first.pk, matches_played=0), ["rating"], rating=D(1)) == []
    assert LadderEntry.objects.get(pk=first.pk).rating == D("1612.25")
