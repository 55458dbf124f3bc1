"""Recomputing ratings from the history reproduces what was stored, and --check finds tampering;
the matchmaking command."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest
from django.core.management import CommandError, call_command
from ladder_helpers import active_bot, bots_of, ladder, record

from ladders import ratings, services
from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange

# every test builds a history of 40 rated matches: seconds of CPU each, left out of make check
pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def history():
    """Two ladders (2 and 3 seats) with 20 rated matches each, random results and some ties."""
    rng = random.Random(77)
    ladders = [ladder(max_pending=3), ladder(name="Three", slug="three", seats=3, max_pending=2)]
    bots = [active_bot(f"bot{i}") for i in range(7)]
    for on in ladders:
        for bot in bots:
            services.ladder_enter(on, bot)
    for on in ladders:
        done = 0
        while done < 20:
            for match in services.ladder_matchmake(on, rng=rng):
                seated = bots_of(match)
                record(match, {bot: rng.randint(1, len(seated)) for bot in seated})
                done += 1
    return ladders


def stored(on):
    return {
        "changes": list(RatingChange.objects.filter(ladder=on).order_by("pk").values_list("before", "after", "matches_after")),
        "entries": list(
            LadderEntry.objects.filter(ladder=on).order_by("pk").values_list(*services.ENTRY_COLUMNS, "matches_played")
        ),
    }


def test_a_cold_refit_reproduces_the_stored_columns_and_a_recompute_keeps_them(history):
    for on in history:
        before = stored(on)
        assert services.ladder_ratings_recompute(on) == []
        assert services.ladder_ratings_recompute(on, write=True) == []
        after = stored(on)
        assert after["changes"] == before["changes"]  # the history is a record: never rewritten
        for old, new in zip(before["entries"], after["entries"], strict=True):
            assert old[3:5] == new[3:5] and old[6] == new[6]  # games, rated version, matches
            assert all(abs(x - y) <= ratings.CHECK_TOLERANCE for x, y in zip(old[:3], new[:3], strict=True))
        assert len(before["changes"]) >= 40


def test_the_hook_counts_wins_and_the_refit_stores_the_last_change_as_the_history_gives_them(history):
    for on in history:
        for entry in LadderEntry.objects.filter(ladder=on):
            changes = list(RatingChange.objects.filter(entry=entry).order_by("pk"))
            fitted = [c for c in changes if c.after is not None]
            assert entry.matches_played == len(changes)
            assert entry.wins == sum(c.rank == 1 for c in changes)
            assert entry.last_change == (fitted[-1].after - fitted[-1].before if fitted else None)
        assert services.ladder_counts_check(on) == []
        on.refresh_from_db()
        assert on.rated_matches == LadderMatch.objects.filter(ladder=on, rated=True).count() >= 20
    assert LadderEntry.objects.filter(wins__gt=0).exists()
    assert LadderEntry.objects.exclude(last_change=None).exclude(last_change=0).exists()


def test_a_tampered_count_is_reported_and_a_recompute_rewrites_it(history, capsys):
    on = history[0]
    entry = LadderEntry.objects.filter(ladder=on).select_related("bot").order_by("pk")[1]
    LadderEntry.objects.filter(pk=entry.pk).update(wins=entry.wins + 3, last_change=None)
    with pytest.raises(CommandError, match="differ from a refit"):
        call_command("recompute_ratings", "--check", "--ladder", "test")
    out = capsys.readouterr().out
    assert f"{entry.bot.name} wins: stored {entry.wins + 3}, recomputed {entry.wins}" in out
    assert f"{entry.bot.name} last_change: stored None, recomputed {entry.last_change}" in out
    call_command("recompute_ratings", "--ladder", "test")
    repaired = LadderEntry.objects.get(pk=entry.pk)
    assert (repaired.wins, repaired.last_change) == (entry.wins, entry.last_change)
    assert services.ladder_ratings_recompute(on) == []
    # the ladder's rated matches likewise
    rated = LadderMatch.objects.filter(ladder=on, rated=True).count()
    Ladder.objects.filter(pk=on.pk).update(rated_matches=rated - 5)
    [difference] = services.ladder_ratings_recompute(on)
    assert str(difference) == f"the ladder's rated matches: stored {rated - 5}, recomputed {rated}"
    services.ladder_ratings_recompute(on, write=True)
    assert Ladder.objects.get(pk=on.pk).rated_matches == rated


def test_check_command_passes_on_an_untouched_history(history, capsys):
    call_command("recompute_ratings", "--check")
    out = capsys.readouterr().out
    assert "test: reproduced by a refit of the results" in out and "three: reproduced by a refit" in out


def test_check_command_reports_a_tampered_rating_and_fails_then_a_recompute_repairs_it(history, capsys):
    on = history[0]
    entry = LadderEntry.objects.filter(ladder=on).select_related("bot").order_by("pk")[2]
    good = entry.rating
    LadderEntry.objects.filter(pk=entry.pk).update(rating=good + D("0.10"))
    with pytest.raises(CommandError, match="differ from a refit of the stored results"):
        call_command("recompute_ratings", "--check", "--ladder", "test")
    out = capsys.readouterr().out
    assert f"{entry.bot.name} rating: stored {good + D('0.10')}, recomputed" in out
    call_command("recompute_ratings", "--ladder", "test")
    assert abs(LadderEntry.objects.get(pk=entry.pk).rating - good) <= ratings.CHECK_TOLERANCE
    call_command("recompute_ratings", "--check", "--ladder", "test")


def test_a_tampered_result_or_interval_is_reported(history):
    on = history[1]
    entry = LadderEntry.objects.filter(ladder=on).select_related("bot").order_by("pk").first()
    LadderEntry.objects.filter(pk=entry.pk).update(rating_high=entry.rating_high - 20)
    [difference] = services.ladder_ratings_recompute(on)
    assert difference.what == f"{entry.bot.name} rating_high"
    assert abs(D(difference.recomputed) - entry.rating_high) <= ratings.CHECK_TOLERANCE
    LadderEntry.objects.filter(pk=entry.pk).update(rating_high=entry.rating_high)
    # a stored result changed under the ratings (a rank rewritten): the refit no longer matches them
    change = RatingChange.objects.filter(ladder=on, rank__gt=1).order_by("pk").first()
    RatingChange.objects.filter(pk=change.pk).update(rank=1)
    assert services.ladder_ratings_recompute(on) != []


def test_the_check_locks_nothing_and_writes_nothing(history):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        services.ladder_ratings_recompute(history[0])
    sql = [q["sql"].upper() for q in queries.captured_queries]
    assert sql and all(s.startswith("SELECT") and "FOR UPDATE" not in s for s in sql), sql
    # the ladder's mark, its results, its entries, the ladder's and the entries' counts against the
    # history (constant in the history's size)
    assert len(sql) <= 5


def test_an_unknown_ladder_is_an_error_naming_the_known_ones(history):
    with pytest.raises(CommandError, match="no ladder with slug 'nope' \\(known: test, three\\)"):
        call_command("recompute_ratings", "--ladder", "nope")


def test_the_matchmake_command_runs_rounds_like_beat(capsys):
    on = ladder(max_pending=1)
    for name in ("a", "b", "c"):
        services.ladder_enter(on, active_bot(name))
    call_command("ladder_matchmake", "--rounds", "2")
    # The first round fills the cap; its match is not played here (no worker), so round 2 adds none.
    assert capsys.readouterr().out == "round 1: test: 1\nround 2: test: 0\n"
