"""Fixtures of the tournament app's tests, loaded with ``pytest_plugins`` (not a conftest.py,
which would shadow tests/conftest.py)."""

from __future__ import annotations

import pytest
from tournament_helpers import make_user


@pytest.fixture
def owner(db):
    return make_user("owner")


@pytest.fixture
def staff(db):
    return make_user("root", staff=True)


@pytest.fixture
def eager_tasks():
    """Tasks run in-process, as on the embedded default, even when REDIS_URL is set."""
    from celery import current_app

    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = eager
