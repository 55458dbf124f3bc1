"""The match page: the bots' three clocks, the match's own time limit, the seating balance."""

from __future__ import annotations

import gzip
import json

import pytest
from django.urls import reverse
from platform_helpers import good_bot

from bots import services as bot_services
from engine.rules import Rules
from matches import selectors, services, tasks
from matches.models import Match

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]


def played(bot, *, duplicate: bool, **clocks) -> Match:
    version = bot_services.bot_version_create(bot=bot, filename="p.py", data=good_bot(str(clocks)), validate=False)
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1", "hand_size=3"]), seats=[version, "first"],
        seed=8, duplicate=duplicate, enqueue=False, **clocks,
    )
    tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    return match


def page(client, match) -> str:
    response = client.get(reverse("matches:detail", args=[match.pk]))
    assert response.status_code == 200
    return response.content.decode()


def with_replay_seating(match, seating) -> None:
    replay = json.loads(selectors.match_replay_json(match))
    if seating is None:
        replay.pop("seating", None)
    else:
        replay["seating"] = seating
    Match.objects.filter(pk=match.pk).update(replay_gz=gzip.compress(json.dumps(replay).encode()))


def test_the_match_page_shows_the_three_clocks_and_the_time_limit(client, bot):
    match = played(bot, duplicate=False, time_per_match=42.0, time_bank=2.5)
    content = page(client, match)
    assert "<dt>Time per decision</dt><dd>1 s <span class=\"muted\">(default)</span>" in content
    assert "<dt>Time bank</dt><dd>2.50 s</dd>" in content
    assert "<dt>Time per match</dt><dd>42 s</dd>" in content
    soft, _ = selectors.match_time_limits(match)
    assert f"<dt>Time limit</dt><dd>{soft:.0f} s" in content


def test_the_match_page_names_the_seating_balance_of_a_duplicate_match_when_the_replay_has_one(client, bot):
    match = played(bot, duplicate=True)
    with_replay_seating(match, {"description": "every seat order once (2 orders)", "orders": [[0, 1], [1, 0]]})
    content = page(client, match)
    assert "<dt>Seating</dt><dd>every seat order once (2 orders)</dd>" in content
    # a replay stored before the engine recorded the seating: nothing is shown
    with_replay_seating(match, None)
    assert "<dt>Seating</dt>" not in page(client, match)
    # nor for a match that is not duplicate
    plain = played(bot, duplicate=False, time_per_match=50.0)
    with_replay_seating(plain, {"description": "should not show"})
    assert "should not show" not in page(client, plain)
