"""Recomputing ratings from the history reproduces what was stored, and --check finds tampering;
the matchmaking command."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest
from django.core.management import CommandError, call_command
from ladder_helpers import active_bot, bots_of, ladder, record

from ladders import services
from ladders.models import LadderEntry, RatingChange

pytestmark = pytest.mark.django_db


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
        "entries": dict(LadderEntry.objects.filter(ladder=on).values_list("bot_id", "rating")),
    }


def test_recomputation_reproduces_every_stored_value(history):
    for on in history:
        before = stored(on)
        assert services.ladder_ratings_recompute(on) == []
        assert services.ladder_ratings_recompute(on, write=True) == []
        assert stored(on) == before
        assert len(before["changes"]) >= 40


def test_check_command_passes_on_an_untouched_history(history, capsys):
    call_command("recompute_ratings", "--check")
    out = capsys.readouterr().out
    assert "test: reproduced exactly" in out and "three: reproduced exactly" in out


def test_check_command_reports_a_tampered_value_and_fails_then_a_recompute_repairs_it(history, capsys):
    on = history[0]
    change = RatingChange.objects.filter(ladder=on).order_by("pk")[5]
    good = change.after
    RatingChange.objects.filter(pk=change.pk).update(after=good + D("0.01"))
    with pytest.raises(CommandError, match="differ from a recomputation"):
        call_command("recompute_ratings", "--check", "--ladder", "test")
    out = capsys.readouterr().out
    assert f"match #{change.match_id} {change.entry.bot} after: stored {good + D('0.01')}, recomputed {good}" in out
    call_command("recompute_ratings", "--ladder", "test")
    assert RatingChange.objects.get(pk=change.pk).after == good
    call_command("recompute_ratings", "--check", "--ladder", "test")


def test_a_wrong_entry_rating_is_reported(history):
    on = history[1]
    entry = LadderEntry.objects.filter(ladder=on).first()
    LadderEntry.objects.filter(pk=entry.pk).update(rating=entry.rating + 1)
    [difference] = services.ladder_ratings_recompute(on)
    assert difference.what == f"{entry.bot} rating" and difference.recomputed == str(entry.rating)


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
