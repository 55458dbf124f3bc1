"""Fixtures of the tournament app's tests, loaded with ``pytest_plugins`` (not a conftest.py,
which would shadow tests/conftest.py)."""

from __future__ import annotations

import pytest
from tournament_helpers import make_user


@pytest.fixture
def owner(db):
    return make_user("owner")


