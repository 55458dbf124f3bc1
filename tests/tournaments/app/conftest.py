"""Fixtures of the tournament app's tests (beside tests/conftest.py's)."""

from __future__ import annotations

import pytest
from tournament_helpers import make_user


@pytest.fixture
def owner(db):
    return make_user("owner")


