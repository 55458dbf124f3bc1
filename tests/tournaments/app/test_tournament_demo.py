"""The demo's tournaments: a round robin and a Swiss of the demo bots, played to the end, created once."""

from __future__ import annotations

import pytest
from tournament_helpers import field

from matches.models import Match
from tournaments_app.demo import DEMO_TOURNAMENTS, demo_tournaments
from tournaments_app.models import Tournament

pytestmark = pytest.mark.django_db


@pytest.mark.slow  # plays the demo tournaments to the end: tens of seconds, left out of make check
def test_demo_tournaments_play_to_the_end_through_the_task_path_and_are_created_once(
    owner, eager_tasks, django_capture_on_commit_callbacks
):
    bots = field(4, owner)
    lines: list[str] = []
    with django_capture_on_commit_callbacks(execute=True):
        assert demo_tournaments(bots, password="pw", log=lines.append) == 2
    tournaments = Tournament.objects.filter(slug__in=[slug for _, slug, *_ in DEMO_TOURNAMENTS])
    assert {(t.format, t.status, t.current_round) for t in tournaments} == {
        ("round_robin", "finished", 3), ("swiss", "finished", 2)}
    matches = Match.objects.filter(kind="tournament")
    assert matches.count() == 6 + 4 and set(matches.values_list("status", flat=True)) == {"done"}
    assert all(t.events.filter(action="started", actor__username="organizer").exists() for t in tournaments)
    assert "user organizer (staff" in lines[0]
    with django_capture_on_commit_callbacks(execute=True):
        assert demo_tournaments(bots, password="pw", log=lines.append) == 0
    assert Match.objects.filter(kind="tournament").count() == 10
