"""Fixtures of the platform tests, loaded by each module with ``pytest_plugins``.

Not a conftest.py: a second module named ``conftest`` would shadow
tests/conftest.py, which other tests import by that name.
"""

from __future__ import annotations

import pytest
from platform_helpers import good_bot, make_user

from bots import services as bot_services


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def bob(db):
    return make_user("bob")


@pytest.fixture
def staff(db):
    return make_user("root", staff=True)


@pytest.fixture
def bot(alice):
    return bot_services.bot_create(owner=alice, name="alpha", description="first bot")


@pytest.fixture
def eager_tasks():
    """Tasks run in-process, as on the embedded default, even when REDIS_URL is set."""
    from celery import current_app

    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = eager


@pytest.fixture
def run_on_commit(eager_tasks, django_capture_on_commit_callbacks):
    """Run the tasks a block enqueues (on commit) right away, in-process."""

    def runner():
        return django_capture_on_commit_callbacks(execute=True)

    return runner


@pytest.fixture
def validated_version(bot, run_on_commit):
    """An active version of `bot`, validated through the real task path."""
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="alpha.py", data=good_bot("v1"))
    version.refresh_from_db()
    assert version.status == "active", version.rejection_reason
    return version


@pytest.fixture
def process_sandbox(settings):
    """Play on the process sandbox (the embedded default), not Docker: keeps these tests fast.

    Modules use it with ``pytestmark = pytest.mark.usefixtures("process_sandbox")``;
    the Docker path has its own tests (test_worker.py).
    """
    settings.SANDBOX_BACKEND = "process"
    settings.SANDBOX_ALLOW_PROCESS = True
