"""Fixtures of the tournament app's tests (beside tests/conftest.py's)."""

from __future__ import annotations

import pytest
from tournament_helpers import field, make_user, play_round, refreshed, tournament_with


@pytest.fixture
def owner(db):
    return make_user("owner")




@pytest.fixture
def swiss(owner):
    """A 2-seat Swiss of 4 entries (2 rounds), "Spring Swiss", with round 1 played (seat 0 won each
    table): round 2's two matches are queued."""
    tournament = tournament_with(field(4, owner), name="Spring Swiss", format="swiss")
    play_round(tournament)
    return refreshed(tournament)
